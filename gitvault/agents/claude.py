"""Wire Claude Code into a worktree: hook entries merged into .claude/settings.json and the
/save and /recall skills (the CLAUDE.md managed section is gitvault.agents.agentfiles).

Settings are merged additively: every other key and every foreign hook is kept, a second install
changes nothing, uninstall removes only gitvault's entries. Besides the hooks, install adds one
narrow permission rule, `Bash(gitvault save:*)`, so the save a Stop hook asks for is not denied:
to .claude/settings.local.json (honoured at once, machine-local, kept out of git through
.git/info/exclude) and to .claude/settings.json (honoured once the workspace is trusted, so a
team that commits .claude/ shares it). Nothing written here names a machine-specific path.

gitvault writes only regular files inside the worktree: a symlinked .claude/, skills folder or
settings file is refused (exit 3), nothing written. settings.json must be strict JSON (NaN and
Infinity are refused, not rewritten). Files gitvault owns (the skills) are
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

from gitvault.agents import texts
from gitvault.errors import Refused
from gitvault.resolve import Location
from gitvault.resources import hook_template
from gitvault.vault import launcher
from gitvault.vault.files import atomic_write

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
    return launcher.shell_command(f"claude {event}", "CLAUDE_PROJECT_DIR")


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


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def check_writable(workdir: Path, rel: str) -> None:
    """Refuse (exit 3) unless every existing part of workdir/rel below the worktree is a real
    directory or regular file, and the path stays inside the worktree."""
    root = workdir.resolve()
    current = workdir
    parts = Path(rel).parts
    for index, part in enumerate(parts):
        current = current / part
        if current.is_symlink():
            raise Refused(
                f"{current} is a symbolic link: gitvault will not write through it",
                hint="replace the link with a real directory or file, or install with --no-claude",
            )
        if not current.exists():
            break
        last = index == len(parts) - 1
        if (last and not current.is_file()) or (not last and not current.is_dir()):
            raise Refused(
                f"{current} is not a regular {'file' if last else 'directory'}",
                hint="move it away, or install with --no-claude",
            )
    try:
        (workdir / rel).resolve().relative_to(root)
    except ValueError as exc:
        raise Refused(f"{workdir / rel} resolves outside the worktree") from exc


def targets(local: bool) -> list[str]:
    """Every file below the worktree install may write."""
    names = [SETTINGS_LOCAL] if local else [SETTINGS_SHARED, SETTINGS_LOCAL]
    return names + [f".claude/skills/{name}/SKILL.md" for name in SKILLS]


def preflight(workdir: Path, local: bool) -> None:
    """Everything about the Claude files that could refuse, before anything is written."""
    for rel in targets(local):
        check_writable(workdir, rel)
    load_settings(settings_path(workdir, local))


def load_settings(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise Refused(
            f"{path} cannot be read as UTF-8 text: gitvault will not rewrite it",
            hint="fix the file, or install with --no-claude",
        ) from exc
    try:
        data = json.loads(text, parse_constant=_no_constant) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise Refused(
            f"{path} is not valid JSON (line {exc.lineno}): gitvault will not rewrite it",
            hint="fix the file, or install with --no-claude",
        ) from exc
    except (ValueError, RecursionError) as exc:
        raise Refused(
            f"{path} is not strict JSON ({exc}): gitvault will not rewrite it",
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
    permissions = data.get("permissions", {})
    if not isinstance(permissions, dict) or not isinstance(permissions.get("allow", []), list):
        raise Refused(
            f'{path}: "permissions" is not an object with an "allow" list',
            hint="fix the file, or use --no-claude",
        )
    return data


def add_permission(settings: dict[str, Any], rule: str) -> dict[str, Any]:
    out = copy.deepcopy(settings)
    allow = out.setdefault("permissions", {}).setdefault("allow", [])
    if rule not in allow:
        allow.append(rule)
    return out


def remove_permission(settings: dict[str, Any], rule: str) -> dict[str, Any]:
    out = copy.deepcopy(settings)
    permissions = out.get("permissions")
    if not isinstance(permissions, dict) or not isinstance(permissions.get("allow"), list):
        return out
    permissions["allow"] = [r for r in permissions["allow"] if r != rule]
    if not permissions["allow"]:
        del permissions["allow"]
    if not permissions:
        del out["permissions"]
    return out


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


SETTINGS_SHARED = ".claude/settings.json"
SETTINGS_LOCAL = ".claude/settings.local.json"


def settings_path(workdir: Path, local: bool) -> Path:
    return workdir / (SETTINGS_LOCAL if local else SETTINGS_SHARED)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _skill_text(name: str) -> bytes:
    """A skill as shipped: plain `gitvault`, never this machine's interpreter (the SessionStart
    hook puts gitvault on the session's PATH when it is not there already)."""
    text = hook_template("claude", f"skills/{name}/SKILL.md").read_text(encoding="utf-8")
    cli = "gitvault"
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


ORIGINS = "claude-settings-origin.json"  # what each settings file was before gitvault wrote it


def _origins(loc: Location) -> dict[str, Any]:
    try:
        data = json.loads((loc.state_dir / ORIGINS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _remember_origin(loc: Location, path: Path) -> None:
    """Before gitvault first writes a settings file: whether it existed, and its exact bytes,
    so uninstall can delete a file gitvault created or give the user back their own bytes."""
    assert loc.workdir is not None
    rel = path.relative_to(loc.workdir).as_posix()
    origins = _origins(loc)
    if rel in origins:
        return
    try:
        original: str | None = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        original = None
    except (OSError, UnicodeDecodeError):
        return
    origins[rel] = {"created": original is None, "text": original}
    try:
        loc.state_dir.mkdir(exist_ok=True)
        atomic_write(loc.state_dir / ORIGINS, json.dumps(origins).encode())
    except OSError:
        pass


def _restore_or_write(loc: Location, path: Path, cleaned: dict[str, Any], local: bool) -> None:
    """Uninstall's write: the user's original bytes when what is left is what they had; no
    file when gitvault created it and nothing else is left; otherwise the cleaned settings."""
    assert loc.workdir is not None
    rel = path.relative_to(loc.workdir).as_posix()
    origins = _origins(loc)
    origin = origins.pop(rel, None)
    text = origin.get("text") if isinstance(origin, dict) else None
    created = bool(origin.get("created")) if isinstance(origin, dict) else local
    same = False
    if isinstance(text, str):
        try:
            same = json.loads(text) == cleaned
        except ValueError:
            same = False
    if same and isinstance(text, str):
        atomic_write(path, text.encode("utf-8"))
    elif not cleaned and (created or origin is None):
        path.unlink()
    else:
        _write_json(path, cleaned)
    try:
        atomic_write(loc.state_dir / ORIGINS, json.dumps(origins).encode())
    except OSError:
        pass


def install(loc: Location, *, local: bool = False) -> ClaudeReport:
    assert loc.workdir is not None
    report = ClaudeReport()
    preflight(loc.workdir, local)
    path = settings_path(loc.workdir, local)
    current = load_settings(path)
    merged = add_permission(merge_hooks(current, _wanted_hooks()), texts.SAVE_PERMISSION)
    if merged != current:
        _remember_origin(loc, path)
        _write_json(path, merged)
        report.changes.append(f"added gitvault's hooks to {path.relative_to(loc.workdir)}")
    if merged.get("permissions") != current.get("permissions"):
        report.changes.append(
            f"allowed `{texts.SAVE_PERMISSION}` in {path.relative_to(loc.workdir)} "
            "(the save the Stop hook asks for; honoured once the workspace is trusted)"
        )
    if not local:
        path_local = settings_path(loc.workdir, True)
        try:
            local_now = load_settings(path_local)
        except Refused as exc:  # the user's own file, broken: leave it, say so
            report.kept.append(f"{exc.message}; `{texts.SAVE_PERMISSION}` not added there")
            local_now = None
        local_wanted = add_permission(local_now or {}, texts.SAVE_PERMISSION)
        if local_now is not None and local_wanted != local_now:
            _remember_origin(loc, path_local)
            _write_json(path_local, local_wanted)
            report.changes.append(
                f"allowed `{texts.SAVE_PERMISSION}` in {SETTINGS_LOCAL} (machine-local, "
                "honoured at once, also in headless runs)"
            )
    report.changes += _exclude_local(loc)
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
        cleaned = remove_permission(current, texts.SAVE_PERMISSION)
        said = []
        if cleaned != current:
            said.append(f"removed `{texts.SAVE_PERMISSION}` from {path.relative_to(loc.workdir)}")
        if isinstance(hooks, dict):
            before = copy.deepcopy(cleaned)
            for event in list(hooks):
                if isinstance(hooks[event], list):
                    left = remove_ours_from(hooks[event])
                    if left:
                        cleaned["hooks"][event] = left
                    else:
                        del cleaned["hooks"][event]
            if not cleaned["hooks"]:
                del cleaned["hooks"]
            if cleaned != before:
                said.append(f"removed gitvault's hooks from {path.relative_to(loc.workdir)}")
        if cleaned != current:
            try:
                check_writable(loc.workdir, path.relative_to(loc.workdir).as_posix())
            except Refused as exc:
                report.kept.append(exc.message)
                continue
            _restore_or_write(loc, path, cleaned, local)
            report.changes += said
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


def _exclude_local(loc: Location) -> list[str]:
    """Keep settings.local.json out of git in every worktree (the common info/exclude), as
    Claude Code does with a global exclude when it writes the file itself."""
    from gitvault.vault import gitcmd

    assert loc.workdir is not None
    proc = gitcmd.run_git(["check-ignore", "-q", SETTINGS_LOCAL], loc.workdir, check=False)
    if proc.returncode == 0:
        return []
    exclude = loc.common_dir / "info" / "exclude"
    try:
        text = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        if exclude.is_symlink():
            return []
        exclude.parent.mkdir(parents=True, exist_ok=True)
        prefix = "" if not text or text.endswith("\n") else "\n"
        with exclude.open("a", encoding="utf-8") as fh:
            fh.write(f"{prefix}/{SETTINGS_LOCAL}\n")
    except OSError:
        return []
    return [f"listed {SETTINGS_LOCAL} in {exclude} (it stays local)"]


def wiring_missing(workdir: Path) -> list[str]:
    """What of the Claude Code wiring this worktree lacks (a new `git worktree add` has only the
    files the team committed)."""
    missing = []
    hooked = False
    for rel in (SETTINGS_SHARED, SETTINGS_LOCAL):
        try:
            data = load_settings(workdir / rel)
        except Refused:
            continue
        hooks = data.get("hooks")
        if isinstance(hooks, dict) and any(
            isinstance(groups, list)
            and any(
                isinstance(g, dict) and any(_is_ours(h) for h in g.get("hooks", []) or [])
                for g in groups
            )
            for groups in hooks.values()
        ):
            hooked = True
    if not hooked:
        missing.append("Claude Code hooks")
    for name in SKILLS:
        if not (workdir / ".claude" / "skills" / name / "SKILL.md").is_file():
            missing.append(f"the /{name} skill")
    return missing
