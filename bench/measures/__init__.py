"""The measurements. Each benchmark builds its own scratch repositories in the sandbox, drives
gitvault through its real paths (installed shims, the drainer, Vault.commit, backfill) and
returns rows for the report. gitvault and pygit2 are imported inside the functions, after
run.py has isolated the environment. One module per thing measured.
"""

from __future__ import annotations

from collections.abc import Callable

from measures.backfill import bench_backfill, bench_gc
from measures.claude_hooks import bench_claude_hooks
from measures.common import FULL, QUICK, Context, Row, Sizes
from measures.drain import bench_drain
from measures.foldquality import bench_fold_quality
from measures.gitops import bench_gitops
from measures.hook import bench_hook
from measures.notecost import bench_notecost
from measures.recall import bench_recall
from measures.search import bench_search
from measures.secrets import bench_secrets
from measures.sync import bench_sync
from measures.verify import bench_verify

__all__ = ["BENCHMARKS", "FULL", "QUICK", "Context", "Row", "Sizes"]

BENCHMARKS: dict[str, Callable[[Context], list[Row]]] = {
    "hook": bench_hook,
    "drain": bench_drain,
    "gitops": bench_gitops,
    "notecost": bench_notecost,
    "recall": bench_recall,
    "claude_hooks": bench_claude_hooks,
    "verify": bench_verify,
    "search": bench_search,
    "backfill": bench_backfill,
    "gc": bench_gc,
    "secrets": bench_secrets,
    "fold-quality": bench_fold_quality,
    "sync": bench_sync,
}
