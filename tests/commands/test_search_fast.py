"""`gitvault search` answered before typer and rich load: the same answer as the typer command,
and anything the fast reader is not sure of (help, malformed options, errors, a spool to drain)
left to the typer command."""

from __future__ import annotations

import json

import pytest

from gitvault.commands import search_fast
from tests.support.memory import cli_in, cli_sub
from tests.support.repos import Repo


def _parsed(*argv: str) -> tuple[str | None, list[str], dict[str, str], bool] | None:
    args = search_fast.parse(list(argv))
    return None if args is None else (args.repo, args.words, args.values, args.json)


def test_the_fast_reader_reads_what_the_command_would() -> None:
    assert _parsed("search", "drain", "spool") == (None, ["drain", "spool"], {}, False)
    assert _parsed("-C", "/r", "search", "--json", "-n", "3", "x") == (
        "/r",
        ["x"],
        {"limit": "3"},
        True,
    )
    assert _parsed("search", "x", "--kind=note", "--since", "2020-01-01", "--repo=/r") == (
        "/r",
        ["x"],
        {"kind": "note", "since": "2020-01-01"},
        False,
    )
    # Unknown options are query words, as the typer command takes them; after `--`, all are.
    assert _parsed("search", "add", "--interactive", "-p") == (
        None,
        ["add", "--interactive", "-p"],
        {},
        False,
    )
    assert _parsed("search", "--", "--json", "-n") == (None, ["--json", "-n"], {}, False)


@pytest.mark.parametrize(
    "argv",
    [
        ("search",),  # no words: the command's own error
        ("search", "--help"),
        ("search", "x", "-n"),  # an option without its value
        ("search", "x", "-n5"),  # a cluster holding a real option
        ("search", "x", "--json=1"),
        ("--version", "search", "x"),  # a root option the reader does not know
        ("status", "x"),
    ],
)
def test_what_the_fast_reader_is_not_sure_of_goes_to_the_command(argv: tuple[str, ...]) -> None:
    assert search_fast.parse(list(argv)) is None


def test_a_search_through_the_cli_loads_neither_typer_nor_rich_and_answers_the_same(
    repo: Repo,
) -> None:
    sha = repo.commit("Rewrite add --interactive in C", {"builtin/add.c": "x\n"})
    fast = cli_sub(repo, "search", "add", "--interactive", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert fast.code == 0, fast
    imported = {line.rsplit("|", 1)[-1].strip() for line in fast.err.splitlines()}
    assert "gitvault.memory.search" in imported  # the profile is there to read
    assert not {"typer", "rich", "click"} & imported
    assert fast.out == cli_in(repo, "search", "add", "--interactive").out
    assert f"c:{sha[:7]}" in fast.out
    as_json = cli_sub(repo, "search", "--json", "-n", "5", "add.c")
    assert (
        json.loads(as_json.out)["data"]
        == cli_in(repo, "search", "--json", "-n", "5", "add.c").json()
    )


def test_errors_and_help_are_the_commands(repo: Repo) -> None:
    repo.commit("feat: something")
    bad = cli_sub(repo, "search", "x", "--since", "not a date at all", "--json")
    assert bad.code == 1 and json.loads(bad.out)["kind"] == "error"
    assert "cannot read the date" in bad.err
    helped = cli_sub(repo, "search", "--help")
    assert helped.code == 0 and "--max-count" in helped.out
    wrong = cli_sub(repo, "search", "x", "--kind", "nonsense")
    assert wrong.code != 0 and "unknown kind" in wrong.err
