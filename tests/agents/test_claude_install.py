"""`gitvault install` wires Claude Code: hook entries merged additively into .claude/settings.json
(or settings.local.json with --local), the /save and /recall skills with a stamp of what was
installed, and the CLAUDE.md managed section. --no-claude skips all of it; an invalid
settings.json makes install refuse before anything is written."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gitvault import mcpserver
from gitvault.agents.sentinel import BEGIN, END
from tests.support.claude_hooks import sample
from tests.support.repos import Repo

EVENTS = {
    "SessionStart": "session-start",
    "Stop": "stop",
    "PreCompact": "pre-compact",
    "SessionEnd": "session-end",
}
# The edit-time block's events: short-bounded, they fire on every read and edit.
TOOL_EVENTS = {"PostToolUse": "file-read", "PreToolUse": "file-edit"}
SKILLS = (
    ".claude/skills/save/SKILL.md",
    ".claude/skills/recall/SKILL.md",
    ".claude/skills/checkpoint/SKILL.md",
)

FOREIGN: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(./.env)"]},
    "env": {"FOO": "bar"},
    "hooks": {
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo mine-start"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "./lint.sh", "timeout": 5}]}],
        "PostToolUse": [
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "prettier -w"}]}
        ],
    },
    "statusLine": {"type": "command", "command": "echo status"},
}


# Installed with the Claude Code wiring (install without --no-claude).
pytestmark = pytest.mark.repo(claude=True)


def _settings(repo: Repo, local: bool = False) -> dict[str, Any]:
    name = "settings.local.json" if local else "settings.json"
    data: dict[str, Any] = json.loads((repo.path / ".claude" / name).read_text("utf-8"))
    return data


def _ours(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [g for g in groups if any("gitvault-hook" in h["command"] for h in g["hooks"])]


def _write_settings(repo: Repo, data: Any, local: bool = False) -> Path:
    path = repo.path / ".claude" / ("settings.local.json" if local else "settings.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=4), "utf-8")
    return path


def _tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under root (the .git dir included) with its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def _stamp(repo: Repo) -> dict[str, str]:
    data: dict[str, str] = json.loads((repo.state_dir / "claude-stamp.json").read_text())
    return data


# --------------------------------------------------------------------------- settings.json


def test_install_merges_hooks_additively_and_a_second_install_changes_nothing(
    repo_factory: Callable[..., Repo],
) -> None:
    repo = repo_factory(install=False, claude=True)
    _write_settings(repo, FOREIGN)

    first = repo.gv("install")
    assert first.code == 0, first
    assert "added gitvault's hooks to .claude/settings.json" in first.out
    data = _settings(repo)
    # Every foreign key is kept as it was, in its place.
    assert list(data) == list(FOREIGN)
    for key in ("model", "env", "statusLine"):
        assert data[key] == FOREIGN[key]
    # Narrow rules added to the user's own: the save the Stop hook asks for, and each of the
    # MCP server's tools by name (never the whole server, `mcp__gitvault`).
    mcp = [f"mcp__gitvault__{tool}" for tool in mcpserver.TOOLS]
    assert data["permissions"] == {
        "allow": ["Bash(npm test)", "Bash(gitvault save:*)", *mcp],
        "deny": ["Read(./.env)"],
    }
    assert "mcp__gitvault" not in data["permissions"]["allow"]
    assert "allowed `Bash(gitvault save:*)` in .claude/settings.json" in first.out
    assert "allowed `Bash(gitvault save:*)` in .claude/settings.local.json" in first.out
    assert "allowed gitvault's 6 MCP tools" in first.out
    assert _settings(repo, local=True) == {
        "permissions": {"allow": ["Bash(gitvault save:*)", *mcp]}
    }
    ignored = repo.run("check-ignore", "-q", ".claude/settings.local.json", check=False)
    assert ignored.returncode == 0, "settings.local.json stays out of git"
    hooks = data["hooks"]
    # Foreign hooks kept first, ours appended; events we do not use untouched.
    assert hooks["PostToolUse"][0] == FOREIGN["hooks"]["PostToolUse"][0]
    assert hooks["SessionStart"][0] == FOREIGN["hooks"]["SessionStart"][0]
    assert hooks["Stop"][0] == FOREIGN["hooks"]["Stop"][0]
    for event, arg in EVENTS.items():
        (group,) = _ours(hooks[event])
        (handler,) = group["hooks"]
        assert handler["type"] == "command" and handler["timeout"] >= 15
        assert f"gitvault-hook claude {arg}" in handler["command"]
        assert sys.executable not in handler["command"], "nothing machine-specific"
    for event, arg in TOOL_EVENTS.items():
        (group,) = _ours(hooks[event])
        assert f"gitvault-hook claude {arg}" in group["hooks"][0]["command"]
    assert _ours(hooks["PostToolUse"])[0]["matcher"] == "Read"
    assert _ours(hooks["SessionStart"])[0]["matcher"] == "startup|resume|clear|compact"
    assert len(hooks["SessionStart"]) == 2 and len(hooks["Stop"]) == 2

    before = (repo.path / ".claude" / "settings.json").read_bytes()
    skills = {rel: (repo.path / rel).read_bytes() for rel in SKILLS}
    claude_md = (repo.path / "CLAUDE.md").read_bytes()
    second = repo.gv("install")
    assert second.code == 0, second
    assert "already installed; nothing changed" in second.out
    assert (repo.path / ".claude" / "settings.json").read_bytes() == before
    assert {rel: (repo.path / rel).read_bytes() for rel in SKILLS} == skills
    assert (repo.path / "CLAUDE.md").read_bytes() == claude_md


def test_installed_hook_commands_run_the_hooks_and_fail_open(repo: Repo) -> None:
    """The command strings in settings.json, run by `sh -c` as Claude Code runs them."""
    hooks = _settings(repo)["hooks"]
    command = _ours(hooks["SessionStart"])[0]["hooks"][0]["command"]
    payload = json.dumps(sample("SessionStart:startup", repo=repo))
    done = subprocess.run(
        ["sh", "-c", command],
        input=payload,
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("=== VAULT RECALL ===")

    # The launcher is gone and no gitvault-hook is on PATH: exit 0, say nothing.
    (repo.state_dir / "bin" / "gitvault-hook").unlink()
    done = subprocess.run(
        ["sh", "-c", command],
        input=payload,
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert (done.returncode, done.stdout) == (0, "")


def test_the_hook_command_finds_a_main_worktrees_launcher_without_starting_git(
    repo: Repo, tmp_path: Path
) -> None:
    """Every turn and tool call runs the command: at a main worktree's top its own .git holds
    the launcher (no git process); a linked worktree's is found by git, as before."""
    command = _ours(_settings(repo)["hooks"]["SessionStart"])[0]["hooks"][0]["command"]
    bin_dir, calls = tmp_path / "bin", tmp_path / "git-calls"
    bin_dir.mkdir()
    real_git = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True)
    (bin_dir / "git").write_text(
        f'#!/bin/sh\necho "$*" >> {calls}\nexec {real_git.stdout.strip()} "$@"\n'
    )
    (bin_dir / "git").chmod(0o755)

    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", str(linked))
    for folder, by_git in ((repo.path, False), (linked, True)):
        calls.unlink(missing_ok=True)
        payload = json.dumps(sample("SessionStart:startup", repo=repo))
        done = subprocess.run(
            ["sh", "-c", command],
            input=payload,
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=60,
            env={**env, "CLAUDE_PROJECT_DIR": str(folder)},
        )
        assert done.returncode == 0 and "VAULT RECALL" in done.stdout, done
        found = calls.read_text() if calls.exists() else ""
        assert ("--git-common-dir" in found) is by_git, (folder, found)


def test_stale_gitvault_entries_are_replaced_not_duplicated(
    repo_factory: Callable[..., Repo],
) -> None:
    repo = repo_factory(install=False, claude=True)
    # The command gitvault 0.1 wrote (an interpreter and a module path).
    old = (
        "[ -x /old/venv/bin/python ] && exec /old/venv/bin/python -m gitvault.claude_hooks stop; "
        "command -v gitvault-hook >/dev/null 2>&1 && exec gitvault-hook stop; exit 0"
    )
    mixed = {
        "hooks": {
            "Stop": [
                {
                    "hooks": [
                        {"type": "command", "command": "./lint.sh"},
                        {"type": "command", "command": old, "timeout": 30},
                    ]
                },
            ]
        }
    }
    _write_settings(repo, mixed)
    assert repo.gv("install").code == 0
    stop = _settings(repo)["hooks"]["Stop"]
    # The user's handler keeps its group; the old gitvault handler is gone; ours once.
    assert stop[0] == {"hooks": [{"type": "command", "command": "./lint.sh"}]}
    assert len(_ours(stop)) == 1 and "/old/venv" not in json.dumps(stop)


def test_local_writes_settings_local_json_only(repo_factory: Callable[..., Repo]) -> None:
    repo = repo_factory(install=False, claude=True)
    result = repo.gv("install", "--local")
    assert result.code == 0, result
    assert not (repo.path / ".claude" / "settings.json").exists()
    hooks = _settings(repo, local=True)["hooks"]
    assert set(hooks) == set(EVENTS) | set(TOOL_EVENTS)
    assert all(len(_ours(hooks[e])) == 1 for e in [*EVENTS, *TOOL_EVENTS])
    assert all((repo.path / rel).is_file() for rel in SKILLS)

    assert repo.gv("uninstall").code == 0
    assert not (repo.path / ".claude" / "settings.local.json").exists(), "it held only ours"


def test_uninstall_removes_only_gitvaults_entries(repo_factory: Callable[..., Repo]) -> None:
    repo = repo_factory(install=False, claude=True)
    (repo.path / "CLAUDE.md").write_text("# Team notes\n\nUse tabs.\n", "utf-8")
    _write_settings(repo, FOREIGN)
    assert repo.gv("install").code == 0
    assert BEGIN in (repo.path / "CLAUDE.md").read_text()

    result = repo.gv("uninstall")
    assert result.code == 0, result
    assert _settings(repo) == FOREIGN
    for rel in SKILLS:
        assert not (repo.path / rel).exists()
    assert not (repo.path / ".claude" / "skills").exists()
    assert (repo.path / "CLAUDE.md").read_text() == "# Team notes\n\nUse tabs.\n"
    assert repo.vault_tip() is not None  # the vault is kept


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    "content",
    [
        '{"hooks": {"Stop": [',  # truncated
        '{"model": "opus",}',  # trailing comma
        "[1, 2]",  # not an object
        '{"hooks": []}',  # valid JSON, hooks of the wrong type
        '{"hooks": {"Stop": {"command": "x"}}}',  # an event that is not a list
    ],
)
def test_invalid_settings_json_refuses_and_changes_nothing(
    repo_factory: Callable[..., Repo], content: str
) -> None:
    repo = repo_factory(install=False, claude=True)
    _write_settings(repo, content)
    before = _tree_bytes(repo.path)

    result = repo.gv("install")

    assert result.code == 3, result
    assert "settings.json" in result.err and "hint:" in result.err
    assert repo.vault_tip() is None, "no vault branch may be created"
    assert _tree_bytes(repo.path) == before, "nothing may change anywhere"


def test_invalid_settings_local_json_refuses_with_local(repo_factory: Callable[..., Repo]) -> None:
    repo = repo_factory(install=False, claude=True)
    _write_settings(repo, "{nope", local=True)
    before = _tree_bytes(repo.path)
    assert repo.gv("install", "--local").code == 3
    assert _tree_bytes(repo.path) == before
    # Without --local the broken local file is not gitvault's business.
    assert repo.gv("install").code == 0
    assert (repo.path / ".claude" / "settings.local.json").read_text() == "{nope"


# --------------------------------------------------------------------------- skills and stamp


def test_skills_are_installed_and_stamped(repo: Repo) -> None:
    stamp = _stamp(repo)
    for rel in SKILLS:
        data = (repo.path / rel).read_bytes()
        assert stamp[rel] == hashlib.sha256(data).hexdigest()
        text = data.decode()
        assert text.startswith("---\ndescription: ")
        assert "<!-- gitvault-skill " in text
    save = (repo.path / SKILLS[0]).read_text()
    assert "save --session-id ${CLAUDE_SESSION_ID}" in save
    for name in ("## Summary", "## Key Decisions", "## Next Steps"):
        assert name in save
    assert "recall`" in (repo.path / SKILLS[1]).read_text()
    assert "@GITVAULT@" not in save


def test_later_install_upgrades_unedited_skills_and_keeps_edited_ones(repo: Repo) -> None:
    save_path, recall_path = (repo.path / rel for rel in SKILLS[:2])
    current_save = save_path.read_bytes()
    # An older gitvault installed this /save: the file still equals what it installed.
    old_save = current_save.replace(b"gitvault-skill save v3", b"gitvault-skill save v0")
    assert old_save != current_save
    save_path.write_bytes(old_save)
    stamp = _stamp(repo)
    stamp[SKILLS[0]] = hashlib.sha256(old_save).hexdigest()
    (repo.state_dir / "claude-stamp.json").write_text(json.dumps(stamp))
    # The user edited /recall after install.
    edited = recall_path.read_bytes() + b"\nAlso list open TODOs.\n"
    recall_path.write_bytes(edited)

    result = repo.gv("install")

    assert result.code == 0, result
    assert save_path.read_bytes() == current_save, "the unedited skill is upgraded"
    assert "updated skill /save" in result.out
    assert recall_path.read_bytes() == edited, "an edited skill is never overwritten"
    assert f"note: {SKILLS[1]} was edited" in result.out
    assert _stamp(repo)[SKILLS[0]] == hashlib.sha256(current_save).hexdigest()

    # Uninstall removes the skill it owns and leaves the edited one in place.
    result = repo.gv("uninstall")
    assert not save_path.exists() and recall_path.read_bytes() == edited
    assert f"{SKILLS[1]} was edited; left in place" in result.out


def test_a_users_own_skill_of_the_same_name_is_never_overwritten(
    repo_factory: Callable[..., Repo],
) -> None:
    repo = repo_factory(install=False, claude=True)
    mine = repo.write(SKILLS[0], "---\ndescription: my own save\n---\nDo my thing.\n")
    result = repo.gv("install")
    assert result.code == 0
    assert mine.read_text() == "---\ndescription: my own save\n---\nDo my thing.\n"
    assert "was edited; left as it is" in result.out
    assert (repo.path / SKILLS[1]).is_file()


# --------------------------------------------------------------------------- CLAUDE.md, --no-claude


def test_install_writes_the_claude_md_section(repo_factory: Callable[..., Repo]) -> None:
    repo = repo_factory(install=False, claude=True)
    (repo.path / "CLAUDE.md").write_bytes(b"# Project\r\n\r\nKeep this byte-exact.\r\n")
    result = repo.gv("install")
    assert result.code == 0, result
    assert "wrote the gitvault section of CLAUDE.md" in result.out
    data = (repo.path / "CLAUDE.md").read_bytes()
    assert data.startswith(b"# Project\r\n\r\nKeep this byte-exact.\r\n")
    text = data.decode()
    section = text[text.index(BEGIN) : text.index(END)]
    assert "gitvault save" in section and "VAULT RECALL" in section
    # Never the literal fence: a save quoting CLAUDE.md would otherwise be cut at that line.
    assert "=== VAULT RECALL ===" not in section


def test_no_claude_skips_all_claude_wiring(repo_factory: Callable[..., Repo]) -> None:
    repo = repo_factory(install=False, claude=True)
    result = repo.gv("install", "--no-claude")
    assert result.code == 0, result
    assert repo.vault_tip() is not None
    assert (repo.common_dir / "hooks" / "post-commit").is_file()
    assert not (repo.path / ".claude").exists()
    assert not (repo.path / "CLAUDE.md").exists()
    assert not (repo.state_dir / "claude-stamp.json").exists()
    # An invalid settings.json is not gitvault's business under --no-claude.
    _write_settings(repo, "{broken")
    assert repo.gv("install", "--no-claude").code == 0


# ------------------------------------------------- shared files, foreign settings, opting out


def test_nothing_machine_specific_in_shared_files(repo: Repo) -> None:
    """settings.json and the skills name plain `gitvault` / the launcher, never this
    interpreter or venv: a team committing .claude/ gets no churn between machines."""
    shared = [".claude/settings.json", *SKILLS]
    for rel in shared:
        text = (repo.path / rel).read_text("utf-8")
        assert sys.executable not in text and str(Path(sys.executable).parent) not in text, rel
        assert str(repo.path) not in text, rel
    save = (repo.path / SKILLS[0]).read_text()
    assert "allowed-tools: Bash(gitvault save *)" in save
    assert "\ngitvault save --session-id ${CLAUDE_SESSION_ID} --agent claude-code" in save
    assert "!`gitvault recall`" in (repo.path / SKILLS[1]).read_text()


def test_uninstall_removes_the_permission_rule_and_keeps_the_users(
    repo_factory: Callable[..., Repo],
) -> None:
    repo = repo_factory(install=False, claude=True)
    _write_settings(repo, {"permissions": {"allow": ["Bash(make:*)"]}}, local=True)
    assert repo.gv("install").code == 0
    assert _settings(repo, local=True)["permissions"]["allow"] == [
        "Bash(make:*)",
        "Bash(gitvault save:*)",
        *(f"mcp__gitvault__{tool}" for tool in mcpserver.TOOLS),
    ]
    result = repo.gv("uninstall")
    assert "removed `Bash(gitvault save:*)` from .claude/settings.local.json" in result.out
    assert "removed gitvault's MCP tool permissions from .claude/settings.local.json" in result.out
    assert _settings(repo, local=True) == {"permissions": {"allow": ["Bash(make:*)"]}}
    shared = repo.path / ".claude" / "settings.json"
    assert not shared.exists() or "permissions" not in _settings(repo)


@pytest.mark.parametrize("where", [".claude", ".claude/settings.json", ".claude/skills"])
def test_install_never_writes_through_a_symlink(
    repo_factory: Callable[..., Repo], tmp_path: Path, where: str
) -> None:
    repo = repo_factory(install=False, claude=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "settings.json").write_text("{}\n")
    link = repo.path / where
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside / "settings.json" if where.endswith(".json") else outside)
    before_outside = _tree_bytes(outside)
    before = _tree_bytes(repo.path)

    result = repo.gv("install")

    assert result.code == 3, result
    assert "symbolic link" in result.err and "hint:" in result.err
    assert _tree_bytes(outside) == before_outside, "nothing written outside the worktree"
    assert _tree_bytes(repo.path) == before and repo.vault_tip() is None
    assert link.is_symlink(), "the link is not replaced by a regular file"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_settings_json_with_nan_is_refused_not_rewritten(
    repo_factory: Callable[..., Repo], constant: str
) -> None:
    repo = repo_factory(install=False, claude=True)
    _write_settings(repo, f'{{"a": {constant}}}')
    before = _tree_bytes(repo.path)
    result = repo.gv("install")
    assert result.code == 3, result
    assert "not strict JSON" in result.err
    assert _tree_bytes(repo.path) == before


def test_no_claude_is_remembered_by_fold_and_hooks(repo_factory: Callable[..., Repo]) -> None:
    from tests.support.claude_hooks import run_hook, sample

    repo = repo_factory(install=False, claude=True)
    assert repo.gv("install", "--no-claude").code == 0
    assert repo.git("config", "gitvault.agents") == "none"
    repo.commit("feat: something to fold")
    folded = repo.gv("fold", "--merger", "builtin")
    assert folded.code == 0, folded
    assert not (repo.path / "CLAUDE.md").exists(), "fold honours --no-claude"
    done = run_hook("session-start", sample("SessionStart:startup", repo=repo), repo=repo)
    assert (done.returncode, done.stdout) == (0, ""), "hooks stay silent"
    assert not (repo.state_dir / "claude-sessions").exists()
    status = repo.gv("status")
    assert "Claude Code hooks" not in status.out + status.err
    # Installing with Claude later turns it back on.
    assert repo.gv("install").code == 0
    assert repo.git("config", "gitvault.agents") == "claude"


def test_a_new_worktree_without_committed_wiring_is_named_by_status(repo: Repo) -> None:
    other = repo.path.parent / "feature"
    repo.git("worktree", "add", "-q", "-b", "feature", str(other))
    status = cli_in(other, "status")
    text = status.out + status.err
    assert "has no Claude Code hooks, the /save skill, the /recall skill" in text
    assert "run `gitvault install` here" in text
    assert cli_in(other, "install").code == 0
    status = cli_in(other, "status")
    assert "Claude Code hooks" not in status.out + status.err
    # A team that commits .claude/ gets every new worktree wired by git itself.
    repo.git("add", ".claude", "CLAUDE.md")
    repo.commit("chore: share the gitvault wiring", files={})
    third = repo.path.parent / "third"
    repo.git("worktree", "add", "-q", "-b", "third", str(third))
    status = cli_in(third, "status")
    assert "Claude Code hooks" not in status.out + status.err


def cli_in(path: Path, *args: str) -> Any:
    from tests.support.repos import cli

    return cli(*args, cwd=path)


# --------------------------------------------------------------------------- the status line


def _status_command(repo: Repo) -> str:
    entry = _settings(repo, local=True)["statusLine"]
    assert entry["type"] == "command"
    command: str = entry["command"]
    return command


def test_install_sets_the_status_line_when_the_user_has_none_and_uninstall_removes_it(
    repo_factory: Callable[..., Repo],
) -> None:
    repo = repo_factory(install=False, claude=True)
    done = repo.gv("install")
    assert "set Claude Code's status line in .claude/settings.local.json" in done.out, done
    assert (repo.path / ".claude/skills/checkpoint/SKILL.md").is_file()
    command = _status_command(repo)
    assert "gitvault-hook status --line" in command and sys.executable not in command
    assert "statusLine" not in _settings(repo)  # never in the shared file
    # The command, run as Claude Code runs it (sh, its statusLine JSON on stdin), says
    # CHECKPOINT at 85 % of the context window.
    status = {"cwd": str(repo.path), "context_window": {"used_percentage": 90}}
    shown = subprocess.run(
        ["sh", "-c", command],
        cwd=repo.path,
        input=json.dumps(status),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown
    assert shown.stdout.startswith("gitvault CHECKPOINT: context 90% used"), shown
    assert repo.gv("install").out.count("status line") == 0  # ours already: nothing said
    removed = repo.gv("uninstall")
    assert "removed gitvault's status line from .claude/settings.local.json" in removed.out
    local = repo.path / ".claude" / "settings.local.json"
    assert not local.exists() or "statusLine" not in json.loads(local.read_text())


@pytest.mark.parametrize("where", ["user", "project", "local"])
def test_install_never_replaces_a_status_line_the_user_has(
    repo_factory: Callable[..., Repo], where: str
) -> None:

    repo = repo_factory(install=False, claude=True)
    mine = {"type": "command", "command": "echo my-line"}
    if where == "user":
        user = Path(os.environ["HOME"]) / ".claude" / "settings.json"
        user.parent.mkdir(parents=True, exist_ok=True)
        user.write_text(json.dumps({"statusLine": mine}))
    else:
        _write_settings(repo, {"statusLine": mine}, local=where == "local")
    done = repo.gv("install")
    assert done.code == 0, done
    assert "left your status line" in done.out and "gitvault status --line" in done.out
    for local in (False, True):
        path = repo.path / ".claude" / ("settings.local.json" if local else "settings.json")
        data = json.loads(path.read_text()) if path.exists() else {}
        assert data.get("statusLine") in (None, mine)
    if where != "user":
        assert _settings(repo, local=where == "local")["statusLine"] == mine
