"""gitvault.memory.clean: safe slugs for session names, and the whole cleaning pass a saved
session goes through (recall block, then <private>, then secrets, then whitespace)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gitvault.memory.clean import clean_session_text, slugify
from gitvault.memory.fences import RECALL_BEGIN, RECALL_END
from gitvault.scrub.engine import Scrubbed
from tests.support.fake_secrets import GH_CLASSIC

B = RECALL_BEGIN
E = RECALL_END


# --------------------------------------------------------------------------- slugify

SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def test_slugify_lowercases_and_joins_words_with_dashes() -> None:
    assert slugify("Fix the Resolver: linked worktrees!") == "fix-the-resolver-linked-worktrees"


def test_slugify_path_traversal() -> None:
    assert slugify("../../etc/passwd") == "etc-passwd"
    assert slugify("..\\..\\windows\\system32") == "windows-system32"
    assert slugify("..") == "session"


def test_slugify_control_characters() -> None:
    assert slugify("fix\x00bug\x1b[31m red\ttab\nnewline\x7f") == "fix-bug-31m-red-tab-newline"


def test_slugify_unicode_folds_accents_and_drops_the_rest() -> None:
    assert slugify("Café crème brûlée") == "cafe-creme-brulee"
    assert slugify("naïve ﬁx Ⅻ") == "naive-fix-xii"
    assert slugify("日本語のタイトル") == "session"
    assert slugify("deploy 🚀 done") == "deploy-done"


@pytest.mark.parametrize("title", ["", "   ", "\t\n", "---", "!!!", "/", "\x00\x01"])
def test_slugify_empty_falls_back(title: str) -> None:
    assert slugify(title) == "session"


def test_slugify_long_title_cut_at_dash_boundary() -> None:
    title = "implement the date sharded note paths and the compare and swap ref update loop"
    slug = slugify(title)
    assert len(slug) <= 48
    assert slug == "implement-the-date-sharded-note-paths-and-the"
    assert slugify(title, max_len=20) == "implement-the-date"


def test_slugify_long_single_word_is_hard_cut() -> None:
    assert slugify("x" * 500) == "x" * 48
    # A dash too early to keep half the budget is ignored: hard cut instead.
    assert slugify("a-" + "b" * 100) == "a-" + "b" * 46


def test_slugify_cut_never_leaves_edge_dash() -> None:
    for max_len in range(1, 30):
        slug = slugify("ab-" * 20, max_len=max_len)
        assert len(slug) <= max_len
        assert SLUG.fullmatch(slug), (max_len, slug)


def test_slugify_small_max_len_and_fallback() -> None:
    assert slugify("", max_len=3) == "ses"
    with pytest.raises(ValueError):
        slugify("title", max_len=0)


@given(st.text(), st.integers(min_value=1, max_value=80))
def test_slugify_always_safe(title: str, max_len: int) -> None:
    slug = slugify(title, max_len)
    assert 1 <= len(slug) <= max_len
    assert SLUG.fullmatch(slug)
    assert ".." not in slug and "/" not in slug and "\\" not in slug


# --------------------------------------------------------------------------- clean_session_text


def test_clean_secret_inside_private_is_removed_not_counted() -> None:
    text = f"work done\n<private>\nDB_PASSWORD=hunter2 and {GH_CLASSIC}\n</private>\nnext\n"
    assert clean_session_text(text) == ("work done\nnext\n", [])


def test_clean_secret_inside_recall_is_removed_not_counted() -> None:
    text = f"{B}\nold note: API_KEY=abc123\n{E}\nnew work\n"
    assert clean_session_text(text) == ("new work\n", [])


def test_clean_recall_runs_before_private() -> None:
    # An unclosed <private> inside old memory must not swallow the new work after the block.
    text = f"{B}\n<private>\n{E}\nnew work\n"
    assert clean_session_text(text) == ("new work\n", [])


def test_clean_fence_inside_private_block_still_cuts_to_end() -> None:
    # Recall runs first and sees an unterminated fence; the dangling <private> then goes too.
    text = f"keep\n<private>{B}</private>\ntail"
    assert clean_session_text(text) == ("keep\n", [])


def test_clean_redacts_what_remains() -> None:
    out, found = clean_session_text(f"deployed with TOKEN={GH_CLASSIC}   \n")
    assert out == "deployed with TOKEN=[REDACTED:github_token]\n"
    assert found == [Scrubbed("github_token", 1)]


def test_clean_trims_line_ends_and_crlf_and_caps_blank_runs() -> None:
    text = "a  \t\r\nb\r\n\r\n\r\n\r\n\r\nc\n\n\nd \n"
    assert clean_session_text(text) == ("a\nb\n\n\nc\n\n\nd\n", [])


def test_clean_lone_carriage_returns_become_newlines() -> None:
    assert clean_session_text("a\rb\r") == ("a\nb\n", [])


def test_clean_collapses_blank_runs_at_the_edges() -> None:
    assert clean_session_text("\n\n\n\n\nx") == ("\n\nx", [])
    assert clean_session_text("x\n \n \n \n \ny") == ("x\n\n\ny", [])


def test_clean_of_empty_text_is_empty() -> None:
    assert clean_session_text("") == ("", [])
