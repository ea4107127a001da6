"""What the agents' hooks serve without Python, computed when the vault changes (the detached
drainer after a commit; save, fold, sync, forget, verify and backfill after they wrote) and
stored in the state folder with everything it was built from: the session start's recall block
per worktree (ready) and the edit-time blocks of the files agents were shown lately (blocks).
The launcher's sh (gitvault/vault/launcher) serves them while all of that still holds."""
