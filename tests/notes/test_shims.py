"""The git hook shims: POSIX sh, chaining, core.hooksPath scopes, never failing a commit,
nothing lost when a drainer dies, no orphan processes."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gitvault.notes import shims as githooks
from gitvault.resources import data_root
from gitvault.vault.locking import file_lock
from tests.support.repos import (
    Repo,
    drainer_pids,
    git,
    live_lock,
    read_only_mount_unavailable,
    wait_until,
)

SHIMS = ("post-commit", "post-merge", "post-rewrite")


def test_shims_are_posix_sh_with_an_id_and_version_line(tmp_path: Path) -> None:
    folder = data_root() / "hooks" / "git"
    for name in SHIMS:
        text = githooks.render_shim(name)
        lines = text.splitlines()
        assert githooks.SHIM_ID.search(text), name
        assert f"# gitvault-shim {name} v" in text
        assert lines[0] == "#!/bin/sh", name
        assert os.access(folder / name, os.X_OK), f"{name} is not executable"
        assert "@" not in text.replace("$@", ""), f"{name}: a placeholder was left unfilled"
        assert len(lines) <= 110, f"{name} should stay short"
        assert "bash" not in text and "[[" not in text, f"{name} uses bash syntax"
        path = tmp_path / name
        path.write_text(text)
        proc = subprocess.run(["sh", "-n", str(path)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


def test_shims_parse_and_run_under_dash(repo: Repo) -> None:
    dash = shutil.which("dash")
    if dash is None:
        pytest.skip("dash is not installed; `sh -n` is covered by the test above")
    hooks = repo.git_dir / "hooks"
    for name in SHIMS:
        proc = subprocess.run([dash, "-n", str(hooks / name)], capture_output=True, text=True)
        assert proc.returncode == 0, (name, proc.stderr)
    # Run the installed post-commit under dash by hand, as git would, for a commit made
    # without hooks: it spools the commit and (GITVAULT_SYNC) the note is written.
    sha = repo.commit("made without hooks", hooks=False)
    assert sha not in repo.note_paths()
    env = {**os.environ, "GITVAULT_SYNC": "1"}
    proc = subprocess.run(
        [dash, str(hooks / "post-commit")], cwd=repo.path, env=env, capture_output=True
    )
    assert proc.returncode == 0, proc.stderr
    assert sha in repo.note_paths()


def _write_hook(path: Path, body: str) -> bytes:
    text = "#!/bin/sh\n" + body
    path.write_text(text)
    path.chmod(0o755)
    return text.encode()


def test_existing_hooks_are_chained_and_restored(repo_factory, tmp_path: Path) -> None:
    repo: Repo = repo_factory(install=False)
    hooks = repo.git_dir / "hooks"
    log = tmp_path / "user-hooks.log"
    originals = {
        "post-commit": _write_hook(hooks / "post-commit", f'echo "post-commit $*" >> {log}\n'),
        "post-rewrite": _write_hook(
            hooks / "post-rewrite", f'echo "post-rewrite $*" >> {log}\ncat >> {log}\n'
        ),
    }
    result = repo.gv("install", "--no-claude")
    assert result.code == 0, result
    assert "moved existing post-commit hook" in result.out
    assert (hooks / "post-commit.pre-gitvault").read_bytes() == originals["post-commit"]
    assert githooks.shim_version((hooks / "post-commit").read_text()) is not None

    first = repo.commit("chained commit")
    assert first in repo.note_paths(), "gitvault's shim ran"
    assert log.read_text().splitlines() == ["post-commit "], "the user's hook ran too"
    repo.run("commit", "-q", "--amend", "-m", "amended")
    amended = repo.head()
    lines = log.read_text().splitlines()
    assert "post-rewrite amend" in lines, lines
    assert f"{first} {amended}" in lines, "the chained post-rewrite got the stdin pairs"
    assert repo.note_meta(amended)["replaces"] == [first]

    result = repo.gv("uninstall")
    assert result.code == 0, result
    for name, data in originals.items():
        assert (hooks / name).read_bytes() == data, f"{name} restored byte for byte"
        assert os.access(hooks / name, os.X_OK)
        assert not (hooks / f"{name}.pre-gitvault").exists()
    assert not (hooks / "post-merge").exists(), "the shim install added is removed"
    assert repo.vault_tip() is not None, "the vault is kept"


def test_install_twice_changes_nothing(repo: Repo) -> None:
    hooks = repo.git_dir / "hooks"
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in hooks.iterdir()}
    tip = repo.vault_tip()
    refs = repo.git("for-each-ref")
    result = repo.gv("install", "--no-claude")
    assert result.code == 0
    assert "nothing changed" in result.out
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in hooks.iterdir()}
    assert after == before
    assert repo.vault_tip() == tip
    assert repo.git("for-each-ref") == refs


def test_a_newer_gitvault_rewrites_only_its_own_shims(repo: Repo) -> None:
    hooks = repo.git_dir / "hooks"
    user_hook = _write_hook(hooks / "pre-commit", "exit 0\n")
    shim = hooks / "post-merge"
    current = shim.read_text()
    version = githooks.shim_version(current)
    assert version is not None
    # what an older gitvault wrote: a lower version and different text
    shim.write_text(current.replace(f"post-merge v{version}", "post-merge v0") + "# old\n")
    untouched = {n: (hooks / n).stat().st_mtime_ns for n in SHIMS if n != "post-merge"}
    result = repo.gv("install", "--no-claude")
    assert result.code == 0
    assert result.out.count("updated") == 1 and "post-merge" in result.out, result.out
    assert shim.read_text() == githooks.render_shim("post-merge")
    assert (hooks / "pre-commit").read_bytes() == user_hook
    assert {n: (hooks / n).stat().st_mtime_ns for n in untouched} == untouched


def test_uninstall_removes_only_what_install_added(repo: Repo) -> None:
    hooks = repo.git_dir / "hooks"
    user_hook = _write_hook(hooks / "pre-push", "exit 0\n")
    samples = sorted(p.name for p in hooks.iterdir() if p.name.endswith(".sample"))
    repo.commit("noted")
    result = repo.gv("uninstall")
    assert result.code == 0
    assert "vault branch is kept" in result.out
    left = sorted(p.name for p in hooks.iterdir())
    assert left == sorted([*samples, "pre-push"])
    assert (hooks / "pre-push").read_bytes() == user_hook
    assert repo.vault_tip() is not None
    # A commit now writes no note.
    count = len(repo.vault_log())
    repo.commit("after uninstall")
    assert len(repo.vault_log()) == count
    # --purge also deletes the vault branch and gitvault's state.
    result = repo.gv("uninstall", "--purge")
    assert result.code == 0
    assert repo.vault_tip() is None
    assert not repo.state_dir.exists()


def test_repository_core_hooks_path_is_installed_into(repo_factory) -> None:
    """A repository-scoped core.hooksPath outside the working tree (one inside it is never
    written: test_install.py::test_a_hooks_path_inside_the_tree_is_left_untouched_…)."""
    repo: Repo = repo_factory(install=False)
    outside = repo.path.parent / f"{repo.path.name}-hooks"
    repo.git("config", "core.hooksPath", str(outside))
    result = repo.gv("install", "--no-claude")
    assert result.code == 0, result
    for name in SHIMS:
        assert (outside / name).is_file()
        assert not (repo.git_dir / "hooks" / name).exists()
    sha = repo.commit("noted through core.hooksPath")
    assert sha in repo.note_paths()
    status = repo.gv("status", "--json").json("status")
    assert status["hooks_scope"] == "local"
    assert status["installed"] is True


def test_global_core_hooks_path_needs_force_and_is_reported(
    repo_factory, isolated_home: Path
) -> None:
    repo: Repo = repo_factory(install=False)
    shared = isolated_home / "shared-hooks"
    repo.git("config", "--global", "core.hooksPath", str(shared))
    result = repo.gv("install", "--no-claude")
    assert result.code == 3, result
    assert "global" in result.err and "--force" in result.err
    assert not shared.exists(), "nothing written to the shared hooks folder"
    assert repo.vault_tip() is None, "nothing changed"
    forced = repo.gv("install", "--no-claude", "--force")
    assert forced.code == 0, forced
    assert "core.hooksPath (global)" in forced.out
    status = repo.gv("status", "--json").json("status")
    assert status["hooks_scope"] == "global"
    assert status["hooks_dir"] == str(shared)
    assert status["installed"] is True
    sha = repo.commit("noted through the global hooks path")
    assert sha in repo.note_paths()
    # Another repository without a vault: the shared shims do nothing and never fail.
    other = repo.path.parent / "other"
    git(repo.path.parent, "init", "-q", "other")
    (other / "f").write_text("x")
    git(other, "add", "f")
    git(other, "commit", "-q", "-m", "no vault here", env={"GITVAULT_SYNC": "1"})
    assert git(other, "branch", "--list", "vault") == ""
    # status in a repository with a global hooksPath but no shims there: reported
    (shared / "post-commit").unlink()
    status = repo.gv("status", "--json").json("status")
    assert status["installed"] is False
    assert any("global" in w and "post-commit" in w for w in status["warnings"]), status["warnings"]


def test_per_worktree_core_hooks_path_is_reported_then_installed(
    repo: Repo, tmp_path: Path
) -> None:
    wt = repo.worktree("agent")
    git(wt.path, "config", "extensions.worktreeConfig", "true")
    agent_hooks = tmp_path / "agent-hooks"
    git(wt.path, "config", "--worktree", "core.hooksPath", str(agent_hooks))
    status = wt.gv_proc("status", "--json")
    assert status.code == 0, status
    data = status.json("status")
    assert data["hooks_scope"] == "worktree"
    assert data["installed"] is False
    assert any("not active in this worktree" in w for w in data["warnings"]), data["warnings"]
    missed = wt.commit("not noted: hooks inactive here")
    assert missed not in repo.note_paths()
    # The main worktree is unaffected.
    assert repo.gv("status", "--json").json("status")["installed"] is True
    # install run in that worktree makes the hooks active there.
    result = wt.gv_proc("install", "--no-claude")
    assert result.code == 0, result
    assert (agent_hooks / "post-commit").is_file()
    data = wt.gv_proc("status", "--json").json("status")
    assert data["installed"] is True
    assert not any("not active" in w for w in data["warnings"])
    sha = wt.commit("noted in the agent worktree")
    assert sha in repo.note_paths()
    assert repo.note_meta(sha)["worktree"] == "agent"


# -- hooks never hurt git ------------------------------------------------------------------


@pytest.mark.parametrize("how", ["launcher removed", "gitvault uninstalled"])
def test_commit_succeeds_when_gitvault_is_gone_and_status_shows_it(
    repo: Repo, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    launcher = repo.state_dir / "bin" / "gitvault-hook"
    if how == "launcher removed":
        launcher.unlink()
        expected = "is missing"
    else:  # the launcher points at a gitvault that no longer exists, and none is on PATH
        text = launcher.read_text()
        start = text.index("[ -x ")
        end = text.index("\n", start)
        launcher.write_text(
            text[:start] + "[ -x /gone/gitvault-hook ] && exec /gone/gitvault-hook" + text[end:]
        )
        monkeypatch.setenv("PATH", "/usr/bin:/bin")
        expected = "is gone"
    proc = repo.run("commit", "-q", "--allow-empty", "-m", "gitvault is gone", check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""
    sha = repo.head()
    assert sha not in repo.note_paths()
    status = repo.gv("status", "--json").json("status")
    assert any(expected in line for line in status["recent_failures"]), status
    # the spooled line was not lost: the status command itself drained it
    assert sha in repo.note_paths()


def test_commit_succeeds_when_the_spool_cannot_be_written(repo: Repo) -> None:
    spool = repo.state_dir / "spool"
    spool.unlink(missing_ok=True)
    spool.mkdir()  # appending to it fails, even for root
    proc = repo.run("commit", "-q", "--allow-empty", "-m", "spool broken", check=False)
    assert proc.returncode == 0
    assert proc.stderr == b""
    status = repo.gv("status", "--json")
    assert status.code == 0, status
    data = status.json("status")
    text = " ".join(data["warnings"] + data["recent_failures"])
    assert "spool" in text, data
    assert "backfill" in text, "it says how to recover the missing note"
    spool.rmdir()
    assert repo.gv("backfill").code == 0
    assert repo.head() in repo.note_paths()


def test_commit_succeeds_when_the_vault_cannot_be_written(repo: Repo) -> None:
    # Another writer holds the vault ref's lock for as long as the commit takes (a live lock,
    # never old enough to count as left by a killed writer): the drainer gives up after its
    # bounded retries, the commit is unaffected, the failure is logged.
    lock = repo.common_dir / "refs" / "heads" / f"{repo.branch_name}.lock"
    with live_lock(lock):
        proc = repo.run(
            "commit", "-q", "--allow-empty", "-m", "vault locked", check=False, timeout=120
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == b""
    sha = repo.head()
    assert sha not in repo.note_paths()
    failures = repo.gv("status", "--json").json("status")["recent_failures"]
    assert any("drain failed" in line for line in failures), failures
    assert sha in repo.note_paths(), "kept in the spool and written once the lock was gone"


def test_commit_succeeds_with_a_read_only_state_dir(repo: Repo, tmp_path: Path) -> None:
    reason = read_only_mount_unavailable(tmp_path)
    if reason:
        pytest.skip(f"{reason}; chmod does not make a folder read-only for root")
    state = repo.state_dir
    script = (
        f"mount --bind {state} {state} && mount -o remount,ro,bind {state} && "
        f"GITVAULT_SYNC=1 git commit -q --allow-empty -m 'read-only state' && "
        f"{sys.executable} -m gitvault status --json"
    )
    proc = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], cwd=repo.path, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    import json

    data = json.loads(proc.stdout)["data"]
    assert any("not writable" in w or "cannot write" in w for w in data["warnings"]), data[
        "warnings"
    ]
    assert repo.git("log", "-1", "--format=%s") == "read-only state"


def test_no_note_is_lost_when_the_drainer_dies(repo_factory) -> None:
    repo: Repo = repo_factory(sync=False)
    # 1. A line spooled by a hook whose drainer never ran.
    lost = repo.commit("spooled, never drained", hooks=False)
    spool = repo.state_dir / "spool"
    with spool.open("a") as fh:
        fh.write(f"commit\t{lost}\tref: refs/heads/main\tmain\t{repo.git_dir}\n")
    # 2. A file a drainer had claimed when it was killed.
    claimed = repo.commit("claimed, then the drainer was killed", hooks=False)
    work = repo.state_dir / "spool.work"
    work.mkdir(exist_ok=True)
    (work / "123-456").write_text(
        f"commit\t{claimed}\tref: refs/heads/main\tmain\t{repo.git_dir}\n"
    )
    result = repo.gv("log", "--json")  # any gitvault command drains first
    assert result.code == 0
    titles = [e["title"] for e in result.json("log")]
    assert "spooled, never drained" in titles and "claimed, then the drainer was killed" in titles
    assert not list(work.iterdir())


def test_a_drainer_killed_with_sigkill_loses_nothing(repo_factory) -> None:
    repo: Repo = repo_factory(sync=False)
    sha = repo.commit("its drainer is killed", hooks=False)
    state = repo.state_dir
    (state / "spool").write_text(f"commit\t{sha}\tref: refs/heads/main\tmain\t{repo.git_dir}\n")
    with file_lock(state / "drain.lock", block=True) as got:
        assert got
        drainer = subprocess.Popen(
            [sys.executable, "-m", "gitvault.hook", "git", "drain", str(repo.common_dir), "--wait"]
        )
        wait_until(
            lambda: drainer.pid in drainer_pids(repo.common_dir), what="the drainer to start"
        )
        drainer.send_signal(signal.SIGKILL)
        drainer.wait()
    assert sha not in repo.note_paths()
    # A stale pid file from the dead drainer must not stop the next hook from draining.
    (state / "drain.pid").write_text(str(drainer.pid))
    nxt = repo.commit("next commit, background drainer")
    repo.wait_for_notes([sha, nxt])
    repo.wait_no_drainer()


def test_background_drainers_exit_and_leave_no_orphans(repo_factory) -> None:
    repo: Repo = repo_factory(sync=False)
    shas = [repo.commit(f"background {i}") for i in range(6)]
    repo.wait_for_notes(shas)
    repo.wait_no_drainer()
    assert not drainer_pids(repo.common_dir)
    assert not (repo.state_dir / "drain.pid").exists()
    assert not (repo.state_dir / "spool").exists() or (repo.state_dir / "spool").stat().st_size == 0


def test_sync_config_key_writes_the_note_before_commit_returns(repo_factory) -> None:
    repo: Repo = repo_factory(sync=False)
    repo.git("config", "gitvault.sync", "true")
    sha = repo.commit("foreground by config")
    assert sha in repo.note_paths(), "written before `git commit` returned"
    repo.git("config", "gitvault.sync", "false")
    env_sha = repo.commit("foreground by env", sync=True)
    assert env_sha in repo.note_paths()


def _traced_git(folder: Path) -> tuple[dict[str, str], Path]:
    """An environment in which every git process (the hooks' too) logs its command line."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "git-trace.log"
    log.write_text("")
    return {"GIT_TRACE": str(log)}, log


def test_post_commit_reads_gitvault_sync_only_when_a_config_file_names_it(
    repo_factory, tmp_path: Path
) -> None:
    repo: Repo = repo_factory(sync=False)
    env, log = _traced_git(tmp_path / "trace")
    first = repo.commit("no config names sync", env=env)
    assert "gitvault.sync" not in log.read_text(), "git config ran with no file naming sync"
    repo.wait_for_notes([first])
    repo.wait_no_drainer()
    # Set in the global file (as a user might): the shim reads it and drains in the foreground.
    glob = Path(os.environ.get("GIT_CONFIG_GLOBAL") or tmp_path / "global")
    local_env = {**env, "GIT_CONFIG_GLOBAL": str(tmp_path / "global.cfg")}
    (tmp_path / "global.cfg").write_text(glob.read_text() if glob.is_file() else "")
    git(repo.path, "config", "--file", str(tmp_path / "global.cfg"), "gitvault.sync", "true")
    sha = repo.commit("global config says sync", env=local_env)
    assert sha in repo.note_paths(), "written before `git commit` returned"
    assert "gitvault.sync" in log.read_text()
    # `git -c gitvault.sync=true commit` reaches the shim through the environment.
    repo.wait_no_drainer()
    sha = repo.commit(
        "git -c says sync",
        args=(),
        env={
            **env,
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "gitvault.sync",
            "GIT_CONFIG_VALUE_0": "true",
        },
    )
    assert sha in repo.note_paths(), "git -c (GIT_CONFIG_COUNT) was honoured"


def _children_cpu(run: Callable[[], object]) -> float:
    """CPU seconds of the processes run() started and waited for (git and its hooks; a
    detached drainer is not among them)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def test_a_large_git_config_never_holds_a_commit(repo_factory) -> None:
    """A .git/config of 80,000 branch sections (6 MB): the post-commit shim looks for `sync`
    in it at C speed, not a byte at a time with sh's `read` (seconds of CPU per commit), and
    still finds the setting at its end."""
    repo: Repo = repo_factory(sync=False)
    sections = "".join(
        f'[branch "feature-{i}"]\n\tremote = origin\n\tmerge = refs/heads/feature-{i}\n'
        for i in range(80_000)
    )
    with (repo.git_dir / "config").open("a") as config:
        config.write(sections)
    hookless = _children_cpu(lambda: repo.commit("no hooks", hooks=False))
    repo.wait_no_drainer()
    hooked = _children_cpu(lambda: repo.commit("hooks, a large config"))
    repo.wait_no_drainer()
    assert hooked - hookless < 1.0, (hooked, hookless)
    with (repo.git_dir / "config").open("a") as config:
        config.write("[gitvault]\n\tsync = true\n")
    sha = repo.commit("sync named at the end of a large config")
    assert sha in repo.note_paths(), "the setting was found: written before git returned"


def test_post_merge_runs_no_git_process(repo_factory, tmp_path: Path) -> None:
    repo: Repo = repo_factory(sync=False)
    base = repo.head()
    repo.git("checkout", "-q", "-b", "topic")
    repo.commit("on topic")
    repo.git("checkout", "-q", "-")
    repo.commit("on main")
    repo.wait_no_drainer()
    env, log = _traced_git(tmp_path / "trace")
    # No drainer this once (its own git processes would race into the trace): the old shim
    # read sync.auto (git config, cat-file) before it looked for the launcher.
    launcher = repo.state_dir / "bin" / "gitvault-hook"
    mode = launcher.stat().st_mode
    launcher.chmod(0o644)
    try:
        repo.run("merge", "-q", "--no-edit", "topic", env=env)
    finally:
        launcher.chmod(mode)
    calls = [line for line in log.read_text().splitlines() if "built-in: git" in line]
    assert any("git merge" in c for c in calls), calls
    assert not [c for c in calls if "git config" in c or "git cat-file" in c], calls
    merge = repo.head()
    assert base != merge
    repo.commit("after the merge")  # its drainer notes the merge too (the spool kept its line)
    repo.wait_for_notes([merge])


def test_hook_shims_do_nothing_in_a_repository_without_a_vault(tmp_path: Path) -> None:
    repo = tmp_path / "plain"
    git(tmp_path, "init", "-q", "plain")
    hooks = repo / ".git" / "hooks"
    for name in SHIMS:
        (hooks / name).write_text(githooks.render_shim(name))
        (hooks / name).chmod(stat.S_IRWXU)
    (repo / "f").write_text("x")
    git(repo, "add", "f")
    proc = subprocess.run(["git", "commit", "-q", "-m", "x"], cwd=repo, capture_output=True)
    assert proc.returncode == 0 and proc.stderr == b""
    assert not (repo / ".git" / "gitvault").exists()


# A stand-in for the shell's printf that holds the hook between opening the spool and writing
# its line (where a loaded machine can preempt it for as long as a whole drain takes), until
# the test lets it go. Only the spool write uses printf in post-commit.
_STALLED_PRINTF = """
printf() {
  if [ ! -e "$GO" ]; then : > "$STALLED"; while [ ! -e "$GO" ]; do sleep 0.01; done; fi
  command printf "$@"
}
. "$SHIM"
"""


def run_stalled_post_commit(repo: Repo, shim: Path, tmp_path: Path) -> subprocess.Popen[bytes]:
    """Start the installed post-commit as git would (in the worktree, GITVAULT_SYNC) with its
    spool write held back until tmp_path/go exists; returns once it holds the spool open."""
    go, stalled = tmp_path / "go", tmp_path / "stalled"
    env = {**os.environ, "GITVAULT_SYNC": "1", "GO": str(go), "STALLED": str(stalled)}
    env["SHIM"] = str(shim)
    proc = subprocess.Popen(["sh", "-c", _STALLED_PRINTF], cwd=repo.path, env=env)
    wait_until(stalled.exists, what="the hook to hold the spool open")
    return proc


def test_a_hook_held_between_opening_and_writing_the_spool_loses_no_line(
    repo_factory, tmp_path: Path
) -> None:
    # The race that lost one note in 400 under load: a hook opens the spool for appending, is
    # preempted, a drainer claims the spool, reads it, writes its notes and deletes it, and only
    # then does the hook write, into the deleted file. The hook must notice (the file it wrote
    # is no longer the spool) and write again.
    from gitvault.notes.drain import drain
    from gitvault.resolve import resolve

    repo: Repo = repo_factory(sync=False)
    other = repo.commit("another hook's commit", hooks=False)
    held = repo.commit("the held hook's commit", hooks=False)
    repo.restart_walk()  # only the spool line can bring the held commit its note
    spool = repo.state_dir / "spool"
    spool.write_text(f"commit\t{other}\tref: refs/heads/main\tmain\t{repo.git_dir}\n")
    hook = run_stalled_post_commit(repo, repo.git_dir / "hooks" / "post-commit", tmp_path)
    assert drain(resolve(repo.path), block=True) == 1, "the drainer took the other line"
    assert other in repo.note_paths() and held not in repo.note_paths()
    (tmp_path / "go").touch()
    assert hook.wait(timeout=60) == 0
    assert held in repo.note_paths(), "the held hook's line was written again and drained"
