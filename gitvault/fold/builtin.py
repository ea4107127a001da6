"""The builtin merger: deterministic and offline. It writes the digest from everything the vault
knows at the fold's read tip, not from commit subjects sorted by their first word:

- Sessions are first-class. Every session's Key Decisions are kept until a newer one supersedes
  them (the same decision restated, or a reversal: "instead of", "replace", "no longer", …);
  newest session first, each session's bullets in the order they were written, so a cap drops
  the oldest. Gotchas from every session, restated ones once. Next steps: the open ones of the
  newest session of every branch (a parallel worktree's task stays), minus those a later commit
  or session shows as done.
- History is mined (gitvault.fold.mine): conventions (commit style, where tests live, files
  that change together), gotchas (reverts that stand, fix-after-fix hot spots), state (recent
  activity by branch and area, worktrees, the latest release from the tags), architecture
  (where the code lives, the most-changed files), only about paths that exist now. Each line
  cites the commits that show it and says it was mined from history, so an agent can weigh it;
  a person's fact (a session's) on the same subject outranks it: the mined line is left out.

The digest is a function of the items it covers (notes and sessions up to the read tip) and of
the repository now (HEAD's files, tags), so an incremental fold equals a rebuild over the same
items at the same HEAD. The current digest's lines are
kept only when a model wrote it (a fallback fold must not wipe a model's digest): then they
follow the sessions' facts, and `base_merger` in the front matter says so.

Digests it writes say `merger: builtin` so nobody mistakes them for a model's work.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from gitvault.fold import digest as digest_mod
from gitvault.fold import mine
from gitvault.fold.digest import Digest
from gitvault.fold.history import View
from gitvault.fold.items import Item
from gitvault.fold.merger import MergeContext, MergerFailed
from gitvault.fold.mine import Fact
from gitvault.fold.truth import Ground
from gitvault.memory import sections
from gitvault.scrub.engine import scrub_secrets
from gitvault.vault.config import VaultConfig

NAME = "builtin"
FACT_CHARS = 220
# The categories by position in the configured list (a renamed category keeps its slot).
ARCHITECTURE, DECISIONS, CONVENTIONS, GOTCHAS, STATE, NEXT = range(6)
_DONE_SECTIONS = ("summary", "done", "completed", "key decisions", "decisions", "state")
_STOP_WORDS = """the and for with that this from into onto when then than them they their there what
    which while will would should could must have has had was were are not but all any each
    every use uses used using only also just more most some such very our out its it's via per
    now new one two get gets set sets make makes made add adds added keep keeps kept before after
    instead rather"""
_STOP = frozenset(_STOP_WORDS.split())
_REVERSAL = re.compile(
    r"\b(?:instead of|no longer|replac\w*|switch\w* (?:from|to|back)|revert\w*|drop\w*|"
    r"abandon\w*|rather than|revers\w*|undo|supersed\w*|stop using|move away from|"
    r"back to|not use|don't use|do not use)\b",
    re.I,
)
_DONE_MARK = re.compile(r"^\s*(?:\[x\]|~~|done[:\s]|✓|✔)", re.I)
_INLINE_CITE = re.compile(r"\b([cs]):(?=[A-Za-z0-9])")
_TRAILING_CITES = re.compile(r"\s*\(\s*[cs]:[^)]*\)\s*$")


def tokens(text: str) -> frozenset[str]:
    words = re.findall(r"[a-z0-9][a-z0-9_./-]*[a-z0-9]|[a-z0-9]", text.lower())
    out = set()
    for word in words:
        if len(word) < 3 or word in _STOP:
            continue
        if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.add(word)
    return frozenset(out)


def similar(a: frozenset[str], b: frozenset[str]) -> bool:
    """The same fact in other words: most significant words shared."""
    if not a or not b:
        return False
    shared = len(a & b)
    return shared / len(a | b) >= 0.5 or (shared >= 4 and shared >= 0.75 * min(len(a), len(b)))


def supersedes(newer: str, older: str) -> bool:
    """Whether a newer decision replaces an older one: restated, or reversed ("use X instead
    of Y" after "use Y")."""
    a, b = tokens(newer), tokens(older)
    if similar(a, b):
        return True
    shared = len(a & b)
    return bool(_REVERSAL.search(newer)) and shared >= 2 and shared >= 0.4 * len(b)


def _clean(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    while _TRAILING_CITES.search(text):
        text = _TRAILING_CITES.sub("", text).strip()  # never copy foreign citations
    text = _INLINE_CITE.sub(r"\1: ", text)  # "c:abc" in prose is no citation
    text = text.rstrip(".").strip()
    if len(text) > FACT_CHARS:
        text = text[: FACT_CHARS - 1].rstrip() + "…"
    return text


def render_line(fact: Fact) -> str:
    mined = f"; {mine.MINED}" if fact.mined else ""
    return f"- {_clean(fact.text)}{mined} ({', '.join(fact.cites)})"


@dataclass
class _Session:
    slug: str
    cite: str
    title: str
    when: int
    branch: str
    mode: str
    found: dict[str, str] = field(default_factory=dict)

    def bullets(self, *names: str) -> list[str]:
        out: list[str] = []
        for name in names:
            out += sections.bullets(self.found.get(name, ""))
        return [b for b in out if b.strip()]


def _sessions(items: Iterable[Item]) -> list[_Session]:
    """Sessions oldest first (by saved_at, then slug)."""
    out = []
    for item in items:
        if item.kind != "session":
            continue
        # redacted as a whole before any line is cut out of it, squeezed or wrapped into a
        # digest line: a secret split over lines is only found while they are still together
        found = sections.split_sections(scrub_secrets(item.body or item.text)[0])
        out.append(
            _Session(
                slug=item.cite[2:],
                cite=item.cite,
                title=str(item.meta.get("title") or item.cite[2:]),
                when=item.when,
                branch=str(item.meta.get("branch") or ""),
                mode=str(item.meta.get("mode") or "manual"),
                found=found,
            )
        )
    return sorted(out, key=lambda s: (s.when, s.slug))


class _Category:
    """Lines of one category in priority order, without restatements."""

    def __init__(self) -> None:
        self.facts: list[tuple[Fact, frozenset[str]]] = []

    def add(self, fact: Fact, *, against: list[frozenset[str]] | None = None) -> bool:
        """Add a fact unless it restates one already here. Mined facts are written from
        templates, so among themselves only the exact text counts as a restatement."""
        words = tokens(fact.text)
        text = _clean(fact.text)
        if not text or any(_clean(f.text) == text for f, _ in self.facts):
            return False
        if fact.keep_text:
            pool = [w for _, w in self.facts] + (against or [])
        else:
            pool = [w for f, w in self.facts if f.keep_text]
        if any(similar(words, other) for other in pool):
            return False
        self.facts.append((fact, words))
        return True

    def lines(self) -> list[str]:
        return [render_line(f) for f, _ in self.facts]

    def words(self) -> list[frozenset[str]]:
        return [w for _, w in self.facts]


def _decisions(sessions: list[_Session]) -> list[Fact]:
    """Every session's decisions, newest session first, in written order within a session;
    an older decision a newer one supersedes is gone."""
    kept: list[Fact] = []
    for session in reversed(sessions):
        mine_now: list[Fact] = []
        for bullet in session.bullets("key decisions", "decisions"):
            if any(supersedes(k.text, bullet) for k in kept + mine_now):
                continue
            mine_now.append(Fact(bullet, (session.cite,), session.when, keep_text=True))
        kept += mine_now
    return kept


def _newest_first(sessions: list[_Session], *names: str) -> list[Fact]:
    out: list[Fact] = []
    for session in reversed(sessions):
        out += [Fact(b, (session.cite,), session.when, True) for b in session.bullets(*names)]
    return out


def _open_steps(sessions: list[_Session], mined: View) -> list[Fact]:
    """The newest session of every branch: its next steps, in written order, minus the ones
    a later commit or session shows as done. Newest branch first; labelled when several."""
    newest: dict[str, _Session] = {}
    for session in sessions:  # oldest first: the last one per branch wins
        if session.bullets("next steps"):
            newest[session.branch] = session
    ordered = sorted(newest.values(), key=lambda s: (s.when, s.slug), reverse=True)
    label = len(ordered) > 1
    out: list[Fact] = []
    for session in ordered:
        evidence: list[frozenset[str]] = [
            tokens(f"{c.subject} {c.first_line}") for c in mined.since(session.when)
        ]
        for later in sessions:
            if later.when > session.when or (later.when == session.when and later is not session):
                evidence += [tokens(b) for b in later.bullets(*_DONE_SECTIONS)]
                evidence += [tokens(later.title)]
        for step in session.bullets("next steps"):
            if _DONE_MARK.match(step) or _done(tokens(step), evidence):
                continue
            where = f"[{session.branch or 'unknown branch'}] " if label else ""
            out.append(Fact(where + step, (session.cite,), session.when, True))
    return out


def _done(step: frozenset[str], evidence: list[frozenset[str]]) -> bool:
    if len(step) < 2:
        return False
    need = max(2, round(0.6 * len(step)))
    return any(len(step & seen) >= need for seen in evidence)


def _session_state(sessions: list[_Session]) -> list[Fact]:
    manual = [s for s in sessions if s.mode != "auto"]
    newest: dict[str, _Session] = {}
    for session in manual:
        newest[session.branch] = session
    out: list[Fact] = []
    for session in sorted(newest.values(), key=lambda s: (s.when, s.slug), reverse=True)[:3]:
        when = mine.day(session.when) if session.when else "?"
        where = f" on {session.branch}" if session.branch else ""
        out.append(
            Fact(f"Latest session{where} ({when}): {session.title}", (session.cite,), session.when)
        )
        out += [
            Fact(b, (session.cite,), session.when, True) for b in session.bullets("state", "status")
        ]
    return out


def _carried(current: Digest, config: VaultConfig) -> list[list[str]]:
    """The current digest's lines per category when a model wrote it, else nothing."""
    base = current.meta.get("base_merger")
    merger = current.meta.get("merger")
    if not base and (merger in (None, NAME)):
        return [[] for _ in config.categories]
    return [
        [ln for ln in current.categories.get(c.name, []) if not ln.startswith("- [… ")]
        for c in config.categories
    ]


def _carried_fact(line: str) -> Fact:
    cites = tuple(f"{k}:{v}" for k, v in digest_mod.citations(line))
    body = _TRAILING_CITES.sub("", line[2:]).strip()
    return Fact(body, cites, keep_text=True)


def builtin_merge(
    current: Digest, saved: list[Item], mined: View, config: VaultConfig, ground: Ground
) -> tuple[Digest, str | None]:
    """The digest of every session `saved` and the mined history of the notes; and which
    model's lines were carried, if any."""
    sessions = _sessions(saved)
    manual = [s for s in sessions if s.mode != "auto"]
    now = mine.Now(ground)
    carried = _carried(current, config)
    cats = [_Category() for _ in range(6)]

    # the person-written facts first, in their category's priority
    for fact in _decisions(manual):
        cats[DECISIONS].add(fact)
    for fact in _newest_first(manual, "gotchas", "pitfalls"):
        cats[GOTCHAS].add(fact, against=cats[DECISIONS].words())
    for fact in _newest_first(manual, "conventions"):
        cats[CONVENTIONS].add(fact)
    for fact in _newest_first(manual, "architecture", "design"):
        cats[ARCHITECTURE].add(fact, against=cats[DECISIONS].words())
    for fact in _open_steps(manual, mined):
        cats[NEXT].add(fact)
    for fact in _session_state(sessions):
        cats[STATE].add(fact)
    # a model's lines (a fallback fold over a model digest), then what history shows
    for slot, lines in enumerate(carried[:6]):
        for line in lines:
            cats[slot].add(_carried_fact(line))
    said = [w for cat in cats for f, w in cat.facts if f.keep_text]
    found: list[tuple[int, list[Fact]]] = [
        (DECISIONS, mine.breaking(mined, now)),
        (
            CONVENTIONS,
            [
                *mine.message_style(mined, now),
                *mine.tests_layout(mined, now),
                *mine.co_changes(mined, now),
            ],
        ),
        (GOTCHAS, [*mine.reverts(mined, ground), *mine.hot_spots(mined, now)]),
        (STATE, [*mine.activity(mined, now), *mine.release(ground)]),
        (ARCHITECTURE, mine.layout_facts(mined, now)),
    ]
    for slot, facts in found:
        for fact in facts:
            if not _outranked(fact, said):
                cats[slot].add(fact)

    names = [c.name for c in config.categories]
    out = Digest({name: cats[slot].lines() for slot, name in enumerate(names)})
    base = str(current.meta.get("base_merger") or current.meta.get("merger") or "")
    return out, (base if any(carried) and base and base != NAME else None)


def _outranked(fact: Fact, said: list[frozenset[str]]) -> bool:
    """A mined fact on a subject a person's fact (a session's, a model's carried line) is
    about: every word of one of its subjects appears in that fact."""
    for subject in fact.about:
        words = tokens(" ".join(sorted(subject)))
        if words and any(words <= other for other in said):
            return True
    return False


class BuiltinMerger:
    """The builtin merger behind the Merger interface: no model, no budget."""

    name = NAME
    model: str | None = None
    spends_budget = False

    def prompt_chars(self, current: Digest, batch: list[Item], config: VaultConfig) -> int:
        return 0

    def merge(
        self,
        current: Digest,
        batch: list[Item],
        config: VaultConfig,
        ctx: MergeContext,
    ) -> tuple[Digest, int]:
        ground = ctx.ground()
        mined = ctx.mined()
        if ground is None or mined is None:
            raise MergerFailed("the builtin merger mines history: it needs the repository")
        new, base = builtin_merge(current, ctx.sessions(), mined, config, ground)
        if base:
            new.meta["base_merger"] = base
        digest_mod.check_citations(new, ctx.exists)
        digest_mod.enforce_caps(new, config)
        return new, 0
