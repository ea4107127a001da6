"""Settings: vault.toml (travels with the vault branch) and `gitvault.*` keys in git config
(this clone only: branch name, foreground notes)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from typing import Any

from gitvault import __version__
from gitvault.errors import GitvaultError

DEFAULT_CATEGORIES: tuple[tuple[str, int], ...] = (
    ("Architecture", 1100),
    ("Decisions", 1100),
    ("Conventions", 900),
    ("Gotchas", 900),
    ("State", 900),
    ("Next steps", 700),
)

DEFAULT_VAULT_TOML = f"""\
# gitvault vault configuration. It travels with the vault branch, so every clone folds alike.
format_version = 1
created_by = "gitvault {__version__}"

[digest]
# The digest (_master.md) has exactly these six categories; each is capped in characters,
# and the whole digest is capped at max_chars. Caps are enforced in code, not only asked for.
max_chars = 6000
categories = [
  {{ name = "Architecture", cap = 1100 }},
  {{ name = "Decisions", cap = 1100 }},
  {{ name = "Conventions", cap = 900 }},
  {{ name = "Gotchas", cap = 900 }},
  {{ name = "State", cap = 900 }},
  {{ name = "Next steps", cap = 700 }},
]

[fold]
merger = "claude"          # claude | command | builtin
model = "haiku"            # a small, cheap model; `gitvault fold --model` overrides
command = ""               # for merger = "command": reads the prompt on stdin, prints the digest
timeout_seconds = 300
min_new_items = 1          # skip a fold with fewer new notes + sessions
max_chars_per_day = 400000 # stop folding when a day's prompts reach this many characters
max_chars_per_call = 60000 # large backlogs fold in batches of at most this many characters
use_api_key = false        # false: ANTHROPIC_API_KEY is removed from the claude child's env

[recall]
max_chars = 9500           # the whole SessionStart block; Claude Code spills >10,000 to a file
sessions = 2
section_chars = 600
pattern_lines = 25

[capture]
stop_min_interval_seconds = 600
stop_after_turns = 0       # 0: ask for a save only when this session made commits

[patch]
files = ["CLAUDE.md"]      # more agent files (e.g. "AGENTS.md") get the same managed section
"""


@dataclass(frozen=True)
class Category:
    name: str
    cap: int


@dataclass(frozen=True)
class VaultConfig:
    format_version: int = 1
    categories: tuple[Category, ...] = tuple(Category(n, c) for n, c in DEFAULT_CATEGORIES)
    digest_max_chars: int = 6000
    fold: dict[str, Any] = field(default_factory=dict)
    recall: dict[str, Any] = field(default_factory=dict)
    capture: dict[str, Any] = field(default_factory=dict)
    patch_files: tuple[str, ...] = ("CLAUDE.md",)

    def fold_value(self, key: str) -> Any:
        return self.fold.get(key, _DEFAULTS["fold"][key])

    def recall_value(self, key: str) -> Any:
        return self.recall.get(key, _DEFAULTS["recall"][key])

    def capture_value(self, key: str) -> Any:
        return self.capture.get(key, _DEFAULTS["capture"][key])


_DEFAULTS: dict[str, Any] = tomllib.loads(DEFAULT_VAULT_TOML)


def parse_vault_toml(text: str | None) -> VaultConfig:
    if text is None:
        text = DEFAULT_VAULT_TOML
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise GitvaultError(
            f"vault.toml is not valid TOML: {exc}",
            hint="fix it on the vault branch (git worktree add ../vault-edit vault)",
        ) from exc
    from gitvault import schemas

    schemas.validate("vault.schema.json", data, "vault.toml")
    digest = data.get("digest", {})
    cats = digest.get("categories") or _DEFAULTS["digest"]["categories"]
    patch = data.get("patch", {})
    return VaultConfig(
        format_version=int(data.get("format_version", 1)),
        categories=tuple(Category(str(c["name"]), int(c["cap"])) for c in cats),
        digest_max_chars=int(digest.get("max_chars", 6000)),
        fold=dict(data.get("fold", {})),
        recall=dict(data.get("recall", {})),
        capture=dict(data.get("capture", {})),
        patch_files=tuple(patch.get("files", ["CLAUDE.md"])),
    )
