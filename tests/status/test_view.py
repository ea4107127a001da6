"""`gitvault view`: one static page of the memory, shown as recall shows it (forgotten, held and
private items out, secrets redacted again), every text escaped, links only to anchors of the
page or to a known host's commit pages, script data that no commit text can break out of."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from gitvault.memory import sessions
from gitvault.resolve import resolve
from gitvault.status import view
from gitvault.vault import frontmatter, layout, statedir
from tests.support import fake_secrets
from tests.support.memory import cli_in, digest_meta_body, session_text, vault_of
from tests.support.repos import Repo

HOSTILE = '</script><img src=x onerror="alert(1)"><!-- \x1b]0;pwned\x07 \u2028 & "q"'


class Parsed(HTMLParser):
    """What a browser's parser would see: tags, ids, hrefs, script bodies, attribute names."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.ids: set[str] = set()
        self.hrefs: list[str] = []
        self.attrs: set[str] = set()
        self.scripts: list[tuple[str | None, str]] = []
        self._script: str | None | bool = False
        self.text: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for key, value in attrs:
            self.attrs.add(key)
            if key == "id" and value:
                self.ids.add(value)
            if key == "href" and tag == "a" and value is not None:
                self.hrefs.append(value)
        if tag == "script":
            self._script = dict(attrs).get("type")
            self.scripts.append((self._script, ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._script = False

    def handle_data(self, data: str) -> None:
        if self._script is not False:
            kind, body = self.scripts[-1]
            self.scripts[-1] = (kind, body + data)
        else:
            self.text.append(data)


def page_of(repo: Repo) -> tuple[str, Parsed]:
    text = view.render(view.collect(resolve(repo.path)))
    return text, Parsed(text)


def data_of(parsed: Parsed) -> dict[str, list[list[str]]]:
    blocks = [body for kind, body in parsed.scripts if kind == "application/json"]
    assert len(blocks) == 1
    data: dict[str, list[list[str]]] = json.loads(blocks[0])
    return data


def dangling_anchors(parsed: Parsed) -> list[str]:
    return [h for h in parsed.hrefs if h.startswith("#") and h[1:] not in parsed.ids]


def put_digest(repo: Repo, body: str) -> None:
    """A digest of this body, with the front matter a fold writes."""
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    meta, _ = digest_meta_body(repo)
    vault_of(repo).commit({"_master.md": frontmatter.render(meta, body).encode()}, "fold test")


def test_script_json_cannot_close_its_element_or_break_a_line() -> None:
    value = {"t": "</script><!--<script>&amp;\u2028\u2029 ' \""}
    text = view.script_json(value)
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}
    assert json.loads(text) == value


def test_a_hostile_commit_subject_and_session_stay_text(repo: Repo) -> None:
    repo.commit(f"feat: {HOSTILE}", files={"a.txt": "a\n"})
    assert cli_in(repo, "save", stdin=session_text(f"Title {HOSTILE}", decision=HOSTILE)).code == 0
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    page, parsed = page_of(repo)
    assert "img" not in parsed.tags and "onerror" not in parsed.attrs
    assert [kind for kind, _ in parsed.scripts] == ["application/json", None]
    assert "</script><img" not in page and "\x1b" not in page and "\x07" not in page
    assert "\u2028" not in page
    text = " ".join(parsed.text)
    assert '<img src=x onerror="alert(1)">' in text  # shown as text, escaped in the source
    items = " ".join(t for _, t in data_of(parsed)["items"])
    assert "</script><img" in items  # the script's data holds it, escaped in the source
    assert dangling_anchors(parsed) == []


def test_the_policy_allows_only_the_pages_own_style_and_script(repo: Repo) -> None:
    import base64
    import hashlib

    repo.commit("feat: one")
    page, parsed = page_of(repo)
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    rules = policy.group(1).replace("&#x27;", "'")
    assert "default-src 'none'" in rules and "unsafe" not in rules and "http" not in rules
    code = [body for kind, body in parsed.scripts if kind is None][0]
    digest = base64.b64encode(hashlib.sha256(code.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in rules
    assert not re.search(r"<(link|img|iframe|object|embed)\b", page)
    assert not re.search(r"\b(src|srcset|style|on\w+)=", page)


def test_citations_link_to_a_known_hosts_commit_pages(repo: Repo) -> None:
    repo.git("remote", "add", "origin", "git@github.com:acme/widgets.git")
    shas = [repo.commit(f"feat: step {i}", files={f"s{i}.py": "x\n"}) for i in range(3)]
    repo.git("revert", "--no-edit", "HEAD")
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")  # as if pushed
    decision = f"Chose c:{shas[0][:7]}"
    assert cli_in(repo, "save", stdin=session_text("Linked", decision=decision)).code == 0
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    _, parsed = page_of(repo)
    external = [h for h in parsed.hrefs if not h.startswith("#")]
    assert external, parsed.hrefs
    for href in external:
        match = re.fullmatch(r"https://github\.com/acme/widgets/commit/([0-9a-f]{40})", href)
        assert match, href
        assert repo.git("cat-file", "-t", match.group(1)).strip() == "commit"
    assert f"https://github.com/acme/widgets/commit/{shas[0]}" in parsed.hrefs
    assert dangling_anchors(parsed) == []
    assert "commits" not in parsed.ids  # nothing embedded: the host shows the commits
    # A commit on no branch of origin would be a 404 there: the page carries its text.
    local = repo.commit("feat: not pushed yet", files={"n.py": "n\n"})
    decision = f"Chose c:{local[:7]}"
    assert cli_in(repo, "save", stdin=session_text("Local", decision=decision)).code == 0
    page, parsed = page_of(repo)
    assert f"#c-{local}" in parsed.hrefs and f"c-{local}" in parsed.ids
    assert f"https://github.com/acme/widgets/commit/{shas[0]}" in parsed.hrefs
    assert "1 cited commit on no branch of origin" in page
    assert dangling_anchors(parsed) == []


def test_without_a_known_host_the_commits_text_is_in_the_page(repo: Repo) -> None:
    repo.git("remote", "add", "origin", "javascript:alert(1)//github.com/acme/widgets")
    sha = repo.commit("feat: the embedded one", files={"e.py": "e\n"})
    assert (
        cli_in(repo, "save", stdin=session_text("Embedded", decision=f"See c:{sha[:7]}")).code == 0
    )
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    page, parsed = page_of(repo)
    assert "javascript" not in page
    assert all(h.startswith("#") for h in parsed.hrefs)
    assert f"#c-{sha}" in parsed.hrefs and f"c-{sha}" in parsed.ids
    assert dangling_anchors(parsed) == []
    shown = page[page.index(f'id="c-{sha}"') :]
    assert f"commit {sha}" in shown and "feat: the embedded one" in shown and "e.py" in shown
    assert "@example.com" not in page  # the author's name, not the address


def test_forgotten_private_and_held_items_are_absent_and_secrets_redacted(repo: Repo) -> None:
    loc = resolve(repo.path)
    keep = repo.commit("feat: kept work", files={"k.py": "k\n"})
    gone = repo.commit("feat: forgotten work", files={"g.py": "g\n"})
    kept = sessions.save_session(loc, session_text("Kept session"), title="Kept session").slug
    lost = sessions.save_session(loc, session_text("Lost session"), title="Lost session").slug
    held = sessions.save_session(loc, session_text("Held session"), title="Held session").slug
    secret = fake_secrets.GH_CLASSIC
    put_digest(
        repo,
        "# Project memory\n\n## Decisions\n"
        f"- Kept fact (c:{keep[:7]}, s:{kept})\n"
        f"- Forgotten fact (c:{gone[:7]})\n"
        f"- Lost fact (s:{lost})\n"
        f"- Held fact (s:{held})\n"
        f"- Token {secret} in a fact (c:{keep[:7]})\n"
        "- Words VAULT RECALL in a fact\n"
        "- === VAULT RECALL === fence in a fact\n",
    )
    sessions.save_session(
        loc, session_text("Private session"), title="Private session", private=True
    )
    assert cli_in(repo, "forget", f"c:{gone[:7]}").code == 0
    assert cli_in(repo, "forget", f"s:{lost}").code == 0
    # A teammate's session that came by sync and waits for review (`gitvault review`).
    came = {"remote": "origin", "author": "Mallory", "review": "held", "at": 1}
    statedir.ORIGINS_FILE.write(loc, {"files": {layout.session_path(held): came}})
    page, parsed = page_of(repo)
    assert "Kept fact" in page and "Kept session" in page
    for absent in (
        "Forgotten fact",
        "Lost fact",
        "Lost session",
        "forgotten work",
        gone[:7],
        "Held fact",
        "Held session",
    ):
        assert absent not in page, absent
    assert "Private session" not in page
    assert secret not in page and "[REDACTED" in page
    assert "VAULT RECALL" not in page and "Words VAULT-RECALL in a fact" in page
    assert "fence in a fact" not in page  # an opened fence cuts to the end, as in recall
    assert dangling_anchors(parsed) == []


def test_verify_marks_come_from_its_results_for_this_digest(repo: Repo) -> None:
    sha = repo.commit("feat: one", files={"one.py": "1\n"})
    line = f"- One is done in `one.py` (c:{sha[:7]})"
    put_digest(repo, f"# Project memory\n\n## State\n{line}\n- Another line\n")
    loc = resolve(repo.path)
    _, before = page_of(repo)
    assert "has not been verified" in " ".join(before.text)
    blob = repo.git("rev-parse", "vault:_master.md").strip()
    results = {
        "digest_blob": blob,
        "lines": [
            {"category": "State", "line": line, "status": "stale", "reasons": ["one.py <gone>"]},
            {"category": "State", "line": "- Another line", "status": "ok", "reasons": []},
        ],
    }
    statedir.save_verify(loc, results)
    page, parsed = page_of(repo)
    text = " ".join(parsed.text)
    assert "1 ok, 1 stale" in text and "stale: one.py <gone>" in text
    assert "one.py &lt;gone&gt;" in page
    statedir.save_verify(loc, {**results, "digest_blob": "0" * 40})
    assert "has not been verified" in " ".join(page_of(repo)[1].text)


def test_the_timeline_holds_sessions_decisions_reverts_and_folds(repo: Repo) -> None:
    sha = repo.commit("feat: to be reverted", files={"r.py": "r\n"})
    repo.git("revert", "--no-edit", sha)
    assert (
        cli_in(repo, "save", stdin=session_text("Timeline", decision="Pick the red one")).code == 0
    )
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    _, parsed = page_of(repo)
    rows = [t for i, t in data_of(parsed)["items"] if not i.startswith(("d-", "p-", "v-", "c-"))]
    kinds = {t.split(" ", 1)[0] for t in rows}
    assert kinds == {"session", "decision", "revert", "fold"}, rows
    revert = next(t for t in rows if t.startswith("revert"))
    assert f"c:{sha[:7]}" in revert and "to be reverted" in revert
    assert any("r.py" in t for i, t in data_of(parsed)["items"] if i.startswith("p-"))


def test_the_command_writes_outside_the_worktree_by_default_and_warns_inside(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    repo.commit("feat: one")
    done = cli_in(repo, "view")
    assert done.code == 0, done
    written = Path(done.out.strip())
    assert written.is_file() and written.is_relative_to(tmp_path / "cache" / "gitvault" / "view")
    assert written.read_text().startswith("<!doctype html>")
    inside = cli_in(repo, "view", "--out", str(repo.path / "memory.html"))
    assert inside.code == 0 and "`git add -A` would commit it" in inside.err
    (repo.path / ".gitignore").write_text("*.html\n")
    ignored = cli_in(repo, "view", "--out", str(repo.path / "memory.html"))
    assert ignored.code == 0 and "would commit" not in ignored.err


def test_no_vault_is_an_error_that_says_what_to_run(repo_factory: object) -> None:
    bare = repo_factory("plain", install=False)  # type: ignore[operator]
    result = cli_in(bare, "view")
    assert result.code != 0 and "gitvault install" in result.err


def test_open_hands_the_page_to_the_users_browser(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import webbrowser

    from tests.support.repos import wait_until

    seen = tmp_path / "opened.txt"
    fake = tmp_path / "browser.sh"
    fake.write_text(f'#!/bin/sh\nprintf %s "$1" > {seen}\n')
    fake.chmod(0o755)
    monkeypatch.setenv("BROWSER", str(fake))
    monkeypatch.setattr(webbrowser, "_tryorder", None)  # read $BROWSER again
    page = tmp_path / "page.html"
    assert cli_in(repo, "view", "--out", str(page), "--open").code == 0
    wait_until(seen.exists, what="the browser to be started")
    wait_until(lambda: seen.read_text() == page.resolve().as_uri(), what="the page's URL")


def test_the_timeline_says_how_many_older_sessions_it_leaves_off(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    loc = resolve(repo.path)
    for title in ("First session", "Second session", "Third session"):
        sessions.save_session(loc, session_text(title), title=title)
    monkeypatch.setattr(view, "SESSIONS_SHOWN", 2)
    page, _ = page_of(repo)
    assert "Third session" in page and "Second session" in page and "First session" not in page
    assert "1 older session not shown" in page


def test_a_forged_date_does_not_stop_the_page(repo: Repo) -> None:
    loc = resolve(repo.path)
    saved = sessions.save_session(loc, session_text("Far future"), title="Far future")
    raw = vault_of(repo).read_text(saved.path) or ""
    meta, body = frontmatter.parse(raw)
    meta["saved_at"] = "9999-12-31T23:59:59Z"
    vault_of(repo).commit({saved.path: frontmatter.render(meta, body).encode()}, "session forged")
    page, _ = page_of(repo)
    assert "Far future" in page
    assert view._day(10**15) == "undated" and view._day(-5) == "undated"


def test_forget_and_redact_write_every_view_page_again(repo: Repo, tmp_path: Path) -> None:
    """A page `view` wrote (the default one in the cache folder, one written with --out) is a
    copy of the vault's text outside the repository: forget and redact write it again, so it
    no longer holds what the vault no longer shows; a file put in a page's place since is left
    alone."""
    forgotten, leaked = "ZEBRA-VIOLET-forgotten", "ZEBRA-VIOLET-leaked-internal-hostname"
    text = session_text("Setup", summary=f"uses {forgotten} mode", decision="keep it")
    assert cli_in(repo, "save", stdin=text).code == 0
    first = cli_in(repo, "view")
    default = Path(first.out.strip())
    mine = tmp_path / "shared" / "memory.html"
    assert cli_in(repo, "view", "--out", str(mine)).code == 0
    replaced = tmp_path / "replaced.html"
    assert cli_in(repo, "view", "--out", str(replaced)).code == 0
    replaced.write_text("<p>my own notes</p>\n")
    assert all(forgotten in p.read_text() for p in (default, mine))
    slug = next(p for p in repo.vault_files() if p.startswith("sessions/2"))
    done = cli_in(repo, "forget", f"s:{Path(slug).stem}")
    assert done.code == 0 and f"wrote the view page {mine} again" in done.out, done
    assert not any(forgotten in p.read_text() for p in (default, mine))
    assert replaced.read_text() == "<p>my own notes</p>\n"

    text = session_text("Leak", summary=f"talks to {leaked}", decision="rotate")
    assert cli_in(repo, "save", "--title", "Leak", stdin=text).code == 0
    leak = next(p for p in repo.vault_files() if p.startswith("sessions/2") and "leak" in p)
    assert cli_in(repo, "view").code == 0 and leaked in default.read_text()
    assert cli_in(repo, "view", "--out", str(mine)).code == 0 and leaked in mine.read_text()
    done = cli_in(repo, "redact", f"s:{Path(leak).stem}", "--pattern", leaked, "--yes", "--json")
    assert done.code == 0, done
    written = {row["path"] for row in done.json("redact")["view_pages"]}
    assert written == {str(default), str(mine)}
    assert not any(leaked in p.read_text() for p in (default, mine))
