"""The local state folder (<common git dir>/gitvault/): one module names every file in it, the
shims get those names at install, and the JSON files are versioned — a newer format is left
alone, an unreadable file counts as absent."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from gitvault.notes import shims
from gitvault.resolve import resolve
from gitvault.resources import hook_template
from gitvault.vault import statedir
from tests.support.repos import Repo, cli


def _write(repo: Repo, name: str, data: object) -> Path:
    path = repo.state_dir / name
    path.write_text(json.dumps(data))
    return path


def test_fold_state_round_trips_and_carries_its_format(repo: Repo) -> None:
    loc = resolve(repo.path)
    failure = statedir.FoldFailure("claude", "not logged in", "run claude /login")
    state = statedir.FoldState(pending=3, reason="budget spent", failure=failure, at="now")
    assert statedir.write_fold_state(loc, state)
    assert statedir.fold_state(loc) == state
    on_disk = json.loads((repo.state_dir / statedir.FOLD_STATE).read_text())
    assert on_disk["format"] == statedir.FOLD_STATE_FILE.version


def test_a_file_written_before_formats_existed_is_read(repo: Repo) -> None:
    loc = resolve(repo.path)
    _write(repo, statedir.FOLD_STATE, {"pending": 4, "failure": {"merger": "claude"}})
    state = statedir.fold_state(loc)
    assert state.pending == 4 and state.failure is not None and state.failure.merger == "claude"


def test_a_newer_format_is_read_as_absent_and_never_overwritten(repo: Repo) -> None:
    loc = resolve(repo.path)
    today = time.strftime("%Y-%m-%d")
    newer = {"format": 99, "date": today, "chars": 10, "total": 10, "more": "a later gitvault's"}
    path = _write(repo, statedir.FOLD_BUDGET, newer)
    assert statedir.fold_budget(loc) == statedir.Budget(0, 0)
    statedir.add_fold_spend(loc, 500)
    assert json.loads(path.read_text()) == newer
    path = _write(repo, statedir.FOLD_STATE, {"format": 2, "pending": 7})
    assert statedir.fold_state(loc) == statedir.FoldState()
    assert not statedir.write_fold_state(loc, statedir.FoldState(pending=1))
    assert json.loads(path.read_text()) == {"format": 2, "pending": 7}


@pytest.mark.parametrize(
    "content",
    [b"not json", b"[1, 2]", b'{"pending": NaN}', b'{"format": "x"}', b"\xff\xfe"],
    ids=["text", "a list", "NaN", "a format that is no number", "not UTF-8"],
)
def test_an_unreadable_file_is_absent_and_the_next_write_replaces_it(
    repo: Repo, content: bytes
) -> None:
    loc = resolve(repo.path)
    path = repo.state_dir / statedir.FOLD_BUDGET
    path.write_bytes(content)
    assert statedir.fold_budget(loc) == statedir.Budget(0, 0)
    statedir.add_fold_spend(loc, 42)
    if content == b'{"format": "x"}':  # of no known format: not ours to overwrite
        assert path.read_bytes() == content
    else:
        assert statedir.fold_budget(loc) == statedir.Budget(42, 42)


def test_a_link_or_a_fifo_in_place_of_a_state_file_is_never_followed(
    repo: Repo, tmp_path: Path
) -> None:
    loc = resolve(repo.path)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"pending": 9}))
    (repo.state_dir / statedir.FOLD_STATE).symlink_to(elsewhere)
    assert statedir.fold_state(loc).pending == 0
    os.mkfifo(repo.state_dir / statedir.VERIFY)
    assert statedir.verify_results(loc) is None  # returns at once: a FIFO never blocks a read


def test_a_corrupt_budget_file_does_not_stop_a_fold(repo: Repo) -> None:
    repo.commit("feat: one")
    (repo.state_dir / statedir.FOLD_BUDGET).write_text('["not", "an", "object"]')
    result = cli("fold", "--merger", "builtin", cwd=repo.path)
    assert result.code == 0, result.err


def test_installed_shims_spell_the_state_files_statedir_names(repo: Repo) -> None:
    for name in shims.HOOKS:
        installed = (repo.common_dir / "hooks" / name).read_text()
        assert installed == shims.render_shim(name)
        assert "@" not in re.sub(r'"\$@"|\$@', "", installed), name
        if name != "pre-push":
            assert f'"$state/{statedir.SPOOL}"' in installed
        assert f'state="$cd/{statedir.SHIM_NAMES["STATE_DIR"]}"' in installed


def test_the_shim_templates_spell_no_state_file_themselves() -> None:
    names = {v for k, v in statedir.SHIM_NAMES.items()}
    for rel in ("post-commit", "post-merge", "post-rewrite", "pre-push", "parts/locate.sh"):
        text = hook_template("git", rel).read_text()
        spelled = [n for n in names if re.search(rf"\$(state|cd|0)/{re.escape(n)}\b", text)]
        assert not spelled, (rel, spelled)
    text = hook_template("git", "parts/drain.sh").read_text()
    assert not re.search(r"\$(state|0)/[a-z]", text)
