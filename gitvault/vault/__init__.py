"""The ground floor: the vault branch itself — where things live on it (layout), how it is
written (store: one compare-and-swap loop), git (gitcmd: plain git, standard library only, the
one place git starts; objects: pygit2 named operations; fastimport: bulk writes), settings
(config), front matter, schemas, locks — and what sits beside it: the local state folder
(statedir: every file in <common git dir>/gitvault/), files on disk (files: the one atomic
writer and bounded reader), times, the one door to child processes (processes), and the
launcher (which gitvault the installed git and agent hooks run).

Imports nothing else of gitvault but errors and resolve. layout, statedir and gitcmd never load
pygit2, so the hooks can use them for free.
"""
