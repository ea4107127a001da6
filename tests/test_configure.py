"""`gitvault config`: every setting read where it lives (vault.toml on the vault branch, or this
clone's git config), a vault.toml change written as one vault commit that changes only
vault.toml (validated by the schema first, comments kept, old and new value said), and the
settings that spend money or run code set for this clone only."""

from __future__ import annotations

import os
import subprocess

import pytest

from gitvault.vault import layout
from tests.support.memory import PYTHON, cli_in, vault_text
from tests.support.repos import Repo


def _changed_in(repo: Repo, commit: str) -> list[str]:
    return repo.git("diff-tree", "--no-commit-id", "--name-only", "-r", commit).splitlines()


def test_list_labels_where_every_setting_lives(repo: Repo) -> None:
    repo.git("config", layout.SYNC_AUTO_KEY, "push")
    found = {s["key"]: s for s in cli_in(repo, "config", "--json").json("config")}
    for section, values in layout.DEFAULTS.items():
        for key, default in values.items():
            setting = found[f"{section}.{key}"]
            assert setting["where"] in ("vault.toml", "default"), setting
            assert setting["value"] == default, setting
    assert found[layout.SYNC_AUTO_KEY]["value"] == "push"
    assert found[layout.SYNC_AUTO_KEY]["where"] == f"git config {layout.SYNC_AUTO_KEY} (this clone)"
    text = cli_in(repo, "config")
    assert text.code == 0
    merger = next(ln for ln in text.out.splitlines() if ln.startswith("fold.merger "))
    assert "claude" in merger and "[vault.toml]" in merger


def test_get_prints_the_value_and_says_where_it_comes_from(repo: Repo) -> None:
    result = cli_in(repo, "config", "fold.merger")
    assert result.code == 0
    assert result.out == "claude\n"
    assert "from vault.toml" in result.err


def test_set_is_one_vault_commit_that_changes_only_vault_toml(repo: Repo) -> None:
    before_tip = repo.vault_tip()
    before = vault_text(repo, "vault.toml")
    assert before is not None and "#" in before  # a new vault.toml explains its settings
    result = cli_in(repo, "config", "fold.merger", "builtin")
    assert result.code == 0, result
    assert "fold.merger: claude → builtin  (vault.toml, vault commit " in result.out
    assert "folds use the builtin merger" in result.err  # said at once: what folds will do
    tip = repo.vault_tip()
    assert repo.git("rev-parse", f"{tip}^") == before_tip
    assert _changed_in(repo, tip) == ["vault.toml"]
    assert repo.git("log", "-1", "--format=%s", tip) == 'config fold.merger: "claude" → "builtin"'
    after = vault_text(repo, "vault.toml")
    assert after is not None
    assert after == before.replace('merger = "claude"', 'merger = "builtin"')  # comments kept
    assert cli_in(repo, "config", "fold.merger").out == "builtin\n"


def test_setting_the_same_value_again_writes_nothing(repo: Repo) -> None:
    assert cli_in(repo, "config", "recall.sessions", "4").code == 0
    tip = repo.vault_tip()
    again = cli_in(repo, "config", "recall.sessions", "4")
    assert again.code == 0 and "recall.sessions is already 4 (vault.toml)" in again.out
    assert repo.vault_tip() == tip


def test_unset_goes_back_to_the_default_in_one_commit(repo: Repo) -> None:
    assert cli_in(repo, "config", "recall.sessions", "4").code == 0
    tip = repo.vault_tip()
    change = cli_in(repo, "config", "--unset", "recall.sessions", "--json").json("config")
    assert change["old"] == 4 and change["new"] == layout.DEFAULTS["recall"]["sessions"]
    assert change["changed"] and change["where"] == "vault.toml"
    assert repo.git("rev-parse", f"{repo.vault_tip()}^") == tip
    text = vault_text(repo, "vault.toml")
    assert text is not None and "sessions =" not in text.split("[recall]")[1].split("[")[0]


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("fold.merger", "nope", "is not one of"),  # the schema's verdict
        ("recall.sessions", "lots", "is a whole number"),
        ("recall.sessions", "-3", "vault.schema.json"),
        ("fold.recent_first", "maybe", "is true or false"),
        ("fold.mergr", "builtin", "did you mean fold.merger"),
        (layout.SYNC_AUTO_KEY, "sometimes", "is one of off, push, pull, both"),
    ],
)
def test_a_bad_value_is_refused_and_nothing_is_written(
    repo: Repo, key: str, value: str, said: str
) -> None:
    tip = repo.vault_tip()
    result = cli_in(repo, "config", "--", key, value)
    assert result.code != 0
    assert said in result.err, result
    assert repo.vault_tip() == tip
    assert repo.run("config", layout.SYNC_AUTO_KEY, check=False).returncode != 0


def test_a_secret_never_reaches_the_travelling_vault_toml(repo: Repo) -> None:
    tip = repo.vault_tip()
    secret = "sk-ant-api03-" + "A1b2C3d4" * 10 + "-xyzAA"
    result = cli_in(repo, "config", "--shared", "fold.command", f"run --key {secret}")
    assert result.code != 0 and "looks like it holds a secret" in result.err, result
    assert repo.vault_tip() == tip


def test_settings_that_spend_money_or_run_code_go_to_this_clone(repo: Repo) -> None:
    tip = repo.vault_tip()
    result = cli_in(repo, "config", "fold.use_api_key", "true")
    assert result.code == 0, result
    git_key = layout.local_key("fold", "use_api_key")
    assert f"(git config {git_key} (this clone))" in result.out
    assert "spends money" in result.err
    assert repo.vault_tip() == tip  # nothing travels
    assert repo.git("config", git_key) == "true"
    got = cli_in(repo, "config", "fold.use_api_key", "--json").json("config")
    assert got["value"] is True and got["where"] == f"git config {git_key} (this clone)"
    command = cli_in(repo, "config", "fold.command", "my-merger --fast")
    assert command.code == 0 and "runs code" in command.err
    assert repo.git("config", layout.LOCAL_COMMAND_KEY) == "my-merger --fast"
    assert repo.vault_tip() == tip
    # a travelling value that would widen the default is refused, with the way that works
    shared = cli_in(repo, "config", "--shared", "fold.use_api_key", "true")
    assert shared.code != 0 and "would not apply" in shared.err
    assert "gitvault config fold.use_api_key true" in shared.err
    assert repo.vault_tip() == tip
    # a narrowing one travels
    narrow = cli_in(repo, "config", "--shared", "fold.timeout_seconds", "30")
    assert narrow.code == 0 and _changed_in(repo, repo.vault_tip()) == ["vault.toml"]
    unset = cli_in(repo, "config", "--unset", "fold.use_api_key")
    assert unset.code == 0
    assert repo.run("config", git_key, check=False).returncode != 0


def test_writers_at_once_lose_no_setting(repo: Repo) -> None:
    env = dict(os.environ)
    procs = [
        subprocess.Popen(
            [PYTHON, "-m", "gitvault", "config", key, value],
            cwd=repo.path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for key, value in (
            ("recall.sessions", "5"),
            ("status.stale_items", "50"),
            ("status.stale_days", "9"),
            ("recall.pattern_lines", "7"),
        )
    ]
    for _ in range(3):
        repo.commit("feat: a note written meanwhile")
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    got = {s["key"]: s["value"] for s in cli_in(repo, "config", "--json").json("config")}
    assert got["recall.sessions"] == 5 and got["recall.pattern_lines"] == 7
    assert got["status.stale_items"] == 50 and got["status.stale_days"] == 9
    notes = repo.git("ls-tree", "-r", "--name-only", "vault", "notes/").splitlines()
    assert len(notes) >= 3  # nothing another writer committed was rewound
