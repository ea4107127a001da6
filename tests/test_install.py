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
    assert data["warnings"] == []
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
