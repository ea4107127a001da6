"""`gitvault install`, `uninstall` and `status [--json]` through the CLI."""

from __future__ import annotations

from pathlib import Path

from tests.support.repos import Repo

STATUS_KEYS = {
    "repository",
    "vault_branch",
    "vault_tip",
    "vault_format",
    "hooks_dir",
    "hooks_scope",
    "hooks",
    "backlog",
    "last_note",
    "last_fold",
    "warnings",
    "recent_failures",
    "installed",
}


def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def test_install_creates_the_vault_and_the_shims(repo_factory) -> None:
    repo: Repo = repo_factory(install=False)
    status = repo.gv("status", "--json").json("status")
    assert status["installed"] is False
    assert status["vault_tip"] is None
    assert any("run `gitvault install`" in w for w in status["warnings"])

    result = repo.gv("install", "--no-claude")
    assert result.code == 0, result
    assert "created vault branch 'vault'" in result.out
    for name in ("post-commit", "post-merge", "post-rewrite"):
        assert f"wrote {repo.git_dir / 'hooks' / name}" in result.out
    assert repo.vault_tip() is not None
    assert (repo.state_dir).is_dir()
    assert not (repo.path / "CLAUDE.md").exists(), "--no-claude writes no agent files"


def test_status_json_envelope_and_fields(repo: Repo) -> None:
    sha = repo.commit("Status subject")
    result = repo.gv("status", "--json")
    assert result.code == 0
    data = result.json("status")
    assert set(data) >= STATUS_KEYS
    assert data["installed"] is True
    assert data["vault_branch"] == "vault"
    assert data["vault_tip"] == repo.vault_tip()
    assert data["vault_format"] == 1
    assert data["hooks_scope"] == "default"
    assert data["hooks_dir"] == str(repo.git_dir / "hooks")
    assert [h["name"] for h in data["hooks"]] == [
        "post-commit",
        "post-merge",
        "post-rewrite",
        "pre-push",
    ]
    assert all(h["installed"] and not h["foreign"] for h in data["hooks"])
    assert data["backlog"] == 0
    # The one thing to do: fold the first digest.
    assert [w.split(":")[0] for w in data["warnings"]] == ["no digest yet"]
    assert data["last_note"]["title"] == "Status subject"
    assert data["last_note"]["paths"] == [repo.note_paths()[sha]]


def test_status_names_the_repository_vault_hooks_backlog_and_last_note(repo: Repo) -> None:
    repo.commit("Human readable")
    result = repo.gv("status")
    assert result.code == 0
    for word in ("repository", "vault", "hooks", "backlog", "last note", "Human readable"):
        assert word in result.out, result.out


def test_full_install_twice_changes_nothing(repo_factory) -> None:
    repo: Repo = repo_factory(install=False)
    first = repo.gv("install")
    assert first.code == 0, first
    tree = _tree_bytes(repo.path)
    hooks = _tree_bytes(repo.git_dir / "hooks")
    refs = repo.git("for-each-ref")
    second = repo.gv("install")
    assert second.code == 0, second
    assert "nothing changed" in second.out, second.out
    assert _tree_bytes(repo.path) == tree
    assert _tree_bytes(repo.git_dir / "hooks") == hooks
    assert repo.git("for-each-ref") == refs


def test_uninstall_when_nothing_is_installed(repo_factory) -> None:
    repo: Repo = repo_factory(install=False)
    result = repo.gv("uninstall")
    assert result.code == 0, result
    assert "nothing to remove" in result.out
    assert repo.vault_tip() is None


def test_reinstall_after_uninstall_keeps_the_notes(repo: Repo) -> None:
    sha = repo.commit("Before uninstall")
    assert repo.gv("uninstall").code == 0
    result = repo.gv("install", "--no-claude")
    assert result.code == 0
    assert "created vault branch" not in result.out, "the kept vault is reused"
    assert sha in repo.note_paths()
    sha2 = repo.commit("After reinstall")
    assert sha2 in repo.note_paths()


def test_install_from_a_linked_worktree_serves_every_worktree(repo_factory) -> None:
    main: Repo = repo_factory(install=False)
    wt = main.worktree("side")
    result = wt.gv_proc("install", "--no-claude")
    assert result.code == 0, result
    assert (main.git_dir / "hooks" / "post-commit").is_file(), "shared hooks folder"
    a = wt.commit("from side")
    b = main.commit("from main")
    assert {a, b} <= set(main.note_paths())


# -- repository shapes: a .git file, submodules, a committed hooks path, ownership, SHA-256 ---


def _noted(repo: Repo, subject: str) -> bool:
    return any(subject in line for line in repo.git("log", "--format=%s", "vault").splitlines())


def test_a_submodule_a_separate_git_dir_and_a_worktree_of_each_install_and_note(
    tmp_path: Path,
) -> None:
    """A `.git` file (gitdir under the superproject's .git/modules, or `--separate-git-dir`):
    install serves it, and so do its linked worktrees; every commit gets its note."""
    from tests.support.repos import NO_HOOKS, git

    git(tmp_path, "init", "-q", "sub")
    git(tmp_path / "sub", *NO_HOOKS, "commit", "-q", "--allow-empty", "-m", "sub root")
    git(tmp_path, "init", "-q", "super")
    sup = tmp_path / "super"
    git(sup, *NO_HOOKS, "commit", "-q", "--allow-empty", "-m", "root")
    git(sup, "-c", "protocol.file.allow=always", "submodule", "-q", "add", "../sub", "sub")
    git(sup, *NO_HOOKS, "commit", "-q", "-m", "add the submodule")
    git(tmp_path, "init", "-q", f"--separate-git-dir={tmp_path / 'elsewhere.git'}", "sep")
    git(tmp_path / "sep", *NO_HOOKS, "commit", "-q", "--allow-empty", "-m", "sep root")
    for name, top in (("submodule", sup / "sub"), ("separate", tmp_path / "sep")):
        assert (top / ".git").is_file(), name
        repo = Repo(top)
        done = repo.gv("install", "--agent", "none")
        assert done.code == 0 and "bare" not in done.err, (name, done)
        repo.commit(f"feat: {name} change")
        assert _noted(repo, f"{name} change"), name
        wt = tmp_path / f"{name}-wt"
        repo.git("worktree", "add", "-q", "-b", f"{name}-wt", str(wt))
        linked = Repo(wt)
        linked.commit(f"feat: {name} worktree change")
        assert _noted(repo, f"{name} worktree change"), name
        status = linked.gv("status", "--json").json("status")
        assert status["installed"] and status["vault_tip"] == repo.vault_tip(), name
    # The superproject's own files are untouched by the submodule's install.
    assert git(sup, "status", "--porcelain", "--ignore-submodules=all") == ""


def test_a_hooks_path_inside_the_tree_is_left_untouched_and_its_hooks_still_run(
    repo_factory,
) -> None:
    """core.hooksPath = .githooks, committed: install writes no file of the working tree; the
    shims go to gitvault's folder outside it, core.hooksPath points there, and every hook
    forwards to the tracked one (their verdicts count); uninstall puts core.hooksPath back."""
    repo: Repo = repo_factory(install=False)
    from tests.support.repos import NO_HOOKS

    log = repo.git_dir / "own-hooks.log"
    for name in ("pre-commit", "post-commit", "commit-msg"):
        hook = repo.write(f".githooks/{name}", f'#!/bin/sh\necho "{name} $*" >> "{log}"\n')
        hook.chmod(0o755)
    repo.git("add", ".githooks")
    repo.git(*NO_HOOKS, "commit", "-q", "-m", "chore: the team's hooks")
    repo.git("config", "core.hooksPath", ".githooks")
    tracked = _tree_bytes(repo.path)

    done = repo.gv("install", "--agent", "none")
    assert done.code == 0, done
    assert "left untouched" in done.out
    assert _tree_bytes(repo.path) == tracked and repo.git("status", "--porcelain") == ""
    assert Path(repo.git("config", "core.hooksPath")) == repo.state_dir / "hooks"
    sha = repo.commit("feat: after install")
    assert _noted(repo, "after install")
    ran = log.read_text()
    assert "pre-commit" in ran and "post-commit" in ran and "commit-msg .git/COMMIT_EDITMSG" in ran
    # A tracked hook that refuses still refuses: forwarded with its exit code.
    (repo.path / ".githooks" / "pre-commit").write_text("#!/bin/sh\nexit 1\n")
    refused = repo.run("commit", "-q", "--allow-empty", "-m", "blocked", check=False)
    assert refused.returncode != 0 and repo.head() == sha
    repo.git("checkout", "-q", "--", ".githooks/pre-commit")
    assert repo.gv("install", "--agent", "none").code == 0  # again: nothing moves twice
    assert repo.git("config", "gitvault.chainedHooksPath") == ".githooks"

    tracked = _tree_bytes(repo.path)  # with the commit's own file
    gone = repo.gv("uninstall")
    assert gone.code == 0, gone
    assert repo.git("config", "core.hooksPath") == ".githooks"
    assert repo.run("config", "gitvault.chainedHooksPath", check=False).returncode != 0
    assert not (repo.state_dir / "hooks").exists()
    assert _tree_bytes(repo.path) == tracked


def test_a_repository_owned_by_another_user_is_named_not_taken_for_no_vault(
    repo_factory,
) -> None:
    """git's safe.directory refusal (the repository belongs to another user): every command
    names it and the fix, none says "no vault here" or "0 indexed", none crashes."""
    import os

    import pytest

    if os.geteuid() != 0:
        pytest.skip("making a repository another user's needs root (chown)")
    repo: Repo = repo_factory()
    repo.commit("feat: something to recall")
    for path in [repo.path, *repo.path.rglob("*")]:
        os.lchown(path, 65534, 65534)
    for args in (("recall",), ("search", "something"), ("status",), ("log",), ("install",)):
        result = repo.gv_proc(*args)
        assert result.code == 1, (args, result)
        assert "owned by another user" in result.err and "safe.directory" in result.err, args
        assert "Traceback" not in result.err and "no vault" not in result.out + result.err
    assert repo.gv_proc("status", "--line").code == 0  # a shell prompt stays quiet


def test_a_sha256_repository_is_refused_clearly(tmp_path: Path) -> None:
    """pygit2's libgit2 here is built without SHA-256 objects (unknown object format): install
    refuses and says so, and so does every command that opens the repository."""
    from tests.support.repos import NO_HOOKS, git

    git(tmp_path, "init", "-q", "--object-format=sha256", "r")
    repo = Repo(tmp_path / "r")
    git(repo.path, *NO_HOOKS, "commit", "-q", "--allow-empty", "-m", "root")
    done = repo.gv_proc("install", "--agent", "none")
    assert done.code == 3 and "SHA-256" in done.err and "Traceback" not in done.err, done
    assert repo.git("for-each-ref").count("refs/heads/") == 1  # nothing written
    for args in (("status",), ("log",), ("fold", "--merger", "builtin")):
        result = repo.gv_proc(*args)
        assert result.code == 3 and "SHA-256" in result.err, (args, result)
