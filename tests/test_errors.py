"""Awkward repositories and inputs: bare, shallow, unborn HEAD, read-only .git, invalid UTF-8
and huge commit messages. Each gives a clear one-line error or a valid note; nothing is
half-written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.repos import (
    Repo,
    cli,
    fast_history,
    git,
    make_repo,
    read_only_mount_unavailable,
    validate_note,
)


def _assert_clean_error(result, code: int, *needles: str) -> None:  # type: ignore[no-untyped-def]
    assert result.code == code, result
    first = result.err.strip().splitlines()[0]
    assert first.startswith("gitvault: error: "), result.err
    for needle in needles:
        assert needle in result.err, result.err
    assert "Traceback" not in result.err


def _assert_nothing_half_written(repo: Repo) -> None:
    state = repo.state_dir
    if state.exists():
        leftovers = [
            p.name for p in state.rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".")
        ]
        assert not leftovers, leftovers
    locks = [str(p) for p in (repo.common_dir / "refs").rglob("*.lock")]
    assert not locks, locks
    assert not (repo.common_dir / "packed-refs.lock").exists()
    proc = repo.run("fsck", "--no-dangling", "--no-progress", check=False)
    assert proc.returncode == 0, proc.stderr


def test_a_bare_repository_gets_a_clear_error_and_nothing_is_written(tmp_path: Path) -> None:
    bare = make_repo(tmp_path / "bare.git", bare=True)
    _assert_clean_error(bare.gv("install", "--no-claude"), 1, "bare repository")
    _assert_clean_error(bare.gv("log"), 1, "no vault")
    assert git(bare.path, "for-each-ref") == "", "nothing was created"


def test_bare_clone_of_a_repository_with_a_vault_can_be_read(repo: Repo, tmp_path: Path) -> None:
    sha = repo.commit("Travels with the clone")
    mirror = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo.path), str(mirror))
    result = cli("--repo", str(mirror), "log", "--json")
    assert result.code == 0, result
    assert result.json("log")[0]["title"] == "Travels with the clone"
    shown = cli("--repo", str(mirror), "show", sha[:8])
    assert shown.code == 0 and "# Travels with the clone" in shown.out
    status = cli("--repo", str(mirror), "status", "--json")
    assert status.code == 0, status


def test_a_shallow_clone_backfills_the_history_it_has_and_keeps_noting(
    repo_factory, tmp_path: Path
) -> None:
    source: Repo = repo_factory("source", install=False)
    history = fast_history(source, "main", 10)
    clone_path = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "3", f"file://{source.path}", str(clone_path))
    clone = Repo(clone_path)
    assert git(clone_path, "rev-parse", "--is-shallow-repository") == "true"
    assert clone.gv("install", "--no-claude").code == 0
    result = clone.gv("backfill")
    assert result.code == 0, result
    assert "3 notes written" in result.out, "backfill works within the available history"
    noted = clone.note_paths()
    assert set(history[-3:]) <= set(noted)
    boundary = validate_note(clone.note(history[-3]) or "")
    assert boundary["sha"] == history[-3]
    sha = clone.commit("New work in a shallow clone")
    assert sha in clone.note_paths()
    _assert_nothing_half_written(clone)


def test_unborn_head_install_works_and_the_first_commit_is_noted(repo_factory) -> None:
    repo: Repo = repo_factory("empty", install=False, commit=False)
    assert repo.run("rev-parse", "--verify", "-q", "HEAD", check=False).returncode != 0
    result = repo.gv("install", "--no-claude")
    assert result.code == 0, result
    assert repo.vault_tip() is not None
    status = repo.gv("status", "--json")
    assert status.code == 0 and status.json("status")["installed"] is True
    backfill = repo.gv("backfill")
    assert backfill.code == 0, backfill
    assert "0 notes written" in backfill.out
    assert repo.gv("log").code == 0
    sha = repo.commit("The very first commit")
    meta = repo.note_meta(sha)
    assert meta["parents"] == []
    assert repo.git("symbolic-ref", "HEAD") == "refs/heads/main", "HEAD untouched by install"


def test_read_only_git_dir(repo: Repo, tmp_path: Path) -> None:
    reason = read_only_mount_unavailable(tmp_path)
    if reason:
        pytest.skip(
            f"read-only .git needs a read-only bind mount ({reason}); chmod does not stop root"
        )
    sha = repo.commit("Before the repository became read-only")
    git_dir = repo.git_dir
    # Also a spooled line that cannot be drained while read-only: it must survive.
    later = repo.commit("spooled only", hooks=False)
    (repo.state_dir / "spool").write_text(
        f"commit\t{later}\tref: refs/heads/main\tmain\t{git_dir}\n"
    )
    out = repo.path.parent / "ro-results"
    out.mkdir()
    gv = f"{sys.executable} -m gitvault"
    commands = {
        "log": "log --json",
        "show": f"show {sha[:8]}",
        "status": "status --json",
        "backfill": "backfill",
        "install": "install --no-claude",
        "fold": "fold --merger builtin",
    }
    lines = [f"mount --bind {git_dir} {git_dir} && mount -o remount,ro,bind {git_dir} || exit 99"]
    for name, args in commands.items():
        lines.append(
            f"{gv} {args} > {out}/{name}.out 2> {out}/{name}.err; echo $? > {out}/{name}.rc"
        )
    proc = subprocess.run(
        ["unshare", "-m", "sh", "-c", "\n".join(lines)],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 99, "the bind mount failed: " + proc.stderr

    def rc(name: str) -> int:
        return int((out / f"{name}.rc").read_text())

    # Reading works.
    assert rc("log") == 0, (out / "log.err").read_text()
    titles = [e["title"] for e in json.loads((out / "log.out").read_text())["data"]]
    assert "Before the repository became read-only" in titles
    assert rc("show") == 0 and "# Before the repository" in (out / "show.out").read_text()
    assert rc("status") == 0, (out / "status.err").read_text()
    warnings = json.loads((out / "status.out").read_text())["data"]["warnings"]
    assert any("cannot write" in w for w in warnings), warnings
    # Writing fails with a clear one-line error (not a crash).
    err = (out / "backfill.err").read_text()
    assert rc("backfill") == 1, err
    assert err.startswith("gitvault: error: cannot write to the repository"), err
    assert "Read-only file system" in err and "Traceback" not in err, err
    # A fold (it takes a lease file first) is an expected failure too, never a crash (exit 70).
    err = (out / "fold.err").read_text()
    assert rc("fold") == 1, err
    assert "Read-only file system" in err and "internal error" not in err, err
    # install has nothing to change (it is installed), so it needs no write and says so.
    assert rc("install") == 0, (out / "install.err").read_text()
    assert "nothing changed" in (out / "install.out").read_text()
    # Back to writable: the spooled line was kept and is drained now.
    assert later not in repo.note_paths()
    assert repo.gv("log").code == 0
    assert later in repo.note_paths()
    _assert_nothing_half_written(repo)


def test_latin1_commit_message_gives_a_valid_utf8_note(repo: Repo, tmp_path: Path) -> None:
    msg = tmp_path / "msg.txt"
    msg.write_bytes("Caf\xe9 cr\xe8me br\xfbl\xe9e\n\nna\xefve body\n".encode("latin-1"))
    repo.write("latin.txt", "x\n")
    repo.git("add", "latin.txt")
    repo.git("-c", "i18n.commitEncoding=latin1", "commit", "-q", "-F", str(msg))
    sha = repo.head()
    raw = repo.show(repo.note_paths()[sha])
    text = raw.decode("utf-8")  # valid UTF-8
    validate_note(text)
    assert "# Café crème brûlée" in text
    assert "naïve body" in text


def test_invalid_utf8_bytes_in_a_message_give_a_valid_note(repo: Repo, tmp_path: Path) -> None:
    msg = tmp_path / "msg.txt"
    msg.write_bytes(b"Broken \xff\xfe bytes \xc3\x28 here\n\nbody \x80\x81 \x1b[31mred\x1b[0m\n")
    repo.write("bad.txt", "x\n")
    repo.git("add", "bad.txt")
    repo.git("commit", "-q", "-F", str(msg))
    sha = repo.head()
    text = repo.show(repo.note_paths()[sha]).decode("utf-8")
    validate_note(text)
    assert "Broken" in text and "bytes" in text
    assert "\x1b" not in text, "control characters are dropped"


def test_one_megabyte_commit_message_gives_a_capped_note(repo: Repo, tmp_path: Path) -> None:
    msg = tmp_path / "msg.txt"
    body = ("A line of a very long commit message body. " * 20 + "\n") * 1200
    msg.write_text("Subject of a huge message\n\n" + body)
    assert msg.stat().st_size >= 1_000_000
    repo.write("big.txt", "x\n")
    repo.git("add", "big.txt")
    repo.git("commit", "-q", "-F", str(msg))
    sha = repo.head()
    text = repo.show(repo.note_paths()[sha]).decode("utf-8")
    assert len(text.encode()) <= 2048
    validate_note(text)
    assert "# Subject of a huge message" in text
    assert "[… message cut:" in text
    subject = repo.vault_log()[0][1]
    assert subject.startswith(f"note {sha[:7]} Subject of a huge message")
    assert len(subject) < 100, "the vault commit message stays one short line"
    _assert_nothing_half_written(repo)


def test_one_megabyte_single_line_message(repo: Repo, tmp_path: Path) -> None:
    msg = tmp_path / "msg.txt"
    msg.write_text("x" * 1_048_576)
    repo.git("commit", "-q", "--allow-empty", "-F", str(msg))
    sha = repo.head()
    text = repo.show(repo.note_paths()[sha]).decode("utf-8")
    validate_note(text)
    assert "[…]" in text
