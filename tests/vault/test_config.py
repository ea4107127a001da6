"""The one resolver of settings that spend money or run code: a travelling vault.toml may only
narrow them; this clone's git config sets them."""

from __future__ import annotations

from typing import Any

import pytest

from gitvault.vault import layout
from gitvault.vault.config import parse_vault_toml, with_local

WIDER: dict[tuple[str, str], Any] = {
    ("fold", "use_api_key"): True,
    ("fold", "model"): "opus",
    ("fold", "timeout_seconds"): 86_400,
    ("fold", "max_chars_per_day"): 10**9,
    ("fold", "max_chars_per_call"): 10**8,
    ("fold", "min_new_items"): 0,
}


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
