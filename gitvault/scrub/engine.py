"""The secret filter's engine: find every rule's values in a text and replace each with
``[REDACTED:<kind>]`` (the rules are gitvault.scrub.rules).

Rules run in the order of the table; where two rules find overlapping values the union is
replaced by one marker named after the earlier rule. A rule is tried only on the stretches of
text around one of its literals. Markers already in the text (``[REDACTED:…]``) are never
redacted again, so scrubbing scrubbed text changes nothing.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterator
from itertools import chain

from gitvault import lazyre
from gitvault.named import NamedTuple
from gitvault.scrub.rules import (
    FINDERS,
    LINES,
    MASKED,
    PUBLIC,
    PUBLIC_LITERALS,
    RULES,
    TEXT,
    Rule,
    Span,
)

TYPE_CHECKING = False  # (as gitvault.named: mypy takes it as true, typing is not imported)
if TYPE_CHECKING:
    from ahocorasick_rs import AhoCorasick


class Scrubbed:
    """How many secrets of one kind were replaced; immutable. (Plain classes, not dataclasses,
    here: the session-start hook redacts, and dataclasses costs every hook an `inspect`.)"""

    __slots__ = ("kind", "count")
    kind: str
    count: int

    def __init__(self, kind: str, count: int) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "count", count)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Scrubbed is immutable: cannot set {name}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scrubbed) and (self.kind, self.count) == (
            other.kind,
            other.count,
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.count))

    def __repr__(self) -> str:
        return f"Scrubbed(kind={self.kind!r}, count={self.count!r})"


_MARKER = lazyre.compile(r"\[REDACTED:[^\]\n]*\]")


_MAX_WINDOWS = 64  # more literal hits than this: scan the whole text
_SHORTEST_RUN = min(rule.run for rule in RULES if rule.run)  # (see _Scan.runs)
_NO_HITS: list[int] = []  # (shared: never appended to)


class _Literals(NamedTuple):
    """What the rules' literals say about a text, known once: every literal longer than one
    character and every context word, by haystack (the folded ones are looked for in the
    lower-cased text); which rules name each literal."""

    folded: tuple[str, ...]
    exact: tuple[str, ...]
    rules_of: dict[tuple[str, bool], tuple[int, ...]]  # a literal: the rules that name it
    chars: tuple[tuple[str, bool, tuple[int, ...]], ...]  # a one-character literal: its rules
    always: tuple[int, ...]  # the rules with the empty literal (every text)


@functools.cache
def _literals() -> _Literals:
    words: dict[bool, set[str]] = {True: set(), False: set()}
    rules_of: dict[tuple[str, bool], list[int]] = {}
    for index, rule in enumerate(RULES):
        words[rule.folded].update(literal for literal in rule.literals if len(literal) > 1)
        words[True].update(rule.context)
        for literal in rule.literals:
            rules_of.setdefault((literal, rule.folded), []).append(index)
    return _Literals(
        tuple(sorted(words[True])),
        tuple(sorted(words[False])),
        {key: tuple(rules) for key, rules in rules_of.items() if len(key[0]) > 1},
        tuple((c, f, tuple(rules)) for (c, f), rules in rules_of.items() if len(c) == 1),
        tuple(sorted({*rules_of.get(("", False), []), *rules_of.get(("", True), [])})),
    )


@functools.cache
def _automata() -> tuple[AhoCorasick, AhoCorasick]:
    """The literals of ``_literals`` in one Aho-Corasick automaton per haystack (folded,
    exact), as DFAs: a 2 KB note is searched in 0.013 ms (``str.find`` of each literal in
    turn: ~0.3 ms). (A single character is left to ``str.find``, a ``memchr``: ``/`` ``.``
    ``-`` ``:`` alone made six in seven of the automata's matches in a note.)"""
    from ahocorasick_rs import AhoCorasick, Implementation  # (imported here: see _BY_FIND)

    literals = _literals()
    return (
        AhoCorasick(literals.folded, implementation=Implementation.DFA),
        AhoCorasick(literals.exact, implementation=Implementation.DFA),
    )


# Characters a process scans by ``str.find`` before it builds the automata: importing
# ahocorasick_rs and building them costs ~3 ms (~12 M instructions), what ``str.find`` spends
# on ~18,000 characters; a hook that scrubs one short text never builds them. (A list: the
# budget left, shared by every scan of the process.)
_BY_FIND = [16_384]


class _Scan:
    """What the rules share about one text: its lower-cased form, where each literal occurs
    (every literal of every rule found at once, in one pass over the text and one over its
    lower-cased form once the process has scanned enough to pay for ``_automata``), where its
    lines start."""

    __slots__ = ("text", "lower", "exact", "_hits", "_chars", "_windows", "_runs", "_lines")

    def __init__(self, text: str) -> None:
        self.text = text
        self.lower = text.lower()
        self.exact = len(self.lower) == len(text)  # lower-casing kept every position (no İ)
        self._hits: dict[tuple[str, bool], list[int]] | None = None
        self._chars: dict[tuple[str, bool], list[int]] = {}
        self._windows: dict[tuple[str, bool], list[Span]] = {}
        self._runs: dict[int, list[Span]] = {}
        self._lines: list[int] | None = None

    def hits(self, literal: str, folded: bool) -> list[int]:
        """Where ``literal`` occurs (a rule's literal or context word; in the lower-cased text
        when ``folded``), at most ``_MAX_WINDOWS + 1`` times (more: everywhere)."""
        if len(literal) == 1:
            return self._char_hits(literal, folded)
        table = self._hits
        return (self._table() if table is None else table).get((literal, folded), _NO_HITS)

    def _table(self) -> dict[tuple[str, bool], list[int]]:
        """Where each literal longer than one character occurs (found once for every rule:
        by the automata, or by ``str.find`` while the process has scanned little, _BY_FIND)."""
        table = self._hits
        if table is not None:
            return table
        table = self._hits = {}
        literals = _literals()
        if len(self.text) < _BY_FIND[0]:
            _BY_FIND[0] -= len(self.text)
            return self._found_by_find(table, literals)
        try:
            for haystack, automaton, folded, words in (
                (self.lower, _automata()[0], True, literals.folded),
                (self.text, _automata()[1], False, literals.exact),
            ):
                for index, start, _ in automaton.find_matches_as_indexes(haystack, True):
                    key = (words[index], folded)
                    where = table.get(key)
                    if where is None:
                        table[key] = [start]
                    elif len(where) <= _MAX_WINDOWS:
                        where.append(start)
        except UnicodeEncodeError:
            # A lone surrogate (git's undecodable bytes, or a hostile text) is no UTF-8 the
            # automata can take: str.find reads any str.
            table.clear()
            return self._found_by_find(table, literals)
        return table

    def _found_by_find(
        self, table: dict[tuple[str, bool], list[int]], literals: _Literals
    ) -> dict[tuple[str, bool], list[int]]:
        for haystack, folded, words in (
            (self.lower, True, literals.folded),
            (self.text, False, literals.exact),
        ):
            for word in words:
                at = haystack.find(word)
                if at != -1:
                    found = table[word, folded] = []
                    while at != -1 and len(found) <= _MAX_WINDOWS:
                        found.append(at)
                        at = haystack.find(word, at + 1)
        return table

    def live(self) -> list[int]:
        """The rules one of whose literals occurs, in the table's order (the others cannot
        match: they are not looked at)."""
        literals = _literals()
        live = set(literals.always)
        for key in self._table():
            live.update(literals.rules_of.get(key, ()))
        for char, folded, rules in literals.chars:
            if char in (self.lower if folded else self.text):
                live.update(rules)
        return sorted(live)

    def _char_hits(self, char: str, folded: bool) -> list[int]:
        found = self._chars.get((char, folded))
        if found is None:
            haystack = self.lower if folded else self.text
            found = self._chars[char, folded] = []
            at = haystack.find(char)
            while at != -1 and len(found) <= _MAX_WINDOWS:
                found.append(at)
                at = haystack.find(char, at + 1)
        return found

    def has(self, literal: str, folded: bool) -> bool:
        """Whether ``literal`` occurs (the empty literal: always)."""
        if len(literal) == 1:
            return literal in (self.lower if folded else self.text)
        return not literal or bool(self.hits(literal, folded))

    def next_line(self, line: int) -> int:
        """The first line after ``line`` holding more than spaces (a match's whitespace may
        bridge blank lines), or the last line."""
        starts, text = self.line_starts(), self.text
        last = len(starts) - 2
        nxt = line + 1
        while nxt < last and not text[starts[nxt] : starts[nxt + 1] - 1].strip():
            nxt += 1
        return min(nxt, last)

    def line_windows(self, literal: str, folded: bool) -> list[Span]:
        """The lines holding ``literal``, each with the next line that is not blank, joined
        where they meet (``Rule.reach`` ``LINES``); the same list for every rule naming it."""
        key = (literal, folded)
        windows = self._windows.get(key)
        if windows is None:
            starts, size = self.line_starts(), len(self.text)
            windows = self._windows[key] = []
            last = -1
            for at in self.hits(literal, folded):
                line = bisect.bisect_right(starts, at) - 1
                if line == last:
                    continue
                last = line
                start, end = starts[line], min(size, starts[self.next_line(line) + 1])
                if windows and start <= windows[-1][1]:
                    windows[-1] = (windows[-1][0], max(windows[-1][1], end))
                else:
                    windows.append((start, end))
        return windows

    def runs(self, size: int) -> list[Span]:
        """The stretches of ``size`` or more characters without whitespace (``Rule.run``)."""
        found = self._runs.get(size)
        if found is None:
            shortest = self._runs.get(_SHORTEST_RUN)
            if shortest is None:
                text, at = self.text, 0
                shortest = self._runs[_SHORTEST_RUN] = []
                for word in text.split():
                    if len(word) >= _SHORTEST_RUN:  # (its first occurrence from here is
                        at = text.find(word, at)  # itself: each word before it is shorter or
                        shortest.append((at, at + len(word)))  # already passed)
                        at += len(word)
            found = self._runs[size] = [run for run in shortest if run[1] - run[0] >= size]
        return found

    def line_starts(self) -> list[int]:
        if self._lines is None:
            text = self.text
            starts = [0]
            at = text.find("\n")
            while at != -1:
                starts.append(at + 1)
                at = text.find("\n", at + 1)
            starts.append(len(text) + 1)  # (past the end: the last line's end)
            self._lines = starts
        return self._lines


def _windows(scan: _Scan, rule: Rule) -> list[Span]:
    """The stretches of the text to scan for ``rule`` (see ``Rule.reach``): the union of the
    windows around each literal's occurrences; [] when none occurs."""
    found = [scan.hits(literal, rule.folded) for literal in rule.literals]
    total = sum(map(len, found))
    if total > _MAX_WINDOWS:
        return [(0, len(scan.text))]
    if not total:
        return []
    if rule.reach == LINES:  # each literal's lines (found once for every rule naming it)
        lines = [
            scan.line_windows(literal, rule.folded)
            for literal, where in zip(rule.literals, found, strict=True)
            if where
        ]
        return lines[0] if len(lines) == 1 else _union(sorted(chain.from_iterable(lines)))
    hits: list[int] = []
    widths: dict[int, int] = {}
    for literal, where in zip(rule.literals, found, strict=True):
        for at in where:
            hits.append(at)
            widths[at] = max(widths.get(at, 0), len(literal))
    hits.sort()
    size = len(scan.text)
    windows: list[Span] = []
    for at in hits:  # a match's lookahead may look one character past its end
        start, end = max(0, at - rule.reach), min(size, at + widths[at] + rule.reach + 1)
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(windows[-1][1], end))
        else:
            windows.append((start, end))
    return windows


# Where a value may have been split: a string closed and reopened ("ghp_ab" + "cd…",
# "ab"\n"cd" in Python, 'ab' || 'cd' in SQL), a shell line continued with a backslash, a long
# token wrapped onto the next line (a line holding only a token, the next one starting with
# one: a terminal, a 76-column base64 file, a quoted e-mail's "> "; only the line break is
# the join). Two patterns, searched side by side as one alternation would be (``_joins``): one that
# starts with a quote or a backslash, so that the regex engine skips to those characters, and
# the wrapped token's line. (As one alternation, no first character is known: 0.15 ms of a
# 2 KB note went to trying it at every position.)
_JOIN_QUOTED = lazyre.compile(
    r"""(?P<q>['"\\])(?:(?<=['"])(?:"""
    r"""[ \t]*(?:\+|\|\||\.)?[ \t]*\\?\r?\n[ \t]*(?:\+[ \t]*)?(?P=q)"""
    r"""|[ \t]*(?:\+|\|\|)[ \t]*(?P=q)"""
    r"""|[ \t]*,[ \t]*(?P<comma>(?P=q)))"""
    r"""|(?<=\\)\r?\n[ \t]*)"""
)
_JOIN_CUT = lazyre.compile(
    r"""(?m:^[ \t>]*[\w+/.-]{12,}=*(?P<cut>\r?\n[ \t]*(?:>[ \t]*)?)"""
    r"""(?=[\w+/.-]{6,}=*(?:[ \t]|$)))"""
)


def _joins(text: str) -> Iterator[tuple[Span, bool]]:
    """Each join in ``text`` as ``(the span taken out, whether it closes a string before a
    comma)``, left to right, none overlapping the one before: what ``finditer`` of the two
    patterns as one alternation (the quoted first) would find."""
    quoted, cut = _JOIN_QUOTED.search(text), _JOIN_CUT.search(text)
    while quoted is not None or cut is not None:
        if cut is None or quoted is not None and quoted.start() <= cut.start():
            assert quoted is not None
            yield quoted.span(), quoted["comma"] is not None
            end = quoted.end()
        else:
            yield cut.span("cut"), False
            end = cut.end()
        if quoted is not None and quoted.start() < end:
            quoted = _JOIN_QUOTED.search(text, end)
        if cut is not None and cut.start() < end:
            cut = _JOIN_CUT.search(text, end)


def _joined(
    text: str, alone: list[tuple[int, int, int]], prefilter: bool = True
) -> list[tuple[int, int, int]]:
    """Secrets found only once the pieces of a split value are put back together, as
    ``(start, end, rule)`` spans of ``text`` that cover every piece and what joins them.
    ``alone``: what the rules found in ``text`` as it is (see ``_a_word_before``)."""
    pieces: list[str] = []
    junctions: list[int] = []  # where in the joined text each piece after the first starts
    shifts: list[int] = []  # and how far that piece stands further on in text
    length = last = 0
    for cut, comma in _joins(text):
        if cut[0] < last or comma and not _joins_a_list(text, cut[0]):
            continue
        pieces.append(text[last : cut[0]])
        length += cut[0] - last
        junctions.append(length)
        shifts.append(cut[1] - length)
        last = cut[1]
    if not junctions:
        return []
    pieces.append(text[last:])
    joined = "".join(pieces)

    def where(at: int) -> int:  # the position in text of the joined text's character at
        piece = bisect.bisect_right(junctions, at)
        return at + shifts[piece - 1] if piece else at

    out: list[tuple[int, int, int]] = []
    windows: list[list[int]] = []  # only the stretch around each join is scanned again
    for at in junctions:
        start, end = max(0, at - _JOIN_REACH), min(len(joined), at + _JOIN_REACH)
        if windows and start <= windows[-1][1]:
            windows[-1][1] = end
        else:
            windows.append([start, end])
    ends = {(start, end) for start, end, _ in alone}
    for low, high in windows:
        for start, end, index in _found(joined[low:high], prefilter):
            start, end = start + low, end + low
            crossed = [at for at in junctions if start < at < end]
            if not crossed:
                continue  # within one piece: found (or not) in the text as it is
            span = (where(start), where(end - 1) + 1)
            if len(crossed) == 1 and _a_word_before(text, span, where(crossed[0] - 1) + 1, ends):
                continue
            out.append((*span, index))
    return out


# a piece a wrapped token's head almost never is: no digit, no capital after its first letter
# (random base64url of 12 characters is like this once in ~10,000)
_PLAIN_PIECE = lazyre.compile(r"[A-Za-z]?[a-z_./+-]*")


def _a_word_before(text: str, span: Span, cut: int, ends: set[Span]) -> bool:
    """The value a join made is a word on the line before a secret that stands whole on its
    own (``configuration`` above a ``ghp_…`` line): the piece after the join is a value the
    rules found in the text as it is, ending where the joined value ends, and the piece before
    it is plain; what the join adds is no part of a secret."""
    after = cut + len(text[cut : span[1]]) - len(text[cut : span[1]].lstrip(" \t\r\n>"))
    return (after, span[1]) in ends and _PLAIN_PIECE.fullmatch(text, span[0], cut) is not None


def _joins_a_list(text: str, at: int) -> bool:
    """A list of strings is one value only when its line joins it (``''.join([...])``,
    ``[...].join("")``, Terraform's ``join("", [...])``, Go's ``strings.Join``)."""
    start, end = text.rfind("\n", 0, at) + 1, text.find("\n", at)
    return "join" in text[start : len(text) if end == -1 else end].lower()


_JOIN_REACH = 240  # characters either side of a join: a split value is shorter than this


def secret_spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of every secret value in ``text``, merged and in text order.

    Overlapping values become one span named after the earliest rule; a value overlapping a
    ``[REDACTED:…]`` marker is left alone. A value split over lines or concatenated from
    string pieces (see ``_joins``) is found as one and redacted with what joins its pieces.
    """
    found = _found(text)
    found += _joined(text, found)
    return _merged(text, found)


def reference_spans(text: str) -> list[tuple[int, int, str]]:
    """``secret_spans`` without any prefilter: every rule's plain pattern (not ``gated``) over
    the whole text, whatever literals it holds (a rule's context words still decide whether it
    applies). What the
    prefilters must not change (tests compare the two on every corpus and on corpus texts run
    together; bench/secrets measures what the prefilters save)."""
    found = _found(text, prefilter=False)
    found += _joined(text, found, prefilter=False)
    return _merged(text, found)


def _found(text: str, prefilter: bool = True) -> list[tuple[int, int, int]]:
    scan = _Scan(text)
    found: list[tuple[int, int, int]] = []
    for index in scan.live() if prefilter else range(len(RULES)):
        rule = RULES[index]
        if rule.context:  # part of the rule: it applies only to a text holding one of these
            for word in rule.context:
                if scan.hits(word, True):
                    break
            else:
                continue
        if not prefilter:
            windows = [(0, len(text))]
        elif not (windows := _prefiltered(scan, rule)):
            continue
        pattern = rule.gated if prefilter and rule.gated is not None else rule.pattern
        for start, end in windows:
            at = start
            while at < end and (match := pattern.search(text, at, end)) is not None:
                # a match that is not a secret may hide one that starts inside it (``config:
                # MASTER_KEY=…`` is no assignment to config): look again one character on
                at = match.start() + 1
                if (
                    rule.after is not None
                    and match.start()
                    and rule.after.match(text, match.start() - 1)
                ):
                    continue  # glued to the word before it: not a token
                span = match.span("secret") if rule.span_of is None else rule.span_of(match)
                if span is None:
                    continue
                at = max(at, match.end())
                for low, high in span if isinstance(span, list) else (span,):
                    if low < high:
                        found.append((low, high, index))
    return found


def _union(spans: list[Span]) -> list[Span]:
    """Sorted spans, those that overlap or touch joined."""
    out = [spans[0]]
    for start, end in spans[1:]:
        if start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _prefiltered(scan: _Scan, rule: Rule) -> list[Span]:
    """The stretches of the text where ``rule`` can match: [] when every literal is missing,
    else the windows around its literals (see ``Rule.reach``), or its long tokens (``run``)."""
    if rule.reach == TEXT or (rule.folded and not scan.exact):  # (`lower` positions differ)
        for literal in rule.literals:
            if scan.has(literal, rule.folded):
                return scan.runs(rule.run) if rule.run else [(0, len(scan.text))]
        return []  # none of the rule's literals: skip it
    return _windows(scan, rule)


def _merged(text: str, found: list[tuple[int, int, int]]) -> list[tuple[int, int, str]]:
    if not found:
        return []
    markers = [m.span() for m in _MARKER.finditer(text)] if "[REDACTED:" in text else []
    if markers:
        found = [
            (s, e, i)
            for s, e, i in found
            if not any(s < m_end and m_start < e for m_start, m_end in markers)
        ]
    public = _public(text)
    found = [
        (s, e, i)
        for s, e, i in found
        if not MASKED.fullmatch(text, s, e)
        and not any(low <= s and e <= high for low, high in public)
    ]
    if not found:
        return []
    found.sort()
    merged: list[list[int]] = []
    for start, end, index in found:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], end)
            last[2] = min(last[2], index)
        else:
            merged.append([start, end, index])
    return [(start, end, RULES[index].kind) for start, end, index in merged]


def _public(text: str) -> list[Span]:
    """The stretches of ``text`` that are public material (``rules.PUBLIC``): a value found
    wholly inside one is kept. Looked for only in a text where a rule found something."""
    for literal in PUBLIC_LITERALS:
        if literal in text:
            return [match.span() for match in PUBLIC.finditer(text)]
    return []


FINDERS.append(secret_spans)  # what base64_secret and urlencoded_secret ask of decoded text


def _apply(text: str, spans: list[tuple[int, int, str]], counts: dict[str, int]) -> str:
    pieces: list[str] = []
    at = 0
    for start, end, kind in spans:
        pieces += [text[at:start], f"[REDACTED:{kind}]"]
        counts[kind] = counts.get(kind, 0) + 1
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


_ORDER = {rule.kind: index for index, rule in enumerate(RULES)}


def scrub_secrets(text: str) -> tuple[str, list[Scrubbed]]:
    """Replace each secret with ``[REDACTED:<kind>]``; return the text and counts per kind.

    Kinds are reported in rule order (the docstring's tables), only those found. The result is
    a fixed point: a token that only became one when its neighbour turned into a marker
    (``hf_…`` glued to a PEM header) is redacted too, so scrubbing the result changes nothing.
    """
    counts: dict[str, int] = {}
    for _ in range(8):  # each pass removes unredacted text, so this ends; 1 pass in practice
        spans = secret_spans(text)
        if not spans:
            break
        text = _apply(text, spans, counts)
    found = sorted(counts.items(), key=lambda item: _ORDER[item[0]])
    return text, [Scrubbed(kind, count) for kind, count in found]
