"""`gitvault config`: read and change gitvault's settings where each one lives.

Two homes, and the command says which one a key is in:
- vault.toml on the vault branch (`fold.merger`, `recall.sessions`, …): travels with the vault,
  so every clone folds alike. A change is ONE vault commit that changes only vault.toml,
  validated against the schema before it is written, through the store's compare-and-swap
  (retried when another writer moved the branch; nothing else in the vault is touched, and a
  hand-made commit that undid gitvault's work is repaired first — vault/repair).
- this clone's git config (`gitvault.branch`, `gitvault.syncAuto`, …): never travels. The
  settings that spend money or run code (layout.LOCAL_ONLY and fold.command) go here by
  default, because a travelling value of them applies only as far as it narrows the default
  (layout.resolve_local); `--shared` puts a narrowing value in vault.toml instead.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

from gitvault.errors import GitvaultError
from gitvault.resolve import Location
from gitvault.vault import gitcmd, layout
from gitvault.vault.config import about, parse_vault_toml, read_local
from gitvault.vault.store import Vault, Write

VAULT_TOML = layout.CONFIG  # where a travelling setting lives, as the user sees it
GIT_CONFIG = "git config"
# The per-clone keys of layout.py, what each is for, and whether a person sets it (the others
# gitvault writes itself: shown, and unset-able, but not set by hand).
CLONE_KEYS: dict[str, tuple[str, bool]] = {
    layout.BRANCH_KEY: ("the vault branch's name (default: vault)", True),
    layout.AGENTS_KEY: ("the agents wired here: adapter names, comma-separated, or none", True),
    layout.SYNC_REMOTE_KEY: ("the remote `gitvault sync` uses by default", True),
    layout.SYNC_AUTO_KEY: ("off|push|pull|both: overrides [sync] auto on this clone", True),
    layout.ADOPTED_KEY: ("the remote install adopted the vault from (set by install)", False),
    layout.TRUSTED_FOLD_KEY: ("sha256 of vault.toml's fold.command, confirmed here", True),
    layout.SYNC_REVIEW_KEY: ("true: other clones' items wait for `gitvault review accept`", True),
    layout.SYNC_MAX_FETCH_KEY: ("bytes one sync fetch may bring (default 64 MiB)", True),
    layout.SYNC_STALL_KEY: ("seconds a sync fetch may receive nothing (default 60)", True),
    layout.SYNC_TIMEOUT_KEY: ("seconds one sync fetch or push may take (default 300)", True),
}


@dataclass(frozen=True)
class Setting:
    key: str  # as the user types it: fold.merger, gitvault.syncAuto
    value: Any
    where: str  # "vault.toml", "git config gitvault.x (this clone)", "default"
    about: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value, "where": self.where, "about": self.about}


@dataclass(frozen=True)
class Change:
    key: str
    old: Any
    new: Any
    where: str
    commit: str | None = None  # the vault commit (vault.toml), None for git config or no change
    notes: tuple[str, ...] = ()
    repaired: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.old != self.new)

    def as_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "old": self.old,
            "new": self.new,
            "where": self.where,
            "commit": self.commit,
            "changed": self.changed,
            "notes": list(self.notes),
            "repaired": list(self.repaired),
        }


def _toml_keys() -> list[tuple[str, str]]:
    return [(section, key) for section, values in layout.DEFAULTS.items() for key in values]


def _local_only(section: str, key: str) -> bool:
    return (section, key) in layout.LOCAL_ONLY or (section, key) == ("fold", "command")


def _git_key(section: str, key: str) -> str:
    if (section, key) == ("fold", "command"):
        return layout.LOCAL_COMMAND_KEY
    return layout.local_key(section, key)


def _clone_keys() -> dict[str, tuple[str, bool]]:
    """Every per-clone key, by its exact name (git config names are case-insensitive)."""
    keys = dict(CLONE_KEYS)
    for section, key in _toml_keys():
        if _local_only(section, key):
            keys[_git_key(section, key)] = (f"{section}.{key} for this clone", True)
    return keys


def _resolve_key(name: str) -> tuple[str, str] | str:
    """(section, key) of a vault.toml key, or the exact per-clone git config key."""
    lowered = name.strip().lower()
    for key in _clone_keys():
        if key.lower() == lowered:
            return key
    section, _, key = name.strip().partition(".")
    if key and section in layout.DEFAULTS and key in layout.DEFAULTS[section]:
        return section, key
    known = [f"{s}.{k}" for s, k in _toml_keys()] + list(_clone_keys())
    close = difflib.get_close_matches(name, known, n=3)
    raise GitvaultError(
        f"unknown setting {name!r}",
        hint=(f"did you mean {', '.join(close)}? " if close else "")
        + "`gitvault config` lists every setting and where it lives",
    )


def _travelling(vault: Vault) -> dict[str, dict[str, Any]]:
    return parse_vault_toml(vault.read_text(layout.CONFIG)).sections


def settings(loc: Location) -> list[Setting]:
    """Every setting: its value as it applies on this clone, and where that value comes from."""
    vault = Vault(loc)
    vault.check_format()
    sections = _travelling(vault)
    local = read_local(loc.common_dir)
    out: list[Setting] = []
    for section, key in _toml_keys():
        name = f"{section}.{key}"
        why = about(section, key)
        in_file = key in sections.get(section, {})
        if _local_only(section, key):
            git_key = _git_key(section, key)
            mine = local.get(git_key.lower())
            if mine is not None:
                out.append(Setting(name, _clone_value(section, key, mine), _clone(git_key), why))
                continue
            travelling = {**layout.DEFAULTS[section], **sections.get(section, {})}
            applied, held = layout.resolve_local(section, travelling, {})
            value = applied.get(key, travelling[key])
            held_note = any(f"{section}.{key} " in line for line in held)
            where = (
                f"{VAULT_TOML} (held back: it travels; set it here with `gitvault config "
                f"{name} VALUE`)"
                if held_note
                else (VAULT_TOML if in_file else "default")
            )
            out.append(Setting(name, value, where, why))
            continue
        value = sections.get(section, {}).get(key, layout.DEFAULTS[section][key])
        out.append(Setting(name, value, VAULT_TOML if in_file else "default", why))
    for key, (what, _) in CLONE_KEYS.items():
        found = local.get(key.lower())
        if found is not None:
            out.append(Setting(key, found, _clone(key), what))
    return out


def _clone(key: str) -> str:
    return f"{GIT_CONFIG} {key} (this clone)"


def get(loc: Location, name: str) -> Setting:
    target = _resolve_key(name)
    if isinstance(target, str):
        found = read_local(loc.common_dir).get(target.lower())
        about = _clone_keys()[target][0]
        return Setting(target, found, _clone(target) if found is not None else "unset", about)
    wanted = f"{target[0]}.{target[1]}"
    return next(s for s in settings(loc) if s.key == wanted)


# -- values ------------------------------------------------------------------------------------


def _parse(text: str, default: Any, name: str) -> Any:
    """A command-line value in the type of the setting's default."""
    raw = text.strip()
    if isinstance(default, bool):
        lowered = raw.lower()
        if lowered in ("true", "yes", "on", "1"):
            return True
        if lowered in ("false", "no", "off", "0"):
            return False
        raise GitvaultError(f"{name} is true or false, not {text!r}")
    if isinstance(default, int):
        try:
            return int(raw.replace("_", "").replace(",", ""))
        except ValueError:
            raise GitvaultError(f"{name} is a whole number, not {text!r}") from None
    if isinstance(default, list):
        if raw.startswith("["):
            try:
                value = json.loads(raw)
            except ValueError as exc:
                raise GitvaultError(f"{name}: {text!r} is not a JSON list: {exc}") from None
            if not isinstance(value, list):
                raise GitvaultError(f"{name} is a list")
            return value
        return [part.strip() for part in raw.split(",") if part.strip()]
    return text


def _clone_value(section: str, key: str, raw: str) -> Any:
    default = layout.DEFAULTS[section][key]
    if (section, key) == ("fold", "command"):
        return raw
    try:
        return _parse(raw, default, f"{section}.{key}")
    except GitvaultError:
        return raw


def _check_clone_value(key: str, value: str) -> str:
    if key == layout.SYNC_AUTO_KEY and value not in layout.SYNC_AUTO_MODES:
        raise GitvaultError(f"{key} is one of {', '.join(layout.SYNC_AUTO_MODES)}, not {value!r}")
    if key == layout.BRANCH_KEY and layout.branch_name(value) != value.strip():
        raise GitvaultError(f"{value!r} is not a usable branch name")
    if key == layout.AGENTS_KEY:
        from gitvault.agents import adapters

        return adapters.render(adapters.parse(value))
    if key == layout.TRUSTED_FOLD_KEY and not (
        len(value) == 64 and all(c in "0123456789abcdef" for c in value)
    ):
        raise GitvaultError(f"{key} is the sha256 `gitvault fold` prints, not {value!r}")
    if "\n" in value or "\0" in value:
        raise GitvaultError(f"{key}: a value is one line")
    return value


# -- changing ----------------------------------------------------------------------------------


class _Moved(Exception):
    """vault.toml changed between reading it and the compare-and-swap: edit it again."""


def set_value(loc: Location, name: str, text: str | None, *, shared: bool = False) -> Change:
    """Set (text) or unset (None) one setting. vault.toml keys: one vault commit; per-clone
    keys and the settings that spend money or run code: this clone's git config (shared:
    vault.toml, for a value that narrows what the default allows)."""
    target = _resolve_key(name)
    if isinstance(target, str):
        return _set_clone(loc, target, text)
    section, key = target
    if _local_only(section, key) and not shared:
        git_key = _git_key(section, key)
        if text is not None:
            _parse(text, layout.DEFAULTS[section][key], f"{section}.{key}")  # typed or refused
        change = _set_clone(loc, git_key, text, shown=f"{section}.{key}")
        reason = (
            "it runs code"
            if key == "command"
            else "it spends money or model time, so a travelling vault.toml may only lower it"
        )
        note = f"{section}.{key} is set per clone ({GIT_CONFIG} {git_key}): {reason}"
        return Change(change.key, change.old, change.new, change.where, None, (note,))
    return _set_toml(loc, section, key, text, shared=shared)


def _set_clone(loc: Location, key: str, text: str | None, *, shown: str | None = None) -> Change:
    cwd = loc.common_dir
    old = gitcmd.config_get(cwd, key)
    if text is None:
        if old is not None:
            gitcmd.run_git(["config", "--unset-all", key], cwd)
        return Change(shown or key, old, None, _clone(key))
    if shown is None:
        if not _clone_keys()[key][1]:
            raise GitvaultError(
                f"{key} is written by gitvault itself", hint="unset it with --unset"
            )
        value = _check_clone_value(key, text)
    else:
        value = text.strip()
        if "\n" in value or "\0" in value:
            raise GitvaultError(f"{shown}: a value is one line")
    if old != value:
        gitcmd.run_git(["config", key, value], cwd)
    return Change(shown or key, old, value, _clone(key))


def _set_toml(loc: Location, section: str, key: str, text: str | None, *, shared: bool) -> Change:
    import tomlkit

    name = f"{section}.{key}"
    default = layout.DEFAULTS[section][key]
    new_value = None if text is None else _parse(text, default, name)
    if isinstance(new_value, str) and _has_secret(new_value):
        raise GitvaultError(
            f"the value of {name} looks like it holds a secret, and vault.toml travels with "
            "the vault; nothing written",
            hint="keep secrets out of vault.toml (fold.command: set it for this clone without "
            "--shared, and read the secret from the environment)",
        )
    vault = Vault(loc)
    notes: list[str] = []
    for _ in range(20):
        tip = vault.check_format()
        before = vault.read(layout.CONFIG, tip)
        original = (before or b"").decode("utf-8")
        doc = tomlkit.parse(original)
        table = doc.get(section)
        old = table.get(key) if table is not None else None
        old_plain = _plain(old) if old is not None else None
        if new_value is None:
            if table is not None and key in table:
                del table[key]
        else:
            if table is None:
                table = tomlkit.table()
                doc[section] = table
            table[key] = new_value
        rendered = tomlkit.dumps(doc)
        config = parse_vault_toml(rendered)  # the schema's verdict before anything is written
        if shared and _local_only(section, key):
            applied, held = layout.resolve_local(
                section, {**layout.DEFAULTS[section], **config.sections.get(section, {})}, {}
            )
            if key == "command":
                notes.append(
                    "vault.toml's fold.command runs on a clone only once confirmed there "
                    "(`gitvault fold` prints the command to confirm it)"
                )
            elif any(f"{section}.{key} " in line for line in held):
                raise GitvaultError(
                    f"{name} = {_shown(new_value)} in vault.toml would not apply: a travelling "
                    "vault.toml may only narrow what the default allows",
                    hint=f"set it for this clone: gitvault config {name} {text}",
                )
        was = old_plain if old_plain is not None else default
        now = new_value if new_value is not None else default
        if rendered == original:
            return Change(name, was, now, VAULT_TOML, None, tuple(notes), tuple(vault.repairs))
        message = f"config {name}: {_shown(was)} → {_shown(now)}"

        def skip(head: str, _w: Write, seen: bytes | None = before) -> bool:
            if vault.read(layout.CONFIG, head) != seen:
                raise _Moved
            return False

        try:
            made = vault.commit_many(
                [Write({layout.CONFIG: rendered.encode("utf-8")}, message)], skip_if=skip
            )
        except _Moved:
            continue
        commit = made[-1] if made else None
        return Change(name, was, now, VAULT_TOML, commit, tuple(notes), tuple(vault.repairs))
    raise GitvaultError("vault.toml kept changing; nothing written", hint="try again")


def _plain(value: Any) -> Any:
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    return json.dumps(value) if isinstance(value, list | dict) else str(value)


def _has_secret(text: str) -> bool:
    from gitvault.scrub.engine import secret_spans

    return bool(secret_spans(text))
