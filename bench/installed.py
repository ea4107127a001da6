"""gitvault as its users run it: the bench measures an installed wheel, not this checkout.

A checkout's venv holds gitvault as an editable install, whose import hook (a `.pth` file that
loads setuptools' finder, with pathlib, re and enum behind it) runs at every interpreter start:
every whole-process figure (`gitvault status --line`, each agent hook, `python -c pass` itself)
would carry start-up cost that no `pip install .`, pipx or uv install pays. So `just bench`
builds this working tree into a throw-away venv (`pip install --no-deps .`, a plain wheel
install; gitvault's dependencies are read from the running interpreter's site-packages through
one `.pth` path line, which runs no code) and runs itself again under that venv's Python, so
`sys.executable`, the console scripts and every hook a measure installs are the installed ones.
`--editable` (or a build that fails, said so) measures the checkout as it is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable
from pathlib import Path

ENV = "GITVAULT_BENCH_INSTALLED"  # the venv this run re-executed into (removed at its end)
ROOT = Path(__file__).resolve().parents[1]


def how() -> str:
    """How the gitvault being measured is installed, for the machine facts."""
    if os.environ.get(ENV):
        return "installed from a wheel of this tree (not editable)"
    import gitvault

    inside = Path(gitvault.__file__).resolve().is_relative_to(ROOT)
    return "editable install of this checkout" if inside else "installed"


def _build(venv: Path) -> str | None:
    """Make the venv and install this tree into it; None, else why it could not."""
    python = str(venv / "bin" / "python")
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True)
    if made.returncode != 0:
        return f"python -m venv failed: {made.stderr[-300:].strip()}"
    where = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
    )
    # The dependencies: this interpreter's site-packages, by path (a path line runs no code).
    deps = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    Path(where.stdout.strip(), "_gitvault_bench_deps.pth").write_text("\n".join(deps) + "\n")
    pip = [python, "-m", "pip", "install", "-q", "--no-deps", str(ROOT)]
    built = subprocess.run(pip, capture_output=True, text=True)
    if built.returncode != 0:
        return f"pip install . failed: {(built.stderr or built.stdout)[-300:].strip()}"
    return None


def reexec(argv: list[str], script: Path, say: Callable[[str], None]) -> None:
    """Run the bench again under an installed gitvault (returns only when it cannot)."""
    if os.environ.get(ENV) or how() != "editable install of this checkout":
        return
    venv = Path(tempfile.mkdtemp(prefix="gitvault-bench-install-"))
    say(f"bench: installing this tree as a wheel into {venv} (the form users run)")
    why = _build(venv)
    if why is not None:
        shutil.rmtree(venv, ignore_errors=True)
        say(f"bench: measuring the editable checkout instead: {why}")
        return
    python = str(venv / "bin" / "python")
    env = {**os.environ, ENV: str(venv)}
    sys.stdout.flush()
    sys.stderr.flush()
    code = subprocess.run([python, str(script), *argv], env=env, check=False).returncode
    if "--keep" in argv:  # a kept sandbox's hooks run this venv's gitvault
        say(f"bench: kept the installed gitvault in {venv}")
    else:
        shutil.rmtree(venv, ignore_errors=True)
    sys.exit(code)
