"""What every measurement shares: sizes, the context, and probes. Vault names and paths come
from gitvault itself (vault.layout, resolve, the store), never spelled here."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import Sandbox, git_out


@dataclass(frozen=True)
class Sizes:
    """How big each measurement is. `just bench --set NAME=VALUE` overrides one (the sections it
    touches say so in their command); --quick takes QUICK for a smoke run."""

    hook_samples: int = 60
    hook_warmup: int = 3
    hook_burst: int = 30
    rebase_commits: int = 500
    vault_small: int = 1_000
    vault_large: int = 100_000
    note_writes: int = 200
    drain_writes: int = 40
    recall_runs: int = 20  # whole-process runs of each agent hook and of `status --line`
    backfill_commits: int = 5_000
    repeats: int = 3  # runs of the throughput measurements and git-operation rounds (median)
    import_runs: int = 10  # runs of each agent hook under -X importtime, and of the whole command
    fold_commits: int = 3_000  # the long fold-quality scenario's history
    verify_per_kind: int = 20  # labelled digest lines of each kind in the verify scenario
    redact_notes: int = 500  # 2 KB notes the redaction speed is measured on
    sync_vault: int = 100_000  # notes in the vault the sync measure pushes into
    vault_million: int = 1_000_000  # the million measure's vault (next to vault_large)
    peer_runs: int = 30  # runs of each operation in the peers section (interleaved rounds)


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
    import_runs=3,
    fold_commits=600,
    verify_per_kind=5,
    redact_notes=100,
    sync_vault=5_000,
    vault_million=20_000,
    peer_runs=5,
)


def with_overrides(base: Sizes, pairs: list[str]) -> Sizes:
    """base with NAME=VALUE pairs applied (integers only); unknown names are an error."""
    names = {f.name for f in dataclasses.fields(Sizes)}
    changes: dict[str, int] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or name not in names:
            raise ValueError(f"--set {pair!r}: expected NAME=INTEGER, NAME one of {sorted(names)}")
        try:
            changes[name] = int(value.replace("_", "").replace(",", ""))
        except ValueError:
            raise ValueError(f"--set {pair!r}: {value!r} is not an integer") from None
        if changes[name] <= 0:
            raise ValueError(f"--set {pair!r}: must be positive")
    return dataclasses.replace(base, **changes)


def differences(sizes: Sizes, base: Sizes = FULL) -> Mapping[str, int]:
    return {
        f.name: getattr(sizes, f.name)
        for f in dataclasses.fields(Sizes)
        if getattr(sizes, f.name) != getattr(base, f.name)
    }


@dataclass
class Context:
    box: Sandbox
    sizes: Sizes
    say: Callable[[str], None]
    cache: dict[str, Any] = field(default_factory=dict)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def install(repo: Path, agents: list[str] | None = None) -> None:
    from gitvault import install as install_mod
    from gitvault.resolve import resolve

    install_mod.install(resolve(repo), agents=agents)


def state_dir(repo: Path) -> Path:
    from gitvault.resolve import resolve

    return resolve(repo).state_dir


def vault_ref(repo: Path) -> str:
    """The full ref of repo's vault branch (as configured there)."""
    from gitvault.resolve import resolve
    from gitvault.vault.store import Vault

    return Vault(resolve(repo)).ref


def note_shas(repo: Path, ref: str, under: str = "") -> set[str]:
    """The commit shas that have a note on `ref` (optionally only below notes/<under>)."""
    from gitvault.vault import layout

    folder = f"{layout.NOTES}/{under}".rstrip("/") + "/"
    listed = git_out(["ls-tree", "-r", "--name-only", ref, folder], repo)
    return {sha for sha in map(layout.note_sha, listed.split()) if sha is not None}


class NoteProbe:
    """Answers "does commit X have a note yet?" by reading the vault tip as it is on disk."""

    def __init__(self, repo: Path) -> None:
        self.repo_dir = repo
        self.ref = vault_ref(repo)

    def paths(self, shas: list[str]) -> dict[str, str]:
        import pygit2

        from gitvault.vault import layout

        repo = pygit2.Repository(str(self.repo_dir))
        return {sha: layout.note_path(sha, repo[sha].commit_time) for sha in shas}

    def missing(self, paths: dict[str, str]) -> list[str]:
        import pygit2

        repo = pygit2.Repository(str(self.repo_dir))
        ref = repo.references.get(self.ref)
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
        return git_out(["show", f"{self.ref}:{path}"], self.repo_dir)

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
