"""The builtin merger: sessions first-class, history mined with citations, no line
from a merge or a rewritten commit, incremental == rebuild, folds that never lie, and a
CLAUDE.md section of standing instructions only. Real repositories, real git."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from gitvault import scrub
from gitvault.agents.agentfiles import block_text
from gitvault.fold import digest as digest_mod
from gitvault.memory import sessions
from gitvault.resolve import resolve
from gitvault.vault.config import parse_vault_toml
from tests.support.memory import (
    Clock,
    StandIn,
    Step,
    assert_citations_exist,
    cli_in,
    dated_history,
    digest_answer,
    digest_categories,
    digest_meta_body,
    vault_of,
    vault_text,
    watermark,
)
from tests.support.repos import Repo

DAY = 86_400


def session(
    repo: Repo,
    clock: Clock,
    title: str,
    decisions: list[str],
    steps: list[str],
    gotchas: list[str] | None = None,
) -> None:
    """Save a session (the domain operation `gitvault save` calls) one clock second after
    the last thing the test saved or committed."""
    text = f"## Summary\n{title}.\n\n## Key Decisions\n"
    text += "\n".join(f"- {d}" for d in decisions) + "\n\n## Next Steps\n"
    text += "\n".join(f"- {s}" for s in steps) + "\n"
    if gotchas:
        text += "\n## Gotchas\n" + "\n".join(f"- {g}" for g in gotchas) + "\n"
    sessions.save_session(resolve(repo.path), text, title=title, now=clock.moment())


def fold_builtin(repo: Repo, *args: str) -> str:
    result = cli_in(repo, "fold", "--merger", "builtin", *args)
    assert result.code == 0, result
    return digest_meta_body(repo)[1]


# --------------------------------------------------------------------------- ordering


def test_click_style_folds_of_30_3_and_2_docs_commits_equal_a_rebuild(repo: Repo) -> None:
    """The ordering bug: folds of 30, 3 and 2 `docs:` commits put old lines back newest-first
    and the cap cut the newest. Now an incremental fold equals a rebuild, newest kept."""
    start = int(time.time()) + 60
    shas: list[str] = []
    for round_, count in enumerate((30, 3, 2)):
        commits = [(f"docs: page {round_}-{i}", [f"docs/page{i % 4}.md"]) for i in range(count)]
        shas += dated_history(repo, commits, start=start + len(shas) * 3600)
        fold_builtin(repo)
    incremental = digest_meta_body(repo)[1]
    rebuilt = fold_builtin(repo, "--rebuild")
    assert incremental == rebuilt
    state = digest_categories(rebuilt)["State"]
    newest = f"c:{shas[-1][:7]}"
    assert any(newest in line and '"docs: page 2-1"' in line for line in state), state
    assert "docs: page 0-0" not in rebuilt  # no subject dump: 35 commits, no 35 lines
    assert assert_citations_exist(repo, rebuilt) > 0


def test_an_incremental_fold_equals_a_rebuild_with_sessions_between(
    repo: Repo, clock: Clock
) -> None:
    dated_history(
        repo,
        [(f"Fix parser case {i}", ["src/parser.py", "tests/test_parser.py"]) for i in range(8)],
    )
    session(
        repo, clock, "Parser", ["Parse with a Pratt parser — precedence is data"], ["Add ternaries"]
    )
    fold_builtin(repo)
    dated_history(
        repo,
        [(f"Add printer case {i}", ["src/printer.py", "CHANGES.rst"]) for i in range(6)],
        start=int(time.time()) + 100_000,
    )
    session(
        repo, clock, "Printer", ["Print with Wadler's algorithm"], ["Add ternaries", "Wrap lines"]
    )
    incremental = fold_builtin(repo)
    assert incremental == fold_builtin(repo, "--rebuild")


# --------------------------------------------------------------------------- sessions first-class


def test_every_sessions_decisions_are_kept_in_written_order_newest_session_first(
    repo: Repo, clock: Clock
) -> None:
    session(repo, clock, "One", ["Store data in JSON files", "Name modules in snake_case"], ["a"])
    session(repo, clock, "Two", ["Log with structlog", "Keep the CLI in one module"], ["b"])
    session(repo, clock, "Three", ["Ship wheels for Linux only"], ["c"])
    body = fold_builtin(repo)
    decisions = [
        re.sub(r" \(s:[^)]*\)$", "", ln[2:]) for ln in digest_categories(body)["Decisions"]
    ]
    assert decisions == [
        "Ship wheels for Linux only",
        "Log with structlog",
        "Keep the CLI in one module",
        "Store data in JSON files",
        "Name modules in snake_case",
    ]


def test_when_the_budget_truly_runs_out_the_oldest_decisions_go_first(
    repo: Repo, clock: Clock
) -> None:
    from tests.support.memory import set_config

    names = ["Architecture", "Decisions", "Conventions", "Gotchas", "State", "Next steps"]
    cats = [{"name": n, "cap": 300 if n == "Decisions" else 60} for n in names]
    set_config(repo, "digest", max_chars=900, categories=cats)
    decisions = [
        "Decision 0: parse configuration with tomllib, never a regex",
        "Decision 1: every error carries a hint for the user",
        "Decision 2: releases are cut from tags on main only",
        "Decision 3: caching happens per request context",
        "Decision 4: logs go to stderr as JSON lines",
        "Decision 5: wheels are built for Linux and macOS",
        "Decision 6: the CLI imports nothing heavy at startup",
        "Decision 7: documentation lives next to the code it explains",
    ]
    for i, decision in enumerate(decisions):
        session(repo, clock, f"Session {i}", [decision], [f"Follow up on decision {i}"])
    body = fold_builtin(repo)
    decisions = "\n".join(digest_categories(body)["Decisions"])
    assert "Decision 7:" in decisions  # the newest survives
    assert "Decision 0:" not in decisions  # the oldest went first
    assert "more lines cut" in decisions  # and the cut says so
    assert len(body) <= 900


def test_a_reversed_decision_is_superseded_and_a_restated_gotcha_kept_once(
    repo: Repo, clock: Clock
) -> None:
    session(
        repo,
        clock,
        "Storage",
        ["Store settings in SQLite — one file", "Use tabs in every source file"],
        ["Add an index on settings.key"],
        gotchas=["SQLite locks the whole file during a write"],
    )
    session(
        repo,
        clock,
        "Storage rework",
        ["Store settings in Postgres instead of SQLite — concurrent writers"],
        ["Add an index on settings.key"],
        gotchas=["A write to SQLite locks the entire database file"],
    )
    cats = digest_categories(fold_builtin(repo))
    decisions = "\n".join(cats["Decisions"])
    assert "Postgres instead of SQLite" in decisions
    assert "Store settings in SQLite — one file" not in decisions  # superseded
    assert "Use tabs in every source file" in decisions  # not touched by the reversal
    gotchas = [g for g in cats["Gotchas"] if "lock" in g]
    assert len(gotchas) == 1 and "entire database file" in gotchas[0]  # newest wording wins


def test_open_next_steps_from_every_worktree_and_done_ones_removed(
    repo: Repo, clock: Clock
) -> None:
    session(
        repo,
        clock,
        "Main work",
        ["Keep one process"],
        ["Write the migration script", "Add an index"],
    )
    ui = repo.worktree("ui-wt", "ui")
    session(ui, clock, "UI work", ["Render with templates"], ["Wire the settings page"])
    repo.commit("Write the migration script for settings", env=clock.git_dates())
    session(repo, clock, "Main later", ["Keep one process"], ["Add an index", "Load-test the API"])
    cats = digest_categories(fold_builtin(repo))
    steps = cats["Next steps"]
    text = "\n".join(steps)
    assert "[ui] Wire the settings page" in text  # a parallel worktree's task stays
    assert "Load-test the API" in text and "Add an index" in text
    assert "migration script" not in text  # done by a later commit
    main_steps = [s for s in steps if s.startswith("- [main]")]
    assert [s.split("] ", 1)[1].split(" (s:")[0] for s in main_steps] == [
        "Add an index",
        "Load-test the API",
    ]  # in their written order


# --------------------------------------------------------------------------- mined history


def test_history_is_mined_into_conventions_gotchas_and_state_with_citations(repo: Repo) -> None:
    commits: list[tuple[str, list[str]]] = []
    for i in range(24):
        mod = ["core", "parser", "types"][i % 3]
        files = [f"src/pkg/{mod}.py", f"tests/test_{mod}.py"]
        if i % 2 == 0:
            files.append("CHANGES.rst")
        subject = (
            f"Fix {mod} edge case {i} (#{100 + i})"
            if mod == "parser"
            else f"Add {mod} feature {i} (#{100 + i})"
        )
        commits.append((subject, files))
    commits.append(('Revert "Add core feature 21 (#121)"', ["src/pkg/core.py"]))
    dated_history(repo, commits)
    body = fold_builtin(repo)
    cats = digest_categories(body)
    conventions = "\n".join(cats["Conventions"])
    assert "come with a changelog entry in CHANGES.rst" in conventions
    assert "Tests live in tests/ (test_*.py)" in conventions
    assert (
        "src/pkg/parser.py → tests/test_parser.py" in conventions or "→ tests/test_" in conventions
    )
    assert "end with the pull-request number" in conventions
    gotchas = "\n".join(cats["Gotchas"])
    assert "Reverted on" in gotchas and "Add core feature 21" in gotchas
    assert "src/pkg/parser.py needed 8 fixes" in gotchas
    assert cats["State"] and cats["Architecture"]
    assert assert_citations_exist(repo, body) >= 8  # every line cites something real
    for line in [ln for lines in cats.values() for ln in lines if ln != "- (none yet)"]:
        assert re.search(r"\((?:[cs]:[^)]+)\)$", line), line


def test_no_line_from_a_merge_commit_or_a_rewritten_commit(repo: Repo) -> None:
    repo.git("switch", "-q", "-c", "feature")
    repo.commit("Add the exporter")
    repo.git("switch", "-q", "main")
    repo.commit("Tidy the importer")
    repo.git("merge", "-q", "--no-ff", "-m", "Merge branch 'feature'", "feature")
    repo.commit("Typo in the exporter docs")
    repo.git("commit", "-q", "--amend", "-m", "Fix the exporter docs wording")  # post-rewrite
    body = fold_builtin(repo)
    assert "Merge branch" not in body
    assert "Typo in the exporter docs" not in body  # replaced by the amend
    assert "Fix the exporter docs wording" in body  # the newest commit, quoted in State


# --------------------------------------------------------------------------- folds never lie


def test_a_digest_with_no_facts_is_rejected_and_the_old_one_kept(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = StandIn(tmp_path / "standin")
    monkeypatch.setenv("PATH", fake.path_env())
    repo.commit("Add the parser")
    old = fold_builtin(repo)
    mark = watermark(repo)
    fake.script(Step(answer=digest_answer({})))  # every category "(none yet)"
    result = cli_in(repo, "fold", "--rebuild")
    assert result.code == 4, result
    assert "holds no facts" in result.err
    assert digest_meta_body(repo)[1] == old and watermark(repo) == mark


def test_front_matter_counts_exclude_cut_markers(repo: Repo, clock: Clock) -> None:
    from tests.support.memory import set_config

    cats = [
        {"name": n, "cap": 100}
        for n in ("Architecture", "Decisions", "Conventions", "Gotchas", "State", "Next steps")
    ]
    set_config(repo, "digest", max_chars=900, categories=cats)
    topics = ["parser", "printer", "linter", "cache", "logging", "packaging"]
    for i, topic in enumerate(topics):
        session(
            repo, clock, f"S{i}", [f"The {topic} belongs to {topic}-{i} " + "y" * 50], [f"step {i}"]
        )
    fold_builtin(repo)
    meta, body = digest_meta_body(repo)
    lines = digest_categories(body)["Decisions"]
    assert any(ln.startswith("- [… ") for ln in lines)
    assert meta["items"]["Decisions"] == sum(1 for ln in lines if not ln.startswith("- [… "))


def test_a_builtin_fallback_keeps_a_model_digests_lines(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = StandIn(tmp_path / "standin")
    monkeypatch.setenv("PATH", fake.path_env())
    sha = repo.commit("Add the parser")
    fake.script(Step(answer=digest_answer({"Architecture": [f"- A Pratt parser (c:{sha[:7]})"]})))
    assert cli_in(repo, "fold").code == 0
    repo.commit("Add the printer")
    body = fold_builtin(repo)
    meta, _ = digest_meta_body(repo)
    assert f"- A Pratt parser (c:{sha[:7]})" in body  # the model's line stays
    assert meta["merger"] == "builtin" and meta["base_merger"] == "claude"
    repo.commit("Add the linter")
    assert f"- A Pratt parser (c:{sha[:7]})" in fold_builtin(repo)  # and stays after that
    assert f"- A Pratt parser (c:{sha[:7]})" not in fold_builtin(repo, "--rebuild")


# --------------------------------------------------------------------------- CLAUDE.md


def test_the_claude_md_section_holds_cited_conventions_and_gotchas_never_raw_subjects() -> None:
    config = parse_vault_toml(None)
    digest = digest_mod.Digest(
        {
            "Architecture": ["- The store is a CAS loop (c:1234567)"],
            "Decisions": [],
            "Conventions": [
                "- docs: describe option 3 (c:1234567)",
                "- Changes under src/ usually come with a changelog entry in CHANGES.rst "
                "(41 of 97 commits) (c:1234567, c:abcdef0)",
                "- A convention nobody can check",
            ],
            "Gotchas": [
                "- Fix crash when input is empty (c:1234567)",
                "- fix(parser): crash on empty input (c:1234567)",
                "- Merge pull request #12 from a/b (c:1234567)",
                "- The tokenizer must see a final newline (s:2026-01-01-1200-x)",
                "- [… 3 more lines cut to fit the 900-character cap]",
            ],
            "State": ["- On main: 3 commits (c:1234567)"],
            "Next steps": [],
        }
    )
    text = block_text(digest, config)
    assert "changelog entry in CHANGES.rst" in text
    assert "The tokenizer must see a final newline" in text
    for absent in (
        "docs: describe option",
        "fix(parser)",
        "Merge pull request",
        "nobody can check",
        "more lines cut",
        "CAS loop",
        "On main",
    ):
        assert absent not in text, absent


def test_fold_writes_no_subject_lines_into_claude_md(repo: Repo) -> None:
    dated_history(repo, [(f"fix: crash {i}", ["src/a.py", "tests/test_a.py"]) for i in range(6)])
    fold_builtin(repo)
    section = (repo.path / "CLAUDE.md").read_text() if (repo.path / "CLAUDE.md").exists() else ""
    assert "- fix: crash" not in section
    assert vault_text(repo, "_master.md") is not None


def test_a_value_split_over_a_sessions_lines_reaches_no_digest_line(repo: Repo) -> None:
    """The builtin merger squeezes each bullet onto one line: the session is redacted whole
    first, while the pieces of a split value are still together."""
    head, tail = "AIza" + "hfiR260g1WSm1btz", "sEvdXScYTE7Jf7M-LVZ"
    session = (
        '---\nkind: "session"\nslug: "2026-12-01-1000-split"\ntitle: "split"\n'
        'saved_at: "2026-12-01T10:00:00+00:00"\nmode: "manual"\n---\n# split\n\n'
        f'## Summary\nMaps work.\n\n## Gotchas\n- String k = "{head}"\n    + "{tail}";\n'
    )
    vault_of(repo).commit({"sessions/2026-12-01-1000-split.md": session.encode()}, "session split")
    folded = cli_in(repo, "fold", "--merger", "builtin")
    assert folded.code == 0 and "nothing" not in folded.out, folded
    _, body = digest_meta_body(repo)
    assert head not in body and tail not in body, body


def _commit_by_hand(repo: Repo, path: str, data: bytes, message: str, index: Path) -> None:
    """A vault commit made with git alone, as a person (or a script) would."""
    env = {"GIT_INDEX_FILE": str(index)}
    blob = repo.git("hash-object", "-w", "--stdin", input=data)
    repo.run("read-tree", "vault", env=env)
    repo.run("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
    tree = repo.git("write-tree", env=env)
    repo.run(
        "update-ref",
        "refs/heads/vault",
        repo.git("commit-tree", tree, "-p", "vault", "-m", message),
    )


@pytest.mark.parametrize("writer", ["an older gitvault", "a hand-made commit"])
def test_a_secret_an_older_vault_holds_reaches_no_digest_check_or_index(
    repo: Repo, writer: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A session written unredacted (by a gitvault whose secret filter caught less: its
    commits carry another filter generation; or by hand): the builtin merger copies its
    items' words, yet no secret reaches the digest, verify's results or the search index.
    Only text written under the filter that runs now is taken as redacted already."""
    secret = "DB_PASS=qwertyuiop"
    session = (
        '---\nkind: "session"\nslug: "2026-12-01-1000-old"\ntitle: "old"\n'
        'saved_at: "2026-12-01T10:00:00+00:00"\nmode: "manual"\n---\n# old\n\n'
        f"## Summary\nDeploy work.\n\n## Gotchas\n- The deploy needs {secret} set\n"
    )
    path = "sessions/2026-12-01-1000-old.md"
    if writer == "a hand-made commit":
        _commit_by_hand(repo, path, session.encode(), "session old", tmp_path / "index")
    else:
        with monkeypatch.context() as older:
            older.setattr(scrub, "generation", lambda: "0ld3r0ld3r00")
            vault_of(repo).commit({path: session.encode()}, "session old")
        committer = repo.git("log", "-1", "--format=%cn <%ce>", "vault").strip()
        assert committer == "gitvault (scrub 0ld3r0ld3r00) <gitvault@localhost>"
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    _, body = digest_meta_body(repo)
    assert "The deploy needs DB_PASS=" in body and "qwertyuiop" not in body
    assert cli_in(repo, "search", "qwertyuiop", "--json").json("search")["results"] == []
    for file in repo.state_dir.rglob("*"):
        if file.is_file():
            assert b"qwertyuiop" not in file.read_bytes(), file
