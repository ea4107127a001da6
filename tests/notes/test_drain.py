"""The drainer against real repositories: the spool format, races with hooks that append while
it works, commits spooled during a rebase, malformed lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitvault.notes import drain as drain_mod
from gitvault.notes.drain import Entry, drain, parse_line, spool_backlog
from gitvault.resolve import resolve
from gitvault.vault import statedir
from tests.support.repos import Repo


def _line(kind: str, sha: str, repo: Repo, old: str | None = None) -> str:
    fields = [kind, *([old] if old else []), sha, "ref: refs/heads/main", "main", str(repo.git_dir)]
    return "\t".join(fields) + "\n"


def test_spool_lines_round_trip() -> None:
    sha, old = "a" * 40, "b" * 40
    for entry in (
        Entry("commit", sha, "main", "main", "/x/.git"),
        Entry("merge", sha, None, "wt", "/x/.git/worktrees/wt"),
        Entry("rewrite", sha, "topic", "main", "/x/.git", old=old),
        Entry("pending", sha, "main", "main", "/x/.git", stamp=1700000000.0),
    ):
        assert parse_line(entry.line()) == entry
    assert parse_line(f"commit\t{sha}\tref: refs/heads/feature/x\tmain\t/g").branch == "feature/x"
    assert parse_line(f"commit\t{sha}\t{'c' * 40}\tmain\t/g").branch is None, "detached HEAD"
    for bad in ("", "commit", "commit\tnot-a-sha", "bogus\t" + sha, "rewrite\t" + old):
        assert parse_line(bad) is None, bad


def test_malformed_spool_lines_are_logged_and_skipped(repo_factory) -> None:
    repo: Repo = repo_factory(sync=False)
    sha = repo.commit("good line", hooks=False)
    spool = repo.state_dir / "spool"
    spool.write_text("garbage line\n" + _line("commit", sha, repo) + "commit\tzzz\n")
    assert spool_backlog(resolve(repo.path)) == 3
    assert drain(resolve(repo.path), block=True) == 1
    assert sha in repo.note_paths()
    log = (repo.state_dir / "log").read_text()
    assert "malformed spool line 'garbage line'" in log
    assert spool_backlog(resolve(repo.path)) == 0


def test_a_line_appended_to_a_claimed_file_is_not_lost(
    repo_factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A hook opened the spool (O_APPEND) just before the drainer renamed it and writes its
    # line after the drainer read the file: the line lands in the claimed file.
    repo: Repo = repo_factory(sync=False)
    first = repo.commit("first", hooks=False)
    late = repo.commit("late writer", hooks=False)
    (repo.state_dir / "spool").write_text(_line("commit", first, repo))
    original = drain_mod.Drainer.process
    appended: list[Path] = []

    def process(self: drain_mod.Drainer, entries: list[Entry]) -> list[Entry]:
        if not appended:
            claimed = sorted((repo.state_dir / statedir.SPOOL_WORK).iterdir())
            with claimed[0].open("a") as fh:
                fh.write(_line("commit", late, repo))
            appended.append(claimed[0])
        return original(self, entries)

    monkeypatch.setattr(drain_mod.Drainer, "process", process)
    assert drain(resolve(repo.path), block=True) == 2
    assert {first, late} <= set(repo.note_paths())
    assert not appended[0].exists()


def test_pending_commits_wait_for_the_rebase_and_take_its_rewrite_lines(repo_factory) -> None:
    repo: Repo = repo_factory(sync=False)
    old = repo.commit("original", hooks=False)
    repo.git("checkout", "-q", "--detach", "HEAD~1")
    new = repo.commit("original", hooks=False)  # what a rebase would have produced
    repo.restart_walk()
    rebase_dir = repo.git_dir / "rebase-merge"
    rebase_dir.mkdir()
    loc = resolve(repo.path)
    (repo.state_dir / "spool").write_text(_line("pending", new, repo))
    drain(loc, block=True)
    assert new not in repo.note_paths(), "set aside while the rebase runs"
    assert (repo.state_dir / drain_mod.PENDING).exists()
    rebase_dir.rmdir()
    (repo.state_dir / "spool").write_text(_line("rewrite", new, repo, old=old))
    assert drain(loc, block=True) == 1
    assert repo.note_meta(new)["replaces"] == [old]
    assert not (repo.state_dir / drain_mod.PENDING).exists()


def test_rewrite_lines_written_while_the_drainer_works_are_taken(
    repo_factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The drainer claimed a pending line during the rebase; the rebase then ended (git runs
    # post-rewrite before it removes the rebase state) before the drainer looked at it.
    repo: Repo = repo_factory(sync=False)
    old = repo.commit("rebased", hooks=False)
    repo.git("checkout", "-q", "--detach", "HEAD~1")
    new = repo.commit("rebased", hooks=False)
    (repo.state_dir / "spool").write_text(_line("pending", new, repo))
    real_claim = drain_mod._claim
    calls = 0

    def claim(state: Path) -> list[Path]:
        nonlocal calls
        calls += 1
        files = real_claim(state)
        if calls == 1:  # post-rewrite appends to the new spool right after our claim
            (state / "spool").write_text(_line("rewrite", new, repo, old=old))
        return files

    monkeypatch.setattr(drain_mod, "_claim", claim)
    drain(resolve(repo.path), block=True)
    assert repo.note_meta(new)["replaces"] == [old]
    notes = [s for s in repo.vault_log() if s[1].startswith(f"note {new[:7]}")]
    assert len(notes) == 1


def test_a_commit_that_no_longer_exists_is_logged_not_fatal(repo_factory) -> None:
    repo: Repo = repo_factory(sync=False)
    ghost = "0123456789abcdef0123456789abcdef01234567"
    real = repo.commit("real", hooks=False)
    (repo.state_dir / "spool").write_text(
        _line("commit", ghost, repo) + _line("commit", real, repo)
    )
    assert drain(resolve(repo.path), block=True) == 1
    assert real in repo.note_paths()
    assert f"commit {ghost} no longer exists" in (repo.state_dir / "log").read_text()


def test_commits_a_rebase_dropped_get_no_note(repo_factory) -> None:
    # Commits spooled during a rebase that was then aborted (or squashed away) are on no
    # branch: they are not part of the history and get no note.
    repo: Repo = repo_factory(sync=False)
    repo.git("checkout", "-q", "--detach")
    dropped = repo.commit("made during an aborted rebase", hooks=False)
    repo.git("checkout", "-q", "main")
    kept = repo.commit("on main", hooks=False)
    repo.restart_walk()
    (repo.state_dir / "spool").write_text(
        _line("pending", dropped, repo) + _line("commit", kept, repo)
    )
    assert drain(resolve(repo.path), block=True) == 1
    assert kept in repo.note_paths() and dropped not in repo.note_paths()
    assert not (repo.state_dir / drain_mod.PENDING).exists()


# -- idempotency: the first note wins, on both write paths ----------------------------------


@pytest.mark.parametrize("count", [3, 12], ids=["loose path", "packed path (8+ writes)"])
def test_redraining_already_noted_commits_makes_no_commit(repo_factory, count: int) -> None:
    # A re-drain after a crash: every spooled commit already has its note. Below 8 writes the
    # chain is written object by object, from 8 on through `git fast-import`; both must skip.
    repo: Repo = repo_factory(sync=False)
    shas = [repo.commit(f"c{i}", hooks=False) for i in range(count)]
    spool = repo.state_dir / "spool"
    spool.write_text("".join(_line("commit", s, repo) for s in shas))
    assert drain(resolve(repo.path), block=True) == count
    tip = repo.vault_tip()
    spool.write_text("".join(_line("commit", s, repo) for s in shas))
    assert drain(resolve(repo.path), block=True) == 0
    assert repo.vault_tip() == tip, "no new commit, empty or not"


def test_a_backfilled_note_keeps_its_first_version_when_the_commit_is_spooled(
    repo_factory,
) -> None:
    repo: Repo = repo_factory(sync=False)
    shas = [repo.commit(f"old {i}", hooks=False) for i in range(10)]
    repo.restart_walk()
    assert repo.gv("backfill").code == 0
    first = {s: repo.note(s) for s in shas}
    assert all(repo.note_meta(s)["source"] == "backfill" for s in shas)
    tip = repo.vault_tip()
    # The hook's lines for the same commits arrive late (a stale spool, a re-run hook).
    (repo.state_dir / "spool").write_text("".join(_line("commit", s, repo) for s in shas))
    assert drain(resolve(repo.path), block=True) == 0
    assert {s: repo.note(s) for s in shas} == first, "the first version of each note wins"
    assert repo.vault_tip() == tip


@pytest.mark.parametrize("packed", [False, True])
def test_commit_paths_honour_skip_if(repo_factory, packed: bool) -> None:
    from gitvault.vault.store import Vault, Write

    repo: Repo = repo_factory(sync=False)
    vault = Vault(resolve(repo.path))
    writes = [Write({f"notes/x/{i}.md": b"x"}, f"note {i}") for i in range(9)]
    tip = vault.tip()
    commit = vault.commit_packed if packed else vault.commit_many
    assert commit(writes, skip_if=lambda head, w: True) == []
    assert vault.tip() == tip
    made = commit(writes, skip_if=lambda head, w: w.message.endswith(("1", "3")))
    assert len(made) == 7 and vault.tip() == made[-1]
