"""The secret filter on the whole bench/secrets corpora: the share of fakes caught per corpus,
and real history left alone; every miss and false positive is printed (a stratified sample runs
in the default suite: tests/scrub/test_corpora.py)."""

from __future__ import annotations

import pytest

from tests.support.secret_corpora import changed, load, recall, report

pytestmark = pytest.mark.stress


@pytest.mark.parametrize(
    ("corpus", "floor"),
    [("corpus.jsonl", 0.98), ("corpus_heldout.jsonl", 0.98), ("corpus_heldout2.jsonl", 0.95)],
)
def test_whole_corpus_is_redacted(corpus: str, floor: float) -> None:
    share, kinds, misses = recall(load(corpus))
    print(f"{corpus}: {share:.1%} of the samples redacted across {kinds} kinds")
    print(report("missed", misses))
    if corpus == "corpus.jsonl":
        assert kinds >= 40
    assert share >= floor, report("missed", misses)


def test_whole_real_history_is_kept() -> None:
    rows = load("benign.jsonl")
    fps = changed(rows)
    print(f"benign.jsonl: {len(fps)} of {len(rows)} entries changed ({len(fps) / len(rows):.2%})")
    print(report("changed", fps))
    assert len(fps) / len(rows) <= 0.005, report("changed", fps)
