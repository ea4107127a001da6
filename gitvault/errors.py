"""The one exception root. The CLI boundary (cli.py) maps it to exit codes; nothing else exits."""

from __future__ import annotations

# Documented exit codes (README "Exit codes").
OK = 0
ERROR = 1  # an expected failure: the message says what went wrong and what to do
USAGE = 2  # bad flags or arguments (typer/click)
REFUSED = (
    3  # gitvault refused to write (unmatched sentinel, foreign vault branch, …); nothing changed
)
FOLD_REJECTED = 4  # the merger's answer was invalid; the old digest and watermark stand
BUSY = 5  # another gitvault process holds the lease/lock, or the vault ref kept moving
INTERNAL = 70  # a bug: details go to the log in the common git dir
INTERRUPTED = 130


class GitvaultError(Exception):
    """An expected failure with a one-line message and an optional next step."""

    exit_code = ERROR

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class NotARepository(GitvaultError):
    pass


class UnsafeRepository(NotARepository):
    """git (or libgit2) refuses a repository owned by another user (safe.directory)."""

    def __init__(self, path: str) -> None:
        top = path.removesuffix("/.git")
        names = [top] if top == path else [top, path]  # git checks the git dir itself too
        adds = " and ".join(f"git config --global --add safe.directory {p}" for p in names)
        super().__init__(
            f"git refuses to work in {top}: it is owned by another user (git's safe.directory "
            "check), so gitvault cannot read or write its vault",
            hint=f"if you trust that repository: {adds}",
        )


class Refused(GitvaultError):
    exit_code = REFUSED


class FoldRejected(GitvaultError):
    exit_code = FOLD_REJECTED


class Busy(GitvaultError):
    exit_code = BUSY
