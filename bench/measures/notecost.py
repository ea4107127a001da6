"""The cost of one note write in a small vault and in a large one; the shared generated vaults
other measures (claude_hooks, search, hook_imports) use."""

from __future__ import annotations

import random
import time
from pathlib import Path

from harness import (
    git,
    git_out,
    median,
)
from registry import Measure, Row, Target
from repogen import HistorySpec, build_history, count_notes, fake_notes, populate_vault

from measures.common import Context, install, ms, state_dir


def vault_repos(ctx: Context) -> tuple[Path, Path]:
    """Two installed repositories whose vaults hold vault_small and vault_large generated
    notes (same project history; identical apart from the vault's size), repacked alike."""
    if "vaults" in ctx.cache:
        return ctx.cache["vaults"]
    sz = ctx.sizes
    made: list[Path] = []
    for label, count in (("small", sz.vault_small), ("large", sz.vault_large)):
        repo = ctx.box.repo_dir(f"vault-{label}")
        build_history(
            repo,
            HistorySpec(commits=sz.drain_writes + 5, seed=21, start=1_700_000_000, step=7 * 86_400),
        )
        git(["checkout", "-q", "main"], repo)
        install(repo)
        start = time.perf_counter()
        commits = populate_vault(repo, count)
        git(["repack", "-a", "-d", "-q"], repo)
        took = time.perf_counter() - start
        ctx.say(
            f"notecost: generated a {count:,}-note vault in {took:.1f} s "
            f"({commits} vault commits, repacked)"
        )
        ctx.cache[f"gen_{label}_s"] = took
        made.append(repo)
    ctx.cache["vaults"] = (made[0], made[1])
    return made[0], made[1]


def bench_notecost(ctx: Context) -> list[Row]:
    from gitvault.notes.drain import Entry, drain
    from gitvault.resolve import resolve
    from gitvault.vault.statedir import SPOOL
    from gitvault.vault.store import Vault

    sz = ctx.sizes
    small, large = vault_repos(ctx)
    n_small, n_large = count_notes(small), count_notes(large)

    # The same new notes for both vaults, dated on random days inside the vault's span.
    rng = random.Random(5)
    writes = fake_notes(sz.note_writes, years=5, seed=99)
    rng.shuffle(writes)
    vaults = {small: Vault(resolve(small)), large: Vault(resolve(large))}
    times: dict[Path, list[float]] = {small: [], large: []}
    ctx.say(f"notecost: {sz.note_writes} single-note Vault.commit writes per vault, interleaved")
    for i, fake in enumerate(writes):
        order = [small, large] if i % 2 == 0 else [large, small]
        for repo in order:
            start = time.perf_counter()
            vaults[repo].commit({fake.path: fake.text}, fake.message)
            times[repo].append(time.perf_counter() - start)
    ratio = median(times[large]) / median(times[small])

    # The drainer path: one spooled commit, drained in-process, per sample.
    ctx.say(f"notecost: {sz.drain_writes} single-commit drains per vault, interleaved")
    shas = git_out(["rev-list", "--reverse", "main"], small).split()[-sz.drain_writes :]
    dtimes: dict[Path, list[float]] = {small: [], large: []}
    for i, sha in enumerate(shas):
        order = [small, large] if i % 2 == 0 else [large, small]
        for repo in order:
            git_dir = str(resolve(repo).git_dir)
            line = Entry("commit", sha, "main", "main", git_dir).line()
            with open(state_dir(repo) / SPOOL, "a", encoding="utf-8") as fh:
                fh.write(line + "\n")
            start = time.perf_counter()
            wrote = drain(resolve(repo), block=True)
            dtimes[repo].append(time.perf_counter() - start)
            if wrote != 1:
                raise RuntimeError(f"drain of one spooled commit wrote {wrote} notes")
    dratio = median(dtimes[large]) / median(dtimes[small])

    how = (
        f"Two repositories whose vault branches hold {n_small:,} and {n_large:,} notes, generated "
        f"straight into date-sharded trees over 5 years (fast-import pack for the blobs, pygit2 "
        f"TreeBuilder for the trees, one commit per year; generating the large one took "
        f"{ctx.cache.get('gen_large_s', 0):.1f} s), both repacked. Then {sz.note_writes} new notes "
        f"(same paths and bytes in both, on random days inside the span) are written one by one "
        f"with `Vault.commit` (the store's real CAS write path), interleaved between the vaults. "
        f"Median per write: {ms(median(times[small]))} at {n_small:,} notes, "
        f"{ms(median(times[large]))} at {n_large:,}."
    )
    dhow = (
        f"{sz.drain_writes} real project commits, each spooled as a post-commit line and drained "
        f"in-process with `gitvault.notes.drain.drain(loc, block=True)` (git log + render + schema "
        f"check + Vault.commit_many), interleaved. Median: {ms(median(dtimes[small]))} at "
        f"{n_small:,} notes, {ms(median(dtimes[large]))} at {n_large:,}."
    )
    return [
        Row(
            "write_ratio",
            f"One note write, {n_large:,} vs {n_small:,} notes (Vault.commit)",
            ratio,
            "×",
            shown=f"{ratio:.2f}× ({ms(median(times[large]))} vs {ms(median(times[small]))})",
            target="write_ratio",
            how=how,
            details={"small_s": times[small], "large_s": times[large], "ratio": ratio},
        ),
        Row(
            "drain_ratio",
            f"One spooled commit drained, {n_large:,} vs {n_small:,} notes",
            dratio,
            "×",
            shown=f"{dratio:.2f}× ({ms(median(dtimes[large]))} vs {ms(median(dtimes[small]))})",
            how=dhow,
            details={"ratio": dratio},
        ),
    ]


MEASURES = (
    Measure(
        section="notecost",
        title="One note write, small vault vs large",
        run=bench_notecost,
        targets={"write_ratio": Target("<=", 1.3, "×")},
        about="A write costs the same whatever the vault's size: the store rewrites only the "
        "trees on the path of the new note (notes/YYYY/MM/DD), never the whole vault.",
        summary=("write_ratio",),
        order=40,
    ),
)
