"""The words of search, on both sides: what a note, session or digest line is indexed as, and
what a query asks for. Plain functions over text (only `re`): the CLI's fast path loads them.

Two tokenisations of the same text, because people type both:
- words: runs of letters and digits (FTS5's unicode61 splits `src/click/core.py` into src,
  click, core, py; its Porter stemmer makes fixes/fixed/fixing one word);
- names: identifiers and paths kept whole (`click.prompt`, `core.hooksPath`,
  `test_path_is_file`, `--interactive`, `CHANGES.md`, `src/click/core.py` and its tail
  `core.py`), so a query for a qualified name finds the notes that say it, not every note whose
  file list holds its parts.

Trailers (Signed-off-by, Co-authored-by, Change-Id, …) are not indexed: they name people and
tools, never what a change is about, and in a project that signs off every commit they would
make every name in the project's history match everything.
"""

from __future__ import annotations

import re

# What a line shown to a person or an agent never carries: control characters (escape
# sequences), bidirectional overrides and line separators.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
MAX_TERMS = 12  # words a query keeps (names count as words), in the order typed

# A trailer line: `Token: value` where the token is one word of letters, digits and dashes
# (git interpret-trailers' rule), e.g. Signed-off-by, Co-authored-by, Change-Id, Reviewed-on.
_TRAILER_LINE = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,40}:\s+\S")
# Lines that are trailers wherever they stand (git.git puts a "[jc: …]" note after them).
_ALWAYS_TRAILER = re.compile(
    r"^(?:[A-Za-z][A-Za-z0-9]*-)*(?:by|id|Id|ID|on|to|cc|Cc|CC):\s+\S|^Cc:\s", re.IGNORECASE
)
# A name, whole (after the punctuation around it is trimmed): an option (-x, --long-option), or
# word characters joined by . / : :: - (click.prompt, src/click/core.py, a::b, well-known), or a
# word with an underscore (test_path_is_file, _bashcomplete). Case is kept; the index folds it.
_NAME = re.compile(r"--?[A-Za-z0-9][\w-]*|\w+(?:(?:::|[./:-])\w+)+|\w*_\w+")
# What separates the tokens a name can be: space, and punctuation no name holds.
_SEPARATOR_CHARS = r"\s,;()\[\]{}\"'`<>|=*!?"
_SEPARATORS = re.compile(f"[{_SEPARATOR_CHARS}]+")
# A whole token (between separators) holding a joint (. _ / : -): a plain word never is a name,
# so the words of a text are skipped without a Python step each.
_JOINED = re.compile(f"[^{_SEPARATOR_CHARS}._/:-]*[._/:-][^{_SEPARATOR_CHARS}]*")
_EDGE = re.compile(r"^[\W_]+|[\W_]+$")
_WORD = re.compile(r"[^\W_]+")
NAME_TOKEN_CHARS = "._/:-"  # what the names index keeps inside a token (with letters, digits, _)

# Words that never say what a change is about: English function words and the words of a
# question ("why was … removed", "how does … work", "when did … stop").
_STOP_TEXT = """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can cannot could did do does doing done down during each
    either else ever every few for from further had has have having he her here hers him his how
    i if in into is it its itself just let me might more most must my no nor not now of off on
    once only or other ought our ours out over own per same shall she should so some such than
    that the their theirs them then there these they this those through thus to too under until
    up upon us very was we were what whatever when whenever where wherever whether which while
    who whom whose why will with within without would yet you your yours
    anyone anything anybody someone something somebody thing things way ways
    get gets got getting make makes made making use uses used using
    happen happens happened one ones many much really actually currently
"""
STOPWORDS = frozenset(_STOP_TEXT.split())


_DOUBLED = re.compile(r"([b-df-hj-kmnp-rt-vx-y])\1$")  # a doubled consonant, not l, s or z


def word_forms(word: str) -> list[str]:
    """The forms a query word is matched in. Porter's stemmer leaves a doubled consonant on a
    bare word but strips it from the inflected one (add → add, added → ad; err, erred), so
    both forms of such a word are asked for."""
    forms = [word]
    for suffix in ("ed", "ing"):
        stem = word[: -len(suffix)]
        if word.endswith(suffix) and len(stem) >= 3 and _DOUBLED.search(stem):
            forms.append(stem)
    if _DOUBLED.search(word) and len(word) >= 3:
        forms.append(word + "ed")
    return forms


def strip_trailers(message: str) -> str:
    """The message without its trailer lines: the last paragraph when every line of it is a
    trailer, and anywhere a line that only a trailer looks like (Signed-off-by: …)."""
    paragraphs = message.rstrip().split("\n\n")
    if len(paragraphs) > 1:
        last = [ln for ln in paragraphs[-1].splitlines() if ln.strip()]
        if last and all(_TRAILER_LINE.match(ln) for ln in last):
            paragraphs.pop()
    kept = (ln for ln in "\n\n".join(paragraphs).splitlines() if not _ALWAYS_TRAILER.match(ln))
    return "\n".join(kept).strip()


def _trim(token: str) -> str:
    """A name without the punctuation around it (`core.py.` → core.py, `(click.echo)` →
    click.echo), an option's leading dashes kept."""
    if token.startswith("-"):
        return re.sub(r"[\W_]+$", "", token)
    return _EDGE.sub("", token)


def _as_name(token: str) -> str:
    """The name a whitespace-separated token stands for ("" when it is none): trimmed, made
    only of word characters and the joints the names index keeps, at least 3 characters."""
    name = _trim(token)
    if len(name) < 3 or not _NAME.fullmatch(name):
        return ""
    return name


def names_in(text: str) -> list[str]:
    """The identifiers, options and paths of a text, whole, in order, without repeats; a path or
    a dotted name also by its tails (src/click/core.py → click/core.py, core.py;
    click.core.Context → core.Context, Context is a word already)."""
    out: dict[str, None] = {}
    for match in _JOINED.finditer(text):
        name = _as_name(match.group())
        if not name:
            continue
        out[name] = None
        if "/" in name:  # a path: by its tails, down to the base name
            parts = name.split("/")
            for i in range(1, len(parts)):
                out["/".join(parts[i:])] = None
        elif "." in name and not name.startswith("-"):  # a dotted name: its qualified tails
            parts = name.split(".")
            for i in range(1, len(parts) - 1):
                out[".".join(parts[i:])] = None
    return list(out)


def name_tokens(names: list[str]) -> str:
    """Names (as names_in gives them: never holding a space) as the names index stores them:
    one token each, separated by spaces."""
    return " ".join(names)


class QueryTerm:
    """One thing a query asks for: a word (matched stemmed, in the words index) or a name
    (matched whole, in the names index). `parts` are the words a name splits into."""

    __slots__ = ("text", "is_name", "parts")

    def __init__(self, text: str, is_name: bool, parts: tuple[str, ...] = ()) -> None:
        self.text = text
        self.is_name = is_name
        self.parts = parts

    def __repr__(self) -> str:
        return f"QueryTerm({self.text!r}, name={self.is_name})"


def query_terms(query: str) -> list[QueryTerm]:
    """What a query searches for, in the order typed: each identifier, option or path as a name
    (and its words as words), every other word as a word; stop words and question words
    dropped unless nothing else is left; repeats dropped."""
    terms: list[QueryTerm] = []
    seen: set[tuple[str, bool]] = set()

    def add(text: str, is_name: bool, parts: tuple[str, ...] = ()) -> None:
        key = (text.lower(), is_name)
        if key not in seen:
            seen.add(key)
            terms.append(QueryTerm(text.lower(), is_name, parts))

    words: list[str] = []
    for raw in _SEPARATORS.split(query):
        if not raw:
            continue
        name = _as_name(raw)
        parts = tuple(w.lower() for w in _WORD.findall(raw))
        if name and (len(parts) > 1 or name.startswith("-") or "_" in name):
            add(name, True, parts)
        words.extend(parts)
    content = [w for w in words if w not in STOPWORDS]
    for word in content or words:
        add(word, False)
    names = [t for t in terms if t.is_name]
    plain = [t for t in terms if not t.is_name]
    return (names + plain)[:MAX_TERMS] if len(terms) > MAX_TERMS else terms
