"""The secret filter: every secret in a text is replaced by ``[REDACTED:<kind>]`` before the
text is written to the vault, a state file or the search index, and again on text that leaves
the vault. Below notes/ and memory/, which both use it; of gitvault it imports only named and
lazyre (its patterns compile at first use).

Only the secret value is replaced: a variable name, URL scheme, user name, header name or
command around it is kept. The rules are hand-written regular expressions, chosen by
measurement over the maintained detectors on PyPI (bench/secrets/, BENCHMARKS.md "Secret
redaction"): they catch what those detectors catch without their generic entropy heuristics,
whose false positives (commit SHAs, lockfile hashes) make them unusable on commit text. The two
rules that read randomness (random_token, password_shaped) each ask for more than entropy and
were measured on real commit text, paths, man pages and code before they were taken.

rules: the specification and the rule table; engine: scrub_secrets and secret_spans. Every
rule's literals are found in one pass over a text (ahocorasick_rs, imported only once a process
has scrubbed enough text to pay for it; see engine._BY_FIND), and only the rules one of whose
literals occurs are tried.

Named "scrub", not "redact": `gitvault redact` is the explicit rewrite of the vault's history
(memory/forget), which this filter knows nothing about.
"""

from __future__ import annotations

import functools
from pathlib import Path


@functools.cache
def generation() -> str:
    """A short name for this version of the filter: a hash of its rules and engine, so that
    any change to what it catches is a new generation. Vault commits carry it (their
    committer's name, vault/gitcmd.vault_committer_name): a reader may take text for
    redacted by this filter only when written under this generation. Reads two files; compiles
    nothing."""
    import hashlib  # here: OpenSSL's load costs a hook that never asks ~3 ms

    digest = hashlib.sha256()
    for name in ("rules.py", "engine.py"):
        digest.update((Path(__file__).with_name(name)).read_bytes())
    return digest.hexdigest()[:12]
