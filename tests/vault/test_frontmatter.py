"""vault/frontmatter: a value is read as JSON reads it (the plain-string fast path included),
else as its text; the body is everything after the closing fence, whatever it holds."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from gitvault.vault import frontmatter

# raw values as a hand-edited or forged file may hold them: quotes, escapes, controls, lists
_RAW = st.one_of(
    st.text(max_size=30).map(lambda t: f'"{t}"'),
    st.text(alphabet="ab\"\\\x01\x1f\u2028é' n", max_size=12).map(lambda t: f'"{t}"'),
    st.text(max_size=20),
    st.lists(st.text(max_size=8), max_size=3).map(json.dumps),
)


def expected(raw: str) -> object:
    raw = raw.strip()
    try:
        return json.loads(raw, parse_constant=lambda name: int("not a value"))
    except ValueError:
        return raw.strip("'\"")


@settings(max_examples=400, deadline=None)
@given(raw=_RAW, body=st.text(max_size=40))
def test_a_value_reads_as_json_reads_it_and_the_body_is_untouched(raw: str, body: str) -> None:
    if "\n" in raw or "\r" in raw:
        raw = raw.replace("\n", " ").replace("\r", " ")
    text = f"---\nkey: {raw}\nother: 1\n---\n{body}"
    meta, rest = frontmatter.parse(text)
    assert rest == body
    if raw.strip():
        assert meta["key"] == expected(raw)
    assert meta["other"] == 1
    keyed, _ = frontmatter.parse(text, frozenset({"other"}))
    assert keyed == {"other": 1}


def test_front_matter_without_a_closing_fence_is_all_body() -> None:
    for text in ("---\na: 1\n", "---\na: 1", "---\n", "--- \na: 1\n---\n"):
        assert frontmatter.parse(text) == ({}, text)
    assert frontmatter.parse("---\na: 1\n---") == ({"a": 1}, "")
    assert frontmatter.parse("---\r\na: 2\r\n---\r\nbody") == ({"a": 2}, "body")
