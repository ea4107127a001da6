"""The managed section of the agent files (CLAUDE.md, AGENTS.md, …): PATCH between the
sentinels, and the fold as every caller runs it (fold, then patch from the new digest).

The block holds the session mechanics (how memory is recalled and saved) and the digest's
Conventions and Gotchas, at most 2,000 characters.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path

from gitvault.agents import sentinel, texts
from gitvault.errors import Refused
from gitvault.fold import digest as digest_mod
from gitvault.fold.run import FoldOptions, FoldResult
from gitvault.memory import cites
from gitvault.memory.fences import outbound
from gitvault.named import NamedTuple
from gitvault.resolve import Location
from gitvault.vault import layout, origin
from gitvault.vault.config import VaultConfig

BLOCK_MAX = 2000


# A line that is only a commit subject ("fix(parser): …", "Merge pull request …", "Revert …")
# is history, not a standing instruction.
_RAW_SUBJECT = re.compile(
    r"^- (?:[a-z]+(?:\([^)]*\))?!?:\s|Merge (?:pull request|branch|remote-tracking)\b|Revert \")",
    re.I,
)


def standing_lines(
    digest: digest_mod.Digest,
    name: str,
    flagged: Collection[str] = (),
    tombs: Collection[str] = frozenset(),
) -> list[str]:
    """The lines of a category fit to be standing instructions: each cites its evidence, none
    is a raw commit subject, a cut marker, a placeholder, a line `gitvault verify` flags
    (`flagged`: its recorded results for this digest) or a line about a forgotten item."""
    lines = next((v for k, v in digest.categories.items() if k.lower() == name.lower()), [])
    return [
        line
        for line in lines
        if digest_mod.citations(line)
        and not digest_mod.is_marker(line)
        and line != digest_mod.PLACEHOLDER
        and not _RAW_SUBJECT.match(line)
        and line not in flagged
        and not cites.is_forgotten(line, tombs)
    ]


def block_text(
    digest: digest_mod.Digest | None,
    config: VaultConfig,
    flagged: Collection[str] = (),
    tombs: Collection[str] = frozenset(),
    origins: origin.Origins | None = None,
    digest_origin: origin.Origin | None = None,
    local: Collection[str] = (),
    committed: Collection[str] = (),
) -> str:
    """The managed section: the session mechanics, then the digest's Conventions and Gotchas
    (only lines with evidence, never raw commit subjects, never a line verify flags or one
    about a forgotten item). An agent file is read as standing instructions (and is often
    committed), so no line that came only from another clone is in it until it was accepted
    (`gitvault review accept`): not a remote's digest, not a line carried from one, not a line
    whose every citation is another clone's item. A line the project's own committed agent
    file already holds (`committed`: its section at HEAD) came through the project's history
    and stays: dropping it would leave a teammate's fresh clone with a modified tracked file."""
    parts = [texts.agent_file_mechanics()]
    held_digest = digest_origin is not None and digest_origin.review != origin.ACCEPTED
    if digest is not None:
        for name in (config.categories[2].name, config.categories[3].name):
            lines = standing_lines(digest, name, flagged, tombs)
            if held_digest:
                lines = [ln for ln in lines if _committed(committed, ln)]
            elif origins:
                lines = [
                    ln for ln in lines if _accepted(origins, ln, local) or _committed(committed, ln)
                ]
            section = "\n".join(lines)
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


def _committed(committed: Collection[str], line: str) -> bool:
    return bool(committed) and (line.strip() in committed or outbound(line).strip() in committed)


def committed_lines(workdir: Path, names: Collection[str]) -> set[str]:
    """The lines of the managed sections of these agent files as committed at HEAD (what the
    project's own history already carries); nothing for a file git does not track."""
    from gitvault.vault import gitcmd

    found: set[str] = set()
    for name in names:
        proc = gitcmd.run_git(["cat-file", "blob", f"HEAD:{name}"], workdir, check=False)
        if proc.returncode != 0:
            continue
        try:
            span = sentinel.find_block(proc.stdout)
        except Refused:
            continue
        if span is not None:
            region = proc.stdout[span[0] : span[1]].decode("utf-8", "replace")
            found.update(ln.strip() for ln in region.splitlines() if ln.strip())
    return found


def _accepted(origins: origin.Origins, line: str, local: Collection[str] = ()) -> bool:
    found = origins.of_line(line, cites.cites_in(line), local)
    return found is None or found.review == origin.ACCEPTED


_SHA_CITE = re.compile(r"c:[0-9a-f]{7,40}")  # never a name git would resolve (c:HEAD)


def local_commits(cwd: Path, text: str | None) -> set[str]:
    """The c: citations in text whose commit this repository holds."""
    from gitvault.vault import gitcmd

    wanted = sorted({c for c in cites.cites_in(text or "") if _SHA_CITE.fullmatch(c)})
    if not wanted:
        return set()
    proc = gitcmd.run_git(
        ["cat-file", "--batch-check=%(objecttype)"],
        cwd,
        input="".join(f"{c[2:]}^{{commit}}\n" for c in wanted).encode(),
        check=False,
    )
    answers = proc.stdout.decode("utf-8", "replace").splitlines()
    return {c for c, kind in zip(wanted, answers, strict=False) if kind.strip() == "commit"}


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
    explicit: bool = False,
    flagged: Collection[str] = (),
    tombs: Collection[str] = frozenset(),
    origins: origin.Origins | None = None,
    digest_origin: origin.Origin | None = None,
    local: Collection[str] = (),
) -> PatchReport:
    """Patch the agent files of a worktree from the vault's current digest, without the lines
    `flagged` (what verify found stale or dangling in it) or about a forgotten item (`tombs`):
    `files`, else vault.toml's patch.files. Every name is checked first (`unsafe_target`); one
    that fails is reported and left alone — or raised, when a person named it (`explicit`)."""
    if loc_workdir is None:
        return PatchReport()
    current = None if vault_text is None else digest_mod.parse(vault_text, config, strict=False)
    names = list(files or config.patch_files)
    kept, refused = allowed_targets(loc_workdir, names, explicit=explicit)
    if refused and raise_on_refusal:
        raise Refused(
            f"not patching {refused[0]}",
            hint="name an agent instruction file inside the worktree, outside .git",
        )
    held = bool(origins) or (digest_origin is not None and digest_origin.review != origin.ACCEPTED)
    committed = committed_lines(loc_workdir, kept) if held else set()
    done = patch_files(
        loc_workdir,
        kept,
        block_text(current, config, flagged, tombs, origins, digest_origin, local, committed),
        raise_on_refusal=raise_on_refusal,
    )
    done.refused[:0] = refused
    return done


_GIT_NAMES = (".git", "git~1")  # git's own folder, and its NTFS short name


def allowed_targets(
    workdir: Path, names: list[str], *, explicit: bool = False
) -> tuple[list[str], list[str]]:
    """(names that may be patched, one line per refused name). vault.toml travels with the
    vault, so a name in it may be a teammate's or an attacker's: it must be a file some agent
    reads as instructions (adapters.instruction_names), inside the worktree and outside every
    git folder, whatever its case or spelling; an `explicit` name (one a person typed) may be
    any such file."""
    dirs = _git_dirs(workdir)
    kept: list[str] = []
    refused: list[str] = []
    for name in names:
        why = unsafe_target(workdir, name, dirs, instruction_only=not explicit)
        if why is None:
            if name not in kept:
                kept.append(name)
        else:
            refused.append(f"{name if name.isprintable() else repr(name)}: {why}")
    return kept, refused


def unsafe_target(
    workdir: Path, name: str, git_dirs: list[Path], *, instruction_only: bool = True
) -> str | None:
    """Why gitvault may not write its section into `name`, or None when it may."""
    from gitvault.agents import adapters

    why = _unsafe_name(name, instruction_only, adapters.instruction_names())
    if why is not None:
        return why
    # On disk: no folder on the way is a link (a link to .git, or out of the tree), and the
    # file's real path stays inside the worktree, outside the git folders, and is itself an
    # allowed name (CLAUDE.md -> AGENTS.md is fine, CLAUDE.md -> Makefile is not).
    base = Path(os.path.realpath(workdir))
    here = base
    for part in name.split("/")[:-1]:
        here = here / part
        if here.is_symlink():
            return f"{here.relative_to(base)} is a symbolic link"
        if here.exists() and not here.is_dir():
            return f"{here.relative_to(base)} is not a folder"
    real = Path(os.path.realpath(base / name))
    if real != base and base not in real.parents:
        return f"it resolves to {real}, outside the worktree"
    for git_dir in git_dirs:
        if real == git_dir or git_dir in real.parents:
            return "it resolves into the repository's git folder"
    other = _other_repository(base, real)
    if other is not None:
        return (
            f"{other} is another repository (a submodule, a nested clone or a worktree): "
            "its files are not this project's"
        )
    if real != base / name:
        why = _unsafe_name(real.relative_to(base).as_posix(), instruction_only, _names())
        if why is not None:
            return f"it is a link to {real.relative_to(base)}, and {why}"
    if real.exists() and not real.is_file():
        return "it is not a regular file"
    return None


def _other_repository(base: Path, real: Path) -> str | None:
    """The folder between the worktree's top (`base`) and the file at `real` that holds a
    `.git` of its own (a submodule, a nested clone, a linked worktree placed inside this one),
    relative to the top; None when the file is this worktree's."""
    here = base
    for part in real.relative_to(base).parts[:-1]:
        here = here / part
        if os.path.lexists(here / ".git"):
            return here.relative_to(base).as_posix()
    return None


def _names() -> frozenset[str]:
    from gitvault.agents import adapters

    return adapters.instruction_names()


def _unsafe_name(name: str, instruction_only: bool, known: frozenset[str]) -> str | None:
    parts = name.split("/")
    if not name or name.startswith("/") or "\\" in name or any(p in ("", ".", "..") for p in parts):
        return "outside the worktree (not a plain path relative to its top level)"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return "it holds control characters"
    if any(p.rstrip(" .").casefold() in _GIT_NAMES for p in parts):
        return "it is inside .git"
    bare = {n for n in known if "/" not in n}  # read in any folder; the others at one path
    if instruction_only and name not in known and parts[-1] not in bare:
        return f"not an agent instruction file ({', '.join(sorted(known))})"
    return None


def _git_dirs(workdir: Path) -> list[Path]:
    """The real paths of the worktree's git folder and the common git folder."""
    from gitvault.vault import gitcmd

    proc = gitcmd.run_git(
        ["rev-parse", "--absolute-git-dir", "--git-common-dir"], workdir, check=False
    )
    out = []
    for line in proc.stdout.decode("utf-8", "surrogateescape").splitlines():
        if line.strip():
            out.append(Path(os.path.realpath(workdir / line.strip())))
    return out


def refresh_from_vault(
    loc: Location,
    *,
    files: list[str] | None = None,
    raise_on_refusal: bool = True,
    explicit: bool = False,
) -> PatchReport:
    """Patch the agent files of loc's worktree from the vault's current digest."""
    from gitvault.fold.run import load_config
    from gitvault.vault.store import Vault

    vault = Vault(loc)
    tip = vault.check_format()
    config = load_config(vault)
    text = vault.read_text(layout.DIGEST)
    origins = origin.load(loc)
    came = None
    if origins:
        from gitvault.vault import gitcmd

        found = gitcmd.ls_tree(loc.common_dir, tip, [layout.DIGEST])
        came = origins.of(layout.DIGEST, found[0].oid) if found else None
    return refresh(
        loc.workdir,
        text,
        config,
        files=files,
        raise_on_refusal=raise_on_refusal,
        explicit=explicit,
        flagged=_flagged(loc, text),
        tombs=cites.forgotten(vault),
        origins=origins,
        digest_origin=came,
        local=local_commits(loc.common_dir, text) if origins else set(),
    )


def _flagged(loc: Location, digest_text: str | None) -> set[str]:
    """The lines of this digest that verify (or the fold that wrote it) recorded as stale or
    dangling; nothing when it was not checked."""
    from gitvault.fold.truth import blob_id
    from gitvault.memory import staleness

    if digest_text is None:
        return set()
    return set(staleness.stale_lines(loc, blob_id(digest_text.encode())))


def fold_and_patch(loc: Location, opts: FoldOptions, say: Say = lambda _: None) -> Folded:
    """The fold every caller runs (CLI, background, demo): fold, then patch the agent files
    from the new digest when it changed. A refused agent file is reported, not raised: the
    digest is committed either way."""
    from gitvault.fold.run import fold

    result = fold(loc, opts, say)
    patched = None
    if result.commits and not result.verified:
        _verify_quietly(loc)
    if result.commits and loc.workdir is not None:
        files = _already_patched(loc) if agents_off(loc.workdir) else _served_files(loc)
        if files is None or files:
            patched = refresh_from_vault(loc, files=files, raise_on_refusal=False)
    elif result.buried is not None:
        patched = after_history_change(loc)
    return Folded(result, patched)


def after_history_change(loc: Location) -> PatchReport | None:
    """After `forget`, `redact` or a sync changed what the vault may show: the sections this
    worktree's agent files already hold are rewritten from the vault as it is now, and
    verify's results are taken again first (verify.json quotes digest lines, and the patch
    leaves out the lines it flags)."""
    _verify_quietly(loc)
    return after_verify(loc)


def after_verify(loc: Location) -> PatchReport | None:
    """After verify recorded its results (or `verify --fix` rewrote the digest): the sections
    this worktree's agent files already hold are rewritten without the lines it flags, so no
    agent keeps reading a line verify calls stale. Unchanged sections are left alone."""
    if loc.workdir is None:
        return None
    served = None if agents_off(loc.workdir) else _served_files(loc)
    files = _already_patched(loc, served)
    return refresh_from_vault(loc, files=files, raise_on_refusal=False) if files else None


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


def _already_patched(loc: Location, also: list[str] | None = None) -> list[str]:
    """Under --no-claude a fold adds gitvault's section to no file; a section someone added
    with `gitvault patch` is kept current. also: more candidates (the served agents' files)."""
    from gitvault.fold.run import load_config
    from gitvault.vault.store import Vault

    assert loc.workdir is not None
    out = []
    for name in dict.fromkeys([*load_config(Vault(loc)).patch_files, *(also or [])]):
        path = loc.workdir / name
        if unsafe_target(loc.workdir, name, _git_dirs(loc.workdir)) or not path.is_file():
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
