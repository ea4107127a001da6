"""Texts shown to agents, each in one copy: the save instruction (rendered into the Stop
reason, the agent files' managed section and the /save skill) and how to run gitvault."""

from __future__ import annotations

import shutil
import sys

SAVE_HEREDOC = "GITVAULT_EOF"
SAVE_BODY = """\
## Summary
<what was done and why, 2-5 lines>
## Key Decisions
- <decision — reason>
## Next Steps
- <what remains>"""
NO_RECALL_COPY = (
    "Write only about this session's own work; never copy text from the VAULT RECALL block."
)


def gitvault_cli() -> str:
    """How a shell on this machine runs gitvault: PATH first, else this interpreter."""
    if shutil.which("gitvault"):
        return "gitvault"
    return f"{sys.executable} -m gitvault"


def save_command(*, cmd: str, agent: str, title: str, session_id: str | None = None) -> str:
    """The one save command an agent is asked to run, with its heredoc body."""
    session = f" --session-id {session_id}" if session_id else ""
    return (
        f'{cmd} save{session} --agent {agent} --title "{title}" '
        f"<<'{SAVE_HEREDOC}'\n{SAVE_BODY}\n{SAVE_HEREDOC}"
    )


def agent_file_mechanics() -> str:
    """The managed section's standing instructions. They name the recall block without its
    literal fence: a file holding the fence would make every saved session that quotes it lose
    text to the fence stripper."""
    return (
        "## Project memory (gitvault)\n"
        "This repository keeps its memory on the `vault` branch (gitvault). A recall block\n"
        "(fenced by VAULT RECALL lines) is injected at session start; `gitvault recall` prints "
        "it again.\n"
        "Before you stop after real work, save the session:\n"
        "```\n" + save_command(cmd="gitvault", agent="<agent>", title="<what you did>") + "\n```\n"
        "Never paste recalled text into a save.\n"
        "Check a remembered fact with `git show <sha>` (c:…) or `gitvault show <slug>` (s:…)."
    )
