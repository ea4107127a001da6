"""`gitvault pin / unpin / pins`: standing rules in patterns/pins.md, each change a commit,
recalled at session start, bounded by what recall shows."""

from __future__ import annotations

import threading

from gitvault.memory import pins
from gitvault.resolve import resolve
from tests.support.memory import cli_in, set_config, vault_log, vault_text
from tests.support.repos import Repo


def test_pin_lists_recalls_and_unpin_removes_each_a_commit(repo: Repo) -> None:
    added = cli_in(repo, "pin", "--json", "run the tests", "with -n auto")
    assert added.code == 0, added
    pin = added.json("pin")
    assert pin["text"] == "run the tests with -n auto" and pin["id"].startswith("p:")
    assert vault_log(repo)[0].startswith(f"pin {pin['id']} ")
    assert "- run the tests with -n auto" in (vault_text(repo, "patterns/pins.md") or "")
    listed = cli_in(repo, "pins", "--json").json("pins")
    assert [p["id"] for p in listed] == [pin["id"]]
    recall = cli_in(repo, "recall")
    assert "- run the tests with -n auto" in recall.out
    removed = cli_in(repo, "unpin", pin["id"])
    assert removed.code == 0, removed
    assert vault_log(repo)[0].startswith(f"unpin {pin['id']}")
    assert cli_in(repo, "pins", "--json").json("pins") == []
    assert "run the tests" not in cli_in(repo, "recall").out


def test_pinning_twice_changes_nothing(repo: Repo) -> None:
    assert cli_in(repo, "pin", "never force-push main").code == 0
    before = repo.vault_tip()
    again = cli_in(repo, "pin", "never   force-push main")
    assert again.code == 0 and "already pinned" in again.out
    assert repo.vault_tip() == before


def test_a_pin_is_one_clean_line(repo: Repo) -> None:
    result = cli_in(repo, "pin", "line one\nline two\x1b[31m")
    assert result.code == 0
    text = vault_text(repo, "patterns/pins.md") or ""
    assert "- line one line two [31m" in text and "\x1b" not in text
    assert cli_in(repo, "pin", "=== VAULT RECALL ===").code == 1
    assert cli_in(repo, "pin", "x" * 301).code == 1
    assert cli_in(repo, "pin", "   ").code == 1


def test_secrets_in_a_pin_are_redacted(repo: Repo) -> None:
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    result = cli_in(repo, "pin", "--json", f"deploy with {key}")
    assert result.code == 0
    assert key not in (vault_text(repo, "patterns/pins.md") or "")
    assert result.json("pin")["redactions"] >= 1


def test_pins_are_bounded_by_what_recall_shows(repo: Repo) -> None:
    set_config(repo, "recall", pattern_lines=2)
    assert cli_in(repo, "pin", "rule one").code == 0
    assert cli_in(repo, "pin", "rule two").code == 0
    full = cli_in(repo, "pin", "rule three")
    assert full.code == 1 and "at most 2 pattern lines" in full.err
    assert len(cli_in(repo, "pins", "--json").json("pins")) == 2


def test_unpin_by_text_prefix_and_ambiguity(repo: Repo) -> None:
    ids = [cli_in(repo, "pin", "--json", f"rule {n}").json("pin")["id"] for n in range(3)]
    assert cli_in(repo, "unpin", "rule 1").code == 0
    remaining = [p["id"] for p in cli_in(repo, "pins", "--json").json("pins")]
    assert remaining == [ids[0], ids[2]]
    assert cli_in(repo, "unpin", ids[2][2:6]).code == 0
    missing = cli_in(repo, "unpin", "p:000000")
    assert missing.code == 1 and "no pin matches" in missing.err


def test_unpin_reaches_rules_in_other_pattern_files(repo: Repo) -> None:
    from gitvault.vault.store import Vault

    Vault(resolve(repo.path)).commit(
        {"patterns/testing.md": b"- keep tests hermetic\n- no sleeps\n"}, "patterns: testing"
    )
    listed = cli_in(repo, "pins", "--json").json("pins")
    assert {p["text"] for p in listed} == {"keep tests hermetic", "no sleeps"}
    assert cli_in(repo, "unpin", "no sleeps").code == 0
    assert vault_text(repo, "patterns/testing.md") == "- keep tests hermetic\n"


def test_concurrent_pins_all_land(repo: Repo) -> None:
    loc = resolve(repo.path)
    errors: list[BaseException] = []

    def add(n: int) -> None:
        try:
            pins.pin(loc, f"concurrent rule {n}")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=add, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    texts = {p.text for p in pins.pins(loc)}
    assert texts == {f"concurrent rule {n}" for n in range(6)}
