"""`gitvault verify` on a real repository: rebased, squash-merged and reverted commits, deleted
files and symbols, citations of nothing; --fix; recall marks what verify found."""

from __future__ import annotations

from gitvault.resolve import resolve
from gitvault.vault import frontmatter, layout
from gitvault.vault.store import Vault
from tests.support.repos import Repo


def _write_digest(repo: Repo, lines: list[str]) -> None:
    vault = Vault(resolve(repo.path))
    body = "# Project memory\n\n## Architecture\n" + "\n".join(lines) + "\n"
    for name in ("Decisions", "Conventions", "Gotchas", "State", "Next steps"):
        body += f"\n## {name}\n- (none yet)\n"
    meta = {"kind": "digest", "watermark": vault.require_tip(), "merger": "builtin"}
    vault.commit({layout.DIGEST: frontmatter.render(meta, body).encode()}, "fold test digest")


def _scenario(repo: Repo) -> dict[str, str]:
    c: dict[str, str] = {}
    c["kept"] = repo.commit(
        "Read the config", {"src/app/main.py": "def load_config():\n    return {}\n"}
    )
    c["deleted"] = repo.commit("Add the old module", {"src/old.py": "X = 1\n"})
    c["reverted"] = repo.commit("Fix the parser for tabs", {"src/parser.py": "TABS = True\n"})
    repo.git("revert", "--no-edit", c["reverted"])
    repo.git("rm", "-q", "src/old.py")
    repo.git("commit", "-q", "-m", "Drop the old module")
    # A feature commit that is rebased: the commit cited is no longer on any branch.
    repo.git("checkout", "-q", "-b", "feature", c["kept"])
    c["rebased"] = repo.commit("Feature: greet in French", {"src/fr.py": "HELLO = 'salut'\n"})
    repo.git("rebase", "-q", "main")
    c["rebased_new"] = repo.head()
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--ff-only", "feature")
    # A branch squash-merged, then deleted.
    repo.git("checkout", "-q", "-b", "squashed")
    c["squashed"] = repo.commit("Teach the CLI a --quiet flag", {"src/cli.py": "QUIET = 1\n"})
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--squash", "squashed")
    repo.git("commit", "-q", "--no-edit")
    c["squash_commit"] = repo.head()
    repo.git("branch", "-q", "-D", "squashed", "feature")
    repo.wait_for_notes([v for k, v in c.items() if k != "squash_commit"])
    return c


def test_verify_finds_every_kind_of_stale_line_and_fix_repairs_it(repo: Repo) -> None:
    c = _scenario(repo)
    short = {k: v[:7] for k, v in c.items()}
    lines = {
        "ok": f"- Config is read by `load_config` in src/app/main.py (c:{short['kept']})",
        "file": f"- The old module lives in src/old.py (c:{short['deleted']})",
        "revert": f"- Tabs are parsed (c:{short['reverted']})",
        "rebased": f"- Greetings in French (c:{short['rebased']})",
        "squash": f"- The CLI has a --quiet flag (c:{short['squashed']})",
        "dangling": "- Something nobody recorded (c:deadbee)",
        "symbol": f"- Settings come from `vanished_function` (c:{short['kept']})",
    }
    _write_digest(repo, list(lines.values()))
    result = repo.gv("verify", "--json")
    assert result.code == 1, result
    found = {entry["line"]: entry for entry in result.json("verify")["lines"]}
    assert found[lines["ok"]]["status"] == "ok"
    assert found[lines["file"]]["status"] == "stale"
    assert "src/old.py no longer exists" in found[lines["file"]]["reasons"]
    assert found[lines["revert"]]["status"] == "stale"
    assert any("reverted" in r for r in found[lines["revert"]]["reasons"])
    assert found[lines["rebased"]]["status"] == "repointed"
    assert c["rebased_new"][:7] in found[lines["rebased"]]["new_line"]
    assert found[lines["squash"]]["status"] == "repointed"
    assert c["squash_commit"][:7] in found[lines["squash"]]["new_line"]
    assert found[lines["dangling"]]["status"] == "dangling"
    assert found[lines["symbol"]]["status"] == "stale"

    # Recall marks what verify found (computed ahead, not at session start).
    block = repo.gv("recall").out
    assert f"{lines['file']} [stale: src/old.py no longer exists" in block
    assert f"{lines['ok']}\n" in block

    tip = repo.vault_tip()
    fixed = repo.gv("verify", "--fix")
    assert fixed.code == 0, fixed
    log = repo.git("log", "--format=%s", f"{tip}..vault").splitlines()
    assert len(log) == 1 and log[0].startswith("verify: removed 4 stale line(s), re-pointed 2")
    body = repo.git("show", f"vault:{layout.DIGEST}")
    assert lines["ok"] in body and lines["file"] not in body and lines["dangling"] not in body
    assert f"(c:{c['rebased_new'][:7]})" in body and f"(c:{c['squash_commit'][:7]})" in body
    assert repo.gv("verify").code == 0


def test_verify_without_a_digest_checks_nothing(repo: Repo) -> None:
    result = repo.gv("verify")
    assert result.code == 0 and "0 digest line(s) checked" in result.out


def test_a_name_holding_a_word_like_gone_is_still_checked(repo: Repo) -> None:
    """Only the line's own words can say a path is gone: a deleted file or folder whose name
    holds "gone", "removed", "moved" or "deleted" is stale like any other, and a line that
    says in its words that such a path was removed stays true."""
    names = ["src/gone.py", "src/removed_items.py", "lib/moved/x.py", "deleted.cfg"]
    made = repo.commit("Add the helpers", {name: "X = 1\n" for name in names})
    repo.git("rm", "-q", *names)
    repo.git("commit", "-q", "-m", "Drop the helpers")
    repo.wait_for_notes([made])
    claims = [f"- Helpers sit in {name} (c:{made[:7]})" for name in names]
    said = f"- src/gone.py was removed with the other helpers (c:{made[:7]})"
    ticked = f"- Helpers sit in `lib/moved/x.py` (c:{made[:7]})"
    _write_digest(repo, [*claims, said, ticked])
    result = repo.gv("verify", "--json")
    found = {entry["line"]: entry for entry in result.json("verify")["lines"]}
    for line, name in zip([*claims, ticked], [*names, "lib/moved/x.py"], strict=True):
        assert found[line]["status"] == "stale", found[line]
        assert f"{name} no longer exists" in " ".join(found[line]["reasons"])
    assert found[said]["status"] == "ok", found[said]
