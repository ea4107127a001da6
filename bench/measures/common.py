"""What every measurement shares: sizes, report rows, the context, and probes."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import (
    Sandbox,
    git_out,
)


@dataclass(frozen=True)
class Sizes:
    hook_samples: int = 60
    hook_warmup: int = 3
    hook_burst: int = 30
    rebase_commits: int = 500
    vault_small: int = 1_000
    vault_large: int = 100_000
    note_writes: int = 200
    drain_writes: int = 40
    recall_runs: int = 20
    backfill_commits: int = 5_000
    repeats: int = 3  # runs of the drain and backfill throughput measurements (median reported)


FULL = Sizes()
QUICK = Sizes(
    hook_samples=8,
    hook_warmup=1,
    hook_burst=5,
    rebase_commits=40,
    vault_small=200,
    vault_large=5_000,
    note_writes=20,
    drain_writes=5,
    recall_runs=3,
    backfill_commits=300,
    repeats=1,
)


@dataclass
class Row:
    key: str  # which benchmark made it (--only NAME)
    metric: str
    measured: str
    target: str
    passed: bool | None  # None: informational, or skipped
    how: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Context:
    box: Sandbox
    sizes: Sizes
    say: Callable[[str], None]
    cache: dict[str, Any] = field(default_factory=dict)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def install(repo: Path) -> None:
    from gitvault import install as install_mod
    from gitvault.resolve import resolve

    install_mod.install(resolve(repo))


def state_dir(repo: Path) -> Path:
    return repo / ".git" / "gitvault"


class NoteProbe:
    """Answers "does commit X have a note yet?" by reading the vault tip as it is on disk."""

    def __init__(self, repo: Path) -> None:
        self.repo_dir = repo

    def paths(self, shas: list[str]) -> dict[str, str]:
        import pygit2

        from gitvault.vault.layout import NOTES as NOTES_DIR

        repo = pygit2.Repository(str(self.repo_dir))
        out = {}
        for sha in shas:
            when = time.gmtime(repo[sha].commit_time)
            out[sha] = f"{NOTES_DIR}/{time.strftime('%Y/%m/%d', when)}/{sha}.md"
        return out

    def missing(self, paths: dict[str, str]) -> list[str]:
        import pygit2

        repo = pygit2.Repository(str(self.repo_dir))
        ref = repo.references.get("refs/heads/vault")
        if ref is None:
            return list(paths)
        tree = repo[ref.target].peel(pygit2.Tree)
        gone = []
        for sha, path in paths.items():
            try:
                tree[path]
            except KeyError:
                gone.append(sha)
        return gone

    def note_text(self, path: str) -> str:
        return git_out(["show", f"refs/heads/vault:{path}"], self.repo_dir)

    def wait(self, paths: dict[str, str], timeout: float = 120.0, poll: float = 0.005) -> float:
        """Poll until every path exists; returns when that was seen (perf_counter)."""
        deadline = time.monotonic() + timeout
        while True:
            left = self.missing(paths)
            if not left:
                return time.perf_counter()
            if time.monotonic() > deadline:
                raise RuntimeError(f"{len(left)} notes still missing after {timeout:.0f} s")
            time.sleep(poll)
