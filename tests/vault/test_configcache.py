"""gitvault's git config keys remembered per worktree (gitvault.vault.configcache): used only
while every file git reads them from and the environment that chose those files are as they
were; vault.toml remembered per vault tip."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from gitvault.resolve import resolve
from gitvault.vault import configcache, gitcmd
from tests.support.repos import Repo


def _age(*paths: Path) -> None:
    """Make files look written a minute ago (the cache is stored only for settled files)."""
    past = time.time() - 60
    for path in paths:
        if path.exists():
            os.utime(path, (past, past))


def _age_all(repo: Repo, *more: Path) -> None:
    loc = resolve(repo.path)
    _age(*gitcmd.config_files(loc.common_dir, loc.git_dir), *more)


def _remembered(repo: Repo) -> dict[str, str]:
    loc = resolve(repo.path)
    values = gitcmd.gitvault_config(repo.path)
    configcache.store(loc, values)
    return values


def test_the_keys_are_remembered_until_any_config_file_changes(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user.gitconfig"
    user.write_text("[gitvault]\n\tfoo = from-user\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user))
    repo.git("config", "gitvault.bar", "one")
    config = repo.path / ".git" / "config"
    _age(config, user)
    loc = resolve(repo.path)
    values = _remembered(repo)
    assert values["gitvault.bar"] == "one" and values["gitvault.foo"] == "from-user"
    assert configcache.read(loc) == values

    repo.git("config", "gitvault.bar", "two")  # the repository's file
    assert configcache.read(loc) is None
    _age(config)
    assert _remembered(repo)["gitvault.bar"] == "two"
    assert configcache.read(loc) is not None

    user.write_text("[gitvault]\n\tfoo = changed\n")  # the user's file, rewritten in place
    assert configcache.read(loc) is None
    _age(user)
    _remembered(repo)

    other = tmp_path / "other.gitconfig"
    other.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(other))  # another user's files
    assert configcache.read(loc) is None
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user))
    assert configcache.read(loc) is not None
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'gitvault.bar'='cli'")  # git -c
    assert configcache.read(loc) is None


def test_an_included_file_and_a_new_worktree_config_are_watched(repo: Repo, tmp_path: Path) -> None:
    extra = tmp_path / "extra.gitconfig"
    extra.write_text("[gitvault]\n\tbaz = included\n")
    repo.git("config", "include.path", str(extra))
    _age_all(repo, extra)
    loc = resolve(repo.path)
    assert _remembered(repo)["gitvault.baz"] == "included"
    assert configcache.read(loc) is not None
    extra.write_text("[gitvault]\n\tbaz = other\n")
    assert configcache.read(loc) is None
    _age(extra)
    _remembered(repo)
    (repo.path / ".git" / "config.worktree").write_text("[gitvault]\n\tbaz = here\n")
    assert configcache.read(loc) is None  # a file that was absent now exists


def test_nothing_is_remembered_while_a_config_file_is_fresh(repo: Repo) -> None:
    repo.git("config", "gitvault.bar", "fresh")  # written just now
    loc = resolve(repo.path)
    _remembered(repo)
    assert configcache.read(loc) is None


def test_a_cache_that_is_not_a_regular_well_formed_file_is_not_used(repo: Repo) -> None:
    _age_all(repo)
    loc = resolve(repo.path)
    _remembered(repo)
    path = next(loc.state_dir.glob("config-cache.*"))
    for bad in ("[]", '{"env": 1}', '{"env": [], "files": [[1]], "values": {}}', "not json"):
        path.write_text(bad)
        assert configcache.read(loc) is None, bad
    path.unlink()
    path.symlink_to(repo.path / ".git" / "config")
    assert configcache.read(loc) is None


def test_vault_toml_is_remembered_per_tip(repo: Repo) -> None:
    loc = resolve(repo.path)
    tip = configcache.vault_tip(loc, "vault")
    assert tip is not None and len(tip) == 40
    assert configcache.toml_at(loc, tip) is None
    configcache.remember_toml(loc, tip, "[capture]\n")
    assert configcache.toml_at(loc, tip) == "[capture]\n"
    for n in range(configcache.TOML_KEEP + 2):
        configcache.remember_toml(loc, f"{n:040x}", "x")
    assert configcache.toml_at(loc, tip) is None, "only the last few tips are kept"
    assert configcache.toml_at(loc, f"{configcache.TOML_KEEP + 1:040x}") == "x"
