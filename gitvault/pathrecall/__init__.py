"""What the vault knows about one project path, at the moment an agent uses it.

- index: the per-path index (`paths.sqlite` in the state folder), a cache kept current from the
  vault at drain, save, fold and sync time: the commits touching each path (renames followed),
  reverts and what they reverted, fixes, co-change, the digest lines and session bullets citing
  those commits, the sessions that made them. Rebuilt whenever it is missing, corrupt, of
  another format or behind a rewritten vault. Other floors read it through its query API
  (PathIndex.facts, co_changed, hot_spots, pairs).
- known: the list of paths the index knows (`recall-paths`): "nothing known" without SQLite.
- gate: which path a hook's file is (inside the worktree, no `..`, no link out of the tree, not
  in .git, not ignored by git).
- block: the edit-time block (≤ 3,200 characters, fenced like recall, redacted on the way out).

May import gitvault.vault, scrub, notes and memory; fold, sync, agents and the commands use it.
"""
