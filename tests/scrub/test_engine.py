"""The secret filter's engine: the shortcuts that only skip work (one literal pass over a text,
the rules it rules out, the join patterns searched side by side) find what the plain way does.
What the rules find as a whole is held against ``reference_spans`` in test_corpora.py."""

from __future__ import annotations

import random
import re
import subprocess
import sys

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gitvault.scrub import engine
from gitvault.scrub.rules import RULES, TEXT
from tests.support.paths import ROOT
from tests.support.secret_corpora import load

CORPORA = (
    "corpus.jsonl",
    "corpus_heldout3.jsonl",
    "corpus_heldout6.jsonl",
    "corpus_heldout7.jsonl",
    "benign_heldout7.jsonl",
)
TEXTS = [row["text"] for name in CORPORA for row in load(name)]
TEXTS += [row["text"] for row in random.Random(11).sample(load("benign.jsonl"), 300)]
TEXTS += [row["text"] for row in random.Random(11).sample(load("benign_translations.jsonl"), 300)]
# where a literal pass can go wrong: lower-casing that adds characters (İ), characters outside
# the basic plane, literals that overlap themselves or each other, at the very start and end
TEXTS += [
    "İİİ password=İ𝒳pass token",
    "passpasspass keykey --password--pass",
    "key",
    "😀 sk-ant- 😀 ghp_ ghp_ :// \n\n\n auth",
    "x" * 50 + " -p " * 70,  # one literal more often than the windows cap
]
KEYS = sorted(
    {(literal, rule.folded) for rule in RULES for literal in rule.literals if literal}
    | {(word, True) for rule in RULES for word in rule.context}
)


def _found_by_find(text: str, literal: str, folded: bool) -> list[int]:
    haystack = text.lower() if folded else text
    found: list[int] = []
    at = haystack.find(literal)
    while at != -1 and len(found) <= engine._MAX_WINDOWS:
        found.append(at)
        at = haystack.find(literal, at + 1)
    return found


@pytest.mark.parametrize("budget", [0, 10**9], ids=["automata", "str.find"])
def test_the_literal_pass_finds_what_str_find_finds(budget: int) -> None:
    # (both ways the literals are found: the automata, and str.find while a process has
    # scanned too little to pay for building them)
    left = engine._BY_FIND[0]
    engine._BY_FIND[0] = budget
    try:
        _the_literal_pass_finds_what_str_find_finds()
    finally:
        engine._BY_FIND[0] = left


def _the_literal_pass_finds_what_str_find_finds() -> None:
    for text in TEXTS:
        scan = engine._Scan(text)
        for literal, folded in KEYS:
            assert scan.hits(literal, folded) == _found_by_find(text, literal, folded), (
                literal,
                text[:120],
            )
            assert scan.has(literal, folded) == (literal in (scan.lower if folded else text))


def test_a_process_that_scrubs_little_never_builds_the_automata() -> None:
    # a hook that scrubs one short text pays no import and no build (~12 M instructions)
    code = (
        "import sys\n"
        "from gitvault.scrub.engine import scrub_secrets\n"
        "scrub_secrets('a session summary: rotated the token, DB_PASSWORD=hunter2x9 ' * 40)\n"
        "print('ahocorasick_rs' in sys.modules)\n"
        "scrub_secrets('a long note: ' * 2000)\n"
        "print('ahocorasick_rs' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.split() == ["False", "True"]


def test_only_the_rules_whose_literal_occurs_are_live() -> None:
    for text in TEXTS:
        scan = engine._Scan(text)
        expected = [
            index
            for index, rule in enumerate(RULES)
            if any(literal in (scan.lower if rule.folded else text) for literal in rule.literals)
        ]
        assert scan.live() == expected, text[:120]


def test_the_long_tokens_a_rule_reads_are_every_stretch_without_whitespace_that_long() -> None:
    assert {rule.reach for rule in RULES if rule.run} == {TEXT}  # (only there is it read)
    for text in TEXTS:
        scan = engine._Scan(text)
        for size in sorted({rule.run for rule in RULES if rule.run}):
            expected = [m.span() for m in re.finditer(r"\S+", text) if len(m.group()) >= size]
            assert scan.runs(size) == expected, text[:120]


# the two join patterns as the one alternation they stand for (their group names differ)
ALTERNATION = re.compile(
    f"(?:{engine._JOIN_QUOTED.pattern})|(?:{engine._JOIN_CUT.pattern})"  # type: ignore[attr-defined]
)


def _joins_by_alternation(text: str) -> list[tuple[tuple[int, int], bool]]:
    return [
        (
            match.span("cut") if match["cut"] is not None else match.span(),
            match["comma"] is not None,
        )
        for match in ALTERNATION.finditer(text)
    ]


def test_the_join_patterns_side_by_side_find_what_their_alternation_finds() -> None:
    joins = 0
    for text in TEXTS:
        found = list(engine._joins(text))
        assert found == _joins_by_alternation(text), text[:120]
        joins += len(found)
    assert joins > 100  # the texts hold joins of every shape


PIECES = ['"', "'", " + ", "\\\n", "\n", ", ", "||", "> ", "x" * 14, "ab12CD34ef", "=", " "]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=24))
# a continued line whose next line is a wrapped token's: the two patterns' matches overlap
@example(["\\\n", " ", "x" * 14, "\n", "ab12CD34ef", " "])
def test_joins_side_by_side_on_any_sequence_of_their_pieces(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert list(engine._joins(text)) == _joins_by_alternation(text)


@pytest.mark.parametrize("by_find", [16_384, 0])
def test_a_lone_surrogate_is_scrubbed_whichever_way_the_literals_are_found(
    monkeypatch: pytest.MonkeyPatch, by_find: int
) -> None:
    """git hands undecodable bytes over as lone surrogates (surrogateescape), and a hostile
    text may hold one: the automata take only UTF-8, so such a text is read by str.find. A
    process that had scanned 16 KB crashed on it: its commit's note could not be written."""
    monkeypatch.setattr(engine, "_BY_FIND", [by_find])
    text = "caf\udce9 token: ghp_" + "a1B2c3D4e5" * 3 + "abcdef \ud800 password = hunter2hunter2"
    out, found = engine.scrub_secrets(text)
    assert "ghp_" not in out and "hunter2hunter2" not in out and "\udce9" in out
    assert found
