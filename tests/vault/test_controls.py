"""The one neutraliser for terminal- and model-bound text (vault/controls): every code point
checked against Unicode's own categories, and arbitrary Unicode through each output channel —
the CLI's streams and rich consoles, every agent hook's answer, `status --line`, and the text
that leaves the vault for a model (memory/fences.outbound)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.table import Table

from gitvault.commands.common import SafeConsole
from gitvault.memory.fences import outbound
from gitvault.vault.controls import (
    ControlSafeStream,
    neutralise_controls,
    neutralise_controls_in,
)
from tests.support.repos import Repo
from tests.support.terminal import HOSTILE, unsafe, unsafe_beside_styles

# Arbitrary Unicode, surrogates included (a file name read with surrogateescape), with the
# control characters and escape sequences a hostile text would use mixed in generously.
SEQUENCES = st.sampled_from(["\x1b[", "\x1b]52;c;", "\x1b]8;;", "\x07", "\x1b\\", "\x9b", "\r"])
TEXT = st.lists(
    st.one_of(st.characters(codec=None), SEQUENCES, st.characters(max_codepoint=0x9F)),
    max_size=80,
).map("".join)


def test_every_code_point_is_kept_or_replaced_by_unicodes_own_categories() -> None:
    everything = "".join(chr(c) for c in range(0x110000))
    safe = neutralise_controls(everything)
    assert len(safe) == len(everything), "one for one: columns and offsets stay"
    changed = {f"U+{ord(c):04X}" for c, s in zip(everything, safe, strict=True) if c != s}
    assert changed == set(unsafe(everything)), "exactly the unsafe ones are replaced"
    assert set(safe) & {chr(int(u[2:], 16)) for u in changed} == set()
    assert neutralise_controls("ESC\x1b BEL\x07 CR\r DEL\x7f") == "ESC␛ BEL␇ CR␍ DEL␡"
    assert (
        neutralise_controls("tab\tand\nnewline, 👩‍💻, می‌خواهم")
        == "tab\tand\nnewline, 👩‍💻, می‌خواهم"
    )


@given(TEXT)
@settings(deadline=None)
def test_the_neutraliser_is_idempotent_and_leaves_nothing_unsafe(text: str) -> None:
    safe = neutralise_controls(text)
    assert unsafe(safe) == []
    assert neutralise_controls(safe) == safe
    assert neutralise_controls_in({"k" + text: [text, {"x": text}]}) == {
        "k" + safe: [safe, {"x": safe}]
    }


@given(TEXT)
@settings(deadline=None)
def test_the_cli_streams_write_nothing_unsafe(text: str) -> None:
    raw = io.StringIO()
    stream = ControlSafeStream(raw)
    stream.write(text)
    print(text, file=stream)
    assert unsafe(raw.getvalue()) == []


@pytest.mark.parametrize("terminal", [False, True], ids=["pipe", "colour terminal"])
@given(text=TEXT)
@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_cli_consoles_print_nothing_unsafe(terminal: bool, text: str) -> None:
    raw = io.StringIO()
    console = SafeConsole(file=raw, force_terminal=terminal, color_system="truecolor", width=60)
    console.print(text, markup=False)
    console.print(text, markup=False, style="bold")
    table = Table(box=None)
    table.add_column("id")
    table.add_column("title", style="bold")
    table.add_row(text, text)
    console.print(table)
    assert unsafe_beside_styles(raw.getvalue()) == []


def test_the_cli_consoles_read_nothing_they_print_as_markup() -> None:
    """A commit subject or a path in a table cell is text: `[/]` there once ended the command
    (rich's MarkupError) and `[bold]` restyled what followed."""
    raw = io.StringIO()
    console = SafeConsole(file=raw, force_terminal=False, width=80)
    table = Table(box=None)
    table.add_column("title")
    table.add_row("Fix [/] and [bold]loud[/bold] in [link=x]y[/link]")
    console.print(table)
    console.print("[red]plain")
    assert "Fix [/] and [bold]loud[/bold] in [link=x]y[/link]" in raw.getvalue()
    assert "[red]plain" in raw.getvalue()


@given(TEXT)
@settings(deadline=None)
def test_text_leaving_the_vault_for_a_model_holds_nothing_unsafe(text: str) -> None:
    assert unsafe(outbound(text)) == []
    assert unsafe(outbound(text, own_headings=frozenset({"## State"}))) == []


def test_every_agent_hook_answer_holds_nothing_unsafe(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The real hook runtime, with whatever a behaviour could answer: the recall block at
    # session start, a save request at turn end.
    from gitvault.agents import adapters, behaviours, runtime

    answers: list[dict[str, str]] = []
    monkeypatch.setattr(behaviours, "respond", lambda call: answers[-1])
    payload = {"session_id": "s-1", "cwd": str(repo.path), "source": "startup"}
    monkeypatch.setattr(runtime, "read_input", lambda adapter, event, raw: (payload, []))
    check: Callable[[str], None]

    def strings(data: object) -> list[str]:
        if isinstance(data, str):
            return [data]
        if isinstance(data, dict):
            return [s for k, v in data.items() for s in [k, *strings(v)]]
        if isinstance(data, list):
            return [s for v in data for s in strings(v)]
        return []

    @given(TEXT)
    @settings(max_examples=40, deadline=None)
    def check(text: str) -> None:
        for name in adapters.NAMES:
            adapter = adapters.get(name)
            for event, answer in (
                ("session-start", {"context": text}),
                ("turn-end", {"decision": "block", "reason": text}),
            ):
                answers.append(answer)
                out = runtime.run(adapter, event, event, "{}")
                assert out, (name, event)
                if out:
                    decoded = json.loads(out)
                    assert all(unsafe(s) == [] for s in strings(decoded)), (name, event)

    check()


def test_status_line_holds_nothing_unsafe_whatever_fold_state_says(repo: Repo) -> None:
    from gitvault.resolve import resolve
    from gitvault.status.line import print_line
    from gitvault.vault import statedir

    loc = resolve(repo.path)

    @given(TEXT)
    @settings(max_examples=40, deadline=None)
    def check(text: str) -> None:
        failure = statedir.FoldFailure(text, text, text)
        statedir.write_fold_state(loc, statedir.FoldState(failure=failure))
        out = io.StringIO()
        import contextlib

        with contextlib.redirect_stdout(out):
            print_line(str(repo.path))
        assert out.getvalue().count("\n") <= 1 and unsafe(out.getvalue()) == []

    check()
    assert HOSTILE  # the command tests use the same hostile text: tests/commands
