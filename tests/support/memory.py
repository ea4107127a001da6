"""Helpers for the memory-loop tests (save, fold, mergers, patch): a stand-in `claude`
executable that records what it was given and answers from a script, vault config edits through
Vault.commit, and an independent reading of the vault with plain git."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import tomlkit

from gitvault.resolve import resolve
from gitvault.vault import frontmatter
from gitvault.vault.store import Vault
from tests.support.repos import Repo, Result

PYTHON = sys.executable
CATEGORIES = ("Architecture", "Decisions", "Conventions", "Gotchas", "State", "Next steps")
ITEM_ID = re.compile(r'<vault-item id="([^"]+)" kind="(?:note|session)">')
CITE = re.compile(r"\b([cs]):([A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9]|[A-Za-z0-9])")

SESSION_TEXT = """\
# {title}

## Summary
{summary}

## Key Decisions
- {decision}

## Next Steps
- {next_step}
"""


class Clock:
    """The time a test stamps on what it saves and commits, one second apart: the order that
    sleeping a second between them would give (saved_at and commit dates have one-second
    resolution), without the wait. It starts an hour ago, so nothing it stamps is in the
    future of the commits a test makes with the real time."""

    def __init__(self, start: float | None = None) -> None:
        self.now = int(time.time() - 3600 if start is None else start)

    def tick(self) -> int:
        self.now += 1
        return self.now

    def moment(self) -> datetime:
        return datetime.fromtimestamp(self.tick()).astimezone()

    def git_dates(self) -> dict[str, str]:
        """GIT_AUTHOR_DATE and GIT_COMMITTER_DATE for the next commit."""
        stamp = f"@{self.tick()} +0000"
        return {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}


def session_text(
    title: str = "Session",
    summary: str = "Did the work.",
    decision: str = "Keep it simple",
    next_step: str = "Write more tests",
) -> str:
    return SESSION_TEXT.format(title=title, summary=summary, decision=decision, next_step=next_step)


# --------------------------------------------------------------------------- running the CLI


def cli_in(repo: Repo, *args: str, stdin: str | None = None) -> Result:
    """gitvault ARGS in this process for `repo`, with optional stdin text."""
    from gitvault.cli import main

    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    old_cwd = Path.cwd()
    try:
        os.chdir(repo.path)
        if stdin is not None:
            sys.stdin = io.StringIO(stdin)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["--repo", str(repo.path), *args])
    finally:
        sys.stdin = old_stdin
        os.chdir(old_cwd)
    return Result(code, out.getvalue(), err.getvalue())


def cli_sub(
    repo: Repo,
    *args: str,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 120,
) -> Result:
    """`python -m gitvault ARGS` as a subprocess inside the repository."""
    full = dict(os.environ)
    full.update(env or {})
    proc = subprocess.run(
        [PYTHON, "-m", "gitvault", *args],
        cwd=repo.path,
        input=stdin,
        capture_output=True,
        text=True,
        env=full,
        timeout=timeout,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def start_fold(
    repo: Repo, *args: str, env: Mapping[str, str] | None = None
) -> subprocess.Popen[str]:
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.Popen(
        [PYTHON, "-m", "gitvault", "fold", *args],
        cwd=repo.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full,
    )


# --------------------------------------------------------------------------- the vault


def vault_of(repo: Repo) -> Vault:
    return Vault(resolve(repo.path))


def vault_text(repo: Repo, path: str, ref: str = "vault") -> str | None:
    proc = repo.run("show", f"{ref}:{path}", check=False)
    return proc.stdout.decode("utf-8") if proc.returncode == 0 else None


def vault_log(repo: Repo) -> list[str]:
    """Subjects of the vault's commits, newest first."""
    return repo.git("log", "--format=%s", "vault").splitlines()


def set_config(repo: Repo, section: str, **values: Any) -> None:
    """Edit vault.toml on the vault branch (one vault commit, as a person would)."""
    vault = vault_of(repo)
    text = vault.read_text("vault.toml")
    assert text is not None
    doc = tomlkit.parse(text)
    table = doc.setdefault(section, tomlkit.table())
    for key, value in values.items():
        table[key] = value
    vault.commit({"vault.toml": tomlkit.dumps(doc).encode()}, f"config {section}: {sorted(values)}")


def digest_meta_body(repo: Repo) -> tuple[dict[str, Any], str]:
    text = vault_text(repo, "_master.md")
    assert text is not None, "no _master.md on the vault branch"
    return frontmatter.parse(text)


def digest_categories(body: str) -> dict[str, list[str]]:
    """Headings (## …) → their '- ' lines, read independently of gitvault.digest."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    for line in body.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            out[current] = []
        elif current is not None and line.startswith("- "):
            out[current].append(line)
    return out


def watermark(repo: Repo) -> str | None:
    text = vault_text(repo, "_master.md")
    if text is None:
        return None
    meta, _ = frontmatter.parse(text)
    mark = meta.get("watermark")
    return mark if isinstance(mark, str) else None


def item_ids_between(repo: Repo, start: str | None, end: str) -> list[str]:
    """Cite ids of the notes and sessions added in start..end, with plain git (independent of
    gitvault.items): c:<first 7 of the noted sha> or s:<slug>."""
    rng = [end] if start is None else [f"{start}..{end}"]
    shas = repo.git("rev-list", "--reverse", "--no-merges", *rng).splitlines()
    out: list[str] = []
    for sha in shas:
        names = repo.git(
            "diff-tree", "--root", "--no-commit-id", "--name-only", "--diff-filter=A", "-r", sha
        ).splitlines()
        for name in names:
            if not name.endswith(".md") or "/" not in name:
                continue
            stem = name.rsplit("/", 1)[1][:-3]
            if name.startswith("notes/"):
                out.append(f"c:{stem[:7]}")
            elif name.startswith("sessions/"):
                out.append(f"s:{stem}")
    return out


def all_item_ids(repo: Repo) -> set[str]:
    """Every note and session on the vault tip, as cite ids."""
    out = set()
    for name in repo.git("ls-tree", "-r", "--name-only", "vault").splitlines():
        if not name.endswith(".md") or "/" not in name:
            continue
        stem = name.rsplit("/", 1)[1][:-3]
        if name.startswith("notes/"):
            out.add(f"c:{stem[:7]}")
        elif name.startswith("sessions/"):
            out.add(f"s:{stem}")
    return out


def fold_commits(repo: Repo) -> list[tuple[str, str]]:
    """(vault commit sha, watermark) of every fold commit, oldest first."""
    out = []
    for line in repo.git("log", "--reverse", "--format=%H %s", "vault").splitlines():
        sha, subject = line.split(" ", 1)
        if subject.startswith("fold "):
            meta, _ = frontmatter.parse(vault_text(repo, "_master.md", sha) or "")
            out.append((sha, str(meta["watermark"])))
    return out


def assert_citations_exist(repo: Repo, body: str) -> int:
    """Every c:/s: citation in the digest names a note or session that exists; returns how
    many were checked."""
    known = all_item_ids(repo)
    full_notes = {
        n.rsplit("/", 1)[1][:-3]
        for n in repo.git("ls-tree", "-r", "--name-only", "vault", "notes").splitlines()
    }
    count = 0
    for line in body.splitlines():
        if not line.startswith("- ") or line.startswith("- [… ") or line == "- (none yet)":
            continue
        cites = CITE.findall(line)
        assert cites, f"digest line without a citation: {line}"
        for kind, ident in cites:
            count += 1
            if kind == "c":
                assert any(s.startswith(ident.lower()) for s in full_notes), (
                    f"c:{ident} has no note"
                )
            else:
                assert f"s:{ident}" in known, f"s:{ident} has no session"
    return count


# --------------------------------------------------------------------------- history in bulk


def backfilled_repo(repo: Repo, count: int, *, subjects: Iterable[str] | None = None) -> list[str]:
    """Add `count` commits to main with fast-import (no hooks) and note them with
    `gitvault backfill`; returns their shas oldest first."""
    subjects = list(subjects) if subjects is not None else None
    parent = repo.head()
    chunks = []
    for i in range(count):
        subject = subjects[i % len(subjects)].format(i=i) if subjects else f"feat: change {i}"
        msg = f"{subject}\n\nWhy change {i} was made.\n".encode()
        content = f"line {i}\n".encode()
        stamp = 1_700_000_000 + i * 60
        chunks.append(
            f"commit refs/heads/main\nmark :{i + 1}\n"
            f"author Hist Dev <hist@example.com> {stamp} +0000\n"
            f"committer Hist Dev <hist@example.com> {stamp} +0000\n".encode()
            + f"data {len(msg)}\n".encode()
            + msg
        )
        if i == 0:
            chunks.append(f"from {parent}\n".encode())
        chunks.append(f"M 100644 inline src/{i:05d}.txt\ndata {len(content)}\n".encode() + content)
        chunks.append(b"\n")
    repo.git("fast-import", "--quiet", "--force", input=b"".join(chunks))
    repo.git("reset", "-q", "--hard", "main")
    shas = repo.git("rev-list", "--reverse", f"{parent}..main").splitlines()
    result = cli_in(repo, "backfill")
    assert result.code == 0, result
    return shas


# --------------------------------------------------------------------------- the stand-in claude


@dataclass
class Step:
    """What the stand-in does on one call: optionally signal readiness and sleep, optionally
    start a grandchild, then print `answer` and exit with `exit`."""

    answer: str = ""
    sleep: float = 0.0
    exit: int = 0
    ready: bool = False
    grandchild: bool = False

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


STAND_IN = """\
#!{python}
# A stand-in for the `claude` CLI, written by gitvault's tests. It records its argv, stdin,
# environment and pid, then does what the current step of the script says.
import json, os, subprocess, sys, time

STATE = {state!r}
calls = os.path.join(STATE, "calls")
os.makedirs(calls, exist_ok=True)
n = 0
while True:
    path = os.path.join(calls, "%04d.json" % n)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        break
    except FileExistsError:
        n += 1
prompt = sys.stdin.read()
record = {{"n": n, "argv": sys.argv[1:], "stdin": prompt, "env": dict(os.environ),
          "pid": os.getpid(), "pgid": os.getpgid(0), "sid": os.getsid(0)}}
os.write(fd, json.dumps(record).encode())
os.close(fd)
with open(os.path.join(STATE, "script.json")) as fh:
    script = json.load(fh)
steps = script["steps"]
step = steps[min(n - script["base"], len(steps) - 1)]
if step.get("grandchild"):
    child = subprocess.Popen(["sleep", "60"])
    with open(os.path.join(STATE, "grandchild-%04d" % n), "w") as fh:
        fh.write(str(child.pid))
if step.get("ready"):
    with open(os.path.join(STATE, "ready-%04d" % n), "w") as fh:
        fh.write(str(os.getpid()))
if step.get("sleep"):
    time.sleep(step["sleep"])
sys.stdout.write(step.get("answer", ""))
sys.stdout.flush()
open(os.path.join(calls, "%04d.done" % n), "w").close()
sys.exit(step.get("exit", 0))
"""


# The key a user may have in their environment: the fold's model child must never see it.
PARENT_API_KEY = "sk-ant-parent-only-000000000000000000"


class StandIn:
    """A fake `claude` (or any merger command) executable in its own bin folder."""

    def __init__(self, root: Path, name: str = "claude") -> None:
        self.root = root
        self.bin = root / "bin"
        self.state = root / "state"
        self.bin.mkdir(parents=True, exist_ok=True)
        self.state.mkdir(parents=True, exist_ok=True)
        self.exe = self.bin / name
        self.exe.write_text(STAND_IN.format(python=PYTHON, state=str(self.state)))
        self.exe.chmod(0o755)
        self.script(Step(answer=""))

    def script(self, *steps: Step) -> None:
        """The steps the next calls follow (the last one repeats)."""
        payload = {"base": self.count(), "steps": [s.as_dict() for s in steps]}
        tmp = self.state / "script.json.tmp"
        tmp.write_text(json.dumps(payload))
        tmp.replace(self.state / "script.json")

    def calls(self) -> list[dict[str, Any]]:
        folder = self.state / "calls"
        if not folder.is_dir():
            return []
        out = []
        for path in sorted(folder.glob("*.json")):
            for _ in range(50):  # a record being written right now
                try:
                    record = json.loads(path.read_text())
                    break
                except ValueError:
                    time.sleep(0.02)
            else:
                raise AssertionError(f"unreadable call record {path}")
            record["done"] = path.with_suffix(".done").exists()
            out.append(record)
        return out

    def count(self) -> int:
        folder = self.state / "calls"
        return len(list(folder.glob("*.json"))) if folder.is_dir() else 0

    def path_env(self) -> str:
        return f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}"

    def wait_ready(
        self, n: int, proc: subprocess.Popen[str] | None = None, timeout: float = 60
    ) -> int:
        """Wait for call n to signal readiness; returns the stand-in's pid."""
        path = self.state / f"ready-{n:04d}"
        deadline = time.monotonic() + timeout
        while not path.exists():
            if proc is not None and proc.poll() is not None:
                out, err = proc.communicate()
                raise AssertionError(
                    f"fold exited ({proc.returncode}) before call {n}:\n{out}\n{err}"
                )
            if time.monotonic() > deadline:
                raise AssertionError(f"the stand-in never reached call {n}")
            time.sleep(0.02)
        while True:
            text = path.read_text()
            if text:
                return int(text)
            time.sleep(0.01)


def prompt_items(prompt: str) -> list[str]:
    return ITEM_ID.findall(prompt)


def digest_answer(lines: Mapping[str, Iterable[str]] | None = None, *, extra: str = "") -> str:
    """A well-formed merger answer: every category, with the given lines or the placeholder."""
    lines = lines or {}
    parts = []
    for name in CATEGORIES:
        parts.append(f"## {name}")
        got = list(lines.get(name, []))
        parts.extend(got or ["- (none yet)"])
        parts.append("")
    return "\n".join(parts) + extra


def process_gone(pid: int, timeout: float = 10.0) -> bool:
    """True once pid no longer runs (gone, or a zombie nobody has reaped yet)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return True
        state = stat.rsplit(")", 1)[1].split()[0]
        if state in ("Z", "X"):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def kill_quietly(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


KILL_DRIVER = textwrap.dedent(
    """\
    # Runs `gitvault fold` and SIGKILLs itself around the k-th digest commit (test instrument).
    import os, signal, sys
    from gitvault.fold import run as fold_mod
    from gitvault.cli import main

    when, k = sys.argv[1], int(sys.argv[2])
    real = fold_mod._commit_digest
    seen = 0

    def instrumented(*args, **kwargs):
        global seen
        seen += 1
        if when == "before" and seen == k:
            os.kill(os.getpid(), signal.SIGKILL)
        sha = real(*args, **kwargs)
        if when == "after" and seen == k:
            os.kill(os.getpid(), signal.SIGKILL)
        return sha

    fold_mod._commit_digest = instrumented
    sys.exit(main(sys.argv[3:]))
    """
)


def dated_history(
    repo: Repo,
    commits: list[tuple[str, list[str]]],
    *,
    start: int | None = None,
    step: int = 3600,
    body: str = "",
) -> list[str]:
    """Commits (subject, files) on the current branch via fast-import, at increasing times,
    noted with `gitvault backfill`; their shas oldest first."""
    start = int(time.time()) + 60 if start is None else start  # after the fixture's commit
    parent = repo.head()
    branch = repo.git("symbolic-ref", "--short", "HEAD")
    chunks = []
    for i, (subject, files) in enumerate(commits):
        msg = (f"{subject}\n\n{body}\n" if body else f"{subject}\n").encode()
        stamp = start + i * step
        chunks.append(
            f"commit refs/heads/{branch}\nmark :{i + 1}\n"
            f"author Dev <dev@example.com> {stamp} +0000\n"
            f"committer Dev <dev@example.com> {stamp} +0000\n".encode()
            + f"data {len(msg)}\n".encode()
            + msg
        )
        if i == 0:
            chunks.append(f"from {parent}\n".encode())
        for path in files:
            content = f"{subject}\n".encode()
            chunks.append(f"M 100644 inline {path}\ndata {len(content)}\n".encode() + content)
        chunks.append(b"\n")
    repo.git("fast-import", "--quiet", "--force", input=b"".join(chunks))
    repo.git("reset", "-q", "--hard", branch)
    result = cli_in(repo, "backfill")
    assert result.code == 0, result
    return repo.git("rev-list", "--reverse", f"{parent}..{branch}").splitlines()
