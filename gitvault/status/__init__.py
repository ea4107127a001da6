"""`gitvault status` and `gitvault stats`, product-wide: the full report of what is installed
and what waits (report), the one-line status for prompts and Claude Code's statusLine (line:
fast, answered before typer loads), and the memory's size and cost (stats).

May import every floor below it (vault, scrub, notes, memory, fold, sync, agents); nothing but
the CLI imports it.
"""
