"""--since values: ISO dates, or git's approxidate ('2 weeks ago') via `git rev-parse`."""

from __future__ import annotations

import re
import subprocess
from datetime import UTC, datetime

from gitvault.errors import GitvaultError
from gitvault.git import clean_env


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
    # git's approxidate, strictly: `config --type=expiry-date` works outside a repository
    # (unlike `rev-parse --since`) and rejects garbage instead of reading it as "now".
    key = "gitvault.since"
    cmd = ["git", "-c", f"{key}={text}", "config", "--type=expiry-date", "--get", key]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=clean_env())
    match = re.fullmatch(r"\s*(\d+)\s*", proc.stdout)
    if proc.returncode != 0 or not match:
        raise GitvaultError(
            f"cannot read the date {value!r}", hint="use YYYY-MM-DD or '3 days ago'"
        )
    return int(match.group(1))
