"""bench.real.requery's explanation of a miss, on a real repository with gitvault installed:
what ranked above the gold (its score, the query's terms it holds), where the gold stood or
that it was not shown, and the baseline's first results — read from the CLI's own answer."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.real.history import History  # noqa: E402
from bench.real.requery import InProcess, explain  # noqa: E402
from tests.support.repos import Repo  # noqa: E402


def test_a_miss_is_explained_by_what_ranked_above_the_gold(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    gold = repo.commit("Redesign fish completion", {"shell.py": "1\n"})
    above = [
        repo.commit(f"Fix fish completion options for {what}", {f"fish{i}.py": "x\n"})
        for i, what in enumerate(("flags", "choices", "paths", "files"))
    ]
    for i in range(4):
        repo.commit(f"Bump release {i}", {"VERSION": f"{i}\n"})
    monkeypatch.chdir(repo.path)
    history = History.load("tiny", repo.path, dict(os.environ))
    lines = explain(
        history, ["fish", "completion", "options"], [gold], [above[0][:10]], InProcess()
    )
    text = "\n".join(lines)
    assert lines[0] == "? fish completion options", text
    assert lines[1] == "    terms: fish completion options"
    # The four fixes hold all three words, the gold two: it stood fifth, and says what it held.
    ranked = [ln.split() for ln in lines[2:] if ln.split()[0].isdigit()]
    assert [r[0] for r in ranked] == ["1", "2", "3", "5"], text
    assert all(
        "[fish completion options] Fix fish completion options for" in " ".join(r)
        for r in ranked[:3]
    ), text
    assert ranked[-1][1] == "GOLD", text
    assert "[fish completion] Redesign fish completion" in " ".join(ranked[-1]), text
    assert lines[-1] == "    git log:      Fix fish completion options for flags"


def test_a_gold_that_was_not_shown_is_said_to_be_missing(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    gold = repo.commit("Tidy the parser", {"parser.py": "1\n"})
    repo.commit("Fix the walker's fanout", {"walker.py": "2\n"})
    monkeypatch.chdir(repo.path)
    history = History.load("tiny", repo.path, dict(os.environ))
    lines = explain(history, ["walker", "fanout"], [gold], [], InProcess())
    assert lines[-1] == "    gold not among the first 200 shown: Tidy the parser", lines


def test_gits_side_is_kept_for_the_same_head_and_dropped_for_another(
    repo: Repo, tmp_path: Path
) -> None:
    from bench.real.requery import load_cache, save_cache
    from bench.real.searcheval import Baseline

    first = repo.commit("Add the walker", {"walker.py": "1\n"})
    history = History.load("tiny", repo.path, dict(os.environ))
    base = Baseline(history)
    assert base.answer(["walker"]).ranked == [first]
    assert history.is_ancestor(first, first)
    cache = tmp_path / "cache.json"
    save_cache(cache, history, base)

    again = History.load("tiny", repo.path, dict(os.environ))
    fresh = Baseline(again)
    load_cache(cache, again, fresh)
    assert fresh._cache == {("walker",): [first]}
    assert again._ancestry == {(first, first): True}

    repo.commit("Add the walker's fanout", {"walker.py": "2\n"})  # HEAD moved: git's answers
    moved = History.load("tiny", repo.path, dict(os.environ))  # may differ, none is reused
    stale = Baseline(moved)
    load_cache(cache, moved, stale)
    assert stale._cache == {} and moved._ancestry == {}
    assert len(stale.answer(["walker"]).ranked) == 2


def test_a_gold_commit_folded_under_its_copy_is_named_not_hit(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench.real.queries import Query
    from bench.real.searcheval import evaluate

    repo.commit("Start", {"base.txt": "0\n"})
    main = repo.git("rev-parse", "--abbrev-ref", "HEAD")
    repo.git("checkout", "-q", "-b", "stable")
    gold = repo.commit("Teach the walker a fanout", {"walker.py": "1\n"})
    repo.git("checkout", "-q", main)
    # The same change again, under the same subject, a minute later: "the newer" must not
    # depend on two commits made within one second (a tie ordered them either way).
    later = repo.git("log", "-1", "--format=%ct", gold)
    repo.run("cherry-pick", gold, env={"GIT_COMMITTER_DATE": f"{int(later) + 60} +0000"})
    copy = repo.head()
    monkeypatch.chdir(repo.path)
    history = History.load("tiny", repo.path, dict(os.environ))
    queries = [Query("body", ["walker", "fanout"], [g], g) for g in (gold, copy)]
    result = evaluate(history, queries, InProcess(), say=lambda _: None)
    # One result for both copies, headed by the newer: the older is named in it, not hit.
    ranks = [(row["gitvault_rank"], row["gitvault_named3"]) for row in result.queries]
    assert ranks == [(None, True), (1, True)], result.queries
    mine = result.per_kind["body"]["gitvault"]
    assert (mine.hits3, mine.named3) == (1, 2)


def test_a_ranking_constant_is_set_for_one_run_and_anything_else_refused() -> None:
    from bench.real.requery import apply_settings
    from gitvault.memory import search

    before = search.TITLE_WEIGHT, search.CANDIDATES
    old = apply_settings(["TITLE_WEIGHT=4", "CANDIDATES=50"])
    try:
        assert old == {"TITLE_WEIGHT": before[0], "CANDIDATES": before[1]}
        assert search.TITLE_WEIGHT == 4.0 and isinstance(search.TITLE_WEIGHT, float)
        assert search.CANDIDATES == 50 and isinstance(search.CANDIDATES, int)
    finally:
        for name, value in old.items():
            setattr(search, name, value)
    for bad in ("KINDS=1", "title_weight=4", "NO_SUCH=1", "TITLE_WEIGHT", "TITLE_WEIGHT=x"):
        with pytest.raises(ValueError):
            apply_settings([bad])
    assert before == (search.TITLE_WEIGHT, search.CANDIDATES)  # a refused pair set nothing
