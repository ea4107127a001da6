"""gitvault.agents.adapters.claude.transcript: the tolerant Claude Code transcript reader.

Fixtures in tests/data/transcripts/ are REAL transcripts written by Claude Code 2.1.197
(npm @anthropic-ai/claude-code, run headless with `-p` against tests/support/mock_anthropic.py on
2026-11-30), anonymised (paths → /home/user/proj, long skill/agent listings trimmed):

- plain.jsonl: `-p hello`; a SessionStart hook printed a VAULT RECALL block (plain stdout).
- commit_compact.jsonl: `-p "please commit the fix"` → scripted Bash `git commit -am …`
  (output shows the abbreviated hash), then `--resume … -p "/compact keep notes"`, then
  `--resume … -p "what next?"` (Claude Code added a meta prompt and a <synthetic> reply).
- subagent.jsonl / subagent_sidechain.jsonl: an Agent tool call; the subagent (which ran
  `echo SIDECHAIN-OUT`) is written to <sid>/subagents/agent-*.jsonl with isSidechain=true.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitvault.agents.adapters.claude.transcript import (
    ASSISTANT_TEXTS_KEPT,
    COMPACT_SUMMARY,
    DUPLICATE,
    INVALID_JSON,
    MAX_TEXT_CHARS,
    META,
    SIDECHAIN,
    SYNTHETIC,
    TRUNCATED,
    TranscriptSummary,
    commits_in,
    read_transcript,
)
from gitvault.memory.fences import RECALL_BEGIN, RECALL_END, strip_recall
from tests.support.paths import DATA

FIXTURES = DATA / "transcripts"
FIXTURE_VERSION = "2.1.197"
# commit_compact.jsonl: the commit the session made, and the repository's earlier commit.
SESSION_COMMIT = "bed92456f4441f7e80bd8b8b1216eadb1666d2cf"
INITIAL_COMMIT = "3438cca96e6c805d232472ba7395869669afc22d"
SHA_A = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
SHA_B = "0f1e2d3c4b5a69788796a5b4c3d2e1f0abcdef12"


# --- builders for synthetic transcripts --------------------------------------------------------

_counter = iter(range(1_000_000))


def _uuid() -> str:
    return f"00000000-0000-4000-8000-{next(_counter):012d}"


def user(content: Any, **extra: Any) -> dict[str, Any]:
    entry = {"type": "user", "isSidechain": False, "uuid": _uuid()}
    entry["message"] = {"role": "user", "content": content}
    entry.update(extra)
    return entry


def assistant(content: Any, **extra: Any) -> dict[str, Any]:
    message = {"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5", "content": content}
    entry: dict[str, Any] = {"type": "assistant", "isSidechain": False, "uuid": _uuid()}
    entry["message"] = message
    entry.update(extra)
    return entry


def bash_use(command: str, tool_id: str = "toolu_1") -> dict[str, Any]:
    return assistant(
        [{"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}}]
    )


def tool_result(content: Any, stdout: str | None = None, **extra: Any) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": "toolu_1", "content": content}
    entry = user([block], **extra)
    if stdout is not None:
        entry["toolUseResult"] = {"stdout": stdout, "stderr": "", "interrupted": False}
    return entry


def write(tmp_path: Path, *lines: dict[str, Any] | str | bytes) -> Path:
    path = tmp_path / "session.jsonl"
    with path.open("wb") as handle:
        for line in lines:
            if isinstance(line, dict):
                line = json.dumps(line)
            handle.write(line if isinstance(line, bytes) else line.encode())
            handle.write(b"\n")
    return path


# --- the real fixtures -----------------------------------------------------------------------


def test_fixtures_come_from_the_recorded_cli_version() -> None:
    paths = sorted(FIXTURES.glob("*.jsonl"))
    assert {p.stem for p in paths} >= {"plain", "commit_compact", "subagent", "subagent_sidechain"}
    for path in paths:
        versions = {json.loads(line).get("version") for line in path.read_text().splitlines()}
        assert versions - {None} == {FIXTURE_VERSION}, path.name


def test_a_plain_session_gives_its_prompt_and_reply_and_never_the_recall() -> None:
    summary = read_transcript(FIXTURES / "plain.jsonl")
    assert summary.prompt_count == 1
    assert summary.first_prompt == summary.last_prompt == "hello"
    assert summary.tool_outputs == [] and summary.bash_commands == []
    assert summary.assistant_texts == ["Hello! How can I help with this repository?"]
    # The hook's recall lives in an attachment line: never read back.
    assert "RECALL-SECRET-FACT" in (FIXTURES / "plain.jsonl").read_text()
    assert "RECALL-SECRET-FACT" not in repr(summary)
    assert summary.skipped["attachment"] == 3
    assert summary.skipped["queue-operation"] == 2


def test_commit_and_compact_session() -> None:
    summary = read_transcript(FIXTURES / "commit_compact.jsonl")
    # Typed prompts only: not the /compact echo, its stdout, the caveat, the compaction summary
    # or the "Continue from where you left off." meta prompt.
    assert summary.prompt_count == 2
    assert summary.first_prompt == "please commit the fix"
    assert summary.last_prompt == "what next?"
    assert summary.bash_commands == [
        "printf 'print(\"fixed\")\\n' > app.py && git commit -am 'fix greeting'"
    ]
    assert summary.tool_outputs == [
        "[main bed9245] fix greeting\n 1 file changed, 1 insertion(+), 1 deletion(-)"
    ]
    # "No response requested." is Claude Code's own <synthetic> message.
    assert summary.assistant_texts == [
        "Done: the tool finished.",
        "Hello! How can I help with this repository?",
    ]
    assert summary.skipped[COMPACT_SUMMARY] == 1
    assert summary.skipped[META] == 2
    assert summary.skipped[SYNTHETIC] == 1
    assert summary.skipped["system"] == 1  # compact_boundary
    assert "RECALL-SECRET-FACT" not in repr(summary)


def test_commits_in_real_commit_output() -> None:
    summary = read_transcript(FIXTURES / "commit_compact.jsonl")
    assert commits_in(summary, [INITIAL_COMMIT, SESSION_COMMIT]) == [SESSION_COMMIT]
    assert commits_in(read_transcript(FIXTURES / "plain.jsonl"), [SESSION_COMMIT]) == []


def test_subagent_session_keeps_only_the_main_chain() -> None:
    main = read_transcript(FIXTURES / "subagent.jsonl")
    assert main.prompt_count == 1 and main.first_prompt == "explore the repo"
    assert main.bash_commands == []  # the Agent call is not a Bash call
    (agent_output,) = main.tool_outputs  # the Agent tool's result, as the main chain saw it
    assert agent_output.startswith("Done: the tool finished.")
    assert not any("SIDECHAIN-OUT" in t for t in main.tool_outputs)

    side = read_transcript(FIXTURES / "subagent_sidechain.jsonl")
    assert side.prompt_count == 0
    assert side.tool_outputs == side.bash_commands == side.assistant_texts == []
    assert side.skipped[SIDECHAIN] == 4


def test_sidechain_lines_inline_are_ignored(tmp_path: Path) -> None:
    """Older versions wrote subagent lines into the main file."""
    path = write(
        tmp_path,
        user("main prompt"),
        user("sub prompt", isSidechain=True),
        assistant(
            [{"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "sub cmd"}}],
            isSidechain=True,
        ),
        tool_result(f"[main {SHA_A[:7]}] sub commit", isSidechain=True),
        assistant([{"type": "text", "text": "sub answer"}], isSidechain=True),
        assistant([{"type": "text", "text": "main answer"}]),
    )
    summary = read_transcript(path)
    assert summary.prompt_count == 1 and summary.last_prompt == "main prompt"
    assert summary.bash_commands == [] and summary.tool_outputs == []
    assert summary.assistant_texts == ["main answer"]
    assert summary.skipped[SIDECHAIN] == 4
    assert commits_in(summary, [SHA_A]) == []


# --- tolerance -------------------------------------------------------------------------------


def test_missing_file_gives_an_empty_summary(tmp_path: Path) -> None:
    assert read_transcript(tmp_path / "nope.jsonl") == TranscriptSummary()
    assert read_transcript(tmp_path).prompt_count == 0  # a directory: unreadable, not fatal


def test_broken_lines_and_unknown_types_are_counted(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "not json at all",
        '{"type": "user", "message": {"role": "user", "content": "cut off',
        "[1, 2, 3]",
        "42",
        b"\xff\xfe garbage \x00",
        "",
        {"type": "frobnicate", "payload": {"x": 1}},
        {"type": "frobnicate"},
        {"no_type": True},
        {"type": "user"},  # no message
        {"type": "assistant", "message": "a string"},
        {"type": "summary", "summary": "old style summary", "leafUuid": "x"},
        user("the real prompt"),
    )
    summary = read_transcript(path)
    assert summary.prompt_count == 1 and summary.first_prompt == "the real prompt"
    assert summary.skipped[INVALID_JSON] == 5
    assert summary.skipped["frobnicate"] == 2
    assert summary.skipped["summary"] == 1
    assert summary.skipped["<untyped>"] == 1
    assert summary.skipped["user:no-message"] == 1
    assert summary.skipped["assistant:no-message"] == 1


def test_odd_shapes_inside_known_entries(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        user(None),
        user(42),
        user([None, 3, {"type": "image", "source": {}}, {"type": "text", "text": None}]),
        assistant(None),
        assistant([None, "bare string", {"type": "tool_use", "name": "Bash", "input": "x"}]),
        assistant([{"type": "tool_use", "name": "Bash", "input": {"command": ["not", "str"]}}]),
        tool_result(None),
        tool_result([{"type": "image"}], stdout=None),
        user([{"type": "tool_result"}], toolUseResult="Error: something"),
    )
    summary = read_transcript(path)
    assert summary.prompt_count == 0
    assert summary.bash_commands == [] and summary.tool_outputs == []


def test_string_and_list_content(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        user("as a string"),
        user([{"type": "text", "text": "as"}, {"type": "text", "text": "blocks"}]),
        user([{"type": "image", "source": {"type": "base64"}}, {"type": "text", "text": "pic"}]),
        assistant("assistant as a string"),
        assistant([{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "listed"}]),
    )
    summary = read_transcript(path)
    assert summary.prompt_count == 3
    assert summary.first_prompt == "as a string"
    assert summary.last_prompt == "pic"
    assert summary.assistant_texts == ["assistant as a string", "listed"]


def test_generated_user_text_is_not_a_prompt(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        user("<command-name>/compact</command-name>\n<command-args>x</command-args>"),
        user("<command-message>recall</command-message>\n<command-name>/recall</command-name>"),
        user("<local-command-stdout>Compacted</local-command-stdout>"),
        user("  <system-reminder>\nSessionStart hook additional context: x\n</system-reminder>"),
        user("Caveat: The messages below were generated by the user while running local commands"),
        user([{"type": "text", "text": "[Request interrupted by user]"}]),
        user("meta text", isMeta=True),
        user("This session is being continued …", isCompactSummary=True),
        {"type": "attachment", "attachment": {"type": "hook_additional_context", "content": ["m"]}},
        user(
            [
                {"type": "text", "text": "<system-reminder>ctx</system-reminder>"},
                {"type": "text", "text": "the prompt"},
            ]
        ),
    )
    summary = read_transcript(path)
    assert summary.prompt_count == 1 and summary.first_prompt == "the prompt"
    assert summary.skipped[META] == 1 and summary.skipped[COMPACT_SUMMARY] == 1
    assert summary.skipped["attachment"] == 1


def test_duplicate_uuids_count_once(tmp_path: Path) -> None:
    entry = bash_use("make test")
    path = write(tmp_path, entry, entry)
    summary = read_transcript(path)
    assert summary.bash_commands == ["make test"]
    assert summary.skipped[DUPLICATE] == 1


def test_only_bash_tool_uses_are_commands(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        assistant(
            [
                {"type": "text", "text": "running"},
                {"type": "tool_use", "id": "1", "name": "Read", "input": {"file_path": "/x"}},
                {"type": "tool_use", "id": "2", "name": "Bash", "input": {"command": "ls -la"}},
                {"type": "tool_use", "id": "3", "name": "Bash", "input": {"command": "  "}},
            ]
        ),
        bash_use("git status"),
    )
    assert read_transcript(path).bash_commands == ["ls -la", "git status"]


def test_tool_outputs_string_list_and_tool_use_result(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        tool_result("as string", stdout="as string"),  # stdout repeats the block: kept once
        tool_result([{"type": "text", "text": "as"}, {"type": "text", "text": "list"}]),
        tool_result("Output too large, saved to a file", stdout="the full stdout"),
        tool_result("  "),
    )
    summary = read_transcript(path)
    assert summary.tool_outputs == [
        "as string",
        "as\nlist",
        "Output too large, saved to a file",
        "the full stdout",
    ]


def test_assistant_texts_are_bounded(tmp_path: Path) -> None:
    lines = [assistant([{"type": "text", "text": f"answer {i}"}]) for i in range(30)]
    lines.append(assistant([{"type": "text", "text": "x" * (MAX_TEXT_CHARS * 3)}]))
    summary = read_transcript(write(tmp_path, *lines))
    assert len(summary.assistant_texts) == ASSISTANT_TEXTS_KEPT
    assert summary.assistant_texts[0] == f"answer {31 - ASSISTANT_TEXTS_KEPT}"
    assert len(summary.assistant_texts[-1]) <= MAX_TEXT_CHARS + 1


def test_max_bytes_reads_the_tail(tmp_path: Path) -> None:
    lines = [user(f"prompt {i:04d}") for i in range(200)]
    path = write(tmp_path, *lines)
    whole = read_transcript(path)
    assert whole.prompt_count == 200 and TRUNCATED not in whole.skipped

    tail = read_transcript(path, max_bytes=2_000)
    assert 0 < tail.prompt_count < 200
    assert tail.last_prompt == "prompt 0199"
    assert tail.skipped == {TRUNCATED: 1}  # the cut line is dropped, not reported as broken JSON


# --- recall is never read back -----------------------------------------------------------------


RECALL = f"{RECALL_BEGIN}\nDigest: commit {SHA_B} added the vault.\n{RECALL_END}"


def test_strip_recall_removes_every_block_and_an_unpaired_half() -> None:
    assert strip_recall(f"before\n{RECALL}\nafter") == "before\nafter"
    assert strip_recall(f"a {RECALL} b {RECALL} c") == "a  b  c"
    assert strip_recall(f"keep {RECALL_BEGIN} unterminated {SHA_B}") == "keep "
    assert strip_recall(f"{SHA_B} head cut off {RECALL_END} keep") == " keep"
    assert strip_recall("nothing to strip") == "nothing to strip"


def test_injected_recall_is_skipped_everywhere(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        user(RECALL),  # a prompt that is only recall is no prompt
        user(f"{RECALL}\nso what next?"),
        bash_use("gitvault recall"),
        tool_result(RECALL, stdout=RECALL),
        assistant([{"type": "text", "text": f"Per memory:\n{RECALL}"}]),
        assistant([{"type": "text", "text": RECALL}]),
    )
    summary = read_transcript(path)
    assert summary.prompt_count == 1 and summary.first_prompt == "so what next?"
    assert summary.tool_outputs == []
    assert summary.assistant_texts == ["Per memory:"]
    assert SHA_B not in repr(summary)
    assert commits_in(summary, [SHA_B]) == []


# --- commits_in ------------------------------------------------------------------------------


def test_commits_in_only_matches_tool_output(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        user(f"please look at {SHA_B}"),  # mentioned by the user
        bash_use(f"git show {SHA_B[:10]}"),  # and in a command, but never in output
        tool_result(f"[main {SHA_A[:7]}] fix the bug\n 1 file changed"),
        assistant([{"type": "text", "text": f"Committed {SHA_B}"}]),
    )
    summary = read_transcript(path)
    assert commits_in(summary, [SHA_B, SHA_A]) == [SHA_A]


def test_commits_in_abbreviations_and_boundaries() -> None:
    summary = TranscriptSummary(
        tool_outputs=[
            f"{SHA_A[:7]} one",  # 7 chars: enough
            f"commit {SHA_B.upper()}",  # full, upper case
        ]
    )
    assert commits_in(summary, [SHA_A, SHA_B]) == [SHA_A, SHA_B]
    assert commits_in(summary, [SHA_B, SHA_A, SHA_B]) == [SHA_B, SHA_A]  # order kept, no repeats

    six = TranscriptSummary(tool_outputs=[f"HEAD is {SHA_A[:6]}"])
    assert commits_in(six, [SHA_A]) == []  # 6 chars: too short to count

    inside = TranscriptSummary(
        tool_outputs=[f"x{SHA_A[:7]}", f"{SHA_A[:7]}z", f"ff{SHA_A[:10]}", f"{SHA_A[1:12]}"]
    )
    assert commits_in(inside, [SHA_A]) == []  # part of a longer word, or not a prefix

    punctuated = TranscriptSummary(tool_outputs=[f"range {SHA_B[:8]}..{SHA_A[:9]}^"])
    assert commits_in(punctuated, [SHA_A, SHA_B]) == [SHA_A, SHA_B]

    other = TranscriptSummary(tool_outputs=[f"[main {SHA_A[:7]}]"])
    assert commits_in(other, [SHA_B, "", "abc", "not-a-sha"]) == []


def test_commits_in_with_many_candidates_is_fast() -> None:
    summary = TranscriptSummary(tool_outputs=[f"[main {SHA_A[:7]}] x"] * 1_000)
    candidates = [f"{i:040x}" for i in range(20_000)] + [SHA_A]
    assert commits_in(summary, candidates) == [SHA_A]


# --- never fatal ---------------------------------------------------------------------------------


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "message",
                    "content",
                    "role",
                    "isSidechain",
                    "isMeta",
                    "text",
                    "uuid",
                    "toolUseResult",
                    "stdout",
                    "name",
                    "input",
                    "command",
                    "model",
                ]
            )
            | st.text(max_size=5),
            children,
            max_size=5,
        )
    ),
    max_leaves=20,
)
_entry = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "attachment", "x"]), "message": _json}
)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(_json | _entry, max_size=8),
    st.integers(min_value=0, max_value=8),
    st.binary(max_size=50),
)
def test_arbitrary_lines_never_raise_and_never_hide_a_good_line(
    tmp_path_factory: pytest.TempPathFactory, entries: list[Any], at: int, junk: bytes
) -> None:
    # One well-formed commit output planted among arbitrary lines is still read, whatever
    # surrounds it; every other line is either used or counted as skipped, never both.
    good = tool_result(f"[main {SHA_A[:7]}] planted commit")
    lines = [json.dumps(e).encode() for e in entries]
    lines.insert(min(at, len(lines)), json.dumps(good).encode())
    path = tmp_path_factory.mktemp("fuzz") / "t.jsonl"
    path.write_bytes(b"\n".join([*lines, junk]))
    summary = read_transcript(path)
    assert commits_in(summary, [SHA_B, SHA_A]) == [SHA_A]
    assert f"[main {SHA_A[:7]}] planted commit" in summary.tool_outputs
    non_blank = sum(1 for raw in path.read_bytes().split(b"\n") if raw.strip())
    assert summary.prompt_count + sum(summary.skipped.values()) <= non_blank - 1
    assert (
        (summary.first_prompt is None)
        == (summary.last_prompt is None)
        == (not summary.prompt_count)
    )
    assert len(summary.assistant_texts) <= ASSISTANT_TEXTS_KEPT
    assert all(len(t) <= MAX_TEXT_CHARS + 1 for t in summary.assistant_texts)


def test_prompts_the_ledger_keeps_hold_no_secret(tmp_path: Path) -> None:
    from gitvault.agents.adapters.claude.transcript import MAX_PROMPT_KEPT, scan_prompts

    typed = "TWILIO_AUTH_TOKEN=swordfish and PGPASSWORD=qwertyuiop please deploy"
    long_one = "x " * (MAX_PROMPT_KEPT // 2 - 4) + "DB_PASS=qwertyuiop"  # crosses the cut
    path = tmp_path / "t.jsonl"
    path.write_text(
        "".join(
            json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n"
            for text in (typed, long_one)
        )
    )
    facts = scan_prompts(path, {})
    assert facts["prompts"] == 2
    kept = json.dumps(facts)
    assert "swordfish" not in kept and "qwertyuiop" not in kept and "qwerty" not in kept
    assert "please deploy" in facts["first"]
