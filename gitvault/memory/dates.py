"""--since values: ISO dates, or git's approxidate ('2 weeks ago') via `git rev-parse`."""

from __future__ import annotations

from datetime import UTC, datetime

from gitvault.errors import GitvaultError
from gitvault.vault import gitcmd


def parse_since(value: str | None) -> int | None:
    """Unix time for a --since value, or None."""
    if not value:
        return None
    text = value.strip()
    try:
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return int(moment.timestamp())
    except ValueError:
        pass
    moment_ts = gitcmd.approxidate(text)
    if moment_ts is None:
        raise GitvaultError(
            f"cannot read the date {value!r}", hint="use YYYY-MM-DD or '3 days ago'"
        )
    return moment_ts
