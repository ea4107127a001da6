"""`gitvault stats` and `gitvault status --line` (plain git; STALE when the digest is behind)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import gitvault
from gitvault.resolve import resolve
from gitvault.status import line as stats
from gitvault.vault import statedir
from tests.support.memory import StandIn, Step, cli_in, session_text, set_config
from tests.support.repos import PYTHON, Repo


def test_stats_counts_sizes_and_ratio(repo: Repo) -> None:
    for i in range(3):
        repo.commit(f"feat: thing {i}")
    assert cli_in(repo, "save", stdin=session_text("Stats session")).code == 0
    before = cli_in(repo, "stats", "--json").json("stats")
    assert before["notes"] == 3 and before["sessions"] == 1 and before["folds"] == 0
    assert before["pending"] == 4 and before["compression_ratio"] is None
    assert before["raw_chars"] > 0 and before["recall_chars"] > 0
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    after = cli_in(repo, "stats", "--json").json("stats")
    assert after["folds"] == 1 and after["pending"] == 0
    assert after["digest_chars"] > 0
    assert after["compression_ratio"] == round(after["raw_chars"] / after["digest_chars"], 1)
    assert after["estimated_tokens"]["raw"] == after["raw_chars"] // 4
    assert after["digest_age_seconds"] is not None and after["digest_age_seconds"] < 600
    text = cli_in(repo, "stats")
    assert text.code == 0 and "compression" in text.out and "notes" in text.out


def test_fold_spend_is_read_from_the_budget_file(repo: Repo) -> None:
    import time

    (repo.state_dir / statedir.FOLD_BUDGET).write_text(
        json.dumps({"date": time.strftime("%Y-%m-%d"), "chars": 1200, "total": 50_000})
    )
    data = cli_in(repo, "stats", "--json").json("stats")
    assert data["fold_chars_today"] == 1200 and data["fold_chars_total"] == 50_000


def test_line_is_short_and_turns_stale_on_items_days_or_failure(repo: Repo) -> None:
    loc = resolve(repo.path)
    repo.commit("feat: one")
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    fresh = stats.status_line(loc)
    assert not fresh.stale and fresh.text.startswith("gitvault: digest") and len(fresh.text) < 80
    set_config(repo, "status", stale_items=2, stale_days=3)
    for i in range(3):
        repo.commit(f"feat: more {i}")
    many = stats.status_line(loc)
    assert many.stale and "3 unfolded" in many.text, many
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    repo.commit("feat: one more")
    later = stats.status_line(loc, now=__import__("time").time() + 5 * 86400)
    assert later.stale and "old" in later.text, later
    assert not stats.status_line(loc).stale
    (repo.state_dir / statedir.FOLD_STATE).write_text(
        json.dumps({"failure": {"merger": "claude", "message": "not found"}})
    )
    failed = stats.status_line(loc)
    assert failed.stale and "last fold failed (claude)" in failed.text


def _line_proc(
    cwd: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.run(
        [PYTHON, "-m", "gitvault", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=full,
        timeout=60,
    )


def test_status_line_as_claude_code_runs_it(repo: Repo, tmp_path: Path) -> None:
    repo.commit("feat: something")
    sub = repo.path / "deep" / "dir"
    sub.mkdir(parents=True)
    payload = json.dumps(
        {"session_id": "x", "cwd": str(sub), "workspace": {"project_dir": str(repo.path)}}
    )
    # Claude Code runs the command with JSON on stdin, from anywhere.
    proc = _line_proc(tmp_path, "status", "--line", stdin=payload)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("gitvault: ") and proc.stdout.count("\n") == 1
    # From a subdirectory, with no stdin (a shell prompt), and --repo after the command.
    assert _line_proc(sub, "status", "--line", stdin="").stdout == proc.stdout
    assert _line_proc(tmp_path, "status", "--line", "--repo", str(repo.path)).stdout == proc.stdout
    data = json.loads(_line_proc(sub, "status", "--line", "--json", stdin="").stdout)
    assert data["gitvault"] == 1 and data["kind"] == "status-line"
    # Outside any repository: nothing at all (a prompt stays clean), exit 0.
    outside = _line_proc(tmp_path, "status", "--line", stdin="")
    assert outside.returncode == 0 and outside.stdout == ""
    # In a repository without gitvault: nothing either.
    subprocess.run(["git", "init", "-q", str(tmp_path / "plain")], check=True)
    plain = _line_proc(tmp_path / "plain", "status", "--line", stdin="")
    assert plain.returncode == 0 and plain.stdout == ""


# What a prompt's `status --line` must not pay for: the app's libraries, a child process's
# machinery, and the modules whose import costs more than the line's own work (`typing`: ~15 M
# instructions, NamedTuple included — gitvault.named stands in; `json` when no JSON arrives).
NOT_ON_THE_LINE = ("typer", "rich", "pygit2", "subprocess", "typing", "json", "dataclasses")


def test_status_line_loads_none_of_the_costly_modules(repo: Repo) -> None:
    # -S: no site, so no editable-install hook (which loads typing itself) hides a regression;
    # the package comes from this checkout.
    from gitvault.memory import vaultstate

    repo.commit("feat: one")
    _stored(repo)  # as every vault change gitvault makes leaves it
    assert vaultstate.materialized(resolve(repo.path)) is not None
    root = Path(gitvault.__file__).resolve().parents[1]
    code = (
        f"import sys; sys.path.insert(0, {str(root)!r})\n"
        "sys.argv = ['gitvault', 'status', '--line']\n"
        "try:\n    import gitvault.cli\nexcept SystemExit:\n    pass\n"
        f"bad = [m for m in {NOT_ON_THE_LINE!r} if m in sys.modules]\n"
        "sys.stderr.write(repr(bad))\n"
    )
    proc = subprocess.run(
        [PYTHON, "-S", "-c", code],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.stderr.strip() == "[]", proc.stderr
    assert proc.stdout.startswith("gitvault")


def test_status_line_in_process_through_typer(repo: Repo) -> None:
    result = cli_in(repo, "status", "--line")
    assert result.code == 0 and result.out.startswith("gitvault")


def _fail_claude(standin: StandIn) -> None:
    standin.script(Step(answer="Not logged in · Please run /login", exit=1))


def test_a_successful_fold_with_another_merger_clears_the_stale_failure(
    repo: Repo, standin: StandIn
) -> None:
    loc = resolve(repo.path)
    repo.commit("feat: one")
    _fail_claude(standin)
    assert cli_in(repo, "fold").code != 0  # the configured merger (claude) cannot log in
    failed = stats.status_line(loc)
    assert failed.stale and "last fold failed (claude)" in failed.text, failed
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    after = stats.status_line(loc)
    assert not after.stale and "failed" not in after.text, after
    status = cli_in(repo, "status")
    assert "fold failed" not in status.out + status.err
    assert "failed" not in cli_in(repo, "recall").out


def test_a_merger_never_configured_is_no_failure_until_it_is_chosen(
    repo: Repo, standin: StandIn
) -> None:
    loc = resolve(repo.path)
    repo.commit("feat: one")
    assert cli_in(repo, "config", "fold.merger", "builtin").code == 0
    assert cli_in(repo, "fold").code == 0
    repo.commit("feat: two")
    _fail_claude(standin)
    assert cli_in(repo, "fold", "--merger", "claude").code != 0  # tried once, not chosen
    line = stats.status_line(loc)
    assert not line.stale and "failed" not in line.text, line
    status = cli_in(repo, "status")
    assert "fold failed" not in status.out + status.err
    # chosen now: its failure is this vault's failure
    assert cli_in(repo, "config", "fold.merger", "claude").code == 0
    chosen = stats.status_line(loc)
    assert chosen.stale and "last fold failed (claude)" in chosen.text, chosen


def test_the_builtin_fallback_standing_in_is_said_but_not_stale(
    repo: Repo, standin: StandIn
) -> None:
    loc = resolve(repo.path)
    repo.commit("feat: one")
    env = dict(os.environ, PATH=standin.path_env())
    _fail_claude(standin)
    proc = subprocess.run(
        [PYTHON, "-m", "gitvault.hook", "fold", str(repo.path)],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    line = stats.status_line(loc)
    assert not line.stale, line
    assert "builtin stands in for claude" in line.text and "0 unfolded" in line.text, line


def _statusline_input(repo: Repo, window: object) -> str:
    """Claude Code's statusLine JSON (2.1.197) with the given context_window member."""
    return json.dumps(
        {
            "session_id": "s",
            "cwd": str(repo.path),
            "model": {"id": "claude-sonnet-4-5", "display_name": "Sonnet 4.5"},
            "workspace": {"current_dir": str(repo.path), "project_dir": str(repo.path)},
            "context_window": window,
        }
    )


def test_the_line_says_checkpoint_once_the_context_window_is_85_percent_used(
    repo: Repo, tmp_path: Path
) -> None:
    repo.commit("feat: something")
    usage = {
        "input_tokens": 50000,
        "output_tokens": 9,
        "cache_creation_input_tokens": 20000,
        "cache_read_input_tokens": 30000,
    }
    half = {"context_window_size": 200000, "current_usage": usage, "used_percentage": 50}
    plain = _line_proc(tmp_path, "status", "--line", stdin=_statusline_input(repo, half))
    assert plain.returncode == 0 and plain.stdout.startswith("gitvault: "), plain
    full = dict(half, used_percentage=85)
    proc = _line_proc(tmp_path, "status", "--line", stdin=_statusline_input(repo, full))
    text = proc.stdout.strip()
    checkpoint = "gitvault CHECKPOINT: context 85% used, run /checkpoint then /clear; "
    assert text.startswith(checkpoint), text
    assert text.endswith(plain.stdout.strip().removeprefix("gitvault: ")), text  # the rest kept
    data = json.loads(
        _line_proc(
            tmp_path, "status", "--line", "--json", stdin=_statusline_input(repo, full)
        ).stdout
    )["data"]
    assert data["checkpoint"] is True and data["context_percent"] == 85
    # before the first answer Claude Code sends nulls: no checkpoint, no percentage
    empty = {"context_window_size": 200000, "current_usage": None, "used_percentage": None}
    none = _line_proc(tmp_path, "status", "--line", "--json", stdin=_statusline_input(repo, empty))
    assert json.loads(none.stdout)["data"]["context_percent"] is None


def test_checkpoint_is_computed_from_the_last_calls_usage_when_no_percentage_is_given() -> None:
    usage = {"input_tokens": 100000, "cache_creation_input_tokens": 40000, "output_tokens": 99999}
    window = {
        "context_window_size": 200000,
        "current_usage": dict(usage, cache_read_input_tokens=34000),
    }
    assert stats.context_percent({"context_window": window}) == 87  # output excluded
    assert stats.context_percent({"context_window": dict(window, used_percentage=12)}) == 12


def test_hostile_context_values_never_make_a_checkpoint_or_fail() -> None:
    for window in (
        "full",
        None,
        {"used_percentage": True},
        {"used_percentage": "99"},
        {"used_percentage": -5},
        {"used_percentage": float("nan")},
        {"used_percentage": float("inf")},
        {"context_window_size": 0, "current_usage": {"input_tokens": 10}},
        {"context_window_size": 100, "current_usage": {"input_tokens": "lots"}},
        {"context_window_size": 100, "current_usage": ["input_tokens"]},
    ):
        assert stats.context_percent({"context_window": window}) is None, window
    assert stats.context_percent({"context_window": {"used_percentage": 1e9}}) == 100
    line = stats.Line("gitvault: digest 1m old, 0 unfolded", False)
    assert stats.with_context(line, None) == line and stats.with_context(line, 84) == line
    assert stats.with_context(line, 100).checkpoint


STATS_KEYS = {
    "notes",
    "sessions",
    "folds",
    "pins",
    "forgotten",
    "raw_chars",
    "digest_chars",
    "compression_ratio",
    "recall_chars",
    "fold_chars_today",
    "fold_chars_total",
    "estimated_tokens",
    "digest_age_seconds",
    "pending",
    "status_line",
}


def test_stats_draws_charts_in_the_terminal_and_json_stays_as_it_was(repo: Repo) -> None:
    hostile = "evil\x1b]0;owned\x07\x1b[31m.py"
    repo.commit("feat: the hostile file", files={hostile: "x\n"})
    for i in range(4):
        repo.commit(f"feat: core {i}", files={"src/core.py": f"v{i}\n"})
    assert cli_in(repo, "save", stdin=session_text("Chart session")).code == 0
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    first = cli_in(repo, "stats", "--json")
    second = cli_in(repo, "stats", "--json")
    data = first.json("stats")
    assert set(data) == STATS_KEYS  # the charts add nothing to --json

    def without_age(text: str) -> str:
        """The output less what the clock moves (the digest's age, in seconds and in the line)."""
        doc = json.loads(text)
        doc["data"].pop("digest_age_seconds")
        doc["data"].pop("status_line")
        return json.dumps(doc)

    assert without_age(first.out) == without_age(second.out)  # the same vault, the same bytes
    text = cli_in(repo, "stats")
    assert text.code == 0
    out = text.out
    assert "\x1b" not in out and "\x07" not in out, repr(out)
    assert "notes █ and sessions ▒ per week" in out
    week_rows = [ln for ln in out.splitlines() if ln[:4].isdigit() and " / " in ln]
    assert any(ln.rstrip().endswith(f"{data['notes']} / 1") for ln in week_rows), out
    assert "digest █ against raw memory ▒ at each fold" in out
    assert f"{data['digest_chars']:,} / " in out
    assert "fold spend (prompt chars)" in out and "of 400,000 a day" in out
    paths = out.split("paths the memory talks about most")[1].splitlines()
    core = next(ln for ln in paths if "src/core.py" in ln)
    assert core.rstrip().endswith(" 4") and "█" in core, core
    assert any("evil?]0;owned??[31m.py" in ln for ln in paths), paths


# -- the line from the fold state the last vault change stored (memory/vaultstate) --------------


def _stored(repo: Repo) -> None:
    """Time passed since the settings were written, and the vault changed: the refresh a vault
    change runs stored the fold state."""
    import time

    from gitvault.materialize import ready

    then = time.time() - 30
    for path in (repo.git_dir / "config", Path(os.environ["GIT_CONFIG_GLOBAL"])):
        os.utime(path, (then, then))
    ready.refresh(resolve(repo.path))


def test_the_line_is_served_from_the_stored_state_without_git(repo: Repo, tmp_path: Path) -> None:
    from gitvault.memory import vaultstate

    loc = resolve(repo.path)
    repo.commit("feat: one")
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    repo.commit("feat: two")
    _stored(repo)
    stored = vaultstate.materialized(loc)
    assert stored is not None and stored == vaultstate.computed(loc)
    assert stored.pending == 1 and stored.folded_at is not None
    # No git on PATH: the line still says what the vault holds (read from the stored state).
    bare = tmp_path / "bin"
    bare.mkdir()
    plain = _line_proc(repo.path, "status", "--line", stdin="")
    nogit = _line_proc(repo.path, "status", "--line", stdin="", env={"PATH": str(bare)})
    assert plain.stdout.startswith("gitvault: digest") and nogit.stdout == plain.stdout


def test_the_stored_state_is_not_served_once_anything_it_was_read_from_moved(
    repo: Repo,
) -> None:
    from gitvault.memory import vaultstate

    loc = resolve(repo.path)
    repo.commit("feat: one")
    checks = {
        "a vault commit": lambda: set_config(repo, "status", stale_items=0),
        "git config": lambda: repo.git("config", "gitvault.branch", "vault"),
        "the fold's state": lambda: statedir.write_fold_state(
            loc, statedir.FoldState(failure=statedir.FoldFailure("builtin", "x", "y"))
        ),
        "the fold's state, by hand": lambda: (repo.state_dir / statedir.FOLD_STATE).write_text(
            json.dumps({"failure": {"merger": "builtin", "message": "not found"}})
        ),
        "the vault packed away": lambda: repo.git("pack-refs", "--all"),
    }
    for what, change in checks.items():
        _stored(repo)
        assert vaultstate.materialized(loc) is not None, what
        change()
        assert vaultstate.materialized(loc) is None, what
        now = 1.9e9
        assert stats.status_line(loc, now) == stats.render(vaultstate.computed(loc), now), what
