"""Per-commit notes through the real hook shims: plain commits, amend, rebase, cherry-pick,
merges, detached HEAD, --no-verify, a 200-commit rebase, idempotence, caps, determinism."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitvault.notes import commits
from gitvault.notes import render as notes
from gitvault.notes.drain import drain
from gitvault.resolve import resolve
from tests.support.repos import Repo, fast_history, validate_note

SECRET = "DIFF-CONTENT-MUST-NOT-LEAK-7f3a9c"


def test_plain_commit_writes_one_note_with_metadata_and_no_diff(repo: Repo) -> None:
    before = repo.vault_log()
    sha = repo.commit(
        "Add the parser\n\nThe parser reads the config file.\nSecond body line.",
        files={"src/parser.py": f"x = '{SECRET}'\n" * 3, "docs/notes.txt": "a\nb\n"},
    )
    after = repo.vault_log()
    assert len(after) == len(before) + 1, "one vault commit per note"
    assert after[0][1] == f"note {sha[:7]} Add the parser"

    ct = int(repo.git("show", "-s", "--format=%ct", sha))
    day = datetime.fromtimestamp(ct, tz=UTC)
    path = f"notes/{day:%Y/%m/%d}/{sha}.md"
    assert repo.note_paths()[sha] == path
    # The vault commit touches exactly that one file.
    changed = repo.git("diff-tree", "--no-commit-id", "--name-only", "-r", after[0][0]).splitlines()
    assert changed == [path]

    text = repo.note(sha)
    assert text is not None
    meta = validate_note(text)
    parent = repo.git("rev-parse", f"{sha}^")
    assert meta["sha"] == sha
    assert meta["parents"] == [parent]
    assert meta["branch"] == "main"
    assert meta["worktree"] == "main"
    assert meta["author"] == "Test Dev <dev@example.com>"
    assert meta["source"] == "hook"
    assert meta["files_changed"] == 2
    assert meta["insertions"] == 5 and meta["deletions"] == 0
    assert "replaces" not in meta
    assert "# Add the parser\n" in text
    assert "The parser reads the config file.\nSecond body line." in text
    assert "- src/parser.py (+3 -0)" in text
    assert "- docs/notes.txt (+2 -0)" in text
    # Never any diff content, anywhere on the vault branch.
    assert SECRET not in text
    assert repo.run("grep", "-q", "-F", SECRET, repo.branch_name, check=False).returncode == 1
    assert SECRET.encode() not in repo.run("log", "-p", repo.branch_name).stdout


def test_amend_note_records_the_replaced_commit(repo: Repo) -> None:
    first = repo.commit("Draft subject", files={"a.txt": "1\n"})
    repo.write("a.txt", "1\n2\n")
    repo.git("add", "a.txt")
    repo.run("commit", "-q", "--amend", "-m", "Final subject")
    amended = repo.head()
    assert amended != first
    meta = repo.note_meta(amended)
    assert meta["replaces"] == [first]
    assert "# Final subject" in (repo.note(amended) or "")
    # The replaced commit keeps its own note: the log only grows.
    assert first in repo.note_paths()


def test_rebase_notes_record_what_they_replace(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "topic")
    old = [repo.commit(f"topic {i}") for i in range(3)]
    repo.git("checkout", "-q", "main")
    repo.commit("main moves on")
    repo.git("checkout", "-q", "topic")
    repo.git("rebase", "-q", "main")
    new = repo.git("rev-list", "--reverse", "main..topic").splitlines()
    assert len(new) == 3 and not set(new) & set(old)
    for before, after in zip(old, new, strict=True):
        meta = repo.note_meta(after)
        assert meta["replaces"] == [before]
        assert meta["branch"] == "topic"
    notes_now = repo.note_paths()
    assert set(old) <= set(notes_now), "notes of the replaced commits are kept"


def test_cherry_pick_is_noted(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "side")
    picked = repo.commit("Fix on side", files={"fix.txt": "fix\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("main moves first", files={"m.txt": "m\n"})  # so the pick gets a new parent
    repo.git("cherry-pick", picked)
    new = repo.head()
    assert new != picked
    meta = repo.note_meta(new)
    assert meta["branch"] == "main"
    assert "# Fix on side" in (repo.note(new) or "")


def test_merge_commit_via_post_merge(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "feature")
    feat = repo.commit("Feature work", files={"feature.txt": "f\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("Main work", files={"main.txt": "m\n"})
    count_before = len(repo.vault_log())
    repo.git("merge", "-q", "--no-ff", "-m", "Merge feature", "feature")
    merge = repo.head()
    meta = repo.note_meta(merge)
    assert len(meta["parents"]) == 2
    assert meta["parents"][1] == feat
    assert len(repo.vault_log()) == count_before + 1
    assert "# Merge feature" in (repo.note(merge) or "")


def test_fast_forward_merge_writes_no_extra_note(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "ff")
    ff = repo.commit("On ff")
    repo.git("checkout", "-q", "main")
    count = len(repo.vault_log())
    repo.git("merge", "-q", "--ff-only", "ff")
    assert repo.head() == ff
    repo.gv("log")  # drains anything spooled
    assert len(repo.vault_log()) == count, (
        "a fast-forward brings commits noted where they were made"
    )


def test_conflicted_merge_concluded_by_commit(repo: Repo) -> None:
    repo.commit("base", files={"c.txt": "base\n"})
    repo.git("checkout", "-q", "-b", "other")
    repo.commit("other side", files={"c.txt": "other\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("main side", files={"c.txt": "main\n"})
    proc = repo.run("merge", "other", check=False)
    assert proc.returncode != 0, "the merge must conflict"
    repo.write("c.txt", "resolved\n")
    repo.git("add", "c.txt")
    repo.git("commit", "-q", "--no-edit")
    merge = repo.head()
    meta = repo.note_meta(merge)
    assert len(meta["parents"]) == 2


def test_detached_head_commit_is_noted_without_branch(repo: Repo) -> None:
    repo.git("checkout", "-q", "--detach")
    sha = repo.commit("Detached work")
    meta = repo.note_meta(sha)
    assert "branch" not in meta
    assert meta["worktree"] == "main"


def test_no_verify_commit_is_noted(repo: Repo) -> None:
    hook = repo.git_dir / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho blocked >&2\nexit 1\n")
    hook.chmod(0o755)
    assert repo.run("commit", "--allow-empty", "-m", "blocked", check=False).returncode != 0
    sha = repo.commit("Skips pre-commit", args=["--no-verify"])
    repo.note_meta(sha)


def test_rebase_of_200_commits_writes_200_notes_with_replaces(repo_factory) -> None:
    repo: Repo = repo_factory(sync=False)  # the background drainer path, as users run it
    old = fast_history(repo, "big", 200)
    repo.commit("main moves", hooks=False)
    repo.restart_walk()
    repo.git("checkout", "-q", "big")
    repo.git("rebase", "-q", "main")
    new = repo.git("rev-list", "--reverse", "main..big").splitlines()
    assert len(new) == 200
    repo.wait_for_notes(new, timeout=120)
    for before, after in zip(old, new, strict=True):
        text = repo.note(after)
        assert text is not None
        meta = validate_note(text)
        assert meta["replaces"] == [before], after
    note_commits = [s for s in repo.vault_log() if s[1].startswith("note ")]
    assert len(note_commits) == 200, "one vault commit per note, no duplicates"
    repo.wait_no_drainer()


def test_a_noted_commit_is_not_noted_twice(repo: Repo) -> None:
    sha = repo.commit("Once")
    count = len(repo.vault_log())
    spool = repo.state_dir / "spool"
    line = f"commit\t{sha}\tref: refs/heads/main\tmain\t{repo.git_dir}\n"
    spool.write_text(line * 3)
    loc = resolve(repo.path)
    assert drain(loc, block=True) == 0
    assert drain(loc, block=True) == 0
    assert len(repo.vault_log()) == count
    # Backfill after the hooks: only the commit made before install lacks a note.
    result = repo.gv("backfill")
    assert result.code == 0, result
    assert "1 notes written, 1 already noted" in result.out
    assert len(repo.vault_log()) == count + 1
    again = repo.gv("backfill")
    assert "0 notes written, 2 already noted" in again.out
    assert len(repo.vault_log()) == count + 1
    assert list(repo.note_paths()).count(sha) == 1


def test_commits_on_the_vault_branch_are_never_noted(repo: Repo) -> None:
    audit = repo.path.parent / "audit"
    repo.git("worktree", "add", "-q", str(audit), repo.branch_name)
    assert (audit / "vault.toml").is_file() and (audit / "README.md").is_file()
    (audit / "patterns" / "testing.md").write_text("- run the tests before pushing\n")
    git_env = {"GITVAULT_SYNC": "1"}
    from tests.support.repos import git

    git(audit, "add", "patterns/testing.md")
    git(audit, "commit", "-q", "-m", "add a pattern by hand", env=git_env)
    hand = git(audit, "rev-parse", "HEAD")
    assert repo.vault_tip() == hand
    repo.gv("log")
    assert hand not in repo.note_paths()
    assert repo.vault_tip() == hand, "no note commit was added for a commit on the vault branch"
    # and notes keep working on top of the hand-made commit
    sha = repo.commit("After the hand edit")
    assert sha in repo.note_paths()
    assert repo.git("rev-parse", f"{repo.branch_name}~1") == hand


def test_huge_message_and_file_list_are_cut_visibly(repo: Repo) -> None:
    files = {f"pkg/module_{i:04d}.py": f"v = {i}\n" for i in range(400)}
    body = "\n".join(f"Paragraph {i}: " + "words " * 30 for i in range(300))
    sha = repo.commit("Huge change\n\n" + body, files=files)
    text = repo.note(sha)
    assert text is not None
    meta = validate_note(text)
    assert meta["files_changed"] == 400
    assert len(text.encode()) <= 2048
    assert "[… message cut:" in text
    assert "more files]" in text
    assert "# Huge change" in text


def test_a_long_message_beside_a_short_file_list_keeps_the_room_the_list_leaves(
    repo: Repo,
) -> None:
    # git/git's long messages were cut at half the budget beside a one-file list, the rest of
    # the 2 KB left empty: the words of their later paragraphs were never searchable.
    paragraphs = [f"Paragraph {i} explains part {i} of the reasoning at length." for i in range(80)]
    sha = repo.commit("Long explanation\n\n" + "\n\n".join(paragraphs), files={"one.c": "x\n"})
    text = repo.note(sha)
    assert text is not None
    validate_note(text)
    assert "[… message cut:" in text
    assert len(text.encode()) > notes.NOTE_MAX_BYTES - 200, "the budget is used, not left empty"
    kept = [p for p in paragraphs if p in text]
    assert len(kept) >= 18, f"only {len(kept)} paragraphs kept"
    assert "- one.c (+1 -0)" in text, "the file list is still whole"


def test_a_long_file_list_still_leaves_the_message_half_the_room(repo: Repo) -> None:
    files = {f"pkg/module_{i:04d}.py": f"v = {i}\n" for i in range(400)}
    paragraphs = [f"Paragraph {i} explains part {i} of the reasoning at length." for i in range(80)]
    sha = repo.commit("Wide change\n\n" + "\n\n".join(paragraphs), files=files)
    text = repo.note(sha)
    assert text is not None
    kept = [p for p in paragraphs if p in text]
    assert len(kept) >= 8, f"only {len(kept)} paragraphs kept"
    assert "more files]" in text


def test_long_subject_is_capped(repo: Repo) -> None:
    sha = repo.commit("S" * 5000)
    text = repo.note(sha)
    assert text is not None
    validate_note(text)
    assert "[…]" in text.splitlines()[text.splitlines().index("---", 1) + 1]


def test_note_rendering_is_deterministic(repo: Repo) -> None:
    sha = repo.commit("Deterministic\n\nbody", files={"d.txt": "1\n2\n"})
    stored = repo.note(sha)
    loc = resolve(repo.path)
    ctx = notes.NoteContext(branch="main", worktree="main")
    first = notes.render(commits.read_commits(loc.common_dir, [sha])[sha], ctx)
    second = notes.render(commits.read_commits(repo.path, [sha])[sha], ctx)
    assert first == second
    assert stored == first, "the hook's note is the same bytes a re-render gives"


def test_binary_and_renamed_files_are_listed(repo: Repo) -> None:
    repo.commit("Add files", files={"img.bin": b"\x00\x01\x02" * 50, "old_name.txt": "x\n" * 20})
    repo.git("mv", "old_name.txt", "new_name.txt")
    sha = repo.commit("Rename", files={})
    text = repo.note(sha) or ""
    validate_note(text)
    assert "old_name.txt => new_name.txt" in text
    repo.write("img.bin", b"\x00\x09" * 80)
    repo.git("add", "img.bin")
    sha2 = repo.commit("Binary change", files={})
    assert "- img.bin (binary)" in (repo.note(sha2) or "")


def test_linked_worktree_note_names_its_worktree(repo: Repo, tmp_path: Path) -> None:
    wt = repo.worktree("wt-one")
    sha = wt.commit("From the linked worktree")
    meta = repo.note_meta(sha)
    assert meta["worktree"] == "wt-one"
    assert meta["branch"] == "wt-one"


def test_squashing_many_commits_keeps_the_note_under_the_cap(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "squash")
    old = fast_history(repo, "squash", 20, prefix="sq")
    repo.git("reset", "-q", "--hard", "squash")
    base = repo.git("rev-parse", f"{old[0]}~1")
    count = len(repo.vault_log())
    editor = "sed -i '2,$ s/^pick/fixup/'"
    repo.git("rebase", "-q", "-i", base, env={"GIT_SEQUENCE_EDITOR": editor})
    new = repo.head()
    assert repo.git("rev-list", "--count", f"{base}..{new}") == "1"
    assert len(repo.vault_log()) == count + 1, "one note: none for the intermediate commits"
    text = repo.note(new)
    assert text is not None
    meta = validate_note(text)  # ≤ 2 KB and schema-valid
    assert meta["replaces"] == old[:8]
    assert "[… replaces 20 commits; the first 8 are listed]" in text


_WIDE = st.text(alphabet=st.sampled_from("a é 𝔄\t\x1b\n…"), max_size=1500)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    subject=_WIDE,
    body=_WIDE,
    author=_WIDE,
    branch=st.one_of(st.none(), st.text(alphabet="b𝔅-/", min_size=1, max_size=400)),
    parents=st.integers(0, 40),
    replaces=st.integers(0, 40),
    files=st.lists(
        st.tuples(_WIDE.filter(bool), st.one_of(st.none(), st.integers(0, 10**6))), max_size=60
    ),
)
def test_any_commit_renders_a_valid_note_of_at_most_2_kb(
    subject: str,
    body: str,
    author: str,
    branch: str | None,
    parents: int,
    replaces: int,
    files: list[tuple[str, int | None]],
) -> None:
    info = commits.CommitInfo(
        sha="b" * 40,
        parents=tuple(f"{i:040x}" for i in range(parents)),
        author_name=author,
        author_email="dev@example.com",
        authored="2024-01-01T00:00:00+00:00",
        committed="2024-01-01T00:00:00+01:00",
        commit_time=1_700_000_000,
        message=subject + "\n\n" + body,
        files=tuple(commits.FileStat(p, n, n) for p, n in files),
    )
    ctx = notes.NoteContext(branch, "wt", tuple(f"{i:040x}" for i in range(replaces)))
    text = notes.render(info, ctx)
    meta = validate_note(text)
    assert text == notes.render(info, ctx), "deterministic"
    assert meta["files_changed"] == len(files)
    assert "\x1b" not in text
