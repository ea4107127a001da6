"""The whole loop with the real Claude Code CLI (`claude -p`, installed from npm) running offline
against the local Messages API mock, with the hooks `gitvault install` wrote into
.claude/settings.json. Everything is asserted from what the mock received and from the repository.

Marked `claude`; in the default suite. When the CLI cannot be had these tests skip with the
reason printed (or fail, with GITVAULT_REQUIRE_CLAUDE=1); they never pass silently.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gitvault.agents.sentinel import BEGIN as PATCH_BEGIN
from gitvault.agents.sentinel import END as PATCH_END
from gitvault.vault import frontmatter
from tests.support.claude_cli import (
    FAKE_API_KEY,
    claude_env,
    run_claude,
    transcripts,
)
from tests.support.claude_hooks import fold_processes, log_text, state_files
from tests.support.memory import (
    cli_sub,
    digest_answer,
    prompt_items,
    set_config,
    vault_text,
)
from tests.support.mock_anthropic import (
    MockAnthropic,
    Reply,
    bash,
    ends_with_tool_result,
    last_user_text,
    message_texts,
    received_text,
    text,
)
from tests.support.repos import Repo, snapshot_user_state, wait_until

pytestmark = pytest.mark.claude

MODEL = "claude-sonnet-4-5"
CLI_TIMEOUT = 90
FOLD_TOKEN = "fold-bearer-token"
RECALL_CANARY = "RECALL-CANARY-3f9a"  # a standing pattern: recalled, never saved back
PROMPT = "please commit the greeting fix"
TOOL_COMMIT = (
    "printf 'print(\"hello\")\\n' > app.py && git add app.py && "
    "git commit -q -m 'fix: greeting says hello' && git log -1 --format='committed %h'"
)
FOLD_PROMPT = "You maintain the memory digest of a software project"
SAVE_LINE = re.compile(r"^(?P<cmd>.*\bsave --session-id (?P<sid>\S+) .*<<'GITVAULT_EOF')$", re.M)
PLACEHOLDER = re.compile(r"<[a-z][^<>\n]*>")
FILLED = {
    "<what this session did>": "Fix the greeting",
    "<what was done and why, 2-5 lines>": "Changed the greeting to say hello (E2E-SUMMARY).",
    "<decision — reason>": "Keep the greeting in app.py — one file is enough",
    "<what remains>": "Translate the greeting",
}
WRAPPER = """\
#!{python}
# Records how gitvault's claude merger started `claude`, then becomes the real CLI.
import json, os, sys
with open({record!r}, "a") as fh:
    call = {{"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd()}}
    fh.write(json.dumps(call) + "\\n")
os.execv({real!r}, [{real!r}, *sys.argv[1:]])
"""


@pytest.fixture
def project(repo_factory: Callable[..., Repo]) -> Repo:
    """`gitvault install` (settings.json hooks → this interpreter), some history with notes, a
    saved session, a builtin digest, a standing pattern; the install's files are committed so
    the working tree starts clean."""
    repo = repo_factory("proj", claude=True, identity=True)
    repo.commit("feat: add the greeting module", files={"app.py": "print('hi')\n"})
    repo.commit("docs: explain the greeting", files={"docs/usage.md": "Run app.py.\n"})
    saved = cli_sub(
        repo,
        "save",
        "--title",
        "Set up the project",
        "--session-id",
        "earlier",
        stdin="## Summary\nCreated app.py.\n## Key Decisions\n- Python only\n"
        "## Next Steps\n- Fix the greeting\n",
    )
    assert saved.code == 0, saved
    from tests.support.memory import vault_of

    vault_of(repo).commit(
        {"patterns/team.md": f"- Keep commits small ({RECALL_CANARY})\n".encode()},
        "patterns: team rules",
    )
    assert repo.gv("fold", "--merger", "builtin").code == 0
    repo.git("add", ".claude", ".mcp.json", "CLAUDE.md")
    repo.commit("chore: commit the gitvault install", files={})
    return repo


def _claude(
    claude: Path,
    api: MockAnthropic,
    repo: Repo,
    home: Path,
    prompt: str,
    *args: str,
    extra_env: dict[str, str] | None = None,
) -> dict[str, Any]:
    done = run_claude(
        claude,
        ["-p", prompt, "--output-format", "json", "--model", MODEL, *args],
        cwd=repo.path,
        home=home,
        base_url=api.base_url,
        timeout=CLI_TIMEOUT,
        extra_env={"GITVAULT_SYNC": "1", **(extra_env or {})},
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    result: dict[str, Any] = json.loads(done.stdout)
    assert result["is_error"] is False, result
    assert not api.errors, api.errors
    return result


def _save_command(reason_text: str) -> tuple[str, str]:
    """The save command the Stop hook's reason gives (heredoc included), and the same command
    with its <placeholders> filled in, as a model would."""
    match = SAVE_LINE.search(reason_text)
    assert match, f"no save command in:\n{reason_text}"
    start = match.start("cmd")
    end = reason_text.index("\nGITVAULT_EOF", start) + len("\nGITVAULT_EOF")
    given = reason_text[start:end]
    filled = PLACEHOLDER.sub(lambda m: FILLED[m.group(0)], given)
    return given, filled


def _outside_sentinels(data: bytes) -> bytes:
    text = data.decode()
    return (text[: text.index(PATCH_BEGIN)] + text[text.index(PATCH_END) :]).encode()


def test_the_whole_loop_with_the_real_cli(
    claude: Path, anthropic_api: MockAnthropic, project: Repo, tmp_path: Path
) -> None:
    repo = project
    set_config(repo, "capture", fold_on_session_end=False)  # the fold is run by hand below
    expected_block = cli_sub(repo, "recall").out
    assert expected_block.endswith("=== END VAULT RECALL ===\n")
    expected_block = expected_block[:-1]
    assert RECALL_CANARY in expected_block and "Set up the project" in expected_block
    before = snapshot_user_state(repo)
    assert before["status"] == ""

    ran: dict[str, str] = {}

    def respond(body: dict[str, Any]) -> Reply | str:
        last = last_user_text(body)
        if FOLD_PROMPT in last:
            return text("unexpected fold request in the session")
        if ends_with_tool_result(body):
            return text("Saved the session." if "save" in ran else "Committed the fix.")
        if SAVE_LINE.search(last):  # the Stop hook's block reason reached the model
            ran["reason"], ran["save"] = _save_command(last)
            return bash(ran["save"], "save the session to gitvault")
        if PROMPT in last:
            ran["commit"] = TOOL_COMMIT
            return bash(TOOL_COMMIT, "commit the fix")
        return text("Nothing to do.")

    anthropic_api.responder = respond
    home = tmp_path / "claude-home"
    result = _claude(claude, anthropic_api, repo, home, PROMPT, "--allowedTools", "Bash")
    sid = result["session_id"]
    requests = [r.body for r in anthropic_api.model_requests()]

    # (a) The recall block arrives verbatim and whole in the first request.
    first_user = message_texts(requests[0], "user")[0]
    assert expected_block in first_user
    assert first_user.count(expected_block) == 1 and "persisted-output" not in first_user
    assert f"SessionStart hook additional context: {expected_block}" in first_user

    # (b) The tool commit's hash is in its output; the Stop hook's reason reached the model.
    head = repo.head()
    assert repo.git("log", "-1", "--format=%s") == "fix: greeting says hello"
    assert f"committed {head[:7]}" in received_text(requests[1])
    asked = [b for b in requests if SAVE_LINE.search(last_user_text(b))]
    assert len(asked) == 1, "asked exactly once"
    reason = last_user_text(asked[0])
    assert f"{head[:7]} fix: greeting says hello" in reason
    assert f"save --session-id {sid} " in reason
    for name in ("## Summary", "## Key Decisions", "## Next Steps"):
        assert name in reason
    # The model ran exactly that command, placeholders filled in.
    assert ran["save"] == PLACEHOLDER.sub(lambda m: FILLED[m.group(0)], ran["reason"])
    assert len(requests) == 4 and result["result"] == "Saved the session."

    # (c) The session landed in the vault, once, as the agent wrote it.
    log = cli_sub(repo, "log", "--kind", "session", "--json")
    assert log.code == 0, log
    entries = json.loads(log.out)["data"]
    mine = [e for e in entries if "fix-the-greeting" in json.dumps(e)]
    assert len(mine) == 1, entries
    session_files = [
        p for p in repo.vault_files() if p.startswith("sessions/") and p.endswith(".md")
    ]
    metas = [frontmatter.parse(vault_text(repo, p) or "") for p in session_files]
    by_sid = [(m, b) for m, b in metas if m.get("session_id") == sid]
    assert len(by_sid) == 1, "the agent's save, and no automatic record besides it"
    meta, body = by_sid[0]
    assert meta["mode"] == "manual" and meta["agent"] == "claude-code"
    assert meta["title"] == "Fix the greeting" and "E2E-SUMMARY" in body
    assert RECALL_CANARY not in body
    index_after_session = (repo.git_dir / "index").read_bytes()

    # (d) `gitvault fold` with the claude merger, the real CLI as the child, against the mock.
    wrapper, record = _merger_wrapper(tmp_path, claude)
    old_digest = vault_text(repo, "_master.md")
    state_before_fold = state_files(repo)
    log_before_fold = log_text(repo)
    anthropic_api.clear()
    note_id = f"c:{head[:7]}"
    session_id = f"s:{meta['slug']}"

    def fold_reply(body: dict[str, Any]) -> Reply | str:
        prompt = last_user_text(body)
        if FOLD_PROMPT not in prompt:
            return text("not a fold prompt")
        ids = prompt_items(prompt)
        assert note_id in ids and session_id in ids, ids
        return digest_answer(
            {
                "State": [f"- The greeting says hello ({note_id})"],
                "Decisions": [f"- Keep the greeting in app.py ({session_id})"],
                "Next steps": [f"- Translate the greeting ({session_id})"],
            }
        )

    anthropic_api.responder = fold_reply
    fold_home = tmp_path / "fold-home"
    fold_home.mkdir()
    env = claude_env(
        home=fold_home,
        base_url=anthropic_api.base_url,
        extra_env={
            "GITVAULT_CLAUDE": str(wrapper),
            "ANTHROPIC_AUTH_TOKEN": FOLD_TOKEN,
            "GIT_CONFIG_NOSYSTEM": "1",
        },
    )
    fold = subprocess.run(
        [sys.executable, "-m", "gitvault", "fold", "--merger", "claude"],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert fold.returncode == 0, f"{fold.stdout}\n{fold.stderr}"
    assert "folded " in fold.stdout and "claude" in fold.stdout
    new_digest = vault_text(repo, "_master.md")
    assert new_digest != old_digest
    new_meta, new_body = frontmatter.parse(new_digest or "")
    assert new_meta["merger"] == "claude"
    for line in (
        f"- The greeting says hello ({note_id})",
        f"- Keep the greeting in app.py ({session_id})",
    ):
        assert line in new_body
    (fold_request,) = anthropic_api.model_requests()
    assert FOLD_PROMPT in last_user_text(fold_request.body)

    # (e) No gitvault hook ran inside the fold's child session.
    (call,) = [json.loads(line) for line in record.read_text().splitlines()]
    assert call["env"]["GITVAULT_CHILD"] == "1"
    assert "ANTHROPIC_API_KEY" not in call["env"], "the merger removes the API key by default"
    assert fold_request.headers.get("authorization") == f"Bearer {FOLD_TOKEN}"
    assert "x-api-key" not in fold_request.headers
    argv = call["argv"]
    assert json.loads(argv[argv.index("--settings") + 1])["disableAllHooks"] is True
    assert "--no-session-persistence" in argv and argv[argv.index("--tools") + 1] == ""
    # The child runs in a neutral temporary folder, outside the project: neither the project's
    # hooks nor its CLAUDE.md (gitvault's own section included) reach the fold's context.
    assert not call["cwd"].startswith(str(repo.path)), "the child ran inside the project"
    fold_text = received_text(fold_request.body)
    assert "gitvault:begin" not in fold_text and "Project memory (gitvault)" not in fold_text
    assert "SessionStart hook" not in fold_text and "Project memory digest (folded" not in fold_text
    assert RECALL_CANARY not in fold_text
    assert state_files(repo) == state_before_fold, "no claude-sessions state for the child"
    assert log_text(repo) == log_before_fold
    assert transcripts(fold_home) == [], "the child kept no transcript"

    # (f) The user's tree and index: only the scripted commit and the CLAUDE.md patch changed.
    after = snapshot_user_state(repo)
    porcelain = repo.run(
        "--no-optional-locks", "status", "--porcelain=v1", "--untracked-files=all"
    ).stdout.decode()
    # At most the fold's CLAUDE.md patch (the section carries only conventions and gotchas, so
    # this digest may leave it as it was), nothing staged.
    assert porcelain in ("", " M CLAUDE.md\n"), porcelain
    assert repo.git("rev-parse", "HEAD^") == before["head_sha"]
    assert repo.git("diff", "--name-only", before["head_sha"], "HEAD") == "app.py"
    changed = {
        k
        for k in before["files"].keys() | after["files"].keys()
        if before["files"].get(k) != after["files"].get(k)
    }
    assert changed in ({"app.py"}, {"app.py", "CLAUDE.md"})
    assert after["files"]["app.py"] == b'print("hello")\n'
    assert _outside_sentinels(after["files"]["CLAUDE.md"]) == _outside_sentinels(
        before["files"]["CLAUDE.md"]
    )
    assert "The greeting says hello" not in before["files"]["CLAUDE.md"].decode()
    assert [r for r in after["refs"] if not r.startswith("refs/heads/main ")] == [
        r for r in before["refs"] if not r.startswith("refs/heads/main ")
    ]
    # The index holds exactly HEAD's tree (what the tool's `git commit` left) ...
    assert repo.run("diff", "--cached", "--quiet", check=False).returncode == 0
    assert _index_entries(repo) == _tree_entries(repo, "HEAD")
    # ... and nothing after that commit (hooks, the save, the fold) touched it.
    assert (repo.git_dir / "index").read_bytes() == index_after_session == after["index"]


def _index_entries(repo: Repo) -> list[str]:
    return sorted(
        line.replace("\t", " ").replace(" 0 ", " ", 1)
        for line in repo.git("ls-files", "-s").splitlines()
    )


def _tree_entries(repo: Repo, rev: str) -> list[str]:
    out = []
    for line in repo.git("ls-tree", "-r", rev).splitlines():
        mode, _kind, rest = line.split(" ", 2)
        oid, path = rest.split("\t", 1)
        out.append(f"{mode} {oid} {path}")
    return sorted(out)


def _merger_wrapper(tmp_path: Path, claude: Path) -> tuple[Path, Path]:
    record = tmp_path / "merger-calls.jsonl"
    wrapper = tmp_path / "bin" / "claude"
    wrapper.parent.mkdir(exist_ok=True)
    wrapper.write_text(WRAPPER.format(python=sys.executable, record=str(record), real=str(claude)))
    wrapper.chmod(0o755)
    return wrapper, record


def test_an_unsaved_session_is_recorded_at_session_end_and_folded(
    claude: Path, anthropic_api: MockAnthropic, project: Repo, tmp_path: Path
) -> None:
    """The agent ignores the save request: SessionEnd writes the mechanical record within
    Claude Code's SessionEnd budget, then starts the detached fold, which runs the default
    claude merger (the real CLI again, started from inside a hook) against the mock, and exits."""
    repo = project
    wrapper, record = _merger_wrapper(tmp_path, claude)
    folds: list[dict[str, Any]] = []

    def respond(body: dict[str, Any]) -> Reply | str:
        last = last_user_text(body)
        if FOLD_PROMPT in last:
            folds.append(body)
            ids = ", ".join(prompt_items(last))
            return digest_answer({"State": [f"- Greeting fixed, session recorded ({ids})"]})
        if ends_with_tool_result(body):
            return text("Committed the fix.")
        if SAVE_LINE.search(last):
            return text("I will not save now.")
        if PROMPT in last:
            return bash(TOOL_COMMIT, "commit the fix")
        return text("Nothing to do.")

    anthropic_api.responder = respond
    tip_before = repo.vault_tip()
    env = {"GITVAULT_CLAUDE": str(wrapper), "ANTHROPIC_AUTH_TOKEN": FOLD_TOKEN}
    home = tmp_path / "claude-home"
    result = _claude(
        claude, anthropic_api, repo, home, PROMPT, "--allowedTools", "Bash", extra_env=env
    )
    sid = result["session_id"]
    head = repo.head()

    wait_until(
        lambda: any(s.startswith("fold ") for _, s in repo.vault_log()[:2]),
        timeout=90,
        what="the SessionEnd fold (see fold.log in the state dir)",
    )
    wait_until(lambda: not fold_processes(repo), timeout=30, what="the fold process to exit")
    new = repo.git("log", "--format=%s", f"{tip_before}..vault").splitlines()
    assert [s.split(" ", 1)[0] for s in new] == ["fold", "session", "note"], new
    records = []
    for path in repo.vault_files():
        if path.startswith("sessions/") and path.endswith(".md"):
            meta, body = frontmatter.parse(vault_text(repo, path) or "")
            if meta.get("session_id") == sid:
                records.append((meta, body))
    ((meta, body),) = records
    assert meta["mode"] == "auto" and meta["commits"] == [head] and meta["prompt_count"] == 1
    assert f'First prompt: "{PROMPT}"' in body and f"{head[:7]} fix: greeting says hello" in body
    assert RECALL_CANARY not in body and "VAULT RECALL" not in body
    assert "hook session-end: wrote the mechanical record" in log_text(repo)
    # The fold took the record in, through the claude merger and the mock.
    digest_meta, digest_body = frontmatter.parse(vault_text(repo, "_master.md") or "")
    assert digest_meta["merger"] == "claude"
    assert f"s:{meta['slug']}" in digest_body and f"c:{head[:7]}" in digest_body
    (fold_body,) = folds
    (call,) = [json.loads(line) for line in record.read_text().splitlines()]
    assert call["env"]["GITVAULT_CHILD"] == "1" and "ANTHROPIC_API_KEY" not in call["env"]
    fold_request = next(r for r in anthropic_api.model_requests() if r.body is fold_body)
    assert fold_request.headers.get("authorization") == f"Bearer {FOLD_TOKEN}"
    # Only the session's own transcript: the child kept none and ran no hook.
    assert len(transcripts(home)) == 1 and sid in transcripts(home)[0].name
    assert sorted(state_files(repo)) == sorted(["earlier.json", f"{sid}.json"])
    assert FAKE_API_KEY not in body


# ============================================================ attribution, resume, saves

QUIET_COMMIT = "git commit -q --allow-empty -m 'feat: quiet work'"
SAVE_NO_ID = (
    "gitvault save --title 'Quiet work' <<'GITVAULT_EOF'\n## Summary\nDid quiet work "
    "(AGENT-SAVE).\n## Key Decisions\n- Keep it quiet — nobody needs the hash\n"
    "## Next Steps\n- Nothing\nGITVAULT_EOF"
)


def _session_files(repo: Repo) -> list[tuple[dict[str, Any], str]]:
    out = []
    for path in repo.vault_files():
        if path.startswith("sessions/") and path.endswith(".md"):
            out.append(frontmatter.parse(vault_text(repo, path) or ""))
    return out


def _asks(api: MockAnthropic) -> list[str]:
    return [
        last_user_text(r.body)
        for r in api.model_requests()
        if SAVE_LINE.search(last_user_text(r.body))
    ]


def test_a_quiet_commit_is_attributed_and_printing_history_claims_nothing(
    claude: Path, anthropic_api: MockAnthropic, project: Repo, tmp_path: Path
) -> None:
    """A `git commit -q` whose hash never appears in any output is this session's work (the
    Stop hook asks about it at once, whatever the transcript holds yet); a read-only session
    that prints `git log --all --oneline -6` claims nothing and leaves no record."""
    repo = project
    set_config(repo, "capture", fold_on_session_end=False)

    def quiet(body: dict[str, Any]) -> Reply | str:
        last = last_user_text(body)
        if ends_with_tool_result(body):
            return text("Done.")
        if SAVE_LINE.search(last):
            return text("Not saving.")
        return bash(QUIET_COMMIT, "commit quietly")

    anthropic_api.responder = quiet
    result = _claude(
        claude, anthropic_api, repo, tmp_path / "h1", "commit quietly", "--allowedTools", "Bash"
    )
    head = repo.head()
    assert head[:7] not in json.dumps([r.body for r in anthropic_api.model_requests()][:2])
    (ask,) = _asks(anthropic_api)
    assert f"{head[:7]} feat: quiet work" in ask
    ((meta, body),) = [
        (m, b) for m, b in _session_files(repo) if m["session_id"] == result["session_id"]
    ]
    assert meta["mode"] == "auto" and meta["commits"] == [head]
    assert meta["title"] == "Automatic record: feat: quiet work"

    anthropic_api.clear()
    tip = repo.vault_tip()

    def reader(body: dict[str, Any]) -> Reply | str:
        if ends_with_tool_result(body):
            return text("That is the history.")
        return bash("git log --all --oneline -6", "show history")

    anthropic_api.responder = reader
    result = _claude(
        claude,
        anthropic_api,
        repo,
        tmp_path / "h2",
        "show me the history",
        "--allowedTools",
        "Bash",
    )
    shown = "\n".join(received_text(r.body) for r in anthropic_api.model_requests())
    assert head[:7] in shown, "the history with other sessions' hashes was printed"
    assert _asks(anthropic_api) == [], "printing history claims nothing"
    assert repo.vault_tip() == tip, "no record of a session that made nothing"


def test_two_sessions_in_two_worktrees_never_claim_each_others_commits(
    claude: Path, anthropic_api: MockAnthropic, project: Repo, tmp_path: Path
) -> None:
    repo = project
    set_config(repo, "capture", fold_on_session_end=False)
    feature = repo.path.parent / "feature-tree"
    repo.git("worktree", "add", "-q", "-b", "feature", str(feature))

    def respond(body: dict[str, Any]) -> Reply | str:
        last = last_user_text(body)
        if ends_with_tool_result(body):
            return text("Committed.")
        if SAVE_LINE.search(last):
            return text("Not saving.")
        for name in ("main", "feature"):
            if f"work on {name}" in last:
                return bash(
                    f"sleep 2; git commit -q --allow-empty -m 'feat: {name} work'", "commit"
                )
        return text("Nothing to do.")

    anthropic_api.responder = respond
    procs = {}
    for name, where in (("main", repo.path), ("feature", feature)):
        home = tmp_path / f"home-{name}"
        home.mkdir()
        procs[name] = subprocess.Popen(
            [
                str(claude),
                "-p",
                f"work on {name}",
                "--output-format",
                "json",
                "--model",
                MODEL,
                "--allowedTools",
                "Bash",
            ],
            cwd=where,
            env=claude_env(
                home=home, base_url=anthropic_api.base_url, extra_env={"GITVAULT_SYNC": "1"}
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            stdin=subprocess.DEVNULL,
        )
    sids = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=CLI_TIMEOUT)
        assert proc.returncode == 0, err
        sids[name] = json.loads(out)["session_id"]
    mains = repo.git("rev-parse", "main")
    features = repo.git("rev-parse", "feature")
    asks = _asks(anthropic_api)
    assert len(asks) == 2
    by_sid = {s: next(a for a in asks if f"--session-id {s} " in a) for s in sids.values()}
    assert mains[:7] in by_sid[sids["main"]] and features[:7] not in by_sid[sids["main"]]
    assert features[:7] in by_sid[sids["feature"]] and mains[:7] not in by_sid[sids["feature"]]
    records = {m["session_id"]: m for m, _ in _session_files(repo) if m["mode"] == "auto"}
    assert records[sids["main"]]["commits"] == [mains]
    assert records[sids["feature"]]["commits"] == [features]
    assert records[sids["feature"]]["branch"] == "feature"


def test_a_save_the_agent_makes_on_its_own_counts(
    claude: Path, anthropic_api: MockAnthropic, project: Repo, tmp_path: Path
) -> None:
    """The model commits, then runs `gitvault save` with no --session-id and no --agent: the
    save belongs to this session (CLAUDE_CODE_SESSION_ID), Stop does not ask, SessionEnd writes
    no automatic record. Headless and with only `git commit` allowed on the command line: the
    save passes through the permission rule install put in settings.local.json."""
    repo = project
    set_config(repo, "capture", fold_on_session_end=False)
    ran: list[str] = []

    def respond(body: dict[str, Any]) -> Reply | str:
        last = last_user_text(body)
        if SAVE_LINE.search(last):
            ran.append("asked")
            return text("Already saved.")
        if ends_with_tool_result(body):
            if "save" in ran:
                return text("Saved.")
            ran.append("save")
            return bash(SAVE_NO_ID, "save the session")
        return bash(QUIET_COMMIT, "commit")

    anthropic_api.responder = respond
    result = _claude(
        claude,
        anthropic_api,
        repo,
        tmp_path / "home",
        "do it",
        "--allowedTools",
        "Bash(git commit:*)",
    )
    assert result["permission_denials"] == [], result["permission_denials"]
    sid = result["session_id"]
    mine = [(m, b) for m, b in _session_files(repo) if m.get("session_id") == sid]
    assert len(mine) == 1, "the agent's save, and no automatic record besides it"
    meta, body = mine[0]
    assert meta["mode"] == "manual" and meta["agent"] == "claude-code"
    assert "AGENT-SAVE" in body and meta["commits"] == [repo.head()]
    assert meta["branch"] == "main"
    assert "asked" not in ran, "the save cleared the Stop condition"


def test_resume_carries_the_memory_once_and_only_what_changed(
    claude: Path, anthropic_api: MockAnthropic, project: Repo, tmp_path: Path
) -> None:
    repo = project
    set_config(repo, "capture", fold_on_session_end=False)
    anthropic_api.responder = lambda body: text("Hello.")
    home = tmp_path / "home"
    sid = _claude(claude, anthropic_api, repo, home, "hello")["session_id"]
    fence = "=== VAULT RECALL ==="

    def fences_in_last_request() -> int:
        return received_text(anthropic_api.model_requests()[-1].body).count(fence)

    assert fences_in_last_request() == 1

    # Nothing changed: the resumed conversation still carries the block once.
    anthropic_api.clear()
    _claude(claude, anthropic_api, repo, home, "again", "--resume", sid)
    assert fences_in_last_request() == 1

    # A new session was saved meanwhile: only it arrives, not the digest again.
    saved = cli_sub(
        repo,
        "save",
        "--title",
        "Parallel news",
        "--session-id",
        "someone-else",
        stdin="## Summary\nNEWS-FROM-ELSEWHERE\n## Key Decisions\n- x — y\n## Next Steps\n- z\n",
    )
    assert saved.code == 0, saved
    anthropic_api.clear()
    _claude(claude, anthropic_api, repo, home, "and again", "--resume", sid)
    seen = received_text(anthropic_api.model_requests()[-1].body)
    assert seen.count(fence) == 2 and seen.count("NEWS-FROM-ELSEWHERE") == 1
    assert seen.count("Project memory digest (folded") == 1, "the digest is not sent twice"
    assert "Memory that changed since this conversation last received it" in seen
