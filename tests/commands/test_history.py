"""A history a person can read: log shows the project commit and its date,
show takes what a digest cites and git revisions, ambiguity is listed, options work wherever
they are typed, every --json is the envelope, and the small things a new user trips over."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitvault.memory.clean import slugify
from tests.support.memory import cli_in, session_text
from tests.support.repos import Repo, cli, cli_proc, make_repo

OLD = {"GIT_COMMITTER_DATE": "2021-03-04T05:06:07Z", "GIT_AUTHOR_DATE": "2021-03-04T05:06:07Z"}


def test_log_shows_the_project_commit_and_its_date(repo: Repo) -> None:
    old = repo.commit("feat: from long ago", env=OLD)
    entries = cli_in(repo, "log", "--kind", "note", "--json").json("log")
    assert entries[0]["project_commit"] == old
    assert entries[0]["id"] == f"c:{old[:7]}"
    assert entries[0]["date"].startswith("2021-03-04T05:06:07")
    assert entries[0]["time"] != entries[0]["date"]  # written now, about a commit of 2021
    text = cli_in(repo, "log")
    assert f"c:{old[:7]}" in text.out and "2021-03-04" in text.out


def test_since_filters_on_the_commit_date_and_rejects_nonsense(repo: Repo) -> None:
    old = repo.commit("feat: old work", env=OLD)
    new = repo.commit("feat: new work")
    ids = [e["id"] for e in cli_in(repo, "log", "--since", "2022-01-01", "--json").json("log")]
    assert f"c:{new[:7]}" in ids and f"c:{old[:7]}" not in ids
    bad = cli_in(repo, "log", "--since", "yesterday-ish nonsense", "--json")
    assert bad.code == 1
    assert "cannot read the date" in bad.json("error")["message"]


def test_sessions_are_listed_by_title_in_save_order(repo: Repo) -> None:
    for title in ("Zebra work", "Alpha work", "Middle work"):
        assert cli_in(repo, "save", stdin=session_text(title)).code == 0
    entries = cli_in(repo, "log", "--kind", "session", "--json").json("log")
    assert [e["title"] for e in entries] == ["Middle work", "Alpha work", "Zebra work"]


def test_show_takes_citations_revisions_and_paths(repo: Repo) -> None:
    first = repo.commit("feat: first")
    second = repo.commit("feat: second")
    repo.git("branch", "topic", first)
    for ident, sha in (
        (f"c:{second[:7]}", second),
        (second[:8], second),
        (second, second),
        ("HEAD", second),
        ("HEAD~1", first),
        ("topic", first),
    ):
        shown = cli_in(repo, "show", ident, "--json")
        assert shown.code == 0, (ident, shown)
        data = shown.json("show")
        assert data["meta"]["sha"] == sha, ident
        assert data["id"] == f"c:{sha}"
    saved = cli_in(repo, "save", "--json", stdin=session_text("Show me")).json("save")
    for ident in (f"s:{saved['slug']}", saved["slug"], saved["path"], "show-me"):
        data = cli_in(repo, "show", ident, "--json").json("show")
        assert data["path"] == saved["path"], ident
    missing = cli_in(repo, "show", "c:0000000", "--json")
    assert missing.code == 1 and missing.json("error")["hint"]


@pytest.mark.parametrize("index", ["none", "stale", "current"])
def test_an_ambiguous_abbreviation_lists_the_candidates(repo: Repo, index: str) -> None:
    """Notes of commits git cannot name are found through the search index when it is built
    from the vault's tip, and by reading the vault's folders otherwise: the same answer."""
    from gitvault.memory.search import Index
    from gitvault.resolve import resolve
    from gitvault.vault import frontmatter, layout
    from gitvault.vault.store import Vault

    loc = resolve(repo.path)
    if index == "stale":
        Index(loc).update()  # built before the notes below: never trusted for them
    # Two notes whose commits share a prefix (commits rebased away: only their notes remain).
    shas = ["0827" + "a" * 36, "0827" + "b" * 36]
    vault = Vault(loc)
    for sha in shas:
        text = frontmatter.render({"kind": "note", "sha": sha}, "# gone commit\n")
        vault.commit({layout.note_path(sha, 1_700_000_000): text.encode()}, f"note {sha[:7]} x")
    if index == "current":
        Index(loc).update()
        assert sorted(Index(loc).noted("0827") or []) == sorted(
            layout.note_path(sha, 1_700_000_000) for sha in shas
        )
    else:
        assert Index(loc).noted("0827") is None
    result = cli_in(repo, "show", "0827")
    assert result.code == 1
    assert "ambiguous" in result.err
    assert f"c:{shas[0]}" in result.err and f"c:{shas[1]}" in result.err
    assert cli_in(repo, "show", "0827a").code == 0  # one more digit decides


def test_a_citation_is_never_read_as_a_ref_of_the_same_name(repo: Repo) -> None:
    """c:<hex> names a commit by its sha: a branch whose name is those hex digits (pointing
    at another commit) never answers for it, though git would resolve the name to it."""
    first = repo.commit("feat: first")
    second = repo.commit("feat: second")
    prefix = second[:7]
    repo.git("branch", prefix, first)  # a branch named like the second commit's prefix
    data = cli_in(repo, "show", f"c:{prefix}", "--json").json("show")
    assert data["meta"]["sha"] == second
    other = next(c for c in "0123456789abcdef" if not first.startswith(c))
    repo.git("branch", f"{other}{first[1:7]}", first)  # a name no commit's sha starts with
    missing = cli_in(repo, "show", f"c:{other}{first[1:7]}", "--json")
    assert missing.code == 1, missing


def test_repo_option_works_after_the_command(repo: Repo, tmp_path: Path) -> None:
    sha = repo.commit("feat: where is it")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for args in (
        ("log", "--repo", str(repo.path), "--json"),
        ("--repo", str(repo.path), "log", "--json"),
        ("log", "-C", str(repo.path), "--json"),
    ):
        result = cli(*args, cwd=elsewhere)
        assert result.code == 0, (args, result)
        assert result.json("log")[0]["project_commit"] == sha
    found = cli("search", "where", "--repo", str(repo.path), "--json", cwd=elsewhere)
    assert found.code == 0, found


def test_json_errors_use_the_envelope_outside_a_repository(tmp_path: Path) -> None:
    outside = tmp_path / "nowhere"
    outside.mkdir()
    for args in (("status", "--json"), ("log", "--json"), ("search", "x", "--json")):
        result = cli_proc(*args, cwd=outside, env={"GITVAULT_REPO": ""})
        assert result.code == 1, (args, result)
        doc = json.loads(result.out)
        assert doc["gitvault"] == 1 and doc["kind"] == "error"
        assert "not inside a git repository" in doc["data"]["message"]
        assert doc["data"]["exit_code"] == 1
        assert "error" in result.err  # a person still reads it on stderr


def test_a_unicode_title_keeps_its_letters(repo: Repo) -> None:
    assert slugify("Ünïcødé") == "unicode"
    saved = cli_in(repo, "save", "--json", stdin=session_text("Ünïcødé")).json("save")
    assert saved["slug"].endswith("-unicode")


def test_the_demo_ends_with_the_next_step() -> None:
    from gitvault import demo

    lines: list[str] = []
    demo.run(lines.append, keep=False)
    text = "\n".join(lines)
    assert lines[-2].startswith("next:") or lines[-1].strip().startswith("`gitvault search")
    assert "gitvault install" in "\n".join(lines[-3:])
    # It never tells the user to audit a folder it deletes.
    assert "git -C" not in text


def test_uninstall_leaves_no_empty_settings(repo_factory: object, tmp_path: Path) -> None:
    assert callable(repo_factory)
    created = repo_factory("created", claude=True)
    settings = created.path / ".claude" / "settings.json"
    assert settings.is_file()
    assert created.gv("uninstall").code == 0
    assert not settings.exists()  # gitvault created it and nothing else is left
    own = make_repo(tmp_path / "own", install=False)
    original = b'{\n    "model": "opus"   ,\n  "env": {}\n}\n'
    (own.path / ".claude").mkdir()
    (own.path / ".claude" / "settings.json").write_bytes(original)
    assert own.gv("install").code == 0
    assert (own.path / ".claude" / "settings.json").read_bytes() != original
    assert own.gv("uninstall").code == 0
    assert (own.path / ".claude" / "settings.json").read_bytes() == original  # byte for byte
