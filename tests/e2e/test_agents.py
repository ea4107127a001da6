"""The loop with the real Codex CLI, Gemini CLI and Copilot CLI (npm, pinned versions, cached
under .cache/agents), each headless and offline against a local mock of its model API, with
the hooks `gitvault install --agent …` wrote. Everything is asserted from what the mock
received and from the repository:

- the recall block and AGENTS.md's managed section reach the first request;
- after the agent commits, the turn-end hook's save request reaches the next request, with
  that agent's session id and `--agent <name>`;
- the agent's save lands in the vault as `agent: <name>`;
- an agent that ignores the request gets a mechanical record at session end;
- a decision saved in a Claude Code session is recalled in a Codex session in another
  worktree.

When a CLI cannot be installed the test skips with the reason printed (or fails, with
GITVAULT_REQUIRE_AGENTS=1); it never passes silently.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gitvault.vault import frontmatter
from tests.support import agent_clis, mock_gemini, mock_openai
from tests.support.memory import cli_sub, set_config, vault_text
from tests.support.model_server import Dialect, text
from tests.support.repos import Repo

pytestmark = pytest.mark.agents

PROMPT = "please commit the greeting fix"
TOOL_COMMIT = (
    "printf 'print(\"hello\")\\n' > app.py && git add app.py && "
    "git commit -q -m 'fix: greeting says hello' && git log -1 --format='committed %h'"
)
# The save command a turn-end reason hands over: a heredoc (Gemini, Copilot), or printf lines
# piped in (Codex, which HTML-escapes `<` and `>` on the way to the model).
SAVE_LINE = re.compile(
    r"^(?P<cmd>.*\bsave --session-id (?P<sid>\S+) --agent (?P<agent>\S+) .*)$", re.M
)
PLACEHOLDER = re.compile(r"[<\[]([a-z][^<>\[\]\n]*)[>\]]")
FILLED = {
    "what this session did": "Fix the greeting",
    "what was done and why, 2-5 lines": "Changed the greeting to say hello (E2E-SUMMARY).",
    "decision — reason": "Keep the greeting in app.py — one file is enough",
    "what remains": "Translate the greeting",
}


def given_command(reason: str) -> str | None:
    """The save command in a reason (with its heredoc body when it has one)."""
    match = SAVE_LINE.search(reason)
    if match is None:
        return None
    start, end = match.start("cmd"), match.end("cmd")
    if reason[start:end].endswith("<<'GITVAULT_EOF'"):
        end = reason.index("\nGITVAULT_EOF", start) + len("\nGITVAULT_EOF")
    return reason[start:end]


SECTION = "## Project memory (gitvault)"
DECISION = "Use tabs for indentation — DECISION-CANARY-7c1"
TIMINGS: dict[str, list[float]] = {}


# -- the CLIs --------------------------------------------------------------------------------


@pytest.fixture
def project(repo_factory: Callable[..., Repo]) -> Repo:
    """`gitvault install --agent claude,codex,gemini,copilot`, a decision saved by a Claude
    Code session, the install's files committed (the working tree starts clean)."""
    # The CLIs run with a temporary HOME (Gemini even hides the global git config): the
    # identity comes from the repository.
    repo = repo_factory("proj", install=False, identity=True)
    done = repo.gv("install", "--agent", "claude,codex,gemini,copilot")
    assert done.code == 0, done
    set_config(repo, "capture", fold_on_session_end=False)
    saved = cli_sub(
        repo,
        "save",
        "--title",
        "Set up the project",
        "--session-id",
        "claude-earlier-1",
        "--agent",
        "claude-code",
        stdin=f"## Summary\nCreated app.py.\n## Key Decisions\n- {DECISION}\n"
        "## Next Steps\n- Fix the greeting\n",
    )
    assert saved.code == 0, saved
    repo.commit("feat: add the greeting module", files={"app.py": "print('hi')\n"})
    repo.git("add", ".")
    repo.commit("chore: commit the gitvault install", files={})
    return repo


# -- one scripted model for every API --------------------------------------------------------


OPENAI = mock_openai.DIALECT
GEMINI = mock_gemini.DIALECT


def scripted(api: Dialect, ran: dict[str, str], *, save: bool) -> Callable[[Any], Any]:
    """Commit when prompted; when the save request arrives, run it (placeholders filled in,
    as a model would) or, with save=False, ignore it."""

    def respond(body: Any) -> Any:
        last = api.last_user_text(body)
        if api.ends_with_tool_result(body):
            return text("Saved the session." if "save" in ran else "Committed the fix.")
        command = given_command(last)
        if command and "reason" not in ran:
            ran["reason"] = last
            if not save:
                return text("I will not save now.")
            ran["save"] = PLACEHOLDER.sub(lambda m: FILLED[m.group(1)], command)
            return api.shell_call(ran["save"], body)
        if PROMPT in last and "commit" not in ran:
            ran["commit"] = TOOL_COMMIT
            return api.shell_call(TOOL_COMMIT, body)
        return text("Nothing to do.")

    return respond


def _sessions(repo: Repo) -> list[tuple[dict[str, Any], str]]:
    paths = [p for p in repo.vault_files() if p.startswith("sessions/") and p.endswith(".md")]
    return [frontmatter.parse(vault_text(repo, p) or "") for p in paths]


def _timed(name: str, run: Callable[[], subprocess.CompletedProcess[str]]) -> str:
    started = time.monotonic()
    done = run()
    TIMINGS.setdefault(name, []).append(time.monotonic() - started)
    assert done.returncode == 0, f"{name}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _check_loop(
    repo: Repo, agent: str, requests: list[Any], api: Dialect, ran: dict[str, str], block: str
) -> str:
    """The common assertions of a saving run; the session id."""
    first = api.received_text(requests[0])
    assert block in first, f"{agent}: the recall block did not reach the first request"
    assert first.count("=== VAULT RECALL ===") == 1
    assert SECTION in first, f"{agent}: AGENTS.md's gitvault section did not reach the model"
    head = repo.head()
    assert repo.git("log", "-1", "--format=%s") == "fix: greeting says hello"
    asked = [
        b
        for b in requests
        if SAVE_LINE.search(api.last_user_text(b)) and not api.ends_with_tool_result(b)
    ]
    assert len(asked) == 1, f"{agent}: asked {len(asked)} times"
    reason = ran["reason"]
    assert f"{head[:7]} fix: greeting says hello" in reason
    match = SAVE_LINE.search(reason)
    assert match is not None and match.group("agent") == agent
    sid = match.group("sid")
    mine = [(m, b) for m, b in _sessions(repo) if m.get("session_id") == sid]
    assert len(mine) == 1, f"{agent}: the save, once, and no mechanical record besides it"
    meta, body = mine[0]
    assert meta["agent"] == agent and meta["mode"] == "manual"
    assert meta["title"] == "Fix the greeting" and "E2E-SUMMARY" in body
    assert meta.get("commits") == [head], meta
    assert "DECISION-CANARY" not in body, "recalled text was saved back"
    assert repo.note(head) is not None, f"{agent}: the agent's commit has no note"
    return sid


def _check_record(repo: Repo, agent: str, ran: dict[str, str]) -> None:
    """An agent that ignored the save request: its session-end record."""
    head = repo.head()
    match = SAVE_LINE.search(ran["reason"])
    assert match is not None
    sid = match.group("sid")
    mine = [(m, b) for m, b in _sessions(repo) if m.get("session_id") == sid]
    assert len(mine) == 1, f"{agent}: one mechanical record, got {len(mine)}"
    meta, body = mine[0]
    assert meta["agent"] == agent and meta["mode"] == "auto"
    assert meta["commits"] == [head]
    assert "fix: greeting says hello" in body and "Mechanical record" in body


def _expected_block(repo: Repo) -> str:
    block = cli_sub(repo, "recall").out
    assert block.endswith("=== END VAULT RECALL ===\n") and DECISION in block
    return block[:-1]


def _reset_greeting(repo: Repo) -> None:
    repo.commit("chore: greeting back to hi", files={"app.py": "print('hi')\n"})


# -- Codex -----------------------------------------------------------------------------------


def test_codex_recall_save_and_session_end_record(
    codex: Path, openai_api: mock_openai.MockOpenAI, project: Repo, tmp_path: Path
) -> None:
    repo = project
    block = _expected_block(repo)
    home = tmp_path / "codex-home"
    home.mkdir()
    agent_clis.write_codex_config(home, openai_api.base_url, trusted_projects=[repo.path])
    # The user's trust step, done the way /hooks does it: afterwards the hooks run without any
    # bypass flag, and `gitvault status` says so.
    listed = agent_clis.trust_codex_hooks(codex, home=home, cwd=repo.path)
    assert len([h for h in listed if "gitvault-hook" in json.dumps(h)]) == 6, listed
    status = cli_sub(repo, "status", "--json", env={"HOME": str(home)})
    (entry,) = [a for a in json.loads(status.out)["data"]["agents"] if a["name"] == "codex"]
    assert entry["trusted"] is True and len(entry["hooks"]) == 6, entry

    def run(prompt: str) -> str:
        return _timed(
            "codex",
            lambda: agent_clis.run_codex(
                codex,
                prompt,
                cwd=repo.path,
                home=home,
                base_url=openai_api.base_url,
                bypass_hook_trust=False,
                write_config=False,
                extra_env={"GITVAULT_SYNC": "1"},
            ),
        )

    ran: dict[str, str] = {}
    openai_api.responder = scripted(OPENAI, ran, save=True)
    run(PROMPT)
    requests = [r.body for r in openai_api.model_requests()]
    assert "<hook_prompt" in OPENAI.last_user_text(requests[2]), "the Stop reason, as a hook prompt"
    assert "&lt;" not in ran["reason"], "nothing in the save command was HTML-escaped"
    sid = _check_loop(repo, "codex", requests, OPENAI, ran, block)
    assert (repo.state_dir / "claude-sessions" / f"{sid}.json").is_file()

    # Ignored: the save request comes once; SessionEnd (clamped to 3 s) writes the record.
    _reset_greeting(repo)
    openai_api.clear()
    ran.clear()
    openai_api.responder = scripted(OPENAI, ran, save=False)
    run(PROMPT)
    _check_record(repo, "codex", ran)


def test_a_claude_code_decision_is_recalled_in_a_codex_session_in_another_worktree(
    codex: Path, openai_api: mock_openai.MockOpenAI, project: Repo, tmp_path: Path
) -> None:
    repo = project
    # A later Claude Code session's save (Claude Code's Bash tool exports its session id).
    saved = cli_sub(
        repo,
        "save",
        "--title",
        "Choose the config format",
        env={"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": "claude-cross-2"},
        stdin="## Summary\nPicked TOML.\n## Key Decisions\n- Config is TOML — CROSS-AGENT-42\n"
        "## Next Steps\n- Parse it\n",
    )
    assert saved.code == 0, saved
    metas = [m for m, _ in _sessions(repo) if m.get("session_id") == "claude-cross-2"]
    assert [m["agent"] for m in metas] == ["claude-code"]
    other = repo.worktree("feature")
    assert cli_sub(other, "install", "--agent", "codex").code == 0
    home = tmp_path / "codex-home"
    openai_api.responder = lambda body: mock_openai.text("Noted.")
    _timed(
        "codex",
        lambda: agent_clis.run_codex(
            codex, "what did we decide?", cwd=other.path, home=home, base_url=openai_api.base_url
        ),
    )
    first = OPENAI.received_text(openai_api.model_requests()[0].body)
    assert "CROSS-AGENT-42" in first and "Choose the config format" in first
    assert DECISION in first


# -- Gemini ----------------------------------------------------------------------------------


def test_gemini_recall_save_and_session_end_record(
    gemini: Path, gemini_api: mock_gemini.MockGemini, project: Repo, tmp_path: Path
) -> None:
    repo = project
    block = _expected_block(repo)
    home = tmp_path / "gemini-home"

    def run(prompt: str) -> str:
        return _timed(
            "gemini",
            lambda: agent_clis.run_gemini(
                gemini,
                prompt,
                cwd=repo.path,
                home=home,
                base_url=gemini_api.base_url,
                extra_env={"GITVAULT_SYNC": "1"},
            ),
        )

    ran: dict[str, str] = {}
    gemini_api.responder = scripted(GEMINI, ran, save=True)
    run(PROMPT)
    requests = [r.body for r in gemini_api.model_requests()]
    # PreCompress fired before every one of these requests and wrote nothing.
    assert len(requests) >= 4
    _check_loop(repo, "gemini", requests, GEMINI, ran, block)

    _reset_greeting(repo)
    gemini_api.clear()
    ran.clear()
    gemini_api.responder = scripted(GEMINI, ran, save=False)
    run(PROMPT)
    _check_record(repo, "gemini", ran)
    # Gemini's shell runs no git hook: the note came from the turn-end catch-up.
    assert repo.note(repo.head()) is not None


# -- Copilot ---------------------------------------------------------------------------------


def test_copilot_recall_save_and_session_end_record(
    copilot: Path, openai_api: mock_openai.MockOpenAI, project: Repo, tmp_path: Path
) -> None:
    repo = project
    block = _expected_block(repo)
    home = tmp_path / "copilot-home"

    def run(prompt: str) -> str:
        return _timed(
            "copilot",
            lambda: agent_clis.run_copilot(
                copilot,
                prompt,
                cwd=repo.path,
                home=home,
                base_url=openai_api.base_url,
                extra_env={"GITVAULT_SYNC": "1"},
            ),
        )

    ran: dict[str, str] = {}
    openai_api.responder = scripted(OPENAI, ran, save=True)
    run(PROMPT)
    requests = [r.body for r in openai_api.model_requests()]
    _check_loop(repo, "copilot", requests, OPENAI, ran, block)

    _reset_greeting(repo)
    openai_api.clear()
    ran.clear()
    openai_api.responder = scripted(OPENAI, ran, save=False)
    run(PROMPT)
    _check_record(repo, "copilot", ran)


def teardown_module() -> None:
    for name, runs in TIMINGS.items():
        print(
            f"\n[agents e2e] {name}: {len(runs)} run(s), " + ", ".join(f"{t:.2f}s" for t in runs),
            file=sys.stderr,
        )
