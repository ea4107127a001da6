"""The one home of the vault's layout: branch-name rule, paths on the branch, settings defaults,
and the fast settings reader. Standard library only, so the hooks can import it for free.

Nothing else in gitvault spells a vault path or a default setting: it asks this module. The
local files beside the repository (<common git dir>/gitvault/) are vault/statedir's.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from gitvault import lazyre
from gitvault.named import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

FORMAT_VERSION = 1

# -- the branch ------------------------------------------------------------------------------
BRANCH_KEY = "gitvault.branch"  # git config key (this clone only)
# Which agents gitvault wires (this clone only): a comma-separated list of adapter names
# (gitvault.agents.adapters: claude, codex, gemini, copilot) or "none" (install --agent none, or
# --no-claude with no other agent). Hooks of an agent not listed stay silent; the fold patches
# the listed agents' instruction files; status checks their wiring and trust.
AGENTS_KEY = "gitvault.agents"
# The core.hooksPath gitvault moved aside (a folder inside the working tree): put back by
# uninstall; its hooks still run, forwarded from the shims' folder outside the tree.
CHAINED_HOOKS_KEY = "gitvault.chainedHooksPath"


def agents_listed(value: str | None) -> list[str] | None:
    """The words of a `gitvault.agents` value, lower-cased (None when unset or blank: every
    agent whose hooks are present is served)."""
    if value is None or not value.strip():
        return None
    return [w for w in (p.strip().lower() for p in value.split(",")) if w]


DEFAULT_BRANCH = "vault"
_BAD_BRANCH = lazyre.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|^[-/.]|[/.]$|\.lock$|//")


def branch_name(configured: str | None) -> str:
    """The vault branch for a `gitvault.branch` value (unset, empty or not a valid ref name:
    the default)."""
    value = (configured or "").strip()
    if not value or _BAD_BRANCH.search(value):
        return DEFAULT_BRANCH
    return value


def branch_ref(branch: str) -> str:
    return f"refs/heads/{branch}"


# -- sharing (gitvault sync) -------------------------------------------------------------------
# Per-clone choices live in git config (never in vault.toml, which a remote could send):
SYNC_REMOTE_KEY = "gitvault.syncRemote"  # the remote `gitvault sync` uses by default
SYNC_AUTO_KEY = "gitvault.syncAuto"  # overrides [sync] auto for this clone (off|push|pull|both)
ADOPTED_KEY = "gitvault.adoptedFrom"  # set when install adopted a remote's vault
TRUSTED_FOLD_KEY = "gitvault.trustedFoldCommand"  # sha256 of a fold.command confirmed here
SYNC_REVIEW_KEY = "gitvault.syncReview"  # true: what comes from other clones waits for review
# Bounds of one fetch (a travelling vault.toml cannot loosen them):
SYNC_MAX_FETCH_KEY = "gitvault.syncMaxFetchBytes"  # bytes of objects one fetch may bring
SYNC_STALL_KEY = "gitvault.syncStallSeconds"  # no byte arrived for this long: stopped
SYNC_TIMEOUT_KEY = "gitvault.syncTimeoutSeconds"  # one fetch or push, whole
SYNC_AUTO_MODES = ("off", "push", "pull", "both")
SHARE_KINDS = ("notes", "sessions", "digest")
PRIVATE_REF = "refs/gitvault/private"  # --private sessions: a local-only ref sync never pushes
TRACKING_PREFIX = "refs/gitvault/remotes/"  # where sync fetches a remote's vault
CI_SKIP = "[skip ci]"  # in every vault commit message: GitHub, GitLab, Bitbucket, Azure honour it
_REMOTE_NAME = lazyre.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,100}")
_REMOTE_REF = lazyre.compile(r"refs/[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)+")


def remote_vault_ref(configured: str | None, branch: str) -> str:
    """The ref the vault is published to on a remote: [sync] remote_ref when it is a valid
    full ref name (e.g. refs/gitvault/vault, out of branch listings), else the branch."""
    value = (configured or "").strip()
    if value and _REMOTE_REF.fullmatch(value) and not _BAD_BRANCH.search(value[5:]):
        return value
    return branch_ref(branch)


def tracking_ref(remote: str) -> str:
    """Where `gitvault sync` keeps the last fetched tip of a remote's vault (never the branch)."""
    if _REMOTE_NAME.fullmatch(remote) and ".." not in remote and not remote.endswith(".lock"):
        return f"{TRACKING_PREFIX}{remote}/vault"
    import hashlib

    return f"{TRACKING_PREFIX}url-{hashlib.sha256(remote.encode()).hexdigest()[:16]}/vault"


# -- paths on the branch ---------------------------------------------------------------------
README = "README.md"
CONFIG = "vault.toml"  # the marker: a branch without a valid one is not a vault
DIGEST = "_master.md"
# What every digest line the builtin merger mined from history says of itself: its citations are
# examples of a project-wide pattern, not commits the line is about.
MINED_MARK = "mined from history"
NOTES = "notes"
SESSIONS = "sessions"
PATTERNS = "patterns"
PINS = "patterns/pins.md"  # `gitvault pin`: standing rules a person adds, one `- ` line each
TOMBSTONES = "tombstones"  # `gitvault forget`: one append-only file per forgotten item
REDACTIONS = "redactions"  # `gitvault redact`: what was rewritten when (never the text)
BACKUP_REFS = "refs/gitvault/backup/"  # the vault as it was before a redaction, until gc
KEEP = ".keep"
ROOT_FILES = (README, CONFIG, DIGEST)
FOLDERS = (NOTES, SESSIONS, PATTERNS)
_HEX40 = lazyre.compile(r"[0-9a-f]{40}")
_SLUG = lazyre.compile(r"[a-z0-9][a-z0-9-]{0,120}")
_NOTE_PATH = lazyre.compile(r"notes/\d{4}/\d{2}/\d{2}/([0-9a-f]{40})\.md")
_SESSION_PATH = lazyre.compile(r"sessions/([a-z0-9][a-z0-9-]{0,120})\.md")
_PATTERN_PATH = lazyre.compile(r"patterns/([A-Za-z0-9][A-Za-z0-9._-]{0,80})\.md")
_REDACTION_PATH = lazyre.compile(r"redactions/\d{8}T\d{6}Z(-\d+)?\.md")
_TOMBSTONE_PATH = lazyre.compile(
    r"tombstones/(c-[0-9a-f]{40}|c-[0-9a-f]{7,39}|s-[a-z0-9][a-z0-9-]{0,120})\.md"
)


README_TEXT = """\
# gitvault vault

This orphan branch is the memory of this repository, written by gitvault
(https://pypi.org/project/gitvault/). It never shares history with your code branches.

- `notes/YYYY/MM/DD/<sha>.md`: one small note per project commit (message, file stats; never diffs).
- `sessions/YYYY-MM-DD-HHMM-<slug>.md`: an agent's saved session. Append-only.
- `_master.md`: the digest a model folds from the notes and sessions: six categories, capped.
- `patterns/*.md`: standing rules, one per line (`- …`), recalled at every session start.
- `vault.toml`: format version, digest categories and caps, fold budgets.

Every commit on this branch does one thing and says so in its message. Audit it with
`git log vault`, `git show vault:_master.md`, or `git worktree add ../vault-audit vault`.
"""

PATTERNS_README_TEXT = """\
# patterns

Standing rules recalled at every session start, one per line starting with `- `.
Add a file here (for example `testing.md`) on the vault branch; keep each rule one line.
"""


def note_path(sha: str, commit_time: int) -> str:
    """Where a commit's note lives: sharded by its committer date (UTC)."""
    day = datetime.fromtimestamp(commit_time, tz=UTC)
    return f"{NOTES}/{day:%Y/%m/%d}/{sha}.md"


def session_path(slug: str) -> str:
    return f"{SESSIONS}/{slug}.md"


def note_sha(path: str) -> str | None:
    """The commit sha a note path names, or None when path is not a note."""
    match = _NOTE_PATH.fullmatch(path)
    return match.group(1) if match else None


def session_slug(path: str) -> str | None:
    match = _SESSION_PATH.fullmatch(path)
    return match.group(1) if match else None


_FILED_DAY = lazyre.compile(r"(?:notes/(\d{4})/(\d{2})/(\d{2})/|sessions/(\d{4})-(\d{2})-(\d{2})-)")


def filed_day(path: str) -> tuple[int, int, int] | None:
    """(year, month, day) a note (its commit's date, UTC) or a session (its save) is filed
    under, from the path alone; None for any other path."""
    if note_sha(path) is None and session_slug(path) is None:
        return None
    match = _FILED_DAY.match(path)
    if not match:
        return None
    year, month, day = (int(g) for g in match.groups() if g is not None)
    return year, month, day


def is_pattern(path: str) -> bool:
    return _PATTERN_PATH.fullmatch(path) is not None and not path.endswith("/README.md")


def tombstone_path(cite: str) -> str:
    """Where the tombstone of a citation (`c:<sha>` or `s:<slug>`) lives: its name says what
    it buries, so readers need no blob to know what is forgotten."""
    kind, _, ident = cite.partition(":")
    return check_path(f"{TOMBSTONES}/{kind}-{ident}.md")


def tombstone_cite(path: str) -> str | None:
    """The citation a tombstone path buries (`c:<sha>` / `s:<slug>`), or None."""
    match = _TOMBSTONE_PATH.fullmatch(path)
    if not match:
        return None
    kind, _, ident = match.group(1).partition("-")
    return f"{kind}:{ident}"


def redaction_path(stamp: str) -> str:
    return check_path(f"{REDACTIONS}/{stamp}.md")


def is_redaction(path: str) -> bool:
    return _REDACTION_PATH.fullmatch(path) is not None


def shared_kind(path: str) -> str | None:
    """Which [sync] share kind a vault path belongs to (None: always travels)."""
    if note_sha(path) is not None:
        return "notes"
    if session_slug(path) is not None:
        return "sessions"
    return "digest" if path == DIGEST else None


def is_item(path: str) -> bool:
    """A note or a session: what folds read."""
    return note_sha(path) is not None or session_slug(path) is not None


def in_layout(path: str) -> bool:
    """Whether a path is one gitvault itself would write on the branch."""
    if path in ROOT_FILES or path in (f"{f}/{KEEP}" for f in FOLDERS):
        return True
    if path == f"{PATTERNS}/{README}":
        return True
    return (
        is_item(path) or is_pattern(path) or tombstone_cite(path) is not None or is_redaction(path)
    )


class BadPath(ValueError):
    pass


def check_path(path: str) -> str:
    """The one validator of paths written to the vault: relative, no empty, `.` or `..` parts,
    no control characters, quotes or backslashes (which git's fast-import stream would need to
    escape). Raises BadPath."""
    parts = path.split("/")
    if (
        not path
        or path.startswith("/")
        or any(p in ("", ".", "..") for p in parts)
        or any(c in path for c in '"\\')
        or any(ord(c) < 0x20 or ord(c) == 0x7F for c in path)
    ):
        raise BadPath(f"invalid vault path: {path!r}")
    return path


def is_full_sha(text: str) -> bool:
    return _HEX40.fullmatch(text) is not None


def is_slug(text: str) -> bool:
    return _SLUG.fullmatch(text) is not None


# -- settings (vault.toml) -------------------------------------------------------------------
# The defaults, in one place. gitvault.vault.config renders the default vault.toml from them
# and validates every vault.toml against schemas/vault.schema.json, which lists the same keys.
DIGEST_CATEGORIES: tuple[tuple[str, int], ...] = (
    ("Architecture", 1100),
    ("Decisions", 1100),
    ("Conventions", 900),
    ("Gotchas", 900),
    ("State", 900),
    ("Next steps", 700),
)
DEFAULTS: dict[str, dict[str, Any]] = {
    "digest": {
        "max_chars": 6000,
        "categories": [{"name": n, "cap": c} for n, c in DIGEST_CATEGORIES],
    },
    "fold": {
        "merger": "claude",
        "model": "haiku",
        "command": "",
        "timeout_seconds": 300,
        "min_new_items": 1,
        "max_chars_per_day": 400000,
        "max_chars_per_call": 60000,
        "use_api_key": False,
        "fallback": "builtin",
        "recent_first": True,
        "horizon_days": 0,
    },
    "recall": {
        "max_chars": 9500,
        "sessions": 2,
        "section_chars": 600,
        "pattern_lines": 25,
        # The block about a file the first time an agent reads or is about to change it in a
        # session (gitvault.pathrecall): false turns it off for every agent.
        "edit_time": True,
    },
    "capture": {
        "stop_min_interval_seconds": 600,
        "stop_after_turns": 0,
        "fold_on_session_end": True,
    },
    "patch": {"files": ["CLAUDE.md"]},
    # `gitvault status --line` says STALE past these (and when the last fold failed).
    "status": {"stale_items": 20, "stale_days": 7},
    "sync": {
        "auto": "off",
        "share": list(SHARE_KINDS),
        "remote_ref": "",
    },
}

# -- settings that spend money or run code: local configuration only ------------------------
# vault.toml travels with the vault (adopted at install, or edited by anyone who can push the
# branch), so a value in it may be a teammate's or an attacker's. For these keys a travelling
# value may only narrow what the default allows ("lower": at most the default, "higher": at
# least the default, "default": the default or nothing); anything wider applies only from this
# clone's git config (`git config gitvault.fold.useApiKey true`, see local_key). fold.command
# is guarded apart (vault/config.check_fold_command): it runs from git config, or from
# vault.toml once this clone confirmed that exact command.
LOCAL_ONLY: dict[tuple[str, str], str] = {
    ("fold", "use_api_key"): "lower",
    ("fold", "model"): "default",
    ("fold", "timeout_seconds"): "lower",
    ("fold", "max_chars_per_day"): "lower",
    ("fold", "max_chars_per_call"): "lower",
    ("fold", "min_new_items"): "higher",
    # How often a turn end blocks the agent with a save request (each one a model turn, on
    # every session of every clone): asking by turn count, or more often than the default.
    ("capture", "stop_after_turns"): "default",
    ("capture", "stop_min_interval_seconds"): "higher",
}
LOCAL_COMMAND_KEY = "gitvault.fold.command"  # a fold.command this clone set: runs unconfirmed


def local_key(section: str, key: str) -> str:
    """The git config key that sets a guarded setting for this clone (git allows no
    underscore in a key name): fold.use_api_key -> gitvault.fold.useApiKey."""
    head, *rest = key.split("_")
    return f"gitvault.{section}.{head}{''.join(w.capitalize() for w in rest)}"


def _typed(raw: str, default: Any) -> Any:
    """A git config value in the type of the setting's default (None when it does not fit)."""
    text = raw.strip()
    if isinstance(default, bool):
        lowered = text.lower()
        if lowered in ("true", "yes", "on", "1"):
            return True
        if lowered in ("false", "no", "off", "0", ""):
            return False
        return None
    if isinstance(default, int):
        return int(text) if re.fullmatch(r"-?\d{1,12}", text) else None
    return text or None


def resolve_local(
    section: str, travelling: dict[str, Any], local: dict[str, str]
) -> tuple[dict[str, Any], list[str]]:
    """The one resolver of "local vs travelling": a section's values with every guarded key
    narrowed to what a travelling vault.toml may set, and this clone's git config over it.
    `local` is gitvault's git config (keys lower-cased, as `git config --get-regexp` prints
    them). Returns the values and one line per travelling value held back."""
    out = dict(travelling)
    held: list[str] = []
    for (sec, key), rule in LOCAL_ONLY.items():
        if sec != section or key not in DEFAULTS.get(section, {}):
            continue
        default = DEFAULTS[section][key]
        wanted = out.get(key, default)
        wider = (
            (rule == "lower" and wanted > default)
            or (rule == "higher" and wanted < default)
            or (rule == "default" and wanted != default)
        )
        allowed = default if type(wanted) is not type(default) or wider else wanted
        mine = local.get(local_key(section, key).lower())
        value = _typed(mine, default) if mine is not None else None
        if value is not None:
            out[key] = value
            continue
        if allowed != wanted:
            held.append(
                f"vault.toml sets {section}.{key} = {wanted!r}, which spends more or runs more "
                f"than the default; it travels with the vault, so it applies only from this "
                f"clone's git config: git config {local_key(section, key)} {_shown(wanted)}"
            )
        out[key] = allowed
    return out, held


def _shown(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


RECALL_MAX_CHARS = 9500  # hard ceiling: Claude Code spills hook output over 10,000 characters
EDIT_RECALL_MAX_CHARS = 3200  # the edit-time block about one file: ~800 tokens

_SECTION = lazyre.compile(r"^[ \t]*\[([^\]\[]+)\][ \t]*(?:#.*)?$", re.M)
_SCALAR = lazyre.compile(
    r"^[ \t]*([A-Za-z_][\w-]*)[ \t]*=[ \t]*"
    r"(-?\d+|true|false|\"[^\"\\\n]*\"|'[^'\n]*')[ \t]*(?:#.*)?$",
    re.M,
)


def read_settings(vault_toml: str | None, section: str) -> dict[str, Any]:
    """The scalar keys of one [section], over the defaults, without tomllib (~20 ms of import on
    the hooks' path). Only keys with a default are read, and only when the value has the
    default's type; anything else keeps the default. The full loader (vault.config) validates
    the whole file against the schema whenever gitvault writes or folds."""
    out = dict(DEFAULTS.get(section, {}))
    if not vault_toml:
        return out
    headers = list(_SECTION.finditer(vault_toml))
    for index, header in enumerate(headers):
        if header.group(1).strip() != section:
            continue
        end = headers[index + 1].start() if index + 1 < len(headers) else len(vault_toml)
        for match in _SCALAR.finditer(vault_toml, header.end(), end):
            key, raw = match.group(1), match.group(2)
            default = out.get(key)
            if default is None:
                continue
            value: Any
            if raw in ("true", "false"):
                value = raw == "true"
            elif raw[0] in "\"'":
                value = raw[1:-1]
            else:
                value = int(raw)
            if type(value) is type(default):
                out[key] = value
        break
    return out
