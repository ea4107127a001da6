"""Texts shown to agents, each in one copy: the save instruction (rendered into the Stop
reason, the agent files' managed section and the /save skill), the handover instruction (the
/checkpoint skill and the managed section), how to run gitvault, and the mechanical session
record."""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Sequence

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
# The narrow permission rule install adds so that the save a Stop hook asks for is not denied
# (headless runs have no one to approve it). Both settings files carry it.
SAVE_PERMISSION = "Bash(gitvault save:*)"
# The tools of gitvault's MCP server (`gitvault mcp`, registered in .mcp.json), one narrow
# rule each, so that an agent's call is not denied (a headless session cannot ask): the same
# reads the hooks hand over, and the save SAVE_PERMISSION already allows. Named one by one,
# never `mcp__gitvault` (the whole server, whatever it serves later). tests/test_mcpserver.py
# keeps the list equal to the server's.
MCP_TOOLS = ("search", "show", "file_memory", "recall", "save_session", "verify_line")
MCP_PERMISSIONS = tuple(f"mcp__gitvault__{tool}" for tool in MCP_TOOLS)


def gitvault_cli() -> str:
    """How a shell on this machine runs gitvault: PATH first, else this interpreter."""
    if shutil.which("gitvault"):
        return "gitvault"
    return f"{shlex.quote(sys.executable)} -m gitvault"


def save_command(
    *,
    cmd: str,
    agent: str,
    title: str,
    session_id: str | None = None,
    session_expr: str | None = None,
    heredoc: bool = True,
) -> str:
    """The one save command an agent is asked to run, with its heredoc body. The session id
    is quoted for the shell (it comes from hook input); `session_expr`, a placeholder the agent
    substitutes itself (in a skill), goes in as it is. heredoc=False: the same body as printf
    lines piped in, with [placeholders] — no `<` or `>` at all, for an agent that HTML-escapes
    them on the way to the model (Codex turns `<<` into `&lt;&lt;`)."""
    session = ""
    if session_expr:
        session = f" --session-id {session_expr}"
    elif session_id:
        session = f" --session-id {shlex.quote(session_id)}"
    if not heredoc:
        lines = " ".join(
            shlex.quote(line.replace("<", "[").replace(">", "]")) for line in SAVE_BODY.splitlines()
        )
        plain_title = title.replace("<", "[").replace(">", "]")
        pipe = f"printf '%s\\n' {lines} | "
        return f'{pipe}{cmd} save{session} --agent {agent} --title "{plain_title}"'
    return (
        f'{cmd} save{session} --agent {agent} --title "{title}" '
        f"<<'{SAVE_HEREDOC}'\n{SAVE_BODY}\n{SAVE_HEREDOC}"
    )


CHECKPOINT_BODY = """\
## Asked
<what the user asked this session, in their words, and what is done of it>
## Open Threads
- <what is unfinished, undecided or broken, with file names>
## Next Step
<the first thing the next session should do>"""


def checkpoint_command(*, cmd: str, agent: str, title: str, session_expr: str | None = None) -> str:
    """The one handover command an agent is asked to run (gitvault adds the commits)."""
    session = f" --session-id {session_expr}" if session_expr else ""
    return (
        f'{cmd} checkpoint{session} --agent {agent} --title "{title}" '
        f"<<'{SAVE_HEREDOC}'\n{CHECKPOINT_BODY}\n{SAVE_HEREDOC}"
    )


def checkpoint_instruction(command: str) -> str:
    """What the /checkpoint skill says (and, shorter, the managed section)."""
    return (
        "Your context window is nearly full, or the user asked for a handover. Write a handover "
        "for the session that continues this work after the context is cleared: it gets this "
        "text first in its recall, once. gitvault adds the commits this session made itself "
        "(from git), so do not list them. " + NO_RECALL_COPY + " Run exactly one command:\n\n"
        "```\n" + command + "\n```\n\n"
        "Then tell the user the handover is saved and that `/clear` (or a new session) starts "
        "from it."
    )


def stop_reason(what: str, command: str) -> str:
    return (
        f"gitvault: {what}. Save a short session summary now, then finish. Run exactly:\n"
        f"{command}\n{NO_RECALL_COPY}"
    )


def agent_file_mechanics() -> str:
    """The managed section's standing instructions. They name the recall block without its
    literal fence: a file holding the fence would make every saved session that quotes it lose
    text to the fence stripper."""
    from gitvault.agents import adapters

    return (
        "## Project memory (gitvault)\n"
        "This repository keeps its memory on the `vault` branch (gitvault). A recall block\n"
        "(fenced by VAULT RECALL lines) is injected at session start; `gitvault recall` prints "
        "it again.\n"
        "Before you stop after real work, save the session (inside "
        f"{_joined(adapters.session_labels())} the session id and agent are filled in for "
        "you):\n"
        "```\n" + save_command(cmd="gitvault", agent="<agent>", title="<what you did>") + "\n```\n"
        "Never paste recalled text into a save.\n"
        "When your context window is nearly full (a status line saying CHECKPOINT) or the user "
        "asks for a handover, run `gitvault checkpoint` the same way, with ## Asked, "
        "## Open Threads and ## Next Step on stdin: the next session starts from it.\n"
        "Check a remembered fact with `git show <sha>` (c:…) or `gitvault show <slug>` (s:…)."
    )


def _joined(names: Sequence[str]) -> str:
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else "".join(names)


AUTO_TITLE_PREFIX = "Automatic record: "


def auto_record_title(subjects: Sequence[str], prompt: str | None, session_id: str) -> str:
    """Titled from the work it records: the commit subjects, else the newest prompt."""
    if subjects:
        title = subjects[-1]
        if len(subjects) > 1:
            title += f" (+{len(subjects) - 1} more commit{'s' if len(subjects) > 2 else ''})"
        return AUTO_TITLE_PREFIX + title
    what = (prompt or "").strip().replace("\n", " ")
    return AUTO_TITLE_PREFIX + (f'prompted "{what[:60]}"' if what else f"session {session_id[:8]}")


def auto_record_text(
    *,
    title: str,
    trigger: str,
    commits: Sequence[tuple[str, str]],
    prompts: int,
    first_prompt: str | None,
    last_prompt: str | None,
) -> str:
    """A mechanical record: what happened, as facts. It decides nothing and plans nothing: its
    Key Decisions and Next Steps hold no bullet, so no merger takes one from it."""
    commit_lines = "\n".join(f"- {sha[:7]} {subject}" for sha, subject in commits)
    lines = [
        f"# {title}",
        "",
        "## Summary",
        f"Mechanical record written by gitvault at {trigger}: the agent did not save this "
        f"session, so this lists what it did without interpreting it. {prompts} prompt(s).",
    ]
    if commits:
        lines += ["", "Commits made by this session:", commit_lines]
    for label, prompt in (("First prompt", first_prompt), ("Last prompt", last_prompt)):
        if prompt and (label == "First prompt" or prompt != first_prompt):
            lines.append(f'{label}: "{prompt.strip().replace(chr(10), " ")[:300]}"')
    lines += [
        "",
        "## Key Decisions",
        "None recorded: a mechanical record knows what was done, not why.",
        "",
        "## Next Steps",
        "None recorded: the session did not say (its work may well be finished).",
        "",
    ]
    return "\n".join(lines)
