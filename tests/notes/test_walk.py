"""The drainer's walk of every worktree's HEAD log: commits that ran no hook get their notes
(core.hooksPath=/dev/null, `git am`, a hookless rebase), in whichever worktree they were made,
on the branch they were made on; history from before gitvault is never noted behind the
user's back; the walk is bounded and resumes; special files never hang it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitvault.notes import heads, walk
from gitvault.notes.drain import drain
from gitvault.resolve import resolve
from gitvault.vault import statedir
from tests.support.repos import NO_HOOKS, Repo


def test_commits_that_ran_no_hook_in_any_worktree_get_notes(repo_factory) -> None:
    repo: Repo = repo_factory(sync=False)  # background drainers, as in real use
    left, right = repo.worktree("left"), repo.worktree("right")
    quiet_left = left.commit("left, hooks off", hooks=False)
    quiet_right = right.commit("right, hooks off", hooks=False)
    right.git("checkout", "-q", "-b", "right-later")
    later = right.commit("right, on a later branch", hooks=False)
    right.git("checkout", "-q", "right")  # HEAD moves on: the walk still knows where it was
    hooked = repo.commit("main, hooked")  # the drainer this starts walks every worktree
    repo.wait_for_notes([quiet_left, quiet_right, later, hooked])
    assert repo.note_meta(quiet_left)["worktree"] == "left"
    assert repo.note_meta(quiet_right)["branch"] == "right"
    assert repo.note_meta(later)["branch"] == "right-later"
    assert repo.note_meta(later)["worktree"] == "right"
    repo.wait_no_drainer()


def test_any_gitvault_command_notes_commits_that_ran_no_hook(repo: Repo) -> None:
    sha = repo.commit("an agent's shell emptied core.hooksPath", hooks=False)
    assert sha not in repo.note_paths()
    assert repo.gv("log").code == 0
    assert sha in repo.note_paths()


def test_commits_git_am_applies_get_notes(repo: Repo, tmp_path: Path) -> None:
    # `git am` runs no post-commit hook; its HEAD log entries say what it made.
    repo.git("checkout", "-q", "-b", "patches")
    repo.commit("a patch to mail", files={"patched.txt": "patched\n"})
    repo.git("format-patch", "-q", "-1", "-o", str(tmp_path / "mail"))
    repo.git("checkout", "-q", "main")
    # main moves on first: applied on the same parent in the same second, the mailed patch
    # would make the very same commit (same tree, parent, people, dates), already noted.
    repo.commit("main moves on", files={"other.txt": "other\n"})
    repo.git("am", "-q", *sorted(str(p) for p in (tmp_path / "mail").iterdir()))
    applied = repo.head()
    assert repo.git("log", "-1", "--format=%s") == "a patch to mail"
    assert repo.gv("status").code == 0
    assert repo.note_meta(applied)["branch"] == "main"


def test_a_hookless_rebase_notes_the_commits_it_kept_and_not_those_it_squashed(
    repo: Repo,
) -> None:
    repo.git("checkout", "-q", "-b", "topic")
    picks = [repo.commit(f"topic {i}", hooks=False) for i in range(3)]
    repo.git("checkout", "-q", "main")
    repo.commit("main moves on", hooks=False)
    repo.git("checkout", "-q", "topic")
    # Squash the third pick into the second: the second's first pick is replaced at once.
    editor = "sed -i '3s/^pick/fixup/'"
    repo.run(*NO_HOOKS, "rebase", "-q", "-i", "main", env={"GIT_SEQUENCE_EDITOR": editor})
    kept = repo.git("rev-list", "--reverse", "main..topic").splitlines()
    assert len(kept) == 2
    assert repo.gv("status").code == 0
    noted = set(repo.note_paths())
    assert set(kept) <= noted
    made = {line.split()[1] for line in (repo.git_dir / "logs" / "HEAD").read_text().splitlines()}
    dropped = made - set(kept) - set(picks) - {repo.git("rev-parse", "main")}
    squashed_away = [
        s for s in dropped if repo.run("cat-file", "-e", s, check=False).returncode == 0
    ]
    assert squashed_away, "the rebase made a commit it then replaced"
    assert not set(squashed_away) & noted, "a commit the rebase did not keep gets no note"


def test_a_hookless_pull_rebase_or_a_tools_rebase_notes_the_commits_it_made(
    repo: Repo, tmp_path: Path
) -> None:
    """A rebase's HEAD log entries begin with whatever GIT_REFLOG_ACTION says: `pull --rebase`
    writes "pull --rebase origin main (pick): …", a tool its own name. Hookless, every commit
    it kept still gets its note."""
    from tests.support.repos import git

    upstream = tmp_path / "upstream.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(upstream))
    repo.git("remote", "add", "origin", str(upstream))
    repo.git("push", "-q", "origin", "main")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(upstream), str(other))
    (other / "theirs.txt").write_text("theirs\n")
    git(other, "add", "theirs.txt")
    git(other, *NO_HOOKS, "commit", "-q", "-m", "their work")
    git(other, "push", "-q", "origin", "main")
    repo.commit("my work before the pull", hooks=False)
    repo.run(*NO_HOOKS, "pull", "-q", "--rebase", "origin", "main")
    pulled = repo.head()
    repo.git("checkout", "-q", "-b", "topic", "HEAD~1")
    topic = repo.commit("topic work", hooks=False)
    tool = {"GIT_REFLOG_ACTION": "tidy-tool"}
    repo.run(*NO_HOOKS, "rebase", "-q", "main", env=tool)
    tidied = repo.head()
    assert tidied != topic
    entries = (repo.git_dir / "logs" / "HEAD").read_text()
    assert "(pick): my work before the pull" in entries and "tidy-tool (pick)" in entries
    assert repo.gv("status").code == 0
    noted = set(repo.note_paths())
    assert {pulled, tidied} <= noted, "a rebase's picks are noted whoever named the rebase"


def test_a_hookless_commit_dated_before_install_still_gets_a_note(repo: Repo) -> None:
    """git writes a HEAD log entry with the committer's date (GIT_COMMITTER_DATE, which tools
    set for reproducible commits): an entry past where the walk stopped is new whatever its
    date says."""
    backdated = {"GIT_COMMITTER_DATE": "2001-02-03T04:05:06+0000"}
    sha = repo.commit("a reproducible commit, hooks off", hooks=False, env=backdated)
    assert repo.git("log", "-1", "--format=%ct") == "981173106"
    assert repo.gv("status").code == 0
    assert sha in set(repo.note_paths())


def test_history_from_before_install_is_never_noted_by_the_walk(repo_factory) -> None:
    repo: Repo = repo_factory(install=False)
    old = [repo.commit(f"before gitvault {i}") for i in range(3)]
    assert repo.gv("install", "--no-claude").code == 0
    new = repo.commit("after install", sync=True)
    assert repo.gv("status").code == 0
    noted = set(repo.note_paths())
    assert new in noted
    assert not set(old) & noted, "backfill is how old history gets notes, never the walk"


def test_the_walk_is_bounded_and_resumes_where_it_stopped(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(walk, "MAX_COMMITS", 4)
    shas = [repo.commit(f"quiet {i}", hooks=False) for i in range(10)]
    loc = resolve(repo.path)
    made, _ = walk.read_new(loc)
    assert [m.sha for m in made] == shas[:4], "the oldest first, at most MAX_COMMITS"
    drain(loc, block=True)  # one drain walks until nothing new is left
    assert set(shas) <= set(repo.note_paths())
    assert walk.read_new(loc)[0] == [], "nothing is proposed twice"
    assert not heads.due(loc)


def test_a_head_log_git_rewrote_is_read_again_without_noting_old_history(repo_factory) -> None:
    repo: Repo = repo_factory(install=False)
    old = repo.commit("before gitvault")
    assert repo.gv("install", "--no-claude").code == 0
    loc = resolve(repo.path)
    began = statedir.walk_state(loc)
    assert began is not None
    # git's times are whole seconds: say the install came in the very second of `old`.
    old_time = int(repo.git("log", "-1", "--format=%ct", old))
    statedir.write_walk_state(loc, began._replace(since=old_time))
    later = {"GIT_COMMITTER_DATE": f"@{old_time + 2} +0000"}
    quiet = repo.commit("after install, no hook", hooks=False, env=later)
    log = repo.git_dir / "logs" / "HEAD"
    fresh = log.with_name("HEAD.rewritten")
    fresh.write_bytes(log.read_bytes())
    fresh.replace(log)  # a new inode (the old one still existed), as `git reflog expire` leaves it
    assert repo.gv("status").code == 0
    noted = set(repo.note_paths())
    assert quiet in noted and old not in noted


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero", "folder"])
def test_a_special_file_at_a_head_log_never_hangs_the_walk(repo: Repo, kind: str) -> None:
    wt = repo.worktree("odd")
    log = wt.git_dir / "logs" / "HEAD"
    log.unlink()
    if kind == "fifo":
        os.mkfifo(log)
    elif kind == "folder":
        log.mkdir()
    else:
        log.symlink_to("/dev/zero")
    sha = repo.commit("main still gets its note")
    assert sha in repo.note_paths()
    assert walk.read_new(resolve(repo.path))[0] == []
