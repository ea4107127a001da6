"""`gitvault status` tells when the installed shims are older than this gitvault."""

from __future__ import annotations

import json
import re

from tests.support.repos import Repo


def _warnings(repo: Repo) -> list[str]:
    result = repo.gv("status", "--json")
    assert result.code == 0, result
    return list(json.loads(result.out)["data"]["warnings"])


def test_status_reports_shims_older_than_this_gitvault(repo: Repo) -> None:
    assert not [w for w in _warnings(repo) if "older than this gitvault" in w]
    shim = repo.path / ".git" / "hooks" / "post-commit"
    shim.write_text(
        re.sub(
            r"(?m)^# gitvault-shim post-commit v\d+$",
            "# gitvault-shim post-commit v0",
            shim.read_text(),
        )
    )
    assert "# gitvault-shim post-commit v0\n" in shim.read_text()
    stale = [w for w in _warnings(repo) if "older than this gitvault" in w]
    assert stale and "post-commit" in stale[0] and "post-merge" not in stale[0]
    assert repo.gv("install").code == 0
    assert not [w for w in _warnings(repo) if "older than this gitvault" in w]
