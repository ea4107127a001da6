"""The one resolver: --repo / GITVAULT_REPO → the common git dir → a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitvault.errors import NotARepository
from gitvault.resolve import resolve
from tests.support.repos import Repo, cli, cli_proc, validate_note


def test_five_worktrees_resolve_to_one_vault_with_notes_from_all(repo: Repo) -> None:
    worktrees = [repo.worktree(f"wt{i}") for i in range(5)]
    main_loc = resolve(repo.path)
    shas = {}
    for wt in worktrees:
        loc = resolve(wt.path)
        assert loc.common_dir == main_loc.common_dir == repo.common_dir
        assert loc.git_dir != loc.common_dir
        assert loc.workdir == wt.path.resolve()
        # from a subdirectory too
        sub = wt.path / "deep" / "er"
        sub.mkdir(parents=True)
        assert resolve(sub).common_dir == main_loc.common_dir
        shas[wt.path.name] = wt.commit(f"work in {wt.path.name}")
    shas["main"] = repo.commit("work in main")
    noted = repo.note_paths()
    for name, sha in shas.items():
        assert sha in noted, name
        meta = validate_note(repo.note(sha) or "")
        assert meta["worktree"] == name
    # Every worktree sees the same vault through the CLI.
    tips = {wt.gv("status", "--json").json("status")["vault_tip"] for wt in worktrees}
    assert tips == {repo.vault_tip()}


def test_resolve_inside_the_git_dir_and_subdirectories(repo: Repo) -> None:
    common = repo.common_dir
    assert resolve(repo.path / ".git").common_dir == common
    assert resolve(repo.path / ".git" / "refs").common_dir == common
    (repo.path / "a" / "b").mkdir(parents=True)
    loc = resolve(repo.path / "a" / "b")
    assert loc.workdir == repo.path.resolve()
    assert loc.worktree_name == "main"


def test_repo_option_and_env_var_select_the_repository(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sha = repo.commit("Selected by path")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # --repo from an unrelated directory
    result = cli("--repo", str(repo.path), "log", "--json", cwd=elsewhere)
    assert result.code == 0, result
    assert any(sha[:7] in e["title"] or sha in "".join(e["paths"]) for e in result.json("log"))
    # GITVAULT_REPO, as a subprocess (the env var is read by the real entry point)
    proc = cli_proc("log", "--json", cwd=elsewhere, env={"GITVAULT_REPO": str(repo.path)})
    assert proc.code == 0, proc
    assert [e["commit"] for e in proc.json("log")] == [e["commit"] for e in result.json("log")]
    # and the resolver itself
    monkeypatch.setenv("GITVAULT_REPO", str(repo.path))
    assert resolve(cwd=elsewhere).common_dir == repo.common_dir
    # an explicit --repo wins over the environment
    monkeypatch.setenv("GITVAULT_REPO", str(tmp_path / "missing"))
    assert cli("--repo", str(repo.path), "log", cwd=elsewhere).code == 0
    assert cli("log", cwd=repo.path).code == 1, "GITVAULT_REPO wins over the current directory"


def test_repo_pointing_at_a_linked_worktree_resolves_to_the_shared_vault(repo: Repo) -> None:
    wt = repo.worktree("linked")
    assert resolve(str(wt.path)).common_dir == repo.common_dir
    result = cli("--repo", str(wt.path), "status", "--json")
    assert result.code == 0, result
    assert result.json("status")["vault_tip"] == repo.vault_tip()


def test_outside_a_repository_is_a_clear_one_line_error(tmp_path: Path) -> None:
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    with pytest.raises(NotARepository):
        resolve(cwd=outside)
    for args in (
        ["log"],
        ["status"],
        ["install", "--no-claude"],
        ["backfill"],
        ["show", "abc1234"],
    ):
        result = cli_proc(*args, cwd=outside)
        assert result.code == 1, (args, result)
        lines = result.err.strip().splitlines()
        assert lines[0].startswith("gitvault: error: not inside a git repository"), result.err
        assert all(line.startswith(("gitvault: error:", "  hint:")) for line in lines), result.err
        assert "Traceback" not in result.err
        assert result.out == ""
    assert list(outside.iterdir()) == [], "nothing was written outside a repository"


def test_missing_repo_path_is_a_clear_error(tmp_path: Path) -> None:
    result = cli("--repo", str(tmp_path / "missing"), "log")
    assert result.code == 1
    assert "no such directory" in result.err
    assert "Traceback" not in result.err
