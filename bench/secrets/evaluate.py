"""Measure secret detectors: recall on corpus.jsonl, false positives on benign.jsonl.

    python bench/secrets/evaluate.py                         # every detector that can be loaded
    python bench/secrets/evaluate.py --detector gitvault     # one detector (repeatable)
    python bench/secrets/evaluate.py -v --python /tmp/secvenv/bin/python \\
        --python /tmp/bcvenv/bin/python

Each detector runs in a fresh interpreter (so its import time is measured cold): the one running
this script if the detector's packages import there, else the first ``--python`` interpreter
where they do.  ``detect-secrets`` and ``bc-detect-secrets`` both install the module
``detect_secrets``, so they need separate environments; ``setup_envs.sh`` builds them.

Scoring.  A corpus sample is *caught* when its ``secret`` substring no longer appears in the
detector's output.  Detectors that only report findings are turned into redactors: every reported
secret value (or span) is replaced by ``[REDACTED]`` in the text.  A benign entry is a *false
positive* when the output differs from the input or the detector reported anything.  Speed is
benign lines per second (each benign entry is passed whole, as one commit message would be),
and CPU milliseconds per 2 KB note (benign entries joined into 2,048-character notes, as a
commit note is at most 2 KB).  No network is used.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import importlib.util
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
MARK = "[REDACTED]"

# A redactor takes a batch of texts and returns, per text, (new_text, number_of_findings).
Redactor = Callable[[list[str]], list[tuple[str, int]]]


def apply_values(text: str, values: Iterable[str]) -> str:
    """Replace every occurrence of each reported value, longest first."""
    for value in sorted({v for v in values if v}, key=len, reverse=True):
        text = text.replace(value, MARK)
    return text


def apply_spans(text: str, spans: Iterable[tuple[int, int]]) -> str:
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    for start, end in reversed(merged):
        text = text[:start] + MARK + text[end:]
    return text


def per_text(fn: Callable[[str], tuple[str, int]]) -> Redactor:
    return lambda texts: [fn(t) for t in texts]


# ----------------------------------------------------------------------------- detectors


def _gitvault() -> Redactor:
    sys.path.insert(0, str(REPO))
    fn: Any = None
    # Where the filter has lived: today's home first, then older releases' (to compare them).
    homes = (
        ("gitvault.scrub.engine", "scrub_secrets"),
        ("gitvault.memory.redact", "redact_secrets"),
        ("gitvault.textclean", "redact_secrets"),
        ("gitvault.redact", "redact_secrets"),
    )
    for module, name in homes:
        try:
            fn = getattr(importlib.import_module(module), name)
            break
        except (ImportError, AttributeError):
            continue
    if fn is None:
        raise ImportError("no secret filter found under gitvault/ (gitvault.scrub.engine)")

    def run(text: str) -> tuple[str, int]:
        new, found = fn(text)
        return new, len(found)

    return per_text(run)


_ENTROPY_PLUGINS = ("Base64HighEntropyString", "HexHighEntropyString")


def _detect_secrets(plugins: str = "default", extra: Sequence[dict[str, Any]] = ()) -> Redactor:
    """Yelp detect-secrets (or a fork), scanning each line with the ad-hoc ``scan_line`` API."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import cache_bust, configure_settings_from_baseline, get_plugins

    names: list[str] = []
    if plugins != "none":  # (the class mapping is cached: don't build it before custom paths)
        names = [cls.__name__ for cls in get_mapping_from_secret_type_to_class().values()]
    if plugins == "no-entropy":
        names = [n for n in names if n not in _ENTROPY_PLUGINS]
    elif plugins == "regex-only":
        names = [n for n in names if n not in _ENTROPY_PLUGINS and n != "KeywordDetector"]
    used: list[dict[str, Any]] = [{"name": n} for n in names if n not in {e["name"] for e in extra}]
    used.extend(extra)
    cache_bust()  # this worker process scans with these settings only
    configure_settings_from_baseline({"plugins_used": used})
    limits = {type(p).__name__: getattr(p, "entropy_limit", None) for p in get_plugins()}
    entropy = {type(p).__name__: p for p in get_plugins() if hasattr(p, "entropy_limit")}
    by_type = {getattr(p, "secret_type", ""): type(p).__name__ for p in get_plugins()}

    def run(text: str) -> tuple[str, int]:
        values: list[str] = []
        for line in text.splitlines():
            for secret in scan_line(line):
                plugin = by_type.get(secret.type, "")
                value = secret.secret_value or ""
                if plugin in entropy:
                    # scan_line is the ad-hoc API: it reports entropy candidates *below* the
                    # limit too (the CLI prints them as "False (3.1)"); apply the limit here.
                    limit = limits[plugin]
                    if entropy[plugin].calculate_shannon_entropy(value) <= limit:
                        continue
                values.append(value)
        return apply_values(text, values), len(values)

    return per_text(run)


def _llm_guard_plugins() -> list[dict[str, Any]]:
    """The detect-secrets plugin list that llm-guard's Secrets scanner ships (gitleaks-derived).

    llm_guard/__init__ pulls in torch & co, so the plugin files are located without importing it.
    """
    spec = importlib.util.find_spec("llm_guard")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("llm_guard is not installed")
    source = Path(list(spec.submodule_search_locations)[0]) / "input_scanners" / "secrets.py"
    text = source.read_text(encoding="utf-8")
    start = text.index("_default_detect_secrets_config = ")
    end = text.index("\n}\n", start) + 2
    plugin_dir = source.parent / "secrets_plugins"
    namespace: dict[str, Any] = {"_custom_plugins_path": "file://" + str(plugin_dir)}
    exec(text[start:end], namespace)  # a literal dict in their source  # noqa: S102
    return list(namespace["_default_detect_secrets_config"]["plugins_used"])


def _llm_guard(entropy: bool = True) -> Redactor:
    plugins = _llm_guard_plugins()
    if not entropy:
        plugins = [p for p in plugins if p["name"] not in _ENTROPY_PLUGINS]
    return _detect_secrets(plugins="none", extra=plugins)


def _ms_masker() -> Redactor:
    from microsoft_security_utilities_secret_masker import (
        SecretMasker,
        load_regex_patterns_from_json_file,
    )

    patterns = load_regex_patterns_from_json_file("PreciselyClassifiedSecurityKeys.json").union(
        load_regex_patterns_from_json_file("UnclassifiedPotentialSecurityKeys.json")
    )
    masker = SecretMasker(patterns)

    def run(text: str) -> tuple[str, int]:
        found = masker.detect_secrets(text)
        return apply_spans(text, [(d.start, d.end) for d in found]), len(found)

    return per_text(run)


def _trufflehog3(entropy: bool) -> Redactor:
    from trufflehog3.core import DEFAULT_RULES_FILE, load_rules
    from trufflehog3.models import Entropy, Severity

    rules = load_rules(DEFAULT_RULES_FILE, Severity.LOW)
    if not entropy:
        rules = [r for r in rules if not isinstance(r, Entropy)]

    def run(text: str) -> tuple[str, int]:
        values = [m for line in text.splitlines() for r in rules for m in r.findall(line)]
        return apply_values(text, values), len(values)

    return per_text(run)


def _whispers() -> Redactor:
    import logging

    from whispers.core.args import parse_args
    from whispers.main import run as whispers_run

    logging.disable(logging.CRITICAL)

    def batch(texts: list[str]) -> list[tuple[str, int]]:
        # whispers scans files; its default config skips paths containing "test", "example"...
        with tempfile.TemporaryDirectory(prefix="wsp") as tmp:
            root = Path(tmp) / "notes"
            root.mkdir()
            for i, text in enumerate(texts):
                (root / f"n{i:06d}.txt").write_text(text, encoding="utf-8")
            found: dict[int, list[str]] = defaultdict(list)
            for pair in whispers_run(parse_args([str(root)])):
                idx = int(Path(pair.file).stem[1:])
                found[idx].append(str(pair.value))
        return [(apply_values(t, found[i]), len(found[i])) for i, t in enumerate(texts)]

    return batch


def _prototype(library: bool) -> Redactor:
    sys.path.insert(0, str(HERE))
    proto = importlib.import_module("prototype")
    return per_text(proto.redact if library else proto.redact_rules_only)


@dataclass
class Detector:
    name: str
    build: Callable[[], Redactor]
    modules: tuple[str, ...]
    dist: str  # distribution whose version is reported (and whose presence is required)
    note: str = ""
    conflicts: tuple[str, ...] = field(default=())


DETECTORS: list[Detector] = [
    Detector("gitvault", _gitvault, (), "", "gitvault.scrub: the rule set gitvault ships"),
    Detector(
        "detect-secrets",
        lambda: _detect_secrets("default"),
        ("detect_secrets",),
        "detect-secrets",
        "Yelp, all plugins incl. keyword + entropy",
        conflicts=("bc-detect-secrets",),
    ),
    Detector(
        "detect-secrets-no-entropy",
        lambda: _detect_secrets("no-entropy"),
        ("detect_secrets",),
        "detect-secrets",
        "without Base64/Hex entropy plugins",
        conflicts=("bc-detect-secrets",),
    ),
    Detector(
        "detect-secrets-regex-only",
        lambda: _detect_secrets("regex-only"),
        ("detect_secrets",),
        "detect-secrets",
        "without entropy and keyword plugins",
        conflicts=("bc-detect-secrets",),
    ),
    Detector(
        "bc-detect-secrets",
        lambda: _detect_secrets("default"),
        ("detect_secrets",),
        "bc-detect-secrets",
        "Bridgecrew/Prisma fork, all plugins",
    ),
    Detector(
        "bc-detect-secrets-no-entropy",
        lambda: _detect_secrets("no-entropy"),
        ("detect_secrets",),
        "bc-detect-secrets",
        "fork, without entropy plugins",
    ),
    Detector(
        "llm-guard-secrets",
        _llm_guard,
        ("detect_secrets",),
        "llm-guard",
        "llm-guard's Secrets scanner config: ~95 gitleaks-style plugins on bc-detect-secrets",
    ),
    Detector(
        "llm-guard-secrets-no-entropy",
        lambda: _llm_guard(entropy=False),
        ("detect_secrets",),
        "llm-guard",
        "the same plugins without the two entropy plugins",
    ),
    Detector(
        "ms-secret-masker",
        _ms_masker,
        ("microsoft_security_utilities_secret_masker",),
        "microsoft-security-utilities-secret-masker",
        "precise + unclassified patterns",
    ),
    Detector(
        "trufflehog3",
        lambda: _trufflehog3(True),
        ("trufflehog3",),
        "trufflehog3",
        "default rules incl. entropy",
    ),
    Detector(
        "trufflehog3-no-entropy",
        lambda: _trufflehog3(False),
        ("trufflehog3",),
        "trufflehog3",
        "default regex rules only",
    ),
    Detector("whispers", _whispers, ("whispers",), "whispers", "plaintext plugin on .txt files"),
    Detector(
        "prototype",
        lambda: _prototype(True),
        ("detect_secrets",),
        "detect-secrets",
        "bench/secrets/prototype.py: detect-secrets provider plugins + our rules",
        conflicts=("bc-detect-secrets",),
    ),
    Detector(
        "prototype-rules-only",
        lambda: _prototype(False),
        (),
        "",
        "bench/secrets/prototype.py: our rules alone, stdlib only",
    ),
]


def available_here(det: Detector) -> bool:
    for mod in det.modules:
        if importlib.util.find_spec(mod) is None:
            return False
    if det.dist:
        try:
            importlib.metadata.version(det.dist)
        except importlib.metadata.PackageNotFoundError:
            return False
    for other in det.conflicts:
        try:
            importlib.metadata.version(other)
            return False
        except importlib.metadata.PackageNotFoundError:
            pass
    return True


# ----------------------------------------------------------------------------- measuring


def load_jsonl(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def two_kb_notes(benign: list[dict[str, str]], count: int = 300, seed: int = 2) -> list[str]:
    """``count`` notes of 2,048 characters, each made of random benign entries."""
    rng = random.Random(seed)
    notes = []
    for _ in range(count):
        parts: list[str] = []
        while sum(len(p) + 2 for p in parts) < 2048:
            parts.append(rng.choice(benign)["text"])
        notes.append("\n\n".join(parts)[:2048])
    return notes


def measure(det: Detector, corpus: list[dict[str, str]], benign: list[dict[str, str]]) -> dict:
    t0 = time.perf_counter()
    redactor = det.build()
    setup_s = time.perf_counter() - t0
    version = importlib.metadata.version(det.dist) if det.dist else ""

    outputs = redactor([row["text"] for row in corpus])
    per_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses: list[dict[str, str]] = []
    for row, (new, _n) in zip(corpus, outputs, strict=True):
        per_kind[row["kind"]][1] += 1
        # a split value (``parts``) is redacted only when none of its fragments is left
        if any(part in new for part in row.get("parts") or [row["secret"]]):
            misses.append({"kind": row["kind"], "text": row["text"][:160]})
        else:
            per_kind[row["kind"]][0] += 1

    texts = [row["text"] for row in benign]
    t1 = time.perf_counter()
    b_out = redactor(texts)
    bench_s = time.perf_counter() - t1
    fps = [
        {"source": row["source"], "text": row["text"][:200], "output": new[:200], "n": n}
        for row, (new, n) in zip(benign, b_out, strict=True)
        if new != row["text"] or n
    ]
    lines = sum(t.count("\n") + 1 for t in texts)
    notes = two_kb_notes(benign)
    t2 = time.process_time()  # CPU time: a busy machine inflates wall time, not this much
    redactor(notes)
    note_s = (time.process_time() - t2) / len(notes)
    caught = len(corpus) - len(misses)
    return {
        "name": det.name,
        "note": det.note,
        "version": version,
        "caught": caught,
        "total": len(corpus),
        "recall": caught / len(corpus),
        "per_kind": dict(per_kind),
        "misses": misses,
        "fp": len(fps),
        "benign": len(benign),
        "fp_rate": len(fps) / len(benign),
        "fp_examples": fps,
        "setup_s": setup_s,
        "bench_s": bench_s,
        "lines": lines,
        "lines_per_s": lines / bench_s if bench_s else math.inf,
        "ms_per_2kb_note": note_s * 1000,
        "python": sys.executable,
    }


def worker(name: str, corpus_path: Path, benign_path: Path) -> None:
    det = next(d for d in DETECTORS if d.name == name)
    result = measure(det, load_jsonl(corpus_path), load_jsonl(benign_path))
    json.dump(result, sys.stdout)


def run_in(python: str, name: str, args: argparse.Namespace) -> dict | None:
    cmd = [
        python,
        str(Path(__file__).resolve()),
        "--worker",
        name,
        "--corpus",
        str(args.corpus),
        "--benign",
        str(args.benign),
    ]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        print(f"[{name}] failed under {python}:\n{proc.stderr[-2000:]}", file=sys.stderr)
        return None
    result: dict = json.loads(proc.stdout)
    result["process_s"] = time.perf_counter() - t0
    return result


def probe(python: str, name: str) -> bool:
    cmd = [python, str(Path(__file__).resolve()), "--probe", name]
    return subprocess.run(cmd, capture_output=True, check=False).returncode == 0


def import_seconds(python: str, modules: Sequence[str]) -> float | None:
    """Cold wall time of importing the detector's modules, minus a bare interpreter start."""
    if not modules:
        return None

    def wall(code: str) -> float:
        best = math.inf
        for _ in range(3):
            t0 = time.perf_counter()
            subprocess.run([python, "-c", code], capture_output=True, check=False)
            best = min(best, time.perf_counter() - t0)
        return best

    return max(0.0, wall("import " + ", ".join(modules)) - wall("pass"))


# ----------------------------------------------------------------------------- report


def print_report(results: list[dict], verbose: int) -> None:
    header = (
        f"{'detector':30} {'version':10} {'recall':>14} {'FP rate':>16} "
        f"{'lines/s':>9} {'cpu ms/2K':>9} {'import s':>8} {'setup s':>8}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        imp = "" if r.get("import_s") is None else f"{r['import_s']:.2f}"
        print(
            f"{r['name']:30} {r['version'][:10]:10} "
            f"{r['recall']:6.1%} {r['caught']:3}/{r['total']:<3} "
            f"{r['fp_rate']:6.2%} {r['fp']:4}/{r['benign']:<5} "
            f"{r['lines_per_s']:9.0f} {r['ms_per_2kb_note']:9.3f} {imp:>8} {r['setup_s']:8.2f}"
        )
    for r in results:
        print(f"\n== {r['name']} ({r['note']})")
        missed = {k: v for k, v in sorted(r["per_kind"].items()) if v[0] < v[1]}
        print(
            f"  missed kinds ({len(missed)}): "
            + ", ".join(f"{k} {v[1] - v[0]}/{v[1]}" for k, v in missed.items())
        )
        if verbose:
            for m in r["misses"][: 50 if verbose > 1 else 10]:
                print(f"    miss [{m['kind']}] {m['text']!r}")
            by_src: dict[str, int] = defaultdict(int)
            for fp in r["fp_examples"]:
                by_src[fp["source"].split(":")[0]] += 1
            print(f"  false positives by source: {dict(by_src)}")
            for fp in r["fp_examples"][: 40 if verbose > 1 else 8]:
                print(f"    FP [{fp['source']}] {fp['text']!r}\n       -> {fp['output']!r}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--detector", action="append", help="detector name (repeatable)")
    parser.add_argument(
        "--python",
        action="append",
        default=[],
        help="other interpreter to run detectors that do not import here",
    )
    parser.add_argument("--corpus", type=Path, default=HERE / "corpus.jsonl")
    parser.add_argument("--benign", type=Path, default=HERE / "benign.jsonl")
    parser.add_argument("--json", type=Path, help="also write all results to this file")
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="list misses and false positives (-vv: more)",
    )
    parser.add_argument("--list", action="store_true", help="list detectors and exit")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.probe:
        det = next((d for d in DETECTORS if d.name == args.probe), None)
        return 0 if det and available_here(det) else 1
    if args.worker:
        worker(args.worker, args.corpus, args.benign)
        return 0
    if args.list:
        for d in DETECTORS:
            print(f"{d.name:30} {d.note}")
        return 0

    wanted = args.detector or [d.name for d in DETECTORS]
    unknown = set(wanted) - {d.name for d in DETECTORS}
    if unknown:
        parser.error(f"unknown detector(s): {', '.join(sorted(unknown))}")
    interpreters = [sys.executable, *args.python]
    results = []
    for det in DETECTORS:
        if det.name not in wanted:
            continue
        python = next((p for p in interpreters if probe(p, det.name)), None)
        if python is None:
            print(f"[{det.name}] skipped: not importable in {interpreters}", file=sys.stderr)
            continue
        result = run_in(python, det.name, args)
        if result is None:
            continue
        result["import_s"] = import_seconds(python, det.modules)
        results.append(result)
    print_report(results, args.verbose)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0 if results else 1


if __name__ == "__main__":
    sys.exit(main())
