"""The digest `_master.md` (REWRITE): six fixed categories, one line per fact, every line citing
its sources, every category and the whole body capped in code.

A line is `- <fact> (c:<short sha>, s:<session slug>)`. `c:` cites a commit note, `s:` a session.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from gitvault.errors import FoldRejected
from gitvault.vault import frontmatter
from gitvault.vault.config import VaultConfig

TITLE = "# Project memory"
PLACEHOLDER = "- (none yet)"
CUT_MARKER = "- [… {n} more lines cut to fit the {cap}-character cap]"
_CITE = re.compile(r"\b([cs]):([A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9]|[A-Za-z0-9])")
_HEADING = re.compile(r"^##\s+(.+?)\s*#*\s*$")


@dataclass
class Digest:
    categories: dict[str, list[str]]  # configured name → lines ("- …"), in configured order
    meta: dict[str, object] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)  # lines dropped for bad citations
    cut: list[str] = field(default_factory=list)  # categories cut to their cap

    def body(self) -> str:
        parts = [TITLE, ""]
        for name, lines in self.categories.items():
            parts.append(f"## {name}")
            parts.extend(lines or [PLACEHOLDER])
            parts.append("")
        return "\n".join(parts)

    def render(self) -> str:
        return frontmatter.render(self.meta, self.body())

    def counts(self) -> dict[str, int]:
        """Facts per category: placeholders and cut markers are no facts."""
        return {
            name: sum(1 for ln in lines if ln != PLACEHOLDER and not is_marker(ln))
            for name, lines in self.categories.items()
        }

    def facts(self) -> int:
        return sum(self.counts().values())

    def section(self, name: str) -> str:
        for key, lines in self.categories.items():
            if key.lower() == name.lower():
                return "\n".join(lines)
        return ""


def is_marker(line: str) -> bool:
    """A cut marker (`- [… n more lines cut …]`), not a fact."""
    return line.startswith("- [… ")


def empty(config: VaultConfig) -> Digest:
    return Digest({c.name: [] for c in config.categories})


def citations(line: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in _CITE.finditer(line)]


def _strip_fences(text: str) -> str:
    text = text.strip()
    fenced = re.match(r"^```[a-zA-Z]*\n(.*)\n```$", text, re.S)
    return fenced.group(1) if fenced else text


def parse(text: str, config: VaultConfig, *, strict: bool = True) -> Digest:
    """Parse a digest (a stored _master.md or a merger's answer).

    strict: the answer must have exactly the configured categories, each once and non-empty;
    otherwise FoldRejected says what is wrong.
    """
    meta, body = frontmatter.parse(_strip_fences(text))
    wanted = {c.name.lower(): c.name for c in config.categories}
    found: dict[str, list[str]] = {}
    extra: list[str] = []
    current: str | None = None
    for raw in body.splitlines():
        line = raw.rstrip()
        heading = _HEADING.match(line)
        if heading:
            title = heading.group(1).strip().rstrip(":")
            key = title.lower()
            if key in wanted:
                if wanted[key] in found and strict:
                    raise FoldRejected(f"category '{title}' appears twice in the merger's answer")
                current = wanted[key]
                found.setdefault(current, [])
            else:
                extra.append(title)
                current = None
            continue
        stripped = line.strip()
        if current is None or not stripped:
            continue
        if stripped.startswith(("* ", "+ ")):
            stripped = "- " + stripped[2:]
        if stripped.startswith("- "):
            found[current].append(re.sub(r"\s+", " ", stripped))
    if strict:
        if extra:
            raise FoldRejected(
                f"the merger's answer has categories that do not exist: {', '.join(extra)}"
            )
        missing = [c.name for c in config.categories if c.name not in found]
        if missing:
            raise FoldRejected(f"the merger's answer lacks the categories: {', '.join(missing)}")
        empty_cats = [name for name, lines in found.items() if not lines]
        if empty_cats:
            raise FoldRejected(
                f"the merger's answer has empty categories: {', '.join(empty_cats)} "
                f"(write '{PLACEHOLDER}' when nothing is known)"
            )
    categories = {
        c.name: [ln for ln in found.get(c.name, []) if ln != PLACEHOLDER] for c in config.categories
    }
    return Digest(categories, meta)


def check_citations(digest: Digest, exists: Callable[[str, str], bool]) -> None:
    """Drop (and record) every line citing nothing or citing a source that does not exist."""
    for name, lines in digest.categories.items():
        kept = []
        for line in lines:
            cites = citations(line)
            bad = [f"{k}:{v}" for k, v in cites if not exists(k, v)]
            if not cites or bad:
                why = "cites no source" if not cites else f"cites unknown {', '.join(bad)}"
                digest.dropped.append(f"{name}: {line} [{why}]")
                continue
            kept.append(line)
        digest.categories[name] = kept


def effective_caps(digest: Digest, config: VaultConfig) -> dict[str, int]:
    """Each category's cap plus its share of what the others leave unused: budget one
    category does not need flows to the categories over their caps, in proportion to how far
    over they are. What the categories hold together never exceeds the configured caps' sum
    (a lender keeps its own cap: it may hold up to it, only what it leaves unused is lent)."""
    caps = {c.name: c.cap for c in config.categories}
    sizes = {n: _size(digest.categories.get(n, [])) for n in caps}
    slack = sum(max(0, caps[n] - sizes[n]) for n in caps)
    need = {n: sizes[n] - caps[n] for n in caps if sizes[n] > caps[n]}
    total = sum(need.values())
    out = dict(caps)
    if total and slack:
        for name, wanted in need.items():
            out[name] += min(wanted, slack * wanted // total)
    return out


def over_caps(digest: Digest, config: VaultConfig) -> list[str]:
    caps = effective_caps(digest, config)
    over = [n for n, lines in digest.categories.items() if _size(lines) > caps[n]]
    if len(digest.body()) > config.digest_max_chars:
        over.append("(whole digest)")
    return over


def _size(lines: Iterable[str]) -> int:
    return sum(len(ln) + 1 for ln in lines)


def enforce_caps(digest: Digest, config: VaultConfig) -> None:
    """Cut each category at a line boundary to its cap (plus what the others leave unused),
    then the whole body, with a marker. Lines come in priority order: the last ones go."""
    caps = effective_caps(digest, config)
    for cat in config.categories:
        lines = digest.categories[cat.name]
        cap = caps[cat.name]
        if _size(lines) <= cap:
            continue
        kept: list[str] = []
        for line in lines:
            marker = CUT_MARKER.format(n=len(lines) - len(kept), cap=cap)
            if _size([*kept, line]) + len(marker) + 1 > cap:
                break
            kept.append(line)
        dropped = len(lines) - len(kept)
        kept.append(CUT_MARKER.format(n=dropped, cap=cap))
        digest.categories[cat.name] = kept
        digest.cut.append(cat.name)
    # Whole-digest cap: trim the longest category by a line until the body fits.
    guard = 0
    while len(digest.body()) > config.digest_max_chars and guard < 10_000:
        guard += 1
        name = max(digest.categories, key=lambda n: _size(digest.categories[n]))
        lines = [ln for ln in digest.categories[name] if not ln.startswith("- [… ")]
        if not lines:
            break
        lines.pop()
        digest.categories[name] = [*lines, CUT_MARKER.format(n="some", cap=config.digest_max_chars)]
        if name not in digest.cut:
            digest.cut.append(name)
