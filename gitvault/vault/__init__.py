"""The vault branch itself: where things live on it (layout), how it is written (store: one
compare-and-swap loop), and the one door to git (gitcmd: plain git, standard library only;
objects: pygit2 named operations; fastimport: bulk writes), plus settings (config), front
matter, schemas, locks, and the launcher (which gitvault the installed git and agent hooks run).

Imports nothing else of gitvault but errors and resolve. layout and gitcmd never load pygit2,
so the hooks can use them for free.
"""
