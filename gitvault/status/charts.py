"""The series `gitvault stats` draws in the terminal: notes and sessions per week, the digest's
size against raw memory at each fold, fold spend against today's budget, and the project paths
the memory talks about most. Plain data (the command draws it with rich); none of it is in
`stats --json`, which stays as it was."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from gitvault.named import NamedTuple
from gitvault.resolve import Location
from gitvault.vault import gitcmd, layout

WEEKS = 12  # the per-week chart ends at the newest item's week (an old project still shows)
FOLDS = 10  # the last folds drawn
TOP_PATHS = 8


class Item(NamedTuple):
    day: date
    kind: str  # "note" | "session"
    size: int


class Week(NamedTuple):
    start: date  # its Monday
    notes: int
    sessions: int


class FoldPoint(NamedTuple):
    day: date
    digest_chars: int
    raw_chars: int  # notes and sessions dated up to that fold's day


class Charts(NamedTuple):
    weeks: list[Week]
    folds: list[FoldPoint]
    spend_today: int
    spend_budget: int
    spend_total: int
    paths: list[tuple[str, int]]  # (project path, commits that touched it), most first


def item_day(path: str) -> tuple[date, str] | None:
    """The day a note (its commit's date) or a session (its save) is filed under, and which."""
    filed = layout.filed_day(path)
    if filed is None:
        return None
    try:
        day = date(*filed)
    except ValueError:
        return None
    return day, "note" if layout.note_sha(path) else "session"


def per_week(items: list[Item], weeks: int = WEEKS) -> list[Week]:
    if not items:
        return []
    last = max(i.day for i in items)
    end = last - timedelta(days=last.weekday())
    starts = [end - timedelta(weeks=n) for n in range(weeks - 1, -1, -1)]
    counts = {s: [0, 0] for s in starts}
    for item in items:
        monday = item.day - timedelta(days=item.day.weekday())
        if monday in counts:
            counts[monday][item.kind == "session"] += 1
    return [Week(s, counts[s][0], counts[s][1]) for s in starts]


def fold_points(loc: Location, tip: str, items: list[Item], n: int = FOLDS) -> list[FoldPoint]:
    """The digest's size at each of the last n folds, beside the raw memory dated by then."""
    cwd = loc.common_dir
    proc = gitcmd.run_git(
        ["log", f"-n{n}", "--format=%H %ct", "--grep=^fold ", tip, "--"], cwd, check=False
    )
    folds = []
    for line in proc.stdout.decode("ascii", "replace").splitlines():
        sha, _, when = line.partition(" ")
        if len(sha) == 40 and when.isdigit():
            folds.append((sha, datetime.fromtimestamp(int(when), tz=UTC).date()))
    if not folds:
        return []
    specs = [f"{sha}:{layout.DIGEST}" for sha, _ in folds]
    sizes = {spec: len(data) for spec, data in gitcmd.cat_blobs(cwd, specs).items()}  # small
    ordered = sorted(items, key=lambda i: i.day)
    out = []
    for (_, day), spec in zip(reversed(folds), reversed(specs), strict=True):
        raw = sum(i.size for i in ordered if i.day <= day)
        out.append(FoldPoint(day, sizes.get(spec, 0), raw))
    return out


def top_paths(loc: Location, n: int = TOP_PATHS) -> list[tuple[str, int]]:
    """The project paths the most noted commits touched (the per-path index, brought current
    first); [] when there is no index to read."""
    from gitvault.errors import GitvaultError
    from gitvault.pathrecall.index import PathIndex, update_quietly

    try:
        update_quietly(loc)
        return [(path, commits) for path, commits, _ in PathIndex(loc).hot_spots(n)]
    except (GitvaultError, OSError, ValueError):
        return []
    except Exception as exc:  # sqlite3.Error, without importing sqlite3 for the type
        if type(exc).__module__ == "sqlite3":
            return []
        raise


def bar(value: int, most: int, width: int = 30) -> str:
    """A bar of block characters, eighths included, value's share of most."""
    if most <= 0 or value <= 0:
        return ""
    eighths = max(1, round(8 * width * min(value, most) / most))
    full, part = divmod(eighths, 8)
    return "█" * full + ("", "▏", "▎", "▍", "▌", "▋", "▊", "▉")[part]
