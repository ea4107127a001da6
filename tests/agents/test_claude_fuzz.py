"""Hook input is untrusted: every hook exits 0 within its time bound for any
input — generated payloads, and special files as transcript_path (/dev/zero, /dev/urandom, a
FIFO, a directory, a huge sparse file, a 5 MB line, a symlink to a device).

The fast versions run here (~50 generated inputs per hook, each special file through each hook
as a whole process); tests/stress/test_hook_fuzz.py runs 1,000 per hook (`just stress`)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import pytest

from tests.support.claude_hooks import log_text, run_hook, sample
from tests.support.hook_fuzz import EVENTS, bound, fuzz
from tests.support.repos import Repo

# The Claude Code wiring; every turn-end handled at once, no fold when a session ends.
pytestmark = pytest.mark.repo(
    claude=True,
    config={"capture": {"stop_min_interval_seconds": 0, "fold_on_session_end": False}},
)


def test_generated_inputs_never_fail_or_overrun_a_hook(
    repo: Repo, special_files: dict[str, str]
) -> None:
    repo.commit("feat: unsaved work for the fuzzed sessions")
    assert fuzz(repo, special_files, per_hook=50, seed=9) == []


@pytest.mark.parametrize("event", sorted(EVENTS))
def test_special_files_as_transcript_path_never_make_a_hook_wait_for_its_bound(
    repo: Repo, special_files: dict[str, str], event: str
) -> None:
    """Whole processes, as Claude Code runs them, for a started session with unsaved work and
    for one never seen (whose start is looked up in the transcript). A file that blocked or
    never ended would hold the hook until its alarm, which the hook logs as giving up; how
    long the process took on a loaded machine says nothing about that."""
    sid = str(uuid.uuid4())
    run_hook("session-start", sample("SessionStart:startup", repo=repo, session_id=sid), repo=repo)
    repo.commit("feat: unsaved")
    key = {
        "session-start": "SessionStart:startup",
        "stop": "Stop:False",
        "pre-compact": "PreCompact:manual",
        "session-end": "SessionEnd:",
    }[event]
    held = []
    for name, path in special_files.items():
        for session in (sid, str(uuid.uuid4())):
            payload = sample(key, repo=repo, session_id=session, transcript_path=path)
            before = log_text(repo)
            done = run_hook(event, payload, repo=repo, timeout=bound(event) + 30)
            assert done.returncode == 0, (name, done.stderr)
            logged = log_text(repo)[len(before) :]
            if "gave up" in logged:
                held.append(f"{name}: {logged.strip()}")
    assert held == [], held


def test_hook_stdin_is_capped(repo: Repo) -> None:
    """50 MB on stdin: the hook reads at most MAX_INPUT_BYTES, rejects it, exits 0."""
    raw = '{"session_id": "' + "a" * 50_000_000 + '"}'
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "gitvault.hook", "claude", "stop"],
        input=raw,
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "CLAUDE_PROJECT_DIR": str(repo.path)},
    )
    assert (done.returncode, done.stdout) == (0, "")
    assert time.monotonic() - started < 10
