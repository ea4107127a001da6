"""Shared fixtures. Every test runs with a private HOME and global git config (autouse guard),
and the foundation tests get a factory of real temporary repositories with gitvault installed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.support.agent_hooks import AGENTS, Hooks
from tests.support.deadline import deadline
from tests.support.home import GIT_LOCATION_VARS, REAL_HOME, WATCHED, snapshot_real_home
from tests.support.hook_fuzz import special_files as make_special_files
from tests.support.memory import PARENT_API_KEY, Clock, StandIn, set_config
from tests.support.repos import Repo, make_repo

# Property tests check what holds, not how fast: an example's time on a loaded 2-core machine
# (xdist workers, e2e CLIs beside them) says nothing, and speed lives in bench/. So no per-example
# deadline anywhere; a test that wants one says so.
settings.register_profile("gitvault", deadline=None)
settings.load_profile("gitvault")


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """HOME, the global git config and the XDG dirs point into a temporary folder; the system
    git config is ignored; no GIT_* location variable or GITVAULT_* setting leaks in. Fails
    the test if anything in the real home's git/gitvault/claude config changed meanwhile."""
    home = tmp_path_factory.mktemp("home")
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        "[user]\n\tname = Test Dev\n\temail = dev@example.com\n"
        "[init]\n\tdefaultBranch = main\n"
        "[advice]\n\tdetachedHead = false\n"
        "[gc]\n\tauto = 0\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "0")
    for var in GIT_LOCATION_VARS:
        monkeypatch.delenv(var, raising=False)
    for var in list(os.environ):
        if var.startswith("GITVAULT_"):
            monkeypatch.delenv(var, raising=False)
    before = snapshot_real_home()
    yield home
    assert os.environ.get("HOME") == str(home), "a test changed HOME back to a real location"
    after = snapshot_real_home()
    changed = [rel for rel in WATCHED if before[rel] != after[rel]]
    assert not changed, f"a test wrote to the real home {REAL_HOME}: {changed}"


TEST_TIME_LIMIT = 600  # seconds; a hung test fails with a traceback instead of hanging the run


@pytest.fixture(autouse=True)
def time_limit() -> Iterator[None]:
    """Fail (not hang) a test that runs longer than TEST_TIME_LIMIT: SIGALRM raises in it."""
    with deadline(TEST_TIME_LIMIT, "test"):
        yield


@pytest.fixture
def repo_factory(tmp_path: Path) -> Callable[..., Repo]:
    """make(name, install=True, commit=True, sync=True, claude=False) → Repo: a real repository
    with an identity, a first commit and (by default) `gitvault install --no-claude` run
    through the CLI."""
    counter = 0

    def make(name: str | None = None, **kwargs: object) -> Repo:
        nonlocal counter
        counter += 1
        return make_repo(tmp_path / (name or f"repo{counter}"), **kwargs)  # type: ignore[arg-type]

    return make


@pytest.fixture
def repo(request: pytest.FixtureRequest, repo_factory: Callable[..., Repo]) -> Repo:
    """An installed repository whose commits write notes in the foreground (GITVAULT_SYNC).

    A module or a test asks for another shape with a marker instead of redefining the fixture:
    ``pytest.mark.repo(claude=True)`` installs the Claude Code wiring as a user has it, any
    other make_repo option works the same way, ``config={"capture": {...}}`` writes those
    vault.toml settings after install, and ``git_config={"gitvault.x.y": "v"}`` this clone's
    (where the settings that spend money or run code live)."""
    marker = request.node.get_closest_marker("repo")
    options = dict(marker.kwargs) if marker is not None else {}
    config: dict[str, dict[str, object]] = options.pop("config", {})
    local: dict[str, str] = options.pop("git_config", {})
    made = repo_factory("repo", **options)
    for section, values in config.items():
        set_config(made, section, **values)
    for key, value in local.items():
        made.git("config", key, value)
    return made


@pytest.fixture
def clock() -> Clock:
    """Whole seconds for what a test saves and commits, one apart, starting an hour ago."""
    return Clock()


@pytest.fixture
def special_files(tmp_path: Path) -> dict[str, str]:
    """Files a transcript_path may name that are not transcripts: devices, a FIFO, a folder, a
    3 GB sparse file, a 5 MB line, a link to /dev/zero (label -> path)."""
    return make_special_files(tmp_path)


@pytest.fixture
def standin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StandIn:
    """A scripted stand-in `claude` first on PATH, in an environment that holds an API key the
    fold's child must not receive."""
    fake = StandIn(tmp_path / "standin")
    monkeypatch.setenv("PATH", fake.path_env())
    monkeypatch.setenv("ANTHROPIC_API_KEY", PARENT_API_KEY)
    return fake


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The file descriptors this test's process fsyncs from now on (each fsync still done)."""
    synced: list[int] = []
    real = os.fsync

    def counting(fd: int) -> None:
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    return synced


# -- agent hooks run as the agents run them (tests/support/agent_hooks.py) --------------------


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
