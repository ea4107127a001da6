"""History mining for the builtin merger: what a newcomer could not see at a glance in
`git log`, each fact with the commits that show it, and each only when it is true of the
repository as it is now (gitvault.fold.truth).

Conventions: commit message style (Conventional Commits, `area: summary`, capitalised
sentences — each only when most recent subjects follow it, with the real count), where tests
live and for what, files that change together. Gotchas: reverts that stand (a reverted revert
is no gotcha; a change that re-landed says so), fix-after-fix hot spots. State: recent
activity by branch and area, the latest release (from tags, not from commit subjects).
Architecture: where the code lives (top-level files count), the most-changed files.

Only paths that exist at HEAD are named: a file deleted or moved years ago says nothing about
the code now. Counts are over the whole history, as `git log -- <path>` shows it for the path
as it is named now; "recent" facts say their window.

Everything here reads the mined history (gitvault.fold.history: the counted commits — no
merge commits, no commit a rewrite replaced, one commit per change — and their counts, kept
up to date as notes arrive) and the repository's HEAD and tags, relative to the newest
commit's date (never the wall clock), so the same notes give the same facts whatever order
they were folded in.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from gitvault.fold import kinds, truth
from gitvault.fold.history import Commit, View
from gitvault.fold.kinds import MAX_FILES, classify
from gitvault.vault import layout

DAY = 86_400
RECENT_DAYS = 30  # "recent activity" is the 30 days up to the newest commit
STYLE_WINDOW = 300  # commit style from the newest 300 commits
LAYOUT_WINDOW = 600  # where the code changes: the newest 600 commits
MINED = layout.MINED_MARK  # what every mined line says of itself
_PR_SUFFIX = re.compile(r"\((?:#|!)\d+\)\s*$")
_NOT_IMPERATIVE = re.compile(r"(?:ed|ing|s)$")


@dataclass
class Fact:
    text: str
    cites: tuple[str, ...]
    when: int = 0
    keep_text: bool = field(default=False)  # written by a person: never reworded
    mined: bool = False  # computed from history (its line says so)
    # What a mined fact is about: sets of words; a person's fact naming every word of one of
    # them is on the same subject, and wins.
    about: tuple[frozenset[str], ...] = ()


def day(when: int) -> str:
    return datetime.fromtimestamp(when, tz=UTC).strftime("%Y-%m-%d")


def _pct(part: int, whole: int) -> str:
    return f"{round(100 * part / whole)}%" if whole else "0%"


def _short(text: str, limit: int = 70) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _about_paths(*paths: str) -> tuple[frozenset[str], ...]:
    """What a fact about these paths is about, in the words a person's fact would use."""
    out = []
    for path in paths:
        words = re.findall(r"[a-z0-9][a-z0-9_./-]*[a-z0-9]", path.lower())
        if words:
            out.append(frozenset(words))
    return tuple(out)


def _both(a: str, b: str) -> frozenset[str]:
    return frozenset(w for group in _about_paths(a, b) for w in group)


class Now:
    """The repository now, as every miner asks it: which paths and areas exist at HEAD, and
    which commits can still be cited as evidence (a reverted commit's change is gone)."""

    def __init__(self, ground: truth.Ground) -> None:
        self.ground = ground

    def cites(self, found: Iterable[Commit], n: int = 2) -> tuple[str, ...]:
        """The newest n commits as citations, reverted ones left out."""
        reverted = self.ground.record.reverted_by
        ordered = sorted(found, key=lambda c: c.order, reverse=True)
        usable = [c.cite for c in ordered if c.sha.lower() not in reverted]
        return tuple(dict.fromkeys(usable))[:n]

    def path(self, path: str) -> bool:
        return self.ground.exists_now(path)

    def area(self, name: str) -> bool:
        return self.ground.exists_now(name.rstrip("/"))


# --------------------------------------------------------------------------- conventions

_STYLE_ABOUT = (
    frozenset({"commit", "subject"}),
    frozenset({"commit", "message"}),
    frozenset({"conventional", "commit"}),
)


def message_style(history: View, now: Now) -> list[Fact]:
    recent = [
        c for c in history.newest(STYLE_WINDOW) if not kinds.GENERATED_SUBJECT.match(c.subject)
    ]
    if len(recent) < 5:
        return []
    n = len(recent)
    styles = Counter(kinds.subject_style(c.subject) for c in recent)
    facts: list[Fact] = []
    when = recent[-1].when
    if styles["cc"] >= 0.5 * n:
        cc = [
            (c, m)
            for c in recent
            if (m := kinds.CC.match(c.subject)) and kinds.subject_style(c.subject) == "cc"
        ]
        types = Counter(m.group(1).lower() for _, m in cc)
        top = ", ".join(f"{t} {_pct(k, n)}" for t, k in _most_common(types, 4))
        scoped = [m.group(2)[1:-1] for _, m in cc if m.group(2)]
        scope = ""
        if len(scoped) >= 0.3 * len(cc):
            common = ", ".join(s for s, _ in _most_common(Counter(scoped), 3))
            scope = f"; a scope names the area, e.g. ({common})"
        text = f"Commit subjects use Conventional Commits ({len(cc)} of the last {n}: {top}){scope}"
        facts.append(
            Fact(text, now.cites((c for c, _ in cc), 2), when, mined=True, about=_STYLE_ABOUT)
        )
    elif styles["area"] + styles["cc"] >= 0.5 * n:
        # a type word ("doc:", "fix:") names an area as well in a history that is not CC
        prefixed = [c for c in recent if kinds.subject_style(c.subject) in ("area", "cc")]
        areas = Counter(m.group(1) for c in prefixed if (m := kinds.AREA.match(c.subject)))
        examples = ", ".join(f'"{a}: …"' for a, _ in _most_common(areas, 3))
        text = (
            f"Commit subjects name the area they change, `area: summary` ({len(prefixed)} of "
            f"the last {n}; e.g. {examples})"
        )
        facts.append(Fact(text, now.cites(prefixed, 2), when, mined=True, about=_STYLE_ABOUT))
    else:
        capital = [c for c in recent if c.subject[:1].isupper()]
        if len(capital) >= 0.6 * n:
            firsts = Counter(c.subject.split(" ", 1)[0] for c in capital)
            verbs = [w for w, _ in _most_common(firsts, 3)]
            plain = sum(k for w, k in firsts.items() if not _NOT_IMPERATIVE.search(w.lower()))
            kind = (
                "capitalised imperative sentences"
                if plain >= 0.6 * len(capital)
                else ("capitalised sentences")
            )
            text = (
                f"Commit subjects are {kind} without a type prefix ({len(capital)} of the last "
                f"{n}; most start {', '.join(f'{chr(34)}{w} …{chr(34)}' for w in verbs)})"
            )
            facts.append(Fact(text, now.cites(capital, 2), when, mined=True, about=_STYLE_ABOUT))
    pr = [c for c in recent if _PR_SUFFIX.search(c.subject)]
    if len(pr) >= 0.3 * n:
        text = (
            f"Commit subjects end with the pull-request number, e.g. "
            f'"{_short(pr[-1].subject, 60)}" ({len(pr)} of the last {n})'
        )
        facts.append(Fact(text, now.cites(pr, 1), when, mined=True, about=_STYLE_ABOUT))
    return facts


def _most_common(counts: Counter[str], n: int) -> list[tuple[str, int]]:
    """The n largest counts, ties by name: the same counts give the same answer whatever
    order they were counted in."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def tests_layout(history: View, now: Now) -> list[Fact]:
    # The commits that changed a test file that exists now, newest first: as many as the
    # line cites (and at least three, or there is nothing to say).
    with_tests: list[Commit] = []
    cited = 0
    reverted = now.ground.record.reverted_by
    for c in history.newest_first("tests > 0"):
        if any(classify(f).test and now.path(f) for f in c.files):
            with_tests.append(c)
            cited += c.sha not in reverted
            if len(with_tests) >= 3 and cited >= 2:
                break
    if len(with_tests) < 3:
        return []
    dirs: Counter[str] = Counter()
    names: Counter[str] = Counter()
    for f, _, n in history.ranked("test"):
        if now.path(f):
            dirs[kinds.test_dir(f)] += n
            names[_name_pattern(f.rsplit("/", 1)[-1])] += n
    ((where, _),) = _most_common(dirs, 1)
    ((pattern, _),) = _most_common(names, 1)
    # for what: the code areas (as they are now) whose commits touch tests most often
    parts: list[str] = []
    for a, _, n in history.ranked("touched"):
        if n < 5 or len(parts) >= 3:
            break
        if now.area(a):
            scope = f"under {a}" if a.endswith("/") else f"to {a}"  # a folder, or a file
            parts.append(f"{_pct(history.count('tested', a), n)} of {n} commits {scope}")
    share = f"; {', '.join(parts)} touch tests too" if parts else ""
    text = f"Tests live in {where} ({pattern}){share}"
    about = (frozenset({"tests", "live"}), frozenset({"test", "folder"}))
    facts = [Fact(text, now.cites(with_tests, 2), with_tests[0].when, mined=True, about=about)]
    mapping = _test_mapping(history, now)
    if mapping:
        facts.append(mapping)
    return facts


_NAME_PATTERNS = tuple(
    (re.compile(pattern), label)
    for pattern, label in (
        (r"^test_.+\.py$", "test_*.py"),
        (r"_test\.py$", "*_test.py"),
        (r"_test\.go$", "*_test.go"),
        (r"\.test\.[cm]?[jt]sx?$", "*.test.*"),
        (r"\.spec\.[cm]?[jt]sx?$", "*.spec.*"),
        (r"_spec\.rb$", "*_spec.rb"),
        (r"Tests?\.java$", "*Test.java"),
    )
)


def _name_pattern(name: str) -> str:
    for pattern, label in _NAME_PATTERNS:
        if pattern.search(name):
            return label
    if "." in name.strip("."):
        return "*." + name.rsplit(".", 1)[-1]
    return "files named freely"


def _test_mapping(history: View, now: Now) -> Fact | None:
    """Tests named after the module they test (core.py ↔ test_core.py), seen together."""
    live = {
        k: n for k, n in history.counts("tested_by").items() if now.path(k[0]) and now.path(k[1])
    }
    if sum(live.values()) < 3:
        return None
    (src, test), n = sorted(live.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    text = (
        f"Tests are named after the module they test, e.g. {src} → {test} ({n} commits change both)"
    )
    seen = [
        c
        for c in history.touching(src, test)
        if len(c.files) <= MAX_FILES and (src, test) in kinds.tested_module(c.files)
    ]
    about = (frozenset({"tests", "named"}), _both(src, test))
    return Fact(text, now.cites(seen, 2), max(c.when for c in seen), mined=True, about=about)


def co_changes(history: View, now: Now) -> list[Fact]:
    """Which files and areas change together: companions (changelog, docs, tests) of a code
    area, then pairs of files that rarely change apart. Both ends exist at HEAD. Commits that
    change no file or more than MAX_FILES are no evidence."""
    n_all = history.count("usable")
    if n_all < 8:
        return []
    facts: list[Fact] = []
    comps = history.counts("comp")
    areas = history.counts("area")
    together = history.counts("comp_area")
    rules: list[tuple[float, str, str, str]] = []
    for (comp, _), with_comp in comps.items():
        if not now.area(comp):
            continue
        base = with_comp / n_all
        for (a, _), in_area in areas.items():
            if not now.area(a):
                continue
            both = together.get((comp, a), 0)
            conf = both / in_area
            common = in_area >= 0.5 * n_all  # most commits: no contrast to measure
            if in_area >= 8 and both >= 4 and conf >= 0.25 and (common or conf >= 1.2 * base):
                how = "usually" if conf >= 0.5 else "often"
                text = (
                    f"Changes under {a} {how} come with a changelog entry in {comp} "
                    f"({both} of {in_area} commits)"
                )
                rules.append((conf, text, comp, a))
    rules.sort(key=lambda r: (-r[0], r[1]))
    for _, text, comp, a in rules[:2]:
        evidence = _companion_evidence(history, now, comp, a)
        about = (frozenset({"changelog"}), *_about_paths(comp))
        facts.append(Fact(text, now.cites(evidence, 2), evidence[0].when, mined=True, about=about))
    # file pairs that change together
    strong: list[tuple[float, int, tuple[str, str]]] = []
    fewer: dict[tuple[str, str], int] = {}
    for a, b, n, least in history.pairs(4, 0.6):
        if classify(a).test or classify(b).test:  # code ↔ test: tests_layout
            continue
        if now.path(a) and now.path(b):
            strong.append((n / least, n, (a, b)))
            fewer[(a, b)] = least
    strong.sort(key=lambda s: (-s[1], -s[0], s[2]))
    used: set[str] = set()
    for _ratio, n, (a, b) in strong:
        if a in used or b in used:
            continue
        used.update((a, b))
        text = f"{a} and {b} change together ({n} of {fewer[(a, b)]} commits)"
        evidence = [c for c in history.touching(a, b) if _pairs_counted(c)]
        about = (_both(a, b),)
        facts.append(Fact(text, now.cites(evidence, 2), evidence[-1].when, mined=True, about=about))
        if len(facts) >= 5:
            break
    return facts


def _pairs_counted(c: Commit) -> bool:
    """Whether a commit's file pairs are counted (history.contributions)."""
    plain = {f for f in c.files if not classify(f).changelog}
    return 0 < len(c.files) <= MAX_FILES and len(plain) <= kinds.MAX_PAIR_FILES


def _companion_evidence(history: View, now: Now, comp: str, where: str) -> list[Commit]:
    """The newest commits (newest first) that changed code under `where` and the changelog
    `comp` together: the newest one's date and two citable ones."""
    out: list[Commit] = []
    cited = 0
    reverted = now.ground.record.reverted_by
    for c in history.newest_first("nfiles BETWEEN 1 AND 40"):
        if any(classify(f).changelog and classify(f).companion == comp for f in c.files) and any(
            classify(f).code and "/" in f and classify(f).area == where for f in c.files
        ):
            out.append(c)
            cited += c.sha not in reverted
            if cited >= 2:
                break
    return out


# --------------------------------------------------------------------------- gotchas


def reverts(history: View, ground: truth.Ground, limit: int = 4) -> list[Fact]:
    """Reverts that stand, newest first: a revert that was reverted in turn is no gotcha (the
    change is back), nor is a revert of a revert; a change that landed again says so."""
    rec = ground.record
    facts: list[Fact] = []
    for c in history.newest_first("reverts != '' OR quoted IS NOT NULL"):
        sha = c.sha.lower()
        if sha not in rec.reverts:
            continue
        if rec.reverted_by.get(sha):
            continue  # reverted in turn: the change is back
        targets = rec.reverts[sha]
        if any(t in rec.reverts for t in targets):
            continue  # a revert of a revert: the change is back
        original = next((rec.by_sha[t] for t in targets if t in rec.by_sha), None)
        quoted = kinds.QUOTED_REVERT.match(c.subject)
        what = original.subject if original else (quoted.group(1) if quoted else c.subject)
        cites = [c.cite]
        if original is not None:
            cites.append(f"c:{original.sha[:7]}")
        landed = [x for t in targets if t in rec.by_sha for x in ground.relanded(t, sha)]
        text = f'Reverted on {day(c.when)}: "{_short(what, 70)}"'
        if landed:
            text += f"; it re-landed later in {landed[0][:7]}"
            cites.append(f"c:{landed[0][:7]}")
        elif c.reason:
            text += f" — {_short(c.reason, 70)}"
        about = (frozenset(_words(what)) or frozenset({"revert"}),)
        facts.append(Fact(text, tuple(dict.fromkeys(cites)), c.when, mined=True, about=about))
        if len(facts) >= limit:
            break
    return facts


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]{4,}", text.lower())}


def hot_spots(history: View, now: Now) -> list[Fact]:
    """Files that needed fix after fix (whole history; bulk commits left out)."""
    facts: list[Fact] = []
    for path, _, n in history.ranked("fix", 3):
        if not (classify(path).code and now.path(path)):
            continue
        hits = [c for c in history.touching(path, fixes=True) for _ in range(c.files.count(path))]
        latest = hits[-1]
        # fix after fix: how many fixes came within 30 days of the previous one
        close = sum(1 for a, b in zip(hits, hits[1:], strict=False) if b.when - a.when <= 30 * DAY)
        again = f", {close} within a month of the previous" if close else ""
        text = (
            f"{path} needed {n} fixes{again}; latest {day(latest.when)}: "
            f'"{_short(latest.subject, 60)}"'
        )
        facts.append(
            Fact(text, now.cites(hits, 3), latest.when, mined=True, about=_about_paths(path))
        )
        if len(facts) >= 3:
            break
    return facts


# --------------------------------------------------------------------------- state


def _areas_summary(found: list[Commit], now: Now, n: int = 3) -> str:
    counts: Counter[str] = Counter()
    for c in found:
        for a in {classify(f).area for f in c.files}:
            counts[a] += 1
    live = [(a, k) for a, k in counts.items() if now.area(a)]
    return ", ".join(f"{a} ({k})" for a, k in sorted(live, key=lambda x: (-x[1], x[0]))[:n])


def activity(history: View, now: Now) -> list[Fact]:
    newest = history.newest(1)
    if not newest:
        return []
    ref = newest[-1].when
    recent = history.since(ref - RECENT_DAYS * DAY)
    facts: list[Fact] = []
    by_branch: dict[str, list[Commit]] = defaultdict(list)
    for c in recent:
        by_branch[c.branch].append(c)
    several_trees = len({c.worktree for c in recent if c.worktree}) > 1
    ordered = sorted(by_branch.items(), key=lambda kv: (-kv[1][-1].when, kv[0]))
    for branch, hits in ordered[:4]:
        areas = _areas_summary(hits, now)
        span = f"{day(hits[0].when)} → {day(hits[-1].when)}"
        trees = sorted({c.worktree for c in hits if c.worktree})
        where = f"On {branch}" if branch else "Across branches"
        if several_trees and trees:
            where += f" (worktree {', '.join(trees[:2])})"
        text = (
            f"{where}, {span}: {len(hits)} commit{'s' if len(hits) != 1 else ''}"
            + (f", mostly {areas}" if areas else "")
            + f'; latest: "{_short(hits[-1].subject, 60)}"'
        )
        about = (frozenset({"branch", *_words(branch)}),) if branch else ()
        facts.append(Fact(text, now.cites(hits, 2), hits[-1].when, mined=True, about=about))
    return facts


def release(ground: truth.Ground) -> list[Fact]:
    """The latest release, from the tags (newest by date; a pre-release named beside the
    newest release), and the commits since: never a guess from commit subjects. A release
    tagged on a branch of its own (a stable branch) cites where it meets HEAD."""
    newest, stable = ground.release_tags()
    if newest is None:
        return []
    shown = stable or newest
    met = ground.since_release(shown.commit)
    commit = ground.record.by_sha.get(met[0]) if met else None
    if met is None or commit is None:
        return []  # the release shares no noted commit with HEAD: nothing to cite
    since = met[1]
    text = f"Latest release: {shown.name} (tagged {day(shown.created)})"
    if newest is not shown:
        text += f"; newest tag {newest.name} is a pre-release"
    if since is not None:
        text += f"; {since} commits since"
    about = (frozenset({"latest", "release"}),)
    return [Fact(text, (f"c:{commit.sha[:7]}",), shown.created, mined=True, about=about)]


# --------------------------------------------------------------------------- architecture

TOP_LEVEL = "the top level"


def layout_facts(history: View, now: Now) -> list[Fact]:
    recent = history.newest(LAYOUT_WINDOW)
    code: Counter[str] = Counter()
    files: Counter[str] = Counter()
    exts: dict[str, Counter[str]] = defaultdict(Counter)
    for c in recent:
        if len(c.files) > MAX_FILES:
            continue
        for f in c.files:
            if not classify(f).code or not now.path(f):
                continue
            where = classify(f).area if "/" in f else TOP_LEVEL
            code[where] += 1
            files[f] += 1
            if "." in f.rsplit("/", 1)[-1]:
                exts[where]["." + f.rsplit(".", 1)[-1]] += 1
    if not code:
        return []
    facts: list[Fact] = []
    tops = _most_common(code, 3)
    where = ", ".join(
        a + (f" ({_most_common(exts[a], 1)[0][0]})" if exts[a] else "") for a, _ in tops
    )
    first = tops[0][0]
    main = [
        c
        for c in recent
        if any((classify(f).area if "/" in f else TOP_LEVEL) == first for f in c.files)
    ]
    text = f"Recent code changes are mostly in {where}"
    about = (frozenset({"code", "lives"}),)
    facts.append(Fact(text, now.cites(main, 2), recent[-1].when, mined=True, about=about))
    hot = _most_common(files, 4)
    if hot and hot[0][1] >= 3:
        listing = ", ".join(f"{f} ({n})" for f, n in hot if n >= 3)
        touching = [c for c in recent if hot[0][0] in c.files]
        text = f"Most-changed files (commits in the last {len(recent)}): {listing}"
        about = (frozenset({"most-changed"}),)
        facts.append(Fact(text, now.cites(touching, 2), recent[-1].when, mined=True, about=about))
    return facts


def breaking(history: View, now: Now) -> list[Fact]:
    facts: list[Fact] = []
    for c in history.newest_first("breaking IS NOT NULL"):
        text = f"Breaking change ({day(c.when)}): {_short(c.breaking or '', 100)}"
        about = (frozenset(_words(text)),)
        facts.append(Fact(text, (c.cite,), c.when, mined=True, about=about))
        if len(facts) >= 3:
            break
    return facts
