"""Fixtures of the agent hooks' tests: a repository wired for every agent, and a record of
every Python interpreter that starts (tests/support/agent_hooks.py runs the hooks)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.agent_hooks import AGENTS, Hooks
from tests.support.repos import Repo


@pytest.fixture
def wired(repo_factory: Callable[..., Repo]) -> Repo:
    repo = repo_factory("proj", install=False)
    done = repo.gv("install", "--agent", ",".join(AGENTS))
    assert done.code == 0, done
    return repo


@pytest.fixture
def starts(tmp_path: Path) -> Iterator[Path]:
    """A sitecustomize that appends one line to a file for every Python that starts."""
    site = tmp_path / "site"
    site.mkdir()
    log = tmp_path / "python-starts"
    (site / "sitecustomize.py").write_text(
        f"with open({str(log)!r}, 'a') as _f:\n    _f.write('started\\n')\n"
    )
    yield log


@pytest.fixture
def hooks(wired: Repo, starts: Path) -> Hooks:
    return Hooks(wired, starts)
