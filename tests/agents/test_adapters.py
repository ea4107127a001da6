"""The adapter layer without the real CLIs: each agent's input normalised onto the one payload,
its output shape, its settings merged additively (foreign hooks kept, idempotent, uninstall
removes only gitvault's), trust read from the agent's own files, install --agent and status per
agent, `gitvault save` defaults from the agent's shell, Gemini's PreCompress gate, and the hook
entry answering sample inputs recorded from the real CLIs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gitvault.agents import adapters, hookinput
from gitvault.agents.adapters.base import CANONICAL_SCHEMA
from gitvault.agents.adapters.codex import Codex
from gitvault.agents.adapters.copilot import Copilot
from gitvault.agents.adapters.gemini import Gemini
from gitvault.vault import frontmatter
from tests.support.memory import cli_sub
from tests.support.paths import DATA
from tests.support.repos import Repo

SAMPLES = DATA / "agent_hooks"
SID = "01a22e8b-d414-7dd1-af0b-cf806e48a69b"


def _problems(payload: Any) -> list[str]:
    return hookinput.validate(CANONICAL_SCHEMA, payload)


def _sample(name: str, cwd: Path, **extra: Any) -> str:
    data = json.loads((SAMPLES / f"{name}.json").read_text())
    data["cwd"] = str(cwd)
    data.update(extra)
    return json.dumps(data)


def _hook(agent: str, event: str, stdin: str, cwd: Path, **env: str) -> tuple[int, str, str]:
    full = {**os.environ, "GITVAULT_SYNC": "1", **env}
    done = subprocess.run(
        [sys.executable, "-m", "gitvault.hook", agent, event],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full,
        timeout=60,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def wired(repo_factory: Callable[..., Repo]) -> Repo:
    repo = repo_factory("proj", install=False)
    done = repo.gv("install", "--agent", "codex,gemini,copilot")
    assert done.code == 0, done
    return repo


# -- the registry ----------------------------------------------------------------------------


def test_agent_lists_parse_in_registry_order_and_refuse_unknown_names() -> None:
    assert adapters.parse("copilot, CLAUDE,codex") == ["claude", "codex", "copilot"]
    assert adapters.parse("none") == []
    assert adapters.render([]) == "none"
    with pytest.raises(Exception, match="unknown agent cursor"):
        adapters.parse("codex,cursor")
    assert adapters.serves(None, "codex") and adapters.serves("codex,gemini", "gemini")
    assert not adapters.serves("claude", "codex")


def test_session_defaults_come_from_the_agents_shell() -> None:
    assert adapters.session_from_env({"CODEX_SESSION_ID": "abc"}) == ("codex", "abc")
    assert adapters.session_from_env({"COPILOT_AGENT_SESSION_ID": "x1"}) == ("copilot", "x1")
    assert adapters.session_from_env({"CLAUDE_CODE_SESSION_ID": "c"}) is None  # not CLAUDECODE
    assert adapters.session_from_env({"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": "c"}) == (
        "claude-code",
        "c",
    )
    assert adapters.session_from_env({"GEMINI_CLI": "1"}) is None  # Gemini exports none


def test_patch_targets_add_the_served_agents_files_and_drop_unserved_defaults() -> None:
    assert adapters.patch_targets(["CLAUDE.md"], None) == ["CLAUDE.md"]
    assert adapters.patch_targets(["CLAUDE.md"], ["claude", "codex"]) == ["CLAUDE.md", "AGENTS.md"]
    assert adapters.patch_targets(["CLAUDE.md"], ["gemini"]) == ["AGENTS.md"]
    # A file the user listed in vault.toml stays, served or not.
    assert adapters.patch_targets(["CLAUDE.md", "AGENTS.md"], ["claude"]) == [
        "CLAUDE.md",
        "AGENTS.md",
    ]


# -- input and output per agent --------------------------------------------------------------


def test_inputs_are_normalised_onto_one_payload(tmp_path: Path) -> None:
    copilot = json.loads(_sample("copilot-agentStop-stop_hook_active", tmp_path))
    payload = Copilot().normalise("turn-end", copilot)
    assert payload["session_id"] == copilot["sessionId"] and payload["stop_hook_active"] is True
    assert _problems(payload) == []
    start = Copilot().normalise(
        "session-start", json.loads(_sample("copilot-sessionStart", tmp_path))
    )
    assert start["source"] == "startup" and start["prompt"] == "please run it"
    gemini = Gemini().normalise("turn-end", json.loads(_sample("gemini-AfterAgent", tmp_path)))
    assert gemini["prompt"] == "please run it" and gemini["stop_hook_active"] is False
    codex = Codex().normalise("turn-end", json.loads(_sample("codex-Stop", tmp_path)))
    assert codex["session_id"] == SID and "transcript_path" not in codex
    assert _problems({"session_id": "../../etc"}) != []
    assert _problems(Copilot().normalise("turn-end", {"session_id": SID})) != []


def test_each_agent_gets_its_own_output_shape() -> None:
    context = {"context": "BLOCK"}
    assert json.loads(Codex().shape("session-start", context)) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "BLOCK"}
    }  # and nothing at the top level: Codex rejects a JSON that has both
    assert json.loads(Gemini().shape("session-start", context))["hookSpecificOutput"]
    assert json.loads(Copilot().shape("session-start", context)) == {"additionalContext": "BLOCK"}
    block = {"decision": "block", "reason": "R"}
    for adapter in (Codex(), Gemini(), Copilot()):
        assert json.loads(adapter.shape("turn-end", block)) == block
        assert adapter.shape("turn-end", None) == ""
    assert (
        len(
            json.loads(Copilot().shape("session-start", {"context": "x" * 20_000}))[
                "additionalContext"
            ]
        )
        == 9500
    )


# -- install, idempotency, foreign hooks, uninstall ------------------------------------------


def test_install_merges_additively_and_uninstall_removes_only_gitvaults(
    repo_factory: Callable[..., Repo],
) -> None:
    repo = repo_factory("proj", install=False)
    foreign_codex = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}}
    repo.write(".codex/hooks.json", json.dumps(foreign_codex))
    repo.write(".gemini/settings.json", json.dumps({"ui": {"theme": "dark"}}))
    repo.write(".github/hooks/team.json", json.dumps({"version": 1, "hooks": {}}))
    first = repo.gv("install", "--agent", "codex,gemini,copilot")
    assert first.code == 0, first
    for needle in ("Codex CLI: trust", "Gemini CLI: trust", "Copilot CLI: trust", "/hooks"):
        assert needle in first.out
    codex = json.loads((repo.path / ".codex/hooks.json").read_text())
    assert codex["hooks"]["Stop"][0] == foreign_codex["hooks"]["Stop"][0]
    assert [
        len(codex["hooks"][e]) for e in ("SessionStart", "Stop", "PreCompact", "SessionEnd")
    ] == [
        1,
        2,
        1,
        1,
    ]
    assert codex["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"] == 3  # Codex clamps to 3 s
    gemini = json.loads((repo.path / ".gemini/settings.json").read_text())
    assert gemini["ui"] == {"theme": "dark"}
    assert gemini["context"]["fileName"] == ["GEMINI.md", "AGENTS.md"]
    assert gemini["hooks"]["PreCompress"][0]["hooks"][0]["timeout"] == 60_000  # milliseconds
    copilot = json.loads((repo.path / ".github/hooks/gitvault.json").read_text())
    assert copilot["version"] == 1 and "bash" in copilot["hooks"]["agentStop"][0]
    assert "gitvault:begin" in (repo.path / "AGENTS.md").read_text()
    assert not (repo.path / "CLAUDE.md").exists() and not (repo.path / ".claude").exists()
    assert repo.git("config", "gitvault.agents") == "codex,gemini,copilot"
    before = {
        p: (repo.path / p).read_bytes() for p in (".codex/hooks.json", ".gemini/settings.json")
    }

    again = repo.gv("install", "--agent", "codex,gemini,copilot")
    assert again.code == 0 and "nothing changed" in again.out, again
    assert before == {p: (repo.path / p).read_bytes() for p in before}

    gone = repo.gv("uninstall")
    assert gone.code == 0, gone
    assert json.loads((repo.path / ".codex/hooks.json").read_text()) == foreign_codex
    assert json.loads((repo.path / ".gemini/settings.json").read_text()) == {
        "ui": {"theme": "dark"}
    }
    assert not (repo.path / ".github/hooks/gitvault.json").exists()
    assert (repo.path / ".github/hooks/team.json").exists()
    assert not (repo.path / "AGENTS.md").exists()


def test_a_broken_settings_file_refuses_the_install_before_anything_is_written(
    repo_factory: Callable[..., Repo],
) -> None:
    repo = repo_factory("proj", install=False)
    repo.write(".gemini/settings.json", "{not json")
    done = repo.gv("install", "--agent", "gemini")
    assert done.code == 3, done
    assert repo.vault_tip() is None and not (repo.path / "AGENTS.md").exists()


def test_default_install_wires_claude_and_the_agents_on_path(
    repo_factory: Callable[..., Repo], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "copilot"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    repo = repo_factory("proj", install=False)
    assert repo.gv("install").code == 0
    assert repo.git("config", "gitvault.agents") == "claude,copilot"
    assert (repo.path / ".github/hooks/gitvault.json").exists()
    other = repo_factory("other", install=False)
    assert other.gv("install", "--no-claude").code == 0
    assert other.git("config", "gitvault.agents") == "copilot"
    assert not (other.path / ".claude").exists()


# -- status and trust -------------------------------------------------------------------------


def test_status_says_per_agent_whether_hooks_are_installed_and_trusted(
    wired: Repo, tmp_path: Path
) -> None:
    home = Path(os.environ["HOME"])
    data = json.loads(wired.gv("status", "--json").out)["data"]
    by_name = {a["name"]: a for a in data["agents"]}
    assert by_name["codex"]["hooks"] == [
        "session-start",
        "turn-end",
        "pre-compact",
        "session-end",
        "file-read",
        "file-edit",
    ]
    assert by_name["codex"]["trusted"] is False and by_name["gemini"]["trusted"] is False
    assert any("Copilot CLI will not run" in w for w in data["warnings"])
    (home / ".copilot").mkdir()
    (home / ".copilot/config.json").write_text(json.dumps({"trustedFolders": [str(wired.path)]}))
    (home / ".gemini").mkdir()
    (home / ".gemini/trustedFolders.json").write_text(
        json.dumps({str(wired.path.parent): "TRUST_FOLDER"})
    )
    (home / ".codex").mkdir()
    (home / ".codex/config.toml").write_text(
        f'[projects."{wired.path}"]\ntrust_level = "trusted"\n'
    )
    data = json.loads(wired.gv("status", "--json").out)["data"]
    by_name = {a["name"]: a for a in data["agents"]}
    assert by_name["copilot"]["trusted"] is True and by_name["gemini"]["trusted"] is True
    assert by_name["codex"]["trusted"] is False and "0 of 6" in by_name["codex"]["trust"]
    hooks_json = os.path.realpath(wired.path / ".codex/hooks.json")
    state = "".join(
        f'[hooks.state."{hooks_json}:{e}:0:0"]\ntrusted_hash = "sha256:x"\n'
        for e in (
            "session_start",
            "stop",
            "pre_compact",
            "session_end",
            "pre_tool_use",
            "post_tool_use",
        )
    )
    (home / ".codex/config.toml").write_text(
        f'[projects."{wired.path}"]\ntrust_level = "trusted"\n' + state
    )
    data = json.loads(wired.gv("status", "--json").out)["data"]
    assert {a["name"]: a["trusted"] for a in data["agents"]}["codex"] is True
    assert not [w for w in data["warnings"] if "will not run" in w]


# -- the hooks, fed the real CLIs' recorded inputs --------------------------------------------


def test_hooks_answer_recorded_inputs_in_each_agents_shape(wired: Repo) -> None:
    saved = cli_sub(
        wired,
        "save",
        "--agent",
        "claude-code",
        "--session-id",
        "c1",
        stdin="## Summary\nS\n## Key Decisions\n- RECALL-ME\n## Next Steps\n- n\n",
    )
    assert saved.code == 0, saved
    code, out, _ = _hook(
        "copilot", "session-start", _sample("copilot-sessionStart", wired.path), wired.path
    )
    assert code == 0 and "RECALL-ME" in json.loads(out)["additionalContext"]
    code, out, _ = _hook(
        "codex", "session-start", _sample("codex-SessionStart", wired.path), wired.path
    )
    assert "RECALL-ME" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    head = wired.commit("feat: codex work")
    code, out, _ = _hook("codex", "turn-end", _sample("codex-Stop", wired.path), wired.path)
    reason = json.loads(out)["reason"]
    assert f"{head[:7]} feat: codex work" in reason
    assert f"--session-id {SID} --agent codex" in reason and "<" not in reason  # Codex escapes <
    # Unknown event, unknown agent: usage (2); garbage input: exit 0, logged.
    assert _hook("codex", "stop", "{}", wired.path)[0] == 2
    assert _hook("codex", "session-end", "not json", wired.path)[0] == 0
    assert "malformed input" in (wired.state_dir / "log").read_text()
    # Codex's SessionEnd (clamped to 3 s by Codex): the record lands well inside it.
    code, _, _ = _hook("codex", "session-end", _sample("codex-SessionEnd", wired.path), wired.path)
    metas = [
        frontmatter.parse(wired.show(p).decode())[0]
        for p in wired.vault_files()
        if p.startswith("sessions/") and p.endswith(".md")
    ]
    (record,) = [m for m in metas if m.get("session_id") == SID]
    assert record["agent"] == "codex" and record["mode"] == "auto" and record["commits"] == [head]


def test_an_agent_this_clone_does_not_serve_stays_silent(wired: Repo) -> None:
    wired.git("config", "gitvault.agents", "codex")
    _, out, _ = _hook(
        "copilot", "session-start", _sample("copilot-sessionStart", wired.path), wired.path
    )
    assert out == ""
    wired.git("config", "gitvault.agents", "none")
    _, out, _ = _hook(
        "codex", "session-start", _sample("codex-SessionStart", wired.path), wired.path
    )
    assert out == ""


def test_gemini_precompress_is_cheap_and_records_only_work_it_asked_about_long_ago(
    wired: Repo,
) -> None:
    sid = json.loads(_sample("gemini-PreCompress", wired.path))["session_id"]
    _hook("gemini", "session-start", _sample("gemini-SessionStart", wired.path), wired.path)
    head = wired.commit("feat: gemini work", hooks=False)  # Gemini's shell runs no git hook
    for _ in range(3):  # before every model request: nothing written, no git
        assert (
            _hook("gemini", "pre-compact", _sample("gemini-PreCompress", wired.path), wired.path)[1]
            == ""
        )
    _, out, _ = _hook("gemini", "turn-end", _sample("gemini-AfterAgent", wired.path), wired.path)
    assert f"--session-id {sid} --agent gemini" in json.loads(out)["reason"]
    assert wired.note(head) is not None, "the turn-end hook caught up the missing note"

    def sessions() -> list[dict[str, Any]]:
        return [
            frontmatter.parse(wired.show(p).decode())[0]
            for p in wired.vault_files()
            if p.startswith("sessions/") and p.endswith(".md")
        ]

    _hook("gemini", "pre-compact", _sample("gemini-PreCompress", wired.path), wired.path)
    assert sessions() == [], "asked just now: the agent may still save"
    ledger = wired.state_dir / "claude-sessions" / f"{sid}.json"
    state = json.loads(ledger.read_text())
    state["last_ask"] -= 3600
    ledger.write_text(json.dumps(state))
    for _ in range(3):  # once, then idempotent
        _hook("gemini", "pre-compact", _sample("gemini-PreCompress", wired.path), wired.path)
    records = [m for m in sessions() if m.get("session_id") == sid]
    assert [(m["agent"], m["mode"], m["commits"]) for m in records] == [("gemini", "auto", [head])]


def test_save_takes_the_session_and_agent_from_the_agents_shell(wired: Repo) -> None:
    for env, agent in (
        ({"CODEX_SESSION_ID": "codex-s1"}, "codex"),
        ({"COPILOT_AGENT_SESSION_ID": "copilot-s1"}, "copilot"),
    ):
        done = cli_sub(
            wired,
            "save",
            "--title",
            f"from {agent}",
            env=env,
            stdin="## Summary\nS\n## Key Decisions\n- d\n## Next Steps\n- n\n",
        )
        assert done.code == 0, done
        metas = [
            frontmatter.parse(wired.show(p).decode())[0]
            for p in wired.vault_files()
            if p.startswith("sessions/") and p.endswith(".md")
        ]
        (meta,) = [m for m in metas if m["title"] == f"from {agent}"]
        assert meta["agent"] == agent and meta["session_id"] == next(iter(env.values()))
