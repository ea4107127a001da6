"""The digest rewrite (REWRITE): what is new since the watermark (items), the digest format
and its caps (digest), the prompt a model merger reads, the mergers behind one interface
(claude, command, builtin), the fold lease and the background fold.

May import gitvault.vault, scrub, notes and memory; not agents.
"""
