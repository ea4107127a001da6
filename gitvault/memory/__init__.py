"""Session text in, recall block out: save (cleaning, the secret filter, the recall fences),
which commits a session made (attribution), the recall block SessionStart injects, and the
history a person reads (log, show).

May import gitvault.vault and gitvault.scrub; not notes, fold or agents.
"""
