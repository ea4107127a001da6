"""What a remote sends is untrusted input: every file is checked before it can enter the tree.

A path must be one gitvault itself writes (vault.layout); a file must be a regular, UTF-8,
bounded blob whose front matter matches its schema (notes, sessions, the digest), and a note
must name the commit its path names. vault.toml is never taken from a remote (see merge.py),
but is still checked so a broken one is reported for what it is.
"""

from __future__ import annotations

from gitvault.notes.render import NOTE_MAX_BYTES
from gitvault.vault import frontmatter, layout, schemas
from gitvault.vault.config import parse_vault_toml

MAX_BYTES = 256 * 1024  # any vault file; a session is at most ~200,000 characters
REGULAR = "100644"


def problem(path: str, mode: str, data: bytes | None) -> str | None:
    """Why an incoming file may not enter the vault, or None when it may."""
    try:
        layout.check_path(path)
    except layout.BadPath:
        return "invalid path"
    if not layout.in_layout(path):
        return "path outside the vault layout"
    if mode != REGULAR:
        return f"not a regular file (mode {mode})"
    if data is None:
        return "object missing"
    if len(data) > MAX_BYTES:
        return f"too large ({len(data):,} bytes)"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8 text"
    if layout.note_sha(path) is not None:
        if len(data) > NOTE_MAX_BYTES:
            return f"note larger than {NOTE_MAX_BYTES} bytes"
        return _front_matter(path, text, "note.schema.json", "sha", layout.note_sha(path))
    if layout.session_slug(path) is not None:
        return _front_matter(path, text, "session.schema.json", None, None)
    if path == layout.DIGEST:
        return _front_matter(path, text, "digest.schema.json", None, None)
    if path == layout.CONFIG:
        try:
            parse_vault_toml(text)
        except Exception as exc:  # noqa: BLE001 - any failure to read it is the reason
            return f"invalid {layout.CONFIG}: {getattr(exc, 'message', exc)}"
    return None


def _front_matter(
    path: str, text: str, schema: str, key: str | None, expected: str | None
) -> str | None:
    meta, _ = frontmatter.parse(text)
    if not meta:
        return "no front matter"
    found = schemas.errors(schema, meta)
    if found:
        return f"front matter does not match {schema}: {found[0]}"
    if key is not None and meta.get(key) != expected:
        return f"front matter {key} does not match the path"
    return None
