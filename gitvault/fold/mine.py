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
the code now. Counts are what `git log -- <path>` shows for the path as it is named now.

Everything here is a function of the notes it is given and of the repository's HEAD and tags,
computed relative to the newest note's date (never the wall clock), so the same notes give the
same facts whatever order they were folded in. Merge commits, commits a rewrite replaced
(amend, rebase) and copies of the same change are left out before anything is counted.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from gitvault.fold import truth
from gitvault.fold.items import Item
from gitvault.vault import layout
from gitvault.vault.notebody import parse_body

DAY = 86_400
RECENT_DAYS = 30  # "recent activity" is the 30 days up to the newest commit
STYLE_WINDOW = 300  # commit style from the newest 300 commits
LAYOUT_WINDOW = 600  # where the code changes: the newest 600 commits
MAX_PAIR_FILES = 12  # a commit touching more files says little about which belong together
MAX_FILES = 40  # bulk commits (reformatting, vendoring) are not evidence of anything
MINED = layout.MINED_MARK  # what every mined line says of itself
MINE_NOTES = 5000  # the builtin merger mines at most the newest this many notes

# Conventional Commits' types (the specification's and the Angular convention's).
_CC_TYPE_NAMES = "feat fix docs doc style refactor perf test tests build ci chore revert deps"
CC_TYPES = frozenset(_CC_TYPE_NAMES.split(" "))
_CC = re.compile(r"^([a-z]+)(\([^)]*\))?(!)?:\s", re.I)
# `area: summary`: one to three words naming a part of the project (`t/`, `builtin/add`,
# `doc`, `git-gui`), a colon, the summary.
_AREA = re.compile(r"^([\w./@+*{}-]+(?:[ ,/][\w./@+*{}-]+){0,2}):\s\S")
_PR_SUFFIX = re.compile(r"\((?:#|!)\d+\)\s*$")
_REVERT_SUBJECT = re.compile(r'^Revert "(.+)"\s*$')
_FIX = re.compile(
    r"^(?:[\w./-]+(?:\([^)]*\))?!?:\s*)?(?:fix(?:es|ed|ing)?|bugfix|hotfix)\b|\bbug\s?fix"
    r"|\bregression\b|\bcrash(?:es|ed)?\b|\bfix(?:es|ed)? (?:a |the )?(?:bug|crash|issue|error)",
    re.I,
)
_TRIVIAL = re.compile(r"\b(?:typos?|spelling|whitespace|lint|comments?|wording)\b", re.I)
_BREAKING = re.compile(r"^BREAKING[ -]CHANGE:\s*(.+)$", re.M)
_NOT_IMPERATIVE = re.compile(r"(?:ed|ing|s)$")
_TEST_DIRS = {"test", "tests", "__tests__", "spec", "specs", "testing", "t"}
_TEST_NAME = re.compile(
    r"(?:^test_.+\.py$|_test\.(?:py|go|rb|exs?)$|\.(?:test|spec)\.[cm]?[jt]sx?$|Tests?\.java$"
    r"|_spec\.rb$|^test.*\.(?:c|cc|cpp)$)"
)
_CHANGELOG = re.compile(r"^(?:changes|changelog|history|news|release[-_ ]?notes)\b", re.I)
_DOC_DIRS = {"doc", "docs", "documentation", "website", "site"}
_CODE_ROOTS = {"src", "lib", "packages", "pkg", "apps", "crates", "cmd", "internal", "modules"}
_NOT_CODE = re.compile(r"^(?:\..+|license.*|licence.*|copying.*|authors.*|notice.*)$", re.I)
TOP_LEVEL = "the top level"


@dataclass(frozen=True)
class Commit:
    sha: str
    cite: str
    subject: str
    body: str
    files: tuple[str, ...]  # as named after the commit (a rename's new name)
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
    mined: bool = False  # computed from history (its line says so)
    # What a mined fact is about: sets of words; a person's fact naming every word of one of
    # them is on the same subject, and wins.
    about: tuple[frozenset[str], ...] = ()


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
        subject, files = parsed.subject, tuple(truth.current_name(f) for f in parsed.files)
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


def noted(notes: Iterable[Item]) -> list[truth.Noted]:
    """Every noted commit (merges and rewritten ones included) as the truth model reads it."""
    raw = [n for n in notes if n.kind == "note"]
    depth = _depths(raw)
    out = []
    for note in raw:
        parsed = parse_body(note.body)
        out.append(
            truth.Noted(
                sha=str(note.meta.get("sha") or "").lower(),
                subject=parsed.subject,
                files=parsed.files,
                when=note.when,
                reverts_named=tuple(truth.REVERT_BODY.findall(parsed.message)),
                merge=len(_as_list(note.meta.get("parents"))) > 1,
                depth=depth.get(str(note.meta.get("sha") or "").lower(), 0),
            )
        )
    return out


def record(notes: Iterable[Item]) -> truth.Record:
    return truth.Record(noted(notes))


def record_from_vault(loc: object, vault: object) -> truth.Record:
    """The truth model's record of the vault's notes (the newest the builtin merger mines)."""
    from gitvault.fold import items as items_mod
    from gitvault.vault.store import Vault

    assert isinstance(vault, Vault)
    tip = vault.tip()
    if tip is None:
        return truth.Record(())
    return record(items_mod.items_at(vault, tip, max_notes=MINE_NOTES))


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


def is_code(path: str) -> bool:
    """Code: neither tests, changelogs nor docs; a top-level file counts (git's own *.c are
    top-level), except dotfiles and licence texts."""
    if is_test(path) or is_changelog(path) or is_doc(path):
        return False
    return "/" in path or not _NOT_CODE.match(path)


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


def subject_style(subject: str) -> str:
    """cc (a Conventional Commits type), area (`area: summary`), capital, or other."""
    cc = _CC.match(subject)
    if cc and cc.group(1).lower() in CC_TYPES:
        return "cc"
    if _AREA.match(subject):
        return "area"
    return "capital" if subject[:1].isupper() else "other"


def message_style(found: list[Commit], now: Now) -> list[Fact]:
    recent = found[-STYLE_WINDOW:]
    if len(recent) < 5:
        return []
    n = len(recent)
    styles = Counter(subject_style(c.subject) for c in recent)
    facts: list[Fact] = []
    when = recent[-1].when
    if styles["cc"] >= 0.5 * n:
        cc = [
            (c, m)
            for c in recent
            if (m := _CC.match(c.subject)) and subject_style(c.subject) == "cc"
        ]
        types = Counter(m.group(1).lower() for _, m in cc)
        top = ", ".join(f"{t} {_pct(k, n)}" for t, k in types.most_common(4))
        scoped = [m.group(2)[1:-1] for _, m in cc if m.group(2)]
        scope = ""
        if len(scoped) >= 0.3 * len(cc):
            common = ", ".join(s for s, _ in Counter(scoped).most_common(3))
            scope = f"; a scope names the area, e.g. ({common})"
        text = f"Commit subjects use Conventional Commits ({len(cc)} of the last {n}: {top}){scope}"
        facts.append(
            Fact(text, now.cites((c for c, _ in cc), 2), when, mined=True, about=_STYLE_ABOUT)
        )
    elif styles["area"] + styles["cc"] >= 0.5 * n:
        # a type word ("doc:", "fix:") names an area as well in a history that is not CC
        prefixed = [c for c in recent if subject_style(c.subject) in ("area", "cc")]
        areas = Counter(m.group(1) for c in prefixed if (m := _AREA.match(c.subject)))
        examples = ", ".join(f'"{a}: …"' for a, _ in areas.most_common(3))
        text = (
            f"Commit subjects name the area they change, `area: summary` ({len(prefixed)} of "
            f"the last {n}; e.g. {examples})"
        )
        facts.append(Fact(text, now.cites(prefixed, 2), when, mined=True, about=_STYLE_ABOUT))
    else:
        capital = [c for c in recent if c.subject[:1].isupper()]
        if len(capital) >= 0.6 * n:
            firsts = Counter(c.subject.split(" ", 1)[0] for c in capital)
            verbs = [w for w, _ in firsts.most_common(3)]
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


def tests_layout(found: list[Commit], now: Now) -> list[Fact]:
    with_tests = [c for c in found if any(is_test(f) and now.path(f) for f in c.files)]
    if len(with_tests) < 3:
        return []
    dirs: Counter[str] = Counter()
    names: Counter[str] = Counter()
    for c in with_tests:
        for f in {f for f in c.files if is_test(f) and now.path(f)}:
            parts = f.split("/")
            cut = next((i for i, p in enumerate(parts[:-1]) if p.lower() in _TEST_DIRS), None)
            dirs["/".join(parts[: cut + 1]) + "/" if cut is not None else "(next to the code)"] += 1
            names[_name_pattern(parts[-1])] += 1
    where, _ = dirs.most_common(1)[0]
    pattern, _ = names.most_common(1)[0]
    # for what: the code areas (as they are now) whose commits touch tests most often
    touched: Counter[str] = Counter()
    tested: Counter[str] = Counter()
    for c in found:
        areas = {area(f) for f in c.files if is_code(f)}
        has_test = any(is_test(f) for f in c.files)
        for a in areas:
            touched[a] += 1
            tested[a] += has_test
    parts = []
    for a, n in sorted(touched.items(), key=lambda kv: (-kv[1], kv[0])):
        if n < 5 or len(parts) >= 3:
            break
        if now.area(a):
            scope = f"under {a}" if a.endswith("/") else f"to {a}"  # a folder, or a file
            parts.append(f"{_pct(tested[a], n)} of {n} commits {scope}")
    share = f"; {', '.join(parts)} touch tests too" if parts else ""
    text = f"Tests live in {where} ({pattern}){share}"
    about = (frozenset({"tests", "live"}), frozenset({"test", "folder"}))
    facts = [Fact(text, now.cites(with_tests, 2), with_tests[-1].when, mined=True, about=about)]
    mapping = _test_mapping(found, now)
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
    if "." in name.strip("."):
        return "*." + name.rsplit(".", 1)[-1]
    return "files named freely"


def _stem(name: str) -> str:
    base = name.rsplit(".", 1)[0]
    base = re.sub(r"^test_|_test$|\.test$|\.spec$|_spec$|Tests?$", "", base)
    return base.lower()


def _test_mapping(found: list[Commit], now: Now) -> Fact | None:
    """Tests named after the module they test (core.py ↔ test_core.py), seen together."""
    pairs: Counter[tuple[str, str]] = Counter()
    evidence: dict[tuple[str, str], list[Commit]] = defaultdict(list)
    for c in found:
        if len(c.files) > MAX_FILES:
            continue
        code = {_stem(f.rsplit("/", 1)[-1]): f for f in c.files if is_code(f) and "/" in f}
        for t in (f for f in c.files if is_test(f)):
            name = t.rsplit("/", 1)[-1]
            stem = _stem(name)
            if stem == name.rsplit(".", 1)[0].lower():
                continue  # no test prefix or suffix (t/Makefile): not named after a module
            if stem in code:
                pairs[(code[stem], t)] += 1
                evidence[(code[stem], t)].append(c)
    live = {k: v for k, v in pairs.items() if now.path(k[0]) and now.path(k[1])}
    if sum(live.values()) < 3:
        return None
    (src, test), n = sorted(live.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    text = (
        f"Tests are named after the module they test, e.g. {src} → {test} ({n} commits change both)"
    )
    seen = evidence[(src, test)]
    about = (frozenset({"tests", "named"}), _both(src, test))
    return Fact(text, now.cites(seen, 2), max(c.when for c in seen), mined=True, about=about)


def co_changes(found: list[Commit], now: Now) -> list[Fact]:
    """Which files and areas change together: companions (changelog, docs, tests) of a code
    area, then pairs of files that rarely change apart. Both ends exist at HEAD."""
    usable = [c for c in found if 0 < len(c.files) <= MAX_FILES]
    if len(usable) < 8:
        return []
    facts: list[Fact] = []
    n_all = len(usable)
    companions: dict[str, list[Commit]] = defaultdict(list)
    for c in usable:
        for key in {
            f if "/" not in f or area(f) == f else area(f) for f in c.files if is_changelog(f)
        }:
            companions[key].append(c)
    area_commits: dict[str, list[Commit]] = defaultdict(list)
    for c in usable:
        for a in {area(f) for f in c.files if is_code(f) and "/" in f}:
            area_commits[a].append(c)
    rules: list[tuple[float, Fact]] = []
    for comp, with_comp in companions.items():
        if not now.area(comp):
            continue
        comp_set = {c.sha for c in with_comp}
        base = len(comp_set) / n_all
        for a, in_area in area_commits.items():
            if not now.area(a):
                continue
            both = [c for c in in_area if c.sha in comp_set]
            conf = len(both) / len(in_area)
            common = len(in_area) >= 0.5 * n_all  # most commits: no contrast to measure
            if (
                len(in_area) >= 8
                and len(both) >= 4
                and conf >= 0.25
                and (common or conf >= 1.2 * base)
            ):
                how = "usually" if conf >= 0.5 else "often"
                text = (
                    f"Changes under {a} {how} come with a changelog entry in {comp} "
                    f"({len(both)} of {len(in_area)} commits)"
                )
                about = (frozenset({"changelog"}), *_about_paths(comp))
                fact = Fact(text, now.cites(both, 2), both[-1].when, mined=True, about=about)
                rules.append((conf, fact))
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
        if n < 4 or is_test(a) or is_test(b):  # code ↔ test: tests_layout
            continue
        ratio = n / min(count[a], count[b])
        if ratio >= 0.6 and now.path(a) and now.path(b):
            strong.append((ratio, n, (a, b)))
    strong.sort(key=lambda s: (-s[1], -s[0], s[2]))
    used: set[str] = set()
    for _ratio, n, (a, b) in strong:
        if a in used or b in used:
            continue
        used.update((a, b))
        text = f"{a} and {b} change together ({n} of {min(count[a], count[b])} commits)"
        evidence = seen[(a, b)]
        about = (_both(a, b),)
        facts.append(Fact(text, now.cites(evidence, 2), evidence[-1].when, mined=True, about=about))
        if len(facts) >= 5:
            break
    return facts


# --------------------------------------------------------------------------- gotchas


def reverts(found: list[Commit], ground: truth.Ground, limit: int = 4) -> list[Fact]:
    """Reverts that stand, newest first: a revert that was reverted in turn is no gotcha (the
    change is back), nor is a revert of a revert; a change that landed again says so."""
    rec = ground.record
    facts: list[Fact] = []
    for c in reversed(found):
        sha = c.sha.lower()
        if sha not in rec.reverts:
            continue
        if rec.reverted_by.get(sha):
            continue  # reverted in turn: the change is back
        targets = rec.reverts[sha]
        if any(t in rec.reverts for t in targets):
            continue  # a revert of a revert: the change is back
        original = next((rec.by_sha[t] for t in targets if t in rec.by_sha), None)
        quoted = _REVERT_SUBJECT.match(c.subject)
        what = original.subject if original else (quoted.group(1) if quoted else c.subject)
        cites = [c.cite]
        if original is not None:
            cites.append(f"c:{original.sha[:7]}")
        landed = [x for t in targets if t in rec.by_sha for x in ground.relanded(t, sha)]
        reason = _reason(c.body)
        text = f'Reverted on {day(c.when)}: "{_short(what, 70)}"'
        if landed:
            text += f"; it re-landed later in {landed[0][:7]}"
            cites.append(f"c:{landed[0][:7]}")
        elif reason:
            text += f" — {reason}"
        about = (frozenset(_words(what)) or frozenset({"revert"}),)
        facts.append(Fact(text, tuple(dict.fromkeys(cites)), c.when, mined=True, about=about))
        if len(facts) >= limit:
            break
    return facts


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]{4,}", text.lower())}


def _reason(body: str) -> str:
    for line in body.splitlines():
        line = line.strip()
        if line.lower().startswith("this reverts"):
            continue
        if (
            line
            and not truth.REVERT_BODY.search(line)
            and not line.startswith(("[", "Signed-off"))
            and not re.match(r"^[A-Z][\w-]*-by:", line)
        ):
            return _short(line, 70)
    return ""


def is_fix(subject: str) -> bool:
    return bool(
        _FIX.search(subject) and not _REVERT_SUBJECT.match(subject) and not _TRIVIAL.search(subject)
    )


def hot_spots(found: list[Commit], now: Now) -> list[Fact]:
    per_file: dict[str, list[Commit]] = defaultdict(list)
    for c in found:
        if len(c.files) > MAX_FILES or not is_fix(c.subject):
            continue
        for f in c.files:
            if is_code(f) and now.path(f):
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
        for a in {area(f) for f in c.files}:
            counts[a] += 1
    live = [(a, k) for a, k in counts.items() if now.area(a)]
    return ", ".join(f"{a} ({k})" for a, k in sorted(live, key=lambda x: (-x[1], x[0]))[:n])


def activity(found: list[Commit], now: Now) -> list[Fact]:
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


def release(found: list[Commit], ground: truth.Ground) -> list[Fact]:
    """The latest release, from the tags (newest by date; a pre-release named beside the
    newest release), and the commits since: never a guess from commit subjects. A release
    tagged on a branch of its own (a stable branch) cites where it meets HEAD."""
    newest, stable = ground.release_tags()
    if newest is None:
        return []
    shown = stable or newest
    base = _meeting_point(ground, shown.commit)
    commit = ground.record.by_sha.get(base) if base else None
    if commit is None:
        return []  # the release shares no noted commit with HEAD: nothing to cite
    since = _count_since(ground, commit.sha)
    text = f"Latest release: {shown.name} (tagged {day(shown.created)})"
    if newest is not shown:
        text += f"; newest tag {newest.name} is a pre-release"
    if since is not None:
        text += f"; {since} commits since"
    about = (frozenset({"latest", "release"}),)
    return [Fact(text, (f"c:{commit.sha[:7]}",), shown.created, mined=True, about=about)]


def _meeting_point(ground: truth.Ground, commit: str) -> str | None:
    """The tagged commit when HEAD contains it, else where the two histories meet."""
    from gitvault.vault import gitcmd

    proc = gitcmd.run_git(["merge-base", commit, "HEAD"], ground.cwd, check=False)
    out = proc.stdout.decode().strip()
    return out.lower() if proc.returncode == 0 and len(out) == 40 else None


def _count_since(ground: truth.Ground, commit: str) -> int | None:
    from gitvault.vault import gitcmd

    proc = gitcmd.run_git(
        ["rev-list", "--count", "--no-merges", f"{commit}..HEAD", "--"], ground.cwd, check=False
    )
    out = proc.stdout.decode().strip()
    return int(out) if proc.returncode == 0 and out.isdigit() else None


# --------------------------------------------------------------------------- architecture


def layout_facts(found: list[Commit], now: Now) -> list[Fact]:
    recent = found[-LAYOUT_WINDOW:]
    code: Counter[str] = Counter()
    files: Counter[str] = Counter()
    exts: dict[str, Counter[str]] = defaultdict(Counter)
    for c in recent:
        if len(c.files) > MAX_FILES:
            continue
        for f in c.files:
            if not is_code(f) or not now.path(f):
                continue
            where = area(f) if "/" in f else TOP_LEVEL
            code[where] += 1
            files[f] += 1
            if "." in f.rsplit("/", 1)[-1]:
                exts[where]["." + f.rsplit(".", 1)[-1]] += 1
    if not code:
        return []
    facts: list[Fact] = []
    tops = sorted(code.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    where = ", ".join(
        a + (f" ({exts[a].most_common(1)[0][0]})" if exts[a] else "") for a, _ in tops
    )
    first = tops[0][0]
    main = [
        c for c in recent if any((area(f) if "/" in f else TOP_LEVEL) == first for f in c.files)
    ]
    text = f"Recent code changes are mostly in {where}"
    about = (frozenset({"code", "lives"}),)
    facts.append(Fact(text, now.cites(main, 2), recent[-1].when, mined=True, about=about))
    hot = sorted(files.items(), key=lambda kv: (-kv[1], kv[0]))[:4]
    if hot and hot[0][1] >= 3:
        listing = ", ".join(f"{f} ({n})" for f, n in hot if n >= 3)
        touching = [c for c in recent if hot[0][0] in c.files]
        text = f"Most-changed files (commits in the last {len(recent)}): {listing}"
        about = (frozenset({"most-changed"}),)
        facts.append(Fact(text, now.cites(touching, 2), recent[-1].when, mined=True, about=about))
    return facts


def breaking(found: list[Commit], now: Now) -> list[Fact]:
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
        about = (frozenset(_words(text)),)
        facts.append(Fact(text, (c.cite,), c.when, mined=True, about=about))
        if len(facts) >= 3:
            break
    return facts
