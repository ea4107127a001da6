"""What a materialized block is built from, as observed before it is built and again after
(gitvault.materialize.ready and .blocks): the READY_GEN token, the worktree's HEAD, the vault's
and the private sessions' tips, git config, packed-refs and the user's patterns. A block is
stored only when both observations agree, and its file names them for the launcher's sh."""

from __future__ import annotations

import os
import time
from pathlib import Path

from gitvault.resolve import Location
from gitvault.vault import files, gitcmd, launcher, layout, statedir

_TIP_CHARS = frozenset("0123456789abcdef")


class Seen:
    """One worktree's inputs as observed before (and after) its block is built."""

    def __init__(self, loc: Location) -> None:
        self.loc = loc
        self.gen = ""
        self.head = ""
        self.branch = layout.DEFAULT_BRANCH
        self.agents: list[str] | None = None
        self.env: tuple[str, ...] = ()  # launcher.config_env() then
        self.vault: tuple[Path, str | None] = (Path(), None)
        self.private: tuple[Path, str | None] = (Path(), None)
        self.patterns = ""
        self.watched: tuple[Path, ...] = ()
        self.newest = 0
        self.at = 0

    def key(self) -> tuple[object, ...]:
        return (
            self.gen,
            self.head,
            self.branch,
            self.agents,
            self.env,
            self.vault,
            self.private,
            self.patterns,
            self.watched,
            self.newest,
        )


def _tip(path: Path) -> str | None:
    """The tip a loose ref file holds (None: no such file). Raises OSError/ValueError when it
    is something else."""
    try:
        text = files.read_regular(path, 200).decode("ascii").strip()
    except FileNotFoundError:
        return None
    if len(text) not in (40, 64) or not set(text) <= _TIP_CHARS:
        raise ValueError(f"{path} holds no object name")
    return text


def _patterns() -> tuple[str, list[Path]]:
    """The user's patterns folder as recall reads it, and the files it reads there."""
    from gitvault.memory import recall

    folder = recall.user_patterns_dir()
    try:
        found = sorted(p for p in folder.iterdir() if p.suffix == ".md")[:50]
    except OSError:
        found = []
    return str(folder), [folder, *found]


def observe(loc: Location) -> Seen | None:
    """The inputs of a worktree's block (None: it cannot be served from a file here)."""
    if any(os.environ.get(name) for name in ("GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT")):
        return None
    if (loc.common_dir / "reftable").exists() or loc.workdir is None:
        return None
    seen = Seen(loc)
    try:
        seen.gen = statedir.ready_gen(loc)
        head = files.read_regular(loc.git_dir / "HEAD", 4096)
        seen.head = head.split(b"\n", 1)[0].decode("utf-8")
        config = gitcmd.gitvault_config(loc.workdir)
        seen.branch = layout.branch_name(config.get(layout.BRANCH_KEY))
        seen.agents = layout.agents_listed(config.get(layout.AGENTS_KEY))
        ref = Path(os.path.abspath(loc.common_dir / layout.branch_ref(seen.branch)))
        private = Path(os.path.abspath(loc.common_dir / layout.PRIVATE_REF))
        seen.vault, seen.private = (ref, _tip(ref)), (private, _tip(private))
    except (OSError, ValueError):
        return None
    seen.patterns, pattern_files = _patterns()
    seen.env = launcher.config_env(os.environ)
    config_paths = gitcmd.config_files(loc.common_dir, loc.git_dir)
    included = gitcmd.config_includes(loc.workdir, config_paths)
    if included is None:
        return None
    watched = [
        *config_paths,
        *included,
        Path(os.path.abspath(loc.common_dir / "packed-refs")),
        *(Path(os.path.abspath(p)) for p in pattern_files),
    ]
    seen.watched = tuple(dict.fromkeys(watched))
    for path in seen.watched:
        try:
            seen.newest = max(seen.newest, os.stat(path).st_mtime_ns)
        except FileNotFoundError:
            continue
        except OSError:
            return None
    seen.at = time.time_ns()
    return seen
