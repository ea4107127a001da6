"""The peers gitvault is measured against (`just bench-peers`): their pinned install into
.cache/peers/ (install.py), claude-mem's worker and hooks (claudemem.py), agentlore's typed
memories (agentlore.py), and the memory both are given from the repository gitvault notes
(memory.py). None of their code is in this repository: install.py fetches the pinned packages
from the npm registry and PyPI once, and every later run works offline from the cache."""
