"""The mechanical session record, off the agent's wait: PreCompact and SessionEnd decide that a
record is due (gitvault.agents.capture) and spool a request; the drainer writes it (the secret
filter, the vault commit, the path index, the next session start's block), as it writes the
notes of commits the git hooks spooled.

Nothing is lost: a request is written durably (statedir.RECORDS, one JSON file each) before the
hook answers, and deleted only once its record is in the vault. A writer that dies leaves it to
the next drainer (after the next commit, or the next request); a record that reached the vault
before its writer died is found there again (session id, saved_at and commits) and not written
twice. A request holds no text the session's ledger does not already hold: commit shas (the
writer reads their subjects from git), the transcript's path and how far the ledger read it
(its prompts are read, and redacted, by the writer).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from gitvault.named import TYPE_CHECKING
from gitvault.vault import files, statedir

if TYPE_CHECKING:
    from typing import Any

    from gitvault.memory.sessions import Saved
    from gitvault.resolve import Location

FORMAT = 1


def spool(loc: Location, request: dict[str, Any]) -> str:
    """Write a record request durably; its name."""
    folder = statedir.ensure(loc) / statedir.RECORDS
    files.make_dirs(folder)
    name = f"{time.time_ns():020d}-{os.getpid()}{statedir.RECORD_SUFFIX}"
    files.write_json(folder / name, {"format": FORMAT, **request})
    return name


def write_soon(loc: Location) -> None:
    """Have the spooled requests written: here when the caller asks for it (GITVAULT_SYNC), else by
    a detached drainer (which also writes what a dead writer left). Never raises."""
    from gitvault.notes.background import in_foreground, start_drainer

    if in_foreground():
        written(loc)
        return

    start_drainer(loc, "session record")


def pending(loc: Location) -> list[str]:
    """The requests not written yet (names, oldest first)."""
    try:
        names = os.listdir(loc.state_dir / statedir.RECORDS)
    except OSError:
        return []
    return sorted(n for n in names if n.endswith(statedir.RECORD_SUFFIX) and n[0].isdigit())


def written(loc: Location, *, follow: bool = True) -> list[str]:
    """Write every spooled record (one writer at a time); the slugs written. Then (FOLLOW; the
    drainer runs both itself) the path index and the materialized recall follow. Never raises:
    what failed stays spooled and is logged."""
    from gitvault.vault.locking import file_lock, log_failure

    if not pending(loc):
        return []
    slugs: list[str] = []
    folder = loc.state_dir / statedir.RECORDS
    with file_lock(folder / statedir.RECORDS_LOCK, block=True, timeout=60.0) as got:
        if not got:
            return []
        for name in pending(loc):
            try:
                saved = _write(loc, folder / name)
            except Exception as exc:  # noqa: BLE001 - the request stays for the next writer
                log_failure(loc.state_dir, f"session record {name} not written yet: {exc}")
                continue
            if saved is not None:
                slugs.append(saved[0])
                log_failure(loc.state_dir, f"{saved[1]}: wrote the mechanical record s:{saved[0]}")
            (folder / name).unlink(missing_ok=True)
    if slugs and follow:
        from gitvault.materialize import ready
        from gitvault.pathrecall.index import update_quietly

        update_quietly(loc)  # the record's commits, for the edit-time block
        ready.after_change(loc)  # and the next session start's block
    return slugs


def _write(loc: Location, path: Path) -> tuple[str, str] | None:
    """One request's record: its slug and who asked ("<agent> hook <event>"); None when the
    request is not one, or its agent is gone."""
    from datetime import datetime

    from gitvault.agents import adapters, texts
    from gitvault.memory import sessions
    from gitvault.vault.locking import log_failure

    data = files.load_json_object(path)
    request = _checked(data)
    if request is None:
        log_failure(loc.state_dir, f"session record request {path.name} unreadable: dropped")
        return None
    try:
        adapter = adapters.get(request["agent"])
    except KeyError:
        return None
    from gitvault.memory import attribution

    made = attribution.describe(loc.common_dir, request["commits"])
    if not made and not request["turns"]:
        return None  # what it named were vault commits, or are gone: nothing to record
    commits = [(c.sha, c.subject) for c in made]
    moment = datetime.fromtimestamp(request["at"]).astimezone().replace(microsecond=0)
    shas = [sha for sha, _ in commits]
    asked = f"{adapter.name} hook {request['trigger']}"
    already = sessions.saved_already(loc, request["session_id"], moment, shas)
    if already is not None:
        return already, asked  # written by a writer that died before removing the request
    facts = adapter.prompt_facts({"transcript_path": request["transcript"]}, request["seen"])
    prompts = int(facts.get("prompts") or 0)
    first, last = facts.get("first"), facts.get("last")
    title = texts.auto_record_title(
        [s for _, s in commits], last if isinstance(last, str) else None, request["session_id"]
    )
    text = texts.auto_record_text(
        title=title,
        trigger=request["trigger"],
        commits=commits,
        prompts=prompts,
        first_prompt=first if isinstance(first, str) else None,
        last_prompt=last if isinstance(last, str) else None,
    )
    saved: Saved = sessions.save_session(
        loc,
        text,
        title=title,
        session_id=request["session_id"],
        agent=adapter.agent,
        mode="auto",
        extra={
            "commits": shas or None,
            "prompt_count": prompts,
            "head": _head(request["cwd"]),
            "branch": request["branch"],
            "worktree": request["worktree"],
        },
        now=moment,
    )
    return saved.slug, asked


def _head(cwd: str) -> str | None:
    """The commit the session's worktree is on (None: gone, or no commit yet)."""
    from gitvault.vault import gitcmd

    folder = Path(cwd)
    return gitcmd.ref_exists(folder, "HEAD") if folder.is_dir() else None


def _checked(data: dict[str, Any] | None) -> dict[str, Any] | None:
    """A request as spool wrote it, else None."""
    if data is None or data.get("format") != FORMAT:
        return None
    text_fields = ("session_id", "agent", "trigger", "transcript")
    if not all(isinstance(data.get(k), str) for k in text_fields):
        return None
    if not isinstance(data.get("at"), int | float) or not isinstance(data.get("seen"), dict):
        return None
    commits = data.get("commits")
    if not isinstance(commits, list) or not all(isinstance(c, str) for c in commits):
        return None
    if not isinstance(data.get("turns"), bool):
        return None
    if not isinstance(data.get("cwd"), str):
        return None
    for key in ("branch", "worktree"):
        if data.get(key) is not None and not isinstance(data.get(key), str):
            return None
    return data
