"""The managed section of the agent files (CLAUDE.md, AGENTS.md, …): PATCH between the
sentinels, and the fold as every caller runs it (fold, then patch from the new digest).

The block holds the session mechanics (how memory is recalled and saved) and the digest's
Conventions and Gotchas, at most 2,000 characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from gitvault.agents import sentinel, texts
from gitvault.errors import Refused
from gitvault.fold import digest as digest_mod
from gitvault.fold.run import FoldOptions, FoldResult
from gitvault.memory.fences import outbound
from gitvault.resolve import Location
from gitvault.vault import layout
from gitvault.vault.config import VaultConfig

BLOCK_MAX = 2000


# A line that is only a commit subject ("fix(parser): …", "Merge pull request …", "Revert …")
# is history, not a standing instruction.
_RAW_SUBJECT = re.compile(
    r"^- (?:[a-z]+(?:\([^)]*\))?!?:\s|Merge (?:pull request|branch|remote-tracking)\b|Revert \")",
    re.I,
)


def standing_lines(digest: digest_mod.Digest, name: str) -> list[str]:
    """The lines of a category fit to be standing instructions: each cites its evidence, none
    is a raw commit subject, a cut marker or a placeholder."""
    lines = next((v for k, v in digest.categories.items() if k.lower() == name.lower()), [])
    return [
        line
        for line in lines
        if digest_mod.citations(line)
        and not digest_mod.is_marker(line)
        and line != digest_mod.PLACEHOLDER
        and not _RAW_SUBJECT.match(line)
    ]


def block_text(digest: digest_mod.Digest | None, config: VaultConfig) -> str:
    """The managed section: the session mechanics, then the digest's Conventions and Gotchas
    (only lines with evidence, never raw commit subjects)."""
    parts = [texts.agent_file_mechanics()]
    if digest is not None:
        for name in (config.categories[2].name, config.categories[3].name):
            section = "\n".join(standing_lines(digest, name))
            if section.strip():
                parts.append(f"\n### {name}\n{outbound(section)}")
    text = "\n".join(parts)
    if len(text) <= BLOCK_MAX:
        return text
    # Cut at a line boundary, with a visible marker.
    marker = "\n- [… cut to fit; see `gitvault show _master.md`]"
    kept: list[str] = []
    size = 0
    for line in text.splitlines():
        if size + len(line) + 1 + len(marker) > BLOCK_MAX:
            break
        kept.append(line)
        size += len(line) + 1
    return "\n".join(kept) + marker


Say = Callable[[str], None]


@dataclass
class PatchReport:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


class Folded(NamedTuple):
    result: FoldResult
    patched: PatchReport | None


def patch_files(
    workdir: Path, files: list[str], text: str, *, raise_on_refusal: bool = True
) -> PatchReport:
    report = PatchReport()
    for name in files:
        path = workdir / name
        try:
            changed = sentinel.patch_file(path, text, inside=[workdir])
        except Refused as exc:
            if raise_on_refusal:
                raise
            report.refused.append(f"{name}: {exc.message}")
            continue
        (report.written if changed else report.unchanged).append(name)
    return report


def refresh(
    loc_workdir: Path | None,
    vault_text: str | None,
    config: VaultConfig,
    *,
    files: list[str] | None = None,
    raise_on_refusal: bool = True,
) -> PatchReport:
    """Patch the configured agent files of a worktree from the vault's current digest."""
    if loc_workdir is None:
        return PatchReport()
    current = None if vault_text is None else digest_mod.parse(vault_text, config, strict=False)
    names = files or list(config.patch_files)
    report = PatchReport()
    if not files:
        # vault.toml travels with the vault (sync brings it from other clones): its file names
        # may only name files inside this worktree.
        for name in [n for n in names if not _inside_worktree(n)]:
            message = f"patch.files in vault.toml names {name!r}, outside the worktree"
            if raise_on_refusal:
                raise Refused(message, hint="list paths relative to the repository's top level")
            report.refused.append(f"{name}: {message}")
            names.remove(name)
    done = patch_files(
        loc_workdir,
        names,
        block_text(current, config),
        raise_on_refusal=raise_on_refusal,
    )
    done.refused[:0] = report.refused
    return done


def _inside_worktree(name: str) -> bool:
    """A relative path that stays below the worktree (checked lexically)."""
    parts = PurePosixPath(name.replace("\\", "/")).parts
    return bool(parts) and not name.startswith(("/", "\\")) and ".." not in parts


def refresh_from_vault(
    loc: Location, *, files: list[str] | None = None, raise_on_refusal: bool = True
) -> PatchReport:
    """Patch the agent files of loc's worktree from the vault's current digest."""
    from gitvault.fold.run import load_config
    from gitvault.vault.store import Vault

    vault = Vault(loc)
    vault.check_format()
    config = load_config(vault)
    return refresh(
        loc.workdir,
        vault.read_text(layout.DIGEST),
        config,
        files=files,
        raise_on_refusal=raise_on_refusal,
    )


def fold_and_patch(loc: Location, opts: FoldOptions, say: Say = lambda _: None) -> Folded:
    """The fold every caller runs (CLI, background, demo): fold, then patch the agent files
    from the new digest when it changed. A refused agent file is reported, not raised: the
    digest is committed either way."""
    from gitvault.fold.run import fold

    result = fold(loc, opts, say)
    patched = None
    if result.commits and loc.workdir is not None:
        files = _already_patched(loc) if agents_off(loc.workdir) else _served_files(loc)
        if files is None or files:
            patched = refresh_from_vault(loc, files=files, raise_on_refusal=False)
    if result.commits:
        _verify_quietly(loc)
    return Folded(result, patched)


def _verify_quietly(loc: Location) -> None:
    """Check the new digest against the code now, so recall can mark stale lines at once
    (gitvault verify; its results are recorded, nothing is changed)."""
    from gitvault.fold import verify
    from gitvault.vault.locking import log_failure

    try:
        verify.run(loc)
    except Exception as exc:  # noqa: BLE001 - a check after the fold never fails the fold
        log_failure(loc.state_dir, f"verify after fold failed: {type(exc).__name__}: {exc}")


def _served_files(loc: Location) -> list[str] | None:
    """The agent files of the agents this clone serves (git config gitvault.agents, e.g.
    AGENTS.md for Codex), with vault.toml's own (None: just vault.toml's)."""
    from gitvault.agents import adapters
    from gitvault.fold.run import load_config
    from gitvault.vault.store import Vault

    assert loc.workdir is not None
    chosen = adapters.configured(loc.workdir)
    if chosen is None:
        return None
    listed = list(load_config(Vault(loc)).patch_files)
    targets = adapters.patch_targets(listed, chosen)
    # Unchanged: vault.toml's own list, with its checks (names outside the worktree refused).
    return None if targets == listed else targets


def _already_patched(loc: Location) -> list[str]:
    """Under --no-claude a fold adds gitvault's section to no file; a section someone added
    with `gitvault patch` is kept current."""
    from gitvault.fold.run import load_config
    from gitvault.vault.store import Vault

    assert loc.workdir is not None
    out = []
    for name in load_config(Vault(loc)).patch_files:
        path = loc.workdir / name
        if not _inside_worktree(name) or path.is_symlink() or not path.is_file():
            continue
        try:
            if sentinel.BEGIN.encode() in path.read_bytes():
                out.append(name)
        except OSError:
            continue
    return out


def agents_off(cwd: Path) -> bool:
    """`gitvault install --no-claude` was chosen (git config gitvault.agents none): later
    folds create no agent file and add gitvault's section to none."""
    from gitvault.vault import gitcmd

    value = gitcmd.config_get(cwd, layout.AGENTS_KEY) or ""
    return value.strip().lower() == "none"
