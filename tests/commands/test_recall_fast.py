"""`gitvault recall` (and `--for PATH`) answered before typer and rich load: byte for byte the
typer command's answer, and anything the fast reader is not sure of (help, unknown options,
nothing to print, a spool to drain, a commit no hook saw) left to the typer command."""

from __future__ import annotations

import json

import pytest

from gitvault.commands import recall_fast
from tests.support.memory import cli_in, cli_sub
from tests.support.repos import Repo


def _parsed(*argv: str) -> tuple[str | None, bool, str | None] | None:
    args = recall_fast.parse(list(argv))
    return None if args is None else (args.repo, args.json, args.for_path)


def test_the_fast_reader_reads_what_the_command_would() -> None:
    assert _parsed("recall") == (None, False, None)
    assert _parsed("-C", "/r", "recall", "--json") == ("/r", True, None)
    assert _parsed("recall", "--for", "src/a.py", "--repo=/r") == ("/r", False, "src/a.py")
    assert _parsed("recall", "--for=a b.py", "--json") == (None, True, "a b.py")


@pytest.mark.parametrize(
    "argv",
    [
        ("recall", "--help"),
        ("recall", "--for"),  # an option without its value
        ("recall", "--for", "--json"),  # an option where a path should be
        ("recall", "--json", "--json"),
        ("recall", "extra"),
        ("--version", "recall"),
        ("status",),
    ],
)
def test_what_the_fast_reader_is_not_sure_of_goes_to_the_command(argv: tuple[str, ...]) -> None:
    assert recall_fast.parse(list(argv)) is None


def _profiled(repo: Repo, *args: str) -> tuple[str, set[str]]:
    done = cli_sub(repo, *args, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert done.code == 0, done
    return done.out, {line.rsplit("|", 1)[-1].strip() for line in done.err.splitlines()}


def test_recall_through_the_cli_loads_neither_typer_nor_rich_and_answers_the_same(
    repo: Repo,
) -> None:
    repo.commit("feat: the parser", {"src/parse.py": "x\n"})
    repo.commit("fix: the parser's edge case", {"src/parse.py": "y\n"})
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    for args in (("recall",), ("recall", "--for", "src/parse.py")):
        fast, imported = _profiled(repo, *args)
        assert "gitvault.commands.recall_fast" in imported
        assert not {"typer", "rich", "click"} & imported
        assert fast == cli_in(repo, *args).out
        as_json = cli_sub(repo, *args, "--json")
        assert json.loads(as_json.out)["data"] == cli_in(repo, *args, "--json").json()


def test_a_commit_to_note_first_goes_to_the_command(repo: Repo) -> None:
    """A commit no hook saw (hooks off) is noted before the answer, as every command does."""
    repo.commit("feat: the parser", {"src/parse.py": "x\n"})
    unseen = repo.commit("feat: a commit no hook saw", {"src/parse.py": "z\n"}, hooks=False)
    out, imported = _profiled(repo, "recall", "--for", "src/parse.py")
    assert "typer" in imported  # the full command ran: it walks the HEAD logs first
    assert unseen[:7] in out


def test_nothing_to_print_is_the_commands(repo: Repo) -> None:
    repo.commit("feat: something")
    out, imported = _profiled(repo, "recall", "--for", "never-committed.txt")
    assert "typer" in imported and out.startswith("(nothing: ")
