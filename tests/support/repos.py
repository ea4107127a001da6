"""Helpers for the foundation tests: real git repositories driven through real git commands and
the real gitvault CLI (in-process through ``gitvault.cli.main`` or as a subprocess)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitvault.vault import frontmatter, schemas
from gitvault.vault.files import read_text

PYTHON = sys.executable
GITVAULT = (PYTHON, "-m", "gitvault")
WAIT_SECONDS = 60.0  # bounded polling for the background drainer (generous: CI may be loaded)
NO_HOOKS = ("-c", "core.hooksPath=/dev/null")  # setup commits that must not be noted


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self, kind: str | None = None) -> Any:
        """The data of a versioned JSON envelope, after checking the envelope itself."""
        doc = json.loads(self.out)
        assert doc["gitvault"] == 1, doc
        if kind is not None:
            assert doc["kind"] == kind, doc
        return doc["data"]


def git_run(
    cwd: Path,
    *args: str,
    input: bytes | str | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    timeout: float = 120,
) -> subprocess.CompletedProcess[bytes]:
    data = input.encode() if isinstance(input, str) else input
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    proc = subprocess.run(
        ["git", *args], cwd=cwd, input=data, capture_output=True, env=full_env, timeout=timeout
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"git {' '.join(args)} failed ({proc.returncode}) in {cwd}:\n"
            f"{proc.stdout.decode(errors='replace')}\n{proc.stderr.decode(errors='replace')}"
        )
    return proc


def git(cwd: Path, *args: str, **kwargs: Any) -> str:
    return git_run(cwd, *args, **kwargs).stdout.decode("utf-8", "replace").strip()


def cli(*args: str, cwd: Path | None = None) -> Result:
    """Run the CLI in this process (fast): gitvault.cli.main with captured output."""
    from gitvault.cli import main

    out, err = io.StringIO(), io.StringIO()
    old_cwd = Path.cwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(old_cwd)
    return Result(code, out.getvalue(), err.getvalue())


def cli_proc(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 120
) -> Result:
    """Run `python -m gitvault ARGS` as a separate process (the real entry point)."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [*GITVAULT, *args], cwd=cwd, capture_output=True, text=True, env=full_env, timeout=timeout
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def read_only_mount_unavailable(scratch: Path) -> str | None:
    """Why a read-only bind mount (in a private mount namespace) cannot be made here, or None.
    Tests use it to make a folder read-only even for root, where chmod does nothing."""
    import shutil

    if shutil.which("unshare") is None:
        return "unshare is not installed"
    probe = scratch / "ro-probe"
    probe.mkdir(exist_ok=True)
    script = (
        f"mount --bind {probe} {probe} && mount -o remount,ro,bind {probe} && "
        f"! touch {probe}/x 2>/dev/null"
    )
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True)
    if proc.returncode != 0:
        return f"no read-only bind mount here (unshare -m + mount failed: {proc.stderr.strip()!r})"
    return None


def validate_note(text: str) -> dict[str, Any]:
    """Front matter of a note, checked against schemas/note.schema.json and the size cap."""
    assert len(text.encode("utf-8")) <= 2048, f"note is {len(text.encode())} bytes"
    meta, body = frontmatter.parse(text)
    assert meta, f"note without front matter:\n{text[:300]}"
    problems = schemas.errors("note.schema.json", meta)
    assert not problems, problems
    assert body.startswith("# "), body[:100]
    return meta


def is_drainer(cmdline: bytes) -> bool:
    return b"git\x00drain\x00" in cmdline or b"gitvault.drain" in cmdline


def drainer_pids(common_dir: Path | None = None) -> list[int]:
    """Live drainer processes, `gitvault-hook git drain DIR` (for common_dir, or any)."""
    pids = []
    needle = str(common_dir).encode() if common_dir is not None else b""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if is_drainer(cmdline) and needle in cmdline:
            pids.append(int(entry.name))
    return pids


def wait_until(predicate: Any, timeout: float = WAIT_SECONDS, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.05)


@contextlib.contextmanager
def live_lock(path: Path, *, refresh_seconds: float = 0.5) -> Iterator[Path]:
    """A lock file held by a writer that is still running: its mtime is kept current, so
    gitvault's rule that an old lock was left by a killed writer (and may be removed) never
    applies to it, however slowly the code under test runs. Removed on exit."""
    path.write_text("held by a test\n")
    done = threading.Event()

    def refresh() -> None:
        while not done.wait(refresh_seconds):
            os.utime(path)

    keeper = threading.Thread(target=refresh, name=f"live-lock {path.name}", daemon=True)
    keeper.start()
    try:
        yield path
    finally:
        done.set()
        keeper.join()
        path.unlink()


@dataclass
class Repo:
    """A worktree of a real repository (the main one or a linked one)."""

    path: Path
    sync: bool = True  # commits write notes in the foreground (GITVAULT_SYNC=1)
    branch_name: str = "vault"
    _counter: int = field(default=0, repr=False)

    # -- git ---------------------------------------------------------------------------
    def env(self, sync: bool | None = None) -> dict[str, str]:
        use_sync = self.sync if sync is None else sync
        return {"GITVAULT_SYNC": "1"} if use_sync else {}

    def run(
        self, *args: str, sync: bool | None = None, **kwargs: Any
    ) -> subprocess.CompletedProcess[bytes]:
        env = {**self.env(sync), **kwargs.pop("env", {})}
        return git_run(self.path, *args, env=env, **kwargs)

    def git(self, *args: str, sync: bool | None = None, **kwargs: Any) -> str:
        return self.run(*args, sync=sync, **kwargs).stdout.decode("utf-8", "replace").strip()

    def write(self, rel: str, content: str | bytes) -> Path:
        path = self.path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    def commit(
        self,
        message: str | None = None,
        files: Mapping[str, str | bytes] | None = None,
        *,
        args: Sequence[str] = (),
        sync: bool | None = None,
        hooks: bool = True,
        env: Mapping[str, str] | None = None,
    ) -> str:
        """Write files (default: one new file), `git add` them, commit; returns the new HEAD."""
        self._counter += 1
        if files is None:
            files = {f"file{self._counter}-{time.time_ns()}.txt": f"content {self._counter}\n"}
        for rel, content in files.items():
            self.write(rel, content)
        if files:
            self.git("add", "--", *files)
        msg = message or f"change {self._counter}"
        pre = () if hooks else NO_HOOKS
        self.run(*pre, "commit", "-q", "-m", msg, *args, sync=sync, env=dict(env or {}))
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")

    @property
    def common_dir(self) -> Path:
        return Path(self.git("rev-parse", "--path-format=absolute", "--git-common-dir"))

    @property
    def git_dir(self) -> Path:
        return Path(self.git("rev-parse", "--path-format=absolute", "--git-dir"))

    @property
    def state_dir(self) -> Path:
        return self.common_dir / "gitvault"

    def worktree(self, name: str, branch: str | None = None, *, sync: bool | None = None) -> Repo:
        target = self.path.parent / name
        self.git("worktree", "add", "-q", "-b", branch or name, str(target))
        return Repo(target, sync=self.sync if sync is None else sync, branch_name=self.branch_name)

    def restart_walk(self) -> None:
        """Count every commit made so far as history from before gitvault: the drainer's walk
        of the worktrees' HEAD logs (which notes commits that ran no hook) begins now. For
        tests that make hookless commits to stage a scenario."""
        from gitvault.notes import walk
        from gitvault.resolve import resolve

        walk.begin(resolve(self.path))

    # -- the vault ---------------------------------------------------------------------
    def vault_tip(self) -> str | None:
        proc = self.run(
            "rev-parse", "--verify", "-q", f"refs/heads/{self.branch_name}", check=False
        )
        return proc.stdout.decode().strip() or None

    def vault_files(self) -> list[str]:
        return self.git("ls-tree", "-r", "--name-only", self.branch_name).splitlines()

    def note_paths(self) -> dict[str, str]:
        """commit sha → note path, for every note on the vault branch."""
        out = {}
        for path in self.vault_files():
            if path.startswith("notes/") and path.endswith(".md"):
                out[path.rsplit("/", 1)[1][:-3]] = path
        return out

    def show(self, path: str, ref: str | None = None) -> bytes:
        return self.run("show", f"{ref or self.branch_name}:{path}").stdout

    def note(self, sha: str) -> str | None:
        path = self.note_paths().get(sha)
        return None if path is None else self.show(path).decode("utf-8")

    def note_meta(self, sha: str) -> dict[str, Any]:
        text = self.note(sha)
        assert text is not None, f"no note for {sha}"
        return validate_note(text)

    def vault_log(self) -> list[tuple[str, str]]:
        """(sha, subject) of every vault commit, newest first."""
        lines = self.git("log", "--format=%H %s", self.branch_name).splitlines()
        return [(line[:40], line[41:]) for line in lines]

    def wait_for_notes(self, shas: Iterable[str], timeout: float = WAIT_SECONDS) -> None:
        wanted = set(shas)

        def done() -> bool:
            return wanted <= set(self.note_paths())

        try:
            wait_until(done, timeout, f"notes for {len(wanted)} commits")
        except AssertionError:
            missing = wanted - set(self.note_paths())
            try:  # never a plain open: a test may have planted a FIFO there
                log = read_text(self.state_dir / "log")
            except OSError as exc:
                log = f"({exc})"
            raise AssertionError(
                f"{len(missing)} notes missing, e.g. {sorted(missing)[:3]}; log:\n{log}"
            ) from None

    def wait_no_drainer(self, timeout: float = WAIT_SECONDS) -> None:
        wait_until(lambda: not drainer_pids(self.common_dir), timeout, "the drainer to exit")

    # -- gitvault ----------------------------------------------------------------------
    def gv(self, *args: str) -> Result:
        """gitvault ARGS in this process, for this repository (--repo)."""
        return cli("--repo", str(self.path), *args)

    def gv_proc(self, *args: str, env: Mapping[str, str] | None = None) -> Result:
        """gitvault ARGS as a subprocess run inside this worktree."""
        return cli_proc(*args, cwd=self.path, env=env)


def make_repo(
    path: Path,
    *,
    install: bool = True,
    commit: bool = True,
    sync: bool = True,
    bare: bool = False,
    claude: bool = False,
    identity: bool = False,
) -> Repo:
    """identity: git's user name and email in the repository's own config, for programs the
    tests run with a HOME of their own (the agent CLIs), where the global config is not seen."""
    path.mkdir(parents=True)
    git(path, "init", "-q", *(["--bare"] if bare else []), "-b", "main")
    repo = Repo(path, sync=sync)
    if bare:
        return repo
    if identity:
        repo.git("config", "user.name", "Test Dev")
        repo.git("config", "user.email", "dev@example.com")
    if commit:
        repo.write("README.md", "# project\n")
        repo.git("add", "README.md")
        repo.git(*NO_HOOKS, "commit", "-q", "-m", "Initial commit")
    if install:
        result = repo.gv("install", *([] if claude else ["--no-claude"]))
        assert result.code == 0, result
    return repo


def fast_history(
    repo: Repo,
    branch: str,
    count: int,
    *,
    start: str | None = None,
    base_time: int = 1_700_000_000,
    prefix: str = "f",
) -> list[str]:
    """Add `count` commits to `branch` with git fast-import (no hooks, written as one pack);
    each adds its own file. Returns their shas, oldest first."""
    parent = start or repo.head()
    chunks = []
    for i in range(count):
        msg = f"{prefix} commit {i}\n\nbody of {prefix} commit {i}\n".encode()
        content = f"line {i}\n".encode()
        stamp = base_time + i * 60
        header = f"commit refs/heads/{branch}\nmark :{i + 1}\n"
        header += f"author Hist Dev <hist@example.com> {stamp} +0000\n"
        header += f"committer Hist Dev <hist@example.com> {stamp} +0000\n"
        chunks.append(header.encode() + f"data {len(msg)}\n".encode() + msg)
        if i == 0:
            chunks.append(f"from {parent}\n".encode())
        chunks.append(
            f"M 100644 inline {prefix}/{i:05d}.txt\ndata {len(content)}\n".encode() + content
        )
        chunks.append(b"\n")
    repo.git("fast-import", "--quiet", "--force", input=b"".join(chunks))
    return repo.git("rev-list", "--reverse", f"{parent}..refs/heads/{branch}").splitlines()


def snapshot_user_state(repo: Repo, *, ignore_refs: Sequence[str] = ()) -> dict[str, Any]:
    """HEAD, index bytes, status and working-tree bytes, and every ref but the vault's."""
    files = {}
    for p in sorted(repo.path.rglob("*")):
        if ".git" in p.relative_to(repo.path).parts or not p.is_file():
            continue
        files[str(p.relative_to(repo.path))] = p.read_bytes()
    skip = {f"refs/heads/{repo.branch_name}", *ignore_refs}
    refs = [
        line
        for line in repo.git("for-each-ref", "--format=%(refname) %(objectname)").splitlines()
        if line.split(" ", 1)[0] not in skip
    ]
    return {
        "HEAD": (repo.git_dir / "HEAD").read_bytes(),
        "head_sha": repo.head(),
        "index": (repo.git_dir / "index").read_bytes(),
        "status": repo.git(
            "--no-optional-locks", "status", "--porcelain=v1", "--untracked-files=all"
        ),
        "files": files,
        "refs": refs,
    }
