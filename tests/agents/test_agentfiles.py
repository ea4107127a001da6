"""The CLAUDE.md managed section through the CLI (`gitvault patch`, and after each fold):
PATCH between the sentinels, refuse on a malformed pair, no churn, more agent files by config."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitvault.agents import texts
from gitvault.agents.sentinel import BEGIN, END
from tests.support.memory import (
    StandIn,
    Step,
    backfilled_repo,
    cli_in,
    cli_sub,
    digest_answer,
    digest_meta_body,
    set_config,
    vault_text,
    watermark,
)
from tests.support.repos import Repo

OLD_NS = 1_000_000_000 * 1_000_000_000


@pytest.fixture(autouse=True)
def _claude_wired(repo: Repo) -> None:
    """These tests are about the agent files of a repository wired for Claude Code; the
    shared fixture installs with --no-claude, which later folds honour (no CLAUDE.md)."""
    repo.git("config", "gitvault.agents", "claude")


def block_of(text: str) -> str:
    """The text strictly between the sentinel lines."""
    lines = text.splitlines()
    begin = [i for i, ln in enumerate(lines) if ln.strip() == BEGIN]
    end = [i for i, ln in enumerate(lines) if ln.strip() == END]
    assert len(begin) == len(end) == 1 and begin[0] < end[0], text
    return "\n".join(lines[begin[0] + 1 : end[0]])


def aged(path: Path, data: bytes) -> tuple[bytes, int, int]:
    path.write_bytes(data)
    os.utime(path, ns=(OLD_NS, OLD_NS))
    st = path.stat()
    return data, st.st_mtime_ns, st.st_ino


def state(path: Path) -> tuple[bytes, int, int]:
    st = path.stat()
    return path.read_bytes(), st.st_mtime_ns, st.st_ino


def fold_with_digest(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: dict[str, list[str]]
) -> None:
    fake = StandIn(tmp_path / "standin")
    monkeypatch.setenv("PATH", fake.path_env())
    fake.script(Step(answer=digest_answer(lines)))
    result = cli_in(repo, "fold")
    assert result.code == 0, result


# --------------------------------------------------------------------------- gitvault patch


def test_patch_creates_claude_md_with_the_mechanics(repo: Repo) -> None:
    target = repo.path / "CLAUDE.md"
    assert not target.exists()
    result = cli_in(repo, "patch")
    assert result.code == 0, result
    assert "patched CLAUDE.md" in result.out
    text = target.read_text()
    assert text.startswith(BEGIN + "\n") and text.endswith(END + "\n")
    block = block_of(text)
    assert len(block) <= 2000
    for needed in (
        "gitvault save",
        "## Summary",
        "## Key Decisions",
        "## Next Steps",
        "VAULT RECALL",
    ):
        assert needed in block, needed
    assert "### Gotchas" not in block  # no digest yet


def test_patch_appends_to_an_existing_file_and_keeps_every_byte(repo: Repo) -> None:
    target = repo.path / "CLAUDE.md"
    original = b"\xef\xbb\xbf# My rules\r\n\r\nUse tabs.\r\nCaf\xe9 \xff bytes\r\nno final newline"
    target.write_bytes(original)
    assert cli_in(repo, "patch").code == 0
    data = target.read_bytes()
    assert data.startswith(original)  # everything before is kept, byte for byte
    added = data[len(original) :]
    assert added.startswith(b"\r\n" + BEGIN.encode() + b"\r\n")  # the file's own line endings
    assert b"\n" not in added.replace(b"\r\n", b"")


def test_patch_replaces_only_the_block(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = repo.path / "CLAUDE.md"
    head = b"# Project\n\nhand-written intro\n\n"
    tail = b"\n## Afterword\nkept as is \xf0\x9f\x99\x82\n"
    target.write_bytes(head + BEGIN.encode() + b"\nstale block\n" + END.encode() + tail)
    shas = backfilled_repo(repo, 2)
    cite = shas[0][:7]
    fold_with_digest(
        repo,
        tmp_path,
        monkeypatch,
        {
            "Conventions": [f"- Run ruff before committing (c:{cite})"],
            "Gotchas": [f"- pygit2 Oid needs hex= (c:{cite})"],
            "Decisions": [f"- This decision stays out of CLAUDE.md (c:{cite})"],
        },
    )
    data = target.read_bytes()
    assert data.startswith(head) and data.endswith(tail)
    block = block_of(data.decode())
    assert "stale block" not in block
    assert f"### Conventions\n- Run ruff before committing (c:{cite})" in block
    assert f"### Gotchas\n- pygit2 Oid needs hex= (c:{cite})" in block
    assert "stays out of CLAUDE.md" not in block  # only Conventions and Gotchas
    # patching again with the same digest changes nothing, not even the mtime
    before = aged(target, data)
    result = cli_in(repo, "patch")
    assert result.code == 0
    assert "CLAUDE.md is up to date" in result.out
    assert state(target) == before


def test_same_content_is_not_rewritten(repo: Repo) -> None:
    target = repo.path / "CLAUDE.md"
    assert cli_in(repo, "patch").code == 0
    before = aged(target, target.read_bytes())
    for _ in range(2):
        result = cli_in(repo, "patch")
        assert result.code == 0 and "up to date" in result.out
        assert state(target) == before
    assert not [p for p in repo.path.iterdir() if p.name.startswith(".CLAUDE.md")]  # no temp left


@pytest.mark.parametrize(
    ("content", "line"),
    [
        (f"# Rules\n\nkeep\n{BEGIN}\nhalf a block\n", 4),
        (f"# Rules\n{END}\nstuff\n", 2),
        (f"intro\n\n{END}\nx\n{BEGIN}\n", 3),
        (f"{BEGIN}\na\n{END}\n\n{BEGIN}\nb\n{END}\n", 5),
    ],
    ids=["lone-begin", "lone-end", "reversed", "duplicate"],
)
def test_an_unmatched_sentinel_is_refused_with_its_line_number(
    repo: Repo, content: str, line: int
) -> None:
    target = repo.path / "CLAUDE.md"
    before = aged(target, content.encode())
    result = cli_in(repo, "patch")
    assert result.code == 3, result
    assert f"CLAUDE.md:{line}" in result.err, result.err
    assert "refusing to write" in result.err
    assert state(target) == before
    assert not [p for p in repo.path.iterdir() if p.name.startswith(".CLAUDE.md")]


def test_refusal_through_the_real_entry_point(repo: Repo) -> None:
    target = repo.path / "CLAUDE.md"
    before = aged(target, f"a\nb\n{BEGIN}\n".encode())
    result = cli_sub(repo, "patch")
    assert result.code == 3
    assert "CLAUDE.md:3" in result.err
    assert state(target) == before


def test_the_block_is_capped_at_2000_characters(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shas = backfilled_repo(repo, 2)
    cite = shas[0][:7]
    long_lines = [f"- convention {i}: " + "v" * 70 + f" (c:{cite})" for i in range(10)]
    gotchas = [f"- gotcha {i}: " + "g" * 70 + f" (c:{cite})" for i in range(10)]
    fold_with_digest(repo, tmp_path, monkeypatch, {"Conventions": long_lines, "Gotchas": gotchas})
    block = block_of((repo.path / "CLAUDE.md").read_text())
    assert len(block) <= 2000
    assert "gitvault save" in block  # the mechanics come first and stay
    assert block.splitlines()[-1].startswith("- [… cut to fit")
    body_lines = block.splitlines()[:-1]
    mechanics = texts.agent_file_mechanics().splitlines()
    for ln in body_lines:  # whole lines only: digest lines, cut markers, the mechanics
        assert (
            ln in long_lines
            or ln in gotchas
            or ln.startswith("- [… ")
            or ln in mechanics
            or not ln.startswith("- ")
        )


def test_patch_files_in_vault_toml_names_more_files(repo: Repo) -> None:
    set_config(repo, "patch", files=["CLAUDE.md", "AGENTS.md", "docs/agents/GEMINI.md"])
    (repo.path / "docs" / "agents").mkdir(parents=True)
    (repo.path / "AGENTS.md").write_text("# Agents\n")
    result = cli_in(repo, "patch")
    assert result.code == 0, result
    for name in ("CLAUDE.md", "AGENTS.md", "docs/agents/GEMINI.md"):
        assert f"patched {name}" in result.out
        assert "gitvault save" in block_of((repo.path / name).read_text())
    assert (repo.path / "AGENTS.md").read_text().startswith("# Agents\n")


def test_patch_with_a_file_argument_touches_only_that_file(repo: Repo) -> None:
    result = cli_in(repo, "patch", "AGENTS.md")
    assert result.code == 0
    assert (repo.path / "AGENTS.md").exists()
    assert not (repo.path / "CLAUDE.md").exists()


# --------------------------------------------------------------------------- after a fold


def test_fold_patches_claude_md_after_committing(repo: Repo) -> None:
    backfilled_repo(repo, 3, subjects=["fix: the parser crashed on {i}"])
    saved = cli_in(
        repo,
        "save",
        stdin="## Summary\nS\n## Key Decisions\n- K\n## Next Steps\n- N\n"
        "## Gotchas\n- The tokenizer needs a final newline\n",
    )
    assert saved.code == 0, saved
    result = cli_in(repo, "fold", "--merger", "builtin")
    assert result.code == 0, result
    assert "patched CLAUDE.md" in result.out
    block = block_of((repo.path / "CLAUDE.md").read_text())
    _, body = digest_meta_body(repo)
    gotchas = body.split("## Gotchas\n", 1)[1].split("\n\n", 1)[0]
    assert "The tokenizer needs a final newline (s:" in gotchas
    assert gotchas in block
    assert "fix: the parser crashed" not in block  # never a raw commit subject
    # a no-op fold leaves the file alone
    before = aged(repo.path / "CLAUDE.md", (repo.path / "CLAUDE.md").read_bytes())
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    assert state(repo.path / "CLAUDE.md") == before


def test_a_refused_patch_after_a_fold_is_a_warning_not_a_failed_fold(repo: Repo) -> None:
    backfilled_repo(repo, 2)
    target = repo.path / "CLAUDE.md"
    before = aged(target, f"# Mine\n{BEGIN}\nhalf\n".encode())
    result = cli_in(repo, "fold", "--merger", "builtin")
    assert result.code == 0, result
    assert watermark(repo) is not None and vault_text(repo, "_master.md") is not None
    assert "warning: not patched:" in result.err and "CLAUDE.md:2" in result.err
    assert state(target) == before


def test_fold_patches_every_configured_file(repo: Repo) -> None:
    set_config(repo, "patch", files=["CLAUDE.md", "AGENTS.md"])
    backfilled_repo(repo, 2)
    result = cli_in(repo, "fold", "--merger", "builtin")
    assert result.code == 0
    assert "patched CLAUDE.md" in result.out and "patched AGENTS.md" in result.out
    assert block_of((repo.path / "AGENTS.md").read_text()) == block_of(
        (repo.path / "CLAUDE.md").read_text()
    )


def test_patch_files_from_the_vault_cannot_leave_the_worktree(repo: Repo, tmp_path: Path) -> None:
    outside = repo.path.parent / "outside.md"
    absolute = tmp_path / "absolute.md"
    set_config(repo, "patch", files=["CLAUDE.md", "../outside.md", str(absolute)])
    result = cli_in(repo, "patch")
    assert result.code == 3, result
    assert "outside the worktree" in result.err
    assert not outside.exists() and not absolute.exists()
    assert not (repo.path / "CLAUDE.md").exists()  # refused before anything was written
    # after a fold the same names are warnings; the files inside are still patched
    backfilled_repo(repo, 1)
    folded = cli_in(repo, "fold", "--merger", "builtin")
    assert folded.code == 0, folded
    assert "warning: not patched: ../outside.md" in folded.err
    assert (repo.path / "CLAUDE.md").exists()
    assert not outside.exists() and not absolute.exists()


HOSTILE_NAMES = [
    ".git/config",
    ".GIT/config",
    ".Git/CLAUDE.md",
    "./.git/x",
    "a/../.git/config",
    ".git./CLAUDE.md",
    "git~1/CLAUDE.md",
    "sub/.git/CLAUDE.md",
    "Makefile",
    "README.md",
    "src/main.py",
    ".git",
    "CLAUDE.md/",
    "",
    "a\\..\\.git\\config",
    "docs/CLAUDE.md\n",
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_patch_files_names_only_agent_files_outside_git(repo: Repo, name: str) -> None:
    """vault.toml travels with the vault: whatever a teammate lists, the fold writes only agent
    instruction files inside the worktree, never into .git or a tracked build or source file."""
    (repo.path / "Makefile").write_text("all:\n\techo build\n")
    (repo.path / "src").mkdir()
    (repo.path / "src" / "main.py").write_text("print('hi')\n")
    repo.git("add", "Makefile", "src/main.py")
    repo.commit("build: a Makefile")
    config_before = (repo.git_dir / "config").read_bytes()
    tracked = {
        p: (repo.path / p).read_bytes()
        for p in ("Makefile", "src/main.py", "README.md")
        if (repo.path / p).exists()
    }
    set_config(repo, "patch", files=["CLAUDE.md", name])
    backfilled_repo(repo, 1)
    folded = cli_in(repo, "fold", "--merger", "builtin")
    assert folded.code == 0, folded
    assert "warning: not patched" in folded.err
    assert (repo.git_dir / "config").read_bytes() == config_before
    assert not any(
        BEGIN in p.read_text(errors="replace")
        for p in repo.git_dir.rglob("*")
        if p.is_file() and p.stat().st_size < 1_000_000 and "objects" not in p.parts
    )
    for path, data in tracked.items():
        assert (repo.path / path).read_bytes() == data
    assert BEGIN in (repo.path / "CLAUDE.md").read_text()
    assert repo.git("status", "--porcelain") is not None  # git still reads its config


def test_patch_files_never_follow_a_link_into_git_or_a_tracked_file(repo: Repo) -> None:
    (repo.path / "Makefile").write_text("all:\n")
    repo.git("add", "Makefile")
    repo.commit("build: Makefile")
    (repo.path / "docs").mkdir()
    os.symlink(repo.git_dir, repo.path / "meta")
    os.symlink("Makefile", repo.path / "docs" / "CLAUDE.md")
    os.symlink("../.git", repo.path / "docs" / "g")
    set_config(
        repo, "patch", files=["CLAUDE.md", "meta/CLAUDE.md", "docs/CLAUDE.md", "docs/g/AGENTS.md"]
    )
    config_before = (repo.git_dir / "config").read_bytes()
    backfilled_repo(repo, 1)
    folded = cli_in(repo, "fold", "--merger", "builtin")
    assert folded.code == 0, folded
    assert folded.err.count("warning: not patched") == 3, folded.err
    assert (repo.path / "Makefile").read_text() == "all:\n"
    assert not (repo.git_dir / "CLAUDE.md").exists() and not (repo.git_dir / "AGENTS.md").exists()
    assert (repo.git_dir / "config").read_bytes() == config_before


def test_a_link_between_agent_files_is_still_followed(repo: Repo) -> None:
    (repo.path / "AGENTS.md").write_text("# Agents\n")
    os.symlink("AGENTS.md", repo.path / "CLAUDE.md")
    result = cli_in(repo, "patch")
    assert result.code == 0, result
    assert (repo.path / "CLAUDE.md").is_symlink()
    assert BEGIN in (repo.path / "AGENTS.md").read_text()


def test_a_separate_git_dir_inside_the_worktree_is_never_patched(tmp_path: Path) -> None:
    from tests.support.repos import git

    work = tmp_path / "w"
    git(tmp_path, "init", "-q", "--separate-git-dir", str(work / "meta"), str(work))
    from gitvault.agents.agentfiles import allowed_targets

    kept, refused = allowed_targets(work, ["CLAUDE.md", "meta/CLAUDE.md", "meta/AGENTS.md"])
    assert kept == ["CLAUDE.md"]
    assert len(refused) == 2 and all("git folder" in line for line in refused)


def test_patch_files_from_a_remote_never_reach_another_repository(tmp_path: Path) -> None:
    """A teammate's vault.toml (adopted by a newcomer's install) names agent files inside a
    submodule, a nested clone and a linked worktree placed inside the working tree: each is
    another repository's file (the submodule's is tracked there), so a fold leaves all three
    as they were."""
    from tests.support.remotes import bare_remote, clone, seed
    from tests.support.repos import git

    remote = bare_remote(tmp_path / "remote.git")
    seed(remote, tmp_path / "seed")
    first = clone(remote, tmp_path / "first")
    assert first.gv("sync").code == 0
    foreign = ["sub/CLAUDE.md", "vendor/lib/CLAUDE.md", ".worktrees/side/CLAUDE.md"]
    evil = tmp_path / "evil"  # pushed with plain git: sync never sends a vault.toml
    git(tmp_path, "clone", "-q", "-b", "vault", str(remote), str(evil))
    listed = ", ".join(f'"{name}"' for name in ["CLAUDE.md", *foreign])
    toml = (evil / "vault.toml").read_text()
    (evil / "vault.toml").write_text(toml.replace('files = ["CLAUDE.md"]', f"files = [{listed}]"))
    git(evil, "commit", "-q", "-am", "patch more files")
    git(evil, "push", "-q", "origin", "vault")
    lib = tmp_path / "lib"
    git(tmp_path, "init", "-q", "-b", "main", str(lib))
    (lib / "CLAUDE.md").write_text("# the library's own rules\n")
    git(lib, "add", "CLAUDE.md")
    git(lib, "commit", "-q", "-m", "lib")
    mine = clone(remote, tmp_path / "mine")  # install adopts the teammate's vault
    assert foreign[0] in (vault_text(mine, "vault.toml") or ""), "the teammate's list arrived"
    mine.git("config", "gitvault.agents", "claude")
    mine.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "sub")
    mine.commit("add the library as a submodule", files={})
    git(tmp_path, "clone", "-q", str(lib), str(mine.path / "vendor" / "lib"))
    mine.git("worktree", "add", "-q", "-b", "side", str(mine.path / ".worktrees" / "side"))
    (mine.path / ".worktrees" / "side" / "CLAUDE.md").write_text("# the side worktree's\n")
    before = {name: (mine.path / name).read_bytes() for name in foreign}
    folded = cli_in(mine, "fold", "--merger", "builtin")
    assert folded.code == 0, folded
    assert folded.err.count("warning: not patched") == len(foreign), folded.err
    assert {name: (mine.path / name).read_bytes() for name in foreign} == before
    assert git(mine.path / "sub", "status", "--porcelain") == ""
    assert BEGIN in (mine.path / "CLAUDE.md").read_text()
