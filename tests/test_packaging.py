"""The wheel: built from a clean copy of the source, installed into a fresh virtual
environment; hooks/ and schemas/ are found there and the shims work from the installed copy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.repos import git

SOURCES = ("pyproject.toml", "README.md", "gitvault")


def _run(cmd: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.mark.slow
def test_wheel_installs_into_a_fresh_venv_with_hooks_and_schemas(tmp_path: Path) -> None:
    # A clean copy: no build/ leftovers of the checkout can leak into the wheel, and the
    # shared checkout is not written to.
    src = tmp_path / "src"
    src.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, src / name)
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(src)], src)
    wheels = list(dist.glob("gitvault-*.whl"))
    assert len(wheels) == 1, wheels
    names = set(zipfile.ZipFile(wheels[0]).namelist())
    shipped = {
        "gitvault/data/hooks/git/post-commit",
        "gitvault/data/hooks/git/post-rewrite",
        "gitvault/data/hooks/git/post-merge",
        "gitvault/data/hooks/git/parts/drain.sh",
        "gitvault/data/hooks/claude/skills/save/SKILL.md",
        "gitvault/data/schemas/note.schema.json",
        "gitvault/data/schemas/vault.schema.json",
    }
    assert shipped <= names, shipped - names
    for schema in (ROOT / "schemas").glob("*.json"):
        assert f"gitvault/data/schemas/{schema.name}" in names, f"{schema.name} is not shipped"

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    py = venv / "bin" / "python"
    _run([str(py), "-m", "pip", "install", "-q", str(wheels[0])], tmp_path, timeout=600)

    probe = _run(
        [
            str(py),
            "-c",
            "import gitvault, gitvault.resources as r; root = r.data_root(); "
            "print(gitvault.__file__); print(root); "
            "print(r.hook_template('git', 'post-commit').is_file()); "
            "print(r.schema_path('note.schema.json').is_file())",
        ],
        tmp_path,
    )
    module_file, data_root, hook_ok, schema_ok = probe.stdout.split()
    assert module_file.startswith(str(venv)), "imported from the fresh venv, not the checkout"
    assert data_root.startswith(str(venv)) and data_root.rstrip("/").endswith("gitvault/data")
    assert hook_ok == "True" and schema_ok == "True"

    helped = _run([str(venv / "bin" / "gitvault"), "--help"], tmp_path)
    assert "install" in helped.stdout and "backfill" in helped.stdout

    # The installed copy's shims work end to end: install, commit, note.
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "first")
    _run([str(venv / "bin" / "gitvault"), "install", "--no-claude"], repo)
    shim = (repo / ".git" / "hooks" / "post-commit").read_text()
    assert str(venv) not in shim, "the shim names no machine-specific path"
    launcher = (repo / ".git" / "gitvault" / "bin" / "gitvault-hook").read_text()
    assert str(venv / "bin" / "gitvault-hook") in launcher, "the launcher points at this venv"
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "b.txt")
    git(repo, "commit", "-q", "-m", "noted by the installed wheel", env={"GITVAULT_SYNC": "1"})
    head = git(repo, "rev-parse", "HEAD")
    files = git(repo, "ls-tree", "-r", "--name-only", "vault").splitlines()
    assert any(f.endswith(f"{head}.md") for f in files), files
    assert os.access(venv / "bin" / "gitvault", os.X_OK)


# The 0.1.0 release: the commit before the package was split into subpackages.
RELEASE_0_1 = "755f5d8"


def _wheel_of(tree: Path, dist: Path) -> Path:
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(tree)], tree)
    (wheel,) = dist.glob("gitvault-*.whl")
    return wheel


def _old_release_tree(tmp_path: Path) -> Path:
    probe = subprocess.run(
        ["git", "-C", str(ROOT), "cat-file", "-e", f"{RELEASE_0_1}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip(f"release 0.1.0 ({RELEASE_0_1}) is not in this clone's history (shallow?)")
    tree = tmp_path / "old-src"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", RELEASE_0_1],
        capture_output=True,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


@pytest.mark.slow
def test_a_repository_installed_by_the_previous_release_keeps_working_after_an_upgrade(
    tmp_path: Path,
) -> None:
    """0.1.0 installed shims running `python -m gitvault.drain` and Claude settings running
    `python -m gitvault.claude_hooks`. After `pip install -U gitvault`, without running install
    again, commits still get notes and the hooks still answer; `gitvault install` then rewrites
    both in place to the stable entry."""
    old_wheel = _wheel_of(_old_release_tree(tmp_path), tmp_path / "old-dist")
    new_src = tmp_path / "new-src"
    new_src.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, new_src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(path, new_src / name)
    new_wheel = _wheel_of(new_src, tmp_path / "new-dist")

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    py, gv = venv / "bin" / "python", venv / "bin" / "gitvault"
    _run([str(py), "-m", "pip", "install", "-q", str(old_wheel)], tmp_path, timeout=600)
    assert "gitvault 0.1.0" in _run([str(gv), "--version"], tmp_path).stdout

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "first")
    _run([str(gv), "install"], repo)
    settings = (repo / ".claude" / "settings.json").read_text()
    assert "-m gitvault.claude_hooks" in settings, "the 0.1 settings name a module path"
    assert "gitvault.drain" in (repo / ".git" / "hooks" / "gitvault-drain.sh").read_text()

    def commit_is_noted(message: str) -> None:
        git(repo, "commit", "-q", "--allow-empty", "-m", message, env={"GITVAULT_SYNC": "1"})
        head = git(repo, "rev-parse", "HEAD")
        files = git(repo, "ls-tree", "-r", "--name-only", "vault").splitlines()
        assert any(f.endswith(f"{head}.md") for f in files), (message, files[-3:])

    def session_start_recalls() -> None:
        hooks = json.loads((repo / ".claude" / "settings.json").read_text())["hooks"]
        command = hooks["SessionStart"][0]["hooks"][0]["command"]
        payload = {
            "session_id": "s-1",
            "transcript_path": str(tmp_path / "t.jsonl"),
            "cwd": str(repo),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
        done = subprocess.run(
            ["sh", "-c", command],
            input=json.dumps(payload),
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "CLAUDE_PROJECT_DIR": str(repo)},
        )
        assert done.returncode == 0, done.stderr
        context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        assert context.startswith("=== VAULT RECALL ===")

    commit_is_noted("noted by 0.1.0")
    session_start_recalls()

    # Upgrade the package only: the installed shims and settings are those of 0.1.0.
    _run([str(py), "-m", "pip", "install", "-q", "--no-deps", str(new_wheel)], tmp_path)
    assert "gitvault 0.2.0" in _run([str(gv), "--version"], tmp_path).stdout
    commit_is_noted("noted by 0.2.0 through the 0.1 shims")
    session_start_recalls()
    status = json.loads(_run([str(gv), "status", "--json"], repo).stdout)["data"]
    assert any("older than this gitvault" in w for w in status["warnings"]), status

    # `gitvault install` upgrades both in place, to the stable entry.
    done = _run([str(gv), "install"], repo)
    assert "updated" in done.stdout
    shim = (repo / ".git" / "hooks" / "post-commit").read_text()
    from gitvault.notes.shims import shipped_version

    assert f"gitvault-shim post-commit v{shipped_version('post-commit')}" in shim
    assert "-m gitvault" not in shim
    assert str(venv) not in shim
    assert not (repo / ".git" / "hooks" / "gitvault-drain.sh").exists()
    settings = (repo / ".claude" / "settings.json").read_text()
    assert "gitvault.claude_hooks" not in settings and str(venv) not in settings
    assert settings.count("gitvault-hook claude session-start") == 1, "replaced, not added"
    commit_is_noted("noted by 0.2.0 through the new shims")
    session_start_recalls()
    status = json.loads(_run([str(gv), "status", "--json"], repo).stdout)["data"]
    assert not any("older than this gitvault" in w for w in status["warnings"]), status


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:3])


def test_the_01_forwarders_name_one_removal_release_not_yet_reached() -> None:
    """gitvault/drain.py and gitvault/claude_hooks.py forward what 0.1 installed. They share one
    stated removal release; once the package version reaches it this fails: remove them (and
    the upgrade test above), or move the release on with a reason."""
    import gitvault
    from gitvault import claude_hooks, drain

    assert drain.REMOVED_IN == claude_hooks.REMOVED_IN == gitvault.FORWARDERS_REMOVED_IN
    assert _release(gitvault.__version__) < _release(gitvault.FORWARDERS_REMOVED_IN), (
        f"gitvault {gitvault.__version__} still ships the 0.1 forwarders, due to go in "
        f"{gitvault.FORWARDERS_REMOVED_IN}"
    )
