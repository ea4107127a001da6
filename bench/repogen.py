"""Fast fixture generators: project histories through `git fast-import`, and large vaults
written straight into trees (pygit2 TreeBuilder) instead of one commit per note.

Everything is deterministic for a given seed, so two repositories built with the same
arguments hold byte-identical commits (same SHAs), which lets a benchmark compare them.
"""

from __future__ import annotations

import hashlib
import random
import subprocess
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from harness import EMAIL, NAME, git

DAY = 86_400
_WORDS = [
    *("parser", "cache", "index", "loader", "config", "retry", "session", "vault", "router"),
    *("schema", "client", "worker", "queue", "buffer", "token", "stream", "export", "import"),
    *("layout", "widget", "render", "handler", "migration", "payload", "timeout", "fallback"),
    *("encoder", "decoder", "registry", "plugin", "adapter", "manifest"),
]
_VERBS = ["Fix", "Add", "Refactor", "Rename", "Remove", "Speed up", "Document", "Test", "Handle"]


@dataclass(frozen=True)
class HistorySpec:
    commits: int
    branch: str = "main"
    prefix: str = "src"  # folder the commits' files live in
    files: int = 400  # distinct files the history touches
    start: int = 1_600_000_000  # unix time of the first commit
    step: int = 3 * 3600  # seconds between commits
    seed: int = 0
    parent: str | None = None  # sha the first commit builds on (None: a root commit)


def _message(rng: random.Random, n: int) -> str:
    subject = (
        f"{rng.choice(_VERBS)} {rng.choice(_WORDS)} {rng.choice(_WORDS)} "
        f"in {rng.choice(_WORDS)}_{rng.randrange(60)} (#{1000 + n})"
    )
    if rng.random() < 0.5:
        return subject + "\n"
    lines = [
        " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(6, 14)))
        for _ in range(rng.randrange(1, 6))
    ]
    return subject + "\n\n" + "\n".join(lines) + "\n"


def _data(payload: bytes) -> bytes:
    return b"data %d\n" % len(payload) + payload + b"\n"


def history_stream(spec: HistorySpec) -> bytes:
    """A fast-import stream of spec.commits commits, each touching 1-3 small text files."""
    rng = random.Random(spec.seed)
    contents: dict[str, list[str]] = {}
    out: list[bytes] = []
    for n in range(spec.commits):
        when = spec.start + n * spec.step + rng.randrange(spec.step // 2 or 1)
        ident = f"{NAME} <{EMAIL}> {when} +0000".encode()
        out.append(f"commit refs/heads/{spec.branch}\nmark :{n + 1}\n".encode())
        out.append(b"author " + ident + b"\ncommitter " + ident + b"\n")
        out.append(_data(_message(rng, n).encode()))
        if n == 0 and spec.parent:
            out.append(f"from {spec.parent}\n".encode())
        for _ in range(rng.choice((1, 1, 2, 3))):
            k = rng.randrange(spec.files)  # spec.files files spread over len(_WORDS) folders
            folder, stem = _WORDS[k % len(_WORDS)], _WORDS[k // len(_WORDS) % len(_WORDS)]
            path = f"{spec.prefix}/{folder}/{stem}_{k}.txt"
            lines = contents.setdefault(path, [])
            if lines and rng.random() < 0.4:
                lines[rng.randrange(len(lines))] = f"changed in commit {n}: {rng.choice(_WORDS)}"
            for _ in range(rng.randrange(1, 8)):
                lines.append(f"{rng.choice(_WORDS)} {rng.choice(_WORDS)} {n}")
            out.append(f"M 100644 inline {path}\n".encode())
            out.append(_data(("\n".join(lines) + "\n").encode()))
        out.append(b"\n")
    out.append(b"done\n")
    return b"".join(out)


def fast_import(repo: Path, stream: bytes) -> None:
    git(["fast-import", "--quiet", "--done"], repo, input=stream)


def build_history(repo: Path, spec: HistorySpec, *, init: bool = True) -> str:
    """Create (or extend) a repository with spec's history; returns the branch tip."""
    if init:
        repo.mkdir(parents=True, exist_ok=True)
        git(["init", "-q"], repo)
    fast_import(repo, history_stream(spec))
    return git(["rev-parse", f"refs/heads/{spec.branch}"], repo).stdout.decode().strip()


# -- large vaults ----------------------------------------------------------------------------


@dataclass(frozen=True)
class FakeNote:
    path: str
    text: bytes
    message: str


def fake_notes(
    count: int, *, years: int = 5, end: int = 1_760_000_000, seed: int = 1
) -> list[FakeNote]:
    """`count` realistic notes (rendered by gitvault itself) for made-up commits spread evenly
    over `years` years ending at `end`."""
    from gitvault.notes import render as notes

    rng = random.Random(seed)
    span = years * 365 * DAY
    out: list[FakeNote] = []
    for i in range(count):
        sha = hashlib.sha1(f"bench-note-{seed}-{i}".encode()).hexdigest()
        when = end - span + (span * i) // max(count, 1) + rng.randrange(3600)
        stamp = datetime.fromtimestamp(when, tz=UTC).isoformat()
        files = tuple(
            notes.FileStat(
                f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}_{rng.randrange(90)}.py",
                rng.randrange(1, 80),
                rng.randrange(0, 40),
            )
            for _ in range(rng.choice((1, 1, 2, 3, 5)))
        )
        message = _message(rng, i).rstrip("\n")
        info = notes.CommitInfo(
            sha=sha,
            parents=(hashlib.sha1(f"parent-{seed}-{i}".encode()).hexdigest(),),
            author_name=NAME,
            author_email=EMAIL,
            authored=stamp,
            committed=stamp,
            commit_time=when,
            message=message,
            files=files,
        )
        text = notes.render(info, notes.NoteContext("main", "main", (), "hook"))
        out.append(FakeNote(notes.note_path(info), text.encode(), f"note {sha[:7]} {info.subject}"))
    return out


def _write_blobs(repo_dir: Path, blobs: Sequence[bytes]) -> list[str]:
    """Write blobs into one pack with fast-import; returns their ids in order."""
    from gitvault.resolve import resolve

    marks = resolve(repo_dir).git_dir / "bench-blob-marks"
    stream = b"".join(b"blob\nmark :%d\n" % (i + 1) + _data(b) for i, b in enumerate(blobs))
    git(
        ["fast-import", "--quiet", "--done", f"--export-marks={marks}"],
        repo_dir,
        input=stream + b"done\n",
    )
    ids: dict[int, str] = {}
    for line in marks.read_text().splitlines():
        mark, sha = line.split()
        ids[int(mark[1:])] = sha
    marks.unlink()
    return [ids[i + 1] for i in range(len(blobs))]


def populate_vault(repo_dir: Path, count: int, *, years: int = 5) -> int:
    """Add `count` generated notes to the vault branch of an installed repository.

    Blobs go in one fast-import pack; the date-sharded trees (layout.note_path) are
    built with pygit2's TreeBuilder, one vault commit per year of notes: a few commits in all,
    not one per note. Returns the number of vault commits made.
    """
    import pygit2

    from gitvault.resolve import resolve
    from gitvault.vault import gitcmd, layout
    from gitvault.vault.store import Vault

    vault = Vault(resolve(repo_dir))
    repo = pygit2.Repository(str(vault.loc.common_dir))
    tip = vault.check_format()
    fakes = fake_notes(count, years=years)
    blob_ids = _write_blobs(repo_dir, [f.text for f in fakes])

    days: dict[tuple[str, str, str], list[tuple[str, str]]] = defaultdict(list)
    for fake, blob in zip(fakes, blob_ids, strict=True):
        top, year, month, day, name = fake.path.split("/")
        if top != layout.NOTES:
            raise RuntimeError(f"a generated note is not under {layout.NOTES}/: {fake.path}")
        days[(year, month, day)].append((name, blob))

    def tree(entries: dict[str, tuple[str, int]]) -> pygit2.Oid:
        builder = repo.TreeBuilder()
        for name, (oid, mode) in entries.items():
            builder.insert(name, pygit2.Oid(hex=oid), mode)
        return builder.write()

    blob_mode, tree_mode = pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_TREE
    months: dict[tuple[str, str], dict[str, tuple[str, int]]] = defaultdict(dict)
    for (year, month, day), files in days.items():
        months[(year, month)][day] = (str(tree({n: (b, blob_mode) for n, b in files})), tree_mode)
    years_: dict[str, dict[str, tuple[str, int]]] = defaultdict(dict)
    for (year, month), entries in months.items():
        years_[year][month] = (str(tree(entries)), tree_mode)
    year_trees = {year: str(tree(entries)) for year, entries in sorted(years_.items())}

    root = repo[tip].peel(pygit2.Tree)
    notes_tree = repo[root[layout.NOTES].id]
    notes_entries = {e.name: (str(e.id), e.filemode) for e in notes_tree}
    head = tip
    made = 0
    for year, year_tree in year_trees.items():
        notes_entries[year] = (year_tree, tree_mode)
        root_builder = repo.TreeBuilder(root)
        root_builder.insert(layout.NOTES, tree(notes_entries), tree_mode)
        sig = pygit2.Signature(gitcmd.vault_committer_name(), gitcmd.VAULT_EMAIL)
        n_year = sum(len(v) for k, v in days.items() if k[0] == year)
        head = str(
            repo.create_commit(
                None,
                sig,
                sig,
                f"bench: {n_year} generated notes for {year}\n",
                root_builder.write(),
                [pygit2.Oid(hex=head)],
            )
        )
        made += 1
    repo.references[vault.ref].set_target(pygit2.Oid(hex=head), "bench: generated notes")
    return made


def count_notes(repo_dir: Path, ref: str | None = None) -> int:
    """Notes on `ref` (default: repo_dir's vault branch)."""
    from gitvault.resolve import resolve
    from gitvault.vault import layout
    from gitvault.vault.store import Vault

    out = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", ref or Vault(resolve(repo_dir)).ref, layout.NOTES],
        cwd=repo_dir,
        capture_output=True,
        check=True,
    ).stdout
    return sum(1 for line in out.decode().splitlines() if layout.note_sha(line) is not None)
