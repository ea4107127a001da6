"""The digest (_master.md): parsing and validating a merger's answer, citations, caps in code."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gitvault.errors import FOLD_REJECTED, FoldRejected
from gitvault.fold import digest as digest_mod
from gitvault.vault.config import DEFAULT_VAULT_TOML, Category, VaultConfig, parse_vault_toml
from tests.support.memory import CATEGORIES, digest_answer

CONFIG = parse_vault_toml(DEFAULT_VAULT_TOML)
KNOWN = {("c", "1a2b3c4"), ("c", "deadbee"), ("s", "2026-01-02-0304-setup")}


def exists(kind: str, ident: str) -> bool:
    return (kind, ident) in KNOWN


def full_answer() -> str:
    return digest_answer(
        {
            "Architecture": ["- One orphan branch holds the memory (c:1a2b3c4)"],
            "Decisions": [
                "- Notes are written off the commit path (c:deadbee, s:2026-01-02-0304-setup)"
            ],
            "Conventions": ["- Exit codes are documented (c:1a2b3c4)"],
            "Gotchas": ["- pygit2 walks need Oid(hex=) (s:2026-01-02-0304-setup)"],
            "State": ["- Fold works (c:deadbee)"],
            "Next steps": ["- Write the README (s:2026-01-02-0304-setup)"],
        }
    )


def test_the_default_config_has_six_categories_with_caps() -> None:
    assert tuple(c.name for c in CONFIG.categories) == CATEGORIES
    assert all(c.cap > 0 for c in CONFIG.categories)
    assert CONFIG.digest_max_chars == 6000


def test_a_well_formed_answer_parses_into_the_configured_order() -> None:
    text = "\n".join(
        reversed(full_answer().split("\n\n"))
    )  # categories in reverse order: still accepted, rendered in configured order
    parsed = digest_mod.parse(text, CONFIG)
    assert list(parsed.categories) == list(CATEGORIES)
    assert parsed.categories["Gotchas"] == [
        "- pygit2 walks need Oid(hex=) (s:2026-01-02-0304-setup)"
    ]
    body = parsed.body()
    assert [ln[3:] for ln in body.splitlines() if ln.startswith("## ")] == list(CATEGORIES)


def test_headings_match_case_insensitively_and_bullets_are_normalised() -> None:
    text = (
        full_answer().replace("## Next steps", "## NEXT STEPS:").replace("## State", "##   state")
    )
    text = text.replace("- Fold works", "* Fold   works")
    parsed = digest_mod.parse("```markdown\n" + text + "\n```", CONFIG)
    assert parsed.categories["Next steps"] == ["- Write the README (s:2026-01-02-0304-setup)"]
    assert parsed.categories["State"] == ["- Fold works (c:deadbee)"]


def test_configured_category_names_are_the_ones_required() -> None:
    names = ("How it works", "Why", "Style", "Traps", "Now", "Todo")
    config = VaultConfig(categories=tuple(Category(n, 500) for n in names))
    text = "\n".join(f"## {n.upper()}\n- fact about {n} (c:1a2b3c4)\n" for n in names)
    parsed = digest_mod.parse(text, config)
    assert list(parsed.categories) == list(names)
    with pytest.raises(FoldRejected, match="do not exist"):
        digest_mod.parse(full_answer(), config)  # the default names are foreign here


def test_configured_names_from_vault_toml() -> None:
    toml = DEFAULT_VAULT_TOML.replace('name = "Gotchas"', 'name = "Pitfalls"')
    config = parse_vault_toml(toml)
    assert [c.name for c in config.categories][3] == "Pitfalls"
    parsed = digest_mod.parse(full_answer().replace("## Gotchas", "## pitfalls"), config)
    assert "Pitfalls" in parsed.categories


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda t: t.replace("## Conventions\n- Exit codes are documented (c:1a2b3c4)\n", ""),
            "lacks",
        ),
        (lambda t: t + "\n## Trivia\n- extra (c:1a2b3c4)\n", "do not exist"),
        (lambda t: t + "\n## gotchas\n- again (c:1a2b3c4)\n", "twice"),
        (lambda t: t.replace("- Fold works (c:deadbee)", "Fold works, in prose"), "empty"),
        (lambda t: t.replace("- Fold works (c:deadbee)", ""), "empty"),
        (lambda _: "I'm sorry, I can't help with that.", "lacks"),
        (lambda _: "", "lacks"),
        (lambda _: "<html><body>502 Bad Gateway</body></html>", "lacks"),
        (lambda t: t.replace("## ", "# "), "lacks"),
    ],
    ids=["missing", "extra", "duplicate", "prose-only", "empty", "refusal", "blank", "html", "h1"],
)
def test_malformed_answers_are_rejected(mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FoldRejected, match=message) as info:
        digest_mod.parse(mutate(full_answer()), CONFIG)
    assert info.value.exit_code == FOLD_REJECTED == 4


def test_placeholder_counts_as_known_nothing_not_as_empty() -> None:
    parsed = digest_mod.parse(digest_answer({}), CONFIG)
    assert all(lines == [] for lines in parsed.categories.values())
    assert parsed.body().count(digest_mod.PLACEHOLDER) == 6


def test_a_stored_digest_is_read_leniently() -> None:
    parsed = digest_mod.parse(
        "## State\n- only this (c:1a2b3c4)\n## Trivia\n- x\n", CONFIG, strict=False
    )
    assert parsed.categories["State"] == ["- only this (c:1a2b3c4)"]
    assert parsed.categories["Architecture"] == []


# --------------------------------------------------------------------------- citations


def test_lines_citing_unknown_sources_or_nothing_are_dropped_and_reported() -> None:
    text = full_answer().replace(
        "- Fold works (c:deadbee)",
        "- Fold works (c:deadbee)\n"
        "- Invented fact (c:0000000)\n"
        "- Half invented (c:deadbee, s:2099-01-01-0000-nope)\n"
        "- No source at all\n"
        "- Too short a sha (c:dead)",
    )
    parsed = digest_mod.parse(text, CONFIG)
    digest_mod.check_citations(parsed, exists)
    assert parsed.categories["State"] == ["- Fold works (c:deadbee)"]
    dropped = "\n".join(parsed.dropped)
    assert len(parsed.dropped) == 4
    assert "Invented fact" in dropped and "c:0000000" in dropped
    assert "Half invented" in dropped and "s:2099-01-01-0000-nope" in dropped
    assert "No source at all" in dropped and "cites no source" in dropped
    assert "Too short a sha" in dropped
    assert all(d.startswith("State: ") for d in parsed.dropped)


def test_urls_and_words_with_colons_are_not_citations() -> None:
    line = "- Docs live at https://example.com/docs; status: green (c:1a2b3c4)"
    assert digest_mod.citations(line) == [("c", "1a2b3c4")]


# --------------------------------------------------------------------------- caps


def lines_of(n: int, width: int, cite: str = "c:1a2b3c4") -> list[str]:
    return [f"- fact {i:04d} " + "x" * width + f" ({cite})" for i in range(n)]


def full(name: str) -> list[str]:
    """Lines that fill a category to just under its cap: it has nothing to give away."""
    cap = next(c.cap for c in CONFIG.categories if c.name == name)
    out: list[str] = []
    for line in lines_of(40, 60):
        if sum(len(ln) + 1 for ln in out) + len(line) + 1 > cap - 20:
            break
        out.append(line)
    return out


def test_a_category_over_its_cap_is_cut_at_a_line_boundary_with_a_marker() -> None:
    lines = lines_of(40, 60)
    others = {n: full(n) for n in CATEGORIES if n != "Gotchas"}
    parsed = digest_mod.parse(digest_answer({**others, "Gotchas": lines}), CONFIG)
    assert digest_mod.over_caps(parsed, CONFIG)[0] == "Gotchas"  # (and the whole digest)
    cap = digest_mod.effective_caps(parsed, CONFIG)["Gotchas"]
    own = next(c.cap for c in CONFIG.categories if c.name == "Gotchas")
    assert own <= cap <= own + 120 * len(others)  # only the others' last spare line or so
    digest_mod.enforce_caps(parsed, CONFIG)
    kept = parsed.categories["Gotchas"]
    assert sum(len(ln) + 1 for ln in kept) <= cap
    assert kept[:-1] == lines[: len(kept) - 1]  # whole lines, newest order kept, no half line
    assert kept[-1].startswith("- [… ") and f"{len(lines) - len(kept) + 1} more lines" in kept[-1]
    assert parsed.cut == ["Gotchas"]
    assert digest_mod.over_caps(parsed, CONFIG) == []


def test_budget_a_category_leaves_unused_flows_to_the_others() -> None:
    # Gotchas alone has 40 lines: the five empty categories' caps flow to it, so far more than
    # its own 900 characters survive, and the whole digest still fits its cap
    lines = lines_of(40, 60)
    parsed = digest_mod.parse(digest_answer({"Gotchas": lines}), CONFIG)
    assert digest_mod.over_caps(parsed, CONFIG) == []
    digest_mod.enforce_caps(parsed, CONFIG)
    assert parsed.categories["Gotchas"] == lines and parsed.cut == []
    assert len(parsed.body()) <= CONFIG.digest_max_chars
    # more than everything: the others' caps are used up, then the cut comes with a marker
    many = lines_of(90, 60)
    parsed = digest_mod.parse(digest_answer({"Gotchas": many}), CONFIG)
    digest_mod.enforce_caps(parsed, CONFIG)
    kept = parsed.categories["Gotchas"]
    assert 900 < sum(len(ln) + 1 for ln in kept) <= sum(c.cap for c in CONFIG.categories)
    assert kept[-1].startswith("- [… ") and kept[:-1] == many[: len(kept) - 1]
    assert parsed.counts()["Gotchas"] == len(kept) - 1  # the marker is no fact
    assert len(parsed.body()) <= CONFIG.digest_max_chars


def test_the_whole_digest_cap_is_enforced_with_a_marker() -> None:
    config = VaultConfig(
        categories=tuple(Category(n, 5000) for n in CATEGORIES), digest_max_chars=6000
    )
    answer = digest_answer({n: lines_of(12, 80) for n in CATEGORIES})
    parsed = digest_mod.parse(answer, config)
    assert len(parsed.body()) > 6000
    assert digest_mod.over_caps(parsed, config) == ["(whole digest)"]
    digest_mod.enforce_caps(parsed, config)
    body = parsed.body()
    assert len(body) <= 6000
    assert "more lines cut to fit the 6000-character cap" in body
    original = set(lines_of(12, 80))
    for name, lines in parsed.categories.items():
        assert lines, name
        for line in lines:
            assert line in original or line.startswith("- [… "), line  # cut between lines
    assert [ln[3:] for ln in body.splitlines() if ln.startswith("## ")] == list(CATEGORIES)


def test_the_default_caps_keep_any_digest_under_6000() -> None:
    parsed = digest_mod.parse(digest_answer({n: lines_of(60, 120) for n in CATEGORIES}), CONFIG)
    digest_mod.enforce_caps(parsed, CONFIG)
    assert len(parsed.body()) <= 6000
    assert set(parsed.cut) == set(CATEGORIES)


@settings(max_examples=60, deadline=None)
@given(
    widths=st.lists(
        st.lists(st.integers(min_value=0, max_value=400), min_size=0, max_size=40),
        min_size=len(CATEGORIES),
        max_size=len(CATEGORIES),
    ),
    cap=st.integers(min_value=200, max_value=3000),
    total=st.integers(min_value=1500, max_value=8000),
)
@example(widths=[[171]] * len(CATEGORIES), cap=200, total=1500)  # a name's length borrows
def test_caps_always_hold_after_enforcement(widths: list[list[int]], cap: int, total: int) -> None:
    """A category may use what the others leave unused (its effective cap), never more; all
    together never more than the configured caps; the whole body never more than its cap."""
    config = VaultConfig(
        categories=tuple(Category(n, cap) for n in CATEGORIES), digest_max_chars=total
    )
    per = {
        n: [f"- {n} {i} " + "y" * w + " (c:1a2b3c4)" for i, w in enumerate(ws)]
        for n, ws in zip(CATEGORIES, widths, strict=True)
    }
    parsed = digest_mod.parse(digest_answer(per), config)
    allowed = digest_mod.effective_caps(parsed, config)
    digest_mod.enforce_caps(parsed, config)
    sizes = {n: sum(len(ln) + 1 for ln in lines) for n, lines in parsed.categories.items()}
    for name, lines in parsed.categories.items():
        assert sizes[name] <= allowed[name], name
        assert all(ln.startswith("- ") for ln in lines)
    assert sum(sizes.values()) <= cap * len(CATEGORIES)
    assert len(parsed.body()) <= total
