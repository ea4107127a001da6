"""Commit → note: the git hook shims (shims), the spool drainer (drain), note rendering
(render) from git's commit data (commits), backfill of old history, and the index of which
commits have a note.

May import gitvault.vault and gitvault.scrub (the secret filter); nothing above them.
"""
