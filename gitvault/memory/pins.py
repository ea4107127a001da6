"""`gitvault pin / unpin / pins`: standing rules a person gives every agent, without editing the
vault branch by hand.

A pin is one `- ` line in `patterns/pins.md` on the vault (recall shows every patterns/*.md line
at session start). Its ID is `p:` + six hex digits of the rule's text, computed, never stored,
so the file stays plain Markdown a person can edit. Each pin and unpin is one vault commit, and
the read-modify-write is retried when another writer changed a pattern file in between, so two
people pinning at once both land. Pins are bounded: the total of pattern lines never exceeds
what recall shows (`recall.pattern_lines`, 25 by default), so a pin is never silently dropped.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from gitvault.errors import GitvaultError
from gitvault.memory.fences import RECALL_BEGIN, RECALL_END
from gitvault.resolve import Location
from gitvault.scrub.engine import scrub_secrets
from gitvault.vault import layout
from gitvault.vault.store import Vault, Write

MAX_PIN_CHARS = 300
ATTEMPTS = 20
HEADER = (
    "# pins\n\n"
    "Standing rules pinned with `gitvault pin`, one per line; `gitvault unpin ID` removes one.\n\n"
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


class PinError(GitvaultError):
    pass


class _Moved(Exception):
    """The pattern files changed between our read and our write: read again."""


@dataclass(frozen=True)
class Pin:
    id: str
    text: str
    path: str

    def as_json(self) -> dict[str, str]:
        return {"id": self.id, "text": self.text, "path": self.path}


def pin_id(text: str) -> str:
    return "p:" + hashlib.sha1(_normal(text).encode()).hexdigest()[:6]


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def clean(text: str) -> tuple[str, int]:
    """One rule line from what the user typed: one line, no controls, no recall fence, secrets
    redacted; (text, redactions). Raises PinError for what cannot be a rule."""
    text = _normal(_CONTROL.sub(" ", text))
    if text.startswith(("- ", "* ")):
        text = text[2:].strip()
    if not text:
        raise PinError("a pin needs text", hint='gitvault pin "run the tests with -n auto"')
    if RECALL_BEGIN in text or RECALL_END in text:
        raise PinError("a pin cannot contain the recall fence")
    if len(text) > MAX_PIN_CHARS:
        raise PinError(
            f"a pin is one line of at most {MAX_PIN_CHARS} characters ({len(text)} given)",
            hint="say the rule shorter; details belong in a session or an agent file",
        )
    redacted, found = scrub_secrets(text)
    return redacted, sum(r.count for r in found)


def _rules(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("- ", "* ")):
            out.append(stripped[2:].strip())
    return out


def _pattern_files(vault: Vault, at: str) -> dict[str, str]:
    files = {}
    for name, is_dir in vault.listdir(layout.PATTERNS, at):
        path = f"{layout.PATTERNS}/{name}"
        if not is_dir and layout.is_pattern(path):
            files[path] = vault.read_text(path, at) or ""
    return files


def pins(loc: Location) -> list[Pin]:
    """Every standing rule on the vault (pins first, then the other pattern files)."""
    vault = Vault(loc)
    tip = vault.check_format()
    files = _pattern_files(vault, tip)
    order = sorted(files, key=lambda p: (p != layout.PINS, p))
    return [Pin(pin_id(rule), rule, path) for path in order for rule in _rules(files[path])]


@dataclass(frozen=True)
class Changed:
    pin: Pin
    commit: str | None  # None: nothing changed (already pinned)
    redactions: int = 0


def _recall_limit(vault: Vault, at: str) -> int:
    settings = layout.read_settings(vault.read_text(layout.CONFIG, at), "recall")
    return max(0, int(settings["pattern_lines"]))


Plan = tuple[dict[str, bytes | None], str, Pin]
Build = Callable[[dict[str, str], str], Plan | None]


def _write(vault: Vault, build: Build) -> tuple[str | None, Pin | None]:
    """Read the pattern files, let build(files, tip) say what to write, commit it; again when
    another writer changed a pattern file first."""
    for _ in range(ATTEMPTS):
        tip = vault.check_format()
        files = _pattern_files(vault, tip)
        plan = build(files, tip)
        if plan is None:
            return None, None
        changes, message, result = plan

        def skip(head: str, _w: Write, seen: dict[str, str] = files, read: str = tip) -> bool:
            if head != read and _pattern_files(vault, head) != seen:
                raise _Moved
            return False

        try:
            made = vault.commit_many([Write(changes, message)], skip_if=skip)
        except _Moved:
            continue
        return (made[-1] if made else None), result
    raise PinError("the pattern files kept changing; nothing written", hint="try again")


def pin(loc: Location, text: str) -> Changed:
    rule, redactions = clean(text)
    new = Pin(pin_id(rule), rule, layout.PINS)
    vault = Vault(loc)

    def build(files: dict[str, str], tip: str) -> Plan | None:
        every = [r for t in files.values() for r in _rules(t)]
        if any(pin_id(r) == new.id for r in every):
            return None
        limit = _recall_limit(vault, tip)
        if len(every) + 1 > limit:
            raise PinError(
                f"recall shows at most {limit} pattern lines and the vault has {len(every)}",
                hint="unpin a rule first (`gitvault pins` lists them), or raise "
                "recall.pattern_lines in vault.toml",
            )
        current = files.get(layout.PINS, HEADER)
        body = current if current.endswith("\n") or not current else current + "\n"
        data = (body + f"- {rule}\n").encode()
        return {layout.PINS: data}, f"pin {new.id} {_subject(rule)}", new

    commit, _ = _write(vault, build)
    return Changed(new, commit, redactions)


def unpin(loc: Location, ident: str) -> Changed:
    """Remove the rule an ID (`p:1a2b3c`, or its hex alone, or a unique prefix of ≥ 3 digits)
    or an exact rule text names, from whichever pattern file holds it."""
    vault = Vault(loc)
    want = ident.strip()
    key = want[2:] if want.lower().startswith("p:") else want
    found: list[Pin] = []

    def build(files: dict[str, str], tip: str) -> Plan | None:
        every = [Pin(pin_id(r), r, p) for p, t in files.items() for r in _rules(t)]
        exact = [p for p in every if _normal(p.text) == _normal(want)]
        byid = [p for p in every if len(key) >= 3 and p.id[2:].startswith(key.lower())]
        matches = exact or byid
        ids = sorted({p.id for p in matches})
        if not matches:
            raise PinError(f"no pin matches {ident!r}", hint="`gitvault pins` lists the IDs")
        if len(ids) > 1:
            raise PinError(f"{ident!r} is ambiguous: " + ", ".join(ids), hint="give more of the ID")
        target = matches[0]
        found.append(target)
        changes: dict[str, bytes | None] = {}
        for path in {p.path for p in matches}:
            kept = [
                line
                for line in files[path].splitlines(keepends=True)
                if not (
                    line.strip().startswith(("- ", "* ")) and pin_id(line.strip()[2:]) == target.id
                )
            ]
            changes[path] = "".join(kept).encode()
        return changes, f"unpin {target.id} {_subject(target.text)}", target

    commit, result = _write(vault, build)
    return Changed(result or found[-1], commit)


def _subject(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
