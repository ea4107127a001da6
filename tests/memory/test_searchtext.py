"""How search cuts text into words and names, on both sides (what a note is indexed as, what a
query asks for): names kept whole with their tails, trailers dropped, question words dropped."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gitvault.memory import searchtext


def test_identifiers_options_and_paths_are_names_with_their_tails() -> None:
    text = (
        "Use click.prompt and core.hooksPath; test_path_is_file in t/test-lib.sh, "
        "add --interactive, see (CHANGES.md)."
    )
    names = searchtext.names_in(text)
    for whole in ("click.prompt", "core.hooksPath", "test_path_is_file", "--interactive"):
        assert whole in names
    assert "CHANGES.md" in names  # the parentheses and full stop around it trimmed
    assert "t/test-lib.sh" in names and "test-lib.sh" in names  # a path by its base name too
    assert not {"Use", "and", "see"} & set(names)  # plain words are the words index's


def test_a_path_is_found_by_every_tail_and_a_dotted_name_by_its_qualified_tails() -> None:
    assert searchtext.names_in("src/click/core.py") == [
        "src/click/core.py",
        "click/core.py",
        "core.py",
    ]
    assert searchtext.names_in("click.core.Context") == ["click.core.Context", "core.Context"]


def test_trailers_are_not_text() -> None:
    message = (
        "Teach the parser to stop early\n\n"
        "The old loop read the whole file.\n\n"
        "Signed-off-by: Ann Dev <ann@example.com>\n"
        "Co-authored-by: Bob Dev <bob@example.com>\n"
        "Change-Id: I0123456789abcdef"
    )
    kept = searchtext.strip_trailers(message)
    assert kept == "Teach the parser to stop early\n\nThe old loop read the whole file."


def test_a_sign_off_among_other_lines_is_dropped_and_a_colon_in_prose_is_kept() -> None:
    message = (
        "Fix the reader\n\nNote: this keeps the old format.\n\n"
        "Signed-off-by: Ann Dev <ann@example.com>\n[jc: reworded]\n"
        "Signed-off-by: Junio <j@example.com>"
    )
    kept = searchtext.strip_trailers(message)
    assert "Signed-off-by" not in kept and "Ann Dev" not in kept and "Junio" not in kept
    assert "Note: this keeps the old format." in kept  # not the last paragraph: prose


def test_a_question_asks_for_its_content_words_and_its_names() -> None:
    terms = searchtext.query_terms("Why was add --interactive rewritten in C?")
    assert [(t.text, t.is_name) for t in terms] == [
        ("--interactive", True),
        ("add", False),
        ("interactive", False),
        ("rewritten", False),
        ("c", False),
    ]


def test_a_query_of_only_stop_words_keeps_them_and_repeats_are_dropped() -> None:
    assert [t.text for t in searchtext.query_terms("where where is it")] == ["where", "is", "it"]


def test_a_long_query_keeps_its_names_first() -> None:
    words = " ".join(f"word{i}" for i in range(20))
    terms = searchtext.query_terms(f"{words} core.hooksPath")
    assert len(terms) == searchtext.MAX_TERMS
    assert terms[0].text == "core.hookspath" and terms[0].is_name


def test_word_forms_cover_porters_doubled_consonant() -> None:
    from gitvault.memory.searchtext import word_forms

    assert word_forms("added") == ["added", "add"]
    assert word_forms("adding") == ["adding", "add"]
    assert word_forms("add") == ["add", "added"]
    assert word_forms("passed") == ["passed"]  # s, l and z stay doubled: one stem already
    assert word_forms("parser") == ["parser"]


_CHARS = list("ab1_.-/: ,;()[]\"'`<>|=*!?\n\t\u00e9\u2003")  # joints, separators, words


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from(_CHARS), max_size=60))
def test_names_are_found_in_the_tokens_a_text_splits_into(text: str) -> None:
    """The names a text holds are those of its separator-delimited tokens that hold a joint
    (the index finds them with one regular expression; this is the plain definition)."""
    tokens = [t for t in searchtext._SEPARATORS.split(text) if set(t) & set("._/:-")]
    expected: dict[str, None] = {}
    for token in tokens:
        assert searchtext._JOINED.fullmatch(token)
        name = searchtext._as_name(token)
        if name:
            expected[name] = None
    whole = [n for n in searchtext.names_in(text) if n in expected]
    assert whole == list(expected)
    # and nothing else: every other name is a tail of one of them
    for extra in set(searchtext.names_in(text)) - set(expected):
        assert any(n.endswith(("/" + extra, "." + extra)) for n in expected), extra
