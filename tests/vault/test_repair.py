"""A vault commit made by hand through a worktree of the vault branch (as a person editing
vault.toml would) that puts back gitvault's older files: status says so, the next gitvault write
repairs it on top (the older digest, the notes written since the checkout), keeps what the
person changed on purpose, and says what happened."""

from __future__ import annotations

from pathlib import Path

from tests.support.memory import cli_in, vault_log, vault_text, watermark
from tests.support.repos import Repo


def _stale_worktree(repo: Repo, tmp_path: Path) -> Path:
    """A worktree of the vault branch checked out now, before gitvault writes on."""
    where = tmp_path / "vault-wt"
    repo.git("worktree", "add", "-q", str(where), "vault")
    return where


def _edit_by_hand(worktree: Path, repo: Repo, old: str, new: str) -> str:
    toml = worktree / "vault.toml"
    text = toml.read_text()
    assert old in text
    toml.write_text(text.replace(old, new))
    repo.git("-C", str(worktree), "commit", "-q", "-am", "tune recall by hand")
    return repo.git("rev-parse", "vault")


def _notes(repo: Repo, ref: str = "vault") -> set[str]:
    return set(repo.git("ls-tree", "-r", "--name-only", ref, "notes/").splitlines())


def test_a_stale_worktree_commit_is_seen_by_status_and_repaired_by_the_next_fold(
    repo: Repo, tmp_path: Path
) -> None:
    for i in range(3):
        repo.commit(f"feat: early {i}")
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    worktree = _stale_worktree(repo, tmp_path)
    for i in range(4):
        repo.commit(f"feat: later {i}")
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    mark, notes = watermark(repo), _notes(repo)
    digest = vault_text(repo, "_master.md")
    hand = _edit_by_hand(worktree, repo, "sessions = 2", "sessions = 3")
    assert watermark(repo) != mark and _notes(repo) < notes  # what the person did not mean
    status = cli_in(repo, "status")
    text = " ".join((status.out + status.err).split())
    assert f"a hand-made commit ({hand[:7]} 'tune recall by hand')" in text, text
    assert "put back an older _master.md" in text and "removed 4 notes" in text, text
    assert "gitvault config KEY VALUE" in text
    dry = cli_in(repo, "fold", "--merger", "builtin", "--dry-run")
    assert "the next fold repairs it first" in dry.out + dry.err, dry
    assert repo.git("rev-parse", "vault") == hand  # a dry run writes nothing
    result = cli_in(repo, "fold", "--merger", "builtin")
    assert result.code == 0, result
    said = " ".join((result.out + result.err).split())
    assert "repaired the vault: a hand-made commit" in said, said
    assert "nothing new since the last fold" in said, said  # nothing folded a second time
    assert watermark(repo) == mark and _notes(repo) == notes
    assert vault_text(repo, "_master.md") == digest
    toml = vault_text(repo, "vault.toml")
    assert toml is not None and "sessions = 3" in toml  # the edit meant is kept
    assert repo.git("rev-parse", "vault^") == hand  # repaired on top: nothing rewritten
    assert vault_log(repo)[0].startswith("repair: restore what a hand-made commit")
    later = cli_in(repo, "status")
    assert "hand-made commit" in later.out + later.err  # in the log of what happened
    assert "the next gitvault write" not in later.out + later.err


def test_the_next_note_repairs_it_too(repo: Repo, tmp_path: Path) -> None:
    repo.commit("feat: first")
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    worktree = _stale_worktree(repo, tmp_path)
    repo.commit("feat: second")
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    mark, notes = watermark(repo), _notes(repo)
    _edit_by_hand(worktree, repo, "stale_days = 7", "stale_days = 2")
    sha = repo.commit("feat: third")  # its note is the next gitvault write
    assert watermark(repo) == mark
    assert notes < _notes(repo) and any(sha in path for path in _notes(repo))
    toml = vault_text(repo, "vault.toml")
    assert toml is not None and "stale_days = 2" in toml


def test_an_up_to_date_hand_made_edit_is_left_alone(repo: Repo, tmp_path: Path) -> None:
    repo.commit("feat: first")
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    worktree = _stale_worktree(repo, tmp_path)
    hand = _edit_by_hand(worktree, repo, "sessions = 2", "sessions = 3")
    status = cli_in(repo, "status")
    assert "hand-made" not in status.out + status.err
    repo.commit("feat: second")
    assert repo.git("rev-parse", "vault~1") == hand  # the note sits on it, nothing repaired
    assert not any(s.startswith("repair:") for s in vault_log(repo))
