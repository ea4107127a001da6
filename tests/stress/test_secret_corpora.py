"""The secret filter on the whole bench/secrets corpora: the share of fakes caught per corpus,
and real history left alone; every miss and false positive is printed (a stratified sample runs
in the default suite: tests/scrub/test_corpora.py)."""

from __future__ import annotations

import pytest

from gitvault.scrub.engine import reference_spans, secret_spans
from tests.support.secret_corpora import changed, load, recall, report

pytestmark = pytest.mark.stress


@pytest.mark.parametrize(
    ("corpus", "floor"),
    [
        ("corpus.jsonl", 0.98),
        ("corpus_heldout.jsonl", 0.98),
        ("corpus_heldout2.jsonl", 0.95),
        # sets 3 and 4 were tuned on after their first measurement (98.8 % and 100 % now);
        # held-out 5 is never tuned on, so it has no floor here (bench/secrets/README.md)
        ("corpus_heldout3.jsonl", 0.98),
        ("corpus_heldout4.jsonl", 0.99),
    ],
)
def test_whole_corpus_is_redacted(corpus: str, floor: float) -> None:
    share, kinds, misses = recall(load(corpus))
    print(f"{corpus}: {share:.1%} of the samples redacted across {kinds} kinds")
    print(report("missed", misses))
    if corpus == "corpus.jsonl":
        assert kinds >= 40
    assert share >= floor, report("missed", misses)


# Today's counts (bench/secrets/README.md): the filter may not change more real text than this.
BENIGN_CEILINGS = {"benign.jsonl": 7, "benign_manpages.jsonl": 4, "benign_paths.jsonl": 0}


@pytest.mark.parametrize(("corpus", "ceiling"), sorted(BENIGN_CEILINGS.items()))
def test_whole_real_history_is_kept(corpus: str, ceiling: int) -> None:
    rows = load(corpus)
    fps = changed(rows)
    print(f"{corpus}: {len(fps)} of {len(rows)} entries changed ({len(fps) / len(rows):.2%})")
    print(report("changed", fps))
    assert len(fps) <= ceiling, report("changed", fps)


@pytest.mark.parametrize(
    "corpus",
    [
        "corpus.jsonl",
        "corpus_heldout.jsonl",
        "corpus_heldout2.jsonl",
        "corpus_heldout3.jsonl",
        "corpus_heldout4.jsonl",
        "corpus_heldout5.jsonl",
        "corpus_heldout9.jsonl",
        "benign_heldout9.jsonl",
        "corpus_heldout10.jsonl",
        "benign_heldout10.jsonl",
        "corpus_heldout11.jsonl",
        "benign_heldout11.jsonl",
        *sorted(BENIGN_CEILINGS),
    ],
)
def test_prefilters_change_no_result_on_the_whole_corpus(corpus: str) -> None:
    differ = [r for r in load(corpus) if secret_spans(r["text"]) != reference_spans(r["text"])]
    print(f"{corpus}: {len(differ)} texts where the prefilters change the result")
    assert not differ, report("prefiltered result differs", differ)
