"""gitvault's MCP server (`gitvault mcp`) in an agent's project-level MCP configuration: one
entry named "gitvault", merged beside the user's own servers, removed by uninstall. Imported by
install, uninstall and status only.

Two shapes: a JSON object's "mcpServers" table (Claude Code's and Copilot's .mcp.json, which
both read, Gemini's .gemini/settings.json) and a TOML table `[mcp_servers.gitvault]` (Codex's
.codex/config.toml, edited with tomlkit so the user's comments and order are kept). The
command is the bare `gitvault` of PATH, as in every shared file: no machine-specific path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitvault.agents.adapters import settings
from gitvault.errors import Refused

SERVER = "gitvault"
ENTRY: dict[str, Any] = {"command": "gitvault", "args": ["mcp"]}


def _entry(extra: dict[str, Any] | None) -> dict[str, Any]:
    return {**ENTRY, **(extra or {})}


# -- JSON ------------------------------------------------------------------------------------


def json_merged(data: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    table = data.get("mcpServers")
    if table is not None and not isinstance(table, dict):
        raise Refused('"mcpServers" is not an object: gitvault will not rewrite it')
    return {**data, "mcpServers": {**(table or {}), SERVER: _entry(extra)}}


def json_cleaned(data: dict[str, Any]) -> dict[str, Any]:
    table = data.get("mcpServers")
    if not isinstance(table, dict) or not _is_ours(table.get(SERVER)):
        return data
    rest = {k: v for k, v in table.items() if k != SERVER}
    out = {k: v for k, v in data.items() if k != "mcpServers"}
    return {**out, "mcpServers": rest} if rest else out


def json_has(data: dict[str, Any]) -> bool:
    table = data.get("mcpServers")
    return isinstance(table, dict) and _is_ours(table.get(SERVER))


def _is_ours(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and entry.get("args") == ENTRY["args"]
        and (str(entry.get("command", "")).endswith("gitvault"))
    )


def install_json(
    workdir: Path, rel: str, opt_out: str, extra: dict[str, Any] | None = None
) -> bool:
    """Add the entry to the JSON file `rel`; True when the file changed."""
    settings.check_writable(workdir, rel, opt_out)
    path = workdir / rel
    current = settings.load(path, opt_out)
    merged = json_merged(current, extra)
    if merged == current:
        return False
    settings.write(path, merged)
    return True


def uninstall_json(workdir: Path, rel: str, opt_out: str) -> bool:
    path = workdir / rel
    if not path.exists():
        return False
    settings.check_writable(workdir, rel, opt_out)
    current = settings.load(path, opt_out)
    cleaned = json_cleaned(current)
    if cleaned == current:
        return False
    if cleaned:
        settings.write(path, cleaned)
    else:
        path.unlink()
    return True


def has_json(workdir: Path, rel: str) -> bool:
    data = settings.read_lenient(workdir / rel)
    return isinstance(data, dict) and json_has(data)


# -- TOML (Codex) ----------------------------------------------------------------------------


def _toml(path: Path) -> Any:
    import tomlkit

    from gitvault.vault import files

    try:
        raw = files.read_regular(path)
    except FileNotFoundError:
        return tomlkit.document()
    except (files.NotRegular, OSError) as exc:
        raise Refused(f"{path} cannot be read: gitvault will not rewrite it") from exc
    try:
        return tomlkit.parse(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise Refused(f"{path} is not valid TOML: gitvault will not rewrite it") from exc


def install_toml(workdir: Path, rel: str, opt_out: str) -> bool:
    import tomlkit

    from gitvault.vault import files

    settings.check_writable(workdir, rel, opt_out)
    path = workdir / rel
    doc = _toml(path)
    servers = doc.get("mcp_servers")
    if servers is not None and not isinstance(servers, dict):
        raise Refused(f"{path}: mcp_servers is not a table: gitvault will not rewrite it")
    if servers is not None and _is_ours(dict(servers.get(SERVER) or {})):
        return False
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    entry = tomlkit.table()
    entry["command"] = ENTRY["command"]
    entry["args"] = list(ENTRY["args"])
    servers[SERVER] = entry
    files.make_dirs(path.parent)
    files.atomic_write(path, tomlkit.dumps(doc).encode("utf-8"))
    return True


def uninstall_toml(workdir: Path, rel: str, opt_out: str) -> bool:
    import tomlkit

    from gitvault.vault import files

    path = workdir / rel
    if not path.exists():
        return False
    settings.check_writable(workdir, rel, opt_out)
    doc = _toml(path)
    servers = doc.get("mcp_servers")
    if not isinstance(servers, dict) or not _is_ours(dict(servers.get(SERVER) or {})):
        return False
    del servers[SERVER]
    if not servers:
        del doc["mcp_servers"]
    # The blank line tomlkit kept before the removed table goes with it.
    text = tomlkit.dumps(doc).rstrip("\n") + "\n"
    if text.strip():
        files.atomic_write(path, text.encode("utf-8"))
    else:
        path.unlink()
    return True


def has_toml(workdir: Path, rel: str) -> bool:
    try:
        servers = _toml(workdir / rel).get("mcp_servers")
    except Refused:
        return False
    return isinstance(servers, dict) and _is_ours(dict(servers.get(SERVER) or {}))
