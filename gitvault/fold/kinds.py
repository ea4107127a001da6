"""What a path or a commit is, as the miner counts it: tests, changelogs, docs, code and the
area a file belongs to; fixes, reverts, breaking changes and commit subject styles. Pure
functions of a path or of a note's words, shared by the mined history (gitvault.fold.history,
which counts them as notes arrive), the miner (gitvault.fold.mine) and the truth model."""

from __future__ import annotations

import re
from functools import lru_cache

from gitvault.named import NamedTuple

MAX_PAIR_FILES = 12  # a commit touching more files says little about which belong together
MAX_FILES = 40  # bulk commits (reformatting, vendoring) are not evidence of anything

# Conventional Commits' types (the specification's and the Angular convention's).
_CC_TYPE_NAMES = "feat fix docs doc style refactor perf test tests build ci chore revert deps"
CC_TYPES = frozenset(_CC_TYPE_NAMES.split(" "))
CC = re.compile(r"^([a-z]+)(\([^)]*\))?(!)?:\s", re.I)
# `area: summary`: one to three words naming a part of the project (`t/`, `builtin/add`,
# `doc`, `git-gui`), a colon, the summary.
AREA = re.compile(r"^([\w./@+*{}-]+(?:[ ,/][\w./@+*{}-]+){0,2}):\s\S")
QUOTED_REVERT = re.compile(r'^Revert "(.+)"\s*$')
_FIX = re.compile(
    r"^(?:[\w./-]+(?:\([^)]*\))?!?:\s*)?(?:fix(?:es|ed|ing)?|bugfix|hotfix)\b|\bbug\s?fix"
    r"|\bregression\b|\bcrash(?:es|ed)?\b|\bfix(?:es|ed)? (?:a |the )?(?:bug|crash|issue|error)",
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
_CHANGELOG_DIRS = ("changes", "changelog.d", "changes.d", "newsfragments", ".changeset")
_DOC_DIRS = {"doc", "docs", "documentation", "website", "site"}
_CODE_ROOTS = {"src", "lib", "packages", "pkg", "apps", "crates", "cmd", "internal", "modules"}
_NOT_CODE = re.compile(r"^(?:\..+|license.*|licence.*|copying.*|authors.*|notice.*)$", re.I)
# subjects git writes itself (a revert, a merge, a fixup): no one's convention
GENERATED_SUBJECT = re.compile(
    r'^(?:Revert "|Reapply "|Merge (?:branch|pull request|remote-tracking branch|tag|commit) '
    r"|(?:fixup|squash|amend)! )"
)

REVERT_BODY = re.compile(r"This reverts commit ([0-9a-fA-F]{7,40})")
REVERT_SUBJECT = re.compile(r'^Revert "(.+)"(?:\s*\((?:#|!)\d+\))?\s*$')
PR_SUFFIX = re.compile(r"\s*\((?:#|!)\d+\)\s*$")


# --------------------------------------------------------------------------- paths


def split_rename(path: str) -> tuple[str, str] | None:
    """(old, new) of a note's rename line (`old => new`), else None."""
    old, sep, new = path.partition(" => ")
    return (old, new) if sep else None


def current_name(path: str) -> str:
    renamed = split_rename(path)
    return renamed[1] if renamed else path


def is_test(path: str) -> bool:
    return _is_test(path.split("/"))


def _is_test(parts: list[str]) -> bool:
    return any(p.lower() in _TEST_DIRS for p in parts[:-1]) or bool(_TEST_NAME.search(parts[-1]))


def test_dir(path: str) -> str:
    """The folder tests live in for a test file (`tests/`, `t/`), or "(next to the code)"."""
    parts = path.split("/")
    cut = next((i for i, p in enumerate(parts[:-1]) if p.lower() in _TEST_DIRS), None)
    return "/".join(parts[: cut + 1]) + "/" if cut is not None else "(next to the code)"


def is_changelog(path: str) -> bool:
    return _is_changelog(path.split("/"))


def _is_changelog(parts: list[str]) -> bool:
    return bool(_CHANGELOG.match(parts[-1])) or any(
        p.lower() in _CHANGELOG_DIRS for p in parts[:-1]
    )


def changelog_key(path: str) -> str:
    """What a changelog file is counted as: itself at the top level, else its area."""
    return _changelog_key(path, area(path))


def _changelog_key(path: str, where: str) -> str:
    return path if "/" not in path or where == path else where


def is_doc(path: str) -> bool:
    return _is_doc(path.split("/"))


def _is_doc(parts: list[str]) -> bool:
    return (len(parts) > 1 and parts[0].lower() in _DOC_DIRS) or parts[-1].lower().startswith(
        "readme"
    )


def area(path: str) -> str:
    """Where a file belongs: its top folder (two levels under src/, lib/, …), or itself."""
    return _area(path, path.split("/"))


def _area(path: str, parts: list[str]) -> str:
    if len(parts) == 1:
        return path
    if parts[0] in _CODE_ROOTS and len(parts) > 2:
        return f"{parts[0]}/{parts[1]}/"
    return parts[0] + "/"


def is_code(path: str) -> bool:
    """Code: neither tests, changelogs nor docs; a top-level file counts (git's own *.c are
    top-level), except licence texts, dotfiles and whatever lies under a dot-folder (tools'
    and agents' settings: .github/, .vscode/, and the .claude/ skills gitvault writes)."""
    return classify(path).code


CLASSIFY_CACHE = 32768


class PathKind(NamedTuple):
    """What a path is, as counting asks it (one cached look-up for all of it)."""

    test: bool
    changelog: bool
    code: bool
    area: str
    companion: str  # what a changelog file is counted as (changelog_key)


# One cache for every question counting asks of a path (a history names the same paths again
# and again), bounded: seven caches of 65,536 entries, at 85,000 distinct paths, were ~40 MB
# of a first fold's 200 MB peak at 100,000 notes.
@lru_cache(maxsize=CLASSIFY_CACHE)
def classify(path: str) -> PathKind:
    parts = path.split("/")
    test, changelog = _is_test(parts), _is_changelog(parts)
    where = _area(path, parts)
    tooling = parts[0].startswith(".") if len(parts) > 1 else bool(_NOT_CODE.match(path))
    code = not (test or changelog or _is_doc(parts) or tooling)
    companion = _changelog_key(path, where) if changelog else ""
    return PathKind(test, changelog, code, where, companion)


def stem(name: str) -> str:
    """A file name without its extension and test prefix or suffix (test_core.py → core)."""
    base = name.rsplit(".", 1)[0]
    base = re.sub(r"^test_|_test$|\.test$|\.spec$|_spec$|Tests?$", "", base)
    return base.lower()


def tested_module(files: tuple[str, ...]) -> list[tuple[str, str]]:
    """(code file, test file) for each test file among a commit's files named after a code
    file it changes too (core.py ↔ test_core.py), once per listed test file."""
    code = {stem(f.rsplit("/", 1)[-1]): f for f in files if is_code(f) and "/" in f}
    out = []
    for test in (f for f in files if is_test(f)):
        name = test.rsplit("/", 1)[-1]
        found = stem(name)
        if found == name.rsplit(".", 1)[0].lower():
            continue  # no test prefix or suffix (t/Makefile): not named after a module
        if found in code:
            out.append((code[found], test))
    return out


# --------------------------------------------------------------------------- commits


def subject_style(subject: str) -> str:
    """cc (a Conventional Commits type), area (`area: summary`), capital, or other."""
    cc = CC.match(subject)
    if cc and cc.group(1).lower() in CC_TYPES:
        return "cc"
    if AREA.match(subject):
        return "area"
    return "capital" if subject[:1].isupper() else "other"


def is_fix(subject: str) -> bool:
    return bool(
        _FIX.search(subject) and not QUOTED_REVERT.match(subject) and not _TRIVIAL.search(subject)
    )


def quoted_revert(subject: str) -> str | None:
    """The subject a `Revert "…"` subject quotes (a trailing pull-request number aside)."""
    match = REVERT_SUBJECT.match(subject)
    return PR_SUFFIX.sub("", match.group(1)) if match else None


def revert_reason(message: str) -> str:
    """The first line of a revert's message that says why (not the "This reverts" line, a
    bracketed note or a trailer)."""
    for line in message.splitlines():
        line = line.strip()
        if line.lower().startswith("this reverts"):
            continue
        if (
            line
            and not REVERT_BODY.search(line)
            and not line.startswith(("[", "Signed-off"))
            and not re.match(r"^[A-Z][\w-]*-by:", line)
        ):
            return line
    return ""


def breaking_change(subject: str, message: str) -> str | None:
    """What a commit says breaks: its BREAKING CHANGE footer, or a `type!:` subject's summary."""
    match = _BREAKING.search(message)
    if match:
        return match.group(1)
    cc = CC.match(subject)
    if cc and cc.group(3):
        return subject[cc.end() :]
    return None
