"""The real home a test must never touch, and the git variables a test must start without."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

# The real home, read from the password database (HOME itself is replaced below).
REAL_HOME = Path(pwd.getpwuid(os.getuid()).pw_dir)
# Files a careless test (or gitvault bug) could write to in the real home.
WATCHED = (
    ".gitconfig",
    ".config/git/config",
    ".config/git",
    ".gitvault",
    ".config/gitvault",
    ".claude.json",
    ".claude/settings.json",
)
# Variables git exports to hooks or that users set to redirect git: a test must start clean.
GIT_LOCATION_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_TRACE",
)


def snapshot_real_home() -> dict[str, tuple[int, int] | None]:
    out: dict[str, tuple[int, int] | None] = {}
    for rel in WATCHED:
        path = REAL_HOME / rel
        try:
            st = path.stat()
        except OSError:
            out[rel] = None
        else:
            out[rel] = (st.st_mtime_ns, st.st_size)
    return out
