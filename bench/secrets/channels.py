"""Secret redaction per channel: each sample of a corpus goes through gitvault's real paths in real
scratch repositories, and the channel counts it redacted when its secret is nowhere in what that
channel wrote or showed.

    python bench/secrets/channels.py                      # held-out 3, every channel
    python bench/secrets/channels.py --corpus corpus_heldout3.jsonl --limit 40 -v

Channels (a sample is measured where its shape allows):

- notes: the sample is a commit message (`git commit -m TEXT`); its note and the vault commit
  that writes it, after `gitvault backfill`.
- file names: a committed file is named with the secret (samples recognisable by their own
  shape); the note and the vault commit message.
- saves: `gitvault save --title <first line>` with the sample in the session's sections.
- transcripts: the sample typed as a Claude Code prompt; SessionStart, a commit, SessionEnd:
  the mechanical record the hook writes, and the session's ledger.
- state files: every file under <common git dir>/gitvault/ after all of the above, the search
  index included.
- recall, fold prompt, digest, agent files, search: the way out. The sample is planted in the
  vault unredacted (as an older gitvault or a teammate's clone could have written it) and must
  not come out: the SessionStart block, the prompt a model merger receives, `_master.md` after a
  fold by a merger that copies what it is given and by the builtin merger, the CLAUDE.md
  section, and the search index.

Everything vault-side is read from git itself (`git log -p` over the vault's refs), never from
gitvault's own answers.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shlex
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CHANNELS = (
    "notes",
    "file names",
    "saves",
    "transcripts",
    "state files",
    "recall",
    "fold prompt",
    "digest",
    "agent files",
    "search index",
)
Row = dict[str, Any]


def load(name: str | Path) -> list[Row]:
    path = Path(name) if Path(name).is_absolute() else HERE / name
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# ----------------------------------------------------------------------------- plumbing


def _git(cwd: Path, *args: str, input: bytes | None = None) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, input=input, capture_output=True, check=True, timeout=120
    )
    return proc.stdout.decode("utf-8", "replace")


def _cli(repo: Path, *args: str, stdin: str | None = None) -> tuple[int, str]:
    """`gitvault ARGS` in this process (the real CLI, without a process per call)."""
    from gitvault.cli import main

    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin or "")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["--repo", str(repo), *args])
    finally:
        sys.stdin = old_stdin
    return code, out.getvalue() + err.getvalue()


def _repo(root: Path, name: str, *, agents: str = "none") -> Path:
    path = root / name
    path.mkdir(parents=True)
    _git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("# project\n")
    _git(path, "add", "README.md")
    _git(path, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "Initial commit")
    code, out = _cli(path, "install", "--agent", agents)
    assert code == 0, out
    _set_toml(path, [("fold_on_session_end = true", "fold_on_session_end = false")])
    return path


def _vault(path: Path):  # noqa: ANN202 - gitvault is imported late (bench/run.py isolates git)
    from gitvault.resolve import resolve
    from gitvault.vault.store import Vault

    return Vault(resolve(path))


def _set_toml(path: Path, edits: list[tuple[str, str]]) -> None:
    vault = _vault(path)
    text = vault.read_text("vault.toml") or ""
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    vault.commit({"vault.toml": text.encode()}, "config: bench")


def _vault_history(path: Path) -> str:
    """Every version of every vault file and every vault commit message, from git."""
    refs = [
        r
        for r in _git(
            path, "for-each-ref", "--format=%(refname)", "refs/heads/vault", "refs/gitvault/"
        ).split()
        if not r.startswith("refs/gitvault/backup/")
    ]
    return _git(path, "log", "-p", "--format=%H%n%B", *refs, "--") if refs else ""


def _state_text(path: Path) -> str:
    """Every file in gitvault's state folder (the search index as the text it holds)."""
    from gitvault.resolve import resolve

    state = resolve(path).state_dir
    parts: list[str] = []
    for file in sorted(state.rglob("*")):
        if not file.is_file() or file.is_symlink():
            continue
        if file.suffix == ".sqlite":
            parts.append(_sqlite_text(file))
        else:
            parts.append(file.read_bytes().decode("utf-8", "replace"))
            with contextlib.suppress(ValueError):
                parts.append(json.dumps(json.loads(parts[-1]), ensure_ascii=False))
    return "\n".join(parts)


def _sqlite_text(file: Path) -> str:
    out: list[str] = []
    conn = sqlite3.connect(f"file:{file}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            with contextlib.suppress(sqlite3.DatabaseError):
                for row in conn.execute(f'SELECT * FROM "{table}"'):
                    out.extend(str(v) for v in row if isinstance(v, str))
    finally:
        conn.close()
    return "\n".join(out)


def _first_line(text: str, limit: int = 100) -> str:
    line = next((ln for ln in text.splitlines() if ln.strip()), text)
    return line.strip()[:limit]


def _session(text: str, marker: str) -> str:
    text = text.replace("\n#", "\n #")  # a sample's own "# comment" line is not a heading
    return (
        f"## Summary\nWorked on the deploy config ({marker}).\n{text}\n\n"
        f"## Key Decisions\n- Keep the credential in the deploy config: {text} ({marker})\n\n"
        f"## Gotchas\n- The old value still works: {text} ({marker})\n\n"
        f"## Conventions\n- Credentials are passed as {text} ({marker})\n\n"
        f"## Next Steps\n- Rotate it ({marker})\n"
    )


_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def survives(secret: str, text: str) -> bool:
    """The secret is still in the text: as written, or lower-cased with its punctuation
    changed (a slug, a file name made from it), when that form is long enough to say so."""
    if secret in text:
        return True
    folded = _NOT_ALNUM.sub("", secret.lower())
    return len(folded) >= 12 and folded in _folded(text)


_FOLDED: dict[int, tuple[str, str]] = {}


def _folded(text: str) -> str:
    """The text lower-cased without punctuation, made once per haystack (every sample of a
    channel is looked for in the same one)."""
    cached = _FOLDED.get(id(text))
    if cached is None or cached[0] is not text:
        if len(_FOLDED) > 8:
            _FOLDED.clear()
        cached = (text, _NOT_ALNUM.sub("", text.lower()))
        _FOLDED[id(text)] = cached
    return cached[1]


class Tally:
    """Per channel: the kinds measured and the kinds whose secret survived."""

    def __init__(self) -> None:
        self.measured: dict[str, list[str]] = {c: [] for c in CHANNELS}
        self.missed: dict[str, list[str]] = {c: [] for c in CHANNELS}

    def check(self, channel: str, row: Row, text: str) -> None:
        self.measured[channel].append(row["kind"])
        # a split value (``parts``) is redacted only when none of its fragments is left
        if any(survives(part, text) for part in row.get("parts") or [row["secret"]]):
            self.missed[channel].append(row["kind"])

    def summary(self) -> dict[str, dict[str, object]]:
        out: dict[str, dict[str, object]] = {}
        for channel in CHANNELS:
            n = len(self.measured[channel])
            missed = self.missed[channel]
            out[channel] = {
                "measured": n,
                "redacted": n - len(missed),
                "recall": (n - len(missed)) / n if n else None,
                "missed": missed,
            }
        return out


# ----------------------------------------------------------------------------- the channels


def notes_and_file_names(root: Path, rows: list[Row], tally: Tally) -> Path:
    notes, names = _repo(root, "notes"), _repo(root, "names")
    for index, row in enumerate(rows):
        _git(
            notes,
            "-c",
            "core.hooksPath=/dev/null",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            row["text"],
        )
        if row.get("shape") == "provider" and _path_safe(row["secret"]):
            name = _file_name(row["secret"], index)
            target = names / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("x\n")
            _git(names, "add", "--", name)
            _git(names, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "chore: add file")
    for repo in (notes, names):
        code, out = _cli(repo, "backfill")
        assert code == 0, out
    history = _vault_history(notes)
    named = _vault_history(names)
    for row in rows:
        tally.check("notes", row, history)
        if row.get("shape") == "provider" and _path_safe(row["secret"]):
            tally.check("file names", row, named)
    return notes


def _path_safe(secret: str) -> bool:
    """A secret that can be a file's name: no control or path-breaking character, not a flag,
    short enough for the file system (a name is at most 255 bytes)."""
    return (
        all(c not in secret for c in "\n\r\t\0\\")
        and not secret.startswith("-")
        and len(secret.encode()) <= 200
    )


_NAME_FORMS = ("leak/{s}.txt", "config/{s}", "backup/token-{s}.json", "{s}.env", "tmp/{s}/key")


def _file_name(secret: str, index: int) -> str:
    return _NAME_FORMS[index % len(_NAME_FORMS)].format(s=secret.strip("/"))


def saves(root: Path, rows: list[Row], tally: Tally) -> Path:
    repo = _repo(root, "saves")
    for index, row in enumerate(rows):
        code, out = _cli(
            repo,
            "save",
            "--title",
            _first_line(row["text"]),
            stdin=_session(row["text"], f"m{index}"),
        )
        assert code == 0, out
    history = _vault_history(repo)
    for row in rows:
        tally.check("saves", row, history)
    return repo


def transcripts(root: Path, rows: list[Row], tally: Tally) -> Path:
    from gitvault.agents import adapters, runtime

    repo = _repo(root, "transcripts", agents="claude")
    adapter = adapters.get("claude")
    folder = root / "transcripts-files"
    folder.mkdir()
    os.environ["CLAUDE_PROJECT_DIR"] = str(repo)
    try:
        for index, row in enumerate(rows):
            sid = str(uuid.UUID(int=index + 1))
            transcript = folder / f"{sid}.jsonl"
            transcript.write_text(_transcript(sid, row["text"]), encoding="utf-8")
            base = {"session_id": sid, "transcript_path": str(transcript), "cwd": str(repo)}
            runtime.run(
                adapter,
                "session-start",
                "SessionStart",
                json.dumps({**base, "hook_event_name": "SessionStart", "source": "startup"}),
            )
            (repo / "work.txt").write_text(f"{index}\n")
            _git(repo, "add", "work.txt")
            _git(
                repo, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", f"feat: step {index}"
            )
            runtime.run(
                adapter,
                "session-end",
                "SessionEnd",
                json.dumps({**base, "hook_event_name": "SessionEnd", "reason": "exit"}),
            )
    finally:
        os.environ.pop("CLAUDE_PROJECT_DIR", None)
    history = _vault_history(repo) + _state_text(repo)
    for row in rows:
        tally.check("transcripts", row, history)
    return repo


def _transcript(sid: str, prompt: str) -> str:
    def user(text: str, n: int) -> str:
        return json.dumps(
            {
                "type": "user",
                "sessionId": sid,
                "uuid": str(uuid.uuid4()),
                "isSidechain": False,
                "timestamp": f"2026-12-01T10:0{n}:00Z",
                "message": {"role": "user", "content": text},
            }
        )

    return "\n".join([user(prompt, 0), user(f"and again: {prompt}", 1)]) + "\n"


MERGER = r"""
import re, sys
prompt = sys.stdin.read()
with open(sys.argv[1], "a", encoding="utf-8") as log:
    log.write(prompt + "\n\x00\n")
lines = []
for cite, body in re.findall(r'<vault-item id="([^"]+)"[^>]*>\n(.*?)\n</vault-item>', prompt, re.S):
    for line in body.splitlines()[1:]:
        if line.strip() and not line.startswith("#"):
            lines.append(f"- {line.strip()[:300]} ({cite})")
cats = ["Architecture", "Decisions", "Conventions", "Gotchas", "State", "Next steps"]
out = []
for i, name in enumerate(cats):
    out.append(f"## {name}")
    mine = lines[i::len(cats)] if lines else []
    out += mine or ["- (none yet)"]
print("\n".join(out))
"""


def way_out(
    root: Path, rows: list[Row], tally: Tally, *, batch: int = 4, group: int = 20
) -> list[Path]:
    """Planted unredacted: recall after each planting; a copying merger and the builtin one
    fold each batch; the search index after each group (a fresh vault per group keeps every
    fold small)."""
    from gitvault.memory import recall

    script = root / "copying_merger.py"
    script.write_text(MERGER)
    prompts = root / "prompts.log"
    command = (
        f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {shlex.quote(str(prompts))}"
    )
    repos: list[Path] = []
    for first in range(0, len(rows), group):
        repo = _repo(root, f"outbound-{first}", agents="claude")
        repos.append(repo)
        _git(repo, "config", "gitvault.fold.command", command)  # this clone's own: it runs
        vault = _vault(repo)
        rows_here = rows[first : first + group]
        for start in range(0, len(rows_here), batch):
            chunk = rows_here[start : start + batch]
            for offset, row in enumerate(chunk):
                _plant(vault, row, first + start + offset)
                tally.check("recall", row, recall.build(repo).text)
            prompts.write_text("")
            folded = []
            for merger in ("command", "builtin"):
                extra = ["--rebuild"] if merger == "builtin" else []
                code, out = _cli(repo, "fold", "--merger", merger, *extra)
                assert code in (0, 4), out
                folded.append(vault.read_text("_master.md") or "")
                claude_md = repo / "CLAUDE.md"
                folded.append(claude_md.read_text() if claude_md.exists() else "")
            prompt = prompts.read_text(encoding="utf-8")
            digests, agent_files = folded[0] + folded[2], folded[1] + folded[3]
            for row in chunk:
                tally.check("fold prompt", row, prompt)
                tally.check("digest", row, digests)
                tally.check("agent files", row, agent_files)
        _cli(repo, "search", "credential")
        index = _state_text(repo)
        for row in rows_here:
            tally.check("search index", row, index)
    return repos


def _plant(vault, row: Row, index: int) -> None:  # noqa: ANN001
    slug = f"2026-12-01-{1000 + index // 60:04d}-planted-{index}"[:60]
    meta = (
        '---\nkind: "session"\n'
        f'slug: "{slug}"\ntitle: "planted {index}"\n'
        f'saved_at: "2026-12-01T{10 + index // 3600:02d}:{index // 60 % 60:02d}:'
        f'{index % 60:02d}+00:00"\nmode: "manual"\n---\n'
    )
    body = f"# planted {index}\n\n" + _session(row["text"], f"m{index}")
    vault.commit({f"sessions/{slug}.md": (meta + body).encode()}, f"session {slug}")


def run_all(
    rows: list[Row], *, root: Path | None = None, say: Callable[[str], None] = print
) -> dict[str, dict[str, object]]:
    tally = Tally()
    with _scratch(root) as where:
        repos: list[Path] = []
        started = time.perf_counter()
        for name, step in (
            ("notes and file names", notes_and_file_names),
            ("saves", saves),
            ("transcripts", transcripts),
            ("the way out", way_out),
        ):
            made = step(where, rows, tally)
            repos += made if isinstance(made, list) else [made]
            say(f"secrets channels: {name} done ({time.perf_counter() - started:.0f} s)")
        state = "\n".join(_state_text(r) for r in repos)
        for row in rows:
            tally.check("state files", row, state)
    return tally.summary()


@contextlib.contextmanager
def _scratch(root: Path | None) -> Iterator[Path]:
    """A scratch folder with its own HOME and git config (root: kept there, to look into)."""
    with contextlib.ExitStack() as stack:
        if root is None:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="gitvault-secrets-"))
        else:
            root.mkdir(parents=True)
            tmp = str(root)
        home = Path(tmp) / "home"
        home.mkdir()
        config = Path(tmp) / "gitconfig"
        config.write_text(
            "[user]\n\tname = Bench\n\temail = bench@example.invalid\n"
            "[init]\n\tdefaultBranch = main\n[gc]\n\tauto = 0\n"
        )
        saved = {
            k: os.environ.get(k)
            for k in ("HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "XDG_CONFIG_HOME")
        }
        os.environ.update(
            HOME=str(home),
            GIT_CONFIG_GLOBAL=str(config),
            GIT_CONFIG_NOSYSTEM="1",
            XDG_CONFIG_HOME=str(home / ".config"),
        )
        try:
            yield Path(tmp) / "repos"
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="corpus_heldout3.jsonl")
    parser.add_argument("--limit", type=int, default=0, help="only the first N samples")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the kinds missed")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", type=Path, help="build the repositories in this new folder")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent.parent))
    rows = load(args.corpus)
    if args.limit:
        rows = rows[: args.limit]
    result = run_all(rows, root=args.keep, say=lambda line: print(line, file=sys.stderr))
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{args.corpus}: {len(rows)} kinds")
    for channel, data in result.items():
        n, ok = data["measured"], data["redacted"]
        share = f"{100 * ok / n:.1f} %" if n else "—"  # type: ignore[operator]
        print(f"  {channel:<13} {share:>8}  ({ok}/{n})")
        if args.verbose and data["missed"]:
            print("      missed: " + ", ".join(data["missed"]))  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
