"""`gitvault stats`: how big the memory is, what it costs (fold spend from vault/statedir),
and the status line. Plain git only, like the line; the terminal's charts (status/charts) add
the per-path index's most talked-about paths."""

from __future__ import annotations

import time

from gitvault.memory import recall
from gitvault.memory.vaultstate import unfolded_count
from gitvault.resolve import Location
from gitvault.status import charts
from gitvault.status.line import short_age, status_line
from gitvault.vault import frontmatter, gitcmd, layout, statedir
from gitvault.vault.times import parse_time

CHARS_PER_TOKEN = 4


class Stats:
    def __init__(self) -> None:
        self.notes = 0
        self.sessions = 0
        self.folds = 0
        self.pins = 0
        self.forgotten = 0
        self.raw_chars = 0  # every note and session as stored
        self.digest_chars = 0
        self.recall_chars = 0
        self.fold_chars_today = 0
        self.fold_chars_total = 0
        self.digest_age_seconds: int | None = None
        self.pending = 0
        self.line = ""
        self.tip: str | None = None
        self.items: list[charts.Item] = []  # dated, for the terminal's charts (not in --json)

    @property
    def ratio(self) -> float | None:
        return round(self.raw_chars / self.digest_chars, 1) if self.digest_chars else None

    def as_json(self) -> dict[str, object]:
        tokens = {
            "raw": self.raw_chars // CHARS_PER_TOKEN,
            "digest": self.digest_chars // CHARS_PER_TOKEN,
            "recall": self.recall_chars // CHARS_PER_TOKEN,
            "fold_today": self.fold_chars_today // CHARS_PER_TOKEN,
            "fold_total": self.fold_chars_total // CHARS_PER_TOKEN,
        }
        return {
            "notes": self.notes,
            "sessions": self.sessions,
            "folds": self.folds,
            "pins": self.pins,
            "forgotten": self.forgotten,
            "raw_chars": self.raw_chars,
            "digest_chars": self.digest_chars,
            "compression_ratio": self.ratio,
            "recall_chars": self.recall_chars,
            "fold_chars_today": self.fold_chars_today,
            "fold_chars_total": self.fold_chars_total,
            "estimated_tokens": tokens,
            "digest_age_seconds": self.digest_age_seconds,
            "pending": self.pending,
            "status_line": self.line,
        }

    def lines(self) -> list[tuple[str, str]]:
        ratio = f"{self.ratio}:1" if self.ratio is not None else "- (no digest yet)"
        age = short_age(self.digest_age_seconds) if self.digest_age_seconds is not None else "-"
        t = CHARS_PER_TOKEN
        return [
            ("notes", f"{self.notes:,}"),
            ("sessions", f"{self.sessions:,}"),
            ("folds", f"{self.folds:,}"),
            ("pins / forgotten", f"{self.pins} / {self.forgotten}"),
            ("raw memory", f"{self.raw_chars:,} chars ≈ {self.raw_chars // t:,} tokens"),
            ("digest", f"{self.digest_chars:,} chars ≈ {self.digest_chars // t:,} tokens"),
            ("compression", ratio),
            ("recall block", f"{self.recall_chars:,} chars ≈ {self.recall_chars // t:,} tokens"),
            (
                "fold spend",
                f"today {self.fold_chars_today:,} chars ≈ {self.fold_chars_today // t:,} tokens; "
                f"total {self.fold_chars_total:,} chars ≈ {self.fold_chars_total // t:,} tokens",
            ),
            ("digest age", age),
            ("pending", f"{self.pending:,} notes and sessions wait for a fold"),
            ("status", self.line),
        ]


def stats(loc: Location) -> Stats:
    cwd = loc.common_dir
    rev = layout.branch_ref(gitcmd.vault_branch(cwd))
    out = Stats()
    tip = gitcmd.ref_exists(cwd, rev)
    if tip is None:
        out.line = "gitvault: not installed (gitvault install)"
        return out
    out.tip = tip
    proc = gitcmd.run_git(
        ["-c", "core.quotePath=false", "ls-tree", "-r", "-l", "-z", tip], cwd, check=False
    )
    for record in proc.stdout.split(b"\0"):
        head, _, raw_path = record.partition(b"\t")
        parts = head.split()
        if len(parts) < 4 or not parts[3].isdigit():
            continue
        path, size = raw_path.decode("utf-8", "replace"), int(parts[3])
        dated = charts.item_day(path)
        if dated is not None:
            out.items.append(charts.Item(dated[0], dated[1], size))
        if layout.note_sha(path):
            out.notes += 1
            out.raw_chars += size
        elif layout.session_slug(path):
            out.sessions += 1
            out.raw_chars += size
        elif path == layout.DIGEST:
            out.digest_chars = size
        elif layout.tombstone_cite(path):
            out.forgotten += 1
    folds = gitcmd.run_git(["rev-list", "--count", "--grep=^fold ", tip, "--"], cwd, check=False)
    out.folds = int(folds.stdout.strip() or 0) if folds.returncode == 0 else 0
    digest = gitcmd.cat_blobs(cwd, [f"{tip}:{layout.DIGEST}"]).get(f"{tip}:{layout.DIGEST}")
    meta: dict[str, object] = {}
    if digest is not None:
        meta, _ = frontmatter.parse(digest.decode("utf-8", "replace"))
    folded = parse_time(meta.get("folded_at"))
    out.digest_age_seconds = int(time.time() - folded) if folded is not None else None
    mark = meta.get("watermark")
    out.pending = unfolded_count(cwd, mark if isinstance(mark, str) else None, tip, None)
    patterns = gitcmd.ls_tree(cwd, tip, [layout.PATTERNS + "/"])
    blobs = gitcmd.cat_blobs(cwd, [e.oid for e in patterns if layout.is_pattern(e.path)])
    out.pins = sum(
        1
        for data in blobs.values()
        for line in data.decode("utf-8", "replace").splitlines()
        if line.strip().startswith(("- ", "* "))
    )
    try:
        out.recall_chars = len(recall.build(loc.workdir or cwd).text)
    except gitcmd.GitError:
        out.recall_chars = 0
    out.fold_chars_today, out.fold_chars_total = statedir.fold_budget(loc)
    out.line = status_line(loc).text
    return out


def charts_of(loc: Location, report: Stats) -> charts.Charts:
    """What the terminal's charts draw, from a report stats() made."""
    from gitvault.vault.config import read_local

    today, total = report.fold_chars_today, report.fold_chars_total
    config = None
    if report.tip is not None:
        found = gitcmd.cat_blobs(loc.common_dir, [f"{report.tip}:{layout.CONFIG}"])
        config = next(iter(found.values()), b"").decode("utf-8", "replace") or None
    # The budget as it applies on this clone (the one resolver of local-only settings).
    fold, _ = layout.resolve_local(
        "fold", layout.read_settings(config, "fold"), read_local(loc.common_dir)
    )
    budget = int(fold["max_chars_per_day"])
    return charts.Charts(
        weeks=charts.per_week(report.items),
        folds=charts.fold_points(loc, report.tip, report.items) if report.tip else [],
        spend_today=today,
        spend_budget=budget,
        spend_total=total,
        paths=charts.top_paths(loc),
    )
