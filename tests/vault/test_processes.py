"""The one door to child processes (vault/processes) and git's streaming call on it: a reader
that stops early stops the child, a timeout kills a model CLI's whole process group, a detached
child outlives nothing it should not, and a missing git is a clear error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitvault.vault import gitcmd, processes
from tests.support.repos import Repo, wait_until


def _gone(pid: int) -> bool:
    """The process no longer runs (exited; a zombie awaiting its reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_run_captures_output_and_feeds_input() -> None:
    done = processes.run(["sh", "-c", "cat; echo err >&2; exit 3"], input=b"hello")
    assert done == processes.Finished(3, b"hello", b"err\n")


def test_run_gives_the_child_no_stdin_unless_asked() -> None:
    assert processes.run(["sh", "-c", "cat"], timeout=30).stdout == b""


def test_run_raises_timeout_and_leaves_no_child(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    with pytest.raises(processes.Timeout):
        processes.run(["sh", "-c", f"echo $$ > {pid_file}; exec sleep 30"], timeout=0.5)
    assert _gone(int(pid_file.read_text()))


def test_a_timeout_kills_a_model_clis_whole_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    script = f"echo $$ > {pids}; sleep 30 & echo $! >> {pids}; wait"
    with pytest.raises(processes.Timeout):
        processes.run_isolated(
            ["sh", "-c", script], input=b"", env=dict(os.environ), cwd=tmp_path, timeout=0.5
        )
    for pid in (int(line) for line in pids.read_text().split()):
        wait_until(lambda pid=pid: _gone(pid), what=f"process {pid} of the group to die")


def test_a_reader_that_stops_early_stops_the_child(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    with processes.stream(["sh", "-c", f"echo $$ > {pid_file}; exec yes"]) as out:
        first = next(iter(out))
    assert first.startswith(b"y\n")
    assert _gone(int(pid_file.read_text()))


def test_a_detached_child_runs_in_a_session_of_its_own(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    with log.open("ab") as out:
        pid = processes.spawn_detached(
            ["sh", "-c", "ps -o sid= -p $$; echo done"],
            cwd=tmp_path,
            env=dict(os.environ),
            output=out.fileno(),
        )
    wait_until(lambda: "done" in log.read_text(), what="the detached child's output")
    assert int(log.read_text().split()[0]) == pid != os.getsid(0)


def test_stream_git_yields_a_history_and_reports_how_git_ended(repo: Repo) -> None:
    shas = [repo.commit(f"feat: {i}") for i in range(3)]
    with gitcmd.stream_git(["log", "--format=%H", "HEAD"], repo.path) as out:
        text = b"".join(out).decode()
        assert out.finish().returncode == 0
    assert text.split()[:3] == list(reversed(shas))
    with gitcmd.stream_git(["log", "no-such-rev"], repo.path) as out:
        assert b"".join(out) == b""
        failed = out.finish()
    assert failed.returncode != 0 and b"no-such-rev" in failed.stderr


def test_git_missing_from_path_is_a_clear_error(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(repo.path / "nowhere"))
    with pytest.raises(gitcmd.GitError, match="git is not installed"):
        gitcmd.run_git(["status"], repo.path)
    with (
        pytest.raises(gitcmd.GitError, match="git is not installed"),
        gitcmd.stream_git(["log"], repo.path),
    ):
        pass


def test_started_children_run_side_by_side_and_an_unwanted_one_is_killed(tmp_path: Path) -> None:
    # Each child waits for the other's file: only children running at once both finish.
    a, b, pid_file = tmp_path / "a", tmp_path / "b", tmp_path / "pid"
    wait_for = "i=0; while [ ! -e {f} ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done; cat {f}"
    first = processes.start(["sh", "-c", f"echo one > {a}; " + wait_for.format(f=b)])
    second = processes.start(["sh", "-c", f"echo two > {b}; " + wait_for.format(f=a)])
    assert first.finish(timeout=30) == processes.Finished(0, b"two\n", b"")
    assert second.finish(timeout=30) == processes.Finished(0, b"one\n", b"")
    unwanted = processes.start(["sh", "-c", f"echo $$ > {pid_file}; exec sleep 30"])
    wait_until(pid_file.exists, what="the child to start")
    unwanted.abandon()
    assert _gone(int(pid_file.read_text()))
    slow = processes.start(["sh", "-c", f"echo $$ > {pid_file}.2; exec sleep 30"])
    with pytest.raises(processes.Timeout):
        slow.finish(timeout=0.5)
    assert _gone(int((tmp_path / "pid.2").read_text()))


def test_a_started_git_fails_as_run_git_does(repo: Repo) -> None:
    started = gitcmd.start_git(["cat-file", "blob", "HEAD:no-such-file"], repo.path)
    with pytest.raises(gitcmd.GitError, match="cat-file"):
        started.result()
    ok = gitcmd.start_git(["rev-parse", "HEAD"], repo.path).result()
    assert ok.stdout.decode().strip() == repo.head()


def test_iter_tree_streams_what_ls_tree_lists(repo: Repo) -> None:
    """The streamed listing (a rebuild's and a first fold's: never held whole) gives ls_tree's
    entries in git's order, names with tabs, spaces and non-ASCII included, across many reads
    of git's output; an unknown revision lists nothing, as ls_tree does."""
    names = [f"d{i % 7}/f {i}\t{'é' * (i % 3)}.txt" for i in range(3000)]
    repo.commit("many files", files={name: name for name in names})
    listed = list(gitcmd.iter_tree(repo.path, "HEAD", ["d1/", "d3/"], recursive=True))
    assert listed == gitcmd.ls_tree(repo.path, "HEAD", ["d1/", "d3/"], recursive=True)
    assert len(listed) == sum(1 for n in names if n.startswith(("d1/", "d3/")))
    assert {e.path for e in listed} == {n for n in names if n.startswith(("d1/", "d3/"))}
    top = list(gitcmd.iter_tree(repo.path, "HEAD", []))
    assert [e for e in top if e.is_dir] and top == gitcmd.ls_tree(repo.path, "HEAD", [])
    assert list(gitcmd.iter_tree(repo.path, "no-such-rev", [])) == []


def test_iter_tree_stopped_early_leaves_no_git_behind(repo: Repo) -> None:
    repo.commit("files", files={f"d/f{i:04}.txt": str(i) for i in range(2000)})
    listing = gitcmd.iter_tree(repo.path, "HEAD", ["d/"], recursive=True)
    first = next(listing)
    assert first.path == "d/f0000.txt" and _git_children() != []
    listing.close()
    assert _git_children() == []


def _git_children() -> list[int]:
    """This process's git children that have not been reaped (Linux /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            comm = stat.read_text().split("(", 1)[1].rsplit(")", 1)[0]
        except (OSError, IndexError):
            continue
        if int(fields[1]) == os.getpid() and comm == "git":
            out.append(int(stat.parent.name))
    return out
