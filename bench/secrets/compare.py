"""The secret filter of another revision against this tree's, in one process.

    python bench/secrets/compare.py                   # against main
    python bench/secrets/compare.py --base 153d890 --rounds 10 -v
    python bench/secrets/compare.py --real /tmp/sx/git/repo    # and real notes of a vault

The base revision's ``gitvault/scrub`` is taken out with ``git archive`` into a temporary
directory and imported beside this tree's (both stay loaded: the rules are bound at import).
Printed, for each: recall on every corpus of this directory (held-out 7 too: measured once
blind, it has been the development set since), the lines changed on every benign corpus (``-v``: the
lines one filter changes and the other does not), and CPU milliseconds per 2 KB note (the 500
notes of prefilter.py), the two filters' rounds interleaved so that a shared machine's load
falls on both alike: the median of their per-round ratios says more than either time.
``--real GITDIR``: the same rounds again over 500 notes of that repository's vault branch
(evenly spaced over its notes/, as gitvault wrote them: a real history's commit notes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

from prefilter import notes  # noqa: E402

CORPORA = [
    f"corpus{suffix}.jsonl" for suffix in ("", "_heldout", *(f"_heldout{n}" for n in range(2, 12)))
]
BENIGN = (
    "benign.jsonl",
    "benign_manpages.jsonl",
    "benign_paths.jsonl",
    "benign_heldout6.jsonl",
    "benign_heldout7.jsonl",
    "benign_heldout8.jsonl",
    "benign_heldout9.jsonl",
    "benign_heldout10.jsonl",
    "benign_heldout11.jsonl",
    "benign_translations.jsonl",
)
Scrub = Callable[[str], tuple[str, list[object]]]


def _load(tree: Path) -> Scrub:
    for name in [m for m in sys.modules if m == "gitvault" or m.startswith("gitvault.")]:
        del sys.modules[name]
    sys.path.insert(0, str(tree))
    try:
        from gitvault.scrub.engine import scrub_secrets
    finally:
        sys.path.remove(str(tree))
    return scrub_secrets  # type: ignore[return-value]


def _rows(name: str) -> list[dict[str, object]]:
    with (HERE / name).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _caught(scrub: Scrub, row: dict[str, object]) -> bool:
    out = scrub(str(row["text"]))[0]
    parts = row.get("parts") or [row["secret"]]
    return not any(str(part) in out for part in parts)  # type: ignore[union-attr]


def _left(scrub: Scrub, text: str) -> tuple[str, list[tuple[str, int]]]:
    """What a filter leaves of ``text``, and its counts by kind (each tree's own Scrubbed)."""
    out, counts = scrub(text)
    return out, [(c.kind, c.count) for c in counts]  # type: ignore[attr-defined]


def _vault_notes(repo: str, count: int = 500) -> list[str]:
    """``count`` notes of ``repo``'s vault branch, evenly spaced over its notes/."""
    git = ["git", "-C", repo]
    paths = subprocess.run(
        [*git, "ls-tree", "-r", "--name-only", "vault", "notes/"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    paths = [p for p in paths if p.endswith(".md")]
    chosen = paths[:: max(1, len(paths) // count)][:count]
    batch = subprocess.run(
        [*git, "cat-file", "--batch"],
        input="".join(f"vault:{path}\n" for path in chosen).encode(),
        check=True,
        capture_output=True,
    ).stdout
    notes, at = [], 0
    while at < len(batch):
        header_end = batch.index(b"\n", at)
        size = int(batch[at:header_end].split()[2])
        notes.append(batch[header_end + 1 : header_end + 1 + size].decode("utf-8", "replace"))
        at = header_end + 1 + size + 1
    return notes


def _rounds(base: Scrub, here: Scrub, texts: list[str], rounds: int, label: str) -> None:
    """CPU per text of each filter, their rounds interleaved; printed with the load."""
    differ = sum(_left(base, text) != _left(here, text) for text in texts)  # (compiles first)
    times: dict[str, list[float]] = {"base": [], "here": []}
    for _ in range(rounds):
        for name, scrub in (("base", base), ("here", here)):
            start = time.process_time()
            for text in texts:
                scrub(text)
            times[name].append((time.process_time() - start) / len(texts) * 1000)
    ratios = [h / b for b, h in zip(times["base"], times["here"], strict=True)]
    print(
        f"  CPU per {label}: base min {min(times['base']):.3f} ms, here min "
        f"{min(times['here']):.3f} ms; here/base per round: median "
        f"{statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f}); "
        f"left differently {differ}; load {os.getloadavg()[0]:.1f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="main", help="the revision to compare with")
    parser.add_argument("--rounds", type=int, default=8, help="interleaved CPU rounds")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--real", metavar="GITDIR", help="also time notes of this vault")
    parser.add_argument(
        "--no-recall", dest="recall", action="store_false", help="only the CPU rounds"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        archive = subprocess.run(
            [
                "git",
                "-C",
                str(ROOT),
                "archive",
                args.base,
                "gitvault/scrub",
                "gitvault/__init__.py",
            ],
            check=True,
            capture_output=True,
        ).stdout
        tar_path = Path(scratch) / "base.tar"
        tar_path.write_bytes(archive)
        with tarfile.open(tar_path) as tar:
            tar.extractall(scratch, filter="data")
        base, here = _load(Path(scratch)), _load(ROOT)
        assert base is not here
        print(f"base {args.base} against this tree; load {os.getloadavg()[0]:.1f}")
        differ = 0  # texts the two filters leave differently (a change meant only to be faster: 0)
        for name in CORPORA if args.recall else ():
            rows = _rows(name)
            a = sum(_caught(base, row) for row in rows)
            b = sum(_caught(here, row) for row in rows)
            differ += sum(_left(base, str(r["text"])) != _left(here, str(r["text"])) for r in rows)
            print(f"  recall {name:28} {a}/{len(rows)} -> {b}/{len(rows)}")
        for name in BENIGN if args.recall else ():
            if not (HERE / name).exists():
                continue
            texts = [str(row["text"]) for row in _rows(name)]
            a_changed = {t for t in texts if base(t)[0] != t}
            b_changed = {t for t in texts if here(t)[0] != t}
            differ += sum(_left(base, t) != _left(here, t) for t in a_changed | b_changed)
            print(f"  changed {name:27} {len(a_changed)} -> {len(b_changed)} of {len(texts)}")
            if args.verbose:
                for text in sorted(b_changed - a_changed):
                    print(f"    new:  {text[:160]!r} -> {here(text)[0][:160]!r}")
                for text in sorted(a_changed - b_changed):
                    print(f"    gone: {text[:160]!r}")
        if args.recall:
            print(f"  texts the two filters leave differently (text or counts): {differ}")
        _rounds(base, here, notes(), args.rounds, "2 KB note")
        if args.real:
            real = _vault_notes(args.real)
            size = sum(len(text) for text in real) / len(real)
            _rounds(base, here, real, args.rounds, f"real note ({len(real)}, {size:,.0f} chars)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
