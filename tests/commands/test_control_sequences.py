"""Hostile text in the vault (OSC 52 to the clipboard, OSC 0 to the window title, OSC 8 links,
CSI, 8-bit CSI, CR, a bidi override, an invisible tag character) never reaches a terminal or a
model as control sequences: one test per command that printed it raw, each through the real
entry point (a subprocess, as a terminal runs it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gitvault.resolve import resolve
from gitvault.vault import statedir
from gitvault.vault.store import Vault
from tests.support.memory import cli_sub, session_text
from tests.support.remotes import bare_remote, clone, seed
from tests.support.repos import Repo, git
from tests.support.terminal import HOSTILE, unsafe


def _clean(*texts: str) -> None:
    for text in texts:
        assert unsafe(text) == [], (unsafe(text), text[:400])


def _hostile_session(repo: Repo) -> str:
    text = session_text(title=f"t {HOSTILE}", summary=HOSTILE, decision=HOSTILE, next_step=HOSTILE)
    done = cli_sub(repo, "save", "--title", "hostile", stdin=text)
    assert done.code == 0, done
    slug = next(p for p in repo.vault_files() if p.startswith("sessions/2"))
    assert "\x1b]52" in repo.show(slug).decode(), "the vault keeps what was written"
    return slug.removeprefix("sessions/").removesuffix(".md")


def _hostile_digest(repo: Repo) -> None:
    """A digest holding raw control sequences, as a remote's fold could bring one."""
    vault = Vault(resolve(repo.path))
    text = vault.read_text("_master.md")
    body = (
        '---\nkind: "digest"\nwatermark: "' + str(repo.vault_tip()) + '"\n'
        'folded_at: "2026-12-01T00:00:00+00:00"\nmerger: "builtin"\n---\n# Project memory\n\n'
        + "".join(
            f"## {c}\n- {HOSTILE} (c:{repo.head()[:7]})\n\n"
            for c in ("Architecture", "Decisions", "Conventions", "Gotchas", "State", "Next steps")
        )
    )
    assert text is None
    vault.commit({"_master.md": body.encode()}, "fold 1 items (hostile)")


def test_show_of_a_session_prints_no_control_sequence(repo: Repo) -> None:
    slug = _hostile_session(repo)
    shown = cli_sub(repo, "show", f"s:{slug}")
    assert shown.code == 0, shown
    assert "clip␛]52;c;aGVsbG8=" in shown.out, "visible and inert, not dropped"
    _clean(shown.out, shown.err)


def test_show_of_the_digest_and_recall_print_no_control_sequence(repo: Repo) -> None:
    _hostile_digest(repo)
    shown = cli_sub(repo, "show", "_master.md")
    assert shown.code == 0 and "pwned" in shown.out, shown
    recalled = cli_sub(repo, "recall")
    assert recalled.code == 0 and "pwned" in recalled.out, recalled
    _clean(shown.out, shown.err, recalled.out, recalled.err)
    as_json = cli_sub(repo, "recall", "--json")
    assert unsafe(json.loads(as_json.out)["data"]["text"]) == [], "the block itself is clean"


def test_recall_of_a_session_prints_no_control_sequence(repo: Repo) -> None:
    _hostile_session(repo)
    recalled = cli_sub(repo, "recall")
    assert recalled.code == 0 and "pwned" in recalled.out, recalled
    _clean(recalled.out, recalled.err)


def test_search_and_its_echo_of_the_query_print_no_control_sequence(repo: Repo) -> None:
    _hostile_session(repo)
    found = cli_sub(repo, "search", "pwned")
    assert found.code == 0 and "result" in found.out, found
    echoed = cli_sub(repo, "search", f"nothing{HOSTILE}")
    missing = cli_sub(repo, "show", f"s:{HOSTILE}")
    assert missing.code == 1
    usage = cli_sub(repo, "log", f"--x{HOSTILE}")  # click's own message echoes the option
    assert usage.code == 2 and "clip" in usage.err, usage
    _clean(found.out, found.err, echoed.out, echoed.err, missing.err, usage.out, usage.err)


def test_status_line_from_a_hostile_fold_state_prints_no_control_sequence(repo: Repo) -> None:
    loc = resolve(repo.path)
    # The configured merger failed and a stand-in the state file names folded: the line names it.
    failure = statedir.FoldFailure("claude", HOSTILE, HOSTILE)
    assert statedir.write_fold_state(loc, statedir.FoldState(failure=failure, fallback=HOSTILE))
    line = cli_sub(repo, "status", "--line")  # the fast path a shell prompt runs
    assert line.code == 0 and "stands in" in line.out and "clip" in line.out, line
    assert line.out.count("\n") == 1
    failure = statedir.FoldFailure("claude", HOSTILE, HOSTILE)  # the configured merger's
    assert statedir.write_fold_state(loc, statedir.FoldState(failure=failure))
    repo.commit("something to fold")
    full = cli_sub(repo, "status")
    assert full.code == 0 and "pwned" in full.out + full.err, full
    _clean(line.out, line.err, full.out, full.err)


def test_syncs_quarantine_report_prints_no_control_sequence(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    seed(remote, tmp_path / "seed")
    mine = clone(remote, tmp_path / "mine")
    assert mine.gv("sync").code == 0
    evil = tmp_path / "evil"
    git(tmp_path, "clone", "-q", "--no-checkout", str(remote), str(evil))
    git(evil, "fetch", "-q", "origin", "vault:vault")
    git(evil, "checkout", "-q", "vault")
    (evil / f"x{HOSTILE.replace('/', '')}.sh").write_text(f"#!/bin/sh\necho {HOSTILE}\n")
    (evil / "notes" / "bad.md").write_text(HOSTILE)
    git(evil, "add", "-A")
    git(evil, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", HOSTILE)
    git(evil, "push", "-q", "origin", "vault")
    synced = cli_sub(mine, "sync")
    assert synced.code == 0, synced
    assert "quarantin" in (synced.out + synced.err).lower(), synced
    status = cli_sub(mine, "status")
    _clean(synced.out, synced.err, status.out, status.err)


def test_the_session_start_context_of_every_agent_holds_no_control_sequence(
    repo_factory,
) -> None:
    repo: Repo = repo_factory("proj", install=False)
    assert repo.gv("install", "--agent", "claude,codex,gemini,copilot").code == 0
    _hostile_session(repo)
    _hostile_digest(repo)
    for agent in ("claude", "codex", "gemini", "copilot"):
        payload = {"session_id": "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", "cwd": str(repo.path)}
        payload |= {"hook_event_name": "SessionStart", "source": "startup"}
        if agent == "copilot":
            payload = {"sessionId": payload["session_id"], "cwd": str(repo.path)}
            payload |= {"timestamp": 1764547200000, "source": "new"}
        done = subprocess.run(
            [sys.executable, "-m", "gitvault.hook", agent, "session-start"],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            cwd=repo.path,
            env={**os.environ, "CLAUDE_PROJECT_DIR": str(repo.path)},
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        context = (
            answer.get("additionalContext") or answer["hookSpecificOutput"]["additionalContext"]
        )
        assert "pwned" in context, (agent, context[:300])
        _clean(context)


def test_mcp_tool_results_hold_no_control_sequence(repo: Repo) -> None:
    from gitvault import mcpserver

    slug = _hostile_session(repo)
    _hostile_digest(repo)
    memory = mcpserver.Memory(resolve(repo.path))
    texts = [
        memory.call("search", {"query": "pwned"}),
        memory.call("show", {"id": f"s:{slug}"}),
        memory.call("recall", {}),
    ]
    assert all("pwned" in text for text in texts), [t[:200] for t in texts]
    assert "clip␛]52;c;aGVsbG8=" in texts[1], "visible and inert, not dropped"
    _clean(*texts)
