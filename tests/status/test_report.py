"""`gitvault status` tells when the installed shims are older than this gitvault."""

from __future__ import annotations

import json
import re
import shlex
import time
from pathlib import Path
from typing import Any

from tests.support.repos import Repo, fast_history, git


def _warnings(repo: Repo) -> list[str]:
    result = repo.gv("status", "--json")
    assert result.code == 0, result
    return list(json.loads(result.out)["data"]["warnings"])


def test_status_reports_shims_older_than_this_gitvault(repo: Repo) -> None:
    assert not [w for w in _warnings(repo) if "older than this gitvault" in w]
    shim = repo.path / ".git" / "hooks" / "post-commit"
    shim.write_text(
        re.sub(
            r"(?m)^# gitvault-shim post-commit v\d+$",
            "# gitvault-shim post-commit v0",
            shim.read_text(),
        )
    )
    assert "# gitvault-shim post-commit v0\n" in shim.read_text()
    stale = [w for w in _warnings(repo) if "older than this gitvault" in w]
    assert stale and "post-commit" in stale[0] and "post-merge" not in stale[0]
    assert repo.gv("install").code == 0
    assert not [w for w in _warnings(repo) if "older than this gitvault" in w]


def test_status_reports_commits_without_notes_with_the_command_that_writes_them(
    repo: Repo, tmp_path: Path
) -> None:
    # Commits no hook saw and no HEAD log shows (written by `git fast-import`, as a migration
    # tool would): only the completeness check can find them.
    made = fast_history(repo, "imported", 3, base_time=int(time.time()) + 60)
    # Commits that came from a remote were noted where they were made: not reported.
    teammate = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(repo.path), str(teammate))
    (teammate / "t.txt").write_text("from a teammate\n")
    git(teammate, "add", "t.txt")
    git(teammate, "commit", "-q", "-m", "a teammate's commit")
    repo.git("fetch", "-q", str(teammate), "main:refs/remotes/origin/main")
    repo.git("branch", "from-teammate", "origin/main")
    status = repo.gv("status", "--json").json("status")
    assert status["unnoted"]["count"] == 3, status["unnoted"]
    assert set(status["unnoted"]["shas"]) == set(made)
    warning = next(w for w in status["warnings"] if "have no note" in w)
    fix = re.search(r"`gitvault (backfill [^`]*)`", warning)
    assert fix, warning
    assert repo.gv(*shlex.split(fix.group(1))).code == 0
    assert set(made) <= set(repo.note_paths())
    after = repo.gv("status", "--json").json("status")
    assert after["unnoted"]["count"] == 0
    assert not [w for w in after["warnings"] if "have no note" in w]


def test_status_says_when_there_is_no_digest_yet_and_how_to_fold(repo: Repo) -> None:
    repo.commit("Add the parser", {"parser.py": "1\n"})
    (first,) = [w for w in _warnings(repo) if "no digest yet" in w]
    assert "gitvault fold" in first and "fold.merger builtin" in first
    assert repo.gv("fold", "--merger", "builtin").code == 0
    assert not [w for w in _warnings(repo) if "no digest yet" in w]


def test_status_says_why_claude_codes_trust_is_unknown(repo_factory: Any) -> None:
    """No ~/.claude.json (Claude Code never ran here): "trust unknown" says so and what will
    happen, rather than nothing (a newcomer's run)."""
    repo: Repo = repo_factory(install=False)
    assert repo.gv("install", "--agent", "claude").code == 0
    assert not (Path.home() / ".claude.json").exists()
    out = " ".join(repo.gv("status").out.split())
    assert "trust unknown (no ~/.claude.json yet: Claude Code asks at its first start" in out, out
