"""The recall block (what SessionStart injects and `gitvault recall` prints): fenced, digest
first, then the two newest sessions' Summary / Key Decisions / Next Steps (≤ 600 characters
each), then patterns (vault + user folder, ≤ 25 lines); never over 9,500 characters, whatever
the vault holds; what is dropped is named in one `[omitted: …]` line."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitvault.memory import recall, sessions
from gitvault.resolve import resolve
from gitvault.vault import frontmatter
from tests.support.claude_hooks import run_hook, sample
from tests.support.memory import set_config, vault_of
from tests.support.repos import Repo

BEGIN, END = "=== VAULT RECALL ===", "=== END VAULT RECALL ==="
LIMIT = 9500
TZ = timezone(timedelta(hours=1))


def save(
    repo: Repo,
    title: str,
    moment: datetime,
    *,
    summary: str = "",
    decisions: str = "",
    next_steps: str = "",
) -> str:
    text = (
        f"## Summary\n{summary or title + ' summary.'}\n\n"
        f"## Key Decisions\n{decisions or '- ' + title + ' decision'}\n\n"
        f"## Next Steps\n{next_steps or '- ' + title + ' next'}\n"
    )
    return sessions.save_session(resolve(repo.path), text, title=title, now=moment).slug


def put(repo: Repo, files: dict[str, str], message: str = "test: write vault files") -> None:
    vault_of(repo).commit({k: v.encode() for k, v in files.items()}, message)


def omitted_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("[omitted: ")]


def section(text: str, name: str, session_slug: str) -> str:
    """One section's text inside one session's part of the block."""
    part = text[text.index(f"Session s:{session_slug}") :]
    part = part[: part.find("\n\n") if "\n\n" in part else len(part)]
    match = re.search(
        rf"^{name}:\n(.*?)(?=\n(?:Summary|Key Decisions|Next Steps):\n|\Z)", part, re.S | re.M
    )
    assert match, f"no {name} in {part!r}"
    return match.group(1)


@pytest.fixture
def user_patterns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "user-patterns"
    folder.mkdir()
    monkeypatch.setenv("GITVAULT_PATTERNS_DIR", str(folder))
    return folder


def test_block_layout_digest_then_two_newest_sessions_then_patterns(
    repo: Repo, user_patterns: Path
) -> None:
    repo.commit("feat: add the parser")
    repo.commit("fix: parser crash on empty input")
    base = datetime(2026, 1, 5, 12, 0, 5, tzinfo=TZ)
    old = save(repo, "Oldest work", base)
    # Same minute, so the names sort one way and the save times the other way.
    zeta = save(repo, "Zeta earlier", base + timedelta(minutes=1, seconds=1))
    alpha = save(repo, "Alpha latest", base + timedelta(minutes=1, seconds=40))
    assert repo.gv("fold", "--merger", "builtin").code == 0
    put(
        repo,
        {
            "patterns/style.md": "# Style\n- Run `just lint` before a commit\n"
            "* Tabs, never spaces\nnot a pattern line\n"
        },
    )
    (user_patterns / "mine.md").write_text("- Prefer small commits\n", "utf-8")
    (user_patterns / "ignored.txt").write_text("- not markdown\n", "utf-8")

    result = recall.build(repo.path)
    text = result.text

    assert text.startswith(BEGIN + "\n\n") and text.endswith("\n\n" + END)
    assert len(text) <= LIMIT and result.has_digest and not result.omitted
    assert omitted_lines(text) == []
    digest_at = text.index("Project memory digest (folded ")
    master = frontmatter.parse(repo.show("_master.md").decode())[1].strip()
    assert master in text, "the whole digest body, verbatim"
    alpha_at, zeta_at = text.index(f"Session s:{alpha} "), text.index(f"Session s:{zeta} ")
    patterns_at = text.index("Standing patterns:\n")
    assert digest_at < alpha_at < zeta_at < patterns_at
    assert result.sessions == [alpha, zeta]
    assert f"s:{old} " not in text, "only the two newest sessions"
    for name, want in (
        ("Summary", "Alpha latest summary."),
        ("Key Decisions", "- Alpha latest decision"),
        ("Next Steps", "- Alpha latest next"),
    ):
        assert section(text, name, alpha) == want
    assert text[patterns_at:].splitlines()[1:4] == [
        "- Run `just lint` before a commit",
        "- Tabs, never spaces",
        "- Prefer small commits",
    ]
    assert "not markdown" not in text and "not a pattern line" not in text


def test_session_sections_are_capped_at_600_characters(repo: Repo) -> None:
    moment = datetime(2026, 1, 5, 9, 30, tzinfo=TZ)
    slug = save(
        repo,
        "Long one",
        moment,
        summary="\n".join(f"summary line {i} " * 6 for i in range(40)),
        decisions="\n".join(f"- decision {i} " * 5 for i in range(40)),
        next_steps="- short next step",
    )
    text = recall.build(repo.path).text
    summary = section(text, "Summary", slug)
    decisions = section(text, "Key Decisions", slug)
    assert len(summary) <= 600 and summary.endswith("[… Summary cut at 600 characters]")
    assert len(decisions) <= 600 and decisions.endswith("[… Key Decisions cut at 600 characters]")
    assert summary.startswith("summary line 0 ")
    assert section(text, "Next Steps", slug) == "- short next step"


def test_pattern_lines_are_capped_at_25_and_the_rest_is_named(
    repo: Repo, user_patterns: Path
) -> None:
    put(repo, {"patterns/a.md": "".join(f"- vault rule {i}\n" for i in range(30))})
    (user_patterns / "u.md").write_text("".join(f"- user rule {i}\n" for i in range(20)), "utf-8")
    text = recall.build(repo.path).text
    shown = [
        ln
        for ln in text.splitlines()
        if ln.startswith("- vault rule ") or ln.startswith("- user rule ")
    ]
    assert shown == [f"- vault rule {i}" for i in range(25)]
    assert omitted_lines(text) == ["[omitted: 25 pattern lines]"]


def _huge_digest(chars: int) -> str:
    meta = {
        "kind": "digest",
        "watermark": "0" * 40,
        "folded_at": "2026-01-05T12:00:00+01:00",
        "merger": "builtin",
    }
    categories = ("Architecture", "Decisions", "Conventions", "Gotchas", "State", "Next steps")
    lines, n = ["# Project memory", ""], 0
    while sum(len(x) + 1 for x in lines) < chars:
        if n % 50 == 0:
            lines += ["", f"## {categories[(n // 50) % 6]}"]
        lines.append(f"- fact number {n:05d} about the system, which matters a lot (c:{n:07x})")
        n += 1
    return frontmatter.render(meta, "\n".join(lines) + "\n")


def _fill_huge_vault(repo: Repo, user_patterns: Path) -> list[str]:
    digest = _huge_digest(50_000)
    assert len(digest) >= 50_000
    put(repo, {"_master.md": digest}, "fold: a huge digest written directly")
    moment = datetime(2026, 1, 5, 10, 0, tzinfo=TZ)
    slugs = []
    for i in range(3):
        big = "\n".join(f"- item {j} of session {i} " + "x" * 80 for j in range(60))
        slugs.append(
            save(
                repo,
                f"Big session {i} with a rather long descriptive title for the slug",
                moment + timedelta(minutes=i),
                summary=big,
                decisions=big,
                next_steps=big,
            )
        )
    put(
        repo,
        {"patterns/many.md": "".join(f"- vault pattern {i} " + "p" * 60 + "\n" for i in range(60))},
    )
    (user_patterns / "many.md").write_text(
        "".join(f"- user pattern {i}\n" for i in range(40)), "utf-8"
    )
    return slugs


def test_a_50000_character_digest_still_injects_at_most_9500(
    repo: Repo, user_patterns: Path
) -> None:
    slugs = _fill_huge_vault(repo, user_patterns)

    repo.git("config", "gitvault.agents", "claude")  # the fixture installed with --no-claude
    hook = run_hook("session-start", sample("SessionStart:startup", repo=repo), repo=repo)
    assert hook.returncode == 0 and hook.stderr == ""
    output = json.loads(hook.stdout)
    assert list(output) == ["hookSpecificOutput"]
    assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    block = output["hookSpecificOutput"]["additionalContext"]

    assert len(block) <= LIMIT
    assert block.startswith(BEGIN) and block.endswith(END)
    (line,) = omitted_lines(block)
    assert "digest beyond 6,000 of " in line and "100 pattern lines" not in line
    assert "75 pattern lines" in line
    # The newest session fits after the capped digest; what does not fit is named.
    assert f"Session s:{slugs[2]} " in block
    for name in ("session " + slugs[1], "patterns"):
        assert name in line
    assert "[… digest cut at 6000 characters]" in block
    # `gitvault recall` prints exactly what the hook injected.
    printed = repo.gv_proc("recall")
    assert printed.code == 0 and printed.out == block + "\n"


def test_the_cap_holds_even_when_vault_toml_asks_for_more(repo: Repo, user_patterns: Path) -> None:
    _fill_huge_vault(repo, user_patterns)
    set_config(repo, "recall", max_chars=50_000, section_chars=5_000, pattern_lines=500, sessions=3)
    result = recall.build(repo.path)
    assert len(result.text) <= LIMIT
    assert len(omitted_lines(result.text)) == 1
    assert len(result.sessions) == 3


@pytest.mark.parametrize("max_chars", [3_000, 8_000])
def test_the_digest_is_cut_at_the_configured_digest_cap(repo: Repo, max_chars: int) -> None:
    put(repo, {"_master.md": _huge_digest(20_000)}, "fold: a digest over every cap")
    set_config(repo, "digest", max_chars=max_chars)
    text = recall.build(repo.path).text
    assert f"[… digest cut at {max_chars} characters]" in text
    (line,) = omitted_lines(text)
    assert f"digest beyond {max_chars:,} of " in line
    facts = [ln for ln in text.splitlines() if ln.startswith("- fact number ")]
    shown = sum(len(ln) + 1 for ln in facts)
    assert max_chars - 200 < shown <= max_chars


def test_no_digest_yet_says_so_with_the_number_of_notes_waiting(repo: Repo) -> None:
    for i in range(3):
        repo.commit(f"feat: step {i}")
    save(repo, "First session", datetime(2026, 1, 5, 8, 0, tzinfo=TZ))
    notes = len(repo.note_paths())
    assert notes == 3

    result = recall.build(repo.path)

    assert not result.has_digest
    assert "No digest yet: 3 commit notes and 1 session are waiting for a fold" in result.text
    assert "Project memory digest" not in result.text


def test_stored_recall_text_is_never_nested(repo: Repo) -> None:
    """A session file holding a recall block (written past `save`, which strips it) does not
    open a second fence inside the block."""
    body = (
        f"# Odd\n\n## Summary\nreal work\n{BEGIN}\nOLD-MEMORY\n{END}\n\n"
        "## Key Decisions\n- one\n\n## Next Steps\n- two\n"
    )
    meta = {
        "kind": "session",
        "slug": "2026-01-05-0800-odd",
        "title": "Odd",
        "saved_at": "2026-01-05T08:00:00+01:00",
        "mode": "manual",
    }
    put(repo, {"sessions/2026-01-05-0800-odd.md": frontmatter.render(meta, body)})
    text = recall.build(repo.path).text
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    assert "OLD-MEMORY" not in text and "real work" in text


def test_recall_cli_json_and_text_agree(repo: Repo, user_patterns: Path) -> None:
    repo.commit("feat: something")
    (user_patterns / "emoji.md").write_text("- ship it :rocket: [bold]now[/bold]\n", "utf-8")
    assert repo.gv("fold", "--merger", "builtin").code == 0
    text = repo.gv("recall")
    data = repo.gv("recall", "--json").json("recall")
    assert text.code == 0 and text.out == data["text"] + "\n"
    assert data["chars"] == len(data["text"]) <= LIMIT
    assert data["has_digest"] is True and data["omitted"] == []
    assert "- ship it :rocket: [bold]now[/bold]" in text.out, "printed raw, not through rich"


def test_recall_outside_a_vault_and_with_an_unreadable_vault(repo_factory, tmp_path: Path) -> None:
    plain = repo_factory("plain", install=False)
    assert recall.build(plain.path).text == ""
    # The vault ref points at an object that is not there.
    (plain.git_dir / "refs" / "heads" / "vault").write_text("1" * 40 + "\n")
    with pytest.raises(Exception, match="cannot be read"):
        recall.build(plain.path)
    result = plain.gv("recall")
    assert result.code != 0 and "cannot be read" in result.err


def test_a_missing_session_object_gives_a_partial_block_and_a_warning(repo: Repo) -> None:
    keep = save(repo, "Kept session", datetime(2026, 1, 5, 8, 0, tzinfo=TZ))
    lost = save(repo, "Lost session", datetime(2026, 1, 5, 9, 0, tzinfo=TZ))
    oid = repo.git("rev-parse", f"vault:sessions/{lost}.md")
    (repo.common_dir / "objects" / oid[:2] / oid[2:]).unlink()

    result = recall.build(repo.path)

    assert f"Session s:{keep} " in result.text and lost not in result.text
    assert result.problems == [
        f"cannot read sessions/{lost}.md from the vault branch 'vault' (object {oid[:12]} missing)"
    ]
    printed = repo.gv("recall")
    assert printed.code == 0 and f"warning: cannot read sessions/{lost}.md" in printed.err


# --------------------------------------------------------------------------- the assembler

_names = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=120
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    required=st.integers(min_value=0, max_value=30_000),
    parts=st.lists(st.tuples(_names, st.integers(min_value=1, max_value=7_000)), max_size=6),
    already=st.lists(_names, max_size=3),
)
def test_assemble_never_exceeds_the_limit_and_names_every_dropped_part(
    required: int, parts: list[tuple[str, int]], already: list[str]
) -> None:
    optional = [(name, f"part {i}: " + "y" * size) for i, (name, size) in enumerate(parts)]
    omitted = list(already)
    text = recall._assemble(["d" * required], optional, LIMIT, omitted)

    assert len(text) <= LIMIT
    assert text.startswith(BEGIN + "\n\n") and text.endswith("\n\n" + END)
    dropped = [name for (name, body) in optional if body not in text]
    assert omitted == already + dropped
    if omitted:
        assert f"\n\n[omitted: {'; '.join(omitted)}]\n\n{END}" in text, "one whole omitted line"
    else:
        assert "[omitted: " not in text
