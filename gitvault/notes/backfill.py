"""`gitvault backfill`: notes for history that has none. Batched, resumable, idempotent."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from gitvault.errors import GitvaultError
from gitvault.notes import quarantine, render
from gitvault.notes.commits import read_listed
from gitvault.notes.drain import Entry
from gitvault.notes.index import already_written, noted_shas
from gitvault.resolve import Location
from gitvault.vault import gitcmd, statedir
from gitvault.vault.store import Vault, Write

BATCH = 2000
Progress = Callable[[int, int], None]  # (done, total)


@dataclass
class BackfillResult:
    considered: int = 0
    written: int = 0
    already: int = 0
    set_aside: int = 0


def rev_args(
    vault: Vault, *, branch: str | None, all_branches: bool, since: str | None
) -> list[str]:
    args: list[str] = []
    if since:
        args.append(f"--since={since}")
    if all_branches:
        args += [f"--exclude={vault.branch}", "--branches"]  # --branches patterns omit refs/heads/
    else:
        args.append(f"refs/heads/{branch}" if branch else "HEAD")
    return args


def backfill(
    loc: Location,
    *,
    branch: str | None = None,
    all_branches: bool = False,
    since: str | None = None,
    progress: Progress | None = None,
) -> BackfillResult:
    vault = Vault(loc)
    vault.check_format()
    label = branch or (None if all_branches else _current_branch(loc))
    if not all_branches:
        rev = f"refs/heads/{branch}" if branch else "HEAD"
        probe = ["rev-parse", "--verify", "-q", f"{rev}^{{commit}}"]
        if gitcmd.run_git(probe, loc.workdir or loc.common_dir, check=False).returncode != 0:
            if branch:
                raise GitvaultError(f"no branch named {branch!r}", hint="see `git branch --list`")
            return BackfillResult()  # unborn HEAD: nothing is committed yet
    have = noted_shas(vault)
    args = rev_args(vault, branch=branch, all_branches=all_branches, since=since)
    where = loc.common_dir if branch or all_branches else (loc.workdir or loc.common_dir)
    cwd = loc.workdir or loc.common_dir
    total = int(gitcmd.run_git(["rev-list", "--count", *args, "--"], where).stdout.strip() or 0)
    result = BackfillResult()

    labels: dict[str, str | None] = {}  # the branch of each commit listed and not yet read

    def todo() -> Iterator[str]:
        """The commits to note, oldest first, as git lists them (never held whole: 1.3 M
        commits' list is ~200 MB of Python strings); one already noted is counted, not asked
        of git again (a resumed backfill). Every branch: the current branch's commits first,
        under its name, then each other branch's own commits under the branch git reached
        them from (`--source`), so that no note is left without a branch."""
        passes: list[tuple[list[str], str | None, bool]] = [(args, label, False)]
        if all_branches:
            current = _current_branch(loc)
            head = (gitcmd.ref_exists(cwd, "HEAD^{commit}") or "") if current else ""
            rest = [*args, f"^{head}"] if head else args
            since_args = [f"--since={since}"] if since else []
            passes = [([*since_args, head], current, False)] if head else []
            passes.append((["--source", "--format=%H %S", *rest], None, True))
        for listing, named, sourced in passes:
            command = ["log" if sourced else "rev-list", "--reverse", *listing, "--"]
            with gitcmd.stream_git(command, where) as out:
                tail = b""
                for chunk in out:
                    lines = (tail + chunk).split(b"\n")
                    tail = lines.pop()
                    yield from _unnoted(lines, have, result, labels, named, sourced)
                yield from _unnoted([tail], have, result, labels, named, sourced)
                if (ended := out.finish()).returncode != 0:
                    what = command[0]
                    raise gitcmd.GitError(f"git {what} failed: {gitcmd.tail(ended.stderr)}")

    batch: list[Write] = []
    skip = already_written(vault)

    def flush() -> None:
        made = vault.commit_packed(batch, skip_if=skip)
        result.written += len(made)
        result.already += len(batch) - len(made)
        batch.clear()
        if progress:
            progress(result.considered, total)

    for info in read_listed(cwd, todo()):
        result.considered += 1
        named = labels.pop(info.sha, label)
        try:  # validated exactly as the drainer validates; a bad commit is set aside
            batch.append(
                render.note_write(info, render.NoteContext(branch=named, source="backfill"))
            )
        except Exception as exc:  # noqa: BLE001 - one bad commit never stops a backfill
            line = Entry("commit", info.sha, named, None, None).line()
            quarantine.set_aside(statedir.ensure(loc), line, f"{type(exc).__name__}: {exc}")
            result.set_aside += 1
            continue
        if len(batch) >= BATCH:
            flush()
    if batch:
        flush()
    elif progress:
        progress(result.considered, total)
    # Nothing to repack: commit_packed wrote every batch straight into a pack.
    return result


def _unnoted(
    lines: list[bytes],
    have: set[str],
    result: BackfillResult,
    labels: dict[str, str | None],
    named: str | None,
    sourced: bool,
) -> Iterator[str]:
    for line in lines:
        text = line.strip().decode("utf-8", "replace")
        sha, _, source = text.partition(" ") if sourced else (text, "", "")
        if sha in have:
            result.considered += 1
            result.already += 1
        elif sha:
            labels[sha] = (source.removeprefix("refs/heads/") or None) if sourced else named
            yield sha


def _current_branch(loc: Location) -> str | None:
    return gitcmd.head_branch(loc.git_dir)
