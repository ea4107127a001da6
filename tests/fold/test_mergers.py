"""Mergers through the real subprocess path: a stand-in `claude` executable first on PATH records
its argv, stdin and environment and prints a scripted answer."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gitvault.vault.config import fold_command_digest
from tests.support.memory import (
    PARENT_API_KEY,
    StandIn,
    Step,
    all_item_ids,
    assert_citations_exist,
    backfilled_repo,
    cli_in,
    cli_sub,
    digest_answer,
    digest_meta_body,
    process_gone,
    prompt_items,
    set_config,
    vault_text,
    watermark,
)
from tests.support.repos import Repo


def good_answer(shas: list[str], extra_line: str | None = None) -> str:
    a, b = shas[0][:7], shas[-1][:7]
    lines = {
        "Architecture": [f"- The parser is a recursive-descent parser (c:{a})"],
        "Decisions": [f"- Errors carry a hint (c:{a}, c:{b})"],
        "Conventions": [f"- Commit subjects use a type prefix (c:{b})"],
        "Gotchas": [f"- The tokenizer must see a final newline (c:{a})"],
        "State": [f"- Parser and printer work (c:{b})"],
        "Next steps": [f"- Add error recovery (c:{b})"],
    }
    if extra_line:
        lines["State"].append(extra_line)
    return digest_answer(lines)


def test_claude_merger_flags_prompt_and_scrubbed_environment(repo: Repo, standin: StandIn) -> None:
    shas = [repo.commit("feat: add the parser"), repo.commit("fix: tokenizer needs a newline")]
    standin.script(Step(answer=good_answer(shas)))
    before = repo.vault_tip()
    result = cli_in(repo, "fold")  # merger and model from vault.toml: claude, haiku
    assert result.code == 0, result
    (call,) = standin.calls()
    argv = call["argv"]
    assert "-p" in argv
    assert argv[argv.index("--model") + 1] == "haiku"
    assert json.loads(argv[argv.index("--settings") + 1]) == {
        "disableAllHooks": True,
        "alwaysThinkingEnabled": False,
    }
    for flag in ("--no-session-persistence", "--strict-mcp-config", "--disable-slash-commands"):
        assert flag in argv
    assert argv[argv.index("--tools") + 1] == ""  # no tools at all
    system = argv[argv.index("--system-prompt") + 1]
    assert "gitvault" in system and len(system) < 400  # ours, not Claude Code's 25,000
    env = call["env"]
    assert env["MAX_THINKING_TOKENS"] == "0" and env["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] == "1"
    assert env["CLAUDE_CODE_DISABLE_CLAUDE_MDS"] == "1"
    assert not call["stdin"].lstrip().startswith("/")  # never read as a slash command
    assert call["env"].get("GITVAULT_CHILD") == "1"
    assert "ANTHROPIC_API_KEY" not in call["env"]  # removed, not blanked
    assert os.environ["ANTHROPIC_API_KEY"] == PARENT_API_KEY  # the parent keeps it
    assert call["sid"] == call["pid"]  # its own session: a timeout kills its whole group
    assert sorted(prompt_items(call["stdin"])) == sorted(f"c:{s[:7]}" for s in shas)
    assert (
        "feat: add the parser" in call["stdin"]
        and "fix: tokenizer needs a newline" in call["stdin"]
    )
    meta, body = digest_meta_body(repo)
    assert meta["merger"] == "claude" and meta["model"] == "haiku"
    assert meta["watermark"] == before  # what was read: the tip when the fold started
    assert f"- Parser and printer work (c:{shas[1][:7]})" in body
    assert "folded 2 of 2 items in 1 batch(es) with claude" in result.out


def test_a_fold_started_inside_claude_code_can_start_claude(
    repo: Repo, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SessionEnd starts the fold from inside Claude Code: its environment carries CLAUDECODE,
    # which makes a nested `claude` refuse to start (Claude Code >= 2.1.39)
    monkeypatch.setenv("CLAUDECODE", "1")
    monkeypatch.setenv("CLAUDE_CODE_ENTRYPOINT", "cli")
    shas = backfilled_repo(repo, 2)
    standin.script(Step(answer=good_answer(shas)))
    assert cli_in(repo, "fold").code == 0
    env = standin.calls()[0]["env"]
    assert "CLAUDECODE" not in env and "CLAUDE_CODE_ENTRYPOINT" not in env
    assert env["GITVAULT_CHILD"] == "1"


def test_model_flag_overrides_the_configured_model(repo: Repo, standin: StandIn) -> None:
    shas = backfilled_repo(repo, 2)
    standin.script(Step(answer=good_answer(shas)))
    assert cli_in(repo, "fold", "--model", "claude-sonnet-4-5").code == 0
    argv = standin.calls()[0]["argv"]
    assert argv[argv.index("--model") + 1] == "claude-sonnet-4-5"
    assert argv.count("--model") == 1
    assert digest_meta_body(repo)[0]["model"] == "claude-sonnet-4-5"


def test_a_model_is_chosen_in_this_clones_git_config(repo: Repo, standin: StandIn) -> None:
    shas = backfilled_repo(repo, 2)
    set_config(repo, "fold", model="opus")  # vault.toml travels: it may not pick a dearer model
    standin.script(Step(answer=good_answer(shas)), Step(answer=good_answer(shas)))
    result = cli_in(repo, "fold")
    assert result.code == 0, result
    argv = standin.calls()[0]["argv"]
    assert argv[argv.index("--model") + 1] == "haiku"
    repo.git("config", "gitvault.fold.model", "opus")
    repo.commit("feat: one more")
    assert cli_in(repo, "fold").code == 0
    argv = standin.calls()[1]["argv"]
    assert argv[argv.index("--model") + 1] == "opus"


def test_use_api_key_applies_only_from_git_config(repo: Repo, standin: StandIn) -> None:
    shas = backfilled_repo(repo, 2)
    set_config(repo, "fold", use_api_key=True)  # a teammate's (or an attacker's) vault.toml
    standin.script(Step(answer=good_answer(shas)), Step(answer=good_answer(shas)))
    assert cli_in(repo, "fold").code == 0
    assert "ANTHROPIC_API_KEY" not in standin.calls()[0]["env"]
    repo.git("config", "gitvault.fold.useApiKey", "true")
    repo.commit("feat: one more")
    assert cli_in(repo, "fold").code == 0
    env = standin.calls()[1]["env"]
    assert env.get("ANTHROPIC_API_KEY") == PARENT_API_KEY
    assert env.get("GITVAULT_CHILD") == "1"


def test_real_entry_point_scrubs_the_key_too(repo: Repo, standin: StandIn) -> None:
    shas = backfilled_repo(repo, 2)
    standin.script(Step(answer=good_answer(shas)))
    result = cli_sub(
        repo, "fold", env={"PATH": standin.path_env(), "ANTHROPIC_API_KEY": PARENT_API_KEY}
    )
    assert result.code == 0, result
    env = standin.calls()[0]["env"]
    assert "ANTHROPIC_API_KEY" not in env and env["GITVAULT_CHILD"] == "1"


# --------------------------------------------------------------------------- failures


def builtin_first(repo: Repo) -> tuple[str, str]:
    """A first fold (builtin), so there is an old digest to keep; then one more note."""
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    old = vault_text(repo, "_master.md")
    mark = watermark(repo)
    assert old is not None and mark is not None
    backfilled_repo(repo, 1)
    return old, mark


def test_timeout_is_a_clear_error_keeps_the_digest_and_leaves_no_child(
    repo: Repo, standin: StandIn
) -> None:
    backfilled_repo(repo, 2)
    old, mark = builtin_first(repo)
    set_config(repo, "fold", timeout_seconds=1)
    standin.script(Step(answer="never printed", sleep=30, grandchild=True))
    tip = repo.vault_tip()
    result = cli_in(repo, "fold")
    assert result.code == 1, result
    assert "did not answer within 1s" in result.err
    assert "fold.timeout_seconds" in result.err
    assert vault_text(repo, "_master.md") == old and watermark(repo) == mark
    assert repo.vault_tip() == tip
    (call,) = standin.calls()
    assert not call["done"]
    assert process_gone(call["pid"]), "the stand-in claude survived the timeout"
    grandchild = int((standin.state / "grandchild-0000").read_text())
    assert process_gone(grandchild), "the stand-in's own child survived the timeout"


def test_garbage_answer_exits_4_and_changes_nothing(repo: Repo, standin: StandIn) -> None:
    backfilled_repo(repo, 2)
    old, mark = builtin_first(repo)
    tip = repo.vault_tip()
    standin.script(Step(answer="Sure! Here is a summary of your project: it is great."))
    result = cli_in(repo, "fold")
    assert result.code == 4, result
    assert "lacks the categories" in result.err
    assert repo.vault_tip() == tip
    assert vault_text(repo, "_master.md") == old and watermark(repo) == mark
    # the next fold reads the same items again (nothing was skipped)
    standin.script(Step(answer=digest_answer({"State": [f"- it works ({mark_cite(repo)})"]})))
    assert cli_in(repo, "fold").code == 0
    first, second = standin.calls()
    assert prompt_items(first["stdin"]) == prompt_items(second["stdin"])
    assert len(prompt_items(second["stdin"])) == 1


def mark_cite(repo: Repo) -> str:
    return sorted(all_item_ids(repo))[0]


def test_missing_category_exits_4(repo: Repo, standin: StandIn) -> None:
    shas = backfilled_repo(repo, 2)
    tip = repo.vault_tip()
    standin.script(Step(answer=good_answer(shas).replace("## Conventions", "## Trivia")))
    result = cli_in(repo, "fold")
    assert result.code == 4
    assert "Trivia" in result.err
    assert repo.vault_tip() == tip and vault_text(repo, "_master.md") is None


def test_a_failing_claude_is_an_error_and_changes_nothing(repo: Repo, standin: StandIn) -> None:
    backfilled_repo(repo, 2)
    tip = repo.vault_tip()
    standin.script(Step(answer="Credit balance is too low", exit=1))
    result = cli_in(repo, "fold")
    assert result.code == 1
    assert "exited with 1" in result.err and "Credit balance is too low" in result.err
    assert repo.vault_tip() == tip


def test_oversized_answer_is_compressed_once_then_cut_in_code(repo: Repo, standin: StandIn) -> None:
    shas = backfilled_repo(repo, 3)
    cite = shas[0][:7]
    # over what every category's cap together allows (unused caps flow to Gotchas first)
    huge = [f"- gotcha number {i} " + "z" * 80 + f" (c:{cite})" for i in range(70)]
    big = digest_answer({"Gotchas": huge, "State": [f"- ok (c:{cite})"]})
    standin.script(Step(answer=big), Step(answer=big))  # the compress answer is still too big
    result = cli_in(repo, "fold")
    assert result.code == 0, result
    first, second = standin.calls()
    assert "<vault-items>" in first["stdin"]
    assert second["stdin"].startswith("The digest below is over its caps (Gotchas")
    assert "gotcha number 69" in second["stdin"]  # the over-long answer is what is compressed
    assert prompt_items(second["stdin"]) == []
    assert second["argv"] == first["argv"]
    _, body = digest_meta_body(repo)
    gotchas = body.split("## Gotchas\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert 900 < sum(len(ln) + 1 for ln in gotchas) <= 5600  # its cap + the others' unused
    assert gotchas[-1].startswith("- [… ") and "more lines cut to fit" in gotchas[-1]
    meta, _ = digest_meta_body(repo)
    assert meta["items"]["Gotchas"] == len(gotchas) - 1  # the marker is not counted
    assert gotchas[0] == huge[0]  # cut at a line boundary: whole lines kept in order
    assert "cut to its cap: Gotchas" in result.err


def test_a_compressed_answer_within_caps_is_used(repo: Repo, standin: StandIn) -> None:
    shas = backfilled_repo(repo, 2)
    cite = shas[0][:7]
    big = digest_answer({"Gotchas": [f"- g{i} " + "z" * 80 + f" (c:{cite})" for i in range(70)]})
    small = digest_answer({"Gotchas": [f"- all the gotchas, merged (c:{cite})"]})
    standin.script(Step(answer=big), Step(answer=small))
    result = cli_in(repo, "fold")
    assert result.code == 0, result
    assert standin.count() == 2
    _, body = digest_meta_body(repo)
    assert f"- all the gotchas, merged (c:{cite})" in body
    assert "cut to fit" not in body and "cut to its cap" not in result.err


def test_a_garbage_compress_answer_keeps_the_first_answer_cut_in_code(
    repo: Repo, standin: StandIn
) -> None:
    shas = backfilled_repo(repo, 2)
    cite = shas[0][:7]
    huge = [f"- state line {i} " + "s" * 80 + f" (c:{cite})" for i in range(70)]
    standin.script(Step(answer=digest_answer({"State": huge})), Step(answer="Sorry, no."))
    result = cli_in(repo, "fold")
    assert result.code == 0, result
    assert standin.count() == 2
    _, body = digest_meta_body(repo)
    state = body.split("## State\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert state[0] == huge[0] and state[-1].startswith("- [… ")
    assert sum(len(ln) + 1 for ln in state) <= 5600


def test_lines_with_bogus_citations_are_dropped_and_reported(repo: Repo, standin: StandIn) -> None:
    shas = backfilled_repo(repo, 2)
    bogus = "- The moon is made of cheese (c:0badf00)"
    standin.script(Step(answer=good_answer(shas, extra_line=bogus + "\n- Uncited claim")))
    result = cli_in(repo, "fold")
    assert result.code == 0, result
    _, body = digest_meta_body(repo)
    assert "cheese" not in body and "Uncited claim" not in body
    assert f"- Parser and printer work (c:{shas[-1][:7]})" in body
    assert (
        "dropped: State: - The moon is made of cheese (c:0badf00) [cites unknown c:0badf00]"
        in result.err
    )
    assert "Uncited claim" in result.err and "cites no source" in result.err


# --------------------------------------------------------------------------- command, builtin


def test_command_merger_runs_the_configured_command_line(repo: Repo, tmp_path: Path) -> None:
    other = StandIn(tmp_path / "other-model", name="other-model-cli")
    shas = backfilled_repo(repo, 2)
    other.script(Step(answer=good_answer(shas)))
    command = f"{other.exe} --answer-format 'plain text'"
    set_config(repo, "fold", merger="command", command=command)
    refused = cli_in(repo, "fold")  # vault.toml travels: its command runs once confirmed here
    assert refused.code == 3 and "not confirmed" in refused.err, refused
    assert other.calls() == []
    repo.git("config", "gitvault.trustedFoldCommand", fold_command_digest(command))
    result = cli_in(repo, "fold")
    assert result.code == 0, result
    (call,) = other.calls()
    assert call["argv"] == ["--answer-format", "plain text"]  # shell-split, no shell
    assert call["env"].get("GITVAULT_CHILD") == "1"
    assert sorted(prompt_items(call["stdin"])) == sorted(all_item_ids(repo))
    assert {f"c:{s[:7]}" for s in shas} <= set(prompt_items(call["stdin"]))
    meta, _ = digest_meta_body(repo)
    assert meta["merger"] == "command"
    assert "with command" in result.out


def test_command_merger_without_a_command_is_refused(repo: Repo) -> None:
    backfilled_repo(repo, 1)
    tip = repo.vault_tip()
    result = cli_in(repo, "fold", "--merger", "command")
    assert result.code == 1
    assert "fold.command is empty" in result.err
    repo.git("config", "gitvault.fold.command", "no-such-model-cli --flag")
    tip = repo.vault_tip()
    result = cli_in(repo, "fold", "--merger", "command")
    assert result.code == 1 and "no-such-model-cli" in result.err
    assert repo.vault_tip() == tip


def test_builtin_merger_is_offline_and_labelled(
    repo: Repo, standin: StandIn, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    shas = backfilled_repo(
        repo, 3, subjects=["fix: crash {i}", "docs: explain {i}", "feat: add {i}"]
    )
    only_git = tmp_path / "only-git"
    only_git.mkdir()
    (only_git / "git").symlink_to("/usr/bin/git")
    with monkeypatch.context() as offline:
        offline.setenv("PATH", str(only_git))  # not even the stand-in is reachable
        result = cli_in(repo, "fold", "--merger", "builtin")
    assert result.code == 0, result
    assert "builtin (deterministic, not a model)" in result.out
    assert standin.count() == 0
    meta, body = digest_meta_body(repo)
    assert meta["merger"] == "builtin" and "model" not in meta
    # commit subjects are not sorted into categories by their first word any more
    assert "- fix: crash 0" not in body and "- docs: explain 1" not in body
    state = body.split("## State\n", 1)[1].split("\n\n", 1)[0]
    assert state.startswith("- On main, ") and "(c:" in state  # recent activity, cited
    assert assert_citations_exist(repo, body) >= 1
    assert len(shas) == 3


def test_builtin_merge_is_deterministic(repo: Repo) -> None:
    backfilled_repo(repo, 6)
    text = "## Summary\nS\n## Key Decisions\n- Keep the API small\n## Next Steps\n- Ship it\n"
    assert cli_in(repo, "save", stdin=text).code == 0
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    first = digest_meta_body(repo)[1]
    assert cli_in(repo, "fold", "--merger", "builtin", "--rebuild").code == 0
    again = digest_meta_body(repo)[1]
    assert again == first  # same log, same digest
    assert "- Keep the API small (s:" in first and "- Ship it (s:" in first


def test_builtin_newest_session_wins_next_steps(repo: Repo) -> None:
    def save(title: str, step: str, decision: str) -> None:
        text = f"## Summary\n{title}\n## Key Decisions\n- {decision}\n## Next Steps\n- {step}\n"
        assert cli_in(repo, "save", "--title", title, stdin=text).code == 0

    save("first", "write the parser", "use tabs for indentation in every source file")
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    save("second", "write the printer", "use tabs for indentation in every source file, not spaces")
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    _, body = digest_meta_body(repo)
    next_steps = body.split("## Next steps\n", 1)[1]
    assert "write the printer" in next_steps and "write the parser" not in next_steps
    decisions = body.split("## Decisions\n", 1)[1].split("\n\n", 1)[0]
    assert decisions.count("use tabs") == 1 and "not spaces" in decisions  # restated: newer wins


# --------------------------------------------------------------------------- missing claude


def test_missing_claude_names_the_alternatives_in_one_line(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backfilled_repo(repo, 2)
    only_git = tmp_path / "only-git"
    only_git.mkdir()
    (only_git / "git").symlink_to("/usr/bin/git")
    monkeypatch.setenv("PATH", str(only_git))
    tip = repo.vault_tip()
    result = cli_in(repo, "fold")
    assert result.code == 1
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert (
        "claude" in lines[0] and "--merger builtin" in lines[0] and "--merger command" in lines[0]
    )
    assert repo.vault_tip() == tip
    assert not (repo.path / "CLAUDE.md").exists()
    assert not (repo.state_dir / "fold-budget.json").exists()


def test_missing_claude_through_the_real_entry_point(repo: Repo, tmp_path: Path) -> None:
    backfilled_repo(repo, 1)
    only = tmp_path / "bin"
    only.mkdir()
    (only / "git").symlink_to("/usr/bin/git")
    tip = repo.vault_tip()
    proc_env = {"PATH": str(only)}
    result = cli_sub(repo, "fold", env=proc_env)
    assert result.code == 1, result
    assert len(result.err.strip().splitlines()) == 1
    assert repo.vault_tip() == tip
