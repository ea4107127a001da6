"""First use on a repository with history, and failures a user can see:
a backlog over today's budget folds its newest history first and the rest day by day (the
backlog a vault range in the front matter, every item folded exactly once); `fold` says what it
folded and what is left; --dry-run says which calls today's budget allows; status and recall
say how many items wait and why; a failing model merger is visible with its fix, and the
background fold falls back to the builtin merger. Model calls go to a stand-in `claude`."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.memory import (
    PYTHON,
    StandIn,
    Step,
    all_item_ids,
    backfilled_repo,
    cli_in,
    dated_history,
    digest_answer,
    digest_meta_body,
    prompt_items,
    set_config,
    watermark,
)
from tests.support.repos import Repo

NOT_LOGGED_IN = "Not logged in · Please run /login"


def answer(repo: Repo) -> str:
    first = sorted(all_item_ids(repo))[0]
    return digest_answer({"State": [f"- work is progressing ({first})"]})


def next_day(repo: Repo) -> None:
    """Today's budget is yesterday's: the day rolled over."""
    (repo.state_dir / "fold-budget.json").write_text(json.dumps({"date": "2000-01-01", "chars": 0}))


def merge_calls(standin: StandIn) -> list[dict[str, object]]:
    return [c for c in standin.calls() if "<vault-items>" in str(c["stdin"])]


def budgeted(repo: Repo, notes: int = 60) -> list[str]:
    shas = backfilled_repo(repo, notes)
    # ~8 items per call, two calls a day
    set_config(repo, "fold", max_chars_per_call=4000, max_chars_per_day=9000)
    return shas


def test_a_backlog_over_the_budget_folds_newest_first_then_day_by_day(
    repo: Repo, standin: StandIn
) -> None:
    shas = budgeted(repo)
    total = len(all_item_ids(repo))
    read_tip = repo.vault_tip()
    standin.script(*[Step(answer=answer(repo)) for _ in range(40)])
    result = cli_in(repo, "fold")
    assert result.code == 0, result
    calls = merge_calls(standin)
    assert len(calls) == 2
    first = prompt_items(str(calls[0]["stdin"]))
    assert f"c:{shas[-1][:7]}" in first and f"c:{shas[0][:7]}" not in first  # newest first
    assert "OLDER history" not in str(calls[0]["stdin"])  # the newest chunk is not "older"
    assert "OLDER history" in str(calls[1]["stdin"])  # the next one is, and the model is told
    meta, _ = digest_meta_body(repo)
    assert meta["watermark"] == read_tip  # the whole range is accounted for at once …
    folded = len(first) + len(prompt_items(str(calls[1]["stdin"])))
    left = total - folded
    assert meta["backlog"]["items"] == left  # … and what is left is the backlog
    assert f"folded {folded} of {total} items" in result.out and f"{left} left" in result.out
    assert "stopped early: today's fold budget is spent" in result.out
    # status and recall say how many items wait and why
    status = cli_in(repo, "status")
    assert (
        f"{left} item(s) wait for a fold: today's fold budget is spent" in status.out + status.err
    )
    recall = cli_in(repo, "recall")
    assert f"digest {left} items behind: today's fold budget is spent" in recall.out
    # a new commit arrives; the next day folds it before the older backlog
    new = repo.commit("feat: work done today")
    next_day(repo)
    assert cli_in(repo, "fold").code == 0
    calls = merge_calls(standin)
    assert f"c:{new[:7]}" in prompt_items(str(calls[2]["stdin"]))
    assert "OLDER history" not in str(calls[2]["stdin"])
    for _ in range(10):  # the remaining days
        meta, _ = digest_meta_body(repo)
        if "backlog" not in meta:
            break
        next_day(repo)
        assert cli_in(repo, "fold").code == 0
    meta, _ = digest_meta_body(repo)
    assert "backlog" not in meta
    folded_ids = [i for c in merge_calls(standin) for i in prompt_items(str(c["stdin"]))]
    assert len(folded_ids) == len(set(folded_ids)), "an item was folded twice"
    assert set(folded_ids) == all_item_ids(repo), "an item was never folded"
    again = cli_in(repo, "fold")
    assert again.code == 0 and "nothing new" in again.out


def test_dry_run_shows_which_calls_todays_budget_allows(repo: Repo, standin: StandIn) -> None:
    budgeted(repo)
    result = cli_in(repo, "fold", "--dry-run")
    assert result.code == 0, result
    lines = [ln for ln in result.out.splitlines() if ln.strip().startswith("call ")]
    assert len(lines) >= 4
    assert lines[0].endswith("— today") and lines[1].endswith("— today")
    assert all("waits: over today's fold.max_chars_per_day" in ln for ln in lines[2:])
    assert "older history" in lines[1] and "older history" not in lines[0]
    assert "today's budget allows" in result.out
    assert standin.count() == 0
    # the plan holds: the real fold makes exactly the calls marked "today"
    standin.script(Step(answer=answer(repo)), Step(answer=answer(repo)))
    assert cli_in(repo, "fold").code == 0
    assert len(merge_calls(standin)) == 2


def test_a_killed_recent_first_fold_resumes_without_reading_an_item_twice(
    repo: Repo, standin: StandIn
) -> None:
    budgeted(repo)
    standin.script(Step(answer=answer(repo)), Step(answer="garbage, no digest"))
    assert cli_in(repo, "fold").code == 4  # the second call's answer is rejected
    meta, _ = digest_meta_body(repo)
    first = prompt_items(str(merge_calls(standin)[0]["stdin"]))
    assert meta["backlog"]["items"] == len(all_item_ids(repo)) - len(first)
    standin.script(*[Step(answer=answer(repo)) for _ in range(20)])
    for _ in range(12):
        next_day(repo)
        assert cli_in(repo, "fold").code == 0
        if "backlog" not in digest_meta_body(repo)[0]:
            break
    done = [c for c in merge_calls(standin) if c["done"] and "garbage" not in str(c.get("answer"))]
    ids = [i for c in done for i in prompt_items(str(c["stdin"]))]
    # the rejected call's items were read again by a later call, the others exactly once
    assert set(ids) == all_item_ids(repo)


def test_recent_first_off_folds_oldest_first(repo: Repo, standin: StandIn) -> None:
    shas = budgeted(repo)
    set_config(repo, "fold", recent_first=False)
    standin.script(*[Step(answer=answer(repo)) for _ in range(4)])
    assert cli_in(repo, "fold").code == 0
    first = prompt_items(str(merge_calls(standin)[0]["stdin"]))
    assert f"c:{shas[0][:7]}" in first
    assert "backlog" not in digest_meta_body(repo)[0]


def test_the_horizon_leaves_older_history_unfolded(repo: Repo) -> None:
    day = 86_400
    old = dated_history(repo, [(f"Add old thing {i}", ["src/old.py"]) for i in range(5)], step=day)
    new = dated_history(
        repo,
        [(f"Add new thing {i}", ["src/new.py"]) for i in range(5)],
        start=int(os.path.getmtime(repo.path)) + 400 * day,
        step=day,
    )
    set_config(repo, "fold", horizon_days=30)
    result = cli_in(repo, "fold", "--merger", "builtin")
    assert result.code == 0, result
    meta, body = digest_meta_body(repo)
    assert meta["past_horizon"] >= 5
    assert "past fold.horizon_days" in result.out
    assert f"c:{new[-1][:7]}" in body
    assert all(f"c:{sha[:7]}" not in body for sha in old)


# --------------------------------------------------------------------------- failures


def hook_fold(repo: Repo, standin: StandIn) -> subprocess.CompletedProcess[str]:
    """The background fold as SessionEnd runs it, in the foreground."""
    env = dict(os.environ)
    env["PATH"] = standin.path_env()
    return subprocess.run(
        [PYTHON, "-m", "gitvault.hook", "fold", str(repo.path)],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_not_logged_in_is_a_clear_failure_with_the_fix_seen_by_status_and_recall(
    repo: Repo, standin: StandIn
) -> None:
    repo.commit("feat: first")
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    repo.commit("feat: second")
    mark = watermark(repo)
    standin.script(Step(answer=NOT_LOGGED_IN, exit=1))
    result = cli_in(repo, "fold")
    assert result.code != 0
    assert "not logged in" in result.err
    assert "run `claude` once and /login" in result.err and "--merger builtin" in result.err
    assert watermark(repo) == mark
    status = cli_in(repo, "status")
    text = status.out + status.err
    assert "the last claude fold failed" in text and "fix: run `claude` once and /login" in text
    recall = cli_in(repo, "recall")
    line = [ln for ln in recall.out.splitlines() if "last fold failed" in ln]
    assert len(line) == 1 and "1 items behind" in line[0] and "fix: run `claude`" in line[0]
    # the background fold falls back to the builtin merger and records that it did
    standin.script(Step(answer=NOT_LOGGED_IN, exit=1))
    proc = hook_fold(repo, standin)
    assert proc.returncode == 0, proc.stderr
    meta, _ = digest_meta_body(repo)
    assert meta["merger"] == "builtin" and watermark(repo) != mark
    assert "fold.fallback" in proc.stdout
    recall = cli_in(repo, "recall")
    assert "kept current by the builtin fallback" in recall.out and "fix:" in recall.out
    state = json.loads((repo.state_dir / "fold-state.json").read_text())
    assert state["fallback"] == "builtin" and state["failure"]["merger"] == "claude"
    # once the model works again, the failure is gone from status and recall
    repo.commit("feat: third")
    standin.script(Step(answer=answer(repo)))
    assert cli_in(repo, "fold").code == 0
    assert "failed" not in cli_in(repo, "recall").out
    status = cli_in(repo, "status")
    assert "fold failed" not in status.out + status.err


def test_fallback_none_leaves_the_digest_alone(repo: Repo, standin: StandIn) -> None:
    repo.commit("feat: first")
    set_config(repo, "fold", fallback="none")
    tip = repo.vault_tip()
    standin.script(Step(answer=NOT_LOGGED_IN, exit=1))
    proc = hook_fold(repo, standin)
    assert proc.returncode == 0
    assert repo.vault_tip() == tip
    state = json.loads((repo.state_dir / "fold-state.json").read_text())
    assert state["failure"]["merger"] == "claude" and not state.get("fallback")


def test_min_new_items_is_said_as_the_reason(repo: Repo, standin: StandIn) -> None:
    repo.commit("feat: first")
    set_config(repo, "fold", min_new_items=5)
    result = cli_in(repo, "fold")
    assert result.code == 0 and "fold.min_new_items is 5" in result.out
    state = json.loads((repo.state_dir / "fold-state.json").read_text())
    assert state["pending"] >= 1 and "min_new_items" in state["reason"]
    assert standin.count() == 0


def test_install_checks_the_merger_once_and_says_what_backfill_would_cost(
    repo: Repo, standin: StandIn
) -> None:
    from tests.support.repos import fast_history

    fast_history(repo, "main", 120)  # history written without hooks: no notes yet
    repo.git("reset", "-q", "--hard", "main")
    standin.script(Step(answer='{"loggedIn": false, "authMethod": "none"}', exit=1))
    result = cli_in(repo, "install", "--no-claude")
    assert result.code == 0, result
    text = " ".join((result.out + result.err).split())
    missing = re.search(r"history: (\d+) commits have no notes", text)
    assert missing and 120 <= int(missing.group(1)) <= 121, text
    assert "backfill --all" in text
    assert "tokens" in text and "newest history first" in text
    assert "--merger builtin" in text
    assert "claude is not logged in; fix: run `claude` once and /login" in text
    assert "background folds use the builtin merger meanwhile" in text
    (call,) = standin.calls()
    assert call["argv"] == ["auth", "status", "--json"]  # free: no model call
    assert "ANTHROPIC_API_KEY" not in call["env"]  # checked as the fold would run it


def test_install_bounds_an_old_history_by_its_own_newest_commit_and_the_advice_holds(
    repo: Repo, standin: StandIn
) -> None:
    from datetime import UTC, datetime, timedelta

    from tests.support.repos import fast_history

    fast_history(repo, "main", 120)  # committed in 2023: nothing in the last 90 days
    repo.git("reset", "-q", "--hard", "main")
    assert repo.git("rev-list", "--count", "--since=90.days.ago", "HEAD") == "0"
    standin.script(Step(answer='{"loggedIn": true, "authMethod": "claude.ai"}'))
    result = cli_in(repo, "install", "--no-claude")
    assert result.code == 0, result
    text = " ".join((result.out + result.err).split())
    assert "--since 90.days.ago" not in text and "0 recent commits" not in text, text
    newest = int(repo.git("log", "-1", "--format=%ct", "HEAD"))
    day = (datetime.fromtimestamp(newest, tz=UTC) - timedelta(days=90)).strftime("%Y-%m-%d")
    found = re.search(r"`gitvault backfill --since ([0-9-]+)` notes the ([0-9,]+) commits", text)
    assert found and found.group(1) == day, text
    assert "nothing was committed in the last 90 days" in text
    promised = int(found.group(2).replace(",", ""))
    assert promised >= 120
    done = cli_in(repo, "backfill", "--since", day)
    assert done.code == 0, done
    assert f"backfill: {promised} notes written" in done.out, done  # the advice was true


def test_install_bounds_a_recent_history_to_the_last_90_days(repo: Repo, standin: StandIn) -> None:
    import time

    from tests.support.repos import fast_history

    fast_history(repo, "main", 30, base_time=int(time.time()) - 30 * 86400)
    repo.git("reset", "-q", "--hard", "main")
    standin.script(Step(answer='{"loggedIn": true, "authMethod": "claude.ai"}'))
    result = cli_in(repo, "install", "--no-claude")
    assert result.code == 0, result
    text = " ".join((result.out + result.err).split())
    found = re.search(
        r"`gitvault backfill --since 90.days.ago` bounds it to the (\d+) recent", text
    )
    assert found and 30 <= int(found.group(1)) <= 31, text


def test_install_without_claude_offers_the_builtin_merger_in_one_command(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    only_git = tmp_path / "only-git"
    only_git.mkdir()
    (only_git / "git").symlink_to("/usr/bin/git")
    monkeypatch.setenv("PATH", str(only_git))
    result = cli_in(repo, "install", "--no-claude")
    assert result.code == 0, result
    text = " ".join((result.out + result.err).split())
    assert "the claude merger cannot run" in text, text
    assert text.count("fold.merger builtin") == 1, text  # one fix offered, once
    offer = re.search(r"one command: `([^`]+)`", text)
    assert offer and offer.group(1) == "gitvault config fold.merger builtin", text
    taken = cli_in(repo, *offer.group(1).split()[1:])
    assert taken.code == 0, taken
    assert "fold.merger: claude → builtin  (vault.toml, vault commit " in taken.out, taken
    again = cli_in(repo, "install", "--no-claude")
    text = " ".join((again.out + again.err).split())
    assert "folds use the builtin merger" in text and "one command" not in text, text
    repo.commit("feat: folded without claude")
    folded = cli_in(repo, "fold")
    assert folded.code == 0, folded
    assert digest_meta_body(repo)[0]["merger"] == "builtin"


def test_install_says_how_many_commits_a_small_history_leaves_without_notes(
    repo: Repo, standin: StandIn
) -> None:
    """A few commits made before gitvault cost nothing worth weighing, but install still says
    they have no notes and what notes them (README: "install says how many")."""
    from tests.support.repos import fast_history

    fast_history(repo, "main", 5)  # written without hooks: no notes yet
    repo.git("reset", "-q", "--hard", "main")
    standin.script(Step(answer='{"loggedIn": false, "authMethod": "none"}', exit=1))
    result = cli_in(repo, "install", "--no-claude")
    assert result.code == 0, result
    text = " ".join((result.out + result.err).split())
    missing = re.search(r"history: (\d+) commits have no notes\. `gitvault backfill --all`", text)
    assert missing and 5 <= int(missing.group(1)) <= 6, text
    assert "tokens" not in text
    assert cli_in(repo, "backfill", "--all").code == 0
    again = cli_in(repo, "install", "--no-claude")
    assert "have no notes" not in again.out + again.err
