"""The coding agents: the one hook runtime (runtime) and the one set of behaviours it runs
(behaviours), when to ask for a save and the mechanical records (capture) beside the per-session
state they read (ledger), the one hook-input validator (hookinput), the managed section of the
agents' instruction files (agentfiles, on top of the byte-preserving sentinel patcher), and the
texts shown to agents. Everything that differs between agents is in adapters/ (one module per
agent, a registry, the shared settings merger); nothing else here names an agent.

May import everything below it (vault, notes, memory, fold); the CLI and the product-wide
operations (install, status, demo) sit on top.
"""
