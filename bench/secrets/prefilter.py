"""What the secret filter's prefilters save, and that they change nothing.

    python bench/secrets/prefilter.py            # 500 notes of 2 KB, as bench/run.py builds them

The same notes go through ``secret_spans`` (literals, windows, gated patterns) and
``reference_spans`` (every rule's plain pattern over the whole text); the spans must be equal.
Printed: CPU milliseconds per note for each, their ratio, the 1-minute load average.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def notes(count: int = 500, seed: int = 2) -> list[str]:
    """``count`` notes of 2,048 characters made of benign entries (as bench/measures/secrets)."""
    with (HERE / "benign.jsonl").open(encoding="utf-8") as fh:
        benign = [json.loads(line)["text"] for line in fh if line.strip()]
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        parts: list[str] = []
        while sum(len(part) + 2 for part in parts) < 2048:
            parts.append(rng.choice(benign))
        out.append("\n\n".join(parts)[:2048])
    return out


def main() -> int:
    sys.path.insert(0, str(HERE.parent.parent))
    from gitvault.scrub.engine import reference_spans, secret_spans

    texts = notes()
    load = os.getloadavg()[0]
    for text in texts[:20]:  # compile the patterns the notes need
        secret_spans(text)
        reference_spans(text)
    start = time.process_time()
    filtered = [secret_spans(text) for text in texts]
    middle = time.process_time()
    reference = [reference_spans(text) for text in texts]
    end = time.process_time()
    differ = sum(1 for a, b in zip(filtered, reference, strict=True) if a != b)
    fast, slow = (middle - start) / len(texts), (end - middle) / len(texts)
    print(
        f"{len(texts)} notes of 2 KB: prefiltered {fast * 1000:.3f} ms, reference "
        f"{slow * 1000:.3f} ms CPU per note ({slow / fast:.2f}x); {differ} notes differ; "
        f"load {load:.1f} -> {os.getloadavg()[0]:.1f}"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
