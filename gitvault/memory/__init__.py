"""Session text in, recall block out: save (cleaning, redaction, the recall fences), the
per-session ledger, the recall block SessionStart injects, and the history a person reads
(log, show).

May import gitvault.vault; not notes, fold or agents.
"""
