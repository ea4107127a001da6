"""PATCH mode: only the bytes between the gitvault sentinels change; malformed sentinels refuse."""

from __future__ import annotations

import os
import pathlib
import re
import stat
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gitvault.agents import sentinel as patch_mod
from gitvault.agents.sentinel import BEGIN, END, find_block, patch_bytes, patch_file, remove_block
from gitvault.errors import REFUSED, Refused

B = BEGIN.encode()
E = END.encode()
BOM = b"\xef\xbb\xbf"
OLD_MTIME_NS = 1_000_000_000 * 1_000_000_000  # 2001-09-09: any rewrite moves the mtime off it


def region(block: str, nl: bytes = b"\n") -> bytes:
    """What the managed region must look like, spelled out independently of the module."""
    lines = [line.encode() for line in block.split("\n")] if block else []
    return nl.join([B, *lines, E])


def has_sentinel_line(data: bytes) -> bool:
    lines = data.split(b"\n")
    if lines[0].startswith(BOM):
        lines[0] = lines[0][len(BOM) :]
    return any(line.strip() in (B, E) for line in lines)


def write(path: pathlib.Path, data: bytes) -> pathlib.Path:
    path.write_bytes(data)
    os.utime(path, ns=(OLD_MTIME_NS, OLD_MTIME_NS))
    return path


def snapshot(directory: pathlib.Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file in `directory` with its bytes, mtime and inode: proof that nothing was written."""
    out = {}
    for entry in sorted(directory.iterdir()):
        st_ = entry.lstat()
        out[entry.name] = (entry.read_bytes(), st_.st_mtime_ns, st_.st_ino)
    return out


# --------------------------------------------------------------------------- creating, appending


def test_absent_file_is_created_with_just_the_region(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "CLAUDE.md"
    assert patch_file(target, "hello\nworld\n") is True
    assert target.read_bytes() == B + b"\nhello\nworld\n" + E + b"\n"
    assert patch_bytes(None, "hello\nworld") == target.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["CLAUDE.md"]


def test_new_file_mode_follows_the_umask(tmp_path: pathlib.Path) -> None:
    old = os.umask(0o027)
    try:
        patch_file(tmp_path / "CLAUDE.md", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "CLAUDE.md").stat().st_mode) == 0o640


def test_no_sentinel_region_is_appended_after_final_newline(tmp_path: pathlib.Path) -> None:
    original = b"# Project\n\nBuild with `just`.\n"
    target = write(tmp_path / "CLAUDE.md", original)
    assert patch_file(target, "fact one") is True
    assert target.read_bytes() == original + region("fact one") + b"\n"


def test_no_sentinel_no_final_newline_adds_one_newline_first(tmp_path: pathlib.Path) -> None:
    original = b"# Project\nno newline at the end"
    target = write(tmp_path / "CLAUDE.md", original)
    assert patch_file(target, "fact") is True
    # exactly one newline is added before the region, and the file's "no final newline"
    # convention is kept after it
    assert target.read_bytes() == original + b"\n" + region("fact")


@pytest.mark.parametrize("original", [b"", BOM])
def test_empty_file_gets_just_the_region(original: bytes) -> None:
    assert patch_bytes(original, "x") == original + region("x") + b"\n"


def test_sentinel_mentioned_inline_does_not_count() -> None:
    original = b"Do not edit between `" + B + b"` and `" + E + b"`.\n"
    assert patch_bytes(original, "x") == original + region("x") + b"\n"


# --------------------------------------------------------------------------- replacing in place


def test_only_the_managed_region_changes(tmp_path: pathlib.Path) -> None:
    before = b"# Title\n\nUser text.\n"
    after = b"\nMore user text.\n"
    target = write(tmp_path / "CLAUDE.md", before + B + b"\nold fact\nolder fact\n" + E + after)
    assert patch_file(target, "new fact\n") is True
    assert target.read_bytes() == before + region("new fact") + after


def test_sentinels_with_surrounding_whitespace_count() -> None:
    original = b"top\n   " + B + b"\t\nold\n  " + E + b"   \nbottom\n"
    assert patch_bytes(original, "new") == b"top\n" + region("new") + b"\nbottom\n"


def test_utf8_bom_is_kept_with_block_on_first_line() -> None:
    original = BOM + B + b"\nold\n" + E + b"\ntail\n"
    assert patch_bytes(original, "new") == BOM + region("new") + b"\ntail\n"


def test_utf8_bom_is_kept_when_appending() -> None:
    original = BOM + "# Título\n".encode()
    assert patch_bytes(original, "x") == original + region("x") + b"\n"


def test_crlf_file_gets_crlf_region() -> None:
    before = b"# Title\r\n\r\ntext\r\n"
    after = b"\r\nend\r\n"
    original = before + B + b"\r\nold\r\n" + E + after
    result = patch_bytes(original, "one\ntwo\n")
    assert result == before + region("one\ntwo", b"\r\n") + after
    assert b"\n" not in result.replace(b"\r\n", b"")


def test_crlf_file_without_block_gets_crlf_region() -> None:
    original = b"a\r\nb\r\nc"
    assert patch_bytes(original, "x\ny") == original + b"\r\n" + region("x\ny", b"\r\n")


def test_lf_dominant_mixed_file_gets_lf_region() -> None:
    original = b"a\nb\nc\r\n" + B + b"\r\nold\r\nold\r\nold\r\n" + E + b"\n"
    assert patch_bytes(original, "x") == b"a\nb\nc\r\n" + region("x") + b"\n"


def test_missing_final_newline_after_end_is_kept() -> None:
    original = b"text\n" + B + b"\nold\n" + E
    assert patch_bytes(original, "new") == b"text\n" + region("new")


def test_invalid_utf8_outside_the_block_is_kept() -> None:
    before = b"\xff\xfe caf\xe9 \x80\x00\n"
    after = b"\n\xc3\x28 \xed\xa0\x80 tail without newline \xff"
    original = before + B + b"\n\xfe old \xff\n" + E + after
    assert patch_bytes(original, "neu: ü") == before + region("neu: ü") + after


def test_block_text_is_normalised() -> None:
    expected = patch_bytes(b"", "a\nb")
    assert patch_bytes(b"", "a\r\nb\r\n") == expected
    assert patch_bytes(b"", "a\rb\n") == expected
    assert patch_bytes(b"", "") == B + b"\n" + E + b"\n"
    assert patch_bytes(b"", "a\n\n") == B + b"\na\n\n" + E + b"\n"  # a final blank line is kept


@pytest.mark.parametrize("bad", [BEGIN, END, f"  {END} ", f"a\n{BEGIN}\nb"])
def test_block_text_with_a_sentinel_line_is_refused(tmp_path: pathlib.Path, bad: str) -> None:
    target = write(tmp_path / "CLAUDE.md", b"user text\n")
    before = snapshot(tmp_path)
    with pytest.raises(Refused, match="sentinel") as info:
        patch_file(target, bad)
    assert str(target) in str(info.value)
    assert snapshot(tmp_path) == before


def test_block_text_may_quote_a_sentinel_inline() -> None:
    block = f"the section starts at `{BEGIN}`"
    assert patch_bytes(b"", block) == region(block) + b"\n"


def test_find_block_span_covers_both_sentinel_lines() -> None:
    before, inner, after = BOM + b"x\r\n  ", b"\r\nold\r\n", b"\r\ny"
    original = before + B + inner + E + after
    assert find_block(original) == (len(BOM) + 3, len(original) - len(after))
    assert find_block(b"no sentinel\n") is None
    assert find_block(b"") is None


# --------------------------------------------------------------------------- refusing

MALFORMED = [
    pytest.param(
        b"a\nb\n" + B + b"\nfact\n",
        3,
        "gitvault:begin has no matching gitvault:end",
        id="begin-only",
    ),
    pytest.param(
        b"a\n" + E + b"\n", 2, "gitvault:end has no matching gitvault:begin", id="end-only"
    ),
    pytest.param(
        b"a\n" + E + b"\nb\nc\n" + B + b"\n",
        2,
        "gitvault:end comes before gitvault:begin (line 5)",
        id="reversed",
    ),
    pytest.param(
        B + b"\nx\n" + E + b"\n\n" + B + b"\ny\n" + E + b"\n",
        5,
        "more than one gitvault managed section (gitvault:begin at line(s) 1, 5; "
        "gitvault:end at line(s) 3, 7)",
        id="duplicate-pair",
    ),
    pytest.param(
        b"\r\n" + B + b"\r\n" + B + b"\r\n" + E + b"\r\n",
        3,
        "more than one gitvault managed section",
        id="two-begins",
    ),
    pytest.param(
        BOM + E + b"\n" + B + b"\n",
        1,
        "gitvault:end comes before gitvault:begin (line 2)",
        id="bom-reversed",
    ),
]


@pytest.mark.parametrize(("content", "line", "problem"), MALFORMED)
def test_malformed_sentinels_are_refused_and_nothing_is_written(
    tmp_path: pathlib.Path, content: bytes, line: int, problem: str
) -> None:
    target = write(tmp_path / "CLAUDE.md", content)
    os.chmod(target, 0o640)
    before = snapshot(tmp_path)
    with pytest.raises(Refused) as info:
        patch_file(target, "new block")
    message = str(info.value)
    assert message.startswith(f"{target}:{line}: {problem}")
    assert info.value.exit_code == REFUSED
    assert info.value.hint and "gitvault patch" in info.value.hint
    assert snapshot(tmp_path) == before
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


@pytest.mark.parametrize(("content", "line", "problem"), MALFORMED)
def test_malformed_sentinels_refused_by_every_entry_point(
    content: bytes, line: int, problem: str
) -> None:
    for call in (
        lambda: patch_bytes(content, "x"),
        lambda: find_block(content),
        lambda: remove_block(content),
    ):
        with pytest.raises(Refused, match="^" + re.escape(f"line {line}: {problem}")):
            call()
    with pytest.raises(Refused, match=r"^AGENTS\.md:"):
        remove_block(content, name="AGENTS.md")


# --------------------------------------------------------------------------- writing


def test_same_content_is_not_rewritten(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "CLAUDE.md"
    write(target, b"user\r\n" + B + b"\r\nfact\r\n" + E + b"\r\n")
    before = snapshot(tmp_path)
    assert patch_file(target, "fact") is False
    assert snapshot(tmp_path) == before
    assert target.stat().st_mtime_ns == OLD_MTIME_NS


def test_changed_content_is_replaced_atomically_keeping_the_mode(tmp_path: pathlib.Path) -> None:
    target = write(tmp_path / "CLAUDE.md", b"user\n" + B + b"\nold\n" + E + b"\n")
    os.chmod(target, 0o751)
    inode = target.stat().st_ino
    assert patch_file(target, "new") is True
    assert target.read_bytes() == b"user\n" + region("new") + b"\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert target.stat().st_ino != inode  # a fresh file renamed over it, not an in-place write
    assert target.stat().st_mtime_ns != OLD_MTIME_NS
    assert sorted(p.name for p in tmp_path.iterdir()) == ["CLAUDE.md"]


def test_second_patch_with_same_block_is_a_no_op(tmp_path: pathlib.Path) -> None:
    target = write(tmp_path / "CLAUDE.md", b"no final newline")
    assert patch_file(target, "x") is True
    os.utime(target, ns=(OLD_MTIME_NS, OLD_MTIME_NS))
    assert patch_file(target, "x") is False
    assert target.stat().st_mtime_ns == OLD_MTIME_NS


def test_symlink_target_is_updated_and_link_kept(tmp_path: pathlib.Path) -> None:
    real = write(tmp_path / "AGENTS.md", b"shared\n")
    link = tmp_path / "CLAUDE.md"
    link.symlink_to("AGENTS.md")
    assert patch_file(link, "x") is True
    assert link.is_symlink()
    assert real.read_bytes() == b"shared\n" + region("x") + b"\n"


@pytest.mark.parametrize("failing", ["replace", "fsync", "write"])
def test_no_temp_file_is_left_behind_on_error(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    target = write(tmp_path / "CLAUDE.md", b"user\n")
    before = snapshot(tmp_path)

    def boom(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    # a context, not monkeypatch.undo(): undo() would also revert the autouse HOME guard
    with monkeypatch.context() as patched:
        patched.setattr(f"gitvault.agents.sentinel.os.{failing}", boom)
        with pytest.raises(OSError, match="No space left"):
            patch_file(target, "x")
    assert snapshot(tmp_path) == before


def test_no_temp_file_is_left_behind_when_interrupted(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupt(*args: object) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr("gitvault.agents.sentinel.os.replace", interrupt)
        with pytest.raises(KeyboardInterrupt):
            patch_file(tmp_path / "CLAUDE.md", "x")
    assert list(tmp_path.iterdir()) == []


def test_module_does_not_import_typer_or_rich() -> None:
    code = (
        "import sys, gitvault.agents.sentinel; print(sorted({'typer', 'rich'} & set(sys.modules)))"
    )
    root = pathlib.Path(patch_mod.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "[]"


# --------------------------------------------------------------------------- idempotence, removal

SAMPLES = [
    b"",
    b"\n",
    BOM,
    b"no final newline",
    b"line\n",
    b"crlf\r\nfile\r\nno final",
    b"crlf\r\n",
    b"lone cr at end\r",
    b"mixed\r\nbut\nlf\nwins\r",
    BOM + b"\xff\xfe\x00 bytes\n\x80",
    b"ends with blank lines\n\n\n",
]


@pytest.mark.parametrize("original", SAMPLES)
def test_patch_is_idempotent_and_remove_restores(original: bytes) -> None:
    once = patch_bytes(original, "a\nb")
    assert once.startswith(original)
    assert patch_bytes(once, "a\nb") == once
    assert remove_block(once) == original
    # a different block replaces, and removing still gives the original back
    other = patch_bytes(once, "c")
    assert patch_bytes(other, "a\nb") == once
    assert remove_block(other) == original


def test_remove_block_without_block_returns_input() -> None:
    data = b"\xff user text, no block\r\n"
    assert remove_block(data) is data


def test_remove_block_from_the_middle_keeps_everything_else() -> None:
    original = b"top\r\n" + B + b"\r\nx\r\n" + E + b"\r\nbottom"
    assert remove_block(original) == b"top\r\nbottom"
    assert remove_block(BOM + B + b"\n" + E) == BOM


# --------------------------------------------------------------------------- properties

FRAGMENTS = st.sampled_from(
    [
        b"\n",
        b"\r\n",
        b"\r",
        b" ",
        b"\t",
        BOM,
        b"x" + B,  # a sentinel that is not alone on its line never counts
        E + b"x",
        b"<!-- gitvault:",
        b"\xff",
        b"\xc3",
        "é".encode(),
        b"# heading",
    ]
)
CHUNKS = st.lists(st.one_of(FRAGMENTS, st.binary(max_size=6)), max_size=12).map(b"".join)
NO_SENTINEL = CHUNKS.filter(lambda data: not has_sentinel_line(data))
BLOCKS = st.text(max_size=40)
PROPERTY = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much]
)


@st.composite
def with_block(draw: st.DrawFn) -> tuple[bytes, bytes, bytes]:
    """(before, a well-formed old region, after): sentinels alone on their lines."""
    before = draw(st.sampled_from([b"", BOM])) + draw(NO_SENTINEL)
    if before not in (b"", BOM) and not before.endswith(b"\n"):
        before += draw(st.sampled_from([b"\n", b"\r\n"]))
    pad = st.sampled_from([b"", b" ", b"\t ", b"  "])
    inner = draw(NO_SENTINEL)
    old = draw(pad) + B + draw(pad) + b"\n" + inner + b"\n" + draw(pad) + E + draw(pad)
    after = draw(NO_SENTINEL)
    if after:
        after = draw(st.sampled_from([b"\n", b"\r\n"])) + after
    assume(not has_sentinel_line(before + b"\n" + after))
    return before, old, after


@PROPERTY
@given(parts=with_block(), block=BLOCKS)
def test_property_bytes_outside_the_sentinels_are_identical(
    parts: tuple[bytes, bytes, bytes], block: str
) -> None:
    before, old, after = parts
    original = before + old + after
    assert find_block(original) == (len(before), len(before) + len(old))
    result = patch_bytes(original, block)
    assert result.startswith(before)
    assert result.endswith(after)
    start, stop = find_block(result) or (-1, -1)
    assert (result[:start], result[stop:]) == (before, after)
    body = result[start:stop]
    assert body.startswith(B) and body.endswith(E)
    assert patch_bytes(result, block) == result


@PROPERTY
@given(original=NO_SENTINEL, block=BLOCKS)
def test_property_original_without_sentinel_is_an_exact_prefix(original: bytes, block: str) -> None:
    result = patch_bytes(original, block)
    assert result.startswith(original)
    added = result[len(original) :]
    body = original[len(BOM) :] if original.startswith(BOM) else original
    if body and not original.endswith(b"\n"):
        assert added[:1] in (b"\n", b"\r")  # exactly one newline before the region
        assert added.lstrip(b"\r\n").startswith(B)
        assert len(added) - len(added.lstrip(b"\r\n")) in (1, 2)
    else:
        assert added.startswith(B)
    assert patch_bytes(result, block) == result
    assert remove_block(result) == original
