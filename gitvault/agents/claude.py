"""Wire Claude Code into a worktree: hook entries merged into .claude/settings.json and the
/save and /recall skills (the CLAUDE.md managed section is gitvault.agents.agentfiles).

Settings are merged additively: every other key and every foreign hook is kept, a second install
changes nothing, uninstall removes only gitvault's entries. Files gitvault owns (the skills) are
recorded with a hash in a stamp file; a later install upgrades only files still equal to what
it installed and reports the ones a user edited, never overwriting them.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitvault import launcher
from gitvault.agents import texts
from gitvault.errors import Refused
from gitvault.resolve import Location
from gitvault.resources import hook_template
from gitvault.vault.locking import atomic_write

# How gitvault's own hook entries are recognised: the stable entry, and the module path that
# settings written by gitvault 0.1 run.
MARKERS = ("gitvault-hook", "gitvault.claude_hooks")
SKILLS = ("save", "recall")
STAMP = "claude-stamp.json"


@dataclass
class ClaudeReport:
    changes: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # user-edited files left alone


def hook_command(event: str) -> str:
    """Shell command for a hook: the repository's launcher, else gitvault-hook on PATH, else
    nothing (exit 0): a missing tool must never break a session."""
    return launcher.shell_command(f"claude {event}")


def _wanted_hooks() -> dict[str, list[dict[str, Any]]]:
    template = hook_template("claude", "settings-hooks.json").read_text(encoding="utf-8")
    data: dict[str, list[dict[str, Any]]] = json.loads(template)
    for groups in data.values():
        for group in groups:
            for handler in group["hooks"]:
                handler["command"] = hook_command(handler["command"].split(" ", 1)[1])
    return data


def _is_ours(handler: Any) -> bool:
    return isinstance(handler, dict) and any(m in str(handler.get("command", "")) for m in MARKERS)


def load_settings(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise Refused(
            f"{path} is not valid JSON (line {exc.lineno}): gitvault will not rewrite it",
            hint="fix the file, or install with --no-claude",
        ) from exc
    if not isinstance(data, dict):
        raise Refused(f"{path} is not a JSON object", hint="fix the file, or use --no-claude")
    # The shape merge_hooks needs, checked here so that install's preflight refuses before
    # anything (the vault branch, the git hooks) is written.
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise Refused(f'{path}: "hooks" is not an object', hint="fix the file, or use --no-claude")
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise Refused(
                f"{path}: hooks.{event} is not a list", hint="fix the file, or use --no-claude"
            )
    return data


def merge_hooks(
    settings: dict[str, Any], wanted: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    out = copy.deepcopy(settings)
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise Refused('settings.json has a "hooks" value that is not an object')
    for event, groups in wanted.items():
        existing = hooks.get(event, [])
        if not isinstance(existing, list):
            raise Refused(f"settings.json hooks.{event} is not a list")
        ours = [
            g
            for g in existing
            if isinstance(g, dict) and any(_is_ours(h) for h in g.get("hooks", []))
        ]
        if ours == groups and all(all(_is_ours(h) for h in g.get("hooks", [])) for g in ours):
            continue  # already exactly as wanted: keep its position, no churn
        hooks[event] = remove_ours_from(existing) + copy.deepcopy(groups)
    return out


def remove_ours_from(groups: list[Any]) -> list[Any]:
    kept = []
    for group in groups:
        if not isinstance(group, dict):
            kept.append(group)
            continue
        handlers = [h for h in group.get("hooks", []) if not _is_ours(h)]
        if handlers:
            kept.append({**group, "hooks": handlers})
        elif not any(_is_ours(h) for h in group.get("hooks", [])):
            kept.append(group)
    return kept


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())


def settings_path(workdir: Path, local: bool) -> Path:
    return workdir / ".claude" / ("settings.local.json" if local else "settings.json")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _skill_text(name: str) -> bytes:
    text = hook_template("claude", f"skills/{name}/SKILL.md").read_text(encoding="utf-8")
    cli = texts.gitvault_cli()
    save = texts.save_command(
        cmd=cli, agent="claude-code", title="<title: $ARGUMENTS>", session_id="${CLAUDE_SESSION_ID}"
    )
    return text.replace("@SAVE_COMMAND@", save).replace("@GITVAULT@", cli).encode()


def _stamp_path(loc: Location) -> Path:
    return loc.state_dir / STAMP


def _load_stamp(loc: Location) -> dict[str, str]:
    try:
        data = json.loads(_stamp_path(loc).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _skills(workdir: Path) -> Iterator[tuple[str, str, Path, bytes | None]]:
    """(name, relative path, path, current bytes or None) of each skill gitvault installs."""
    for name in SKILLS:
        rel = f".claude/skills/{name}/SKILL.md"
        target = workdir / rel
        try:
            have: bytes | None = target.read_bytes()
        except FileNotFoundError:
            have = None
        yield name, rel, target, have


def install(loc: Location, *, local: bool = False) -> ClaudeReport:
    assert loc.workdir is not None
    report = ClaudeReport()
    path = settings_path(loc.workdir, local)
    current = load_settings(path)
    merged = merge_hooks(current, _wanted_hooks())
    if merged != current:
        _write_json(path, merged)
        report.changes.append(f"added gitvault's hooks to {path.relative_to(loc.workdir)}")
    stamp = _load_stamp(loc)
    for name, rel, target, have in _skills(loc.workdir):
        wanted = _skill_text(name)
        if have == wanted:
            stamp[rel] = _sha(wanted)
            continue
        if have is not None and stamp.get(rel) != _sha(have):
            report.kept.append(f"{rel} was edited; left as it is (delete it to get the new one)")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, wanted)
        stamp[rel] = _sha(wanted)
        report.changes.append(f"{'updated' if have is not None else 'wrote'} skill /{name} ({rel})")
    atomic_write(_stamp_path(loc), json.dumps(stamp, indent=2, sort_keys=True).encode())
    return report


def uninstall(loc: Location) -> ClaudeReport:
    report = ClaudeReport()
    if loc.workdir is None:
        return report
    for local in (False, True):
        path = settings_path(loc.workdir, local)
        if not path.exists():
            continue
        try:
            current = load_settings(path)
        except Refused as exc:
            report.kept.append(exc.message)
            continue
        hooks = current.get("hooks")
        if not isinstance(hooks, dict):
            continue
        cleaned = copy.deepcopy(current)
        for event in list(hooks):
            if isinstance(hooks[event], list):
                left = remove_ours_from(hooks[event])
                if left:
                    cleaned["hooks"][event] = left
                else:
                    del cleaned["hooks"][event]
        if not cleaned["hooks"]:
            del cleaned["hooks"]
        if cleaned != current:
            _write_json(path, cleaned)
            report.changes.append(f"removed gitvault's hooks from {path.relative_to(loc.workdir)}")
    stamp = _load_stamp(loc)
    for name, rel, target, have in _skills(loc.workdir):
        if have is None:
            continue
        if stamp.get(rel) == _sha(have) or have == _skill_text(name):
            target.unlink()
            for folder in (target.parent, target.parent.parent):
                try:
                    folder.rmdir()
                except OSError:
                    break
            report.changes.append(f"removed skill /{name}")
        else:
            report.kept.append(f"{rel} was edited; left in place")
    _stamp_path(loc).unlink(missing_ok=True)
    return report
