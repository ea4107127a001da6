"""The wheel: built from a clean copy of the source, installed into a fresh virtual
environment; hooks/ and schemas/ are found there and the shims work from the installed copy."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers import git

ROOT = Path(__file__).resolve().parent.parent
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
