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

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from gitvault.fold import history, truth
from gitvault.fold.truth import LineCheck
from gitvault.resolve import Location
from gitvault.vault import frontmatter, gitcmd, layout, statedir
from gitvault.vault.config import parse_vault_toml
from gitvault.vault.store import Vault

__all__ = ["LineCheck", "Report", "check", "check_line", "run", "save_results", "summary"]


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


def ground_for(loc: Location, vault: Vault, mined: history.View) -> truth.Ground:
    """The truth model's view of this repository, its history the mined history's (the same
    one the fold reads: gitvault.fold.history)."""
    return truth.Ground(vault, loc.workdir or loc.common_dir, mined)


@contextmanager
def _mined(loc: Location, vault: Vault) -> Iterator[history.View]:
    """The mined history at the vault's tip, brought forward by what arrived since the last
    fold or verify: what a check reads grows with what is new, not with the history."""
    config = parse_vault_toml(vault.read_text(layout.CONFIG), vault.loc)
    view, _ = history.open_at_tip(loc, vault, int(config.fold_value("horizon_days")))
    with view:
        yield view


def check(loc: Location, ground: truth.Ground | None = None) -> Report:
    vault = Vault(loc)
    tip = vault.check_format()
    cwd = loc.workdir or loc.common_dir
    entry = {e.path: e for e in gitcmd.ls_tree(cwd, tip, [layout.DIGEST])}.get(layout.DIGEST)
    report = Report(entry.oid if entry else None)
    text = vault.read_text(layout.DIGEST, tip)
    if text is None:
        return report
    config = parse_vault_toml(vault.read_text(layout.CONFIG), vault.loc)
    if ground is None:
        with _mined(loc, vault) as mined:
            return check(loc, ground_for(loc, vault, mined))
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
    Vault(loc).check_format()
    report = check(loc)  # (no digest: nothing to check, the mined history is not opened)
    save_results(loc, report)
    if fix and report.problems:
        _fix(loc, report)
        report = check(loc)
        save_results(loc, report)
    return report


def check_line(loc: Location, line: str) -> LineCheck:
    """One line (an agent's claim) against the truth model, as verify would check it."""
    vault = Vault(loc)
    vault.check_format()
    with _mined(loc, vault) as mined:
        return truth.check_line("", line, ground_for(loc, vault, mined))


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
    from gitvault.materialize import ready

    ready.after_change(loc)  # its stale marks, in the next session start's block


def summary(report: Report) -> Iterable[str]:
    for c in report.problems:
        yield f"{c.status}: [{c.category}] {c.line}  — {'; '.join(c.reasons)}"
