"""The real-history harness (`just bench-real`): real public histories replayed through
gitvault's own commands (install, backfill, fold, search, verify), scored by checks computed
from git itself, next to the baseline a user would otherwise use (`git log -i --grep`).

Self-contained on purpose: it drives gitvault only as a user does (subprocesses of the
`gitvault` command), so a refactor of the package cannot break the judge, and nothing it
scores is taken from gitvault's own output. The one import from the package is
`gitvault.vault.layout`, for the vault's path names.

- sandbox:   isolated git identity and environment, git and measured child processes
- history:   one history read once from git (commits, files, tags, reverts, patch-ids)
- truth:     the digest's lines checked against that history
- queries:   known-item queries drawn from the history (seeded); the question sets
- searcheval: `gitvault search` and the `git log --grep` baseline, hit@3 and MRR
- replay:    the whole replay of one history, with its costs
- report:    the table, the markdown rows and the JSON results
- run:       the command line (`python -m bench.real`)
"""
