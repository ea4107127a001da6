"""Run one agent hook in this process under a profiler and say where it went: the gitvault
modules whose code ran (rooms), the calls from a lower floor of the package up into a higher
one (climbs), the floors control passed through call by call and return by return (path), how
often the repository was resolved and the session's ledger loaded and stored, and the modules
imported. Used by tests/agents/test_boundaries.py as

    python tests/support/agent_walk.py AGENT EVENT [--walk] < payload      (prints one JSON object)

Without --walk only the imports are reported (no profiler: the hook runs at full speed, within
its time bound).

Floors, lowest first: the ground (vault/, resolve, errors, resources), notes/ and memory/,
pathrecall/, fold/ and sync/, agents/, and the top (hook.py, the CLI, install, status).
"""

from __future__ import annotations

import json
import sys
from types import FrameType
from typing import Any

FLOORS = {
    "vault": 0,
    "resolve": 0,
    "errors": 0,
    "resources": 0,
    "named": 0,
    "lazyre": 0,
    "scrub": 0,
    "notes": 1,
    "memory": 1,
    "pathrecall": 2,
    "fold": 3,
    "sync": 3,
    "agents": 4,
}
TOP = 5


def floor(module: str) -> int:
    parts = module.split(".")
    if parts[0] != "gitvault" or len(parts) < 2:
        return TOP
    return FLOORS.get(parts[1], TOP)


def main(agent: str, event: str, walk: bool) -> dict[str, Any]:
    rooms: list[str] = []
    climbs: list[str] = []
    counts = {"resolve": 0, "ledger_load": 0, "ledger_store": 0}

    path: list[str] = []  # where control is, call by call and return by return

    def profile(frame: FrameType, kind: str, _arg: object) -> None:
        if kind not in ("call", "return"):
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("gitvault") or frame.f_code.co_name == "<module>":
            return
        if kind == "return":
            back = frame.f_back
            while back is not None and not back.f_globals.get("__name__", "").startswith(
                "gitvault"
            ):
                back = back.f_back
            here = back.f_globals.get("__name__", "") if back is not None else ""
            if here and (not path or path[-1] != here):
                path.append(here)
            return
        if not path or path[-1] != module:
            path.append(module)
        if module not in rooms:
            rooms.append(module)
        name = frame.f_code.co_name
        if module == "gitvault.resolve" and name == "resolve":
            counts["resolve"] += 1
        elif module.endswith(".ledger") and name in ("load", "store"):
            counts[f"ledger_{name}"] += 1
        caller = frame.f_back
        while caller is not None and not caller.f_globals.get("__name__", "").startswith(
            "gitvault"
        ):
            caller = caller.f_back
        if caller is not None:
            above = caller.f_globals.get("__name__", "")
            if floor(module) > floor(above):
                climbs.append(f"{above}.{caller.f_code.co_name} -> {module}.{name}")

    from gitvault import hook

    before = set(sys.modules)
    if walk:
        sys.setprofile(profile)
    try:
        code = hook.main([agent, event])
    finally:
        sys.setprofile(None)
    return {
        "code": code,
        "rooms": rooms,
        "climbs": climbs,
        "floor_path": [floor(m) for m in path],
        "path": path,
        **counts,
        "imported": sorted(set(sys.modules) - before),
        "modules": sorted(sys.modules),
    }


if __name__ == "__main__":
    import io

    real_stdout = sys.stdout
    sys.stdout = io.StringIO()  # the hook's answer
    report = main(sys.argv[1], sys.argv[2], "--walk" in sys.argv[3:])
    report["stdout"] = sys.stdout.getvalue()
    sys.stdout = real_stdout
    print(json.dumps(report))
