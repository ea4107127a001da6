"""The search judge proven on small repositories: known-item queries are deterministic and
drawn from their gold commit, the `git log --grep` baseline ranks by coverage then recency, a
merge that brought the gold commit in counts (and only that merge), and a question keeps its
content words only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.real.history import History  # noqa: E402
from bench.real.queries import (  # noqa: E402
    content_words,
    inflections,
    known_item,
    questions_for,
    words_of,
)
from bench.real.searcheval import Baseline, score  # noqa: E402

START = 1_700_000_000


def git(path: Path, *args: str, when: int | None = None) -> str:
    env = dict(os.environ)
    if when is not None:
        env.update(GIT_AUTHOR_DATE=f"@{when} +0000", GIT_COMMITTER_DATE=f"@{when} +0000")
    out = subprocess.run(
        ["git", *args], cwd=path, env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def commit(path: Path, when: int, message: str, name: str) -> str:
    (path / name).write_text(f"{message}\n", encoding="utf-8")
    git(path, "add", name)
    git(path, "commit", "-q", "-m", message, when=when)
    return git(path, "rev-parse", "HEAD")


def test_inflections_reach_the_other_forms_of_a_word() -> None:
    assert {"fixes", "fixed"} <= set(inflections("fix"))
    assert "fix" in inflections("fixes")
    assert "fix" in inflections("fixed")
    assert "stop" in inflections("stopped")
    assert "query" in inflections("queries")


def test_query_words_are_whole_words_never_fragments() -> None:
    # Nobody types "koi" for koi8-r, "ltig" for gültig or "get" for get_data.
    assert words_of("Use koi8-r for gültig names in get_data, non-boolean flags") == [
        "gültig",
        "names",
        "non",
        "boolean",
        "flags",
    ]


def test_a_question_keeps_only_its_content_words() -> None:
    words = content_words("Why was the shell completion rewritten, and when did it happen?")
    assert words == ["shell", "completion", "rewritten"]


def test_known_item_queries_are_seeded_and_drawn_from_their_gold(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    subjects = [
        "Teach the parser nested brackets",
        "Speed up the tokenizer for long lines",
        "Document the colour option in the manual",
        "Fix the crash in prompt_for_value with empty input",
        "Make config.hooksPath relative to the worktree",
        "Support --interactive-only in the picker",
    ] + [f"Routine upkeep number {i}" for i in range(6)]
    for i, subject in enumerate(subjects):
        commit(tmp_path, START + i * 3600, subject, f"file{i}.txt")
    h = History.load("tiny", tmp_path, dict(os.environ))
    first = known_item(h, seed=7, per_kind=3)
    again = known_item(h, seed=7, per_kind=3)
    assert [q.as_json() for q in first] == [q.as_json() for q in again]
    assert first
    for q in first:
        source = h.by_sha[q.gold[0]]
        assert q.gold == [q.source]
        if q.kind in ("rare-subject", "identifier", "option"):
            assert all(w.lower() in source.message.lower() for w in q.words)
        if q.kind == "inflected":
            original, form = q.note.split(" → ")
            assert original in source.message.lower() and form in q.words
    kinds = {q.kind: q.words for q in first}
    assert kinds.get("option") == ["--interactive-only"]
    assert kinds.get("identifier") in (["prompt_for_value"], ["config.hooksPath"], ["hooksPath"])


def test_the_baseline_ranks_by_words_matched_then_recency(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    both = commit(tmp_path, START, "alpha and beta together", "a.txt")
    alpha = commit(tmp_path, START + 10, "alpha alone", "b.txt")
    beta = commit(tmp_path, START + 20, "beta with gamma", "c.txt")
    commit(tmp_path, START + 30, "nothing relevant", "d.txt")
    h = History.load("tiny", tmp_path, dict(os.environ))
    assert Baseline(h).answer(["Alpha", "beta"]).ranked == [both, beta, alpha]
    assert Baseline(h).answer(["alpha"]).ranked == [alpha, both]


def test_a_merge_that_brought_the_gold_commit_in_counts(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    base = commit(tmp_path, START, "base", "a.txt")
    git(tmp_path, "checkout", "-q", "-b", "topic")
    gold = commit(tmp_path, START + 10, "the topic's change", "b.txt")
    git(tmp_path, "checkout", "-q", "main")
    later = commit(tmp_path, START + 20, "meanwhile on main", "c.txt")
    git(tmp_path, "merge", "-q", "--no-ff", "-m", "Merge topic", "topic", when=START + 30)
    merge = git(tmp_path, "rev-parse", "HEAD")
    after = commit(tmp_path, START + 40, "after the merge", "d.txt")
    h = History.load("tiny", tmp_path, dict(os.environ))
    assert score(h, [base, merge], [gold]).rank == 2
    assert score(h, [base, merge], [gold]).via_merge
    assert score(h, [gold], [gold]).rank == 1
    assert score(h, [later, after, base], [gold]).rank is None


def test_a_question_set_is_scored_under_the_kind_it_names(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    first = commit(repo, START, "start the project", "a.txt")
    gold = commit(repo, START + 60, "rewrite the parser", "b.txt")
    sets = tmp_path / "questions"
    sets.mkdir()
    for name, extra in (("r", {}), ("r-held-out", {}), ("r-held-out-2", {"kind": "question-x"})):
        data = {"name": name, "root": first, "held_out": name != "r", **extra}
        data["questions"] = [{"q": f"Why was parsing redone ({name})?", "gold": [gold[:10]]}]
        (sets / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
    found, problems = questions_for(History.load("r", repo, dict(os.environ)), sets)
    assert not problems
    assert sorted(q.kind for q in found) == ["question", "question-held-out", "question-x"]
    assert all(q.gold == [gold] for q in found)
