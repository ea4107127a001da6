"""Team memory: the vault travels through the project's own git remotes (`gitvault sync`).

fetch the remote's vault into a tracking ref (never into the branch) → validate everything
incoming (remote content is untrusted) → merge by the vault's rules (append-only items are a
union, same path with different content keeps both or the local one, the digest and
vault.toml stay local) → push without force, refetching and retrying with jitter when the
remote moved. Also: adopting a remote's vault at install, the state `status` shows, and the
CI-configuration check for hosted remotes.

May import vault, notes and memory; nothing above it (fold, agents, commands) and never
typer/rich.
"""
