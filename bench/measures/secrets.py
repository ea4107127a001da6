"""Secret redaction: recall on the bench/secrets corpora, false positives on real history,
and speed (benign lines per second, CPU per 2 KB commit note). No repository is needed."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

from registry import Measure, Row, Target

from measures.common import Context

SECRETS = Path(__file__).resolve().parent.parent / "secrets"
CORPORA = (
    ("corpus.jsonl", "dev corpus", "recall"),
    ("corpus_heldout.jsonl", "held-out 1", "recall"),
    ("corpus_heldout2.jsonl", "held-out 2", None),  # rules were added after seeing it
    ("corpus_heldout3.jsonl", "held-out 3", None),  # tuned on after its first measurement
    ("corpus_heldout4.jsonl", "held-out 4", None),  # likewise
    ("corpus_heldout5.jsonl", "held-out 5", None),  # tuned on after its second measurement
    ("corpus_heldout6.jsonl", "held-out 6", None),  # written blind, then the development set
    ("corpus_heldout7.jsonl", "held-out 7", None),  # written blind, tuned on after one measure
    ("corpus_heldout8.jsonl", "held-out 8", None),  # written blind, tuned on after one measure
    ("corpus_heldout9.jsonl", "held-out 9", None),  # likewise
    ("corpus_heldout10.jsonl", "held-out 10", None),  # likewise
    ("corpus_heldout11.jsonl", "held-out 11", None),  # likewise
    ("corpus_heldout12.jsonl", "held-out 12", "heldout"),  # written blind, never tuned on
)
# real text that must survive: changelog entries, man-page lines, file paths
BENIGN = (
    # real text: the false-positive target; look-alikes (written to be mistaken): reported
    ("benign.jsonl", "false_positives", "real history", "changelog and commit-message entries"),
    ("benign_manpages.jsonl", "false_positives_manpages", "man-page lines", "man-page lines"),
    ("benign_paths.jsonl", "false_positives_paths", "file paths", "real file paths"),
    (
        "benign_heldout6.jsonl",
        "false_positives_lookalikes6",
        "look-alikes, set 6",
        "public keys, hashes, placeholders and secret references written beside held-out 6",
    ),
    (
        "benign_heldout7.jsonl",
        "false_positives_lookalikes7",
        "look-alikes, set 7",
        "look-alikes written beside held-out 7",
    ),
    (
        "benign_heldout8.jsonl",
        "false_positives_lookalikes8",
        "look-alikes, set 8",
        "look-alikes written beside held-out 8",
    ),
    *(
        (
            f"benign_heldout{n}.jsonl",
            f"false_positives_lookalikes{n}",
            f"look-alikes, set {n}",
            f"look-alikes written beside held-out {n}" + (" (never tuned on)" if n == 12 else ""),
        )
        for n in (9, 10, 11, 12)
    ),
)
NOTE_CHARS = 2048


def _load(name: str) -> list[dict[str, str]]:
    with (SECRETS / name).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _notes(benign: list[dict[str, str]], count: int, seed: int = 2) -> list[str]:
    """``count`` notes of 2,048 characters made of random benign entries (as in evaluate.py)."""
    rng = random.Random(seed)
    notes = []
    for _ in range(count):
        parts: list[str] = []
        while sum(len(part) + 2 for part in parts) < NOTE_CHARS:
            parts.append(rng.choice(benign)["text"])
        notes.append("\n\n".join(parts)[:NOTE_CHARS])
    return notes


def _survives(row: dict[str, str], output: str) -> bool:
    """The fake is still there: its secret, or any fragment of a value split in the text."""
    parts = row.get("parts") or [row["secret"]]
    return any(part in output for part in parts)


def bench_secrets(ctx: Context) -> list[Row]:
    from gitvault.scrub.engine import scrub_secrets

    rows: list[Row] = []
    for name, label, target in CORPORA:
        corpus = _load(name)
        missed = [r for r in corpus if _survives(r, scrub_secrets(r["text"])[0])]
        share = 1 - len(missed) / len(corpus)
        kinds = len({r["kind"] for r in corpus})
        ctx.say(f"secrets: {label}: {len(corpus) - len(missed)}/{len(corpus)} redacted")
        rows.append(
            Row(
                f"recall_{name.removesuffix('.jsonl')}",
                f"redaction recall, {label} ({len(corpus)} fakes, {kinds} kinds)",
                share * 100,
                "%",
                shown=f"{share * 100:.1f} % ({len(corpus) - len(missed)}/{len(corpus)})",
                target=target,
                how=f"bench/secrets/{name}: a sample is caught when its secret is gone from "
                "scrub_secrets(text).",
                details={"missed": [r["kind"] for r in missed]},
            )
        )

    for name, row_name, label, what in BENIGN:
        real = not name.startswith("benign_heldout")
        texts = [r["text"] for r in _load(name)]
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        changed = sum(1 for t in texts if scrub_secrets(t) != (t, []))
        wall, cpu = time.perf_counter() - start_wall, time.process_time() - start_cpu
        rate = changed / len(texts)
        rows.append(
            Row(
                row_name,
                f"redaction false positives on {label} ({len(texts):,})",
                rate * 100,
                "%",
                shown=f"{rate * 100:.2f} % ({changed})",
                target="false_positives" if real else None,
                how=f"bench/secrets/{name}: {what} whose text changed or that reported a "
                "redaction.",
                details={"changed": changed},
            )
        )
        if name == "benign.jsonl":
            lines = sum(t.count("\n") + 1 for t in texts)
            speed = (lines, len(texts), wall, cpu)
    lines, entries, wall, cpu = speed
    rows.append(
        Row(
            "speed",
            "redaction speed on real history",
            lines / cpu,
            "lines/s",
            how=f"{lines:,} lines in {entries:,} entries, each passed whole; CPU time "
            f"(wall {lines / wall:,.0f} lines/s).",
        )
    )

    count = ctx.sizes.redact_notes
    notes = _notes(_load("benign.jsonl"), count)
    cpu_runs, wall_runs = [], []
    for _ in range(3):
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        for note in notes:
            scrub_secrets(note)
        cpu_runs.append((time.process_time() - start_cpu) / count)
        wall_runs.append((time.perf_counter() - start_wall) / count)
    per_note = min(cpu_runs)
    rows.append(
        Row(
            "per_note",
            "redaction per 2 KB commit note",
            per_note * 1000,
            "ms",
            shown=f"{per_note * 1000:.3f} ms",
            target="per_note",
            how=f"{count} notes of {NOTE_CHARS:,} characters made of benign entries; best of 3 "
            f"CPU times (wall {min(wall_runs) * 1000:.3f} ms).",
            details={"cpu_s": cpu_runs, "wall_s": wall_runs},
        )
    )
    return rows


MEASURES = (
    Measure(
        section="secrets",
        title="Secret redaction",
        run=bench_secrets,
        targets={
            "recall": Target(">=", 98, "%"),
            # issue 17, item 8: 99 % of held-out kinds, measured on a set never tuned on
            "heldout": Target(">=", 99, "%"),
            "false_positives": Target("<=", 0.5, "%"),
            # backfill at ≥ 1,000 commits/s leaves well under 1 ms per note for redaction
            "per_note": Target("<", 0.3, "ms"),
        },
        about="What `gitvault.scrub.engine.scrub_secrets` does to the corpora in "
        "bench/secrets/ (fake credentials of many kinds in realistic text; real changelog and "
        "commit-message entries, man-page lines and file paths that must survive). Held-out 1-11 "
        "are not unbiased: rules were generalised or added after each was first measured (each "
        "set's one blind figure is in bench/secrets/README.md). Held-out 6-12 (and their "
        "look-alikes) were written blind by someone who had not read the rules; 12 is never "
        "tuned on. Per "
        "channel (notes, saves, transcripts, state files, recall, digest, ...): "
        "bench/secrets/channels.py. How third-party detectors compare on the same corpora: "
        "bench/secrets/README.md and bench/secrets/evaluate.py.",
        summary=("recall_corpus", "false_positives"),
        order=80,
    ),
)
