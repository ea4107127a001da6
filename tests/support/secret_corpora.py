"""The bench/secrets corpora (fakes of every kind, and real history that holds no secret) and
how the secret filter is scored on them: the share of fakes caught, the entries it changed."""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict

from gitvault.scrub.engine import scrub_secrets
from tests.support.paths import ROOT

SECRETS = ROOT / "bench" / "secrets"
MARK = re.compile(r"\[REDACTED:[a-z0-9_]+\]")


def load(name: str) -> list[dict[str, str]]:
    with (SECRETS / name).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def recall(rows: list[dict[str, str]]) -> tuple[float, int, list[dict[str, str]]]:
    """(share caught, kinds seen, misses): caught = the secret no longer appears."""
    misses = [row for row in rows if row["secret"] in scrub_secrets(row["text"])[0]]
    return 1 - len(misses) / len(rows), len({row["kind"] for row in rows}), misses


def changed(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    return [row for row in rows if scrub_secrets(row["text"]) != (row["text"], [])]


def stratified(rows: list[dict[str, str]], per_kind: int, seed: int) -> list[dict[str, str]]:
    by_kind: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        by_kind[row["kind"]].append(row)
    rng = random.Random(seed)
    return [
        row
        for kind in sorted(by_kind)
        for row in rng.sample(by_kind[kind], min(per_kind, len(by_kind[kind])))
    ]


def report(what: str, rows: list[dict[str, str]]) -> str:
    return f"{what}:\n" + "\n".join(
        f"  [{row.get('kind') or row.get('source')}] {row['text'][:160]!r}" for row in rows
    )
