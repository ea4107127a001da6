"""The autouse guard in conftest.py: tests never see or touch the real HOME or git config."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.home import REAL_HOME, snapshot_real_home
from tests.support.repos import git


def test_home_and_global_git_config_are_private(isolated_home: Path, tmp_path: Path) -> None:
    assert Path(os.environ["HOME"]) == isolated_home != REAL_HOME
    assert Path(os.environ["GIT_CONFIG_GLOBAL"]).parent == isolated_home
    assert os.environ["GIT_CONFIG_NOSYSTEM"] == "1"
    assert not any(v.startswith("GITVAULT_") for v in os.environ)
    assert "GIT_DIR" not in os.environ and "GIT_INDEX_FILE" not in os.environ
    before = snapshot_real_home()
    git(tmp_path, "config", "--global", "guard.probe", "written")
    assert git(tmp_path, "config", "--global", "--get", "guard.probe") == "written"
    assert "[guard]\n\tprobe = written" in (isolated_home / ".gitconfig").read_text()
    assert git(tmp_path, "config", "--global", "--get", "user.name") == "Test Dev"
    assert Path("~").expanduser() == isolated_home
    assert snapshot_real_home() == before, "the real home's git config was not touched"
