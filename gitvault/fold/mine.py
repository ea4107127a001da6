"""History mining for the builtin merger: what a newcomer could not see at a glance in
`git log`, each fact with the commits that show it.

Conventions: commit message style, where tests live and for what, files that change together
(e.g. "changes under src/ come with a CHANGES.rst entry"). Gotchas: reverts and what they
reverted, fix-after-fix hot spots. State: recent activity by branch and area, worktrees, the
latest release. Architecture: where the code lives, the most-changed files.

Everything here is a pure function of the notes it is given, computed relative to the newest
note's date (never the wall clock), so the same notes always give the same facts, whatever
order they were folded in. Merge commits, commits a rewrite replaced (amend, rebase) and
copies of the same change are left out before anything is counted.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from gitvault.fold.items import Item
from gitvault.vault.notebody import parse_body

DAY = 86_400
RECENT_DAYS = 30  # "recent activity" is the 30 days up to the newest commit
STYLE_WINDOW = 300  # commit style from the newest 300 commits
MAX_PAIR_FILES = 12  # a commit touching more files says little about which belong together
MAX_FILES = 40  # bulk commits (reformatting, vendoring) are not evidence of anything

_CC = re.compile(r"^([a-z]+)(\([^)]*\))?(!)?:\s", re.I)
_PR_SUFFIX = re.compile(r"\((?:#|!)\d+\)\s*$")
_REVERT_SUBJECT = re.compile(r'^Revert "(.+)"\s*$')
_REVERT_BODY = re.compile(r"This reverts commit ([0-9a-f]{7,40})", re.I)
_FIX = re.compile(
    r"^(?:fix|bugfix|hotfix)(?:\([^)]*\))?!?:|^fix(?:es|ed)?\b|\bbug\s?fix|\bregression\b"
    r"|\bcrash(?:es|ed)?\b|\bfix(?:es|ed)? (?:a |the )?(?:bug|crash|issue|error)",
    re.I,
)
_RELEASE = re.compile(
    r"^(?:release|chore\(release\)|bump version|version bump)\b|^v?\d+\.\d+(?:\.\d+)*$"
    r"|\brelease (?:version )?v?\d+\.\d+",
    re.I,
)
_TRIVIAL = re.compile(r"\b(?:typos?|spelling|whitespace|lint|comments?|wording)\b", re.I)
_BREAKING = re.compile(r"^BREAKING[ -]CHANGE:\s*(.+)$", re.M)
_TEST_DIRS = {"test", "tests", "__tests__", "spec", "specs", "testing", "t"}
_TEST_NAME = re.compile(
    r"(?:^test_.+\.py$|_test\.(?:py|go|rb|exs?)$|\.(?:test|spec)\.[cm]?[jt]sx?$|Tests?\.java$"
    r"|_spec\.rb$|^test.*\.(?:c|cc|cpp)$)"
)
_CHANGELOG = re.compile(r"^(?:changes|changelog|history|news|release[-_ ]?notes)\b", re.I)
_DOC_DIRS = {"doc", "docs", "documentation", "website", "site"}
_CODE_ROOTS = {"src", "lib", "packages", "pkg", "apps", "crates", "cmd", "internal", "modules"}


@dataclass(frozen=True)
class Commit:
    sha: str
    cite: str
    subject: str
    body: str
    files: tuple[str, ...]
    when: int
    branch: str
    worktree: str
    depth: int = 0  # ancestry depth among the notes: orders commits made in the same second

    @property
    def order(self) -> tuple[int, int, str]:
        return (self.when, self.depth, self.sha)


@dataclass
class Fact:
    text: str
    cites: tuple[str, ...]
    when: int = 0
    keep_text: bool = field(default=False)  # written by a person: never reworded


def day(when: int) -> str:
    return datetime.fromtimestamp(when, tz=UTC).strftime("%Y-%m-%d")


# --------------------------------------------------------------------------- commits


def _as_list(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def commits(notes: Iterable[Item]) -> list[Commit]:
    """The project's own commits among the notes, oldest first: no merge commits (they repeat
    their branch's commits), no commit a rewrite replaced, one commit per change (a rebased or
    cherry-picked copy with the same subject and files counts once, the newest)."""
    raw = [n for n in notes if n.kind == "note"]
    depth = _depths(raw)
    replaced: set[str] = set()
    for note in raw:
        replaced.update(r.lower() for r in _as_list(note.meta.get("replaces")))
    found: dict[tuple[str, tuple[str, ...]], Commit] = {}
    for note in raw:
        sha = str(note.meta.get("sha") or "")
        if len(_as_list(note.meta.get("parents"))) > 1 or sha.lower() in replaced:
            continue
        parsed = parse_body(note.body)
        subject, files = parsed.subject, parsed.files
        commit = Commit(
            sha=sha,
            cite=note.cite,
            subject=subject,
            body=parsed.message,
            files=files,
            when=note.when,
            branch=str(note.meta.get("branch") or ""),
            worktree=str(note.meta.get("worktree") or ""),
            depth=depth.get(sha.lower(), 0),
        )
        key = (subject, files)
        old = found.get(key)
        if old is None or commit.order > old.order:
            found[key] = commit
    return sorted(found.values(), key=lambda c: c.order)


def _depths(raw: list[Item]) -> dict[str, int]:
    """Each noted commit's depth in the ancestry the notes record (parents first)."""
    parents = {
        str(n.meta.get("sha") or "").lower(): [p.lower() for p in _as_list(n.meta.get("parents"))]
        for n in raw
    }
    depth: dict[str, int] = {}
    for start in parents:
        stack = [start]
        while stack:
            sha = stack[-1]
            if sha in depth:
                stack.pop()
                continue
            todo = [p for p in parents[sha] if p in parents and p not in depth]
            if todo:
                stack.extend(todo)
                continue
            depth[sha] = 1 + max((depth[p] for p in parents[sha] if p in parents), default=0)
            stack.pop()
    return depth


# --------------------------------------------------------------------------- paths


def is_test(path: str) -> bool:
    parts = path.split("/")
    return any(p.lower() in _TEST_DIRS for p in parts[:-1]) or bool(_TEST_NAME.search(parts[-1]))


def is_changelog(path: str) -> bool:
    parts = path.split("/")
    return bool(_CHANGELOG.match(parts[-1])) or any(
        p.lower() in ("changes", "changelog.d", "changes.d", "newsfragments", ".changeset")
        for p in parts[:-1]
    )


def is_doc(path: str) -> bool:
    parts = path.split("/")
    return (len(parts) > 1 and parts[0].lower() in _DOC_DIRS) or parts[-1].lower().startswith(
        "readme"
    )


def area(path: str) -> str:
    """Where a file belongs: its top folder (two levels under src/, lib/, …), or itself."""
    parts = path.split("/")
    if len(parts) == 1:
        return path
    if parts[0] in _CODE_ROOTS and len(parts) > 2:
        return f"{parts[0]}/{parts[1]}/"
    return parts[0] + "/"


def _is_code(path: str) -> bool:
    return not (is_test(path) or is_changelog(path) or is_doc(path)) and "/" in path


def _cites(found: Iterable[Commit], n: int = 2) -> tuple[str, ...]:
    """The newest n commits as citations."""
    ordered = sorted(found, key=lambda c: c.order, reverse=True)
    return tuple(dict.fromkeys(c.cite for c in ordered))[:n]


def _pct(part: int, whole: int) -> str:
    return f"{round(100 * part / whole)}%" if whole else "0%"


def _short(text: str, limit: int = 70) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# --------------------------------------------------------------------------- conventions


def message_style(found: list[Commit]) -> list[Fact]:
    recent = found[-STYLE_WINDOW:]
    if len(recent) < 5:
        return []
    typed = [(c, _CC.match(c.subject)) for c in recent]
    cc = [(c, m) for c, m in typed if m]
    facts: list[Fact] = []
    if len(cc) >= 0.5 * len(recent):
        types = Counter(m.group(1).lower() for _, m in cc)
        top = ", ".join(f"{t} {_pct(n, len(recent))}" for t, n in types.most_common(4))
        scoped = sum(1 for _, m in cc if m.group(2))
        scope = ""
        if scoped >= 0.3 * len(cc):
            scopes = Counter(m.group(2)[1:-1] for _, m in cc if m.group(2))
            scope = (
                f"; a scope names the area, e.g. ({', '.join(s for s, _ in scopes.most_common(3))})"
            )
        text = (
            f"Commit subjects use Conventional Commits ({len(cc)} of the last {len(recent)}: "
            f"{top}){scope}"
        )
        facts.append(Fact(text, _cites((c for c, _ in cc), 2), recent[-1].when))
    else:
        capital = [c for c in recent if c.subject[:1].isupper()]
        words = Counter(c.subject.split(" ", 1)[0] for c in capital if c.subject)
        if len(capital) >= 0.6 * len(recent):
            verbs = ", ".join(f'"{w} …"' for w, _ in words.most_common(3))
            text = (
                f"Commit subjects are capitalised imperative sentences without a type prefix "
                f"({len(capital)} of the last {len(recent)}; most start {verbs})"
            )
            facts.append(Fact(text, _cites(capital, 2), recent[-1].when))
    pr = [c for c in recent if _PR_SUFFIX.search(c.subject)]
    if len(pr) >= 0.3 * len(recent):
        text = (
            f"Commit subjects end with the pull-request number, e.g. "
            f'"{_short(pr[-1].subject, 60)}" ({len(pr)} of the last {len(recent)})'
        )
        facts.append(Fact(text, _cites(pr, 1), recent[-1].when))
    return facts


def tests_layout(found: list[Commit]) -> list[Fact]:
    with_tests = [c for c in found if any(is_test(f) for f in c.files)]
    if len(with_tests) < 3:
        return []
    dirs: Counter[str] = Counter()
    names: Counter[str] = Counter()
    for c in with_tests:
        for f in {f for f in c.files if is_test(f)}:
            parts = f.split("/")
            cut = next((i for i, p in enumerate(parts[:-1]) if p.lower() in _TEST_DIRS), None)
            dirs["/".join(parts[: cut + 1]) + "/" if cut is not None else "(next to the code)"] += 1
            names[_name_pattern(parts[-1])] += 1
    where, _ = dirs.most_common(1)[0]
    pattern, _ = names.most_common(1)[0]
    # for what: the code areas whose commits touch tests most often
    touched: Counter[str] = Counter()
    tested: Counter[str] = Counter()
    for c in found:
        areas = {area(f) for f in c.files if _is_code(f)}
        has_test = any(is_test(f) for f in c.files)
        for a in areas:
            touched[a] += 1
            tested[a] += has_test
    parts = []
    for a, n in touched.most_common(3):
        if n >= 5:
            parts.append(f"{_pct(tested[a], n)} of {n} commits under {a}")
    share = f"; {', '.join(parts)} touch tests too" if parts else ""
    text = f"Tests live in {where} ({pattern}){share}"
    facts = [Fact(text, _cites(with_tests, 2), with_tests[-1].when)]
    mapping = _test_mapping(found)
    if mapping:
        facts.append(mapping)
    return facts


def _name_pattern(name: str) -> str:
    for pattern, label in (
        (r"^test_.+\.py$", "test_*.py"),
        (r"_test\.py$", "*_test.py"),
        (r"_test\.go$", "*_test.go"),
        (r"\.test\.[cm]?[jt]sx?$", "*.test.*"),
        (r"\.spec\.[cm]?[jt]sx?$", "*.spec.*"),
        (r"_spec\.rb$", "*_spec.rb"),
        (r"Tests?\.java$", "*Test.java"),
    ):
        if re.search(pattern, name):
            return label
    return "files named freely"


def _stem(name: str) -> str:
    base = name.rsplit(".", 1)[0]
    base = re.sub(r"^test_|_test$|\.test$|\.spec$|_spec$|Tests?$", "", base)
    return base.lower()


def _test_mapping(found: list[Commit]) -> Fact | None:
    """Tests named after the module they test (core.py ↔ test_core.py), seen together."""
    pairs: Counter[tuple[str, str]] = Counter()
    evidence: dict[tuple[str, str], list[Commit]] = defaultdict(list)
    for c in found:
        if len(c.files) > MAX_FILES:
            continue
        code = {_stem(f.rsplit("/", 1)[-1]): f for f in c.files if _is_code(f)}
        for t in (f for f in c.files if is_test(f)):
            stem = _stem(t.rsplit("/", 1)[-1])
            if stem in code:
                pairs[(code[stem], t)] += 1
                evidence[(code[stem], t)].append(c)
    if sum(pairs.values()) < 3:
        return None
    (src, test), n = sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    text = (
        f"Tests are named after the module they test, e.g. {src} → {test} ({n} commits change both)"
    )
    return Fact(text, _cites(evidence[(src, test)], 2), max(c.when for c in evidence[(src, test)]))


def co_changes(found: list[Commit]) -> list[Fact]:
    """Which files and areas change together: companions (changelog, docs, tests) of a code
    area, then pairs of files that rarely change apart."""
    usable = [c for c in found if 0 < len(c.files) <= MAX_FILES]
    if len(usable) < 8:
        return []
    facts: list[Fact] = []
    n_all = len(usable)
    companions: dict[str, list[Commit]] = defaultdict(list)
    for c in usable:
        for f in c.files:
            if is_changelog(f):
                key = f if "/" not in f or area(f) == f else area(f)
                companions[key].append(c)
    area_commits: dict[str, list[Commit]] = defaultdict(list)
    for c in usable:
        for a in {area(f) for f in c.files if _is_code(f)}:
            area_commits[a].append(c)
    rules: list[tuple[float, Fact]] = []
    for comp, with_comp in companions.items():
        comp_set = {c.sha for c in with_comp}
        base = len(comp_set) / n_all
        for a, in_area in area_commits.items():
            both = [c for c in in_area if c.sha in comp_set]
            conf = len(both) / len(in_area)
            common = len(in_area) >= 0.5 * n_all  # most commits: no contrast to measure
            if (
                len(in_area) >= 8
                and len(both) >= 4
                and conf >= 0.25
                and (common or conf >= 1.2 * base)
            ):
                label = "a changelog entry in " + comp
                how = "usually" if conf >= 0.5 else "often"
                text = (
                    f"Changes under {a} {how} come with {label} "
                    f"({len(both)} of {len(in_area)} commits)"
                )
                rules.append((conf, Fact(text, _cites(both, 2), both[-1].when)))
    rules.sort(key=lambda r: (-r[0], r[1].text))
    facts += [f for _, f in rules[:2]]
    # file pairs that change together
    count: Counter[str] = Counter()
    pair: Counter[tuple[str, str]] = Counter()
    seen: dict[tuple[str, str], list[Commit]] = defaultdict(list)
    for c in usable:
        files = sorted({f for f in c.files if not is_changelog(f)})
        for f in files:
            count[f] += 1
        if len(files) > MAX_PAIR_FILES:
            continue
        for i, a in enumerate(files):
            for b in files[i + 1 :]:
                pair[(a, b)] += 1
                seen[(a, b)].append(c)
    strong: list[tuple[float, int, tuple[str, str]]] = []
    for (a, b), n in pair.items():
        if n < 4:
            continue
        ratio = n / min(count[a], count[b])
        if ratio >= 0.6 and not (is_test(a) or is_test(b)):  # code ↔ test: tests_layout
            strong.append((ratio, n, (a, b)))
    strong.sort(key=lambda s: (-s[1], -s[0], s[2]))
    used: set[str] = set()
    for _ratio, n, (a, b) in strong:
        if a in used or b in used:
            continue
        used.update((a, b))
        text = f"{a} and {b} change together ({n} of {min(count[a], count[b])} commits)"
        facts.append(Fact(text, _cites(seen[(a, b)], 2), seen[(a, b)][-1].when))
        if len(facts) >= 5:
            break
    return facts


# --------------------------------------------------------------------------- gotchas


def reverts(found: list[Commit], everything: list[Commit]) -> list[Fact]:
    by_prefix: dict[str, Commit] = {}
    for c in everything:
        by_prefix.setdefault(c.sha[:7], c)
    by_subject = {c.subject: c for c in everything}
    facts: list[Fact] = []
    for c in reversed(found):
        subject = _REVERT_SUBJECT.match(c.subject)
        body = _REVERT_BODY.search(c.body)
        if not subject and not body:
            continue
        original = by_prefix.get(body.group(1)[:7].lower()) if body else None
        if original is None and subject:
            original = by_subject.get(subject.group(1))
        what = original.subject if original else (subject.group(1) if subject else c.subject)
        if _REVERT_SUBJECT.match(what):
            continue  # a revert of a revert: the change is back
        reason = _reason(c.body)
        cites = (c.cite, original.cite) if original else (c.cite,)
        text = f'Reverted on {day(c.when)}: "{_short(what, 70)}"' + (
            f" — {reason}" if reason else " — find out why before trying it again"
        )
        facts.append(Fact(text, cites, c.when))
        if len(facts) >= 4:
            break
    return facts


def _reason(body: str) -> str:
    for line in body.splitlines():
        line = line.strip()
        if line.lower().startswith("this reverts"):
            continue
        if line and not _REVERT_BODY.search(line) and not line.startswith(("[", "Signed-off")):
            return _short(line, 70)
    return ""


def hot_spots(found: list[Commit]) -> list[Fact]:
    fixes = [
        c
        for c in found
        if _FIX.search(c.subject)
        and not _REVERT_SUBJECT.match(c.subject)
        and not _TRIVIAL.search(c.subject)
    ]
    per_file: dict[str, list[Commit]] = defaultdict(list)
    for c in fixes:
        if len(c.files) > MAX_FILES:
            continue
        for f in c.files:
            if _is_code(f) or ("/" not in f and not is_changelog(f) and not is_doc(f)):
                per_file[f].append(c)
    ranked = sorted(per_file.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    facts: list[Fact] = []
    for path, hits in ranked:
        if len(hits) < 3:
            break
        latest = hits[-1]
        # fix after fix: how many fixes came within 30 days of the previous one
        close = sum(1 for a, b in zip(hits, hits[1:], strict=False) if b.when - a.when <= 30 * DAY)
        again = f", {close} within a month of the previous" if close else ""
        text = (
            f"{path} needed {len(hits)} fixes{again}; latest {day(latest.when)}: "
            f'"{_short(latest.subject, 60)}" — read its tests before changing it'
        )
        facts.append(Fact(text, _cites(hits, 3), latest.when))
        if len(facts) >= 3:
            break
    return facts


# --------------------------------------------------------------------------- state


def _areas_summary(found: list[Commit], n: int = 3) -> str:
    counts: Counter[str] = Counter()
    for c in found:
        for a in {area(f) for f in c.files}:
            counts[a] += 1
    return ", ".join(
        f"{a} ({k})" for a, k in sorted(counts.items(), key=lambda x: (-x[1], x[0]))[:n]
    )


def activity(found: list[Commit]) -> list[Fact]:
    if not found:
        return []
    ref = found[-1].when
    recent = [c for c in found if c.when > ref - RECENT_DAYS * DAY]
    facts: list[Fact] = []
    by_branch: dict[str, list[Commit]] = defaultdict(list)
    for c in recent:
        by_branch[c.branch].append(c)
    several_trees = len({c.worktree for c in recent if c.worktree}) > 1
    ordered = sorted(by_branch.items(), key=lambda kv: (-kv[1][-1].when, kv[0]))
    for branch, hits in ordered[:4]:
        areas = _areas_summary(hits)
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
        facts.append(Fact(text, _cites(hits, 2), hits[-1].when))
    releases = [c for c in found if _RELEASE.search(c.subject)]
    if releases:
        last = releases[-1]
        since = sum(1 for c in found if c.when > last.when)
        text = (
            f'Latest release commit: "{_short(last.subject, 60)}" on {day(last.when)}; '
            f"{since} commits since"
        )
        facts.append(Fact(text, (last.cite,), last.when))
    return facts


# --------------------------------------------------------------------------- architecture


def layout_facts(found: list[Commit]) -> list[Fact]:
    recent = found[-STYLE_WINDOW * 2 :]
    code: Counter[str] = Counter()
    files: Counter[str] = Counter()
    exts: dict[str, Counter[str]] = defaultdict(Counter)
    for c in recent:
        if len(c.files) > MAX_FILES:
            continue
        for f in c.files:
            if _is_code(f):
                code[area(f)] += 1
                files[f] += 1
                if "." in f.rsplit("/", 1)[-1]:
                    exts[area(f)]["." + f.rsplit(".", 1)[-1]] += 1
    if not code:
        return []
    facts: list[Fact] = []
    total = sum(code.values())
    tops = sorted(code.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    where = ", ".join(
        f"{a} ({_pct(n, total)}" + (f", {exts[a].most_common(1)[0][0]}" if exts[a] else "") + ")"
        for a, n in tops
    )
    main = [c for c in recent if any(area(f) == tops[0][0] for f in c.files)]
    facts.append(Fact(f"The code changes happen in {where}", _cites(main, 2), recent[-1].when))
    hot = sorted(files.items(), key=lambda kv: (-kv[1], kv[0]))[:4]
    if hot and hot[0][1] >= 3:
        listing = ", ".join(f"{f} ({n})" for f, n in hot if n >= 3)
        touching = [c for c in recent if hot[0][0] in c.files]
        text = f"Most-changed files (commits in the last {len(recent)}): {listing}"
        facts.append(Fact(text, _cites(touching, 2), recent[-1].when))
    return facts


def breaking(found: list[Commit]) -> list[Fact]:
    facts: list[Fact] = []
    for c in reversed(found):
        match = _BREAKING.search(c.body)
        cc = _CC.match(c.subject)
        if match:
            text = f"Breaking change ({day(c.when)}): {_short(match.group(1), 100)}"
        elif cc and cc.group(3):
            text = f"Breaking change ({day(c.when)}): {_short(c.subject[cc.end() :], 100)}"
        else:
            continue
        facts.append(Fact(text, (c.cite,), c.when))
        if len(facts) >= 3:
            break
    return facts
