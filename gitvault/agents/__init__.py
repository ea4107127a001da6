"""The coding agents: their hook events (hooks, hookinput), when to ask for a save and the
mechanical records (capture), transcripts, settings and skills (claude), the managed section of
their instruction files (agentfiles, on top of the byte-preserving sentinel patcher), and the
texts shown to them.

May import everything below it (vault, notes, memory, fold); the CLI and the product-wide
operations (install, status, demo) sit on top.
"""
