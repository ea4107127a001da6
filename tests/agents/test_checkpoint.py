"""`gitvault checkpoint` inside an agent session, and the next session starts from it: real
hooks (SessionStart through `python -m gitvault.hook claude session-start`), real commits."""

from __future__ import annotations

import json

import pytest

from gitvault.vault import frontmatter
from tests.support.claude_hooks import hook_env, run_hook, sample, session_state
from tests.support.memory import cli_sub, vault_text
from tests.support.repos import Repo

pytestmark = pytest.mark.repo(claude=True)
HANDOVER = (
    "## Asked\nMake the parser strict\n## Open Threads\n- the lexer\n## Next Step\nADD-FLAG\n"
)


def begin(repo: Repo, sid: str, source: str = "startup") -> str:
    payload = sample("SessionStart:startup", repo=repo, session_id=sid)
    payload["source"] = source
    done = run_hook("session-start", payload, repo=repo)
    assert (done.returncode, done.stderr) == (0, ""), done
    if not done.stdout:
        return ""
    context: str = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    return context


def first_part(block: str) -> str:
    return block.split("\n\n")[1]


def checkpoint(repo: Repo, sid: str) -> tuple[str, dict[str, object], str]:
    """The checkpoint as the agent's Bash tool runs it: the session id from its environment."""
    env = hook_env(repo, {"CLAUDE_CODE_SESSION_ID": sid})
    done = cli_sub(repo, "checkpoint", "--json", env=env, stdin=HANDOVER)
    assert done.code == 0, done
    data = json.loads(done.out)["data"]
    meta, body = frontmatter.parse(vault_text(repo, data["path"]) or "")
    return data["slug"], meta, body


def test_the_next_session_starts_from_the_handover_once(repo: Repo) -> None:
    before = repo.commit("feat: made before the session")
    begin(repo, "s1")
    sha = repo.commit("feat: strict parser, part one")
    slug, meta, body = checkpoint(repo, "s1")
    assert meta["handover"] is True and meta["session_id"] == "s1"
    assert meta["commits"] == [sha] and meta["agent"] == "claude-code"
    assert f"- {sha[:7]} feat: strict parser, part one" in body and before[:7] not in body
    state = session_state(repo, "s1")
    assert state is not None and sha in state["saved"]  # the turn end will not ask for it

    # A resume of the same conversation is not given it (it wrote it)...
    assert "Handover from" not in begin(repo, "s1", "resume")
    # ...the session after /clear is, first, and consumes it.
    after_clear = begin(repo, "s2", "clear")
    first = first_part(after_clear)
    assert first.startswith(f"Handover from an earlier session, s:{slug}"), after_clear
    assert "ADD-FLAG" in first and sha[:7] in first
    third = begin(repo, "s3", "startup")
    assert not first_part(third).startswith("Handover from"), third
    # `gitvault recall` no longer puts it first either; it is still a session of the memory
    shown = cli_sub(repo, "recall").out
    assert not first_part(shown).startswith("Handover from") and slug in shown


def test_a_compaction_gets_a_new_handover_first(repo: Repo) -> None:
    begin(repo, "c1")
    slug, _, _ = checkpoint(repo, "c1")
    assert first_part(begin(repo, "c1", "compact")).startswith(
        f"Handover from an earlier session, s:{slug}"
    )
    assert "Handover from" not in first_part(begin(repo, "c2", "startup"))
