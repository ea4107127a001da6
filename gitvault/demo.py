"""`gitvault demo`: the loop on a scratch repository, offline, narrated."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from gitvault import install
from gitvault.agents.agentfiles import fold_and_patch
from gitvault.fold.run import FoldOptions
from gitvault.memory import history, recall, sessions
from gitvault.resolve import resolve
from gitvault.vault import gitcmd, layout
from gitvault.vault.store import Vault

Say = Callable[[str], None]

DEMO_SESSION = """# Greeting feature
## Summary
Turned the hello script into a greet() function and covered it with a test in a second worktree.
## Key Decisions
- greet() returns the string instead of printing, so it can be tested
- Tests live beside the code (test_app.py), run with pytest
## Next Steps
- Add a CLI entry point that calls greet()
<private>the staging password is hunter2</private>
The deploy token was GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 (now rotated).
"""


DEMO_ENV = {
    "GIT_AUTHOR_NAME": "Demo Dev",
    "GIT_AUTHOR_EMAIL": "dev@example.com",
    "GIT_COMMITTER_NAME": "Demo Dev",
    "GIT_COMMITTER_EMAIL": "dev@example.com",
    "GITVAULT_SYNC": "1",  # notes land before `git commit` returns, so the demo can show them
}


def _git(cwd: Path, *args: str) -> str:
    return gitcmd.run_git(args, cwd, env=DEMO_ENV).stdout.decode("utf-8", "replace").strip()


def run(say: Say, *, keep: bool = False) -> Path:
    root = Path(tempfile.mkdtemp(prefix="gitvault-demo-"))
    repo = root / "project"
    repo.mkdir()
    try:
        say(f"1. a scratch repository at {repo}")
        _git(repo, "init", "-q", "-b", "main")
        (repo / "app.py").write_text("print('hello')\n")
        _git(repo, "add", "app.py")
        _git(repo, "commit", "-q", "-m", "Initial commit: hello app")

        say("2. gitvault install: the orphan vault branch and the git hook shims")
        report = install.install(resolve(repo))
        for line in report.changes:
            say(f"     {line}")

        say("3. commits in the main worktree and in a second worktree")
        (repo / "app.py").write_text("def greet(name):\n    return f'hello {name}'\n")
        _git(
            repo,
            "commit",
            "-q",
            "-am",
            "Add greet()",
            "-m",
            "Greeting is now a function so tests can call it.",
        )
        _git(repo, "worktree", "add", "-q", "-b", "feature", str(root / "feature"))
        feature = root / "feature"
        (feature / "test_app.py").write_text(
            "from app import greet\n\ndef test_greet():\n    assert greet('x') == 'hello x'\n"
        )
        _git(feature, "add", "test_app.py")
        _git(feature, "commit", "-q", "-m", "Test greet() from the feature worktree")
        (repo / "README.md").write_text("# demo\n")
        _git(repo, "add", "README.md")
        _git(repo, "commit", "-q", "-m", "Add a README")

        loc = resolve(repo)
        vault = Vault(loc)
        say("4. one note per commit, from both worktrees, on the vault branch:")
        for entry in history.entries(vault, kind="note"):
            say(f"     {entry.time}  {entry.title}  ->  {entry.paths[0]}")
        latest = next(history.entries(vault, kind="note", limit=1))
        say(f"5. the newest note ({latest.paths[0]}):")
        for line in (vault.read_text(latest.paths[0]) or "").splitlines():
            say(f"     | {line}")
        say("6. an agent saves its session (APPEND): recall fences, <private> text and secrets")
        say("   are stripped before anything is written")
        saved = sessions.save_session(loc, DEMO_SESSION, session_id="demo-session", agent="demo")
        say(f"     saved {saved.path} ({saved.redactions} secret redacted)")
        say("7. gitvault fold (REWRITE): the builtin merger, offline; the default merger is")
        say("   `claude -p` with a small model")
        result = fold_and_patch(loc, FoldOptions(merger="builtin")).result
        say(f"     folded {result.new_items} items → {result.commits[-1][:7]}; the digest:")
        for line in (vault.read_text(layout.DIGEST) or "").splitlines():
            say(f"     | {line}")
        again = fold_and_patch(loc, FoldOptions(merger="builtin")).result
        say(f"     a second fold: {again.skipped_reason} (no model call, no commit)")
        block = recall.build(repo)
        say(f"8. what the next agent session gets at start: {len(block.text)} characters")
        for line in block.text.splitlines()[:12]:
            say(f"     > {line}")
        say("     > …")
        say("9. your branches were not touched; the memory is plain git history (`git log vault`):")
        for line in _git(repo, "log", "--oneline", "vault").splitlines():
            say(f"     {line}")
        if keep:
            say(f"   the scratch repository is kept: `git -C {repo} log vault` audits it")
        else:
            say("   (the scratch repository is deleted now; `gitvault demo --keep` keeps it)")
        say("next: in your own repository run `gitvault install`, commit as usual, and ask")
        say("   `gitvault search WORDS`, `gitvault log` or `gitvault status --line` what it knows")
        return root
    finally:
        if keep:
            say(f"kept the scratch repository: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
