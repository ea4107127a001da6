"""The Claude Code hooks as Claude Code runs them: `gitvault-hook claude <event>` in
the project directory with the recorded hook JSON on stdin, against real repositories.

SessionStart injects the recall block and writes nothing; Stop asks for a save only when one is
due and never loops; PreCompact / SessionEnd write a mechanical record of unsaved work and
SessionEnd starts a detached, lease-guarded fold; every hook fails open (exit 0)."""

from __future__ import annotations

import functools
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitvault.agents import hookinput
from gitvault.agents.adapters.claude import ADAPTER as CLAUDE
from gitvault.agents.adapters.claude.transcript import read_transcript
from gitvault.memory import recall
from gitvault.resources import schema_path
from gitvault.vault import frontmatter, schemas
from gitvault.vault.locking import file_lock
from tests.support.claude_hooks import (
    RECALL_SECRET,
    SAMPLES,
    fold_processes,
    log_text,
    records_written,
    run_hook,
    sample,
    session_state,
    sessions_in_vault,
    state_dir_listing,
    unknown_entry,
    write_transcript,
)
from tests.support.memory import cli_sub, set_config
from tests.support.repos import Repo, snapshot_user_state, wait_until

SECTIONS = ("## Summary", "## Key Decisions", "## Next Steps")


# Installed with the Claude Code wiring, as a user would have it.
pytestmark = pytest.mark.repo(claude=True)


@pytest.fixture
def sid() -> str:
    return str(uuid.uuid4())


@pytest.fixture
def transcript(tmp_path: Path, sid: str) -> Path:
    return tmp_path / "home" / ".claude" / "projects" / "-tmp-repo" / f"{sid}.jsonl"


def stop(repo: Repo, sid: str, transcript: Path, **fields: Any) -> dict[str, Any] | None:
    """Run the Stop hook; its JSON answer, or None when it said nothing."""
    done = run_hook(
        "stop",
        sample("Stop:False", repo=repo, transcript=transcript, session_id=sid, **fields),
        repo=repo,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return json.loads(done.stdout) if done.stdout else None


def begin(repo: Repo, sid: str, source: str = "startup", **fields: Any) -> str:
    """Run SessionStart for session sid (as Claude Code does when a session starts); the block
    it injected ("" when none)."""
    payload = sample(f"SessionStart:{source}", repo=repo, session_id=sid, **fields)
    payload["source"] = source
    done = run_hook("session-start", payload, repo=repo)
    assert (done.returncode, done.stderr) == (0, "")
    if not done.stdout:
        return ""
    context: str = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    return context


def commit_in_transcript(
    repo: Repo, transcript: Path, sid: str, subject: str, **kwargs: Any
) -> str:
    """The session (started now unless it already was) commits, and its transcript shows it."""
    if session_state(repo, sid) is None:
        begin(repo, sid)
    sha = repo.commit(subject, **kwargs)
    write_transcript(
        transcript, commit=(sha, subject), session_id=sid, extra_entries=[unknown_entry(sid)]
    )
    return sha


def vault_sessions(repo: Repo) -> list[tuple[dict[str, Any], str]]:
    out = []
    for path in sessions_in_vault(repo):
        if path.endswith(".md"):
            out.append(frontmatter.parse(repo.show(path).decode()))
    return out


# =========================================================================== SessionStart


@pytest.mark.parametrize(
    "key", ["SessionStart:startup", "SessionStart:resume", "SessionStart:compact"]
)
def test_session_start_injects_the_recall_block_and_writes_only_its_ledger(
    repo: Repo, key: str
) -> None:
    repo.commit("feat: the parser")
    assert repo.gv("fold", "--merger", "builtin").code == 0
    tip = repo.vault_tip()
    state = state_dir_listing(repo)
    user = snapshot_user_state(repo)

    done = run_hook("session-start", sample(key, repo=repo), repo=repo)

    assert (done.returncode, done.stderr) == (0, "")
    output = json.loads(done.stdout)
    assert output == {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": recall.build(repo.path).text,
        }
    }
    block = output["hookSpecificOutput"]["additionalContext"]
    assert block.startswith("=== VAULT RECALL ===") and block.endswith("=== END VAULT RECALL ===")
    assert "feat: the parser" in block
    # The vault and the user's files are as they were; gitvault's state dir gained only this
    # session's ledger (when it started, in which worktree, what recall it now carries).
    assert repo.vault_tip() == tip
    sid = sample(key)["session_id"]
    after = state_dir_listing(repo)
    assert set(after) - set(state) == {f"claude-sessions/{sid}.json"}
    assert {k: v for k, v in after.items() if k in state} == state
    assert snapshot_user_state(repo) == user
    ledger = session_state(repo, sid)
    assert ledger is not None and ledger["recall"] and ledger["runs"][0][1] is None
    assert ledger["git_dir"] == str(repo.git_dir) and ledger["branch"] == "main"
    # The hidden CLI entry point answers the same (for another conversation).
    other = sample(key, repo=repo, session_id=str(uuid.uuid4()))
    via_cli = cli_sub(repo, "hook", "claude", "session-start", stdin=json.dumps(other))
    assert via_cli.code == 0 and json.loads(via_cli.out) == output


def test_session_start_before_any_fold_is_honest(repo: Repo) -> None:
    repo.commit("feat: one")
    repo.commit("feat: two")
    done = run_hook("session-start", sample("SessionStart:startup", repo=repo), repo=repo)
    block = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "No digest yet: 2 commit notes and 0 sessions are waiting for a fold" in block


def test_session_start_fails_open_outside_a_repository(tmp_path: Path) -> None:
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    payload = sample("SessionStart:startup", cwd=str(outside))
    done = run_hook(
        "session-start", payload, repo=None, cwd=outside, env={"CLAUDE_PROJECT_DIR": str(outside)}
    )
    assert (done.returncode, done.stdout) == (0, "")
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "{not json",
        '["a", "list"]',
        '{"hook_event_name": "SessionStart"}',  # no session_id
        '{"session_id": "", "hook_event_name": "SessionStart"}',  # empty session_id
        '{"session_id": "x", "hook_event_name": "Stop"}',  # the wrong event
        '{"session_id": 7, "hook_event_name": "SessionStart"}',
    ],
)
def test_session_start_fails_open_on_bad_input_and_logs_it(repo: Repo, raw: str) -> None:
    tip = repo.vault_tip()
    done = run_hook("session-start", raw, repo=repo)
    assert (done.returncode, done.stdout) == (0, "")
    assert "hook session-start: malformed input ignored" in log_text(repo)
    assert repo.vault_tip() == tip
    status = repo.gv("status")
    assert "logged: " in status.err and "malformed input ignored" in status.err


def test_session_start_fails_open_when_the_vault_cannot_be_read(repo: Repo) -> None:
    (repo.common_dir / "refs" / "heads" / "vault").write_text("2" * 40 + "\n")
    done = run_hook("session-start", sample("SessionStart:startup", repo=repo), repo=repo)
    assert (done.returncode, done.stdout) == (0, "")
    assert "hook session-start failed: GitError: the vault branch refs/heads/vault" in log_text(
        repo
    )


def test_session_start_gives_a_partial_answer_when_an_object_is_missing(repo: Repo) -> None:
    repo.commit("feat: one")
    assert repo.gv("fold", "--merger", "builtin").code == 0
    oid = repo.git("rev-parse", "vault:_master.md")
    (repo.common_dir / "objects" / oid[:2] / oid[2:]).unlink()
    done = run_hook("session-start", sample("SessionStart:startup", repo=repo), repo=repo)
    assert done.returncode == 0
    block = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "The digest exists but could not be read" in block
    assert "No digest yet" not in block, "a broken digest is not reported as a missing one"
    assert f"cannot read _master.md from the vault branch 'vault' (object {oid[:12]}" in log_text(
        repo
    )


SLOW_GIT = """\
#!{python}
# A `git` that takes 30 s to start (a cold disk, a stuck network filesystem).
import os, sys, time
time.sleep(30)
os.execv({git!r}, [{git!r}, *sys.argv[1:]])
"""


def test_session_start_gives_up_after_two_seconds(repo: Repo, tmp_path: Path) -> None:
    """The 2-second bound, tested by putting a slow `git` first on PATH: the hook exits 0
    with nothing injected long before git would have answered, and says why in the log."""
    import shutil

    folder = tmp_path / "slow-bin"
    folder.mkdir()
    wrapper = folder / "git"
    wrapper.write_text(SLOW_GIT.format(python=sys.executable, git=shutil.which("git")))
    wrapper.chmod(0o755)
    started = time.monotonic()
    done = run_hook(
        "session-start",
        sample("SessionStart:startup", repo=repo),
        repo=repo,
        env={"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"},
    )
    elapsed = time.monotonic() - started
    assert (done.returncode, done.stdout) == (0, "")
    assert elapsed < 25, "the hook waited for git instead of giving up"
    assert "hook session-start: gave up after 2s (exit 0)" in log_text(repo)


def test_hooks_import_only_what_they_need(repo: Repo, tmp_path: Path) -> None:
    probe = (
        "import io, json, sys\n"
        "from gitvault.agents import runtime\n"
        "for event, key in (('session-start', 'SessionStart:startup'), ('stop', 'Stop:False')):\n"
        "    sys.stdin = io.StringIO(json.dumps(json.loads(sys.argv[1])[key]['input']))\n"
        "    runtime.main(['claude', event])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in\n"
        "               ('pygit2', 'typer', 'rich', 'jsonschema'))\n"
        "print('HEAVY=' + json.dumps(heavy))\n"
    )
    samples = {k: {"input": sample(k, repo=repo)} for k in ("SessionStart:startup", "Stop:False")}
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(samples)],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "CLAUDE_PROJECT_DIR": str(repo.path)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("HEAVY=[]"), done.stdout


# =========================================================================== Stop


def test_stop_blocks_with_the_save_command_when_this_session_committed(
    repo: Repo, sid: str, transcript: Path
) -> None:
    sha = commit_in_transcript(repo, transcript, sid, "fix: parser crash")

    answer = stop(repo, sid, transcript)

    assert answer is not None and set(answer) == {"decision", "reason"}
    assert answer["decision"] == "block"
    reason = answer["reason"]
    assert f"save --session-id {sid} " in reason
    assert f"{sha[:7]} fix: parser crash" in reason
    for name in SECTIONS:
        assert name in reason
    # Asked once: the next Stop (our block's follow-up) is never blocked.
    assert stop(repo, sid, transcript, stop_hook_active=True) is None


def test_stop_never_blocks_while_stop_hook_active(repo: Repo, sid: str, transcript: Path) -> None:
    commit_in_transcript(repo, transcript, sid, "feat: unsaved work")
    payload = sample("Stop:True", repo=repo, transcript=transcript, session_id=sid)
    assert payload["stop_hook_active"] is True
    for _ in range(3):
        done = run_hook("stop", payload, repo=repo)
        assert (done.returncode, done.stdout) == (0, "")


def test_stop_ignores_subagents(repo: Repo, sid: str, transcript: Path) -> None:
    commit_in_transcript(repo, transcript, sid, "feat: unsaved work")
    before = session_state(repo, sid)
    # A Stop inside a subagent / --agent run carries agent_id.
    assert stop(repo, sid, transcript, agent_id="a0f19277474aba9cc", agent_type="Explore") is None
    assert session_state(repo, sid) == before, "a subagent stop changes no state"
    # SubagentStop input (its own event name) sent to the stop hook: ignored and logged.
    raw = sample("SubagentStop:False", repo=repo, transcript=transcript, session_id=sid)
    done = run_hook("stop", raw, repo=repo)
    assert (done.returncode, done.stdout) == (0, "")
    assert "hook stop: malformed input ignored" in log_text(repo)


def test_stop_says_nothing_without_unsaved_work(repo: Repo, sid: str, transcript: Path) -> None:
    repo.commit("feat: made before this session started")
    begin(repo, sid)
    write_transcript(transcript, session_id=sid)  # a chat, no commits
    assert stop(repo, sid, transcript) is None
    other = repo.path.parent / "other-worktree"
    repo.git("worktree", "add", "-q", "-b", "other", str(other))
    (other / "x.txt").write_text("x\n")
    repo.run("-C", str(other), "add", "x.txt")
    repo.run("-C", str(other), "commit", "-q", "-m", "feat: made in another worktree")
    assert stop(repo, sid, transcript) is None
    # A transcript that does not exist (yet) is no reason to fail or to ask.
    assert stop(repo, sid, transcript.with_name("missing.jsonl")) is None


def test_a_commit_by_another_session_does_not_count(
    repo: Repo, tmp_path: Path, transcript: Path, sid: str
) -> None:
    repo.git("config", "gitvault.capture.stopMinIntervalSeconds", "0")
    mine = commit_in_transcript(repo, transcript, sid, "feat: mine")
    other_sid = str(uuid.uuid4())
    other_transcript = transcript.with_name(f"{other_sid}.jsonl")
    theirs = commit_in_transcript(repo, other_transcript, other_sid, "feat: theirs")

    reason = stop(repo, sid, transcript)["reason"]  # type: ignore[index]
    assert mine[:7] in reason and theirs[:7] not in reason
    reason = stop(repo, other_sid, other_transcript)["reason"]  # type: ignore[index]
    assert theirs[:7] in reason and mine[:7] not in reason
    # A third session that only chatted claims neither.
    third = str(uuid.uuid4())
    chat = write_transcript(transcript.with_name(f"{third}.jsonl"), session_id=third)
    assert stop(repo, third, chat) is None


def test_stop_asks_at_most_once_per_interval(repo: Repo, sid: str, transcript: Path) -> None:
    first = commit_in_transcript(repo, transcript, sid, "feat: first")
    assert stop(repo, sid, transcript) is not None
    # New work inside the default interval (600 s): not asked again yet.
    second = repo.commit("feat: second")
    write_transcript(transcript, commit=(second, "feat: second"), session_id=sid)
    assert stop(repo, sid, transcript) is None
    state = session_state(repo, sid)
    assert state is not None and state["asked"] == [first]

    # Once the interval has passed, the new commit is asked about, the old one never again.
    repo.git("config", "gitvault.capture.stopMinIntervalSeconds", "0")
    reason = stop(repo, sid, transcript)["reason"]  # type: ignore[index]
    assert second[:7] in reason and first[:7] not in reason
    assert stop(repo, sid, transcript) is None


def test_after_a_save_the_same_work_never_triggers_again(
    repo: Repo, sid: str, transcript: Path
) -> None:
    set_config(repo, "capture", fold_on_session_end=False)
    repo.git("config", "gitvault.capture.stopMinIntervalSeconds", "0")
    # Committer time a few seconds ahead of the clock: the commit's (whole-second) time is
    # not before the save's, as when an agent commits and saves within one second.
    ahead = f"{int(time.time()) + 5} +0000"
    sha = commit_in_transcript(
        repo, transcript, sid, "feat: saved work", env={"GIT_COMMITTER_DATE": ahead}
    )
    reason = stop(repo, sid, transcript)["reason"]  # type: ignore[index]
    assert sha[:7] in reason

    text = "## Summary\nDid it.\n## Key Decisions\n- none\n## Next Steps\n- more\n"
    saved = cli_sub(repo, "save", "--session-id", sid, "--title", "Saved work", stdin=text)
    assert saved.code == 0, saved
    tip = repo.vault_tip()

    for _ in range(2):
        assert stop(repo, sid, transcript) is None
    for event, key in (("pre-compact", "PreCompact:manual"), ("session-end", "SessionEnd:")):
        done = run_hook(
            event, sample(key, repo=repo, transcript=transcript, session_id=sid), repo=repo
        )
        assert (done.returncode, done.stdout) == (0, "")
    assert repo.vault_tip() == tip, "no automatic record of work that was saved"


def test_a_travelling_save_cadence_never_makes_every_turn_end_ask(
    repo: Repo, sid: str, transcript: Path
) -> None:
    """vault.toml travels with the vault: a teammate's `stop_after_turns = 1` with no interval
    would block every turn end of every session on every clone with a save request (a model
    turn each). From vault.toml it is held back; this clone's git config sets it."""
    set_config(repo, "capture", stop_after_turns=1, stop_min_interval_seconds=0)
    begin(repo, sid)
    write_transcript(transcript, session_id=sid)
    assert [stop(repo, sid, transcript) for _ in range(3)] == [None, None, None]
    repo.git("config", "gitvault.capture.stopAfterTurns", "1")
    repo.git("config", "gitvault.capture.stopMinIntervalSeconds", "0")
    answer = stop(repo, sid, transcript)
    assert answer is not None and answer["decision"] == "block", answer


def test_stop_after_turns_asks_after_n_turns(repo: Repo, sid: str, transcript: Path) -> None:
    repo.git("config", "gitvault.capture.stopAfterTurns", "3")
    repo.git("config", "gitvault.capture.stopMinIntervalSeconds", "0")
    begin(repo, sid)
    write_transcript(transcript, session_id=sid)
    assert stop(repo, sid, transcript) is None
    assert stop(repo, sid, transcript) is None
    answer = stop(repo, sid, transcript)
    assert answer is not None and "3 turns of work" in answer["reason"]
    assert f"save --session-id {sid} " in answer["reason"]
    # The count starts again after the ask, and after a save.
    assert stop(repo, sid, transcript) is None
    text = "## Summary\nDid it.\n## Key Decisions\n- none\n## Next Steps\n- more\n"
    assert cli_sub(repo, "save", "--session-id", sid, stdin=text).code == 0
    assert session_state(repo, sid)["turns_since_save"] == 0  # type: ignore[index]
    assert stop(repo, sid, transcript) is None


# ====================================================================== PreCompact / SessionEnd


@pytest.mark.parametrize(
    "event,key", [("pre-compact", "PreCompact:manual"), ("session-end", "SessionEnd:")]
)
def test_unsaved_work_gets_a_mechanical_record(
    repo: Repo, sid: str, transcript: Path, event: str, key: str
) -> None:
    set_config(repo, "capture", fold_on_session_end=False)
    sha = commit_in_transcript(repo, transcript, sid, "fix: greeting text")
    other_tree = repo.path.parent / "other-worktree"
    repo.git("worktree", "add", "-q", "-b", "other", str(other_tree))
    repo.run("-C", str(other_tree), "commit", "-q", "--allow-empty", "-m", "feat: elsewhere")
    other = repo.run("-C", str(other_tree), "rev-parse", "HEAD").stdout.decode().strip()
    before = len(sessions_in_vault(repo))

    done = run_hook(event, sample(key, repo=repo, transcript=transcript, session_id=sid), repo=repo)

    assert (done.returncode, done.stdout) == (0, "")
    records_written(repo)  # by the drainer the hook started, off the hook's wait
    records = [(m, b) for m, b in vault_sessions(repo) if m.get("session_id") == sid]
    assert len(sessions_in_vault(repo)) == before + 1 and len(records) == 1
    meta, body = records[0]
    assert not schemas.errors("session.schema.json", meta)
    assert meta["mode"] == "auto" and meta["agent"] == "claude-code"
    assert meta["commits"] == [sha] and other[:7] not in body
    assert meta["title"] == "Automatic record: fix: greeting text", "titled from its work"
    assert meta["branch"] == "main" and meta["worktree"] == "main"
    assert "Pick up" not in body and "None recorded" in body, "it plans nothing"
    assert meta["prompt_count"] == 2  # "please commit the fix" and, after /compact, "what next?"
    assert 'First prompt: "please commit the fix"' in body
    assert f"- {sha[:7]} fix: greeting text" in body
    for name in SECTIONS:
        assert name in body
    assert RECALL_SECRET not in body and "VAULT RECALL" not in body
    assert f"hook {event}: wrote the mechanical record s:{meta['slug']}" in log_text(repo)
    # The entry type no Claude Code version wrote so far was skipped (and counted), not fatal.
    assert read_transcript(transcript).skipped.get("holo-deck-state") == 1


def test_pre_compact_then_session_end_write_one_record(
    repo: Repo, sid: str, transcript: Path
) -> None:
    set_config(repo, "capture", fold_on_session_end=False)
    commit_in_transcript(repo, transcript, sid, "feat: work")
    for event, key in (("pre-compact", "PreCompact:manual"), ("session-end", "SessionEnd:")):
        run_hook(event, sample(key, repo=repo, transcript=transcript, session_id=sid), repo=repo)
    records_written(repo)
    assert len([m for m, _ in vault_sessions(repo) if m.get("session_id") == sid]) == 1


def test_no_unsaved_work_writes_nothing(repo: Repo, sid: str, transcript: Path) -> None:
    set_config(repo, "capture", fold_on_session_end=False)
    repo.commit("feat: before this session")
    begin(repo, sid)
    write_transcript(transcript, session_id=sid)
    # Printing history claims nothing: only HEAD moves that create a commit count.
    repo.git("log", "--all", "--oneline", "-6")
    repo.git("checkout", "-q", "-b", "elsewhere")
    repo.git("checkout", "-q", "main")
    tip = repo.vault_tip()
    for event, key in (("pre-compact", "PreCompact:manual"), ("session-end", "SessionEnd:")):
        done = run_hook(
            event, sample(key, repo=repo, transcript=transcript, session_id=sid), repo=repo
        )
        assert (done.returncode, done.stdout) == (0, "")
    assert repo.vault_tip() == tip


@pytest.mark.parametrize(
    "mangle",
    ["not json", "directory", "binary", "missing-fields"],
)
def test_pre_compact_never_exits_2(repo: Repo, sid: str, transcript: Path, mangle: str) -> None:
    commit_in_transcript(repo, transcript, sid, "feat: work")
    payload: Any = sample("PreCompact:manual", repo=repo, transcript=transcript, session_id=sid)
    if mangle == "not json":
        payload = '{"session_id": '
    elif mangle == "directory":
        payload["transcript_path"] = str(transcript.parent)
    elif mangle == "binary":
        transcript.write_bytes(os.urandom(4096) + b'\n\xff\xfe{"type": "user"\n')
    else:
        payload = {"hook_event_name": "PreCompact"}
    done = run_hook("pre-compact", payload, repo=repo)
    assert (done.returncode, done.stdout) == (0, "")


def test_session_end_folds_in_the_background_and_leaves_no_process(
    repo: Repo, sid: str, transcript: Path
) -> None:
    set_config(repo, "fold", merger="builtin")
    sha = commit_in_transcript(repo, transcript, sid, "feat: background fold input")

    done = run_hook(
        "session-end",
        sample("SessionEnd:", repo=repo, transcript=transcript, session_id=sid),
        repo=repo,
    )

    assert (done.returncode, done.stdout) == (0, "")
    wait_until(
        lambda: any(s.startswith("fold ") for _, s in repo.vault_log()),
        timeout=60,
        what="the background fold commit",
    )
    wait_until(lambda: not fold_processes(repo), timeout=30, what="the fold process to exit")
    digest = repo.show("_master.md").decode()
    meta, body = frontmatter.parse(digest)
    assert meta["merger"] == "builtin"
    assert meta["watermark"] == repo.git("rev-parse", "vault^"), "the fold read up to the record"
    assert f"c:{sha[:7]}" in body
    record, text = next((m, b) for m, b in vault_sessions(repo) if m.get("session_id") == sid)
    assert record["mode"] == "auto" and f"{sha[:7]} feat: background fold input" in text
    # A mechanical record decides and plans nothing: no merger takes a next step from it.
    assert f"s:{record['slug']}" not in body.split("## Next steps", 1)[1]


def test_session_end_fold_can_be_disabled_and_is_lease_guarded(
    repo: Repo, sid: str, transcript: Path
) -> None:
    set_config(repo, "fold", merger="builtin")
    write_transcript(transcript, session_id=sid)
    log = repo.state_dir / "fold.log"
    payload = sample("SessionEnd:", repo=repo, transcript=transcript, session_id=sid)

    set_config(repo, "capture", fold_on_session_end=False)
    assert run_hook("session-end", payload, repo=repo).returncode == 0
    assert not log.exists() and not fold_processes(repo)

    set_config(repo, "capture", fold_on_session_end=True)
    with file_lock(repo.state_dir / "fold.lease", block=False) as held:
        assert held
        assert run_hook("session-end", payload, repo=repo).returncode == 0
        assert not log.exists(), "a fold already holds the lease: no second one starts"
    assert not any(s.startswith("fold ") for _, s in repo.vault_log())


# =========================================================================== inputs, GITVAULT_CHILD

# Claude Code's own input schemas, per canonical event (its adapter checks them first).
SCHEMAS = CLAUDE.input_schemas
_EVENT_OF_KEY = {
    "SessionStart": "session-start",
    "Stop": "turn-end",
    "PreCompact": "pre-compact",
    "SessionEnd": "session-end",
}


@functools.cache
def _validator(event: str) -> jsonschema.Draft202012Validator:
    schema = json.loads(schema_path(SCHEMAS[event]).read_text())
    return jsonschema.Draft202012Validator(schema)


def _jsonschema_ok(event: str, instance: Any) -> bool:
    return bool(_validator(event).is_valid(instance))


def _broken_variants(payload: dict[str, Any]) -> list[Any]:
    out: list[Any] = [None, [], "text", 3]
    for key in ("session_id", "hook_event_name"):
        out.append({k: v for k, v in payload.items() if k != key})
    for key, bad in (
        ("session_id", ""),
        ("session_id", 12),
        ("hook_event_name", "Nope"),
        ("transcript_path", None),
        ("cwd", 5),
        ("stop_hook_active", "true"),
        ("last_assistant_message", 3),
        ("custom_instructions", False),
        ("source", ["startup"]),
        ("agent_id", {}),
        ("reason", 1),
    ):
        out.append({**payload, key: bad})
    out += [
        {**payload, "brand_new_field": {"x": 1}},
        {**payload, "last_assistant_message": None},
        {**payload, "custom_instructions": None},
    ]
    return out


def test_hookinput_agrees_with_jsonschema_on_the_samples_and_broken_inputs() -> None:
    checked = 0
    for key, recorded in SAMPLES.items():
        name = key.split(":")[0]
        for event in SCHEMAS:
            payload = recorded["input"]
            for instance in [payload, *_broken_variants(payload)]:
                mine = not hookinput.validate(SCHEMAS[event], instance)
                assert mine == _jsonschema_ok(event, instance), (event, instance)
                checked += 1
        if name in _EVENT_OF_KEY:
            assert hookinput.validate(SCHEMAS[_EVENT_OF_KEY[name]], recorded["input"]) == [], key
    assert checked > 400


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
_keys = st.sampled_from(
    [
        "session_id",
        "hook_event_name",
        "transcript_path",
        "cwd",
        "source",
        "stop_hook_active",
        "last_assistant_message",
        "custom_instructions",
        "trigger",
        "reason",
        "agent_id",
        "model",
        "prompt_id",
        "other",
    ]
)
_events = st.sampled_from(["SessionStart", "Stop", "PreCompact", "SessionEnd", "stop", ""])


@settings(max_examples=200, deadline=None)
@given(
    event=st.sampled_from(sorted(SCHEMAS)),
    payload=st.dictionaries(_keys, _json | _events, max_size=8),
)
def test_hookinput_agrees_with_jsonschema_on_generated_inputs(
    event: str, payload: dict[str, Any]
) -> None:
    assert (not hookinput.validate(SCHEMAS[event], payload)) == _jsonschema_ok(event, payload)


def test_gitvault_child_makes_every_hook_exit_at_once(
    repo: Repo, sid: str, transcript: Path, tmp_path: Path
) -> None:
    repo.git("config", "gitvault.capture.stopMinIntervalSeconds", "0")
    commit_in_transcript(repo, transcript, sid, "feat: unsaved")
    # A `git` that records being called: inside the fold's child nothing may even look.
    folder = tmp_path / "spy-bin"
    folder.mkdir()
    calls = tmp_path / "git-calls"
    spy = folder / "git"
    spy.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexit 1\n')
    spy.chmod(0o755)
    tip = repo.vault_tip()
    state = state_dir_listing(repo)
    env = {"GITVAULT_CHILD": "1", "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}
    for event, key in (
        ("session-start", "SessionStart:startup"),
        ("stop", "Stop:False"),
        ("pre-compact", "PreCompact:manual"),
        ("session-end", "SessionEnd:"),
    ):
        payload = sample(key, repo=repo, transcript=transcript, session_id=sid)
        done = run_hook(event, payload, repo=repo, env=env)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        assert run_hook(event, "{garbage", repo=repo, env=env).stdout == ""
    assert not calls.exists()
    assert repo.vault_tip() == tip and state_dir_listing(repo) == state
    assert not fold_processes(repo)
