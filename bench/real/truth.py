"""Digest truth: every line of `_master.md` checked against the history, line by line.

A line is a claim with evidence. What is checked, each from git (bench.real.history):
- citations: every `c:<sha>` names a commit of the repository; `s:<slug>` a session in the
  vault; a line citing nothing fails;
- quotations: a quoted subject ("…", three words or more) is the subject of a cited commit;
- paths: every path the line names (backticked, or path-like: `a/b.py`, `src/`, `tox.ini`,
  `test_*.py`) exists at HEAD, unless the line says it is gone, renamed or moved (then it must
  have existed);
- reverts: the line cites the revert and the commit it reverted (from "This reverts commit
  <sha>", else the subject it quotes); it is wrong when the revert was itself reverted, and must
  say so when the change re-landed (a later commit with the same `git patch-id`); a date it
  gives is the revert's;
- releases: a "latest release" line names the newest tag by date (`for-each-ref
  --sort=-creatordate`; the newest tag that is no pre-release also counts), and its "N commits
  since" counts;
- counts: commit-subject conventions ("N of the last M" for Conventional Commits, `area:`
  prefixes, capitalised, pull-request numbers), co-change pairs and companions ("changes under
  D come with F"), test shares, hot spots ("P needed N fixes"), most-changed files, activity
  spans: each recomputed from the history, within a small tolerance around the range of
  defensible definitions.

A line whose every check passes passes; one with a failing check fails; one that makes a
numeric claim no rule here can recompute, and fails nothing, is `unverified`: listed, but
neither checkable nor counted in the pass rate.
"""

from __future__ import annotations

import fnmatch
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field

from bench.real.history import Commit, History

CITE = re.compile(r"\b([cs]):([A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9]|[A-Za-z0-9])")
_TRAILING_CITES = re.compile(r"\s*\(\s*[cs]:[^()]*\)\s*$")
_QUOTE = re.compile(r'"([^"]+)"|“([^”]+)”')
_BACKTICK = re.compile(r"`([^`]+)`")
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_SPAN = re.compile(
    r"\b(\d{4}-\d{2}-\d{2})\s*(?:→|->|–|—|\.\.|to|until)\s*(\d{4}-\d{2}-\d{2})\b", re.I
)
_VERSION = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+)+(?:[-.]?(?:rc|alpha|beta|a|b|pre|dev)\.?\d*)?)\b")
_PRERELEASE = re.compile(r"(?:rc|alpha|beta|pre|dev|a|b)\.?\d*$", re.I)
_NUMBER = re.compile(r"(?<![\w./#:-])(\d[\d,]*)(%?)(?![\w/-]|\.\d)")
_TOKEN = re.compile(r"[\w./+@*-]+")
_GONE = re.compile(
    r"\b(?:removed|deleted|gone|renamed|moved|no longer exists?|formerly|used to be|dropped"
    r"|was replaced|now lives?|since removed)\b",
    re.I,
)
_REVERT_LINE = re.compile(
    r"\b(?:reverted|reverting|revert of|reverts?\b(?= commit)|backed out)\b|^Revert\b", re.I
)
_ACK_REREVERT = re.compile(
    r"\b(?:reverted back|re-?reverted|revert(?:ed)? again|restored|reinstated|revert was"
    r"(?: itself)? reverted|undone|the change is back)\b",
    re.I,
)
_ACK_RELAND = re.compile(
    r"\b(?:re-?land\w*|landed again|re-?appli\w*|re-?introduc\w*|came back|brought back"
    r"|re-?added|re-?done|back in|the change is back|re-?committed)\b",
    re.I,
)
_RELEASE_LINE = re.compile(
    r"\b(?:latest|newest|last|most recent|current)\b[^.;]{0,40}\brelease"
    r"|\brelease[sd]?\b[^.;]{0,40}\b(?:latest|newest)\b",
    re.I,
)
_OF_LAST = re.compile(
    r"(\d[\d,]*) of (?:the )?(?:last|latest|newest|most recent|recent) (\d[\d,]*)", re.I
)
_N_OF_M = re.compile(r"(\d[\d,]*) of (\d[\d,]*) commits", re.I)
_BOTH = re.compile(r"(\d[\d,]*) commits? (?:change|changed|touch|touched) both", re.I)
_SHARE_UNDER = re.compile(r"(\d+)% of (\d[\d,]*) commits (?:under|to) (\S+)", re.I)
_FIXES = re.compile(
    r"(\S+) (?:needed|had|got|took) (at least |over |more than )?(\d[\d,]*) fix(?:es)?"
    r"(?:, (\d[\d,]*) within a month)?",
    re.I,
)
_LATEST_DATE = re.compile(r"\blatest\b[^0-9]{0,12}(\d{4}-\d{2}-\d{2})", re.I)
_COUNT_PAREN = re.compile(r"(\S+) \((\d[\d,]*)\)")
_SHARE_PAREN = re.compile(r"(\S+) \((\d+)%")
_WINDOW = re.compile(r"\b(?:last|latest|newest) (\d[\d,]*)(?: commits)?\b", re.I)
_SINCE = re.compile(r"(\d[\d,]*) commits since", re.I)
_CC_TYPE = re.compile(r"\b([a-z]+) (\d+)%")
_STYLE_EXAMPLE = re.compile(r'"(\w[\w-]*) …"')

# Conventional Commits' types (the specification's and Angular's): `area: summary` is no CC.
_CC_TYPE_NAMES = "feat fix docs doc style refactor perf test tests build ci chore revert deps"
CC_TYPES = frozenset(_CC_TYPE_NAMES.split(" "))
CONVENTIONAL = re.compile(r"^([A-Za-z]+)(\([^)]*\))?!?: \S")
AREA_PREFIX = re.compile(r"^[\w.@/+*{}-]+(?:[ ,/][\w.@/+*{}-]+){0,3}: \S")
PR_SUFFIX = re.compile(r"\((?:#|!)\d+\)\s*$")
_FIX_BROAD = re.compile(
    r"\b(?:fix(?:e[sd]|ing)?|bug(?:s|fix(?:es)?)?|regression|crash(?:es|ed)?|hotfix)\b", re.I
)
# The narrow reading: the subject says it is a fix up front (after an `area:` / `fix(scope):`
# prefix), or names a regression or a crash.
_FIX_NARROW = re.compile(
    r"^(?:[\w./-]+(?:\([^)]*\))?!?:\s*)?(?:fix(?:e[sd]|ing)?|bug\s?fix(?:es)?|hotfix)\b"
    r"|\bregression\b|\bcrash(?:es|ed)?\b|\bfix(?:es|ed)? (?:a |the )?(?:bug|crash|issue|error)",
    re.I,
)
_NOT_A_FIX = re.compile(r"\b(?:typos?|spelling|whitespace|lint|comments?|wording)\b", re.I)
_TEST_DIRS = frozenset({"test", "tests", "t", "spec", "specs", "__tests__", "testing"})
_TEST_NAME = re.compile(
    r"^test[_-].+|.+[_-]test\.\w+$|.+\.(?:test|spec)\.\w+$|.+Tests?\.\w+$|^t\d{4}-.+"
)
_DOC_DIRS = frozenset({"doc", "docs", "documentation", "website", "site"})
BIG_COMMIT = 40  # files: bulk commits say little about what belongs together
MONTH = 30 * 86_400


def tolerance_ok(
    stated: float, lo: float, hi: float, *, rel: float = 0.15, floor: float = 2
) -> bool:
    """A stated count agrees with a recomputed one when it lies in the range the defensible
    definitions give, widened by max(floor, rel x the larger end)."""
    lo, hi = min(lo, hi), max(lo, hi)
    slack = max(floor, rel * hi)
    return lo - slack <= stated <= hi + slack


def is_test(path: str) -> bool:
    parts = path.split("/")
    return any(p.lower() in _TEST_DIRS for p in parts[:-1]) or bool(_TEST_NAME.match(parts[-1]))


def is_doc(path: str) -> bool:
    parts = path.split("/")
    return (len(parts) > 1 and parts[0].lower() in _DOC_DIRS) or parts[-1].lower().startswith(
        "readme"
    )


def _int(text: str) -> int:
    return int(text.replace(",", ""))


# --------------------------------------------------------------------------- results


@dataclass
class Check:
    rule: str
    ok: bool
    detail: str


@dataclass
class LineVerdict:
    category: str
    line: str
    kinds: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    unverified: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return "+".join(self.kinds) if self.kinds else "general"

    @property
    def status(self) -> str:
        if any(not c.ok for c in self.checks):
            return "fail"
        if self.unverified or not self.checks:
            return "unverified"
        return "pass"

    @property
    def reasons(self) -> list[str]:
        return [f"{c.rule}: {c.detail}" for c in self.checks if not c.ok]

    def add(self, rule: str, ok: bool, detail: str) -> None:
        self.checks.append(Check(rule, ok, detail))

    def as_json(self) -> dict[str, object]:
        out = asdict(self)
        out.update(kind=self.kind, status=self.status, reasons=self.reasons)
        return out


@dataclass
class TruthReport:
    lines: list[LineVerdict]

    @property
    def checkable(self) -> list[LineVerdict]:
        return [v for v in self.lines if v.status in ("pass", "fail")]

    @property
    def passed(self) -> int:
        return sum(1 for v in self.lines if v.status == "pass")

    @property
    def failed(self) -> list[LineVerdict]:
        return [v for v in self.lines if v.status == "fail"]

    @property
    def pass_rate(self) -> float | None:
        n = len(self.checkable)
        return self.passed / n if n else None

    def failure_classes(self) -> dict[str, int]:
        """How many failing lines each rule fails (a line can fail several)."""
        out: Counter[str] = Counter()
        for v in self.failed:
            for rule in dict.fromkeys(c.rule for c in v.checks if not c.ok):
                out[rule] += 1
        return dict(out.most_common())

    def as_json(self) -> dict[str, object]:
        return {
            "lines": [v.as_json() for v in self.lines],
            "checkable": len(self.checkable),
            "passed": self.passed,
            "failed": len(self.failed),
            "unverified": sum(1 for v in self.lines if v.status == "unverified"),
            "pass_rate": self.pass_rate,
            "failure_classes": self.failure_classes(),
        }


# --------------------------------------------------------------------------- the digest


def digest_lines(text: str) -> list[tuple[str, str]]:
    """(category, line) for every fact line of a digest: `## Category` headings, `- ` lines;
    front matter, placeholders (`- (none yet)`) and cut markers (`- [… n more …]`) skipped."""
    body = text
    if body.startswith("---\n"):
        end = body.find("\n---\n", 4)
        if end != -1:
            body = body[end + 5 :]
    out = []
    category = ""
    for raw in body.splitlines():
        line = raw.strip()
        if line.startswith("## "):
            category = line[3:].strip()
        elif line.startswith("- ") and not line[2:].startswith(("(", "[…")):
            out.append((category, line))
    return out


def claim_text(line: str) -> str:
    """The line without its bullet and its citations."""
    text = line[2:] if line.startswith("- ") else line
    while _TRAILING_CITES.search(text):
        text = _TRAILING_CITES.sub("", text)
    return CITE.sub("", text).strip()


def _without_quotes(text: str) -> str:
    return _QUOTE.sub(" ", text)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


# --------------------------------------------------------------------------- the judge


SessionExists = Callable[[str], bool]


class Judge:
    def __init__(self, history: History, session_exists: SessionExists | None = None) -> None:
        self.h = history
        self.session_exists = session_exists or (lambda slug: False)

    def report(self, digest_text: str) -> TruthReport:
        return TruthReport([self.line(cat, ln) for cat, ln in digest_lines(digest_text)])

    def line(self, category: str, line: str) -> LineVerdict:
        v = LineVerdict(category, line)
        text = claim_text(line)
        cited = self._cites(v, line)
        self._quotes(v, text, cited, line)
        self._paths(v, text)
        consumed: set[str] = set()
        for rule in (
            self._revert,
            self._release,
            self._subject_style,
            self._hot_spot,
            self._share_under,
            self._companion,
            self._pair,
            self._most_changed,
            self._activity,
            self._layout_share,
        ):
            rule(v, text, cited, consumed)
        self._leftover_numbers(v, text, consumed)
        return v

    # ------------------------------------------------------------ every line

    def _cites(self, v: LineVerdict, line: str) -> list[Commit]:
        cites = list(dict.fromkeys((m.group(1), m.group(2)) for m in CITE.finditer(line)))
        if not cites:
            v.add("cite", False, "cites nothing")
            return []
        commits = []
        for kind, ident in cites:
            if kind == "s":
                ok = self.session_exists(ident)
                v.add("cite", ok, f"s:{ident} " + ("is a session" if ok else "names no session"))
                continue
            sha = self.h.resolve(ident)
            if sha is None:
                v.add("cite", False, f"c:{ident} names no commit of this repository")
                continue
            v.add("cite", True, f"c:{ident} is {sha[:12]}")
            found = self.h.by_sha.get(sha)
            if found is not None:
                commits.append(found)
        return commits

    def _quotes(self, v: LineVerdict, text: str, cited: list[Commit], line: str) -> None:
        if not cited:
            return  # a session's words, or nothing to compare against
        for match in _QUOTE.finditer(text):
            quote = (match.group(1) or match.group(2) or "").strip()
            clean = quote.rstrip("…").rstrip(". ").strip()
            if len(clean.split()) < 3:
                continue  # a word or two ("Add …"): an example, not a subject
            want = _norm(clean)
            ok = any(want in _norm(c.subject) for c in cited)
            v.add(
                "quote",
                ok,
                f'"{_short(quote)}" '
                + ("is a cited commit's subject" if ok else "is the subject of no cited commit"),
            )

    def named_paths(self, text: str) -> list[tuple[str, str]]:
        """(kind, path) for every path the text names: kind file, dir, bare (a file name
        without folder) or glob. Quotations are left out: they are history's words."""
        seen: dict[str, str] = {}
        plain = _without_quotes(text)
        candidates = [m.group(1).strip() for m in _BACKTICK.finditer(plain)]
        ticked = set(candidates)
        candidates += _TOKEN.findall(_BACKTICK.sub(" ", plain))
        for raw in candidates:
            token = raw.strip().strip(",;:()[]'").rstrip(".")
            token = token.lstrip("*") if token.startswith("**") else token
            if not token or "://" in token or token.startswith(("www.", "@", "-")):
                continue
            kind = self._path_kind(token, token in ticked or raw in ticked)
            if kind:
                seen.setdefault(token.rstrip("/") if kind == "dir" else token, kind)
        return [(k, p) for p, k in seen.items()]

    def _path_kind(self, token: str, ticked: bool) -> str | None:
        if " " in token or len(token) > 200:
            return None
        base = token.rstrip("/").rsplit("/", 1)[-1]
        ext = base.rsplit(".", 1)[-1].lower() if "." in base.strip(".") else ""
        has_ext = ext in self.h.extensions
        if "*" in token:
            return "glob" if ("." in base or "/" in token) else None
        if "/" in token.strip("/"):
            if token.endswith("/"):
                return "dir"
            bare = token.rstrip("/")
            if has_ext or bare in self.h.ever_files:
                return "file"
            if bare in self.h.ever_dirs:
                return "dir"
            return None
        if token.endswith("/") and len(token) > 1:
            return "dir" if re.fullmatch(r"[\w.@+-]+", token[:-1]) else None
        if _VERSION.fullmatch(token) or not re.fullmatch(r"[\w.@+-]+", token):
            return None
        # A bare name is a file when the history had a file of that name, or when it is
        # backticked and ends like the history's files (prose such as "Node.js" is not).
        if ticked and (has_ext or token in self.h.ever_basenames):
            return "bare"
        # Unticked, a plain lower-case word ("changelog") is prose even when some file was
        # once named so; Makefile, GIT-VERSION-GEN or tox.ini are names.
        if token in self.h.ever_basenames and (has_ext or not re.fullmatch(r"[a-z]+", token)):
            return "bare"
        return None

    def _paths(self, v: LineVerdict, text: str) -> None:
        named = self.named_paths(text)
        # The line's own words, not a name's: src/gone.py or `removed_helper` says nothing.
        words = _BACKTICK.sub(" ", text)
        for _, path in sorted(named, key=lambda kp: -len(kp[1])):
            words = words.replace(path, " ")
        gone_said = bool(_GONE.search(words))
        h = self.h
        for kind, path in named:
            if kind == "glob":
                pool = h.head_files if "/" in path else h.head_basenames
                ok = any(fnmatch.fnmatchcase(p, path) for p in pool)
                v.add(
                    "path",
                    ok,
                    f"{path} " + ("matches files at HEAD" if ok else "matches no file at HEAD"),
                )
                continue
            if kind == "bare":
                now, ever = path in h.head_basenames, path in h.ever_basenames
            elif kind == "dir":
                now, ever = path in h.head_dirs, path in h.ever_dirs
            else:
                now = path in h.head_files or path in h.head_dirs
                ever = path in h.ever_files or path in h.ever_dirs
            shown = path + ("/" if kind == "dir" else "")
            if now:
                v.add("path", True, f"{shown} exists at HEAD")
            elif gone_said and ever:
                v.add("path", True, f"{shown} is gone, and the line says so")
            else:
                why = (
                    "existed in history but not at HEAD"
                    if ever
                    else "never existed in this history"
                )
                v.add("path", False, f"{shown} does not exist at HEAD ({why})")

    # ------------------------------------------------------------ reverts

    def _revert(self, v: LineVerdict, text: str, cited: list[Commit], used: set[str]) -> None:
        if not _REVERT_LINE.search(text):
            return
        v.kinds.append("revert")
        h = self.h
        revs = [c for c in cited if c.sha in h.reverts]
        if not revs:
            v.add("revert", False, "a revert line that cites no revert commit")
            return
        cited_shas = {c.sha for c in cited}
        for r in revs:
            targets = h.reverts[r.sha]
            if not targets:
                v.add("revert", True, f"{r.sha[:10]} names no reverted commit (nothing to cite)")
            for target in targets:
                if target not in h.by_sha:
                    v.add(
                        "revert", True, f"{r.sha[:10]} reverts {target[:10]}, not in this history"
                    )
                    continue
                ok = target in cited_shas
                v.add(
                    "revert-cites-original",
                    ok,
                    f"{r.sha[:10]} reverts {target[:10]}"
                    + (", cited" if ok else ", which the line does not cite"),
                )
                landed = h.relanded(target, r)
                if landed:
                    said = bool(_ACK_RELAND.search(text))
                    v.add(
                        "revert-relanded",
                        said,
                        f"the change re-landed in {landed[0].sha[:10]} (same patch-id)"
                        + (", and the line says so" if said else ", and the line does not say so"),
                    )
            again = [x for x in h.reverted_by.get(r.sha, []) if x in h.by_sha]
            if again:
                said = bool(_ACK_REREVERT.search(text))
                v.add(
                    "revert-reverted",
                    said,
                    f"the revert {r.sha[:10]} was itself reverted by {again[0][:10]}"
                    + (", and the line says so" if said else ""),
                )
        days = {m.group(1) for m in _DATE.finditer(_without_quotes(text))}
        for d in days:
            ok = any(d in r.days() for r in revs)
            v.add(
                "revert-date",
                ok,
                f"{d} " + ("is the revert's date" if ok else "is not the revert's date"),
            )
            used.add(d)

    # ------------------------------------------------------------ releases

    def _release(self, v: LineVerdict, text: str, cited: list[Commit], used: set[str]) -> None:
        if not _RELEASE_LINE.search(text):
            return
        v.kinds.append("release")
        tags = self.h.tags
        if not tags:
            v.add("release", False, "the history has no tags")
            return
        newest = tags[0]
        stable = next((t for t in tags if not _PRERELEASE.search(t.name)), None)
        accepted = {newest.name}
        if stable is not None:
            accepted.add(stable.name)
        versions = {_version(t) for t in accepted} | accepted
        named = [m.group(1) for m in _VERSION.finditer(text)]
        named_tags = [
            t.name for t in tags if re.search(rf"(?<![\w.]){re.escape(t.name)}(?![\w.])", text)
        ]
        for m in _VERSION.finditer(text):
            used.add(m.group(1))
        ok = any(n in versions for n in named) or any(t in accepted for t in named_tags)
        if not named and not named_tags:
            v.add("release", False, f"names no version; the newest tag is {newest.name}")
        else:
            v.add(
                "release",
                ok,
                f"names {', '.join(named_tags or named)}; the newest tag is {newest.name}"
                + (f" (newest release {stable.name})" if stable and stable != newest else ""),
            )
        since = _SINCE.search(text)
        if since:
            stated = _int(since.group(1))
            used.add(since.group(1))
            # since what the line cites (a release commit), else the tag it names
            tag = next((t for t in tags if t.name in named_tags), None)
            base = cited[0].sha if cited else (tag or newest).commit
            label = base[:10] if cited else (tag or newest).name
            lo, hi = self._since(base)
            v.add(
                "release-count",
                tolerance_ok(stated, lo, hi),
                f"{stated} commits since {label}: {lo}–{hi} recomputed",
            )

    def _since(self, commit: str) -> tuple[int, int]:
        return self.h.count_since(commit)

    # ------------------------------------------------------------ conventions

    def _subject_style(
        self, v: LineVerdict, text: str, cited: list[Commit], used: set[str]
    ) -> None:
        count = _OF_LAST.search(text)
        if not count or not re.search(r"\bsubjects?\b|\bcommit messages?\b", text, re.I):
            return
        v.kinds.append("convention")
        stated, window = _int(count.group(1)), _int(count.group(2))
        recent = self.h.last_non_merges(window)
        styles: list[tuple[str, Callable[[str], bool]]] = []
        if re.search(r"conventional commit", text, re.I):
            styles.append(("Conventional Commits", _is_conventional))
        elif re.search(r"\barea\b|\bsubsystem\b|\bcomponent\b|`[a-z]+:", text, re.I):
            styles.append(("an `area:` prefix", lambda s: bool(AREA_PREFIX.match(s))))
        if re.search(r"pull[- ]request number|\bPR number|\(#", text, re.I):
            styles.append(("a pull-request number", lambda s: bool(PR_SUFFIX.search(s))))
        if re.search(r"capitali[sz]", text, re.I):
            styles.append(("a capital letter", lambda s: s[:1].isupper()))
        elif re.search(r"lower[- ]?case", text, re.I):
            styles.append(("a lower-case letter", lambda s: s[:1].islower()))
        if not styles:
            v.unverified.append(f"a subject style the judge does not know ({_short(text)})")
            return
        used.update({count.group(1), count.group(2)})
        for label, test in styles[:1]:
            actual = sum(1 for c in recent if test(c.subject))
            v.add(
                "convention-count",
                tolerance_ok(stated, actual, actual, rel=0.0, floor=max(3, 0.05 * len(recent))),
                f"{stated} of the last {window} subjects use {label}: {actual} of {len(recent)}"
                " recomputed",
            )
            if label == "Conventional Commits":
                for m in _CC_TYPE.finditer(text):
                    kind, pct = m.group(1).lower(), int(m.group(2))
                    used.add(m.group(2))
                    got = sum(
                        1
                        for c in recent
                        if (cc := CONVENTIONAL.match(c.subject)) and cc.group(1).lower() == kind
                    )
                    share = round(100 * got / len(recent)) if recent else 0
                    v.add(
                        "convention-count",
                        abs(share - pct) <= 5,
                        f"{kind} {pct}%: {share}% recomputed",
                    )
        firsts = Counter(c.subject.split(" ", 1)[0] for c in recent if c.subject)
        top = {w for w, _ in firsts.most_common(6)}
        for m in _STYLE_EXAMPLE.finditer(text):
            ok = m.group(1) in top
            v.add(
                "convention-example",
                ok,
                f'"{m.group(1)} …" ' + ("is" if ok else "is not") + " a common first word",
            )

    # ------------------------------------------------------------ counts over files

    def _readings(self, path: str, kind: str) -> list[list[Commit]]:
        """The non-merge commits touching a named path, for each way the name can be read: a
        folder (everything under it), a file (that path, or under it when it is a folder); a
        bare name as the top-level path of that name and as any file of that base name."""
        pool = self.h.non_merges
        path = path.rstrip("/")
        if kind == "dir":
            prefix = path + "/"
            return [[c for c in pool if any(f.startswith(prefix) for f in c.files)]]
        exact = [
            c for c in pool if path in c.files or any(f.startswith(path + "/") for f in c.files)
        ]
        if kind != "bare":
            return [exact]
        named = [c for c in pool if any(f.rsplit("/", 1)[-1] == path for f in c.files)]
        return [exact, named] if path in self.h.ever_files else [named]

    def _touching(self, path: str, kind: str, commits: Iterable[Commit]) -> list[Commit]:
        inside = {c.sha for reading in self._readings(path, kind) for c in reading}
        return [c for c in commits if c.sha in inside]

    @staticmethod
    def _span(counts: Iterable[int]) -> tuple[int, int]:
        values = list(counts) or [0]
        return min(values), max(values)

    def _hot_spot(self, v: LineVerdict, text: str, cited: list[Commit], used: set[str]) -> None:
        m = _FIXES.search(_without_quotes(text))
        if not m:
            return
        v.kinds.append("hot-spot")
        path = m.group(1).strip("`")
        kind = "dir" if path.endswith("/") else ("file" if "/" in path else "bare")
        pools: list[list[Commit]] = []
        for touching in self._readings(path, kind):
            broad = [
                c for c in touching if _FIX_BROAD.search(c.subject) and c.sha not in self.h.reverts
            ]
            narrow = _once(
                c
                for c in broad
                if _FIX_NARROW.search(c.subject)
                and not _NOT_A_FIX.search(c.subject)
                and len(c.files) <= BIG_COMMIT
            )
            pools += [narrow, broad]
        stated = _int(m.group(3))
        used.add(m.group(3))
        lo, hi = self._span(len(pool) for pool in pools)
        # "at least N" is true of any larger count
        ok = stated <= hi + max(2, 0.15 * hi) if m.group(2) else tolerance_ok(stated, lo, hi)
        v.add("hot-spot-count", ok, f"{path}: {stated} fixes stated, {lo}–{hi} recomputed")
        if m.group(4):
            used.add(m.group(4))
            lo, hi = self._span(_close_pairs(pool, by) for pool in pools for by in ("a", "c"))
            v.add(
                "hot-spot-count",
                tolerance_ok(_int(m.group(4)), lo, hi),
                f"{m.group(4)} within a month stated, {lo}–{hi} recomputed",
            )
        latest = _LATEST_DATE.search(_without_quotes(text))
        newest = [pool[0] for pool in pools if pool]
        if latest and newest:
            used.add(latest.group(1))
            ok = any(latest.group(1) in c.days() for c in newest)
            v.add("hot-spot-date", ok, f"latest fix {latest.group(1)} stated")

    def _share_under(self, v: LineVerdict, text: str, cited: list[Commit], used: set[str]) -> None:
        found = list(_SHARE_UNDER.finditer(text))
        if not found or not re.search(r"\btests?\b", text, re.I):
            return
        v.kinds.append("test-share")
        for m in found:
            pct, n, where = int(m.group(1)), _int(m.group(2)), m.group(3).rstrip(",;")
            used.update({m.group(1), m.group(2)})
            kind = "dir" if where.endswith("/") else "file"
            every = self._readings(where, kind)[0]
            pools = [every, _small(every)]
            counts_ok = tolerance_ok(n, *self._span(len(p) for p in pools))
            shares = [
                round(100 * sum(1 for c in pool if any(is_test(f) for f in c.files)) / len(pool))
                for pool in pools
                if pool
            ] or [0]
            share_ok = min(shares) - 10 <= pct <= max(shares) + 10
            v.add(
                "test-share",
                counts_ok and share_ok,
                f"{pct}% of {n} commits under {where} touch tests: {min(shares)}–{max(shares)}% of"
                f" {len(pools[1])}–{len(every)} recomputed",
            )

    def _companion(self, v: LineVerdict, text: str, cited: list[Commit], used: set[str]) -> None:
        m = re.search(r"\bunder (\S+/)", text)
        count = _N_OF_M.search(text)
        if not m or not count or "fix" in text.lower() or _SHARE_UNDER.search(text):
            return
        v.kinds.append("co-change")
        where = m.group(1)
        after = self.named_paths(_without_quotes(text)[m.end() :])
        others = [(k, p) for k, p in after if p.rstrip("/") != where.rstrip("/")]
        if not others:
            v.unverified.append("a companion rule whose companion the judge cannot read")
            return
        kind, companion = others[0]
        used.update({count.group(1), count.group(2)})
        every = self._readings(where, "dir")[0]
        pools = [every, _small(every)]
        both = [self._touching(companion, kind, pool) for pool in pools]
        n, total = _int(count.group(1)), _int(count.group(2))
        n_lo, n_hi = self._span(len(b) for b in both)
        t_lo, t_hi = self._span(len(p) for p in pools)
        v.add(
            "co-change-count",
            tolerance_ok(n, n_lo, n_hi) and tolerance_ok(total, t_lo, t_hi),
            f"{n} of {total} commits under {where} touch {companion}: {n_lo}–{n_hi} of"
            f" {t_lo}–{t_hi} recomputed",
        )

    def _pair(self, v: LineVerdict, text: str, cited: list[Commit], used: set[str]) -> None:
        if "co-change" in v.kinds or "test-share" in v.kinds:
            return
        if not re.search(r"\btogether\b|\bboth\b|\balongside\b|→", text, re.I):
            return
        files = [(k, p) for k, p in self.named_paths(text) if k in ("file", "bare")]
        count = _N_OF_M.search(text) or _BOTH.search(text)
        if len(files) < 2 or not count:
            return
        v.kinds.append("co-change")
        (ka, a), (kb, b) = files[0], files[1]
        together: list[int] = []
        alone: list[int] = []
        for ta in self._readings(a, ka):
            for tb in self._readings(b, kb):
                inb = {c.sha for c in tb}
                both = [c for c in ta if c.sha in inb]
                together += [len(both), len(_small(both, 12))]
                alone += [min(len(ta), len(tb)), min(len(_small(ta)), len(_small(tb)))]
        n = _int(count.group(1))
        used.add(count.group(1))
        lo, hi = self._span(together)
        ok = tolerance_ok(n, lo, hi)
        detail = f"{a} and {b}: {n} commits together stated, {lo}–{hi} recomputed"
        if count.re is _N_OF_M:
            total = _int(count.group(2))
            used.add(count.group(2))
            t_lo, t_hi = self._span(alone)
            ok = ok and tolerance_ok(total, t_lo, t_hi)
            detail += f"; of {total} stated, {t_lo}–{t_hi} recomputed"
        v.add("co-change-count", ok, detail)

    def _most_changed(self, v: LineVerdict, text: str, cited: list[Commit], used: set[str]) -> None:
        if not re.search(r"most[- ]changed|changed most|most often changed", text, re.I):
            return
        v.kinds.append("most-changed")
        window = _WINDOW.search(text)
        named = dict((p, k) for k, p in self.named_paths(_without_quotes(text)))
        pairs = [(p.strip("`,;:"), n) for p, n in _COUNT_PAREN.findall(_without_quotes(text))]
        pairs = [(p, n) for p, n in pairs if p.rstrip("/") in named]
        if not window:
            v.unverified.append("most-changed counts without a stated window")
            return
        used.add(window.group(1))
        recent = self.h.last_non_merges(_int(window.group(1)))
        for path, n in pairs:
            used.add(n)
            every = self._touching(path, named[path.rstrip("/")], recent)
            lo, hi = self._span([len(every), len(_small(every))])
            v.add(
                "most-changed-count",
                tolerance_ok(_int(n), lo, hi),
                f"{path} ({n}): {lo}–{hi} of the last {len(recent)} recomputed",
            )

    def _activity(self, v: LineVerdict, text: str, cited: list[Commit], used: set[str]) -> None:
        span = _SPAN.search(_without_quotes(text))
        if not span:
            return
        v.kinds.append("activity")
        first, last = span.group(1), span.group(2)
        used.update({first, last})
        within = self.h.by_day_range(first, last)
        rest = _without_quotes(text)[span.end() :]
        total = re.search(r"(\d[\d,]*) commits?", rest)
        if total:
            used.add(total.group(1))
            lo, hi = len(_once(within)), len(within)
            v.add(
                "activity-count",
                tolerance_ok(_int(total.group(1)), lo, hi),
                f"{total.group(1)} commits {first} → {last} stated, {lo}–{hi} recomputed",
            )
        named = dict((p, k) for k, p in self.named_paths(rest))
        for path, n in _COUNT_PAREN.findall(rest):
            path = path.strip("`,;:")
            kind = named.get(path.rstrip("/"))
            if kind is None:
                continue
            used.add(n)
            got = self._touching(path, kind, within)
            lo, hi = len(_once(got)), len(got)
            v.add(
                "activity-count",
                tolerance_ok(_int(n), lo, hi),
                f"{path} ({n}): {lo}–{hi} recomputed",
            )

    def _layout_share(self, v: LineVerdict, text: str, cited: list[Commit], used: set[str]) -> None:
        plain = _without_quotes(text)
        shares = [(p, pct) for p, pct in _SHARE_PAREN.findall(plain) if "/" in p or "." in p]
        if not shares or "test-share" in v.kinds or "convention" in v.kinds:
            return
        v.kinds.append("layout-share")
        window = _WINDOW.search(text)
        if not window:
            v.unverified.append("shares of the changes without a stated window")
            return
        used.add(window.group(1))
        recent = _small(self.h.last_non_merges(_int(window.group(1))))
        touches = [f for c in recent for f in c.files]
        code = [f for f in touches if not (is_test(f) or is_doc(f))]
        for path, pct in shares:
            used.add(pct)
            prefix = path.rstrip("/") + ("/" if path.endswith("/") else "")
            got = [
                round(100 * sum(1 for f in pool if f == path or f.startswith(prefix)) / len(pool))
                for pool in (touches, code)
                if pool
            ] or [0]
            v.add(
                "layout-share",
                min(got) - 10 <= int(pct) <= max(got) + 10,
                f"{path} {pct}%: {min(got)}–{max(got)}% recomputed",
            )

    def _leftover_numbers(self, v: LineVerdict, text: str, used: set[str]) -> None:
        plain = _DATE.sub(" ", _BACKTICK.sub(" ", _without_quotes(text)))
        plain = _VERSION.sub(" ", plain)
        left = [m.group(1) for m in _NUMBER.finditer(plain) if m.group(1) not in used]
        if left:
            v.unverified.append(f"numbers no rule recomputes: {', '.join(dict.fromkeys(left))}")


def _is_conventional(subject: str) -> bool:
    m = CONVENTIONAL.match(subject)
    return m is not None and m.group(1).lower() in CC_TYPES


def _once(commits: Iterable[Commit]) -> list[Commit]:
    """Copies of one change (a cherry-pick, a squash of a pull request: the same subject and
    files) counted once."""
    seen: set[tuple[str, tuple[str, ...]]] = set()
    out = []
    for c in commits:
        key = (PR_SUFFIX.sub("", c.subject).strip(), tuple(sorted(c.files)))
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def _small(commits: Iterable[Commit], most: int = BIG_COMMIT) -> list[Commit]:
    """The stricter reading of "commits": copies counted once, bulk commits left out."""
    return _once(c for c in commits if len(c.files) <= most)


def _close_pairs(fixes: list[Commit], by: str) -> int:
    """Fixes that came within a month of the previous one (by author or committer date)."""
    times = sorted(c.authored_at if by == "a" else c.when for c in fixes)
    return sum(1 for a, b in zip(times, times[1:], strict=False) if b - a <= MONTH)


def _version(tag: str) -> str:
    m = re.search(r"\d+(?:\.\d+)+.*$", tag)
    return m.group(0) if m else tag


def _short(text: str, n: int = 60) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= n else text[: n - 1] + "…"
