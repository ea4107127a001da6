"""`gitvault backfill [--since] [--branch] [--all]`: notes for history that has none."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gitvault.notes import backfill as backfill_mod
from gitvault.resolve import resolve
from tests.support.repos import Repo, fast_history, validate_note


def _loose_objects(repo: Repo) -> int:
    for line in repo.git("count-objects", "-v").splitlines():
        if line.startswith("count:"):
            return int(line.split()[1])
    raise AssertionError("count-objects printed no count")


def test_backfill_writes_missing_notes_once(repo_factory) -> None:
    repo: Repo = repo_factory(install=False)
    history = fast_history(repo, "main", 30)
    assert repo.gv("install", "--no-claude").code == 0
    result = repo.gv("backfill")
    assert result.code == 0, result
    assert "31 notes written, 0 already noted (31 commits considered)" in result.out
    noted = repo.note_paths()
    assert set(history) <= set(noted)
    meta = validate_note(repo.note(history[5]) or "")
    assert meta["source"] == "backfill"
    assert meta["branch"] == "main"
    assert meta["sha"] == history[5]
    assert meta["parents"] == [history[4]]
    # The note path follows the commit date, not today's date.
    day = datetime.fromtimestamp(1_700_000_000 + 5 * 60, tz=UTC)
    assert noted[history[5]] == f"notes/{day:%Y/%m/%d}/{history[5]}.md"
    count = len(repo.vault_log())
    assert count == 1 + 31, "one vault commit per note"
    again = repo.gv("backfill")
    assert "0 notes written, 31 already noted" in again.out
    assert len(repo.vault_log()) == count


def test_backfill_since_only_covers_newer_commits(repo_factory) -> None:
    repo: Repo = repo_factory(install=False)
    history = fast_history(repo, "main", 20)
    assert repo.gv("install", "--no-claude").code == 0
    cutoff = datetime.fromtimestamp(1_700_000_000 + 12 * 60, tz=UTC).isoformat()
    result = repo.gv("backfill", "--since", cutoff)
    assert result.code == 0, result
    noted = set(repo.note_paths())
    assert set(history[12:]) <= noted
    assert not set(history[:12]) & noted
    assert "8 notes written" in result.out


def test_backfill_branch_and_all(repo_factory) -> None:
    repo: Repo = repo_factory(install=False)
    base = repo.head()
    feature = fast_history(repo, "feature", 5, start=base, prefix="feat")
    other = fast_history(repo, "other", 4, start=base, prefix="oth")
    assert repo.gv("install", "--no-claude").code == 0
    result = repo.gv("backfill", "--branch", "feature")
    assert result.code == 0, result
    noted = set(repo.note_paths())
    assert set(feature) | {base} <= noted
    assert not set(other) & noted
    assert validate_note(repo.note(feature[0]) or "")["branch"] == "feature"
    result = repo.gv("backfill", "--all")
    assert result.code == 0, result
    noted = set(repo.note_paths())
    assert set(other) <= noted
    assert "4 notes written" in result.out
    # the vault's own commits are never backfilled
    vault_commits = {sha for sha, _ in repo.vault_log()}
    assert not vault_commits & noted


def test_backfill_all_gives_every_note_the_branch_it_is_on(repo_factory) -> None:
    """A note with no branch made the digest split one branch's history into "On main" and
    "Across branches": `--all` names the current branch for its history (shared commits
    included) and each other branch for the commits only it has."""
    repo: Repo = repo_factory(install=False)
    base = repo.head()
    main = fast_history(repo, "main", 3, start=base, prefix="mn")
    side = fast_history(repo, "side", 2, start=main[1], prefix="sd")
    later = fast_history(repo, "later", 2, start=main[-1], prefix="lt", base_time=1_700_000_600)
    assert repo.gv("install", "--no-claude").code == 0
    result = repo.gv("backfill", "--all")
    assert result.code == 0, result
    assert "8 notes written" in result.out
    branches = {sha: validate_note(repo.note(sha) or "")["branch"] for sha in repo.note_paths()}
    assert {sha: branches[sha] for sha in [base, *main]} == dict.fromkeys([base, *main], "main")
    assert {sha: branches[sha] for sha in side} == dict.fromkeys(side, "side")
    assert {sha: branches[sha] for sha in later} == dict.fromkeys(later, "later")
    assert repo.gv("fold", "--merger", "builtin").code == 0
    state = repo.git("show", "vault:_master.md").split("## State")[1]
    assert "On main" in state
    assert "Across branches" not in state


def test_backfill_is_resumable(repo_factory, monkeypatch: pytest.MonkeyPatch) -> None:
    repo: Repo = repo_factory(install=False)
    history = fast_history(repo, "main", 40)
    assert repo.gv("install", "--no-claude").code == 0
    monkeypatch.setattr(backfill_mod, "BATCH", 7)
    calls = 0

    def interrupt(done: int, total: int) -> None:
        nonlocal calls
        calls += 1
        assert total == 41
        if calls == 2:
            raise KeyboardInterrupt  # the user pressed Ctrl-C after two batches

    with pytest.raises(KeyboardInterrupt):
        backfill_mod.backfill(resolve(repo.path), progress=interrupt)
    partial = set(repo.note_paths())
    assert len(partial) == 14, "two whole batches were committed before the interrupt"
    asked: list[str] = []  # the commits git is asked the file stats of
    listed = backfill_mod.read_listed

    def counting(cwd, shas):  # type: ignore[no-untyped-def]
        def each():  # type: ignore[no-untyped-def]
            for sha in shas:
                asked.append(sha)
                yield sha

        return listed(cwd, each())

    monkeypatch.setattr(backfill_mod, "read_listed", counting)
    result = backfill_mod.backfill(resolve(repo.path))
    assert result.written == 41 - 14
    assert result.already == 14
    assert result.considered == 41
    assert len(asked) == 41 - 14, "a resumed backfill asks git for no commit it noted"
    assert set(history) <= set(repo.note_paths())
    assert len(repo.vault_log()) == 1 + 41, "nothing written twice"


def test_backfill_packs_what_it_writes(repo_factory) -> None:
    repo: Repo = repo_factory(install=False)
    fast_history(repo, "main", 300)  # fast-import writes a pack: few loose objects to start
    assert repo.gv("install", "--no-claude").code == 0
    before = _loose_objects(repo)
    result = repo.gv("backfill")
    assert result.code == 0, result
    assert "301 notes written" in result.out
    after = _loose_objects(repo)
    assert after <= before + 10, f"{after - before} loose objects left behind (of ~1500 written)"
    assert repo.run("fsck", "--no-dangling", "--no-progress", check=False).returncode == 0


def test_backfill_progress_reports_the_total(repo_factory) -> None:
    repo: Repo = repo_factory(install=False)
    fast_history(repo, "main", 9)
    assert repo.gv("install", "--no-claude").code == 0
    seen: list[tuple[int, int]] = []
    backfill_mod.backfill(resolve(repo.path), progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1] == (10, 10)
