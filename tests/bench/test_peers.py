"""The peers harness (bench/peers, bench/measures/peer_hooks.py) without the peers' packages:
the memory each peer is given from a real git history, how a hook's or a CLI's output is judged
for the agent, the ratio rows, that an installed cache is used without any installer (offline),
and that stop() leaves no process of the install running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from measures import peer_hooks
from measures.commands import Run
from peers import claudemem, install, memory

from tests.support.repos import Repo, git


def _run(out: str | bytes, code: int = 0) -> Run:
    data = out.encode() if isinstance(out, str) else out
    return Run(0.01, 0.01, 10.0, code, data, b"")


def _commit_on(repo: Repo, day: str, message: str, files: dict[str, str]) -> str:
    stamp = f"{day}T12:00:00+00:00"
    env = {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    return repo.commit(message, files, hooks=False, env=env)


def test_claude_mem_gets_one_observation_per_commit_and_one_session_per_day(repo: Repo) -> None:
    fix = _commit_on(repo, "2026-03-01", "Fix the parser\n\n- empty input crashed", {"a.py": "1"})
    _commit_on(repo, "2026-03-01", "Add a flag", {"b.py": "1", "docs/b.md": "1"})
    _commit_on(repo, "2026-03-02", "Update the docs", {"docs/b.md": "2"})

    history = memory.commits(repo.path, os.environ)
    body = memory.claude_mem_import(history, "proj")

    assert [c.subject for c in history[:3]] == ["Update the docs", "Add a flag", "Fix the parser"]
    assert len(body["observations"]) == len(history)  # the initial commit too
    by_title = {o["title"]: o for o in body["observations"]}
    assert by_title["Fix the parser"]["type"] == "bugfix"
    assert by_title["Add a flag"]["type"] == "feature"
    assert by_title["Update the docs"]["type"] == "change"
    assert json.loads(by_title["Add a flag"]["files_modified"]) == ["b.py", "docs/b.md"]
    assert json.loads(by_title["Fix the parser"]["facts"]) == ["empty input crashed"]
    shown = git(repo.path, "show", "-s", "--format=%ct", fix)
    assert by_title["Fix the parser"]["created_at_epoch"] == int(shown) * 1000
    days = {s["content_session_id"] for s in body["sessions"]}
    assert {"proj-2026-03-01", "proj-2026-03-02"} <= days
    assert len(body["sessions"]) == len(body["summaries"]) == len(body["prompts"]) == len(days)
    first_day = next(s for s in body["summaries"] if s["memory_session_id"].endswith("03-01"))
    assert first_day["completed"] == "Fix the parser; Add a flag"
    assert {o["project"] for o in body["observations"]} == {"proj"}


def test_agentlore_gets_the_digest_lines_it_has_a_type_for(tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "core.py").write_text("x\n")
    (tmp_path / "tests").mkdir()
    digest = "\n".join(
        [
            "# Project memory",
            "## Architecture",
            "- Changes are mostly in src/pkg/ (.py); mined from history (c:1111111)",
            "## Decisions",
            "- (none yet)",
            "## Conventions",
            "- Tests live in tests/ (test_*.py); see /etc/passwd and ../outside.py",
            "## Gotchas",
            '- Reverted on 2026-03-02: "Use a sentinel"; mined from history (c:abcdef1, c:2222222)',
            "- src/pkg/core.py needed 27 fixes; latest 2026-07-24 (c:3333333)",
            "## State",
            "- 15 commits this month (c:4444444)",
        ]
    )

    typed, untyped = memory.typed_memories(digest, tmp_path)

    assert untyped == 1
    kinds = [(m.kind, m.anchors, m.evidence) for m in typed]
    assert kinds == [
        ("decision", ("src/pkg/**",), ""),
        ("convention", ("tests/**",), ""),
        ("dead-end", (), "abcdef1"),
        ("hazard", ("src/pkg/core.py",), ""),
    ]
    assert typed[2].title == 'Reverted on 2026-03-02: "Use a sentinel"'
    assert typed[3].args()[:4] == ["add", "--type", "hazard", "--title"]


@pytest.mark.parametrize(
    ("event", "out", "valid", "injected"),
    [
        ("SessionStart", "", True, 0),
        ("SessionStart", "plain words", True, 11),  # plain stdout is context at SessionStart
        ("PostToolUse", "plain words", True, 0),  # ... and not after a tool call
        (
            "SessionStart",
            {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "abc"}},
            True,
            3,
        ),
        (
            "PostToolUse",
            {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "abc"}},
            False,
            0,
        ),
        ("Stop", {"decision": "block", "reason": "save first"}, True, 10),
        ("SessionStart", "[1, 2]", False, 0),
        (
            "SessionStart",
            {
                "hookSpecificOutput": {
                    "hookEventName": "SessionStart",
                    "additionalContext": "x" * 10_001,
                }
            },
            False,
            10_001,
        ),
    ],
)
def test_a_hook_output_is_judged_as_claude_code_takes_it(
    event: str, out: str | dict[str, object], valid: bool, injected: int
) -> None:
    text = out if isinstance(out, str) else json.dumps(out)

    verdict = peer_hooks.hook_verdict(event, _run(text))

    assert (verdict.valid, verdict.injected) == (valid, injected)


def test_a_hook_that_fails_or_colours_its_message_says_so() -> None:
    coloured = {"systemMessage": "\x1b[1mhello\x1b[0m", "hookSpecificOutput": {}}

    verdict = peer_hooks.hook_verdict("SessionStart", _run(json.dumps(coloured)))
    failed = peer_hooks.hook_verdict("SessionStart", _run("{}", code=2))

    assert verdict.valid and verdict.control and verdict.shown == len("\x1b[1mhello\x1b[0m")
    assert not failed.valid and failed.why == "exit 2"


def test_a_recall_cli_must_print_something_and_what_it_prints_past_its_budget_is_counted() -> None:
    assert peer_hooks.cli_verdict(10, _run("12345")).valid
    past = peer_hooks.cli_verdict(10, _run("12345678901"))
    assert past.valid and past.over == 1 and past.injected == 11
    assert peer_hooks.cli_verdict(10, _run("")).why == "printed nothing"
    assert peer_hooks.cli_verdict(10, _run("x", code=1)).why == "exit 1"
    assert peer_hooks.cli_verdict(10, _run("abc"), b"BLOCK").why == "not the recall block"


def _op(key: str, walls: list[float], valid: bool = True) -> peer_hooks.Op:
    def judge(run: Run) -> peer_hooks.Verdict:
        raise AssertionError("not run")

    op = peer_hooks.Op(key, "tool", key, ["true"], {}, Path("."), lambda i: b"", judge)
    for wall in walls:
        verdict = peer_hooks.Verdict(valid, 5)
        op.samples.append(peer_hooks.Sample(wall, wall / 2, 20.0, verdict))
    return op


def test_a_ratio_row_is_the_peers_p50_over_gitvaults_and_fails_with_an_invalid_run() -> None:
    walls = {key: [1.0, 1.2, 1.4] for key in {k for r in peer_hooks.RATIOS for k in r[2:4]}}
    walls["gv_start"] = [0.05, 0.1, 0.2]
    ops = {key: _op(key, w) for key, w in walls.items()}
    facts = {
        "worker_start_s": 2.0,
        "history_commits": 3,
        "claude_mem_import": {},
        "agentlore_memories": 1,
        "processes_ended_by_the_bench": [],
    }

    rows = {row.key: row for row in peer_hooks.rows(ops, facts, 3)}
    ops["gv_stop"].samples[1] = peer_hooks.Sample(0.1, 0.1, 1.0, peer_hooks.Verdict(False, 0))
    again = {row.key: row for row in peer_hooks.rows(ops, facts, 3)}

    assert rows["session_start_x"].value == pytest.approx(1.2 / 0.1)
    assert rows["session_start_x"].valid and rows["session_start_x"].target == "session_start"
    assert not again["per_prompt_x"].valid and again["per_prompt_x"].note == "gv_stop 2/3 valid"


def _fake_install(root: Path, versions: dict[str, str]) -> install.Peers:
    peers = install.Peers(root)
    for name in install.NPM:
        (peers.node_modules / name).mkdir(parents=True)
        manifest = {"name": name, "version": versions[name]}
        (peers.node_modules / name / "package.json").write_text(json.dumps(manifest))
    (peers.root / "pypi" / f"agentlore-{versions['agentlore']}.dist-info").mkdir(parents=True)
    peers.agentlore.parent.mkdir(parents=True)
    peers.agentlore.write_text("#!/bin/sh\n")
    peers.bin_dir.mkdir(parents=True)
    (peers.bin_dir / "bun").write_text("#!/bin/sh\n")
    (peers.bin_dir / "bun").chmod(0o755)
    (peers.plugin / "hooks").mkdir(parents=True)
    (root / install.STAMP).write_text(json.dumps(install.pins()))
    return peers


def test_an_installed_cache_is_used_as_it_is_and_another_version_is_reinstalled(
    tmp_path: Path,
) -> None:
    root = tmp_path / "peers"
    _fake_install(root, install.pins())
    no_tools = {"PATH": str(tmp_path / "empty"), "HOME": str(tmp_path)}

    assert install.ensure(root, no_tools).versions() == install.pins()  # no installer ran

    other = tmp_path / "other"
    _fake_install(other, {**install.pins(), "claude-mem": "13.0.0"})
    with pytest.raises(install.Unavailable, match="`node` is not on PATH"):
        install.ensure(other, no_tools)


def test_stop_leaves_no_process_of_the_install_running(tmp_path: Path) -> None:
    peers = _fake_install(tmp_path / "peers", install.pins())
    (peers.plugin / "hooks" / "hooks.json").write_text('{"hooks": {}}')
    home = tmp_path / "home"
    cm = claudemem.ClaudeMem(peers, home, dict(os.environ))
    script = "import time; time.sleep(60)"
    stuck = subprocess.Popen([sys.executable, "-c", script, str(peers.plugin / "scripts")])
    linked = subprocess.Popen([sys.executable, "-c", script, str(cm.plugin_root)])
    try:
        deadline = time.monotonic() + 10
        while len(cm.processes()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sorted(cm.processes()) == sorted([stuck.pid, linked.pid])

        ended = cm.stop(grace=0.5)  # no worker answers on its port: nothing to ask

        assert sorted(ended) == sorted([stuck.pid, linked.pid])
        assert stuck.wait(5) != 0 and linked.wait(5) != 0
        assert cm.processes() == []
    finally:
        for proc in (stuck, linked):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert cm.env["HOME"] == str(home) and (home / ".claude" / "plugins").is_dir()
