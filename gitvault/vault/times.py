"""Times in gitvault's files: one parser with one rule, and the writers.

Every timestamp gitvault writes is ISO 8601 with an offset. A value without one (a hand-edited
file, an old release) is read as UTC, everywhere: two readers that disagreed about naive times
would order the same two items differently.
"""

from __future__ import annotations

from datetime import UTC, datetime


def parse_time(value: object) -> float | None:
    """Unix time of an ISO 8601 value (`Z` accepted; no offset means UTC), None when it is not
    one."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str) and value.strip():
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            return None
    else:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.timestamp()
    except (OverflowError, OSError, ValueError):
        return None


def local_iso(moment: float | None = None) -> str:
    """A moment (now by default) in local time with its offset, to the second."""
    when = datetime.now() if moment is None else datetime.fromtimestamp(moment)
    return when.astimezone().replace(microsecond=0).isoformat()


def utc_iso(moment: float | None = None) -> str:
    """A moment (now by default) in UTC, to the second, `Z`-suffixed."""
    when = datetime.now(UTC) if moment is None else datetime.fromtimestamp(moment, tz=UTC)
    return when.replace(microsecond=0).isoformat().replace("+00:00", "Z")
