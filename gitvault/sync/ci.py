"""Would the repository's CI run for a pushed vault branch? A text check of the CI files in
the working tree (no YAML parser: a false alarm costs a line of output, a missed one costs CI
minutes on every sync). Vault commits carry [skip ci] anyway; this says how to exclude the
branch for good, or to publish to a non-branch ref ([sync] remote_ref)."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

_PUSH = re.compile(
    r"^[ \t]*on[ \t]*:[ \t]*(\[[^\]\n]*\bpush\b[^\]\n]*\]|push\b)|^[ \t]*-[ \t]*push[ \t]*$", re.M
)
_PUSH_KEY = re.compile(r"^([ \t]*)push[ \t]*:[ \t]*(#.*)?$", re.M)
_OTHER_CI = {
    ".gitlab-ci.yml": 'GitLab CI: add `workflow: rules: - if: $CI_COMMIT_BRANCH == "{b}"` '
    "with `when: never`",
    ".circleci/config.yml": "CircleCI: add `branches: ignore: [{b}]` to the workflow's jobs",
    "bitbucket-pipelines.yml": "Bitbucket Pipelines: use `branches:` instead of `default:`",
    "azure-pipelines.yml": "Azure Pipelines: add `trigger: branches: exclude: [{b}]`",
    ".travis.yml": "Travis CI: add `branches: except: [{b}]`",
}


def warnings(workdir: Path | None, branch: str, remote_ref: str) -> list[str]:
    """Lines naming each CI configuration that would run on a pushed vault branch."""
    if workdir is None or not remote_ref.startswith("refs/heads/"):
        return []  # a non-branch ref triggers no branch CI
    out: list[str] = []
    workflows = workdir / ".github" / "workflows"
    files = (
        sorted([*workflows.glob("*.yml"), *workflows.glob("*.yaml")]) if workflows.is_dir() else []
    )
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if _runs_on(text, branch):
            out.append(
                f"{path.relative_to(workdir)} runs on pushes to every branch, so also on "
                f"'{branch}' (vault commits carry [skip ci], which GitHub honours); to exclude "
                f"it add `branches-ignore: [{branch}]` under `push:`, or set "
                '[sync] remote_ref = "refs/gitvault/vault" in vault.toml'
            )
    for name, how in _OTHER_CI.items():
        path = workdir / name
        if path.is_file():
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if branch not in text:
                out.append(
                    f"{name} does not mention '{branch}', so it may run on the vault branch "
                    f"(vault commits carry [skip ci]); {how.format(b=branch)}, or set "
                    '[sync] remote_ref = "refs/gitvault/vault" in vault.toml'
                )
    return out


def _runs_on(text: str, branch: str) -> bool:
    """Whether a GitHub workflow's push trigger has no branch filter that leaves out branch."""
    if _PUSH.search(text):
        return True  # `on: push` / `on: [push, …]`: every branch
    match = _PUSH_KEY.search(text)
    if not match:
        return False
    indent = len(match.group(1))
    block: list[str] = []
    for line in text[match.end() :].splitlines()[1:]:
        if line.strip() and (len(line) - len(line.lstrip())) <= indent:
            break
        block.append(line)
    body = "\n".join(block)
    if "branches-ignore" in body:
        return not any(_matches(p, branch) for p in _patterns(body, "branches-ignore"))
    if re.search(r"^[ \t]*branches[ \t]*:", body, re.M):
        return any(_matches(p, branch) for p in _patterns(body, "branches"))
    return not re.search(r"^[ \t]*tags[ \t]*:", body, re.M)  # only tags: no branch runs


def _patterns(body: str, key: str) -> list[str]:
    match = re.search(rf"^([ \t]*){re.escape(key)}[ \t]*:[ \t]*(.*)$", body, re.M)
    if not match:
        return []
    inline = match.group(2).strip()
    if inline.startswith("["):
        return [p.strip(" '\"") for p in inline.strip("[]").split(",") if p.strip()]
    out = []
    for line in body[match.end() :].splitlines()[1:]:
        item = line.strip()
        if not item.startswith("-"):
            break
        out.append(item[1:].strip().strip("'\""))
    return out


def _matches(pattern: str, branch: str) -> bool:
    if pattern in ("**", "*"):
        return True
    return fnmatch.fnmatchcase(branch, pattern.replace("**", "*"))
