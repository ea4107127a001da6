"""`gitvault search`: an FTS5 index over notes, sessions and past digest lines, kept as a cache
in the common git dir and caught up incrementally from the vault; honest about no results."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from gitvault.memory import search
from gitvault.resolve import resolve
from gitvault.vault import statedir
from tests.support.memory import cli_in, cli_sub, session_text
from tests.support.repos import Repo


def _index(repo: Repo) -> search.Index:
    return search.Index(resolve(repo.path))


def _ids(result: object) -> list[str]:
    assert hasattr(result, "json")
    return [r["id"] for r in result.json("search")["results"]]  # type: ignore[attr-defined]


def test_finds_notes_by_subject_and_files_ranked_and_cited(repo: Repo) -> None:
    a = repo.commit("feat: resolver follows linked worktrees", {"src/resolve.py": "x\n"})
    b = repo.commit("docs: mention the worktree resolver once", {"README.md": "y\n"})
    repo.commit("chore: bump the version", {"VERSION": "2\n"})
    found = cli_in(repo, "search", "resolver", "worktrees", "--json")
    assert found.code == 0, found
    ids = _ids(found)
    assert set(ids) == {f"c:{a[:7]}", f"c:{b[:7]}"}
    first = found.json("search")["results"][0]
    assert first["kind"] == "note" and first["date"] and first["score"] >= 0
    assert first["partial"] is False
    # A file name in the note's file list is searchable too.
    assert _ids(cli_in(repo, "search", "resolve.py", "--json")) == [f"c:{a[:7]}"]


def test_no_results_is_said_plainly(repo: Repo) -> None:
    repo.commit("feat: add the parser")
    found = cli_in(repo, "search", "kubernetes")
    assert found.code == 0
    assert found.out.startswith("No results for 'kubernetes'")
    assert _ids(cli_in(repo, "search", "kubernetes", "--json")) == []


def test_partial_matches_need_most_terms_and_are_marked(repo: Repo) -> None:
    full = repo.commit("fix: drain spool after crash recovery")
    part = repo.commit("fix: drain spool quickly")
    repo.commit("feat: crash reporter")  # one term of four: never shown
    data = cli_in(repo, "search", "drain", "spool", "crash", "recovery", "--json").json("search")
    assert data["min_terms"] == 3
    ids = [r["id"] for r in data["results"]]
    assert ids[0] == f"c:{full[:7]}"
    assert f"c:{part[:7]}" not in ids  # 2 of 4 terms: below the 60 % minimum
    three = repo.commit("docs: spool drain after a crash")
    data = cli_in(repo, "search", "drain", "spool", "crash", "recovery", "--json").json("search")
    by_id = {r["id"]: r for r in data["results"]}
    assert by_id[f"c:{three[:7]}"]["partial"] is True
    assert by_id[f"c:{full[:7]}"]["partial"] is False


def test_sessions_and_past_digest_lines_are_indexed(repo: Repo) -> None:
    repo.commit("feat: cache the parser tables")
    saved = cli_in(
        repo,
        "save",
        "--json",
        stdin=session_text("Parser caching", summary="Cached the LALR tables on disk."),
    ).json("save")
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    data = cli_in(repo, "search", "LALR", "--json").json("search")
    assert [r["id"] for r in data["results"]] == [f"s:{saved['slug']}"]
    assert "[LALR]" in data["results"][0]["snippet"]
    digest = cli_in(repo, "search", "parser", "--kind", "digest", "--json").json("search")
    assert digest["results"], digest
    assert all(r["id"].startswith("digest:") for r in digest["results"])
    # What search cites, show opens.
    shown = cli_in(repo, "show", digest["results"][0]["id"])
    assert shown.code == 0 and "# Project memory" in shown.out


def test_since_and_kind_filter_on_the_items_own_date(repo: Repo) -> None:
    old = repo.commit(
        "feat: legacy importer",
        env={
            "GIT_COMMITTER_DATE": "2020-01-02T00:00:00Z",
            "GIT_AUTHOR_DATE": "2020-01-02T00:00:00Z",
        },
    )
    new = repo.commit("feat: modern importer")
    assert set(_ids(cli_in(repo, "search", "importer", "--json"))) == {
        f"c:{old[:7]}",
        f"c:{new[:7]}",
    }
    assert _ids(cli_in(repo, "search", "importer", "--since", "2021-01-01", "--json")) == [
        f"c:{new[:7]}"
    ]
    assert _ids(cli_in(repo, "search", "importer", "--kind", "session", "--json")) == []
    bad = cli_in(repo, "search", "importer", "--since", "not a date at all", "--json")
    assert bad.code == 1 and bad.json("error")["message"]


def test_the_index_is_incremental_with_its_own_watermark(repo: Repo) -> None:
    repo.commit("feat: first thing")
    index = _index(repo)
    first = index.update()
    assert first.rebuilt and first.tip == repo.vault_tip()
    assert index.update().added == 0  # nothing new: nothing read
    repo.commit("feat: second thing")
    again = index.update()
    assert not again.rebuilt and again.added == 1
    assert (repo.state_dir / statedir.SEARCH_INDEX).is_file()
    assert statedir.SEARCH_INDEX not in repo.git("ls-tree", "-r", "--name-only", "vault")


def test_a_corrupt_or_foreign_index_is_rebuilt(repo: Repo) -> None:
    sha = repo.commit("feat: resilient index")
    db = repo.state_dir / statedir.SEARCH_INDEX
    db.parent.mkdir(exist_ok=True)
    db.write_bytes(b"this is not a database at all" * 100)
    assert _ids(cli_in(repo, "search", "resilient", "--json")) == [f"c:{sha[:7]}"]
    with sqlite3.connect(db) as conn:  # a schema from another version
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
    assert _index(repo).update().rebuilt
    assert _ids(cli_in(repo, "search", "resilient", "--json")) == [f"c:{sha[:7]}"]


def test_a_rewritten_vault_history_rebuilds_the_index(repo: Repo) -> None:
    repo.commit("feat: alpha feature")
    _index(repo).update()
    tip = repo.vault_tip()
    assert tip is not None
    repo.git("update-ref", "refs/heads/vault", f"{tip}~1")  # history that lost the last note
    result = _index(repo).update()
    assert result.rebuilt and "rewritten" in " ".join(result.reasons)
    assert _ids(cli_in(repo, "search", "alpha", "--json")) == []


def test_query_text_is_never_fts_syntax(repo: Repo) -> None:
    sha = repo.commit('fix: quote "handling" in NEAR(parser) AND stuff')
    for query in ('"handling', "NEAR(parser", "AND OR NOT", "*", "parser)", "-x:y"):
        result = cli_in(repo, "search", "--", query)
        assert result.code in (0, 1), (query, result)
        assert "internal error" not in result.err, (query, result.err)
    assert _ids(cli_in(repo, "search", "--json", "--", 'NEAR(parser"')) == [f"c:{sha[:7]}"]


def test_agent_output_is_bounded_and_has_no_control_characters(repo: Repo) -> None:
    from tests.support.repos import fast_history

    fast_history(repo, "main", 5)
    for i in range(60):
        repo.commit(f"feat: widget {i} \x1b[31mred\x1b[0m " + "padding " * 30)
    found = cli_in(repo, "search", "widget", "-n", "200")
    assert found.code == 0
    assert len(found.out.rstrip("\n")) <= search.AGENT_MAX_CHARS
    assert "\x1b" not in found.out
    assert "more result(s) not shown" in found.out


def test_concurrent_searches_and_writes_leave_a_consistent_index(repo: Repo) -> None:
    for i in range(5):
        repo.commit(f"feat: gadget {i}")
    errors: list[BaseException] = []

    def searcher() -> None:
        try:
            for _ in range(5):
                search.Index(resolve(repo.path)).search("gadget", limit=50)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=searcher) for _ in range(4)]
    for t in threads:
        t.start()
    for i in range(5, 10):
        repo.commit(f"feat: gadget {i}")
    for t in threads:
        t.join()
    assert not errors, errors
    answer = search.Index(resolve(repo.path)).search("gadget", limit=50)
    assert len(answer.hits) == 10
    with sqlite3.connect(repo.state_dir / statedir.SEARCH_INDEX) as conn:
        docs = conn.execute("SELECT count(*) FROM docs").fetchone()[0]
        fts = conn.execute("SELECT count(*) FROM fts").fetchone()[0]
    assert docs == fts


def test_search_from_a_subprocess_and_a_linked_worktree(repo: Repo, tmp_path: Path) -> None:
    sha = repo.commit("feat: shared across worktrees")
    other = repo.worktree("side")
    result = cli_sub(other, "search", "shared", "worktrees")
    assert result.code == 0, result
    assert f"c:{sha[:7]}" in result.out


@pytest.mark.parametrize("query", ["", "   ", "!!!"])
def test_a_query_without_words_is_an_error(repo: Repo, query: str) -> None:
    result = cli_in(repo, "search", "--json", "--", query)
    assert result.code == 1
    assert "no words" in result.json("error")["message"]
