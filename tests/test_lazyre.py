"""gitvault.lazyre: a pattern compiled at its first use, as cheap as re's after it, and its program
kept for later processes (a store of this Python only, never trusted otherwise)."""

from __future__ import annotations

import gc
import marshal
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from gitvault import lazyre
from gitvault.vault import statedir


def test_a_lazy_pattern_answers_as_the_compiled_one() -> None:
    text = "notes/2024/01/02/" + "a" * 40 + ".md and NOTES/x"
    for source, flags in ((r"notes/(\d{4})/(\d\d)", 0), (r"notes", re.IGNORECASE)):
        lazy, real = lazyre.compile(source, flags), re.compile(source, flags)
        assert lazy.pattern == real.pattern and lazy.flags == real.flags
        assert lazy.groups == real.groups and lazy.groupindex == real.groupindex
        assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
        assert lazy.sub("-", text) == real.sub("-", text)
        assert lazy.split(text) == real.split(text) and lazy.findall(text) == real.findall(text)
        assert (lazy.search(text) or re.match("", "")).span() == (
            real.search(text) or re.match("", "")
        ).span()
    binary = lazyre.compile(rb"at '([^']*)'")
    found = binary.search(b"detected dubious ownership in repository at '/x'")
    assert found is not None and found.group(1) == b"/x"


def test_after_its_first_use_a_method_is_the_compiled_patterns_own() -> None:
    """No __getattr__ per call: a pattern in a loop over 100,000 vault paths once cost ~0.9 µs
    a call more than re's (the whole of an agent hook's gain, at 100,000 notes)."""
    lazy = lazyre.compile(r"x+")
    assert lazy.match("xx") is not None
    real = re.compile(r"x+")
    for name in ("match", "search", "sub"):
        assert name in vars(lazy)  # found on the instance: __getattr__ is never asked again
        method = getattr(lazy, name)
        # a method of the compiled pattern itself (from re, or restored from a store: equal)
        assert method.__self__ == real and method.__name__ == name


# -- the store: programs compiled once per Python, kept between processes ---------------------

_USE_THE_FILTER = """
import sys
from pathlib import Path
from re import _parser
compiled = []
real = _parser.parse
_parser.parse = lambda p, flags=0, state=None: (compiled.append(p), real(p, flags, state))[1]
from gitvault.vault import statedir
statedir.keep_patterns(Path(sys.argv[1]))
from gitvault.scrub.engine import scrub_secrets
text = "the password is Tr0ub4dor&3-horse-staple and key = 'sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc'"
print(scrub_secrets(text)[0])
print(len(compiled))
"""


def _filter_run(state: Path) -> tuple[str, int]:
    proc = subprocess.run(
        [sys.executable, "-c", _USE_THE_FILTER, str(state)],
        capture_output=True,
        text=True,
        check=True,
    )
    redacted, compiled = proc.stdout.splitlines()
    return redacted, int(compiled)


def test_a_later_process_compiles_none_of_the_patterns_an_earlier_one_kept(
    tmp_path: Path,
) -> None:
    first, compiled_first = _filter_run(tmp_path)
    assert compiled_first > 0 and "REDACTED" in first
    assert (tmp_path / statedir.PATTERN_STORE).is_file()
    second, compiled_second = _filter_run(tmp_path)
    assert second == first
    assert compiled_second == 0


def _every_stand_in() -> list[tuple[str | bytes, int]]:
    """Every pattern the package compiles through lazyre (its modules imported)."""
    import importlib
    import pkgutil

    import gitvault

    for info in pkgutil.walk_packages(gitvault.__path__, "gitvault."):
        if info.name not in ("gitvault.__main__",):
            importlib.import_module(info.name)
    return sorted(
        {obj._args for obj in gc.get_objects() if isinstance(obj, lazyre._Lazy)},
        key=repr,
    )


def test_every_kept_program_is_the_one_re_compiles() -> None:
    """Restored from a store, each of the package's patterns equals re.compile's (== compares
    flags and the whole program) and answers the same."""
    stand_ins = _every_stand_in()
    assert len(stand_ins) > 50
    saved = (lazyre._storing, dict(lazyre._store), lazyre._dirty)
    try:
        lazyre._store.clear()
        lazyre.adopt(None)
        for source, flags in stand_ins:
            lazyre._compiled(source, flags)
        data = lazyre.export()
        assert data is not None
        lazyre._store.clear()
        lazyre.adopt(data)
        assert len(lazyre._store) == len(stand_ins)
        for source, flags in stand_ins:
            restored, real = lazyre._compiled(source, flags), re.compile(source, flags)
            assert restored == real, source
            assert restored.groupindex == real.groupindex and restored.groups == real.groups
    finally:
        lazyre._storing, lazyre._dirty = saved[0], saved[2]
        lazyre._store.clear()
        lazyre._store.update(saved[1])


@pytest.mark.parametrize(
    "kind", ["garbage", "torn", "another-python", "refused", "not-ints", "link", "fifo"]
)
def test_a_store_that_is_not_this_pythons_is_ignored_and_replaced(
    tmp_path: Path, kind: str
) -> None:
    target = tmp_path / statedir.PATTERN_STORE
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"not gitvault's")
    _, compiled = _filter_run(tmp_path)
    good = target.read_bytes()
    target.unlink()
    if kind == "garbage":
        target.write_bytes(os.urandom(4096))
    elif kind == "torn":
        target.write_bytes(good[: len(good) // 2])
    elif kind in ("another-python", "refused", "not-ints"):
        header, entries = marshal.loads(good[4:])
        if kind == "another-python":
            header = (*header[:2], "2.7.18 (default)", *header[3:])
        elif kind == "refused":  # a program the engine refuses, under a valid checksum
            entries = {k: (v[0], [999999] * len(v[1]), *v[2:]) for k, v in entries.items()}
        else:
            entries = {k: (v[0], ["op"] * len(v[1]), *v[2:]) for k, v in entries.items()}
        body = marshal.dumps((header, entries))
        target.write_bytes(zlib.crc32(body).to_bytes(4, "big") + body)
    elif kind == "link":
        target.symlink_to(elsewhere)
    else:
        os.mkfifo(target)
    redacted, again = _filter_run(tmp_path)  # never hangs on the FIFO, never trusts the rest
    assert "REDACTED" in redacted and again == compiled
    assert elsewhere.read_bytes() == b"not gitvault's"  # a link is replaced, not written through
    assert target.is_file() and not target.is_symlink()
    assert _filter_run(tmp_path)[1] == 0  # the store written in its place serves
