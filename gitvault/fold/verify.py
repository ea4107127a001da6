"""`gitvault verify`: the digest checked against the code, before an agent acts on it.

Every digest line goes through the truth model (gitvault.fold.truth: citations, branches and
rewrites, reverts followed through re-reverts and re-lands, paths and symbols at HEAD,
releases from tags), the same model every fold applies before it commits a digest, so verify
and the fold never disagree.

`--fix` removes stale and dangling lines and re-points the others in one vault commit; the
next fold re-evaluates them (and, applying the same model, does not write them back). The
results are also recorded (verify.json, gitvault.vault.statedir), keyed by the digest blob,
so recall and the agent files' section leave stale lines out without computing anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from gitvault.fold import truth
from gitvault.fold.truth import LineCheck
from gitvault.resolve import Location
from gitvault.vault import frontmatter, gitcmd, layout, statedir
from gitvault.vault.config import parse_vault_toml
from gitvault.vault.store import Vault

__all__ = ["LineCheck", "Report", "check", "run", "save_results", "summary"]


@dataclass
class Report:
    digest_blob: str | None
    lines: list[LineCheck] = field(default_factory=list)

    @property
    def problems(self) -> list[LineCheck]:
        return [c for c in self.lines if c.status != "ok"]

    @property
    def failing(self) -> bool:
        return any(c.status in ("stale", "dangling") for c in self.lines)

    def as_json(self) -> dict[str, object]:
        return truth.results_json(self.digest_blob, self.lines)


def ground_for(loc: Location, vault: Vault) -> truth.Ground:
    """The truth model's view of this repository, its history read from the vault's notes."""
    from gitvault.fold import mine

    cwd = loc.workdir or loc.common_dir
    return truth.Ground(vault, cwd, lambda: mine.record_from_vault(loc, vault))


def check(loc: Location, ground: truth.Ground | None = None) -> Report:
    vault = Vault(loc)
    tip = vault.check_format()
    cwd = loc.workdir or loc.common_dir
    entry = {e.path: e for e in gitcmd.ls_tree(cwd, tip, [layout.DIGEST])}.get(layout.DIGEST)
    report = Report(entry.oid if entry else None)
    text = vault.read_text(layout.DIGEST, tip)
    if text is None:
        return report
    config = parse_vault_toml(vault.read_text(layout.CONFIG))
    ground = ground or ground_for(loc, vault)
    categories: dict[str, list[str]] = {}
    category = ""
    _, body = frontmatter.parse(text)
    for line in body.split("\n"):
        if line.startswith("## "):
            category = line[3:].strip()
            continue
        categories.setdefault(category, []).append(line)
    plans = config.categories[-1].name if config.categories else None
    report.lines = truth.check_digest(categories, ground, plans)
    return report


def run(loc: Location, *, fix: bool = False) -> Report:
    """Check the digest, record the results for recall, and with fix rewrite it in one commit."""
    vault = Vault(loc)
    vault.check_format()
    ground = ground_for(loc, vault)
    report = check(loc, ground)
    save_results(loc, report)
    if fix and report.problems:
        _fix(loc, report)
        report = check(loc, ground)
        save_results(loc, report)
    return report


def _fix(loc: Location, report: Report) -> None:
    vault = Vault(loc)
    text = vault.read_text(layout.DIGEST) or ""
    meta, body = frontmatter.parse(text)
    changed = {c.line: c for c in report.problems}
    out: list[str] = []
    removed = repointed = 0
    for line in body.split("\n"):
        found = changed.get(line)
        if found is None:
            out.append(line)
        elif found.status == "repointed" and found.new_line:
            out.append(found.new_line)
            repointed += 1
        else:
            removed += 1
    new_text = frontmatter.render(meta, "\n".join(out))
    message = f"verify: removed {removed} stale line(s), re-pointed {repointed}"
    vault.commit({layout.DIGEST: new_text.encode()}, message)


def save_results(loc: Location, report: Report) -> None:
    statedir.save_verify(loc, report.as_json())
    from gitvault.memory import ready

    ready.after_change(loc)  # its stale marks, in the next session start's block


def summary(report: Report) -> Iterable[str]:
    for c in report.problems:
        yield f"{c.status}: [{c.category}] {c.line}  — {'; '.join(c.reasons)}"
