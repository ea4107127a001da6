"""Build benign_translations.jsonl: real translated messages that name a password in another
language and hold none, the false-positive corpus for the filter's words for "password" in
other languages (rules._PASSWORD_WORDS).

    python bench/secrets/make_benign_translations.py    # writes benign_translations.jsonl

Every translated message (msgstr) of the gettext catalogs installed on this machine
(/usr/share/locale/*/LC_MESSAGES/*.mo: shadow, gnupg2, Linux-PAM, glib, wget, postgres, …; 50
languages; English catalogs skipped), deduplicated, kept when its lower-cased text holds one of
the rule's literals for those words (``rules._PASSWORD_LITERALS``): password prompts, error
messages, ``--help`` listings whose metavariables are translated (``--password CONTRASEÑA``).
1,354,159 distinct messages held 5,412 such on Debian bookworm (2026-12-02).
"""

from __future__ import annotations

import gettext
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from gitvault.scrub.rules import _PASSWORD_LITERALS  # noqa: E402


def main() -> None:
    seen: set[str] = set()
    rows: list[dict[str, str]] = []
    for path in sorted(Path("/usr/share/locale").glob("*/LC_MESSAGES/*.mo")):
        lang = path.parts[-3]
        if lang.startswith("en"):
            continue
        try:
            with path.open("rb") as handle:
                catalog = gettext.GNUTranslations(handle)._catalog  # type: ignore[attr-defined]
        except (
            OSError,
            ValueError,
            UnicodeDecodeError,
            KeyError,
            IndexError,
        ):  # a malformed catalog
            continue
        for key, value in catalog.items():
            if not key or not isinstance(value, str) or not value.strip() or value in seen:
                continue
            seen.add(value)
            low = value.lower()
            if any(literal in low for literal in _PASSWORD_LITERALS):
                rows.append({"source": f"{lang}:{path.name}", "text": value})
    out = HERE / "benign_translations.jsonl"
    with out.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(seen)} distinct messages, {len(rows)} naming a password: {out}")


if __name__ == "__main__":
    main()
