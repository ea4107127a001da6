"""--since values: ISO dates, or git's approxidate ('2 weeks ago') via `git rev-parse`."""

from __future__ import annotations

import re

from gitvault.errors import GitvaultError
from gitvault.vault import gitcmd
from gitvault.vault.times import parse_time

_UNIT = r"(?:second|minute|hour|day|week|month|year)s?"
_RELATIVE = re.compile(
    rf"(?:now|today|yesterday|last (?:week|month|year)"
    rf"|\d+[ .]+{_UNIT}(?:(?:,? and |, |[ .])\d+[ .]+{_UNIT})*"
    rf"[ .]+ago)"
)


def parse_since(value: str | None) -> int | None:
    """Unix time for a --since value, or None."""
    if not value:
        return None
    text = value.strip()
    moment = parse_time(text)
    if moment is not None:
        return int(moment)
    # git's approxidate reads almost anything ("yesterday-ish nonsense" is yesterday), so only
    # the relative forms people type are handed to it; anything else is an error, not a guess.
    moment_ts = gitcmd.approxidate(text) if _RELATIVE.fullmatch(text.lower()) else None
    if moment_ts is None:
        raise GitvaultError(
            f"cannot read the date {value!r}", hint="use YYYY-MM-DD or '3 days ago'"
        )
    return moment_ts
