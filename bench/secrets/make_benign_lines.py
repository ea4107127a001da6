"""Build the line-level false-positive corpora: real text with no secret in it, one line each.

    python bench/secrets/make_benign_lines.py     # writes benign_manpages.jsonl, benign_paths.jsonl

- benign_manpages.jsonl: 25,000 distinct lines of the manual pages installed on this machine
  (Debian bookworm's packages, gcloud's generated pages at most a fifth: `man` renders each
  page at 80 columns, `col -b` strips the overstrikes), a deterministic sample across the
  pages. Command lines, option tables and examples with `--password`-like words are exactly
  what a redactor must leave alone.
- benign_paths.jsonl: 25,000 real file paths (at most 120 from each package's file list in
  /var/lib/dpkg/info and click's history from /work/shared/histories/click.bundle when
  present): what a commit's file list holds, hashed asset names, lockfiles and test fixtures
  included.

The changelog lines are benign.jsonl's entries split at line breaks (evaluate.py and
bench/measures/secrets.py do that; nothing is written for them).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
LINES = 25_000
R = random.Random(20261201)


def manpage_lines() -> list[str]:
    pages = sorted(Path("/usr/share/man/man1").glob("*.gz")) + sorted(
        Path("/usr/share/man/man8").glob("*.gz")
    )
    # gcloud's ~15,000 generated pages would be most of the sample: at most a fifth of it
    gcloud = [p for p in pages if p.name.startswith("gcloud")]
    others = [p for p in pages if not p.name.startswith("gcloud")]
    R.shuffle(gcloud)
    pages = others + gcloud[: len(others) // 4]
    R.shuffle(pages)
    seen: set[str] = set()
    out: list[str] = []
    env = {**os.environ, "MANWIDTH": "80", "MAN_KEEP_FORMATTING": "0", "LC_ALL": "C.UTF-8"}
    for page in pages:
        proc = subprocess.run(
            f"man -P cat -l {page} 2>/dev/null | col -b",
            shell=True,
            capture_output=True,
            env=env,
            timeout=60,
        )
        lines = [ln.strip() for ln in proc.stdout.decode("utf-8", "replace").splitlines()]
        lines = [ln for ln in lines if len(ln) >= 8 and ln not in seen]
        for line in R.sample(lines, min(len(lines), 40)):
            seen.add(line)
            out.append(line)
        if len(out) >= LINES:
            break
    return out[:LINES]


def paths() -> list[str]:
    found: set[str] = set()
    for listing in sorted(Path("/var/lib/dpkg/info").glob("*.list")):
        names = [ln.lstrip("/") for ln in listing.read_text("utf-8", "replace").splitlines()]
        names = sorted(n for n in names if n and n != ".")
        found.update(R.sample(names, min(len(names), 120)))  # no package dominates
    bundle = Path("/work/shared/histories/click.bundle")
    if bundle.exists():
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["git", "clone", "-q", "--bare", str(bundle), tmp + "/c"], check=True)
            log = subprocess.run(
                ["git", "-C", tmp + "/c", "log", "--all", "--name-only", "--format="],
                capture_output=True,
                check=True,
            ).stdout.decode("utf-8", "replace")
            found.update(ln for ln in log.splitlines() if ln.strip())
    ordered = sorted(found)
    return R.sample(ordered, min(LINES, len(ordered)))


def write(name: str, source: str, lines: list[str]) -> None:
    with (HERE / name).open("w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps({"source": source, "text": line}, ensure_ascii=False) + "\n")
    print(f"wrote {len(lines)} lines to {name}")


def main() -> None:
    write("benign_manpages.jsonl", "man", manpage_lines())
    write("benign_paths.jsonl", "path", paths())


if __name__ == "__main__":
    main()
