"""The real-history judge proven on small repositories built here with real git: renames,
deleted files, a revert of a revert, a re-land (same patch-id), tags, subject conventions,
co-change and hot-spot counts. If these rules are wrong, every figure bench/real reports is."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.real.history import History  # noqa: E402
from bench.real.truth import Judge, LineVerdict, digest_lines  # noqa: E402

DAY = 86_400
START = 1_700_000_000


class Builder:
    """Commits with fixed, increasing dates, so tags and windows are deterministic."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.clock = START
        self.shas: dict[str, str] = {}
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str, when: int | None = None) -> str:
        env = dict(os.environ)
        if when is not None:
            stamp = f"@{when} +0000"
            env.update(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
        proc = subprocess.run(
            ["git", *args], cwd=self.path, env=env, capture_output=True, text=True, check=True
        )
        return proc.stdout.strip()

    def tick(self) -> int:
        self.clock += DAY
        return self.clock

    def commit(self, name: str, subject: str, files: dict[str, str | None], body: str = "") -> str:
        for rel, text in files.items():
            target = self.path / rel
            if text is None:
                self.git("rm", "-q", rel)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            self.git("add", rel)
        message = subject + (f"\n\n{body}" if body else "")
        self.git("commit", "-q", "-m", message, when=self.tick())
        sha = self.git("rev-parse", "HEAD")
        self.shas[name] = sha
        return sha

    def revert(self, name: str, of: str) -> str:
        self.git("revert", "--no-edit", self.shas[of], when=self.tick())
        sha = self.git("rev-parse", "HEAD")
        self.shas[name] = sha
        return sha

    def mv(self, name: str, subject: str, old: str, new: str) -> str:
        self.git("mv", old, new)
        self.git("commit", "-q", "-m", subject, when=self.tick())
        self.shas[name] = self.git("rev-parse", "HEAD")
        return self.shas[name]

    def tag(self, name: str, at: str) -> None:
        self.git("tag", "-a", name, "-m", name, self.shas[at], when=self.tick())

    def short(self, name: str) -> str:
        return self.shas[name][:7]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Builder, History]]:
    b = Builder(tmp_path_factory.mktemp("history"))
    b.commit(
        "init",
        "Add the core",
        {
            "src/app/core.py": "x = 1\n",
            "README.md": "app\n",
            "CHANGES.rst": "changes\n",
            "tox.ini": "[tox]\n",
            "tests/test_core.py": "def test(): pass\n",
        },
    )
    for i in range(3):
        b.commit(
            f"fix{i}",
            f"Fix crash number {i} in the core",
            {"src/app/core.py": f"x = {i + 2}\n", "tests/test_core.py": f"def test(): {i}\n"},
        )
    b.mv("rename", "Rename the changelog to markdown", "CHANGES.rst", "CHANGES.md")
    b.commit("drop-tox", "Remove tox", {"tox.ini": None})
    b.tag("v1.0", "drop-tox")
    b.commit("feature", "Add feature toggles", {"src/app/feature.py": "on = True\n"})
    b.revert("revert-feature", "feature")
    b.revert("revert-revert", "revert-feature")
    b.commit("shlex", "Use shlex for quoting", {"src/app/shell.py": "import shlex\n"})
    b.revert("revert-shlex", "shlex")
    b.commit("reland", "Quote with shlex again", {"src/app/shell.py": "import shlex\n"})
    b.tag("v1.1", "reland")
    yield b, History.load("tiny", b.path, dict(os.environ))


def judge_line(history: History, line: str, category: str = "Gotchas") -> LineVerdict:
    return Judge(history).line(category, line)


def test_a_path_at_head_passes_a_deleted_one_fails(repo: tuple[Builder, History]) -> None:
    b, h = repo
    ok = judge_line(h, f"- The code lives in src/app/core.py and `README.md` (c:{b.short('init')})")
    assert ok.status == "pass", ok.reasons
    gone = judge_line(h, f"- tox.ini configures the test runs (c:{b.short('init')})")
    assert gone.status == "fail"
    assert any("tox.ini does not exist at HEAD" in r for r in gone.reasons)
    folder = judge_line(h, f"- Changes happen in src/app/ and lib/ (c:{b.short('init')})")
    assert [r for r in folder.reasons] == [
        "path: lib/ does not exist at HEAD (never existed in this history)"
    ]


def test_a_renamed_path_fails_unless_the_line_says_it_moved(repo: tuple[Builder, History]) -> None:
    b, h = repo
    stale = judge_line(
        h, f"- Every change comes with an entry in CHANGES.rst (c:{b.short('init')})"
    )
    assert stale.status == "fail"
    said = judge_line(
        h, f"- CHANGES.rst was renamed to CHANGES.md (c:{b.short('rename')})", "State"
    )
    assert said.status == "pass", said.reasons
    invented = judge_line(h, f"- NOTES.rst was renamed (c:{b.short('rename')})")
    assert invented.status in ("pass", "unverified")  # a name the history never had is no path


def test_citations_must_name_commits_and_a_line_must_cite(repo: tuple[Builder, History]) -> None:
    b, h = repo
    assert judge_line(h, "- The core is small (c:deadbee)").status == "fail"
    assert judge_line(h, "- The core is small").reasons == ["cite: cites nothing"]
    assert judge_line(h, f"- The core is small (c:{b.short('init')})").status == "pass"


def test_a_quote_must_be_a_cited_commits_subject(repo: tuple[Builder, History]) -> None:
    b, h = repo
    good = judge_line(h, f'- Latest: "Rename the changelog to …" (c:{b.short("rename")})')
    assert good.status == "pass", good.reasons
    bad = judge_line(h, f'- Latest: "Rename the changelog to markdown" (c:{b.short("init")})')
    assert bad.status == "fail"


def test_a_revert_line_must_cite_what_was_reverted(repo: tuple[Builder, History]) -> None:
    b, h = repo
    line = '- Reverted on {d}: "Use shlex for quoting" — re-landed later (c:{cites})'
    day = h.by_sha[b.shas["revert-shlex"]].committed[:10]
    without = judge_line(h, line.format(d=day, cites=b.short("revert-shlex")))
    assert "revert-cites-original" in {c.rule for c in without.checks if not c.ok}
    both = f"{b.short('revert-shlex')}, c:{b.short('shlex')}"
    full = judge_line(h, line.format(d=day, cites=both))
    assert full.status == "pass", full.reasons
    wrong_day = judge_line(h, line.format(d="1999-01-01", cites=both))
    assert "revert-date" in {c.rule for c in wrong_day.checks if not c.ok}
    # Citing the re-land as if it were the reverted commit is caught too.
    relanded = judge_line(
        h, line.format(d=day, cites=f"{b.short('revert-shlex')}, c:{b.short('reland')}")
    )
    assert "revert-cites-original" in {c.rule for c in relanded.checks if not c.ok}


def test_a_re_land_must_be_mentioned(repo: tuple[Builder, History]) -> None:
    b, h = repo
    day = h.by_sha[b.shas["revert-shlex"]].committed[:10]
    cites = f"{b.short('revert-shlex')}, c:{b.short('shlex')}"
    silent = judge_line(h, f'- Reverted on {day}: "Use shlex for quoting" (c:{cites})')
    failed = {c.rule: c.detail for c in silent.checks if not c.ok}
    assert "revert-relanded" in failed
    assert b.shas["reland"][:10] in failed["revert-relanded"]


def test_a_revert_that_was_reverted_is_wrong(repo: tuple[Builder, History]) -> None:
    b, h = repo
    cites = f"{b.short('revert-feature')}, c:{b.short('feature')}"
    day = h.by_sha[b.shas["revert-feature"]].committed[:10]
    v = judge_line(h, f'- Reverted on {day}: "Add feature toggles" — try again later (c:{cites})')
    assert [c.rule for c in v.checks if not c.ok] == ["revert-reverted"]
    said = judge_line(
        h, f'- Reverted on {day}: "Add feature toggles", and the revert was reverted (c:{cites})'
    )
    assert said.status == "pass", said.reasons


def test_the_latest_release_is_the_newest_tag(repo: tuple[Builder, History]) -> None:
    b, h = repo
    assert h.tags[0].name == "v1.1"
    newest = judge_line(h, f"- Latest release: v1.1 (c:{b.short('reland')})", "State")
    assert newest.status == "pass", newest.reasons
    older = judge_line(h, f"- Latest release: 1.0 (c:{b.short('drop-tox')})", "State")
    assert older.status == "fail"
    counted = judge_line(
        h, f"- Latest release v1.0; 40 commits since (c:{b.short('drop-tox')})", "State"
    )
    assert "release-count" in {c.rule for c in counted.checks if not c.ok}


def test_subject_conventions_are_recounted(repo: tuple[Builder, History]) -> None:
    b, h = repo
    n = len(h.last_non_merges(10))
    capital = judge_line(
        h,
        f"- Commit subjects are capitalised sentences ({n} of the last 10) (c:{b.short('init')})",
        "Conventions",
    )
    assert capital.status == "pass", capital.reasons
    cc = judge_line(
        h,
        f"- Commit subjects use Conventional Commits ({n} of the last 10) (c:{b.short('init')})",
        "Conventions",
    )
    assert cc.status == "fail"


def test_an_area_prefix_is_not_conventional_commits(tmp_path: Path) -> None:
    b = Builder(tmp_path)
    for i in range(12):
        b.commit(f"c{i}", f"builtin/add: tidy step {i}", {f"builtin/add{i % 3}.c": f"{i}\n"})
    h = History.load("areas", tmp_path, dict(os.environ))
    cite = b.short("c11")
    cc = judge_line(h, f"- Commit subjects use Conventional Commits (12 of the last 12) (c:{cite})")
    assert any("0 of 12 recomputed" in r for r in cc.reasons)
    area = judge_line(h, f"- Commit subjects start with an `area:` (12 of the last 12) (c:{cite})")
    assert area.status == "pass", area.reasons


def test_hot_spots_and_co_changes_are_recounted(repo: tuple[Builder, History]) -> None:
    b, h = repo
    cite = b.short("fix2")
    day = h.by_sha[b.shas["fix2"]].committed[:10]
    hot = judge_line(h, f"- src/app/core.py needed 3 fixes; latest {day}: go slow (c:{cite})")
    assert hot.status == "pass", hot.reasons
    inflated = judge_line(h, f"- src/app/core.py needed 30 fixes (c:{cite})")
    assert inflated.status == "fail"
    pair = judge_line(
        h, f"- src/app/core.py and tests/test_core.py change together (4 of 4 commits) (c:{cite})"
    )
    assert pair.status == "pass", pair.reasons
    wrong = judge_line(
        h, f"- src/app/core.py and tests/test_core.py change together (9 of 9 commits) (c:{cite})"
    )
    assert wrong.status == "fail"


def test_a_number_no_rule_recomputes_is_unverified_not_passed(
    repo: tuple[Builder, History],
) -> None:
    b, h = repo
    v = judge_line(h, f"- The core has 12 modules (c:{b.short('init')})", "Architecture")
    assert v.status == "unverified"
    assert v.unverified


def test_digest_lines_skip_front_matter_placeholders_and_cut_markers() -> None:
    text = (
        "---\nkind: digest\n---\n# Project memory\n\n## Architecture\n- (none yet)\n\n"
        "## Gotchas\n- one (c:abc1234)\n- [… 3 more lines cut to fit]\n"
    )
    assert digest_lines(text) == [("Gotchas", "- one (c:abc1234)")]


def test_a_revert_named_only_by_its_subject_is_found(tmp_path: Path) -> None:
    b = Builder(tmp_path)
    b.commit("colours", "Add colours", {"colours.txt": "red\n"})
    b.commit("revert", 'Revert "Add colours"', {"colours.txt": None})
    h = History.load("subject-revert", tmp_path, dict(os.environ))
    assert h.reverts[b.shas["revert"]] == [b.shas["colours"]]
    alone = judge_line(h, f'- Reverted: "Add colours" (c:{b.short("revert")})')
    failed = {c.rule: c.detail for c in alone.checks if not c.ok}
    assert b.shas["colours"][:10] in failed["revert-cites-original"]
    both = judge_line(
        h, f'- Reverted: "Add colours" (c:{b.short("revert")}, c:{b.short("colours")})'
    )
    assert both.status == "pass", both.reasons


def test_a_pre_release_tag_does_not_hide_the_release(tmp_path: Path) -> None:
    b = Builder(tmp_path)
    b.commit("one", "First", {"a.txt": "1\n"})
    b.tag("v1.0", "one")
    b.commit("two", "Second", {"a.txt": "2\n"})
    b.tag("v1.1-rc1", "two")
    h = History.load("tags", tmp_path, dict(os.environ))
    assert [t.name for t in h.tags] == ["v1.1-rc1", "v1.0"]
    assert judge_line(h, f"- The latest release is v1.0 (c:{b.short('one')})").status == "pass"
    assert judge_line(h, f"- The latest release is v1.1-rc1 (c:{b.short('two')})").status == "pass"
    assert judge_line(h, f"- The latest release is v0.9 (c:{b.short('one')})").status == "fail"


def test_at_least_n_is_true_of_a_larger_count(repo: tuple[Builder, History]) -> None:
    b, h = repo
    cite = b.short("fix2")
    assert judge_line(h, f"- src/app/core.py needed at least 1 fixes (c:{cite})").status == "pass"
    assert judge_line(h, f"- src/app/core.py needed 1 fixes (c:{cite})").status == "pass"  # ±2
    assert judge_line(h, f"- src/app/core.py needed at least 9 fixes (c:{cite})").status == "fail"


def test_a_name_holding_a_word_like_gone_does_not_say_it_is_gone(
    repo: tuple[Builder, History],
) -> None:
    """The judge reads "gone" in the line's own words only: a deleted tox.ini named beside a
    folder called gone/ or a file called removed_cases.py is still checked against HEAD."""
    b, h = repo
    for other in ("gone/", "src/app/removed_cases.py", "`moved_helper`"):
        verdict = judge_line(h, f"- The runner reads tox.ini and {other} (c:{b.short('init')})")
        assert any("tox.ini does not exist at HEAD" in r for r in verdict.reasons), (
            other,
            verdict.reasons,
        )
    said = judge_line(h, f"- tox.ini was removed in the move to pytest (c:{b.short('init')})")
    assert not any("tox.ini does not exist" in r for r in said.reasons), said.reasons
