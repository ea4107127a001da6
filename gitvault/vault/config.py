"""Settings: vault.toml (travels with the vault branch, validated against
schemas/vault.schema.json) over the defaults in gitvault.vault.layout, the one place they live."""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from gitvault import __version__
from gitvault.errors import GitvaultError, Refused
from gitvault.named import TYPE_CHECKING
from gitvault.vault import layout

if TYPE_CHECKING:
    from typing import Any

    from gitvault.resolve import Location

# Why each key exists, rendered as comments into a new vault's vault.toml.
_COMMENTS: dict[tuple[str, str], str] = {
    ("digest", "max_chars"): "the whole digest; each category is capped too, in code",
    ("fold", "merger"): "claude | command | builtin",
    ("fold", "model"): "a small, cheap model; `gitvault fold --model` overrides",
    ("fold", "command"): 'for merger = "command": reads the prompt on stdin, prints the digest',
    ("fold", "min_new_items"): "skip a fold with fewer new notes + sessions",
    ("fold", "max_chars_per_day"): "stop folding when a day's prompts reach this many characters",
    (
        "fold",
        "max_chars_per_call",
    ): "large backlogs fold in batches of at most this many characters",
    ("fold", "use_api_key"): "false: ANTHROPIC_API_KEY is removed from the claude child's env",
    ("fold", "fallback"): '"builtin": a background fold whose model fails folds offline; "none"',
    ("fold", "recent_first"): "a backlog over today's budget folds its newest history first",
    ("fold", "horizon_days"): "never fold history this many days older than the newest (0: all)",
    (
        "recall",
        "max_chars",
    ): "the whole session-start block; longer hook output may never reach the model",
    ("recall", "edit_time"): "the block about a file when an agent first reads or edits it",
    ("capture", "stop_after_turns"): "0: ask for a save only when this session made commits",
    ("capture", "fold_on_session_end"): "start a background fold when a session ends",
    ("patch", "files"): 'more agent files (e.g. "AGENTS.md") get the same managed section',
    ("status", "stale_items"): "`status --line` says STALE when more items wait for a fold",
    ("status", "stale_days"): "… or when items wait and the digest is older than this",
    ("sync", "auto"): "off | push | pull | both: sync along with git push / after git pull",
    ("sync", "share"): "what `gitvault sync` sends: notes, sessions, digest",
    ("sync", "remote_ref"): '"" = the vault branch; e.g. "refs/gitvault/vault" to hide it',
}


def about(section: str, key: str) -> str:
    """Why a setting exists (the comment a new vault.toml carries for it), or ""."""
    return _COMMENTS.get((section, key), "")


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return "[\n" + "".join(f"  {_toml_value(v)},\n" for v in value) + "]"
    assert isinstance(value, list)
    return "[" + ", ".join(_toml_value(v) for v in value) + "]"


def render_default_toml() -> str:
    lines = [
        "# gitvault vault configuration. It travels with the vault branch, so every clone "
        "folds alike.",
        f"format_version = {layout.FORMAT_VERSION}",
        f'created_by = "gitvault {__version__}"',
    ]
    for section, values in layout.DEFAULTS.items():
        lines += ["", f"[{section}]"]
        for key, value in values.items():
            line = f"{key} = {_toml_value(value)}"
            comment = _COMMENTS.get((section, key))
            lines.append(f"{line}  # {comment}" if comment else line)
    return "\n".join(lines) + "\n"


DEFAULT_VAULT_TOML = render_default_toml()


@dataclass(frozen=True)
class Category:
    name: str
    cap: int


@dataclass(frozen=True)
class VaultConfig:
    format_version: int = layout.FORMAT_VERSION
    categories: tuple[Category, ...] = tuple(Category(n, c) for n, c in layout.DIGEST_CATEGORIES)
    digest_max_chars: int = layout.DEFAULTS["digest"]["max_chars"]
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Travelling values of guarded settings held back by with_local (what to tell the user).
    held_back: tuple[str, ...] = ()
    # fold.command as this clone's git config sets it (runs without confirmation), if any.
    local_command: str | None = None

    def value(self, section: str, key: str) -> Any:
        found = self.sections.get(section, {})
        return found[key] if key in found else layout.DEFAULTS[section][key]

    def fold_value(self, key: str) -> Any:
        return self.value("fold", key)

    @property
    def patch_files(self) -> tuple[str, ...]:
        return tuple(self.value("patch", "files"))


def parse_vault_toml(text: str | None, loc: Location | None = None) -> VaultConfig:
    """The settings of a vault.toml (None: the defaults). Invalid TOML or a file that does not
    match the schema is a clear error naming what is wrong. With the clone's location, a text
    it already found valid is not checked again (schemas.validate_text)."""
    if text is None:
        text = DEFAULT_VAULT_TOML
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise GitvaultError(
            f"{layout.CONFIG} is not valid TOML: {exc}",
            hint="fix it on the vault branch (git worktree add ../vault-edit vault)",
        ) from exc
    from gitvault.vault import schemas

    schemas.validate_text("vault.schema.json", data, layout.CONFIG, text.encode(), loc)
    digest = data.get("digest", {})
    cats = digest.get("categories") or layout.DEFAULTS["digest"]["categories"]
    names = [str(c["name"]).strip().lower() for c in cats]
    if len(set(names)) != len(names):
        raise GitvaultError(f"{layout.CONFIG}: digest category names must be distinct")
    return VaultConfig(
        format_version=int(data.get("format_version", layout.FORMAT_VERSION)),
        categories=tuple(Category(str(c["name"]), int(c["cap"])) for c in cats),
        digest_max_chars=int(digest.get("max_chars", layout.DEFAULTS["digest"]["max_chars"])),
        sections={k: dict(v) for k, v in data.items() if isinstance(v, dict)},
    )


def read_local(cwd: Path) -> dict[str, str]:
    """gitvault's keys of this clone's git config (keys lower-cased), in one git process."""
    from gitvault.vault import gitcmd

    proc = gitcmd.run_git(["config", "--get-regexp", r"^gitvault\."], cwd, check=False)
    found: dict[str, str] = {}
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(" ")
        found.setdefault(key.lower(), value.strip())
    return found


def with_local(config: VaultConfig, local: dict[str, str]) -> VaultConfig:
    """The settings as they apply on this clone: every setting that spends money or runs code
    narrowed to what a travelling vault.toml may ask for, this clone's git config over it
    (layout.resolve_local, the one resolver; the hooks call it on their fast reader's values)."""
    sections = {name: dict(values) for name, values in config.sections.items()}
    held: list[str] = []
    for section in {sec for sec, _ in layout.LOCAL_ONLY}:
        travelling = {**layout.DEFAULTS[section], **sections.get(section, {})}
        sections[section], notes = layout.resolve_local(section, travelling, local)
        held += notes
    command = local.get(layout.LOCAL_COMMAND_KEY.lower())
    if command is not None and command.strip():
        sections.setdefault("fold", {})["command"] = command
    return replace(
        config,
        sections=sections,
        held_back=tuple(held),
        local_command=command.strip() if command and command.strip() else None,
    )


def initial_files() -> dict[str, bytes | None]:
    """The files a new vault branch starts with."""
    return {
        layout.README: layout.README_TEXT.encode(),
        layout.CONFIG: DEFAULT_VAULT_TOML.encode(),
        f"{layout.NOTES}/{layout.KEEP}": b"",
        f"{layout.SESSIONS}/{layout.KEEP}": b"",
        f"{layout.PATTERNS}/{layout.README}": layout.PATTERNS_README_TEXT.encode(),
    }


def fold_command_digest(command: str) -> str:
    """What `git config gitvault.trustedFoldCommand` holds to confirm a fold.command."""
    return hashlib.sha256(command.strip().encode()).hexdigest()


def check_fold_command(common_dir: Path, command: str, config: VaultConfig | None = None) -> None:
    """fold.command runs code. vault.toml travels with the vault (a teammate's or an
    attacker's), so its fold.command runs only after this clone confirmed that exact command
    (`git config gitvault.trustedFoldCommand <sha256>`); one set in this clone's git config
    (gitvault.fold.command) runs as it is. Refused otherwise, nothing run."""
    from gitvault.vault import gitcmd

    if not command.strip():
        return
    if config is not None and config.local_command == command.strip():
        return
    digest = fold_command_digest(command)
    if gitcmd.config_get(common_dir, layout.TRUSTED_FOLD_KEY) == digest:
        return
    raise Refused(
        f"fold.command {command.strip()!r} comes from vault.toml, which travels with the vault, "
        "and is not confirmed on this clone",
        hint=f"if you trust it: git config {layout.TRUSTED_FOLD_KEY} {digest} (or set your own "
        f"with git config {layout.LOCAL_COMMAND_KEY} COMMAND)",
    )
