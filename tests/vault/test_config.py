"""The one resolver of settings that spend money or run code: a travelling vault.toml may only
narrow them; this clone's git config sets them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from gitvault.resolve import resolve
from gitvault.resources import schema_path
from gitvault.vault import layout, schemas, statedir
from gitvault.vault.config import DEFAULT_VAULT_TOML, parse_vault_toml, with_local
from gitvault.vault.store import Vault
from tests.support.repos import Repo

WIDER: dict[tuple[str, str], Any] = {
    ("fold", "use_api_key"): True,
    ("fold", "model"): "opus",
    ("fold", "timeout_seconds"): 86_400,
    ("fold", "max_chars_per_day"): 10**9,
    ("fold", "max_chars_per_call"): 10**8,
    ("fold", "min_new_items"): 0,
    ("capture", "stop_after_turns"): 1,
    ("capture", "stop_min_interval_seconds"): 0,
}

# Every other setting, and why a travelling value of it widens nothing that runs, is written
# or is spent on this clone (a new setting must be put here or in layout.LOCAL_ONLY).
TRAVELS: dict[tuple[str, str], str] = {
    ("digest", "max_chars"): "recall is capped at layout.RECALL_MAX_CHARS whatever it says",
    ("digest", "categories"): "headings of the digest: text, capped like every digest line",
    ("fold", "merger"): "claude is the default; command runs only a confirmed fold.command",
    ("fold", "command"): "guarded apart: runs only from git config or once confirmed",
    ("fold", "fallback"): "builtin (no model) or none",
    ("fold", "recent_first"): "order of what is folded, within the spending caps",
    ("fold", "horizon_days"): "how far back a fold reads, within the spending caps",
    ("recall", "max_chars"): "capped at layout.RECALL_MAX_CHARS, the default",
    ("recall", "sessions"): "how many sessions fill the recall block, within its cap",
    ("recall", "section_chars"): "a session's share of the recall block, within its cap",
    ("recall", "pattern_lines"): "standing rules in the recall block, within its cap",
    ("recall", "edit_time"): "true is the default; false only turns the block off",
    ("capture", "fold_on_session_end"): "true is the default; a fold spends within fold's caps",
    ("patch", "files"): "only agent files of this worktree (agentfiles.unsafe_target)",
    ("status", "stale_items"): "when `status --line` says STALE: text only",
    ("status", "stale_days"): "when `status --line` says STALE: text only",
    ("sync", "auto"): "off on a clone that adopted the vault (origin.sync_auto)",
    ("sync", "share"): "all kinds is the default: a travelling list can only share less",
    ("sync", "remote_ref"): "where this clone pushes what any teammate can push there anyway",
}


def test_every_setting_is_guarded_or_said_to_travel_safely() -> None:
    every = {(section, key) for section, keys in layout.DEFAULTS.items() for key in keys}
    assert set(layout.LOCAL_ONLY).isdisjoint(TRAVELS)
    assert every == set(layout.LOCAL_ONLY) | set(TRAVELS)


def test_every_guarded_key_has_a_wider_case_here() -> None:
    assert set(WIDER) == set(layout.LOCAL_ONLY)


@pytest.mark.parametrize(("section", "key"), sorted(WIDER))
def test_a_travelling_value_never_widens_a_guarded_setting(section: str, key: str) -> None:
    value = WIDER[(section, key)]
    rendered = ("true" if value else "false") if isinstance(value, bool) else repr(value)
    text = f"format_version = 1\n[{section}]\n{key} = {rendered.replace(chr(39), chr(34))}\n"
    config = with_local(parse_vault_toml(text), {})
    assert config.value(section, key) == layout.DEFAULTS[section][key]
    assert any(f"{section}.{key}" in line for line in config.held_back)
    # the same value set in this clone's git config applies
    local = {layout.local_key(section, key).lower(): rendered.strip("'")}
    assert with_local(parse_vault_toml(text), local).value(section, key) == value


def test_a_narrower_travelling_value_applies() -> None:
    text = "format_version = 1\n[fold]\ntimeout_seconds = 5\nmax_chars_per_day = 1000\n"
    config = with_local(parse_vault_toml(text), {})
    assert config.value("fold", "timeout_seconds") == 5
    assert config.value("fold", "max_chars_per_day") == 1000
    assert config.held_back == ()


def test_a_git_config_value_of_the_wrong_type_is_ignored() -> None:
    config = with_local(parse_vault_toml(None), {"gitvault.fold.timeoutseconds": "lots"})
    assert config.value("fold", "timeout_seconds") == layout.DEFAULTS["fold"]["timeout_seconds"]


def test_the_local_key_is_a_valid_git_config_name() -> None:
    import re

    for section, key in layout.LOCAL_ONLY:
        assert re.fullmatch(
            r"gitvault\.[a-z]+\.[A-Za-z][A-Za-z0-9-]*", layout.local_key(section, key)
        )


def test_a_vault_toml_found_valid_is_not_checked_again_and_an_invalid_one_always_is(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Commands that read the settings (every fold, verify, install) checked vault.toml
    against the schema each time, importing jsonschema (~60-90 ms) for a text that rarely
    changes. A text this clone found valid, against these very schema bytes, is remembered;
    an invalid text, an edited one or a changed schema is checked."""
    loc = resolve(repo.path)
    text = DEFAULT_VAULT_TOML if (held := Vault(loc).read_text(layout.CONFIG)) is None else held
    checked: list[str] = []
    real = schemas.validate

    def counting(name: str, instance: Any, what: str) -> None:
        checked.append(name)
        real(name, instance, what)

    monkeypatch.setattr(schemas, "validate", counting)
    statedir.VALIDATED_FILE.path(loc).unlink(missing_ok=True)
    first = parse_vault_toml(text, loc)
    assert checked == ["vault.schema.json"]
    assert parse_vault_toml(text, loc) == first and len(checked) == 1  # remembered
    edited = text + "\n# a comment\n"
    assert parse_vault_toml(edited, loc) == first and len(checked) == 2  # another text
    bad = text.replace("max_chars = ", "max_chars = -", 1)
    assert bad != text
    for _ in range(2):
        with pytest.raises(schemas.SchemaError):
            parse_vault_toml(bad, loc)
    assert len(checked) == 4  # never remembered
    assert parse_vault_toml(text, None) == first and len(checked) == 5  # no clone: checked
    # Another schema (a gitvault upgrade that changed it): the text is checked again.
    changed = tmp_path / "vault.schema.json"
    changed.write_bytes(schema_path("vault.schema.json").read_bytes() + b"\n")
    monkeypatch.setattr(schemas, "schema_path", lambda name: changed)
    assert parse_vault_toml(text, loc) == first and len(checked) == 6
    # A memo file that is no file (a FIFO planted there) costs a check, never a hang.
    monkeypatch.setattr(schemas, "schema_path", schema_path)
    memo = statedir.VALIDATED_FILE.path(loc)
    memo.unlink()
    os.mkfifo(memo)
    assert parse_vault_toml(text, loc) == first and len(checked) == 7
