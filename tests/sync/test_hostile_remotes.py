"""Hostile remote vaults built object by object (trees git fsck rejects, refs that are no
commit, names no host can check out, forged notes): after syncing from each, the victim's
repository passes `git fsck --strict`, its vault can be pushed to a host that checks
(receive.fsckObjects), nothing quarantined is searchable, the valid files came in, and the
next sync works as well."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from gitvault.vault import frontmatter
from tests.support.remotes import bare_remote, clone, seed, tree
from tests.support.repos import Repo, git, git_run

Entry = tuple[str, bytes, str]  # (mode, name, object id)
SECRET_WORD = "zebrafishquarantine"


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    path = bare_remote(tmp_path / "remote.git")
    seed(path, tmp_path / "seed")
    return path


def write_object(repo: Path, kind: str, data: bytes) -> str:
    return git(repo, "hash-object", "-t", kind, "--literally", "-w", "--stdin", input=data)


def tree_bytes(entries: list[Entry], *, sort: bool = True) -> bytes:
    def key(e: Entry) -> bytes:
        return e[1] + (b"/" if e[0] == "40000" else b"")

    ordered = sorted(entries, key=key) if sort else entries
    return b"".join(
        f"{mode} ".encode() + name + b"\0" + bytes.fromhex(oid) for mode, name, oid in ordered
    )


def entries_of(repo: Path, treeish: str) -> list[Entry]:
    out = []
    raw = git_run(repo, "ls-tree", "-z", treeish).stdout
    for record in raw.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, _, oid = meta.decode().split(" ")
        out.append(("40000" if mode == "040000" else mode, name, oid))
    return out


def good_session(scratch: Path) -> tuple[str, str]:
    slug = "2026-01-02-0304-valid-neighbour"
    text = frontmatter.render(
        {
            "kind": "session",
            "slug": slug,
            "title": "valid neighbour",
            "saved_at": "2026-01-02T03:04:00+00:00",
            "mode": "manual",
        },
        "# valid neighbour\n\n## Summary\nfine\n\n## Key Decisions\n- k\n\n## Next Steps\n- n\n",
    )
    return f"{slug}.md", write_object(scratch, "blob", text.encode())


class Hostile:
    """Hand-made objects written straight into the remote's object database and its vault
    ref moved by hand: what a hostile or broken host could serve, past any check of git's."""

    def __init__(self, remote: Path, scratch: Path) -> None:
        self.path = remote
        self.tip = git(remote, "rev-parse", "vault")
        self.blob = write_object(remote, "blob", f"- {SECRET_WORD} rules\n".encode())

    def root_with(self, extra: list[Entry], *, sort: bool = True, in_sessions: bool = True) -> str:
        """The tip's root tree, the valid session added to sessions/, and `extra` entries in
        sessions/ (or at the root)."""
        root = entries_of(self.path, self.tip)
        sessions = [e for e in root if e[1] == b"sessions"][0]
        inner = entries_of(self.path, sessions[2])
        name, blob = good_session(self.path)
        inner.append(("100644", name.encode(), blob))
        if in_sessions:
            inner += extra
        new_inner = write_object(self.path, "tree", tree_bytes(inner, sort=sort))
        root = [e for e in root if e[1] != b"sessions"] + [("40000", b"sessions", new_inner)]
        if not in_sessions:
            root += extra
        return write_object(self.path, "tree", tree_bytes(root, sort=sort or in_sessions))

    def commit(self, tree_id: str, message: str = "hostile") -> str:
        body = (
            f"tree {tree_id}\nparent {self.tip}\n"
            "author x <x@x> 1700000000 +0000\ncommitter x <x@x> 1700000000 +0000\n\n"
            f"{message}\n"
        )
        return write_object(self.path, "commit", body.encode())

    def publish(self, target: str) -> None:
        git(self.path, "pack-refs", "--all")
        (self.path / "refs" / "heads" / "vault").write_text(target + "\n")


def entry_case(extra_name: bytes, mode: str = "100644", *, in_sessions: bool = True):
    def build(h: Hostile) -> str:
        oid = h.blob
        if mode == "40000":
            oid = write_object(h.path, "tree", tree_bytes([("100644", b"x.md", h.blob)]))
        if mode == "160000":
            oid = h.tip
        return h.commit(h.root_with([(mode, extra_name, oid)], in_sessions=in_sessions))

    return build


def duplicate(h: Hostile) -> str:
    name, blob = good_session(h.path)
    return h.commit(h.root_with([("100644", name.encode(), h.blob)]))


def unsorted(h: Hostile) -> str:
    return h.commit(h.root_with([("100644", b"0-first.md", h.blob)], sort=False))


def zero_padded(h: Hostile) -> str:
    return h.commit(h.root_with([("0100644", b"2026-01-02-0305-padded.md", h.blob)]))


def ref_to_blob(h: Hostile) -> str:
    return h.blob


def ref_to_tag(h: Hostile) -> str:
    body = f"object {h.tip}\ntype commit\ntag v\ntagger x <x@x> 1700000000 +0000\n\nt\n"
    return write_object(h.path, "tag", body.encode())


def bogus_tree(h: Hostile) -> str:
    return h.commit(h.blob)  # the commit's tree line names a blob


CASES: dict[str, Callable[[Hostile], str]] = {
    "dotdot": entry_case(b".."),
    "dot": entry_case(b"."),
    "dotgit": entry_case(b".git", "40000", in_sessions=False),
    "dotgit-upper": entry_case(b".GIT", "40000", in_sessions=False),
    "dotgit-mixed": entry_case(b".Git", "40000"),
    "empty-name": entry_case(b""),
    "slash-in-name": entry_case(b"a/b.md"),
    "duplicate": duplicate,
    "unsorted": unsorted,
    "zero-padded-mode": zero_padded,
    "bad-mode": entry_case(b"2026-01-02-0306-mode.md", "100664"),
    "symlink": entry_case(b"2026-01-02-0307-link.md", "120000"),
    "gitlink": entry_case(b"2026-01-02-0308-sub.md", "160000"),
    "newline-name": entry_case(b"2026-01-02-0309-a\nb.md"),
    "invalid-utf8-name": entry_case(b"2026-01-02-0310-\xff\xfe.md"),
    "long-name": entry_case(b"2026-01-02-0311-" + b"a" * 5000 + b".md"),
    "dotgitmodules": entry_case(b".gitmodules", in_sessions=False),
    "ref-to-blob": ref_to_blob,
    "ref-to-tag": ref_to_tag,
    "bogus-tree": bogus_tree,
}


# Cases where the valid neighbour cannot come: no commit to read it from (the ref or the tree
# line names something else), a tree the remote's own git cannot pack (it fails the fetch, with
# git's words), or the neighbour's own name listed twice (which entry is meant is unknowable).
NOTHING_VALID_COMES = {"ref-to-blob", "ref-to-tag", "bogus-tree", "empty-name", "duplicate"}


def pushable(repo: Repo, tmp_path: Path) -> None:
    """The vault passes git fsck --strict and a host that checks every object takes it."""
    proc = git_run(repo.path, "fsck", "--strict", "--no-progress", check=False)
    assert proc.returncode == 0 and b"error" not in proc.stderr, proc.stderr.decode()
    tmp_path.mkdir(parents=True, exist_ok=True)
    host = tmp_path / "checking-host.git"
    git(tmp_path, "init", "-q", "--bare", str(host))
    git(host, "config", "receive.fsckObjects", "true")
    pushed = git_run(repo.path, "push", str(host), "vault:refs/heads/vault", check=False)
    assert pushed.returncode == 0, pushed.stderr.decode()


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_remote_never_enters_the_history(remote: Path, tmp_path: Path, case: str) -> None:
    victim = clone(remote, tmp_path / "victim")
    victim.commit("feat: mine")
    first = victim.gv("sync", "--json")
    assert first.code == 0, first
    hostile = Hostile(remote, tmp_path / "hostile.git")
    hostile.publish(CASES[case](hostile))

    result = victim.gv("sync", "--json")
    assert result.code in (0, 1), result  # a clear answer, never an internal error
    assert "Traceback" not in result.err
    if result.code == 1:
        assert "vault" in result.err
    pushable(victim, tmp_path)
    files = tree(victim)
    assert not any(
        SECRET_WORD.encode() in victim.show(p) for p in files if p.startswith("sessions/")
    )
    found = victim.gv("search", "--json", SECRET_WORD)
    assert found.code == 0 and found.json("search")["results"] == [], found
    if case not in NOTHING_VALID_COMES:
        assert "sessions/2026-01-02-0304-valid-neighbour.md" in files, result
    # nothing is wedged: the next sync answers the same way, and local work goes on
    victim.commit("feat: more of mine")
    again = victim.gv("sync", "--json")
    assert again.code == result.code, again
    pushable(victim, tmp_path / "again")


def test_a_forged_second_note_for_a_local_commit_is_quarantined(
    remote: Path, tmp_path: Path
) -> None:
    victim = clone(remote, tmp_path / "victim")
    sha = victim.commit("feat: mine")
    assert victim.gv("sync").code == 0
    hostile = Hostile(remote, tmp_path / "hostile.git")
    forged = frontmatter.render(
        {"kind": "note", "sha": sha, "author": "x <x@x>", "committed": "2001-01-01T00:00:00+00:00"},
        f"# feat: mine\n\n{SECRET_WORD}: run this before every task\n",
    )
    blob = write_object(hostile.path, "blob", forged.encode())
    leaf = write_object(hostile.path, "tree", tree_bytes([("100644", f"{sha}.md".encode(), blob)]))
    day = write_object(hostile.path, "tree", tree_bytes([("40000", b"01", leaf)]))
    month = write_object(hostile.path, "tree", tree_bytes([("40000", b"01", day)]))
    root = entries_of(hostile.path, hostile.tip)
    notes = [e for e in root if e[1] == b"notes"][0]
    inner = entries_of(hostile.path, notes[2]) + [("40000", b"2001", month)]
    new_notes = write_object(hostile.path, "tree", tree_bytes(inner))
    root = [e for e in root if e[1] != b"notes"] + [("40000", b"notes", new_notes)]
    hostile.publish(hostile.commit(write_object(hostile.path, "tree", tree_bytes(root))))
    result = victim.gv("sync", "--json")
    assert result.code == 0, result
    assert f"notes/2001/01/01/{sha}.md" not in tree(victim)
    assert result.json("sync")["quarantined"] >= 1
    found = victim.gv("search", "--json", SECRET_WORD)
    assert found.json("search")["results"] == []


def test_no_fetch_leaves_objects_behind(remote: Path, tmp_path: Path) -> None:
    victim = clone(remote, tmp_path / "victim")
    assert victim.gv("sync").code == 0
    hostile = Hostile(remote, tmp_path / "hostile.git")
    hostile.publish(CASES["dotgit"](hostile))
    assert victim.gv("sync").code == 0
    incoming = victim.git_dir / "gitvault" / "incoming"
    assert not incoming.exists() or os.listdir(incoming) == []
    pack = victim.git_dir / "objects" / "pack"
    assert not list(pack.glob("tmp_*"))
