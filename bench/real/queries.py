"""The queries: known-item queries drawn from the history itself (seeded, so the same history
and seed always give the same queries), and the natural-language question sets stored beside
this module (questions/*.json, each with gold commits found by reading the history with git).

Known-item kinds, each gold = the commit the query was drawn from:
- rare-subject: the two rarest words of a subject;
- inflected:    the same words with one inflected (fix → fixes / fixed …) to a form that the
                commit's message does not contain but the history's vocabulary does;
- body:         three rare words of the body (trailers left out) that the subject lacks;
- identifier:   a rare dotted, snake_case or camelCase name (click.prompt, core.hooksPath,
                test_path_is_file) from the message, as one query word;
- option:       a rare command-line option (--interactive) from the message;
- revert:       "revert" and the two rarest words of the reverted commit's subject; gold: the
                revert;
- file:         the base name of a file that only one or two commits ever touched.
Rarity is document frequency over the messages of the history's non-merge commits. Commits
whose subject is not unique (cherry-picks, squash copies) are never drawn: their gold would be
ambiguous.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path

from bench.real.history import Commit, History

QUESTIONS_DIR = Path(__file__).resolve().parent / "questions"
KINDS = ("rare-subject", "inflected", "body", "identifier", "option", "revert", "file")

# Words that carry no topic: English function words, and the words of a question.
_STOP_TEXT = """
    a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have haven't
    having he her here hers herself him himself his i if in into is isn't it it's its itself
    just let's me more most mustn't my myself no nor not now of off on once only or other ought
    our ours ourselves out over own same shan't she should shouldn't so some such than that
    that's the their theirs them themselves then there there's these they this those through to
    too under until up upon very was wasn't we were weren't while with won't would wouldn't you
    your yours yourself yourselves via etc e.g i.e
    what when where which who whom whose why how whether does did do is are was were will would
    can could should shall may might must ever anything something someone somebody way ways
    happen happened happens get got gets getting make made makes thing things use used using
    one ones many much"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
# A run of word characters and hyphens or apostrophes; its parts made only of letters (any
# script) are words. "koi8" or "get_data" give none: a fragment of them is nothing anyone types.
_TOKEN = re.compile(r"[\w'’-]+")
_PART = re.compile(r"['’-]")
_DOTTED = re.compile(r"(?<![\w./@:-])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w/(-]|\.\w)")
_SNAKE = re.compile(r"(?<![\w./-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![\w/.-])")
_CAMEL = re.compile(
    r"(?<![\w./-])([a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)(?![\w/.-])"
)
_OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9]*(?:-[a-z0-9]+)+|--[a-z]{3,})(?![\w=-])")
_PR_SUFFIX = re.compile(r"\s*\((?:#|!)\d+\)\s*$")
_DOMAINS = frozenset({"com", "org", "net", "io", "dev", "edu", "gov", "html", "htm", "www"})
MAX_DF = 100  # a query word in more commits than this says little about which one is meant
MAX_IDENTIFIER_DF = 3
DISTINCT_DF = 10  # a known-item query has at least one word this rare


@dataclass
class Query:
    kind: str
    words: list[str]  # as a user would type them, one argument each
    gold: list[str]  # full SHAs
    source: str  # where it came from: a commit, or a question set
    note: str = ""
    question_set: str = ""
    held_out: bool = False

    def as_json(self) -> dict[str, object]:
        return asdict(self)


def words_of(text: str) -> list[str]:
    """Topic words of a text, lower case, in order: alphabetic, 3+ letters, no stop words."""
    out = []
    for token in _TOKEN.findall(text):
        for part in _PART.split(token.lower()):
            if len(part) >= 3 and part.isalpha() and part not in STOP_WORDS:
                out.append(part)
    return out


def content_words(question: str) -> list[str]:
    """A question's content words, without repeats (for the git-log baseline)."""
    return list(dict.fromkeys(words_of(question)))


@dataclass
class Corpus:
    """Document frequencies over the history's non-merge commits."""

    history: History
    _words: dict[str, frozenset[str]] = field(default_factory=dict)

    def words(self, c: Commit) -> frozenset[str]:
        if c.sha not in self._words:
            self._words[c.sha] = frozenset(words_of(c.subject + "\n" + c.prose))
        return self._words[c.sha]

    @cached_property
    def df(self) -> Counter[str]:
        out: Counter[str] = Counter()
        for c in self.history.non_merges:
            out.update(self.words(c))
        return out

    @cached_property
    def identifier_df(self) -> Counter[str]:
        out: Counter[str] = Counter()
        for c in self.history.non_merges:
            out.update({i for _, i in self.identifiers(c)})
        return out

    @cached_property
    def subject_count(self) -> Counter[str]:
        return Counter(_subject_key(c.subject) for c in self.history.commits)

    @cached_property
    def basename_touches(self) -> Counter[str]:
        """Commits touching each base name, case folded (both searches ignore case, so
        changes.rst is no rarer than CHANGES.rst)."""
        out: Counter[str] = Counter()
        for c in self.history.non_merges:
            out.update({f.rsplit("/", 1)[-1].lower() for f in c.files})
        return out

    def touches(self, name: str) -> int:
        return self.basename_touches[name.lower()]

    def unique_subject(self, c: Commit) -> bool:
        return self.subject_count[_subject_key(c.subject)] == 1

    def rarest(self, words: Iterable[str], n: int) -> list[str]:
        """The n rarest words (none when not even the rarest is distinctive)."""
        ranked = sorted(set(words), key=lambda w: (self.df[w], w))
        picked = [w for w in ranked if self.df[w] <= MAX_DF][:n]
        return picked if picked and self.df[picked[0]] <= DISTINCT_DF else []

    def identifiers(self, c: Commit) -> list[tuple[str, str]]:
        """(shape, identifier) in a message: dotted, snake, camel names and options."""
        text = c.subject + "\n" + c.prose
        h = self.history
        out: list[tuple[str, str]] = []
        for m in _DOTTED.finditer(text):
            name = m.group(1)
            last = name.rsplit(".", 1)[-1].lower()
            if last in h.extensions or last in _DOMAINS or name in h.ever_basenames:
                continue  # a file name or a host, not an identifier
            out.append(("dotted", name))
        out += [("snake", m.group(1)) for m in _SNAKE.finditer(text)]
        out += [("camel", m.group(1)) for m in _CAMEL.finditer(text) if len(m.group(1)) >= 4]
        out += [("option", m.group(1)) for m in _OPTION.finditer(text)]
        return list(dict.fromkeys(out))


def _subject_key(subject: str) -> str:
    return _PR_SUFFIX.sub("", subject).strip().lower()


def inflections(word: str) -> list[str]:
    """Other forms of an English word, most likely first (fix → fixes, fixed, fixing)."""
    w = word
    out: list[str] = []
    if w.endswith("ies"):
        out += [w[:-3] + "y", w[:-3] + "ied"]
    elif w.endswith("ied"):
        out += [w[:-3] + "y", w[:-3] + "ies"]
    elif w.endswith("ing"):
        stem = w[:-3]
        out += [stem + "e", stem, stem + "es", stem + "s", stem + "ed", stem + "ed"]
        if len(stem) > 2 and stem[-1] == stem[-2]:
            out += [stem[:-1], stem[:-1] + "s"]
    elif w.endswith("ed"):
        stem = w[:-2]
        out += [stem + "e", stem, stem + "es", stem + "s", stem + "ing", w[:-1] + "s"]
        if len(stem) > 2 and stem[-1] == stem[-2]:
            out += [stem[:-1], stem[:-1] + "s"]
    elif w.endswith("es") and not w.endswith("ss"):
        out += [w[:-2], w[:-1], w[:-2] + "ed", w[:-1] + "d", w[:-2] + "ing"]
    elif w.endswith("s") and not w.endswith("ss"):
        out += [w[:-1], w[:-1] + "ed", w[:-1] + "ing"]
    elif w.endswith("y"):
        out += [w[:-1] + "ies", w[:-1] + "ied", w + "s"]
    elif w.endswith("e"):
        out += [w + "s", w + "d", w[:-1] + "ing"]
    else:
        out += [w + "s", w + "es", w + "ed", w + "ing"]
    return [o for o in dict.fromkeys(out) if o != w and len(o) >= 3]


def known_item(history: History, seed: int, per_kind: int) -> list[Query]:
    corpus = Corpus(history)
    pool = sorted(
        (
            c
            for c in history.non_merges
            if corpus.unique_subject(c) and c.sha not in history.reverts
        ),
        key=lambda c: c.sha,
    )
    out: list[Query] = []

    def draw(kind: str, make: Callable[[Commit], Query | None], candidates: list[Commit]) -> None:
        rng = random.Random(f"{seed}:{kind}")
        seen: set[tuple[str, ...]] = set()  # the same words drawn twice would be one query
        order = candidates[:]
        rng.shuffle(order)
        made = 0
        for c in order:
            if made >= per_kind:
                break
            q = make(c)
            if q is not None and tuple(q.words) not in seen:
                seen.add(tuple(q.words))
                out.append(q)
                made += 1

    def rare_subject(c: Commit) -> Query | None:
        ws = corpus.rarest(words_of(c.subject), 2)
        if len(ws) < 2:
            return None
        return Query("rare-subject", ws, [c.sha], c.sha, _dfs(corpus, ws))

    def inflected(c: Commit) -> Query | None:
        ws = corpus.rarest(words_of(c.subject), 2)
        if len(ws) < 2:
            return None
        own = corpus.words(c)
        for i, w in enumerate(ws):
            for form in inflections(w):
                if form not in own and corpus.df[form] >= 1:
                    query = ws[:i] + [form] + ws[i + 1 :]
                    return Query("inflected", query, [c.sha], c.sha, f"{w} → {form}")
        return None

    def body(c: Commit) -> Query | None:
        prose = words_of(c.prose)
        if len(prose) < 15:
            return None
        subject = set(words_of(c.subject))
        ws = corpus.rarest((w for w in prose if w not in subject), 3)
        if len(ws) < 3:
            return None
        return Query("body", ws, [c.sha], c.sha, _dfs(corpus, ws))

    def identifier(shapes: tuple[str, ...], kind: str) -> Callable[[Commit], Query | None]:
        def make(c: Commit) -> Query | None:
            found = [
                (corpus.identifier_df[i], i, shape)
                for shape, i in corpus.identifiers(c)
                if shape in shapes and corpus.identifier_df[i] <= MAX_IDENTIFIER_DF
            ]
            if not found:
                return None
            df, name, shape = min(found)
            return Query(kind, [name], [c.sha], c.sha, f"{shape}, in {df} commit(s)")

        return make

    def revert(c: Commit) -> Query | None:
        targets = [t for t in history.reverts.get(c.sha, []) if t in history.by_sha]
        if not targets:
            return None
        ws = corpus.rarest(words_of(history.by_sha[targets[0]].subject), 2)
        if not ws:
            return None
        return Query("revert", ["revert", *ws], [c.sha], c.sha, f"reverts {targets[0][:10]}")

    def file(c: Commit) -> Query | None:
        if len(c.files) > 3:
            return None
        names = sorted(
            {f.rsplit("/", 1)[-1] for f in c.files}, key=lambda n: (corpus.touches(n), n)
        )
        for name in names:
            if corpus.touches(name) <= 2 and len(name) >= 5:
                return Query("file", [name], [c.sha], c.sha, f"touched by {corpus.touches(name)}")
        return None

    draw("rare-subject", rare_subject, pool)
    draw("inflected", inflected, pool)
    draw("body", body, pool)
    draw("identifier", identifier(("dotted", "snake", "camel"), "identifier"), pool)
    draw("option", identifier(("option",), "option"), pool)
    reverts = sorted(
        (history.by_sha[s] for s in history.reverts if s in history.by_sha), key=lambda c: c.sha
    )
    draw("revert", revert, [c for c in reverts if not c.is_merge])
    draw("file", file, pool)
    return out


def _dfs(corpus: Corpus, words: list[str]) -> str:
    return "df " + ", ".join(f"{w}={corpus.df[w]}" for w in words)


# --------------------------------------------------------------------------- question sets


@dataclass
class QuestionSet:
    name: str
    path: Path
    root: str
    held_out: bool
    questions: list[dict[str, object]]
    kind: str = ""  # the kind its questions are scored under (default: question[-held-out])


def question_sets(directory: Path = QUESTIONS_DIR) -> list[QuestionSet]:
    out = []
    for path in sorted(directory.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        out.append(
            QuestionSet(
                name=str(data.get("name") or path.stem),
                path=path,
                root=str(data["root"]),
                held_out=bool(data.get("held_out")),
                questions=list(data["questions"]),
                kind=str(data.get("kind") or ""),
            )
        )
    return out


def questions_for(
    history: History, directory: Path = QUESTIONS_DIR
) -> tuple[list[Query], list[str]]:
    """The questions of every set written for this history (its root commit), and problems
    found in them (a gold commit the history does not have)."""
    out: list[Query] = []
    problems: list[str] = []
    for qs in question_sets(directory):
        if qs.root not in history.roots:
            continue
        for item in qs.questions:
            text = str(item["q"])
            gold = [str(g) for g in item["gold"]]  # type: ignore[attr-defined]
            full = [history.resolve(g) for g in gold]
            missing = [
                g for g, f in zip(gold, full, strict=True) if f is None or f not in history.by_sha
            ]
            if missing:
                problems.append(f"{qs.name}: {text!r}: gold {', '.join(missing)} not on HEAD")
                continue
            words = text.rstrip("?").split()
            out.append(
                Query(
                    qs.kind or ("question-held-out" if qs.held_out else "question"),
                    words,
                    [f for f in full if f],
                    qs.path.name,
                    str(item.get("why", "")),
                    question_set=qs.name,
                    held_out=qs.held_out,
                )
            )
    return out, problems
