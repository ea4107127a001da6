"""The memory each peer is given, from the same repository gitvault notes, so that every tool
works on what it would hold after the same history:

- claude-mem: one observation per commit (its title the subject, its narrative the message,
  the files it touched), one session per day of commits with its summary and first prompt,
  posted to the worker's own /api/import (the rows its hooks and model would have written;
  offline, its model never runs, so observations fed through the hooks stay queued);
- agentlore: the lines of gitvault's folded digest as typed memories (`agentlore add`),
  anchored to the paths they name that exist in the repository.

The type of an observation follows a fixed rule on the subject's first word, over the types
claude-mem's code mode declares (bugfix, feature, refactor, change); nothing is chosen by
looking at a query or a result.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

_FIRST_WORD_TYPES = {
    "bugfix": ("fix", "fixed", "fixes", "fixing", "correct", "repair", "handle"),
    "feature": ("add", "added", "adds", "adding", "implement", "support", "allow", "introduce"),
    "refactor": ("refactor", "move", "rename", "clean", "cleanup", "simplify", "remove", "drop"),
}
_CITES = re.compile(r"\bc:([0-9a-f]{7,40})\b")
_TOKEN = re.compile(r"[^\s,;()\"'`→]+")


@dataclass(frozen=True)
class Commit:
    sha: str
    when: int  # committer time, epoch seconds
    subject: str
    body: str
    files: tuple[str, ...]


def commits(repo: Path, env: Mapping[str, str]) -> list[Commit]:
    """Every commit reachable from HEAD, newest first, with the files it changed."""
    out = subprocess.run(
        ["git", "log", "--format=%x1e%H%x1f%ct%x1f%s%x1f%b%x1f", "--name-only"],
        cwd=repo,
        env=dict(env),
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8", "replace")
    found = []
    for record in out.split("\x1e")[1:]:
        sha, when, subject, body, names = record.split("\x1f", 4)
        files = tuple(line for line in names.splitlines() if line.strip())
        found.append(Commit(sha, int(when), subject.strip(), body.strip(), files))
    return found


def observation_type(subject: str) -> str:
    first = subject.split(maxsplit=1)[0].lower().rstrip(":,.") if subject.strip() else ""
    for kind, words in _FIRST_WORD_TYPES.items():
        if first in words:
            return kind
    return "change"


def _iso(epoch_ms: int) -> str:
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def claude_mem_import(history: list[Commit], project: str) -> dict[str, list[dict[str, Any]]]:
    """The body of claude-mem's POST /api/import: sessions, their prompts and summaries, and
    one observation per commit, in the rows' own field names. history is newest first, as
    commits() lists it."""
    days: dict[str, list[Commit]] = {}
    for commit in sorted(reversed(history), key=lambda c: c.when):  # ties: parents first
        day = datetime.fromtimestamp(commit.when, UTC).strftime("%Y-%m-%d")
        days.setdefault(day, []).append(commit)
    sessions, prompts, summaries, observations = [], [], [], []
    for day, day_commits in days.items():
        content_id = f"{project}-{day}"
        memory_id = f"memory-{project}-{day}"
        first, last = day_commits[0].when * 1000, day_commits[-1].when * 1000 + 60_000
        subjects = [c.subject for c in day_commits]
        edited = sorted({f for c in day_commits for f in c.files})
        sessions.append(
            {
                "content_session_id": content_id,
                "memory_session_id": memory_id,
                "project": project,
                "platform_source": "claude",
                "user_prompt": subjects[0],
                "started_at": _iso(first),
                "started_at_epoch": first,
                "completed_at": _iso(last),
                "completed_at_epoch": last,
                "status": "completed",
            }
        )
        prompts.append(
            {
                "content_session_id": content_id,
                "platform_source": "claude",
                "prompt_number": 1,
                "prompt_text": subjects[0],
                "created_at": _iso(first),
                "created_at_epoch": first,
            }
        )
        summaries.append(
            {
                "memory_session_id": memory_id,
                "project": project,
                "request": subjects[0],
                "investigated": "",
                "learned": "",
                "completed": "; ".join(subjects)[:1000],
                "next_steps": "",
                "files_read": json.dumps([]),
                "files_edited": json.dumps(edited[:50]),
                "notes": None,
                "prompt_number": 1,
                "discovery_tokens": 0,
                "created_at": _iso(last),
                "created_at_epoch": last,
            }
        )
        for commit in day_commits:
            at = commit.when * 1000
            body_lines = [line.strip(" -*") for line in commit.body.splitlines() if line.strip()]
            observations.append(
                {
                    "memory_session_id": memory_id,
                    "project": project,
                    "text": None,
                    "type": observation_type(commit.subject),
                    "title": commit.subject[:200],
                    "subtitle": body_lines[0][:200] if body_lines else "",
                    "facts": json.dumps(body_lines[:5]),
                    "narrative": commit.body or commit.subject,
                    "concepts": json.dumps(["what-changed"]),
                    "files_read": json.dumps([]),
                    "files_modified": json.dumps(list(commit.files)),
                    "prompt_number": 1,
                    "discovery_tokens": 0,
                    "created_at": _iso(at),
                    "created_at_epoch": at,
                }
            )
    return {
        "sessions": sessions,
        "prompts": prompts,
        "summaries": summaries,
        "observations": observations,
    }


@dataclass(frozen=True)
class Typed:
    """One agentlore memory: `agentlore add --type KIND --title ... --body ...`."""

    kind: str
    title: str
    body: str
    anchors: tuple[str, ...]
    evidence: str

    def args(self) -> list[str]:
        argv = ["add", "--type", self.kind, "--title", self.title, "--body", self.body]
        for anchor in self.anchors:
            argv += ["--anchor", anchor]
        if self.evidence:
            argv += ["--evidence", self.evidence]
        return argv


# gitvault's digest categories → agentlore's types (State and Next steps have none: they say
# where work stands, not a decision, dead end, convention or hazard).
_CATEGORY_TYPES = {
    "Architecture": "decision",
    "Decisions": "decision",
    "Conventions": "convention",
    "Gotchas": "hazard",
}


def typed_memories(digest_body: str, repo: Path) -> tuple[list[Typed], int]:
    """The digest's lines as agentlore memories, and how many lines had no agentlore type.
    A gotcha that records a revert is a dead end (its evidence: the commit it cites)."""
    memories: list[Typed] = []
    untyped = 0
    category = ""
    for raw in digest_body.splitlines():
        line = raw.strip()
        if line.startswith("## "):
            category = line[3:].strip()
            continue
        if not line.startswith("- ") or line == "- (none yet)":
            continue
        text = line[2:].strip()
        kind = _CATEGORY_TYPES.get(category)
        if kind is None:
            untyped += 1
            continue
        cites = _CITES.findall(text)
        if kind == "hazard" and text.startswith("Reverted"):
            kind = "dead-end"
        title = text.split("; ", 1)[0][:120]
        anchors = []
        for token in _TOKEN.findall(text):
            name = token.rstrip(".")
            if ("/" not in name and "." not in name) or name.startswith("/") or ".." in name:
                continue
            target = repo / name
            if target.is_file() and name not in anchors:
                anchors.append(name)
            elif target.is_dir() and name.strip("/"):
                glob = name.rstrip("/") + "/**"
                if glob not in anchors:
                    anchors.append(glob)
        memories.append(
            Typed(kind, title, text, tuple(anchors), cites[0] if kind == "dead-end" else "")
        )
    return memories, untyped
