"""agentlore as an agent calls it: the installed script (`agentlore recall TASK --budget N`), on
typed memories added with its own `agentlore add` in the repository's `.memory/` (left
uncommitted: nothing in the history gitvault notes changes)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping
from pathlib import Path

from peers.install import Peers
from peers.memory import Typed

BUDGET = 1_600  # characters: the recall budget agentlore's README and the reference runs use


def command(peers: Peers, *args: str) -> list[str]:
    return [str(peers.agentlore), *args]


def recall(peers: Peers, task: str, budget: int = BUDGET) -> list[str]:
    return command(peers, "recall", task, "--budget", str(budget))


def give(peers: Peers, repo: Path, env: Mapping[str, str], memories: list[Typed]) -> int:
    """`agentlore init`, then one `agentlore add` per memory; returns how many it indexed."""
    _run(command(peers, "init"), repo, env)
    for memory in memories:
        _run(command(peers, *memory.args()), repo, env)
    listed = _run(command(peers, "list"), repo, env)
    counted = re.search(r"^(\d+) memor(?:y|ies)$", listed, re.M)
    if counted is None:
        raise RuntimeError(f"agentlore list said no count: {listed[-300:]!r}")
    return int(counted.group(1))


def _run(argv: list[str], repo: Path, env: Mapping[str, str]) -> str:
    proc = subprocess.run(argv, cwd=repo, env=dict(env), capture_output=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(argv[1:3])} failed ({proc.returncode}): "
            f"{proc.stderr.decode('utf-8', 'replace')[-600:]}"
        )
    return proc.stdout.decode("utf-8", "replace")
