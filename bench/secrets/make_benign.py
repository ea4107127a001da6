"""Build bench/secrets/benign.jsonl: real commit-message-like text that must survive redaction.

The text comes from project history that package registries ship (see SOURCES.md):

* CHANGELOG.md / HISTORY.md files inside npm tarballs (``npm pack NAME`` then ``tar -xzf``),
  one entry per bullet or release heading -- conventional-changelog, release-please and
  changesets write real commit subjects, 7/40-hex SHAs and compare links there;
* ``changelog.Debian.gz`` and upstream ``changelog.gz`` under /usr/share/doc, one entry per
  bullet (with its continuation lines), per ``--`` trailer (names, e-mail addresses, dates) and
  per GNU ChangeLog block;
* CHANGES / HISTORY files of Python sdists (``pip download --no-deps --no-binary :all: NAME``);
* ``RECORD`` files of installed wheels (real ``sha256=`` url-safe base64 file hashes);
* lines naming real npm integrity hashes (``npm view NAME@VER dist.integrity dist.shasum``),
  phrased as dependency-bump commit subjects;
* this repository's own ``git log`` messages.

Only the splitting and the dependency-bump phrasing are ours; every hash, SHA, URL, version
and e-mail address is as published.  Inputs live in /tmp (network needed only to fetch them):

    python bench/secrets/make_benign.py --npm /tmp/npmpkgs --sdists /tmp/sdists \\
        --integrity /tmp/integrity.jsonl --site-packages /tmp/secvenv/lib/python3.11/site-packages
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import tarfile
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path

MIN_LEN = 12
MAX_LEN = 1500
PER_FILE_CAP = 500

_BULLET = re.compile(r"^(\s*)([*+-]|\d+\.)\s+")
_HEADING = re.compile(r"^#{1,4}\s+\S")


def _chunks(text: str) -> Iterator[str]:
    text = text.strip()
    while len(text) > MAX_LEN:
        cut = text.rfind("\n", 0, MAX_LEN)
        if cut <= MIN_LEN:
            cut = MAX_LEN
        yield text[:cut].strip()
        text = text[cut:].strip()
    if text:
        yield text


def split_markdown(text: str) -> Iterator[str]:
    """One entry per top-level bullet (with continuation lines) and per heading."""
    current: list[str] = []
    indent = 0

    def flush() -> Iterator[str]:
        if current:
            yield from _chunks("\n".join(current))
            current.clear()

    for line in text.splitlines():
        m = _BULLET.match(line)
        if _HEADING.match(line):
            yield from flush()
            yield line.strip()
        elif m and len(m.group(1)) <= indent + 1:
            yield from flush()
            indent = len(m.group(1))
            current.append(line.rstrip())
        elif line.strip() == "":
            yield from flush()
        elif current:
            current.append(line.rstrip())
        elif line.strip() and not line.startswith(("=", "---", "```", "<")):
            current.append(line.rstrip())
            indent = 0
    yield from flush()


_DEB_HEADER = re.compile(r"^\S+ \([^)]+\) [^;]+; urgency=")
_DEB_TRAILER = re.compile(r"^ -- ")
_DEB_BULLET = re.compile(r"^  [*] ")


def split_debian(text: str) -> Iterator[str]:
    current: list[str] = []

    def flush() -> Iterator[str]:
        if current:
            yield from _chunks("\n".join(current))
            current.clear()

    for line in text.splitlines():
        if _DEB_HEADER.match(line) or _DEB_TRAILER.match(line):
            yield from flush()
            yield line.strip()
        elif _DEB_BULLET.match(line):
            yield from flush()
            current.append(line.rstrip())
        elif not line.strip() or line.strip().startswith("[ "):
            yield from flush()
        elif current:
            current.append(line.rstrip())
    yield from flush()


def split_gnu_changelog(text: str) -> Iterator[str]:
    """GNU ChangeLog and NEWS-like files: blocks separated by blank lines."""
    for block in re.split(r"\n\s*\n", text):
        yield from _chunks(block)


def split_record(text: str) -> Iterator[str]:
    lines = [ln for ln in text.splitlines() if "sha256=" in ln]
    for i in range(0, len(lines), 3):
        yield "\n".join(lines[i : i + 3])


def _keep(entry: str) -> bool:
    if len(entry) < MIN_LEN:
        return False
    return sum(ch.isalnum() for ch in entry) >= 8


class Collector:
    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.rows: list[dict[str, str]] = []
        self.sources: dict[str, int] = {}

    def add(self, source: str, entries: Iterable[str], cap: int = PER_FILE_CAP) -> None:
        """Add up to ``cap`` new entries, spread evenly over the file (not just its head)."""
        fresh = list(dict.fromkeys(e for e in entries if _keep(e) and e not in self.seen))
        if len(fresh) > cap:
            step = len(fresh) / cap
            fresh = [fresh[int(i * step)] for i in range(cap)]
        added = 0
        for entry in fresh:
            self.seen.add(entry)
            self.rows.append({"source": source, "text": entry})
            added += 1
        if added:
            self.sources[source] = self.sources.get(source, 0) + added


_CHANGELOG_NAMES = re.compile(
    r"^(CHANGELOG|CHANGES|HISTORY|NEWS|RELEASE[-_]?NOTES)(\.(md|rst|txt))?$", re.IGNORECASE
)


def collect_npm(col: Collector, root: Path) -> None:
    for tgz in sorted(root.rglob("*.tgz")):
        pkgname = tgz.stem
        try:
            with tarfile.open(tgz) as tar:
                for member in tar.getmembers():
                    parts = member.name.split("/")
                    if len(parts) > 3 or not _CHANGELOG_NAMES.match(parts[-1]):
                        continue
                    fh = tar.extractfile(member)
                    if fh is None:
                        continue
                    text = fh.read().decode("utf-8", "replace")
                    col.add(f"npm:{pkgname}:{'/'.join(parts[1:])}", split_markdown(text))
        except tarfile.TarError:
            continue


def collect_sdists(col: Collector, root: Path) -> None:
    for archive in sorted(root.iterdir()):
        name = archive.name
        members: list[tuple[str, bytes]] = []
        if name.endswith((".tar.gz", ".tgz")):
            with tarfile.open(archive) as tar:
                for member in tar.getmembers():
                    parts = member.name.split("/")
                    if len(parts) <= 3 and _CHANGELOG_NAMES.match(parts[-1]):
                        fh = tar.extractfile(member)
                        if fh is not None:
                            members.append(("/".join(parts[1:]), fh.read()))
        elif name.endswith(".zip"):
            with zipfile.ZipFile(archive) as zf:
                for info in zf.infolist():
                    parts = info.filename.split("/")
                    if len(parts) <= 3 and _CHANGELOG_NAMES.match(parts[-1]):
                        members.append(("/".join(parts[1:]), zf.read(info)))
        for path, data in members:
            text = data.decode("utf-8", "replace")
            pkg = re.sub(r"\.(tar\.gz|tgz|zip)$", "", name)
            col.add(f"sdist:{pkg}:{path}", split_markdown(text))


def collect_debian(col: Collector, root: Path) -> None:
    for path in sorted(root.glob("*/changelog.Debian.gz")):
        text = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
        col.add(f"debian:{path.parent.name}:changelog.Debian", split_debian(text), cap=4)
    for path in sorted(root.glob("*/changelog.gz")):
        text = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
        splitter = split_debian if _DEB_HEADER.match(text) else split_gnu_changelog
        col.add(f"debian:{path.parent.name}:changelog", splitter(text), cap=5)


SNIPPETS = {
    "uuid": re.compile(
        r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
        r"[0-9a-fA-F]{12}\b"
    ),
    "url-port": re.compile(r"\b[a-z][a-z0-9+.-]*://[\w.-]+:\d{2,5}\b"),
    "base64": re.compile(r"[A-Za-z0-9+/]{40,}={0,2}"),
    "hex40": re.compile(r"\b[0-9a-f]{40}\b"),
}
_TEXT_EXT = (
    ".md",
    ".rst",
    ".txt",
    ".js",
    ".ts",
    ".py",
    ".json",
    ".yml",
    ".yaml",
    ".cfg",
    ".toml",
    ".ini",
    ".html",
)
SNIPPET_CAP = 12
SNIPPET_MAX = 300


def _snippet_lines(name: str, text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {k: [] for k in SNIPPETS}
    for line in text.splitlines():
        line = line.strip()
        if not (MIN_LEN <= len(line) <= SNIPPET_MAX):
            continue
        for kind, rx in SNIPPETS.items():
            if kind == "base64" and not re.search(r"test|fixture|spec|mock", name, re.I):
                continue
            if rx.search(line):
                out[kind].append(line)
    return out


def collect_snippets(col: Collector, archives: Iterable[Path]) -> None:
    """Lines with UUIDs, URLs with ports, 40-hex ids and base64 test fixtures from package files.

    Real text from READMEs, docs, tests and sources; capped per package and per kind.
    """
    for archive in archives:
        found: dict[str, list[str]] = {k: [] for k in SNIPPETS}
        try:
            with tarfile.open(archive) as tar:
                for member in tar.getmembers():
                    if not member.isfile() or not member.name.endswith(_TEXT_EXT):
                        continue
                    if member.size > 2_000_000 or ".min." in member.name:
                        continue
                    fh = tar.extractfile(member)
                    if fh is None:
                        continue
                    text = fh.read().decode("utf-8", "replace")
                    for kind, lines in _snippet_lines(member.name, text).items():
                        found[kind].extend(lines)
        except (tarfile.TarError, OSError):
            continue
        pkg = re.sub(r"\.(tar\.gz|tgz)$", "", archive.name)
        for kind, lines in found.items():
            col.add(f"snippet:{pkg}:{kind}", lines, cap=SNIPPET_CAP)


def collect_records(col: Collector, site: Path) -> None:
    for record in sorted(site.glob("*.dist-info/RECORD")):
        col.add(f"wheel:{record.parent.name}:RECORD", split_record(record.read_text()), cap=15)


BUMP_TEMPLATES = [
    "build(deps): bump {name} from {prev} to {ver} ({integrity})",
    "chore(deps): update {name} to {ver}\n\nintegrity {integrity}\nshasum {shasum}",
    '"node_modules/{name}": {{\n  "version": "{ver}",\n  "integrity": "{integrity}"\n}}',
    "{name}@{ver}: integrity mismatch fixed after cache clean (expected {integrity})",
    "pinned {name}@{ver}, tarball shasum {shasum}",
]


def collect_integrity(col: Collector, path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    entries = []
    for i, row in enumerate(rows):
        tpl = BUMP_TEMPLATES[i % len(BUMP_TEMPLATES)]
        if not row.get("prev") and "{prev}" in tpl:
            tpl = BUMP_TEMPLATES[1]
        entries.append(tpl.format(**row))
    col.add("npm-registry:dist.integrity", entries, cap=10_000)


def collect_git(col: Collector, repo: Path) -> None:
    out = subprocess.run(
        ["git", "-C", str(repo), "log", "--format=%B%x00"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    col.add("git:gitvault", (m.strip() for m in out.split("\x00")), cap=10_000)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    here = Path(__file__).resolve().parent
    parser.add_argument("--npm", type=Path, action="append", default=[])
    parser.add_argument("--sdists", type=Path, action="append", default=[])
    parser.add_argument("--debian-doc", type=Path, default=Path("/usr/share/doc"))
    parser.add_argument("--integrity", type=Path)
    parser.add_argument("--site-packages", type=Path, action="append", default=[])
    parser.add_argument("--git", type=Path, default=here.parent.parent)
    parser.add_argument("--out", type=Path, default=here / "benign.jsonl")
    args = parser.parse_args()

    col = Collector()
    for root in args.npm:
        collect_npm(col, root)
    for root in args.sdists:
        collect_sdists(col, root)
    archives = [p for root in args.npm for p in sorted(root.rglob("*.tgz"))]
    archives += [p for root in args.sdists for p in sorted(root.glob("*.tar.gz"))]
    collect_snippets(col, archives)
    collect_debian(col, args.debian_doc)
    for site in args.site_packages:
        collect_records(col, site)
    if args.integrity:
        collect_integrity(col, args.integrity)
    collect_git(col, args.git)

    with args.out.open("w", encoding="utf-8") as fh:
        for row in col.rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    (here / "benign_sources.json").write_text(json.dumps(col.sources, indent=1, sort_keys=True))
    print(f"wrote {len(col.rows)} entries from {len(col.sources)} files to {args.out}")


if __name__ == "__main__":
    main()
