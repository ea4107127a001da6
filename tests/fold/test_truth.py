"""The truth model on small real repositories: the builtin digest names only paths that exist
now (renames followed, deleted files forgotten), resolves reverts by sha (a reverted revert is
no gotcha, a re-land is said), takes the latest release from the tags, recognises commit
conventions for what they are, counts top-level files as code, lets a session's decision
outrank a mined line, marks mined lines; and the fold, verify and the agent files agree,
whichever merger wrote the lines."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from gitvault.fold import mine
from gitvault.resolve import resolve
from gitvault.vault import statedir
from tests.support.memory import (
    StandIn,
    Step,
    cli_in,
    dated_history,
    digest_answer,
    digest_categories,
    digest_meta_body,
    set_config,
)
from tests.support.repos import NO_HOOKS, Repo

DAY = 86_400


def quiet_commit(repo: Repo, subject: str, files: dict[str, str], body: str = "") -> str:
    """A commit no hook notes (the history a backfill finds)."""
    for rel, content in files.items():
        repo.write(rel, content)
    repo.git("add", "--", *files)
    message = f"{subject}\n\n{body}" if body else subject
    repo.git(*NO_HOOKS, "commit", "-q", "-m", message)
    return repo.head()


def quiet(repo: Repo, *args: str) -> str:
    repo.git(*NO_HOOKS, *args)
    return repo.head()


def backfill(repo: Repo) -> None:
    result = cli_in(repo, "backfill")
    assert result.code == 0, result


def fold(repo: Repo, *args: str) -> dict[str, list[str]]:
    result = cli_in(repo, "fold", "--merger", "builtin", *args)
    assert result.code == 0, result
    return digest_categories(digest_meta_body(repo)[1])


def facts(cats: dict[str, list[str]]) -> list[str]:
    return [ln for lines in cats.values() for ln in lines if ln != "- (none yet)"]


def verify(repo: Repo) -> dict[str, dict[str, object]]:
    result = cli_in(repo, "verify", "--json")
    return {str(e["line"]): e for e in result.json("verify")["lines"]}


def assert_verify_clean(repo: Repo) -> None:
    result = cli_in(repo, "verify")
    assert result.code == 0, result


def short(sha: str) -> str:
    return sha[:7]


# --------------------------------------------------------------------------- paths now


def test_moved_and_deleted_files_are_never_named_and_the_new_name_is(repo: Repo) -> None:
    for i in range(4):
        quiet_commit(repo, f"Fix the parser crash number {i}", {"pkg/parser.py": f"v{i}\n"})
        quiet_commit(repo, f"Fix the packaging bug number {i}", {"debian/control": f"v{i}\n"})
        quiet_commit(repo, f"Fix the tox env bug {i}", {"tox.ini": f"v{i}\n"})
    quiet(repo, "mv", "pkg", "src")
    quiet(repo, "rm", "-q", "-r", "debian", "tox.ini")
    quiet(repo, "commit", "-q", "-m", "Move the package under src/, drop debian/ and tox.ini")
    for i in range(3):
        quiet_commit(repo, f"Fix the parser regression {i}", {"src/parser.py": f"w{i}\n"})
    backfill(repo)
    lines = facts(fold(repo))
    text = "\n".join(lines)
    for gone in ("pkg/parser.py", "debian/", "tox.ini", "pkg/"):
        assert gone not in text, (gone, text)
    # the moved file is named as it is now, counted as `git log -- src/parser.py` counts it
    assert any(ln.startswith("- src/parser.py needed 3 fixes") for ln in lines), text
    assert_verify_clean(repo)


# --------------------------------------------------------------------------- reverts


def test_reverts_are_resolved_by_sha_and_followed_through_rereverts_and_relands(
    repo: Repo,
) -> None:
    old_bump = quiet_commit(repo, "Bump the walker timeout", {"walker.py": "TIMEOUT = 5\n"})
    quiet_commit(repo, "Document the walker", {"README.md": "walker\n"})
    tabs = quiet_commit(repo, "Teach the parser tabs", {"parser.py": "TABS = True\n"})
    quiet(repo, "revert", "--no-edit", tabs)
    revert_tabs = repo.head()
    quiet(repo, "revert", "--no-edit", revert_tabs)  # the revert reverted: tabs are back
    csv = quiet_commit(repo, "Export CSV files", {"export.py": "CSV = 1\n"})
    quiet(repo, "revert", "--no-edit", csv)
    revert_csv = repo.head()
    quiet(repo, "cherry-pick", csv)  # the same change again: it re-landed
    relanded = repo.head()
    cache = quiet_commit(repo, "Cache the object index", {"index.py": "CACHE = 1\n"})
    quiet(repo, "revert", "--no-edit", cache)
    revert_cache = repo.head()
    # a later commit with the same subject: the revert names the old one by its sha
    quiet_commit(repo, "Bump the walker timeout", {"walker.py": "TIMEOUT = 9\n"})
    revert_old = quiet_commit(
        repo,
        'Revert "Bump the walker timeout"',
        {"walker.py": "TIMEOUT = 7\n"},
        body=f"This reverts commit {old_bump}.\n\nThe old walker hung on NFS.",
    )
    backfill(repo)
    gotchas = fold(repo)["Gotchas"]
    text = "\n".join(gotchas)
    assert "Teach the parser tabs" not in text  # reverted, then the revert reverted
    assert short(revert_tabs) not in text
    (csv_line,) = [ln for ln in gotchas if "Export CSV files" in ln]
    assert f"c:{short(revert_csv)}" in csv_line and f"c:{short(csv)}" in csv_line
    assert "re-landed" in csv_line and short(relanded) in csv_line
    (cache_line,) = [ln for ln in gotchas if "Cache the object index" in ln]
    assert f"c:{short(revert_cache)}" in cache_line and f"c:{short(cache)}" in cache_line
    (walker_line,) = [ln for ln in gotchas if "Bump the walker timeout" in ln]
    assert f"c:{short(revert_old)}" in walker_line and f"c:{short(old_bump)}" in walker_line
    assert "The old walker hung on NFS" in walker_line  # the revert's own reason
    assert_verify_clean(repo)


def test_a_revert_gotcha_is_not_stale_and_verify_fix_and_the_next_fold_agree(repo: Repo) -> None:
    """commit X; git revert HEAD; fold; verify: the gotcha is true (it cites the revert and the
    reverted commit). A line that goes stale later is removed by verify --fix, and the next
    fold, applying the same model, does not write it back."""
    for i in range(3):
        repo.commit(f"Fix the lexer crash {i}", {"lexer.py": f"L = {i}\n"})
    x = repo.commit("Speed up the lexer with a table", {"lexer.py": "TABLE = 1\n"})
    repo.git("revert", "--no-edit", "HEAD")
    cats = fold(repo)
    (gotcha,) = [ln for ln in cats["Gotchas"] if "Speed up the lexer" in ln]
    assert f"c:{short(x)}" in gotcha
    assert_verify_clean(repo)
    hot = [ln for ln in cats["Gotchas"] if ln.startswith("- lexer.py needed")]
    assert hot, cats["Gotchas"]
    # lexer.py goes away: the hot-spot line is stale now
    repo.git("rm", "-q", "lexer.py")
    repo.git("commit", "-q", "-m", "Drop the lexer")
    found = verify(repo)
    assert found[hot[0]]["status"] == "stale"
    assert "lexer.py no longer exists" in found[hot[0]]["reasons"]  # type: ignore[operator]
    result = cli_in(repo, "verify", "--fix")
    assert result.code == 0, result
    assert hot[0] not in digest_meta_body(repo)[1]
    repo.commit("Add the new tokenizer", {"tokenizer.py": "T = 1\n"})
    after = fold(repo)
    assert not any("lexer.py needed" in ln for ln in facts(after))
    assert_verify_clean(repo)


# --------------------------------------------------------------------------- releases


def test_the_latest_release_comes_from_the_tags_with_pre_releases_named_apart(
    repo: Repo,
) -> None:
    quiet_commit(repo, "Release version 0.9", {"VERSION": "0.9\n"})  # a subject, no tag
    quiet_commit(repo, "Add the CLI", {"cli.py": "1\n"})
    tag(repo, "v1.0", "2030-01-01T00:00:00")
    quiet_commit(repo, "Add colours", {"cli.py": "2\n"})
    tag(repo, "v1.1", "2030-01-02T00:00:00")
    quiet_commit(repo, "Add themes", {"cli.py": "3\n"})
    tag(repo, "v1.2-rc1", "2030-01-03T00:00:00")
    quiet_commit(repo, "Add plugins", {"cli.py": "4\n"})
    backfill(repo)
    (line,) = [ln for ln in fold(repo)["State"] if "release" in ln.lower()]
    assert line.startswith("- Latest release: v1.1 "), line
    assert "v1.2-rc1 is a pre-release" in line
    since = int(repo.git("rev-list", "--count", "--no-merges", "v1.1..HEAD"))
    assert f"; {since} commits since" in line
    assert "0.9" not in line
    assert_verify_clean(repo)


def tag(repo: Repo, name: str, when: str, commit: str = "HEAD") -> None:
    """An annotated tag made at `when` (its creatordate)."""
    repo.git("tag", "-a", "-m", name, name, commit, env={"GIT_COMMITTER_DATE": when})


def test_a_release_tagged_on_a_branch_of_its_own_cites_where_it_meets_head(repo: Repo) -> None:
    base = quiet_commit(repo, "Add the core", {"core.py": "1\n"})
    quiet(repo, "switch", "-q", "-c", "stable")
    quiet_commit(repo, "Bump the version to 2.0", {"VERSION": "2.0\n"})
    tag(repo, "2.0", "2030-01-01T00:00:00")
    quiet(repo, "switch", "-q", "main")
    quiet_commit(repo, "Add the plugin loader", {"plugins.py": "1\n"})
    backfill(repo)
    (line,) = [ln for ln in fold(repo)["State"] if "release" in ln.lower()]
    assert line.startswith("- Latest release: 2.0 ") and f"c:{short(base)}" in line, line
    assert "1 commits since" in line
    assert_verify_clean(repo)


def _release_line(cats: dict[str, list[str]]) -> str:
    (line,) = [ln for ln in cats["State"] if "release" in ln.lower()]
    return line


def _release_memo(repo: Repo) -> str:
    path = statedir.path(resolve(repo.path), statedir.MINED)
    with closing(sqlite3.connect(path)) as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = 'release'").fetchone()
    return str(row[0]) if row else ""


def _plant_release_memo(repo: Repo, memo: str) -> None:
    path = statedir.path(resolve(repo.path), statedir.MINED)
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('release', ?)", (memo,))
        conn.commit()


def test_commits_since_the_release_are_brought_forward_and_asked_afresh_when_it_is_merged(
    repo: Repo,
) -> None:
    base = quiet_commit(repo, "Add the core", {"core.py": "1\n"})
    quiet(repo, "switch", "-q", "-c", "stable")
    released = quiet_commit(repo, "Bump the version to 2.0", {"VERSION": "2.0\n"})
    tag(repo, "2.0", "2030-01-01T00:00:00")
    quiet(repo, "switch", "-q", "main")
    quiet_commit(repo, "Add the plugin loader", {"plugins.py": "1\n"})
    backfill(repo)
    line = _release_line(fold(repo))
    assert f"c:{short(base)}" in line and "; 1 commits since" in line, line
    memo = _release_memo(repo).split()
    assert memo == [released, repo.head(), base, "1"], memo
    # What the fold remembers is what it reads next time: a planted count shows the next fold
    # counts only the new commits on top of it, without asking git about the whole history.
    _plant_release_memo(repo, " ".join([*memo[:3], "1000"]))
    quiet_commit(repo, "Add the plugin registry", {"registry.py": "1\n"})
    quiet_commit(repo, "Load plugins lazily", {"plugins.py": "2\n"})
    backfill(repo)
    line = _release_line(fold(repo))
    assert f"c:{short(base)}" in line and "; 1002 commits since" in line, line
    # The release's branch merged: where they meet moved (to the tagged commit itself), so git
    # is asked again, whatever was remembered.
    quiet(repo, "merge", "-q", "--no-ff", "-m", "Merge branch 'stable'", "stable")
    quiet_commit(repo, "Document the plugins", {"PLUGINS.md": "1\n"})
    backfill(repo)
    line = _release_line(fold(repo))
    since = int(repo.git("rev-list", "--count", "--no-merges", f"{released}..HEAD"))
    assert f"c:{short(released)}" in line and f"; {since} commits since" in line, line
    assert _release_memo(repo).split() == [released, repo.head(), released, str(since)]
    assert _release_line(fold(repo, "--rebuild")) == line


def test_commits_since_the_release_are_asked_afresh_after_head_moved_back(repo: Repo) -> None:
    quiet_commit(repo, "Add the core", {"core.py": "1\n"})
    released = quiet_commit(repo, "Add the shell", {"shell.py": "1\n"})
    tag(repo, "v1.0", "2030-01-01T00:00:00")
    quiet_commit(repo, "Add colours", {"shell.py": "2\n"})
    quiet_commit(repo, "Add themes", {"shell.py": "3\n"})
    backfill(repo)
    assert "; 2 commits since" in _release_line(fold(repo))
    _plant_release_memo(repo, f"{released} {repo.head()} {released} 1000")
    quiet(repo, "reset", "-q", "--hard", "HEAD~1")  # the remembered HEAD is no ancestor now
    quiet_commit(repo, "Add a dark theme", {"dark.py": "1\n"})
    backfill(repo)
    assert "; 2 commits since" in _release_line(fold(repo))


def test_verify_flags_a_release_line_that_is_not_the_newest_tag(repo: Repo) -> None:
    first = quiet_commit(repo, "Add the core", {"core.py": "1\n"})
    tag(repo, "v3.0", "2030-01-01T00:00:00")
    quiet_commit(repo, "Add the shell", {"shell.py": "1\n"})
    tag(repo, "v3.1", "2030-01-02T00:00:00")
    backfill(repo)
    _write_digest(repo, [f"- The latest release is v3.0 (c:{short(first)})"])
    (entry,) = verify(repo).values()
    assert entry["status"] == "stale" and "v3.1" in " ".join(entry["reasons"])  # type: ignore[arg-type]


# --------------------------------------------------------------------------- conventions


CONVENTIONS = {
    "conventional": [
        "feat(parser): accept tabs",
        "fix: close the file",
        "feat: add colours",
        "docs: explain themes",
        "fix(cli): exit codes",
    ],
    "area": [
        "parser: accept tabs",
        "t/: cover the tab parser",
        "doc: explain themes",
        "builtin/add: honour --quiet",
        "parser: close the file",
    ],
    "capitalised": [
        "Accept tabs in the parser",
        "Close the file after reading",
        "Add colours",
        "Explain themes in the docs",
        "Fix the exit codes",
    ],
}


@pytest.mark.parametrize("style", sorted(CONVENTIONS))
def test_commit_conventions_are_recognised_for_what_they_are(repo: Repo, style: str) -> None:
    subjects = CONVENTIONS[style] * 6 + ["Merge stuff", "wip"]  # 30 in the style, 2 not
    dated_history(repo, [(f"{s} {i}", [f"src/f{i % 4}.py"]) for i, s in enumerate(subjects)])
    conventions = "\n".join(fold(repo)["Conventions"])
    total = len(subjects) + 1  # the fixture's first commit
    if style == "conventional":
        assert f"Conventional Commits (30 of the last {total}:" in conventions, conventions
        assert "`area: summary`" not in conventions
    elif style == "area":
        assert f"`area: summary` (30 of the last {total};" in conventions, conventions
        assert "Conventional Commits" not in conventions
        assert '"parser: …"' in conventions
    else:
        log = repo.git("log", "--no-merges", "--format=%s").splitlines()
        capital = sum(1 for s in log if s[:1].isupper())
        assert (
            "capitalised imperative sentences without a type prefix "
            f"({capital} of the last {total};" in conventions
        ), conventions
        assert "Conventional Commits" not in conventions and "area: summary" not in conventions


def test_no_style_line_when_no_style_holds_for_most_subjects(repo: Repo) -> None:
    mixed = ["feat: a", "parser: b", "lower case c", "Upper case d", "fix: e", "lower f"] * 3
    dated_history(repo, [(f"{s} {i}", [f"f{i}.py"]) for i, s in enumerate(mixed)])
    conventions = "\n".join(fold(repo)["Conventions"])
    assert "Commit subjects" not in conventions


# --------------------------------------------------------------------------- code, people


def test_top_level_files_count_as_code(repo: Repo) -> None:
    history = []
    for i in range(5):
        history.append((f"diff: fix the rename crash {i}", ["diff.c", "t/t4001-diff-rename.sh"]))
        history.append((f"refs: add a backend {i}", ["refs.c", "refs/files-backend.c"]))
    for i in range(6):
        history.append((f"build: tune the test run {i}", ["Makefile", "t/Makefile"]))
    dated_history(repo, history)
    cats = fold(repo)
    conventions = "\n".join(cats["Conventions"])
    assert "Tests live in t/ (" in conventions, conventions
    assert "100% of 6 commits to Makefile" in conventions, conventions
    assert "Tests are named after" not in conventions  # t/Makefile tests no module "Makefile"
    assert any(ln.startswith("- diff.c needed 5 fixes") for ln in cats["Gotchas"]), cats
    layout = "\n".join(cats["Architecture"])
    assert "the top level (.c)" in layout and "refs/ (.c)" in layout


def test_a_sessions_decision_outranks_a_mined_line_on_the_same_subject(repo: Repo) -> None:
    history = [(f"Add feature {i}", [f"src/app/m{i % 3}.py", "CHANGES.md"]) for i in range(12)]
    dated_history(repo, history)
    before = "\n".join(fold(repo)["Conventions"])
    assert "changelog entry in CHANGES.md" in before
    text = (
        "## Summary\nRelease process.\n\n## Key Decisions\n"
        "- Changelog entries move to CHANGES.md only at release time\n\n"
        "## Next Steps\n- (none)\n"
    )
    result = cli_in(repo, "save", "-", "--title", "Release process", stdin=text)
    assert result.code == 0, result
    cats = fold(repo)
    assert any("Changelog entries move to CHANGES.md" in ln for ln in cats["Decisions"])
    assert "changelog entry in CHANGES.md" not in "\n".join(cats["Conventions"])


def test_mined_lines_say_so_and_a_persons_lines_do_not(repo: Repo) -> None:
    dated_history(repo, [(f"Fix the parser crash {i}", ["src/parser.py"]) for i in range(6)])
    text = (
        "## Summary\nParser work.\n\n## Key Decisions\n- Keep the parser free of regexes\n\n"
        "## Next Steps\n- (none)\n"
    )
    assert cli_in(repo, "save", "-", "--title", "Parser", stdin=text).code == 0
    cats = fold(repo)
    (decision,) = cats["Decisions"]
    assert mine.MINED not in decision
    mined = [ln for ln in facts(cats) if "(s:" not in ln and ", s:" not in ln]
    assert mined and all(f"; {mine.MINED} (c:" in ln for ln in mined), mined


# --------------------------------------------------------------------------- model mergers


def test_a_model_mergers_false_lines_are_dropped_before_the_commit(
    repo: Repo, tmp_path: Path
) -> None:
    """A scripted merger (fold.command) answers with lines of its own choosing, some false:
    only the true ones are committed, each dropped one is reported with why, verify then has
    nothing to say and CLAUDE.md carries none of them."""
    kept = repo.commit("Read the config", {"src/config.py": "def load_config():\n    return 1\n"})
    gone = repo.commit("Add the old exporter", {"src/old_export.py": "X = 1\n"})
    reverted = repo.commit("Parse tabs", {"src/tabs.py": "TABS = 1\n"})
    repo.git("revert", "--no-edit", reverted)
    revert = repo.head()
    repo.git("rm", "-q", "src/old_export.py")
    repo.commit("Drop the old exporter", {})
    repo.git("tag", "v2.0")
    lines = {
        "true": f"- Config is read by `load_config` in src/config.py (c:{short(kept)})",
        "revert": f"- The tab parser was reverted, it broke YAML (c:{short(revert)}, "
        f"c:{short(reverted)})",
        "gone": f"- Exports go through src/old_export.py (c:{short(gone)})",
        "undone": f"- Tabs are parsed (c:{short(reverted)})",
        "release": f"- The latest release is v1.0 (c:{short(kept)})",
        "symbol": f"- Settings come from `vanished_function` (c:{short(kept)})",
        "dangling": "- Something nobody recorded (c:deadbee)",
    }
    answer = digest_answer(
        {
            "Architecture": [lines["true"], lines["gone"]],
            "Conventions": [lines["symbol"], lines["dangling"]],
            "Gotchas": [lines["revert"], lines["undone"]],
            "State": [lines["release"]],
        }
    )
    model = StandIn(tmp_path / "model", name="scripted-model")
    model.script(Step(answer=answer))
    set_config(repo, "fold", merger="command")
    repo.git("config", "gitvault.fold.command", str(model.exe))  # this clone's own: trusted
    result = cli_in(repo, "fold")
    assert result.code == 0, result
    body = digest_meta_body(repo)[1]
    assert lines["true"] in body and lines["revert"] in body
    for name in ("gone", "undone", "release", "symbol", "dangling"):
        assert lines[name] not in body, name
        assert f"dropped: {_category_of(name)}: {lines[name]} [" in result.err, (name, result.err)
    assert "src/old_export.py no longer exists" in result.err
    assert f"c:{short(reverted)} was reverted by {short(revert)}" in result.err
    assert "the latest release is v2.0" in result.err
    assert_verify_clean(repo)
    assert cli_in(repo, "patch").code == 0
    claude_md = (repo.path / "CLAUDE.md").read_text()
    assert lines["revert"] in claude_md
    assert lines["symbol"] not in claude_md and lines["undone"] not in claude_md


def _category_of(name: str) -> str:
    return {
        "gone": "Architecture",
        "symbol": "Conventions",
        "dangling": "Conventions",
        "undone": "Gotchas",
        "release": "State",
    }[name]


def test_the_agent_files_leave_out_what_verify_flags(repo: Repo) -> None:
    dated_history(repo, [(f"Fix the cache crash {i}", ["src/cache.py"]) for i in range(4)])
    fold(repo)
    assert cli_in(repo, "patch").code == 0
    claude_md = repo.path / "CLAUDE.md"
    assert "src/cache.py needed 4 fixes" in claude_md.read_text()
    repo.git("rm", "-q", "src/cache.py")
    repo.commit("Drop the cache", {})
    assert "src/cache.py needed 4 fixes" in claude_md.read_text()  # no fold since
    assert cli_in(repo, "verify").code == 1  # the hot-spot line is stale now
    assert "src/cache.py" not in claude_md.read_text()  # and the section leaves it out
    assert cli_in(repo, "patch").code == 0
    assert "src/cache.py" not in claude_md.read_text()
    assert cli_in(repo, "verify", "--fix").code == 0  # removed in one commit: nothing left
    assert "src/cache.py" not in claude_md.read_text()
    assert "src/cache.py" not in digest_meta_body(repo)[1]


def _write_digest(repo: Repo, lines: list[str]) -> None:
    from gitvault.resolve import resolve
    from gitvault.vault import frontmatter, layout
    from gitvault.vault.store import Vault

    vault = Vault(resolve(repo.path))
    body = "# Project memory\n\n## Architecture\n" + "\n".join(lines) + "\n"
    for name in ("Decisions", "Conventions", "Gotchas", "State", "Next steps"):
        body += f"\n## {name}\n- (none yet)\n"
    meta = {"kind": "digest", "watermark": vault.require_tip(), "merger": "builtin"}
    vault.commit({layout.DIGEST: frontmatter.render(meta, body).encode()}, "fold test digest")


def test_subjects_git_writes_are_no_ones_convention(repo: Repo) -> None:
    """`git revert` writes `Revert "…"`: a history of lower-case subjects and their reverts has
    no capitalised convention (a newcomer's digest said so, counting the reverts)."""
    history = [(f"tweak the parser {i}", [f"src/f{i % 3}.py"]) for i in range(6)]
    history += [(f'Revert "tweak the parser {i}"', [f"src/f{i % 3}.py"]) for i in range(8)]
    dated_history(repo, history)
    conventions = "\n".join(fold(repo)["Conventions"])
    assert "capitalised" not in conventions, conventions


def test_files_under_dot_folders_are_not_the_projects_code(repo: Repo) -> None:
    """The agent files gitvault writes (.claude/skills/…) and tools' settings (.github/) are
    not where the project's code changes."""
    history = []
    for i in range(6):
        history.append((f"Tune the skills {i}", [".claude/skills/save/SKILL.md", ".mcp.json"]))
        history.append((f"Tune CI {i}", [".github/workflows/ci.yml"]))
    history += [(f"Parse tabs {i}", ["src/app/parser.py"]) for i in range(3)]
    dated_history(repo, history)
    layout = "\n".join(fold(repo)["Architecture"])
    assert ".claude/" not in layout and ".github/" not in layout, layout
    assert "src/app/" in layout, layout
