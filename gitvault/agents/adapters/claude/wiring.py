"""Wire Claude Code into a worktree: its hook entries merged into .claude/settings.json (the
shared settings merger), a narrow save permission, the /save, /recall and /checkpoint skills,
and the status line when the user has none (the CLAUDE.md managed section is
gitvault.agents.agentfiles).

Besides the hooks, install adds one permission rule, `Bash(gitvault save:*)`, so the save a
Stop hook asks for is not denied: to .claude/settings.local.json (honoured at once,
machine-local, kept out of git through .git/info/exclude) and to .claude/settings.json
(honoured once the workspace is trusted, so a team that commits .claude/ shares it). Nothing
written here names a machine-specific path.

gitvault writes only regular files inside the worktree: a symlinked .claude/, skills folder or
settings file is refused (exit 3), nothing written. Files gitvault owns (the skills) are
recorded with a hash in a stamp file; a later install upgrades only files still equal to what
it installed and reports the ones a user edited, never overwriting them. Uninstall gives a
settings file back byte for byte when what is left is what the user had.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitvault.agents import texts
from gitvault.agents.adapters import settings
from gitvault.agents.adapters.base import AdapterReport
from gitvault.agents.adapters.claude.names import AGENT, SETTINGS_LOCAL
from gitvault.errors import Refused
from gitvault.resolve import Location
from gitvault.resources import hook_template
from gitvault.vault import statedir
from gitvault.vault.files import atomic_write, make_dirs, write_json

if TYPE_CHECKING:
    from gitvault.agents.adapters.claude import Claude

SKILLS = ("save", "recall", "checkpoint")
STAMP = statedir.agent_file("claude", "stamp")  # the hash of each skill as gitvault installed it
# What each settings file was before gitvault wrote it.
ORIGINS = statedir.agent_file("claude", "settings-origin")
# The placeholder Claude Code substitutes with the session id in a skill.
SESSION_PLACEHOLDER = "${CLAUDE_SESSION_ID}"


def _settings_rel(adapter: Claude, local: bool) -> str:
    return SETTINGS_LOCAL if local else adapter.settings_file


def _skill_rel(name: str) -> str:
    return f".claude/skills/{name}/SKILL.md"


def targets(adapter: Claude, local: bool) -> list[str]:
    """Every file below the worktree install may write."""
    names = [SETTINGS_LOCAL] if local else [adapter.settings_file, SETTINGS_LOCAL]
    return names + [_skill_rel(name) for name in SKILLS]


def preflight(adapter: Claude, workdir: Path, local: bool) -> None:
    """Everything about the Claude Code files that could refuse, before anything is written."""
    for rel in targets(adapter, local):
        settings.check_writable(workdir, rel, adapter.opt_out)
    adapter.load(workdir, _settings_rel(adapter, local))


def add_permission(current: dict[str, Any], *rules: str) -> dict[str, Any]:
    out = copy.deepcopy(current)
    allow = out.setdefault("permissions", {}).setdefault("allow", [])
    for rule in rules:
        if rule not in allow:
            allow.append(rule)
    return out


def remove_permission(current: dict[str, Any], *rules: str) -> dict[str, Any]:
    out = copy.deepcopy(current)
    permissions = out.get("permissions")
    if not isinstance(permissions, dict) or not isinstance(permissions.get("allow"), list):
        return out
    permissions["allow"] = [r for r in permissions["allow"] if r not in rules]
    if not permissions["allow"]:
        del permissions["allow"]
    if not permissions:
        del out["permissions"]
    return out


RULES = (texts.SAVE_PERMISSION, *texts.MCP_PERMISSIONS)


def _said(before: dict[str, Any], after: dict[str, Any], rel: str, why: str) -> list[str]:
    """What adding the rules to `rel` changed, one line for the save, one for the MCP tools."""
    had = set(_allowed(before))
    now = set(_allowed(after))
    out = []
    if texts.SAVE_PERMISSION in now - had:
        out.append(f"allowed `{texts.SAVE_PERMISSION}` in {rel} {why}")
    added = [r for r in texts.MCP_PERMISSIONS if r in now - had]
    if added:
        out.append(
            f"allowed gitvault's {len(added)} MCP tools ({', '.join(f'`{r}`' for r in added)})"
            f" in {rel}"
        )
    return out


def _allowed(data: dict[str, Any]) -> list[str]:
    permissions = data.get("permissions")
    allow = permissions.get("allow") if isinstance(permissions, dict) else None
    return [r for r in allow if isinstance(r, str)] if isinstance(allow, list) else []


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def skill_text(name: str) -> bytes:
    """A skill as shipped: plain `gitvault`, never this machine's interpreter (the SessionStart
    hook puts gitvault on the session's PATH when it is not there already)."""
    text = hook_template("claude", f"skills/{name}/SKILL.md").read_text(encoding="utf-8")
    cli = "gitvault"
    save = texts.save_command(
        cmd=cli,
        agent=AGENT,
        title="<title: $ARGUMENTS>",
        session_expr=SESSION_PLACEHOLDER,
    )
    handover = texts.checkpoint_instruction(
        texts.checkpoint_command(
            cmd=cli, agent=AGENT, title="<title: $ARGUMENTS>", session_expr=SESSION_PLACEHOLDER
        )
    )
    return (
        text.replace("@SAVE_COMMAND@", save)
        .replace("@CHECKPOINT_INSTRUCTION@", handover)
        .replace("@GITVAULT@", cli)
        .encode()
    )


def _stamp_path(loc: Location) -> Path:
    return loc.state_dir / STAMP


def _load_stamp(loc: Location) -> dict[str, str]:
    data = settings.read_lenient(_stamp_path(loc))
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _skills(workdir: Path) -> Iterator[tuple[str, str, Path, bytes | None]]:
    """(name, relative path, path, current bytes or None) of each skill gitvault installs."""
    for name in SKILLS:
        rel = _skill_rel(name)
        target = workdir / rel
        try:
            have: bytes | None = target.read_bytes()
        except FileNotFoundError:
            have = None
        yield name, rel, target, have


def missing_skills(workdir: Path) -> list[str]:
    return [f"the /{name} skill" for name in SKILLS if not (workdir / _skill_rel(name)).is_file()]


def _origins(loc: Location) -> dict[str, Any]:
    data = settings.read_lenient(loc.state_dir / ORIGINS)
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
        make_dirs(loc.state_dir)
        write_json(loc.state_dir / ORIGINS, origins)
    except OSError:
        pass


def _restore_or_write(loc: Location, path: Path, cleaned: dict[str, Any], local: bool) -> None:
    """Uninstall's write: the user's original bytes when what is left is what they had; no
    file when gitvault created it and nothing else is left; otherwise the cleaned settings."""
    from gitvault.vault.files import parse_json

    assert loc.workdir is not None
    rel = path.relative_to(loc.workdir).as_posix()
    origins = _origins(loc)
    origin = origins.pop(rel, None)
    text = origin.get("text") if isinstance(origin, dict) else None
    created = bool(origin.get("created")) if isinstance(origin, dict) else local
    same = False
    if isinstance(text, str):
        try:
            same = parse_json(text) == cleaned
        except ValueError:
            same = False
    if same and isinstance(text, str):
        atomic_write(path, text.encode("utf-8"))
    elif not cleaned and (created or origin is None):
        path.unlink()
    else:
        settings.write(path, cleaned)
    try:
        write_json(loc.state_dir / ORIGINS, origins)
    except OSError:
        pass


def install(adapter: Claude, loc: Location, *, local: bool = False) -> AdapterReport:
    assert loc.workdir is not None
    report = AdapterReport()
    preflight(adapter, loc.workdir, local)
    rel = _settings_rel(adapter, local)
    path = loc.workdir / rel
    current = adapter.load(loc.workdir, rel)
    merged = add_permission(adapter.merged(current), *RULES)
    if merged != current:
        _remember_origin(loc, path)
        settings.write(path, merged)
        report.changes.append(f"added gitvault's hooks to {rel}")
    report.changes += _said(
        current,
        merged,
        rel,
        "(the save the Stop hook asks for; honoured once the workspace is trusted)",
    )
    if not local:
        path_local = loc.workdir / SETTINGS_LOCAL
        try:
            local_now: dict[str, Any] | None = adapter.load(loc.workdir, SETTINGS_LOCAL)
        except Refused as exc:  # the user's own file, broken: leave it, say so
            report.notes.append(f"{exc.message}; `{texts.SAVE_PERMISSION}` not added there")
            local_now = None
        if local_now is not None:
            local_wanted = add_permission(local_now, *RULES)
            if local_wanted != local_now:
                _remember_origin(loc, path_local)
                settings.write(path_local, local_wanted)
                report.changes += _said(
                    local_now,
                    local_wanted,
                    SETTINGS_LOCAL,
                    "(machine-local, honoured at once, also in headless runs)",
                )
    report.changes += _exclude_local(loc)
    _wire_status_line(adapter, loc, report)
    stamp = _load_stamp(loc)
    for name, skill_rel, target, have in _skills(loc.workdir):
        wanted = skill_text(name)
        if have == wanted:
            stamp[skill_rel] = _sha(wanted)
            continue
        if have is not None and stamp.get(skill_rel) != _sha(have):
            report.notes.append(
                f"{skill_rel} was edited; left as it is (delete it to get the new one)"
            )
            continue
        make_dirs(target.parent)
        atomic_write(target, wanted)
        stamp[skill_rel] = _sha(wanted)
        report.changes.append(
            f"{'updated' if have is not None else 'wrote'} skill /{name} ({skill_rel})"
        )
    write_json(_stamp_path(loc), dict(sorted(stamp.items())), indent=2)
    return report


def uninstall(adapter: Claude, loc: Location) -> AdapterReport:
    report = AdapterReport()
    if loc.workdir is None:
        return report
    for local in (False, True):
        rel = _settings_rel(adapter, local)
        path = loc.workdir / rel
        if not path.exists():
            continue
        try:
            current = adapter.load(loc.workdir, rel)
        except Refused as exc:
            report.notes.append(exc.message)
            continue
        without_rule = remove_permission(current, *RULES)
        said = []
        if texts.SAVE_PERMISSION in set(_allowed(current)) - set(_allowed(without_rule)):
            said.append(f"removed `{texts.SAVE_PERMISSION}` from {rel}")
        if is_ours(without_rule.get(STATUS_LINE)):
            without_rule = {k: v for k, v in without_rule.items() if k != STATUS_LINE}
            said.append(f"removed gitvault's status line from {rel}")
        if any(r in _allowed(current) for r in texts.MCP_PERMISSIONS):
            said.append(f"removed gitvault's MCP tool permissions from {rel}")
        cleaned = adapter.cleaned(without_rule)
        if cleaned != without_rule:
            said.append(f"removed gitvault's hooks from {rel}")
        if cleaned != current:
            try:
                settings.check_writable(loc.workdir, rel, adapter.opt_out)
            except Refused as exc:
                report.notes.append(exc.message)
                continue
            _restore_or_write(loc, path, cleaned, local)
            report.changes += said
    stamp = _load_stamp(loc)
    for name, skill_rel, target, have in _skills(loc.workdir):
        if have is None:
            continue
        if stamp.get(skill_rel) == _sha(have) or have == skill_text(name):
            target.unlink()
            for folder in (target.parent, target.parent.parent):
                try:
                    folder.rmdir()
                except OSError:
                    break
            report.changes.append(f"removed skill /{name}")
        else:
            report.notes.append(f"{skill_rel} was edited; left in place")
    _stamp_path(loc).unlink(missing_ok=True)
    return report


STATUS_LINE = "statusLine"
STATUS_ARGS = "status --line"  # what the launcher runs (gitvault.hook answers it)


def status_line_setting() -> dict[str, Any]:
    """The statusLine entry: `gitvault status --line` through the repository's launcher (the
    hooks' stable entry), never a machine-specific path."""
    from gitvault.agents.adapters.claude.names import PROJECT_VAR
    from gitvault.vault import launcher

    return {
        "type": "command",
        "command": launcher.shell_command(STATUS_ARGS, PROJECT_VAR),
        "padding": 0,
    }


def is_ours(entry: object) -> bool:
    command = entry.get("command") if isinstance(entry, dict) else None
    return isinstance(command, str) and f"{launcher_entry()} {STATUS_ARGS}" in command


def launcher_entry() -> str:
    from gitvault.vault.launcher import ENTRY

    return ENTRY


def _user_settings() -> Path:
    return Path.home() / ".claude" / "settings.json"


def _wire_status_line(adapter: Claude, loc: Location, report: AdapterReport) -> None:
    """Claude Code's status line shows `gitvault status --line` (CHECKPOINT near a full
    context) when the user has none anywhere: in settings.local.json, because project settings
    win over the user's own and a shared file would replace every teammate's status line.
    A status line the user has (user, project or local settings) is never replaced."""
    assert loc.workdir is not None
    where: list[tuple[str, dict[str, Any] | None]] = []
    for rel in (adapter.settings_file, SETTINGS_LOCAL):
        try:
            where.append((rel, adapter.load(loc.workdir, rel)))
        except Refused:
            where.append((rel, None))
    user = settings.read_lenient(_user_settings())
    where.append(("~/.claude/settings.json", user if isinstance(user, dict) else None))
    for rel, data in where:
        entry = (data or {}).get(STATUS_LINE)
        if entry is None:
            continue
        if is_ours(entry):
            return
        report.notes.append(
            f"left your status line ({rel}) as it is; to see CHECKPOINT when the context is "
            "nearly full, have it run `gitvault status --line` (it reads the same JSON on stdin)"
        )
        return
    local = where[1][1]
    if local is None:
        return
    _remember_origin(loc, loc.workdir / SETTINGS_LOCAL)
    settings.write(loc.workdir / SETTINGS_LOCAL, {**local, STATUS_LINE: status_line_setting()})
    report.changes.append(
        f"set Claude Code's status line in {SETTINGS_LOCAL} to `gitvault status --line` "
        "(says CHECKPOINT at 85% of the context window; machine-local, you had none)"
    )


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
