"""gitvault.memory.fences: the recall block and <private> spans are stripped from what a session
saves, whatever the nesting, spacing or missing ends; no fence or tag is ever left behind."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gitvault.memory.fences import RECALL_BEGIN, RECALL_END, strip_private, strip_recall

B = RECALL_BEGIN
E = RECALL_END


# --------------------------------------------------------------------------- strip_recall


def test_recall_block_removed_with_its_lines() -> None:
    text = f"new work\n{B}\n## Digest\nold fact\n{E}\nmore new work\n"
    assert strip_recall(text) == "new work\nmore new work\n"


def test_recall_multiple_blocks_keep_what_is_between() -> None:
    text = f"a\n{B}\nold 1\n{E}\nmiddle\n{B}\nold 2\n{E}\nz"
    assert strip_recall(text) == "a\nmiddle\nz"


def test_recall_nested_blocks_inner_end_does_not_close_outer() -> None:
    text = f"a\n{B}\nx\n{B}\ny\n{E}\nstill old\n{E}\nb"
    assert strip_recall(text) == "a\nb"


def test_recall_unterminated_fence_removes_to_end() -> None:
    text = f"new work\n{B}\nold memory\nthat never ends"
    assert strip_recall(text) == "new work\n"


def test_recall_unterminated_after_a_closed_block() -> None:
    text = f"a\n{B}\nold\n{E}\nkept\n{B}\nold again"
    assert strip_recall(text) == "a\nkept\n"


def test_recall_stray_end_fence_takes_the_text_before_it() -> None:
    # A closing fence without its opening one: the block's start was cut off, so what precedes
    # it is (the tail of) old memory and goes too (the one rule of every stripper).
    assert strip_recall(f"before\n{E}\nafter") == "after"
    assert strip_recall(f"before {E} after") == " after"


def test_recall_inline_fences_keep_surrounding_text() -> None:
    assert strip_recall(f"see {B} old {E} done") == "see  done"
    # An inline opening fence must not swallow the line break after a whole-line closing fence.
    assert strip_recall(f"see {B}\nold\n{E}\nnext") == "see \nnext"


def test_recall_indented_fence_lines_removed_whole() -> None:
    text = f"a\n   {B}\nold\n\t{E}  \nb"
    assert strip_recall(text) == "a\nb"


def test_recall_tolerates_spacing_inside_fences() -> None:
    text = "a\n===  VAULT   RECALL ===\nold\n===END VAULT RECALL===\nb"
    assert strip_recall(text) == "a\nb"


def test_recall_secret_never_survives_and_no_fence_is_left() -> None:
    text = f"x\n{B}\n{B}\nold\n{E}\n{E}\n{E}\ny"
    out = strip_recall(text)
    assert "RECALL" not in out
    assert out == "x\ny"


def test_recall_without_fences_is_unchanged() -> None:
    text = "ordinary text mentioning a vault and a recall\n"
    assert strip_recall(text) == text


def pieces(*parts: str) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(parts), max_size=40).map("".join)


@given(pieces("a", "\n", " ", B, E))
def test_recall_output_never_holds_a_fence_and_is_idempotent(text: str) -> None:
    out = strip_recall(text)
    assert B not in out
    assert E not in out
    assert strip_recall(out) == out


# --------------------------------------------------------------------------- strip_private


def test_an_inline_private_span_is_stripped() -> None:
    assert strip_private("my pin is <private>1234</private>, ok") == "my pin is , ok"


def test_private_across_lines_mixed_case() -> None:
    text = "before\n<Private>\nline 1\nline 2\n</PRIVATE>\nafter\n"
    assert strip_private(text) == "before\nafter\n"


def test_private_is_not_greedy_between_blocks() -> None:
    text = "<private>one</private> public <PRIVATE>two</private>"
    assert strip_private(text) == " public "


def test_private_unclosed_removes_to_end() -> None:
    assert strip_private("keep\n<private>\nsecret\nmore") == "keep\n"
    assert strip_private("keep <PRIVATE>secret") == "keep "


def test_private_nested_does_not_leak_outer_tail() -> None:
    text = "a <private>x <private>y</private> still private</private> b"
    assert strip_private(text) == "a  b"


def test_private_tag_with_attribute_and_spaces() -> None:
    assert strip_private('a<private reason="pii">x</ private >b') == "ab"


def test_private_stray_close_dropped() -> None:
    assert strip_private("a </private> b") == "a  b"


@given(pieces("a", "\n", " ", "<private>", "</private>", "<PRIVATE>", "</Private>"))
def test_private_output_never_holds_a_tag_and_is_idempotent(text: str) -> None:
    out = strip_private(text)
    assert "private" not in out.lower()
    assert strip_private(out) == out


def test_private_lookalike_tags_untouched() -> None:
    text = "<privateKey>v</privateKey> and <private/> and <privacy>x</privacy>"
    assert strip_private(text) == text
