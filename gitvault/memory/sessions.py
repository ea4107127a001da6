"""`gitvault save`: APPEND one agent session to the vault, after stripping what must not be kept.

Before anything is written: recall blocks (old memory) and <private> blocks are removed, secrets
are redacted, the slug is sanitised. A session lacking the three required sections, or with
nothing left after stripping, is refused and nothing is written. Sessions are never edited.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from gitvault.errors import Busy, GitvaultError, Refused
from gitvault.memory import clean, sections
from gitvault.resolve import Location
from gitvault.scrub.engine import scrub_secrets
from gitvault.vault import frontmatter, layout, schemas
from gitvault.vault.config import DEFAULT_VAULT_TOML, parse_vault_toml
from gitvault.vault.store import PathTaken, Vault

MAX_INPUT_CHARS = 200_000
MAX_TITLE = 120


class SessionRefused(GitvaultError):
    pass


@dataclass(frozen=True)
class Saved:
    slug: str
    path: str
    commit: str
    redactions: int
    private: bool = False


def _title(text: str, given: str | None) -> str:
    title = (given or "").strip() or (sections.first_heading(text) or "")
    if not title:
        summary = sections.split_sections(text).get("summary", "")
        title = summary.strip().split("\n", 1)[0] if summary.strip() else "session"
    title = re.sub(r"\s+", " ", re.sub(r"[\x00-\x1f\x7f]", " ", title)).strip(" #-*")
    title = scrub_secrets(title)[0]  # a title names the file and the commit: never a secret
    return title[:MAX_TITLE].rstrip() or "session"


def _drop_title_heading(text: str) -> str:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip():
            if line.startswith("# "):
                return "\n".join(lines[i + 1 :]).lstrip("\n")
            break
    return text


def prepare(raw: str) -> tuple[str, int]:
    """Clean a session text and check it; returns (body, redaction count) or refuses."""
    if len(raw) > MAX_INPUT_CHARS:
        raise SessionRefused(
            f"the session text is {len(raw):,} characters; the limit is {MAX_INPUT_CHARS:,}",
            hint="save a summary (Summary / Key Decisions / Next Steps), not a transcript",
        )
    cleaned, redactions = clean.clean_session_text(raw)
    if not cleaned.strip():
        raise SessionRefused(
            "nothing is left to save after removing recall blocks and <private> text",
            hint="write what this session did under ## Summary, ## Key Decisions, ## Next Steps",
        )
    missing = sections.missing_required(cleaned)
    if missing:
        raise SessionRefused(
            "the session lacks " + ", ".join(f"## {m}" for m in missing),
            hint="add the sections ## Summary, ## Key Decisions and ## Next Steps "
            "(recalled memory between the VAULT RECALL fences does not count)",
        )
    if not sections.split_sections(cleaned).get("summary", "").strip():
        raise SessionRefused(
            "## Summary is empty", hint="say what this session did under ## Summary"
        )
    return cleaned, sum(r.count for r in redactions)


def save_session(
    loc: Location,
    raw: str,
    *,
    title: str | None = None,
    session_id: str | None = None,
    agent: str | None = None,
    mode: str = "manual",
    extra: dict[str, object] | None = None,
    now: datetime | None = None,
    private: bool = False,
) -> Saved:
    """Append the session to the vault. An agent session's save goes through
    gitvault.agents.capture.save, which adds the commits it made and marks it saved.

    private (or [sync] share without "sessions"): the session goes to a local-only ref
    (layout.PRIVATE_REF) that `gitvault sync` never pushes; recall still shows it here."""
    body, redactions = prepare(raw)
    extra = {**where_saved(loc), **(extra or {})}
    shared = Vault(loc)
    shared.check_format()
    if not private:
        share = parse_vault_toml(shared.read_text(layout.CONFIG)).value("sync", "share")
        private = "sessions" not in share
    vault = _private_vault(loc) if private else shared
    moment = (now or datetime.now().astimezone()).replace(microsecond=0)
    name = _title(body, title)
    base = f"{moment:%Y-%m-%d-%H%M}-{clean.slugify(name)}"
    for n in range(1, 1000):
        slug = base if n == 1 else f"{base}-{n}"
        if shared.exists(layout.session_path(slug)) or vault.exists(layout.session_path(slug)):
            continue
        try:
            saved = _write(
                vault, slug, name, body, moment, redactions, session_id, agent, mode, extra
            )
        except PathTaken:
            continue  # a racing save took this slug first: take the next one
        return saved
    raise GitvaultError(f"too many sessions named {base}", hint="pass a different --title")


def saved_already(
    loc: Location, session_id: str, moment: datetime, commits: list[str]
) -> str | None:
    """The slug of a mechanical record of this session saved at MOMENT (whole seconds) with
    these commits, when the vault or the private ref holds one (a writer that died after its
    commit, gitvault.agents.records); None otherwise."""
    prefix = f"{moment:%Y-%m-%d-%H%M}-"
    stamp = moment.isoformat()
    for vault in (Vault(loc), Vault(loc, ref=layout.PRIVATE_REF)):
        if vault.tip() is None:
            continue
        for name, is_dir in vault.listdir(layout.SESSIONS):
            if is_dir or not name.startswith(prefix):
                continue
            path = f"{layout.SESSIONS}/{name}"
            meta, _ = frontmatter.parse(vault.read_text(path) or "")
            if (
                meta.get("session_id") == session_id
                and meta.get("saved_at") == stamp
                and meta.get("mode") == "auto"
                and (meta.get("commits") or []) == commits
            ):
                return layout.session_slug(path)
    return None


def _private_vault(loc: Location) -> Vault:
    """The local-only ref for private sessions, created on first use (same layout)."""
    vault = Vault(loc, ref=layout.PRIVATE_REF)
    if vault.tip() is None:
        try:
            vault.create(
                {
                    layout.CONFIG: DEFAULT_VAULT_TOML.encode(),
                    f"{layout.SESSIONS}/{layout.KEEP}": b"",
                },
                "init private sessions (never pushed)",
            )
        except (Busy, Refused):
            pass  # a racing save created it first
    return vault


def _write(
    vault: Vault,
    slug: str,
    name: str,
    body: str,
    moment: datetime,
    redactions: int,
    session_id: str | None,
    agent: str | None,
    mode: str,
    extra: dict[str, object] | None,
) -> Saved:
    meta: dict[str, object] = {
        "kind": "session",
        "slug": slug,
        "title": name,
        "saved_at": moment.isoformat(),
        "session_id": _bounded(session_id),
        "agent": _bounded(agent),
        "mode": mode,
        "redactions": redactions or None,
    }
    if extra:
        meta.update({k: v for k, v in extra.items() if v is not None})
    meta = {k: v for k, v in meta.items() if v is not None}
    schemas.validate("session.schema.json", meta, "session front matter")
    text = frontmatter.render(meta, f"# {name}\n\n{_drop_title_heading(body).strip()}\n")
    path = layout.session_path(slug)
    message = f"session {slug}\n\n{_saved_by(vault)}"
    commit = vault.commit({path: text.encode()}, message, create_only=True)
    private = vault.ref == layout.PRIVATE_REF
    return Saved(slug=slug, path=path, commit=commit, redactions=redactions, private=private)


def _saved_by(vault: Vault) -> str:
    """Who saved it, as trailers of the vault commit (what a teammate's clone shows beside a
    session that came from this one; a claim, never how that clone tells local from remote)."""
    import socket

    name = _bounded(vault.git.config_get("user.name")) or "?"
    email = _bounded(vault.git.config_get("user.email")) or "?"
    host = _bounded(socket.gethostname().split(".")[0]) or "?"
    return f"Saved-by: {name} <{email}>\nClone: {host}\n"


def where_saved(loc: Location) -> dict[str, object]:
    """The code branch and worktree a session was saved from (recall shows a branch's own
    sessions first). Read from the worktree's HEAD file: no git process."""
    from gitvault.vault import gitcmd

    branch = _bounded(gitcmd.head_branch(loc.git_dir))
    return {"branch": branch, "worktree": _bounded(loc.worktree_name)}


def _bounded(value: str | None, limit: int = 200) -> str | None:
    if value is None:
        return None
    value = re.sub(r"[\x00-\x1f\x7f]", "", value).strip()
    return value[:limit] or None
