"""Claude Code sessions: which commits a session made (its own worktree's
HEAD reflog, by byte offset), what recall a conversation already carries (resume), which
sessions recall shows (manual before auto, the session's branch first), and saves made from
inside a session. Real repositories, real git, the hooks run as Claude Code runs them."""

from __future__ import annotations

import json
import os
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from gitvault.agents.ledger import load
from gitvault.memory import attribution, recall, sessions
from gitvault.resolve import resolve
from gitvault.vault import frontmatter
from tests.support.claude_hooks import run_hook, sample, session_state, write_transcript
from tests.support.memory import cli_sub
from tests.support.repos import Repo

TZ = timezone(timedelta(hours=1))
BODY = "## Summary\nDid {0}.\n## Key Decisions\n- {0} decision\n## Next Steps\n- {0} next\n"


# The Claude Code wiring; every turn-end handled at once, no fold when a session ends.
pytestmark = pytest.mark.repo(
    claude=True,
    config={"capture": {"stop_min_interval_seconds": 0, "fold_on_session_end": False}},
)


def begin(repo: Repo, sid: str, *, source: str = "startup", cwd: Path | None = None) -> str:
    where = cwd or repo.path
    payload = sample("SessionStart:startup", session_id=sid, cwd=str(where), source=source)
    done = run_hook("session-start", payload, repo=repo, env={"CLAUDE_PROJECT_DIR": str(where)})
    assert (done.returncode, done.stderr) == (0, "")
    if not done.stdout:
        return ""
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])


def stop(repo: Repo, sid: str, cwd: Path | None = None) -> str | None:
    where = cwd or repo.path
    payload = sample("Stop:False", session_id=sid, cwd=str(where), transcript_path="/nonexistent")
    done = run_hook("stop", payload, repo=repo, env={"CLAUDE_PROJECT_DIR": str(where)})
    assert (done.returncode, done.stderr) == (0, "")
    return str(json.loads(done.stdout)["reason"]) if done.stdout else None


def end(repo: Repo, sid: str, cwd: Path | None = None) -> None:
    where = cwd or repo.path
    payload = sample("SessionEnd:", session_id=sid, cwd=str(where), transcript_path="/nonexistent")
    done = run_hook("session-end", payload, repo=repo, env={"CLAUDE_PROJECT_DIR": str(where)})
    assert (done.returncode, done.stdout) == (0, "")


def made(repo: Repo, sid: str) -> list[str]:
    loc = resolve(repo.path)
    state = load(loc, sid)
    return attribution.made_in(Path(state.git_dir), state.attribution_runs())


def git_in(repo: Repo, where: Path, *args: str, **kwargs: Any) -> str:
    return repo.run("-C", str(where), *args, **kwargs).stdout.decode().strip()


# ============================================================================ attribution


def test_every_way_of_making_a_commit_counts_and_nothing_else_does(repo: Repo) -> None:
    before = repo.commit("feat: before the session")
    sid = str(uuid.uuid4())
    begin(repo, sid)
    quiet = repo.commit("feat: quiet", args=["-q"])
    repo.commit("feat: to amend")
    amended = repo.commit("feat: amended", args=["--amend"])
    script = repo.path / "commit.sh"
    script.write_text("#!/bin/sh\ngit commit -q --allow-empty -m 'chore: by a script'\n")
    script.chmod(0o755)
    repo.run("-c", "core.hooksPath=/dev/null", "rev-parse", "HEAD")
    repo.git("add", "commit.sh")
    by_script_parent = repo.commit("chore: add the script")
    os.system(f"cd {repo.path} && ./commit.sh")  # noqa: S605 - a script the session ran
    by_script = repo.git("rev-parse", "HEAD")
    backdated = repo.commit(
        "fix: backdated", env={"GIT_COMMITTER_DATE": "2001-01-01T00:00:00 +0000"}
    )
    # Moving HEAD to commits that exist creates nothing; printing history claims nothing.
    repo.git("log", "--all", "--oneline", "-6")
    repo.git("checkout", "-q", "-b", "side", before)
    repo.git("checkout", "-q", "main")
    assert cli_sub(repo, "save", "--title", "a vault commit", stdin=BODY.format("x")).code == 0

    claimed = made(repo, sid)

    assert before not in claimed
    for sha in (quiet, amended, by_script_parent, by_script, backdated):
        assert sha in claimed
    assert len(claimed) == 5, "the amended-away commit is not claimed besides its amendment"
    vault = set(repo.git("rev-list", "vault").split())
    assert not vault & set(claimed), "vault commits never count"
    reason = stop(repo, sid)
    assert reason is not None and "fix: backdated" in reason and "feat: quiet" in reason


def test_two_worktrees_never_claim_each_others_commits(repo: Repo) -> None:
    other = repo.path.parent / "feature"
    repo.git("worktree", "add", "-q", "-b", "feature", str(other))
    main_sid, feature_sid = str(uuid.uuid4()), str(uuid.uuid4())
    begin(repo, main_sid)
    begin(repo, feature_sid, cwd=other)
    mine = repo.commit("feat: on main")
    git_in(repo, other, "commit", "-q", "--allow-empty", "-m", "feat: on feature")
    theirs = git_in(repo, other, "rev-parse", "HEAD")

    assert made(repo, main_sid) == [mine]
    assert made(repo, feature_sid) == [theirs]
    main_reason, feature_reason = stop(repo, main_sid), stop(repo, feature_sid, other)
    assert main_reason and mine[:7] in main_reason and theirs[:7] not in main_reason
    assert feature_reason and theirs[:7] in feature_reason and mine[:7] not in feature_reason
    assert session_state(repo, feature_sid)["branch"] == "feature"  # type: ignore[index]


def test_two_sessions_in_one_worktree_claim_only_what_their_transcript_shows(
    repo: Repo, tmp_path: Path
) -> None:
    """The rare case the reflog cannot split: the session whose own transcript shows a hash
    claims it; a quiet commit made while both ran is claimed by neither (its note remains)."""
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    begin(repo, a)
    begin(repo, b)
    shown = repo.commit("feat: shown by a")
    quiet = repo.commit("feat: quiet, nobody printed it")
    transcript = write_transcript(tmp_path / f"{a}.jsonl", commit=(shown, "feat: shown by a"))
    payload = sample("Stop:False", session_id=a, cwd=str(repo.path))
    payload["transcript_path"] = str(transcript)
    done = run_hook("stop", payload, repo=repo)
    reason = json.loads(done.stdout)["reason"]
    assert shown[:7] in reason and quiet[:7] not in reason
    assert stop(repo, b) is None


def test_a_resumed_session_does_not_claim_what_happened_while_it_was_closed(repo: Repo) -> None:
    sid = str(uuid.uuid4())
    begin(repo, sid)
    first = repo.commit("feat: during the first run")
    end(repo, sid)
    between = repo.commit("feat: someone else, between the runs")
    begin(repo, sid, source="resume")
    second = repo.commit("feat: after the resume")
    assert made(repo, sid)[-2:] == [first, second] or made(repo, sid) == [first, second]
    assert between not in made(repo, sid)


def test_stop_asks_the_moment_the_commit_exists_whatever_the_transcript(repo: Repo) -> None:
    """The transcript lags the Stop hook; attribution does not read it."""
    sid = str(uuid.uuid4())
    begin(repo, sid)
    sha = repo.commit("fix: answered within 100 ms")
    reason = stop(repo, sid)  # transcript_path does not even exist
    assert reason is not None and f"{sha[:7]} fix: answered within 100 ms" in reason
    assert stop(repo, sid) is None, "asked once"


# ============================================================================ saves


def test_a_save_from_inside_a_session_needs_no_id(repo: Repo) -> None:
    sid = str(uuid.uuid4())
    begin(repo, sid)
    sha = repo.commit("feat: saved work")
    env = {"CLAUDE_CODE_SESSION_ID": sid, "CLAUDECODE": "1"}
    saved = cli_sub(repo, "save", "--title", "Saved work", stdin=BODY.format("it"), env=env)
    assert saved.code == 0, saved
    (meta,) = [
        frontmatter.parse(repo.show(p).decode())[0]
        for p in repo.vault_files()
        if p.startswith("sessions/") and p.endswith(".md")
    ]
    assert meta["session_id"] == sid and meta["agent"] == "claude-code"
    assert meta["commits"] == [sha] and meta["branch"] == "main" and meta["worktree"] == "main"
    assert stop(repo, sid) is None, "the save cleared the Stop condition"
    tip = repo.vault_tip()
    end(repo, sid)
    assert repo.vault_tip() == tip, "no automatic record of saved work"


def test_save_refuses_an_id_that_is_not_one(repo: Repo) -> None:
    bad = cli_sub(repo, "save", "--session-id", "x; rm -rf /", stdin=BODY.format("it"))
    assert bad.code != 0 and "is not a session id" in bad.err


def test_the_stop_command_quotes_what_came_from_hook_input(repo: Repo) -> None:
    from gitvault.agents import capture

    reason = capture.save_request("abc'def", [], 3, "gitvault", "claude-code")
    assert "--session-id" not in reason, "an id that is not one never reaches the command"
    reason = capture.save_request(
        "3c83ba28-d6ea-4e81-9979-29ae642ca573", [], 3, "gitvault", "claude-code"
    )
    assert "save --session-id 3c83ba28-d6ea-4e81-9979-29ae642ca573 --agent" in reason
    # A session id with shell metacharacters is refused at the door (schema + pattern).
    payload = sample("Stop:False", session_id="$(touch pwned)", cwd=str(repo.path))
    done = run_hook("stop", payload, repo=repo)
    assert (done.returncode, done.stdout) == (0, "")
    assert not (repo.path / "pwned").exists()


# ============================================================================ recall


def _save(repo: Repo, title: str, moment: datetime, *, mode: str = "manual", **extra: Any) -> str:
    loc = resolve(repo.path)
    return sessions.save_session(
        loc,
        BODY.format(title),
        title=title,
        mode=mode,
        now=moment,
        session_id=extra.pop("session_id", None),
        extra=extra or None,
    ).slug


def test_recall_prefers_saved_sessions_over_mechanical_records(repo: Repo) -> None:
    t0 = datetime(2026, 5, 1, 9, 0, tzinfo=TZ)
    real = _save(repo, "Real work", t0)
    _save(repo, "Automatic record: old auto", t0 + timedelta(minutes=1), mode="auto")
    newest = _save(repo, "Newest real", t0 + timedelta(minutes=2))
    auto = _save(repo, "Automatic record: feat: latest", t0 + timedelta(minutes=3), mode="auto")
    block = recall.build(repo.path).text
    assert f"s:{newest}" in block and f"s:{real}" in block, "two autos did not push them out"
    assert "old auto" not in block
    assert f"s:{auto} — Automatic record: feat: latest (automatic record" in block
    assert block.index(f"s:{real}") < block.index(f"s:{auto}"), "saved sessions come first"


def test_an_auto_record_a_save_covers_is_not_recalled(repo: Repo) -> None:
    t0 = datetime(2026, 5, 1, 9, 0, tzinfo=TZ)
    sha = repo.commit("feat: work")
    auto = _save(
        repo, "Automatic record: feat: work", t0, mode="auto", session_id="s1", commits=[sha]
    )
    assert f"s:{auto}" in recall.build(repo.path).text
    _save(repo, "Saved later", t0 + timedelta(minutes=1), session_id="s1", commits=[sha])
    assert f"s:{auto}" not in recall.build(repo.path).text, "a later save of that session"
    other = _save(
        repo, "Automatic record: feat: again", t0 + timedelta(minutes=2), mode="auto", commits=[sha]
    )
    assert f"s:{other}" not in recall.build(repo.path).text, "a save lists all its commits"


def test_recall_shows_the_sessions_branch_first_each_labelled(repo: Repo) -> None:
    t0 = datetime(2026, 5, 1, 9, 0, tzinfo=TZ)
    feature_one = _save(repo, "Feature start", t0, branch="feature")
    _save(repo, "Main one", t0 + timedelta(minutes=1), branch="main")
    main_two = _save(repo, "Main two", t0 + timedelta(minutes=2), branch="main")
    block = recall.build(repo.path, here="feature").text
    assert f"s:{feature_one} — Feature start (manual, branch feature)" in block
    assert f"s:{main_two} — Main two (manual, branch main)" in block
    assert block.index(f"s:{feature_one}") < block.index(f"s:{main_two}")
    assert "Main one" not in block
    on_main = recall.build(repo.path, here="main").text
    assert "Feature start" not in on_main and "Main one" in on_main


def test_resume_injects_only_what_changed_and_compact_everything(repo: Repo) -> None:
    repo.commit("feat: one")
    assert repo.gv("fold", "--merger", "builtin").code == 0
    sid = str(uuid.uuid4())
    first = begin(repo, sid)
    assert "Project memory digest" in first
    assert begin(repo, sid, source="resume") == "", "nothing changed: nothing injected"
    slug = _save(repo, "News while away", datetime.now(TZ))
    update = begin(repo, sid, source="resume")
    assert update.startswith("=== VAULT RECALL ===")
    assert f"s:{slug}" in update and "Project memory digest" not in update
    assert "Memory that changed since this conversation last received it" in update
    assert begin(repo, sid, source="resume") == ""
    # After /compact or /clear the earlier blocks are gone from context: all of it again.
    assert begin(repo, sid, source="compact") == recall.build(repo.path).text
    assert begin(repo, str(uuid.uuid4()), source="clear") == recall.build(repo.path).text
