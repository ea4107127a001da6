"""The SessionStart recall hook on a large vault with a digest."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time

from harness import (
    git_out,
    median,
    percentile,
)

from measures.common import Context, Row, ms
from measures.notecost import vault_repos

# -- SessionStart recall at 100k notes (issue 4): a slot until gitvault.recall exists -----------


# The command Claude Code's SessionStart hook runs: the stable entry `gitvault-hook claude
# session-start`. The row fails (rather than passing silently) when the output has no block.
def _recall_hook_args() -> list[str]:
    return ["-m", "gitvault.hook", "claude", "session-start"]


def _memory_files(tip: str, shas: list[str]) -> dict[str, bytes | None]:
    """A digest near its 6,000-character cap citing real notes, two sessions and a patterns
    file: what a vault in steady use holds besides its notes (plain text, as fold/save write)."""
    from gitvault.vault import frontmatter

    cats = ["Architecture", "Decisions", "Conventions", "Gotchas", "State", "Next steps"]
    rng = random.Random(7)
    body = ["# Project memory", ""]
    for cat in cats:
        body.append(f"## {cat}")
        for i in range(9):
            words = " ".join(
                rng.choice(
                    (
                        "cache",
                        "parser",
                        "vault",
                        "retry",
                        "index",
                        "hook",
                        "schema",
                        "drain",
                        "batch",
                        "lock",
                    )
                )
                for _ in range(9)
            )
            body.append(f"- {cat} fact {i}: {words} (c:{rng.choice(shas)[:7]})")
        body.append("")
    digest = frontmatter.render(
        {
            "kind": "digest",
            "watermark": tip,
            "folded_at": "2025-10-09T12:00:00Z",
            "merger": "builtin",
            "model": None,
            "items": {c: 9 for c in cats},
        },
        "\n".join(body),
    )
    files: dict[str, bytes | None] = {"_master.md": digest.encode()}
    for n, (slug, saved) in enumerate(
        (
            ("bench-first", "2025-10-08T10:00:00+00:00"),
            ("bench-second", "2025-10-09T11:00:00+00:00"),
        )
    ):
        meta = {
            "kind": "session",
            "title": f"bench session {n}",
            "saved_at": saved,
            "mode": "manual",
        }
        text = "\n\n".join(
            f"## {sec}\n" + "\n".join(f"- {sec} point {i} of session {n}" for i in range(12))
            for sec in ("Summary", "Key Decisions", "Next Steps")
        )
        files[f"sessions/{saved[:10]}-{saved[11:13]}{saved[14:16]}-{slug}.md"] = frontmatter.render(
            meta, text + "\n"
        ).encode()
    files["patterns/testing.md"] = "".join(f"- standing rule {i}\n" for i in range(12)).encode()
    return files


def bench_recall(ctx: Context) -> list[Row]:
    n = ctx.sizes.vault_large
    metric = f"SessionStart hook at {n:,} notes (digest, 2 sessions)"
    from gitvault.resolve import resolve
    from gitvault.vault.store import Vault

    _, large = vault_repos(ctx)
    payload = json.dumps(
        {
            "session_id": "bench-session",
            "transcript_path": str(ctx.box.root / "none.jsonl"),
            "cwd": str(large),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
    ).encode()
    hook_args = _recall_hook_args()

    def measure() -> tuple[list[float], bytes]:
        runs: list[float] = []
        output = b""
        for _ in range(ctx.sizes.recall_runs):
            start = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, *hook_args],
                cwd=large,
                input=payload,
                capture_output=True,
                check=False,
            )
            runs.append(time.perf_counter() - start)
            output = proc.stdout
        return runs, output

    ctx.say(f"recall: SessionStart hook at {n:,} notes, before and after the first digest")
    bare_runs, bare_out = measure()
    vault = Vault(resolve(large))
    tip = vault.require_tip()
    shas = [
        p.rsplit("/", 1)[-1][:-3]
        for p in git_out(["ls-tree", "-r", "--name-only", tip, "notes/2024/01/"], large).split()
    ]
    vault.commit(_memory_files(tip, shas or ["0" * 40]), "bench: digest, sessions, patterns")
    runs, output = measure()

    def verdict(out: bytes) -> str:
        return (
            ""
            if b"VAULT RECALL" in out
            else (
                " The output carried no `=== VAULT RECALL ===` block (fail-open: nothing injected)"
                ", so the row counts as failed."
            )
        )

    ok = b"VAULT RECALL" in output
    how = (
        f"`python {' '.join(hook_args)}` with a SessionStart JSON input on stdin (interpreter "
        f"start-up included), {len(runs)} runs in the {n:,}-note vault after a digest near its "
        f"cap, two sessions and a patterns file were committed to it (the steady state): median "
        f"wall time; p90 {ms(percentile(runs, 90))}.{verdict(output)}"
    )
    bare_how = (
        f"The same hook in the same vault before its first fold (no `_master.md`, so recall "
        f"reports how many notes wait for a fold): median of {len(bare_runs)} runs, p90 "
        f"{ms(percentile(bare_runs, 90))}.{verdict(bare_out)}"
    )
    return [
        Row(
            "recall",
            metric,
            ms(median(runs)),
            "≤ 150 ms",
            ok and median(runs) <= 0.150,
            how,
            {"runs_s": runs},
        ),
        Row(
            "recall",
            f"SessionStart hook at {n:,} notes, no digest yet",
            ms(median(bare_runs)),
            "(report)",
            None if b"VAULT RECALL" in bare_out else False,
            bare_how,
            {"runs_s": bare_runs},
        ),
    ]
