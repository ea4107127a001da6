"""Sync over real transports: a plain path, smart HTTP (`git http-backend`) and ssh to a local
sshd. Two clones converge through each; a host that accepts the connection and never answers
is given up on within the stall bound, leaves no ssh behind and never blocks a sync with another
remote; a remote vault larger than the fetch bound is refused before it is kept, and leaves
nothing behind."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.git_servers import (
    Sshd,
    http_host,
    processes_with,
    ssh_host,
    sshd_unavailable,
)
from tests.support.remotes import bare_remote, seed, tree
from tests.support.repos import GITVAULT, Repo, git, wait_until

TRANSPORTS = ("file", "http", "ssh")


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    reason = sshd_unavailable()
    if reason is not None:
        print(f"skipping the ssh transport: {reason}")
        pytest.skip(reason)
    with ssh_host(tmp_path_factory.mktemp("sshd")) as host:
        yield host


class Host:
    """Where the shared remote lives and how clones reach it."""

    def __init__(self, root: Path, url: str, ssh_command: str | None) -> None:
        self.path = root / "team.git"
        self.url = url
        self.ssh_command = ssh_command

    def clone(self, path: Path) -> Repo:
        pre = ["-c", f"core.sshCommand={self.ssh_command}"] if self.ssh_command else []
        git(path.parent, *pre, "clone", "-q", self.url, str(path))
        repo = Repo(path, sync=True)
        if self.ssh_command:
            repo.git("config", "core.sshCommand", self.ssh_command)
        result = repo.gv("install", "--no-claude")
        assert result.code == 0, result
        return repo


@pytest.fixture
def host(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Host]:
    root = tmp_path / "srv"
    root.mkdir()
    path = bare_remote(root / "team.git")
    seed(path, tmp_path / "seed")
    kind = request.param
    if kind == "file":
        yield Host(root, str(path), None)
    elif kind == "http":
        git(path, "config", "http.receivepack", "true")
        with http_host(root) as server:
            yield Host(root, server.url("team"), None)
    else:
        server = request.getfixturevalue("sshd")
        yield Host(root, server.url(path), server.ssh_command)


@pytest.mark.parametrize("host", TRANSPORTS, indirect=True)
def test_two_clones_converge(host: Host, tmp_path: Path) -> None:
    a, b = host.clone(tmp_path / "a"), host.clone(tmp_path / "b")
    mine = a.commit("feat: a's change")
    assert a.gv("sync").code == 0
    theirs = b.commit("feat: b's change")
    first = b.gv("sync", "--json")
    assert first.code == 0, first
    assert a.gv("sync").code == 0
    for repo in (a, b):
        notes = repo.note_paths()
        assert mine in notes and theirs in notes, (repo.path, notes)
    assert a.vault_tip() == b.vault_tip() == git(host.path, "rev-parse", "vault")
    assert git(host.path, "fsck", "--strict", "--no-progress") == ""


def hung_clone(sshd: Sshd, tmp_path: Path) -> Repo:
    """A clone whose `origin` is a working ssh remote and `hang` one that never answers."""
    root = tmp_path / "srv"
    root.mkdir()
    team = bare_remote(root / "team.git")
    seed(team, tmp_path / "seed")
    repo = Host(root, sshd.url(team), sshd.ssh_command).clone(tmp_path / "victim")
    repo.git("remote", "add", "hang", sshd.hang_url())
    return repo


def test_a_hanging_ssh_remote_is_given_up_within_the_stall_bound(
    sshd: Sshd, tmp_path: Path
) -> None:
    repo = hung_clone(sshd, tmp_path)
    repo.git("config", "gitvault.syncStallSeconds", "2")
    started = time.monotonic()
    result = repo.gv("sync", "hang")
    took = time.monotonic() - started
    assert result.code == 1, result
    assert "sent nothing for 2s" in result.err and "gitvault.syncStallSeconds" in result.err
    assert took < 60, took  # was the 300 s network timeout, then a lock others waited on
    # no ssh left behind (the host ignores EOF: an orphaned ssh would wait on it for good)
    wait_until(lambda: processes_with(str(sshd.client_key)) == [], 10, "no ssh left")
    wait_until(lambda: processes_with(sshd.token) == [], 30, "the host's end to close")
    assert repo.gv("sync", "origin").code == 0


def test_a_hanging_remote_never_blocks_a_sync_with_another(sshd: Sshd, tmp_path: Path) -> None:
    repo = hung_clone(sshd, tmp_path)
    sshd.hung.unlink(missing_ok=True)
    repo.git("config", "gitvault.syncStallSeconds", "600")
    hanging = subprocess.Popen(
        [*GITVAULT, "sync", "hang"],
        cwd=repo.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "GITVAULT_SYNC": "1"},
    )
    try:
        wait_until(sshd.hung.exists, 60, "the hanging remote to be connected to")
        repo.commit("feat: work while a remote hangs")
        other = repo.gv("sync", "origin", "--json")
        assert other.code == 0, other
        assert other.json("sync")["pushed"]
        assert hanging.poll() is None  # it still hangs: the other sync did not wait for it
        hanging.send_signal(signal.SIGTERM)  # the user gives up on it
        _, err = hanging.communicate(timeout=60)
    finally:
        if hanging.poll() is None:
            hanging.kill()
            hanging.wait()
    assert hanging.returncode != 0
    wait_until(lambda: processes_with(str(sshd.client_key)) == [], 10, "its ssh to go with it")
    wait_until(lambda: processes_with(sshd.token) == [], 30, "the host's end to close")
    repo.git("config", "gitvault.syncStallSeconds", "2")
    again = repo.gv("sync", "hang")
    assert again.code == 1 and "busy" not in again.err and "running" not in again.err, again


def test_a_hanging_http_remote_is_given_up_within_the_stall_bound(tmp_path: Path) -> None:
    root = tmp_path / "srv"
    root.mkdir()
    team = bare_remote(root / "team.git")
    seed(team, tmp_path / "seed")
    with http_host(root) as server:
        repo = Host(root, server.url("team"), None).clone(tmp_path / "victim")
        repo.git("remote", "add", "hang", server.url("hang"))
        repo.git("config", "gitvault.syncStallSeconds", "2")
        started = time.monotonic()
        result = repo.gv("sync", "hang")
        assert result.code == 1 and "sent nothing for 2s" in result.err, result
        assert time.monotonic() - started < 60
        assert server.hung.is_set()
        assert repo.gv("sync", "origin").code == 0


@pytest.mark.parametrize("host", ("file", "http"), indirect=True)
def test_a_remote_vault_past_the_fetch_bound_is_not_kept(host: Host, tmp_path: Path) -> None:
    victim = host.clone(tmp_path / "victim")
    assert victim.gv("sync").code == 0
    teammate = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(host.path), str(teammate))
    git(teammate, "fetch", "-q", "origin", "vault:vault")
    git(teammate, "checkout", "-q", "vault")
    (teammate / "sessions" / "huge.md").write_bytes(os.urandom(12 * 1024 * 1024))
    git(teammate, "add", "-A")
    git(teammate, "commit", "-q", "-m", "a huge file")
    git(teammate, "push", "-q", "origin", "vault")
    victim.git("config", "gitvault.syncMaxFetchBytes", str(4 * 1024 * 1024))
    before = victim.git("count-objects", "-v")

    refused = victim.gv("sync")
    assert refused.code == 1, refused
    assert "gitvault.syncMaxFetchBytes" in refused.err
    assert "nothing it sent was kept" in refused.err
    assert victim.git("count-objects", "-v") == before
    assert not list((victim.git_dir / "objects" / "pack").glob("tmp_*"))
    assert os.listdir(victim.state_dir / "incoming") == []
    assert victim.git("status", "--porcelain") == ""
    # the bound raised, the fetch is taken and the file quarantined for its size
    victim.git("config", "gitvault.syncMaxFetchBytes", str(64 * 1024 * 1024))
    taken = victim.gv("sync", "--json")
    assert taken.code == 0, taken
    assert taken.json("sync")["quarantined"] == 1
    assert "sessions/huge.md" not in tree(victim)
