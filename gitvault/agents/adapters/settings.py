"""An agent's JSON settings file as gitvault reads and rewrites it, for every adapter: the one
loader (strict JSON through vault/files.py, refusing what gitvault could only rewrite by losing
what is there), the one writer, and the one merger of gitvault's hook entries.

Merges are additive: every other key and every foreign hook is kept in place, a second install
changes nothing, cleaning removes only gitvault's entries (an event left empty goes, and the
"hooks" table when nothing is left in it). Two table layouts exist among the agents: grouped
({"hooks": {Event: [{"matcher"?, "hooks": [handler, …]}]}}) and listed ({"hooks": {event:
[handler, …]}}); a handler is gitvault's when its command names one of the adapter's markers.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from gitvault.errors import Refused
from gitvault.vault import files

Handler = Callable[[Any], dict[str, Any]]  # a Hook → the handler entry gitvault writes for it
Markers = tuple[str, ...]


def check_writable(workdir: Path, rel: str, opt_out: str) -> None:
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
                hint=f"replace the link with a real directory or file, or {opt_out}",
            )
        if not current.exists():
            break
        last = index == len(parts) - 1
        if (last and not current.is_file()) or (not last and not current.is_dir()):
            raise Refused(
                f"{current} is not a regular {'file' if last else 'directory'}",
                hint=f"move it away, or {opt_out}",
            )
    try:
        (workdir / rel).resolve().relative_to(root)
    except ValueError as exc:
        raise Refused(f"{workdir / rel} resolves outside the worktree") from exc


def load(path: Path, opt_out: str) -> dict[str, Any]:
    """A settings file as a JSON object ({} when missing or empty), its "hooks" an object of
    lists; refuses (exit 3) a file that is not a regular file, not UTF-8, not strict JSON (NaN
    and Infinity are refused, not rewritten) or not shaped so."""
    hint = f"fix the file, or {opt_out}"
    keep = ": gitvault will not rewrite it"
    try:
        raw = files.read_regular(path)
    except FileNotFoundError:
        return {}
    except files.NotRegular as exc:
        raise Refused(f"{path} is not a regular file{keep}", hint=hint) from exc
    except OSError as exc:
        raise Refused(f"{path} cannot be read ({exc.strerror or exc}){keep}", hint=hint) from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(f"{path} cannot be read as UTF-8 text{keep}", hint=hint) from exc
    if not text.strip():
        return {}
    try:
        data = files.parse_json(text)
    except json.JSONDecodeError as exc:
        raise Refused(f"{path} is not valid JSON (line {exc.lineno}){keep}", hint=hint) from exc
    except ValueError as exc:
        raise Refused(f"{path} is not strict JSON ({exc}){keep}", hint=hint) from exc
    if not isinstance(data, dict):
        raise Refused(f"{path} is not a JSON object{keep}", hint=hint)
    # The shape the merge needs, checked here so that install's preflight refuses before
    # anything (the vault branch, the git hooks) is written.
    table = data.get("hooks", {})
    if not isinstance(table, dict):
        raise Refused(f'{path}: "hooks" is not an object{keep}', hint=hint)
    for event, entries in table.items():
        if not isinstance(entries, list):
            raise Refused(f"{path}: hooks.{event} is not a list{keep}", hint=hint)
    return data


LENIENT_LIMIT = 64 * 1024 * 1024  # ~/.claude.json keeps per-project history: it grows


def read_lenient(path: Path) -> Any:
    """A JSON file gitvault only reads (an agent's own configuration, for trust; its own
    remembered origins): its value, or None when it is missing, unreadable, not a regular file
    or not strict JSON. A link is followed: a dotfile manager may have put one there, and
    nothing is written through it."""
    import os

    try:
        return files.read_json(os.path.realpath(path), LENIENT_LIMIT)
    except (OSError, ValueError):
        return None


def write(path: Path, data: dict[str, Any]) -> None:
    files.make_dirs(path.parent)
    files.write_json(path, data, indent=2)


def is_ours(handler: Any, markers: Markers, key: str = "command") -> bool:
    return isinstance(handler, dict) and any(m in str(handler.get(key, "")) for m in markers)


# -- the grouped layout ---------------------------------------------------------------------


def merge_grouped(
    settings: dict[str, Any], hooks: Iterable[Any], handler: Handler, markers: Markers
) -> dict[str, Any]:
    """gitvault's group per hook (several hooks of one event: a group each, told apart by their
    matchers), replacing gitvault's groups of that event when they differ (so a second
    install changes nothing and keeps the groups' position)."""
    out = copy.deepcopy(settings)
    table = out.setdefault("hooks", {})
    wanted: dict[str, list[dict[str, Any]]] = {}
    for hook in hooks:
        group: dict[str, Any] = {"hooks": [handler(hook)]}
        if hook.matcher is not None:
            group = {"matcher": hook.matcher, **group}
        wanted.setdefault(hook.native, []).append(group)
    for native, groups in wanted.items():
        existing = table.get(native, [])
        if [g for g in existing if _group_is_ours(g, markers)] == groups:
            continue
        table[native] = drop_grouped(existing, markers) + groups
    return out


def drop_grouped(groups: list[Any], markers: Markers) -> list[Any]:
    """One event's groups without gitvault's handlers (a group left empty goes; a group whose
    "hooks" is not a list is someone else's, kept as it is)."""
    kept = []
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            kept.append(group)
            continue
        handlers = [h for h in group["hooks"] if not is_ours(h, markers)]
        if handlers:
            kept.append({**group, "hooks": handlers})
        elif not any(is_ours(h, markers) for h in group["hooks"]):
            kept.append(group)
    return kept


def grouped_events(settings: dict[str, Any], hooks: Iterable[Any], markers: Markers) -> list[str]:
    """The canonical events whose hook has a gitvault group in these settings."""
    table = settings.get("hooks")
    if not isinstance(table, dict):
        return []
    hooks = list(hooks)
    out = []
    for h in hooks:
        ours = [g for g in table.get(h.native, []) or [] if _group_is_ours(g, markers)]
        shared = sum(1 for x in hooks if x.native == h.native) > 1
        if any(not shared or g.get("matcher") == h.matcher for g in ours):
            out.append(h.event)
    return out


def _group_is_ours(group: Any, markers: Markers) -> bool:
    return isinstance(group, dict) and any(
        is_ours(h, markers) for h in group.get("hooks", []) or [] if isinstance(h, dict)
    )


# -- the listed layout ----------------------------------------------------------------------


def merge_listed(
    settings: dict[str, Any], hooks: Iterable[Any], handler: Handler, markers: Markers, key: str
) -> dict[str, Any]:
    """gitvault's handler per hook in a plain list per event (its command under `key`)."""
    out = copy.deepcopy(settings)
    table = out.setdefault("hooks", {})
    wanted: dict[str, list[dict[str, Any]]] = {}
    for hook in hooks:
        wanted.setdefault(hook.native, []).append(handler(hook))
    for native, handlers in wanted.items():
        existing = table.get(native, [])
        if [h for h in existing if is_ours(h, markers, key)] == handlers:
            continue
        table[native] = [h for h in existing if not is_ours(h, markers, key)] + handlers
    return out


def listed_events(
    settings: dict[str, Any], hooks: Iterable[Any], markers: Markers, key: str
) -> list[str]:
    table = settings.get("hooks")
    if not isinstance(table, dict):
        return []
    hooks = list(hooks)
    out = []
    for h in hooks:
        ours = [x for x in table.get(h.native, []) or [] if is_ours(x, markers, key)]
        shared = sum(1 for x in hooks if x.native == h.native) > 1
        if any(not shared or x.get("matcher") == h.matcher for x in ours):
            out.append(h.event)
    return out


# -- cleaning -------------------------------------------------------------------------------


def clean_table(settings: dict[str, Any], drop: Callable[[list[Any]], list[Any]]) -> dict[str, Any]:
    """settings without gitvault's entries: `drop` keeps the rest of one event's list; an
    event left empty goes, and the "hooks" table when nothing is left in it."""
    out = copy.deepcopy(settings)
    table = out.get("hooks")
    if not isinstance(table, dict):
        return out
    for event in list(table):
        if isinstance(table[event], list):
            left = drop(table[event])
            if left:
                table[event] = left
            else:
                del table[event]
    if not table:
        del out["hooks"]
    return out
