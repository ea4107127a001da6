"""The vault branch: orphan, written only through the object database, one commit per write,
compare-and-swap under concurrency, format and ownership checks, plain-git auditing."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from gitvault.resolve import resolve
from gitvault.vault import schemas
from gitvault.vault.store import Vault
from tests.support.concurrency import commit_at_once
from tests.support.repos import Repo, git, snapshot_user_state


def _fsck(repo: Repo) -> None:
    proc = repo.run("fsck", "--strict", "--no-dangling", "--no-progress", check=False)
    out = (proc.stdout + proc.stderr).decode(errors="replace")
    assert proc.returncode == 0, out
    assert "error" not in out.lower() and "missing" not in out.lower(), out


def test_new_vault_is_an_orphan_branch_with_the_design_layout(repo: Repo) -> None:
    files = repo.vault_files()
    assert {
        "README.md",
        "vault.toml",
        "notes/.keep",
        "sessions/.keep",
        "patterns/README.md",
    } <= set(files)
    roots = repo.git("rev-list", "--max-parents=0", repo.branch_name).splitlines()
    assert len(roots) == 1
    assert repo.run("merge-base", "main", repo.branch_name, check=False).returncode == 1, "orphan"
    toml = tomllib.loads(repo.show("vault.toml").decode())
    assert toml["format_version"] == 1
    assert schemas.errors("vault.schema.json", toml) == []
    assert repo.vault_log()[-1][1] == "init vault"
    # plain git can audit it
    assert "init vault" in repo.git("log", "--oneline", repo.branch_name)
    assert "gitvault" in repo.git("show", f"{repo.branch_name}:README.md")


def test_user_state_is_untouched_by_install_notes_backfill_and_log(repo_factory) -> None:
    repo: Repo = repo_factory(install=False)
    repo.commit("second", files={"tracked.txt": "one\n", "other.txt": "x\n"}, hooks=False)
    repo.git("branch", "side")
    repo.git("tag", "-a", "v1", "-m", "release v1")
    repo.write("tracked.txt", "one\ntwo (unstaged)\n")
    repo.write("other.txt", "staged\n")
    repo.git("add", "other.txt")
    repo.write("untracked/new.txt", "untracked\n")
    before = snapshot_user_state(repo)
    assert before["status"], "the working tree is dirty on purpose"

    assert repo.gv("install", "--no-claude").code == 0
    assert snapshot_user_state(repo) == before, "install"

    # A spooled note drained by a read command, then backfill, log, show, status.
    head = repo.head()
    (repo.state_dir / "spool").write_text(
        f"commit\t{head}\tref: refs/heads/main\tmain\t{repo.git_dir}\n"
    )
    assert repo.gv("log").code == 0
    assert head in repo.note_paths()
    assert repo.gv("backfill").code == 0
    assert repo.gv("show", head[:8]).code == 0
    assert repo.gv("status").code == 0
    assert repo.gv("log", "--json").code == 0
    assert snapshot_user_state(repo) == before, "notes, backfill, log, show, status"

    # A commit (with its note) in another worktree leaves this one alone.
    wt = repo.worktree("elsewhere")
    sha = wt.commit("from elsewhere")
    assert sha in repo.note_paths()
    assert snapshot_user_state(repo, ignore_refs=["refs/heads/elsewhere"]) == before


def test_every_write_is_one_commit_touching_one_path(repo: Repo) -> None:
    shas = [repo.commit(f"commit {i}") for i in range(4)]
    log = repo.vault_log()
    assert len(log) == 1 + len(shas)
    for (vault_sha, subject), sha in zip(log[:-1], reversed(shas), strict=True):
        assert subject.startswith(f"note {sha[:7]} ")
        parents = repo.git("rev-list", "--parents", "-n1", vault_sha).split()[1:]
        assert len(parents) == 1, "a linear history"
        changed = repo.git(
            "diff-tree", "--no-commit-id", "--name-only", "-r", vault_sha
        ).splitlines()
        assert len(changed) == 1 and changed[0].endswith(f"{sha}.md")
    _fsck(repo)


def test_four_worktrees_committing_at_once_lose_no_note(repo_factory) -> None:
    # The small run of the concurrency suite; `just stress` runs 8 worktrees x 50 commits with
    # CPU-bound processes beside them, ten rounds (tests/stress/test_concurrency.py).
    repo: Repo = repo_factory(sync=False)  # background drainers, as in real use
    commit_at_once(repo, worktrees=4, commits=25)
    _fsck(repo)


_WRITER = """
import sys
from gitvault.resolve import resolve
from gitvault.vault.store import Vault
repo, who, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
vault = Vault(resolve(repo))
for i in range(count):
    path = f"patterns/{who}-{i:03d}.md"
    vault.commit({path: f"- rule {who} {i}\\n".encode()}, f"pattern {who} {i}")
"""


def test_concurrent_vault_commits_from_several_processes_lose_nothing(repo: Repo) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(repo.path), f"p{n}", "25"], stderr=subprocess.PIPE
        )
        for n in range(4)
    ]
    for p in procs:
        _, err = p.communicate(timeout=180)
        assert p.returncode == 0, err.decode()
    files = set(repo.vault_files())
    for n in range(4):
        for i in range(25):
            assert f"patterns/p{n}-{i:03d}.md" in files
    assert len(repo.vault_log()) == 1 + 100
    _fsck(repo)


def test_a_vault_of_a_newer_format_is_refused(repo: Repo) -> None:
    vault = Vault(resolve(repo.path))
    text = repo.show("vault.toml").decode().replace("format_version = 1", "format_version = 2")
    vault.commit({"vault.toml": text.encode()}, "upgrade format")
    tip = repo.vault_tip()
    for args in (["log"], ["install", "--no-claude"], ["backfill"], ["show", "README.md"]):
        result = repo.gv(*args)
        assert result.code == 3, (args, result)
        assert "format 2" in result.err and "up to 1" in result.err, result.err
    # A commit still succeeds; its note waits and the failure is visible in status.
    sha = repo.commit("after the upgrade")
    assert repo.vault_tip() == tip, "nothing written into a newer vault"
    status = repo.gv("status", "--json")
    assert status.code == 0, status
    data = status.json("status")
    assert any("newer" in w for w in data["warnings"]), data
    assert any("format 2" in line for line in data["recent_failures"]), data
    assert data["backlog"] >= 1, "the note is kept in the spool, not lost"
    assert sha not in repo.note_paths()


def test_install_refuses_a_foreign_vault_branch_and_changes_nothing(repo_factory) -> None:
    repo: Repo = repo_factory(install=False)
    repo.git("branch", "vault")
    hooks = sorted(p.name for p in (repo.git_dir / "hooks").iterdir())
    refs = repo.git("for-each-ref")
    before = snapshot_user_state(repo)
    result = repo.gv("install", "--no-claude")
    assert result.code == 3, result
    assert "already exists and gitvault did not create it" in result.err
    assert "gitvault.branch" in result.err, "the hint names the config key"
    assert sorted(p.name for p in (repo.git_dir / "hooks").iterdir()) == hooks
    assert repo.git("for-each-ref") == refs
    assert not (repo.git_dir / "gitvault").exists()
    assert snapshot_user_state(repo) == before
    # The full install (with Claude Code files) refuses just the same, writing nothing.
    result = repo.gv("install")
    assert result.code == 3
    assert not (repo.path / "CLAUDE.md").exists() and not (repo.path / ".claude").exists()


def test_config_key_names_another_branch(repo_factory) -> None:
    repo: Repo = repo_factory(install=False)
    repo.git("branch", "vault")  # someone else's branch, left alone
    foreign = repo.git("rev-parse", "vault")
    repo.git("config", "gitvault.branch", "memory")
    result = repo.gv("install", "--no-claude")
    assert result.code == 0, result
    repo.branch_name = "memory"
    assert repo.vault_tip() is not None
    sha = repo.commit("noted on memory")
    assert sha in repo.note_paths()
    assert repo.git("rev-parse", "vault") == foreign, "the other branch is untouched"
    log = repo.gv("log", "--json").json("log")
    assert log[0]["kind"] == "note" and log[0]["title"] == "noted on memory", log[0]
    assert log[0]["paths"] == [repo.note_paths()[sha]]


def test_audit_with_plain_git_log_and_a_worktree(repo: Repo) -> None:
    sha = repo.commit("Audited change")
    log = repo.git("log", "--format=%s", repo.branch_name)
    assert f"note {sha[:7]} Audited change" in log
    audit = repo.path.parent / "audit"
    repo.git("worktree", "add", "-q", str(audit), repo.branch_name)
    note_path = repo.note_paths()[sha]
    assert (audit / note_path).read_text() == repo.note(sha)
    assert git(audit, "status", "--porcelain") == ""
    # gitvault keeps writing while the branch is checked out in the audit worktree:
    # the ref moves (CAS) and git shows the audit worktree behind, nothing breaks.
    sha2 = repo.commit("Written while audited")
    assert sha2 in repo.note_paths()
    _fsck(repo)


def test_vault_path_validation_refuses_traversal(repo: Repo) -> None:
    vault = Vault(resolve(repo.path))
    tip = repo.vault_tip()
    for bad in ("../escape.md", "notes/../../x", "/"):
        try:
            vault.commit({bad: b"x"}, "bad")
        except Exception as exc:  # noqa: BLE001 - any refusal will do, but it must refuse
            assert "invalid vault path" in str(exc)
        else:
            raise AssertionError(f"{bad!r} was accepted")
    assert repo.vault_tip() == tip


def test_notes_keep_the_user_index_when_hooks_run_inside_git(repo: Repo) -> None:
    # Hooks run with GIT_INDEX_FILE and friends exported; the drainer must not follow them.
    repo.write("staged.txt", "staged\n")
    repo.git("add", "staged.txt")
    sha = repo.commit("only part", files={"part.txt": "p\n"}, args=["--", "part.txt"])
    assert sha in repo.note_paths()
    assert repo.git("show", "--name-only", "--format=", sha) == "part.txt"
    status = repo.git("status", "--porcelain")
    assert "A  staged.txt" in status, status
    assert Path(repo.path / "staged.txt").read_text() == "staged\n"
