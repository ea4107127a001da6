"""The fold's child `claude -p`, the real CLI against the Messages API mock:
the request is gitvault's merge prompt plus a small overhead of gitvault's own system prompt,
with no extended thinking and no tools, and a fold leaves nothing behind under the child's
HOME/.claude. Before this, the child sent Claude Code's ~25,700-character default system prompt
with a 31,999-token thinking budget and left an empty ~/.claude/projects/<tmp>/ per fold.

Marked `claude`; skipped with the reason printed when the CLI cannot be had (or failed with
GITVAULT_REQUIRE_CLAUDE=1)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.memory import cli_sub, digest_answer, digest_meta_body, prompt_items
from tests.support.mock_anthropic import MockAnthropic, Reply, last_user_text, received_text
from tests.support.repos import Repo

pytestmark = pytest.mark.claude

FOLD_PROMPT = "You maintain the memory digest of a software project"
MAX_OVERHEAD = 2000  # characters the request may carry besides the merge prompt
TOKEN = "fold-child-token"


def files_under(root: Path) -> list[str]:
    if not root.exists():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_the_fold_child_sends_the_prompt_plus_a_small_overhead_and_leaves_nothing(
    claude: Path, anthropic_api: MockAnthropic, repo: Repo, tmp_path: Path
) -> None:
    folds: list[dict[str, Any]] = []

    def respond(body: dict[str, Any]) -> Reply | str:
        last = last_user_text(body)
        if FOLD_PROMPT in last:
            folds.append(body)
            ids = ", ".join(prompt_items(last))
            return digest_answer({"State": [f"- Work is progressing ({ids})"]})
        return "Nothing to do."

    anthropic_api.responder = respond
    home = tmp_path / "child-home"
    home.mkdir()
    env = {
        "HOME": str(home),
        "GITVAULT_CLAUDE": str(claude),
        "ANTHROPIC_BASE_URL": anthropic_api.base_url,
        "ANTHROPIC_AUTH_TOKEN": TOKEN,  # the key is removed from the child; a token is not
        "DISABLE_AUTOUPDATER": "1",
    }
    repo.commit("feat: add the parser")
    repo.commit("fix: the tokenizer needs a final newline")
    first = cli_sub(repo, "fold", env=env, timeout=180)
    assert first.code == 0, first
    after_first = files_under(home / ".claude")
    repo.commit("docs: explain the parser")
    second = cli_sub(repo, "fold", env=env, timeout=180)
    assert second.code == 0, second
    assert len(folds) == 2, [last_user_text(b)[:80] for b in folds]
    for body in folds:
        said = last_user_text(body)
        assert FOLD_PROMPT in said  # (a prompt starting with "/" would be a slash command)
        prompt = said[said.index(FOLD_PROMPT) :]  # Claude Code prefixes a date reminder
        overhead = len(received_text(body)) - len(prompt)
        print(f"\n[fold child e2e] overhead {overhead} characters", file=sys.stderr)
        assert overhead <= MAX_OVERHEAD, f"{overhead} characters besides the merge prompt"
        thinking = body.get("thinking")
        assert thinking is None or thinking.get("type") == "disabled", thinking
        assert not body.get("tools"), "the child must have no tools"
    # nothing accumulates per fold under the child's ~/.claude, and no project folder at all
    assert files_under(home / ".claude") == after_first
    assert not [p for p in after_first if p.startswith("projects")], after_first
    meta, body = digest_meta_body(repo)
    assert meta["merger"] == "claude" and "Work is progressing" in body
