"""What README, ARCHITECTURE.md and the justfile say about the tests is true: every test the
README's guarantees name exists where it says, and every test path the docs name is there."""

from __future__ import annotations

import re

from tests.support.paths import ROOT

TESTS = ROOT / "tests"
# `file.py::test_name`, `file.py` or `::test_name` (the file named last before it)
NAMED = re.compile(r"`((?:[a-z_]+/)*test_[a-z0-9_]+\.py)?(?:::(test_[a-z0-9_]+))?`")
TEST_PATH = re.compile(r"\btests/(?:[a-z_]+/)*[a-z_]+\.py\b")
# A ```text block quotes output about another repository (an example from click's history):
# the paths in it are that repository's, not this one's.
QUOTED = re.compile(r"^```text\n.*?^```$", re.S | re.M)


def _guarantees() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Guarantees")
    return readme[start : readme.index("\n## ", start + 1)]


def test_every_test_the_guarantees_name_exists() -> None:
    named: list[tuple[str, str | None]] = []
    current: str | None = None
    for match in NAMED.finditer(_guarantees()):
        path, name = match.group(1), match.group(2)
        if path is None and name is None:
            continue
        current = path or current
        assert current is not None, f"{match.group(0)} names no file before it"
        named.append((current, name))
    assert len(named) >= 20, "the guarantees name their tests"
    missing = []
    for path, name in named:
        source = TESTS / path
        if not source.is_file():
            missing.append(f"tests/{path}")
        elif name is not None and f"def {name}(" not in source.read_text(encoding="utf-8"):
            missing.append(f"tests/{path}::{name}")
    assert not missing, f"README names tests that do not exist: {missing}"


def test_every_test_path_the_docs_name_exists() -> None:
    for doc in ("README.md", "ARCHITECTURE.md", "justfile"):
        text = QUOTED.sub("", (ROOT / doc).read_text(encoding="utf-8"))
        for path in TEST_PATH.findall(text):
            assert (ROOT / path).is_file(), f"{doc} names {path}, which does not exist"
