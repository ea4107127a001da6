"""The measurements: one module per thing measured, each declaring its sections (MEASURES, see
bench/registry.py). run.py finds them by listing this folder; nothing here lists them.

Each measure builds its own scratch repositories in the sandbox, drives gitvault through its
real paths (installed shims, hooks as the agents run them, the drainer, Vault.commit, backfill)
and returns rows. gitvault and pygit2 are imported inside the functions, after run.py has
isolated the environment (gitvault.vault.layout, standard library only, may be imported at the
top). Vault names and paths come from gitvault (layout, resolve, the store), never spelled here.
"""
