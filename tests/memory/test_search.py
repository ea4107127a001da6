"""`gitvault search`: an FTS5 index over notes, sessions and past digest lines, kept as a cache
in the common git dir and caught up incrementally from the vault; honest about no results."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import pytest

from gitvault import scrub
from gitvault.memory import search
from gitvault.resolve import resolve
from gitvault.vault import layout, statedir
from tests.support.memory import cli_in, cli_sub, session_text
from tests.support.repos import Repo, fast_history, git


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


def test_partial_matches_are_ranked_after_fuller_ones_and_marked(repo: Repo) -> None:
    full = repo.commit("fix: drain spool after crash recovery")
    part = repo.commit("fix: drain spool quickly")
    repo.commit("feat: crash reporter")  # one term of four: never shown beside a full match
    data = cli_in(repo, "search", "drain", "spool", "crash", "recovery", "--json").json("search")
    ids = [r["id"] for r in data["results"]]
    assert ids[0] == f"c:{full[:7]}"
    assert data["results"][0]["matched"] == ["drain", "spool", "crash", "recovery"]
    # Two common words of four hold less than SHOW_SHARE of what the full match holds.
    assert f"c:{part[:7]}" not in ids
    assert data["min_terms"] == 4
    three = repo.commit("docs: spool drain after a crash")
    data = cli_in(repo, "search", "drain", "spool", "crash", "recovery", "--json").json("search")
    by_id = {r["id"]: r for r in data["results"]}
    assert by_id[f"c:{three[:7]}"]["partial"] is True
    assert by_id[f"c:{three[:7]}"]["matched"] == ["drain", "spool", "crash"]
    assert by_id[f"c:{full[:7]}"]["partial"] is False
    assert [r["id"] for r in data["results"]][:2] == [f"c:{full[:7]}", f"c:{three[:7]}"]
    assert data["min_terms"] == 3
    text = cli_in(repo, "search", "drain", "spool", "crash", "recovery").out
    assert "matched 3 of 4: drain spool crash" in text


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


def test_a_digest_lines_versions_are_one_result_the_newest(repo: Repo) -> None:
    """Every fold rewrites the digest, and a line whose claim still stands comes back with new
    citations (and counts): the index keeps each version, search shows one, the newest — not
    the same line once per fold."""
    for i in range(3):
        repo.commit(f"feat: plugin registry step {i}", {f"reg{i}.py": f"{i}\n"})
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    repo.commit("feat: plugin registry lookups", {"reg9.py": "9\n"})
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    vault = resolve(repo.path).common_dir
    folds = git(vault, "log", "--format=%h %s", "vault", "--", layout.DIGEST).splitlines()
    assert len(folds) == 2, folds
    versions = [
        line
        for rev in ("vault", "vault~1")
        for line in (git(vault, "show", f"{rev}:{layout.DIGEST}").splitlines())
        if line.startswith("- Recent code changes")
    ]
    assert len(versions) == 2 and versions[0] != versions[1], versions  # new citations
    found = cli_in(repo, "search", "recent", "code", "changes", "--kind", "digest", "--json")
    results = found.json("search")["results"]
    architecture = [r for r in results if r["title"] == "Architecture"]
    newest = git(vault, "log", "-1", "--format=%h", "--abbrev=7", "vault", "--", layout.DIGEST)
    assert [r["id"] for r in architecture] == [f"digest:{newest}"], results
    assert architecture[0]["related"] == []


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


def test_an_index_built_under_another_secret_filter_is_rebuilt(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gitvault whose secret filter changed (an upgrade) builds its index again: what the
    old one took for redacted, the new filter may catch."""
    repo.commit("feat: filtered index")
    assert _index(repo).update().rebuilt
    assert not _index(repo).update().rebuilt
    monkeypatch.setattr(scrub, "generation", lambda: "n3wf1lt3r000")
    assert _index(repo).update().rebuilt
    with sqlite3.connect(repo.state_dir / statedir.SEARCH_INDEX) as conn:
        assert dict(conn.execute("SELECT key, value FROM meta"))["scrub"] == "n3wf1lt3r000"


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
        notes = conn.execute("SELECT count(*) FROM docs WHERE kind = 'note'").fetchone()[0]
        indexed = conn.execute("SELECT count(*) FROM words WHERE words MATCH 'gadget'")
        assert indexed.fetchone()[0] == notes == 10
        for table in ("words", "names"):  # FTS5's own check of its postings
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")


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


def test_inflected_words_find_each_other(repo: Repo) -> None:
    sha = repo.commit("Fixes the pager when the terminal is resized")
    assert _ids(cli_in(repo, "search", "fixed", "resizing", "--json")) == [f"c:{sha[:7]}"]


def test_a_qualified_name_matches_where_it_is_said_not_where_its_parts_are(repo: Repo) -> None:
    said = repo.commit("Let click.prompt hide its input", {"docs/prompts.rst": "x\n"})
    parts = repo.commit("Tidy the prompt tests", {"src/click/prompt_tests.py": "y\n"})
    found = _ids(cli_in(repo, "search", "click.prompt", "--json"))
    assert found[0] == f"c:{said[:7]}"
    # The other note holds "click" and "prompt" as words, not the name: ranked below, partial.
    data = cli_in(repo, "search", "click.prompt", "--json").json("search")
    by_id = {r["id"]: r for r in data["results"]}
    if f"c:{parts[:7]}" in by_id:
        assert by_id[f"c:{parts[:7]}"]["partial"] is True
    # A file's base name and its path tail find the note that lists it.
    assert _ids(cli_in(repo, "search", "prompts.rst", "--json")) == [f"c:{said[:7]}"]
    assert _ids(cli_in(repo, "search", "docs/prompts.rst", "--json")) == [f"c:{said[:7]}"]


def test_trailers_are_not_searchable(repo: Repo) -> None:
    repo.commit("Speed up the tokenizer\n\nSigned-off-by: Zebediah Quux <z@example.com>")
    assert _ids(cli_in(repo, "search", "Zebediah", "--json")) == []
    assert _ids(cli_in(repo, "search", "tokenizer", "--json"))


def test_a_merge_and_the_commits_it_brought_in_are_one_result(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "topic")
    one = repo.commit("Teach the walker about sparse checkouts")
    two = repo.commit("Document the sparse walker")
    repo.git("checkout", "-q", "-")
    repo.commit("Unrelated change on the main line")
    repo.run("merge", "-q", "--no-ff", "-m", "Merge branch 'topic': sparse walker", "topic")
    merge = repo.head()
    assert repo.git("rev-parse", f"{merge}^2") == two
    data = cli_in(repo, "search", "sparse", "walker", "--json").json("search")
    results = data["results"]
    assert len(results) == 1, results
    cites = {results[0]["id"], *(r["id"] for r in results[0]["related"])}
    assert cites == {f"c:{merge[:7]}", f"c:{one[:7]}", f"c:{two[:7]}"}
    assert results[0]["id"] == f"c:{merge[:7]}"  # the merge names the pull request: it leads
    assert [r["relation"] for r in results[0]["related"]] == ["commit", "commit"]
    text = cli_in(repo, "search", "sparse", "walker").out
    assert text.startswith("1 result(s)") and "+ " in text
    # The main line's own commit is not swallowed by the merge.
    assert _ids(cli_in(repo, "search", "unrelated", "--json"))


def test_a_query_may_hold_words_that_look_like_options(repo: Repo) -> None:
    sha = repo.commit("Rewrite add --interactive in C")
    for args in (("add", "--interactive"), ("--", "add", "--interactive"), ("-p",)):
        found = cli_in(repo, "search", *args, "--json")
        assert found.code == 0, (args, found)
    assert _ids(cli_in(repo, "search", "add", "--interactive", "--json")) == [f"c:{sha[:7]}"]
    assert "Rewrite add" in cli_in(repo, "search", "add", "--interactive").out


def test_a_word_said_in_the_message_outranks_one_only_in_a_touched_path(repo: Repo) -> None:
    # The paths a commit touched are a field of their own, weighed by how common the word is
    # among paths: "parser" in a message says more than a file under src/parser/ does.
    said = repo.commit("Tidy the loader\n\nThe parser warms up faster now.", {"a.txt": "x\n"})
    path = repo.commit("Tidy imports", {"src/parser/util.py": "y\n"})
    data = cli_in(repo, "search", "parser", "--json").json("search")
    assert [r["id"] for r in data["results"]] == [f"c:{said[:7]}", f"c:{path[:7]}"]
    # A subject match still outranks a body match.
    title = repo.commit("Parser warmup is lazy", {"b.txt": "z\n"})
    assert _ids(cli_in(repo, "search", "parser", "warms", "--json"))[0] in {
        f"c:{said[:7]}",
        f"c:{title[:7]}",
    }
    assert _ids(cli_in(repo, "search", "parser", "--json"))[0] == f"c:{title[:7]}"


def test_a_message_holding_every_word_asked_for_outranks_one_word_in_a_short_subject(
    repo: Repo,
) -> None:
    # Coverage first: a long message that says all three words is what was asked for; a short
    # subject holding one of them is not, however rare the word (git/git's long messages were
    # found below notes matching one word in their subject, where `git log --grep` found them).
    filler = " ".join(f"step{i} of the walk is described here" for i in range(30))
    long = repo.commit(
        f"Tidy the object walker\n\n{filler}\n\nA quarantine directory may vanish; its fanout "
        "is rebuilt and the liveliness of each child checked.",
        {"walker.c": "x\n"},
    )
    short = [
        repo.commit("Quarantine cleanup", {"q.c": "1\n"}),
        repo.commit("Fanout tweak", {"f.c": "2\n"}),
        repo.commit("Liveliness probe", {"l.c": "3\n"}),
    ]
    for i in range(8):
        repo.commit(f"Bump release {i}", {"VERSION": f"{i}\n"})
    data = cli_in(repo, "search", "quarantine", "fanout", "liveliness", "--json").json("search")
    ids = [r["id"] for r in data["results"]]
    # Each short subject holds a third of what the long message holds: below SHOW_SHARE.
    assert ids == [f"c:{long[:7]}"], data["results"]
    assert data["results"][0]["partial"] is False
    two = cli_in(repo, "search", "quarantine", "fanout", "--json").json("search")["results"]
    assert [r["id"] for r in two][0] == f"c:{long[:7]}", two
    assert {r["id"] for r in two[1:]} == {f"c:{short[0][:7]}", f"c:{short[1][:7]}"}
    # One word asked for: where it stands still decides (the subject first).
    assert _ids(cli_in(repo, "search", "fanout", "--json"))[0] == f"c:{short[1][:7]}"


def test_copies_of_one_change_under_the_same_subject_are_one_result(repo: Repo) -> None:
    base = repo.head()
    first = repo.commit("Fix the pager colour detection", {"pager.py": "1\n"})
    repo.git("checkout", "-q", "-b", "stable", base)
    copy = repo.commit("Fix the pager colour detection (#812)", {"pager.py": "2\n"})
    other = repo.commit("Pager colour tests", {"test_pager.py": "3\n"})
    data = cli_in(repo, "search", "pager", "colour", "detection", "--json").json("search")
    results = data["results"]
    heads = [r["id"] for r in results]
    assert len({f"c:{first[:7]}", f"c:{copy[:7]}"} & set(heads)) == 1, results
    one = next(r for r in results if r["id"] in {f"c:{first[:7]}", f"c:{copy[:7]}"})
    assert [(r["relation"]) for r in one["related"]] == ["copy"]
    assert {one["id"], one["related"][0]["id"]} == {f"c:{first[:7]}", f"c:{copy[:7]}"}
    # Another subject is its own result.
    assert f"c:{other[:7]}" in _ids(cli_in(repo, "search", "pager", "colour", "--json"))
    text = cli_in(repo, "search", "pager", "colour", "detection").out
    assert "+ copy c:" in text


def test_a_word_porter_stems_apart_from_its_inflection_still_matches(repo: Repo) -> None:
    # Porter: add → add but added → ad. Both forms are asked for.
    sha = repo.commit("add typing annotations", {"a.txt": "x\n"})
    for words in (("added", "annotations"), ("adding", "annotations")):
        data = cli_in(repo, "search", *words, "--json").json("search")
        assert data["results"][0]["id"] == f"c:{sha[:7]}"
        assert data["results"][0]["partial"] is False, words
    said = repo.commit("Then we added the docs", {"b.txt": "y\n"})
    assert f"c:{said[:7]}" in _ids(cli_in(repo, "search", "add", "--json"))


SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _own_flags(index: search.Index) -> dict[str, int]:
    with sqlite3.connect(index.path) as conn:
        return dict(conn.execute("SELECT key, own FROM docs WHERE kind != 'digest'").fetchall())


def _holds_secret(index: search.Index) -> bool:
    """Whether the token can be found in the index or is shown by it."""
    for query in (SECRET, SECRET[4:], "quokka token"):
        for hit in index.search(query, limit=20).hits:
            if query != "quokka token" or SECRET in hit.title + hit.snippet:
                return True
    return False


@pytest.mark.parametrize("record", ["kept", "deleted", "corrupt", "planted fifo"])
def test_a_file_another_clone_sent_is_redacted_before_it_is_indexed(
    tmp_path: Path, record: str
) -> None:
    """What this clone's gitvault wrote was redacted as it was written and is not scanned a
    second time (the index builds in a fraction of the time); what a remote brought is,
    whatever commit it came in (a sync's merge or a fast-forward onto its own commits) —
    and when the record of what came from where is lost or unreadable, everything is."""
    from gitvault.vault.store import Vault
    from tests.support.remotes import bare_remote, clone, seed

    remote = bare_remote(tmp_path / "remote.git")
    seed(remote, tmp_path / "seed")
    a = clone(remote, tmp_path / "a")
    mine = a.commit("feat: the quokka parser")
    assert a.gv("sync").code == 0
    b = clone(remote, tmp_path / "b")
    # The teammate's clone runs an older gitvault that redacted nothing: its gitvault commits a
    # session holding a token (the same committer, the same layout as this clone's own).
    saved = cli_in(b, "save", "--json", stdin=session_text("Quokka token", summary="PLACEHOLDER"))
    assert saved.code == 0, saved
    slug = saved.json("save")["slug"]
    vault = Vault(resolve(b.path))
    page = layout.session_path(slug)
    vault.commit({page: (vault.read_text(page) or "").replace("PLACEHOLDER", SECRET).encode()}, "x")
    assert b.gv("sync").code == 0
    assert a.gv("sync").code == 0  # a fast-forward: b's own commit is now on a's line
    origins = statedir.ORIGINS_FILE.path(resolve(a.path))
    assert origins.is_file()
    if record == "deleted":
        origins.unlink()
    elif record == "corrupt":
        origins.write_text("{not json")
    elif record == "planted fifo":
        origins.unlink()
        os.mkfifo(origins)
    index = _index(a)
    assert index.update().rebuilt
    assert not _holds_secret(index)
    flags = _own_flags(index)
    # A clone that ever took a remote's vault trusts none of it to be its own writing (the
    # committer is forgeable; the record can be lost): all of it is scanned.
    assert flags[f"c:{mine}"] == 0
    assert flags[f"s:{slug}"] == 0
    hit = index.search("quokka token").hits[0]
    assert hit.cite == f"s:{slug}" and "[REDACTED" in hit.snippet


def test_only_a_clone_that_never_took_a_remote_vault_skips_scanning_its_own_notes(
    repo: Repo,
) -> None:
    """The second scan is skipped only for a vault that can hold nothing another clone wrote;
    a remote-tracking branch of the vault's name (what `git clone`, then `git checkout vault`
    leaves) is enough to scan everything again."""
    sha = repo.commit("feat: the quokka parser")
    index = _index(repo)
    index.update()
    assert _own_flags(index)[f"c:{sha}"] == 1
    repo.git("update-ref", "refs/remotes/teammate/vault", "vault")
    index.path.unlink()
    assert index.update().rebuilt
    assert _own_flags(index)[f"c:{sha}"] == 0


def test_a_hand_made_vault_commit_is_redacted_before_it_is_indexed(
    repo: Repo, tmp_path: Path
) -> None:
    """A person committing on the vault branch from a worktree is not gitvault: what that
    commit wrote is scanned (caught up incrementally and rebuilt alike)."""
    repo.commit("feat: the quokka parser")
    index = _index(repo)
    index.update()
    worktree = tmp_path / "v"
    repo.git("worktree", "add", "-q", str(worktree), "vault")
    page = worktree / "sessions" / "2026-01-02-quokka-token.md"
    page.parent.mkdir(exist_ok=True)
    page.write_text(session_text("Quokka", summary=SECRET))
    git(worktree, "add", "sessions")
    git(worktree, "commit", "-q", "-m", "my notes")
    assert not index.update().rebuilt  # caught up
    assert not _holds_secret(index) and _own_flags(index)["s:2026-01-02-quokka-token"] == 0
    index.path.unlink()
    assert index.update().rebuilt
    assert not _holds_secret(index) and _own_flags(index)["s:2026-01-02-quokka-token"] == 0


def test_one_branch_merged_into_two_lines_is_one_result(repo: Repo) -> None:
    main = repo.git("rev-parse", "--abbrev-ref", "HEAD")
    repo.git("branch", "maint")
    repo.git("checkout", "-q", "-b", "sparse-walker")
    topic = repo.commit("Teach the walker about sparse checkouts")
    for line in ("maint", main):
        repo.git("checkout", "-q", line)
        repo.commit(f"Unrelated work on {line}")
        repo.run("merge", "-q", "--no-ff", "--no-edit", "sparse-walker")
    results = cli_in(repo, "search", "sparse", "walker", "--json").json("search")["results"]
    assert len(results) == 1, results
    cites = {results[0]["id"], *(r["id"] for r in results[0]["related"])}
    assert f"c:{topic[:7]}" in cites and len(cites) == 3, results


def test_a_merge_subject_names_a_branch_not_what_changed(repo: Repo) -> None:
    # The branch's name holds the query's words; what it brought in does not.
    main = repo.git("rev-parse", "--abbrev-ref", "HEAD")
    said = repo.commit("Cache the parser tables")
    repo.git("checkout", "-q", "-b", "parser-cache")
    repo.commit("Speed up startup")
    repo.git("checkout", "-q", main)
    repo.commit("Unrelated work")
    repo.run("merge", "-q", "--no-ff", "--no-edit", "parser-cache")
    assert _ids(cli_in(repo, "search", "parser", "cache", "--json"))[0] == f"c:{said[:7]}"


def test_commits_of_a_merge_that_did_not_match_each_stand_on_their_own(repo: Repo) -> None:
    # Folded under the best of them, the commit asked for was hidden whenever a sibling held
    # the same words (git/git: 3 of 80 body and identifier queries); the merge, which would
    # name them all, said none of the words.
    main = repo.git("rev-parse", "--abbrev-ref", "HEAD")
    repo.commit("Start", {"base.txt": "0\n"})
    repo.git("checkout", "-q", "-b", "topic")
    first = repo.commit("Teach the walker a fanout", {"walker.py": "1\n"})
    second = repo.commit("Document the walker fanout", {"walker.md": "1\n"})
    repo.git("checkout", "-q", main)
    repo.run("merge", "-q", "--no-ff", "-m", "Merge branch 'topic'", "topic")
    merge = repo.head()
    results = cli_in(repo, "search", "walker", "fanout", "--json").json("search")["results"]
    assert {r["id"] for r in results} == {f"c:{first[:7]}", f"c:{second[:7]}"}, results
    assert all(r["related"] == [] for r in results), results
    # A merge that matched still heads its pull request, its commits named under it.
    results = cli_in(repo, "search", "topic", "walker", "--json").json("search")["results"]
    assert results[0]["id"] == f"c:{merge[:7]}"
    assert {r["id"] for r in results[0]["related"]} == {f"c:{first[:7]}", f"c:{second[:7]}"}


def test_a_note_holding_a_name_whole_outranks_notes_saying_its_words(repo: Repo) -> None:
    # The query's name is asked for by its words too (test, testing, logging, py). Three notes
    # say those words in their subjects; the one that touched the file held them only in its
    # path, at a path's discount, and ranked below them (click: the file kind's one miss).
    repo.commit("Start", {"base.txt": "0\n"})
    main = repo.git("rev-parse", "--abbrev-ref", "HEAD")
    fast_history(repo, main, 60, prefix="filler")
    repo.git("reset", "-q", "--hard", main)
    touched = repo.commit("Stop closing the buffer", {"tests/test_testing_logging.py": "1\n"})
    for i in range(3):
        repo.commit(f"Update testing.py for logging ({i})", {f"src/testing{i}.py": "x\n"})
    assert cli_in(repo, "backfill").code == 0
    results = cli_in(repo, "search", "test_testing_logging.py", "--json").json("search")["results"]
    assert results[0]["id"] == f"c:{touched[:7]}", [r["title"] for r in results]
