"""`gitvault view`: the memory as one self-contained static HTML page (no server, no network,
no external asset; it opens from disk and may be shared).

What it holds: the digest, every citation a link (to the commit's page on the hosting service
when `origin` is a known host, status/hosts; else to the commit's `git show --stat` text
embedded in the page), verify's marks on its lines (read from verify.json, never recomputed),
a timeline of sessions, their decisions, reverts and folds, the paths the memory knows most
about (the per-path index), and a search box that filters what the page holds.

What it shows is what recall shows: the same lines (memory/recall.digest_lines: forgotten and
review-held items out, another clone's marked), the same way out (memory/fences.outbound:
secrets redacted again, controls and fences neutralised), sessions forgotten or held left
out, private sessions (a local-only ref) never in it. Then everything is HTML-escaped; the
only links are `#` anchors the page builds and commit pages rebuilt from a parsed host
(hex shas only); data for the script is JSON with `<`, `>`, `&`, U+2028/9 escaped; a
Content-Security-Policy allows nothing but the page's own style and script, by hash.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from gitvault import resources
from gitvault.errors import GitvaultError
from gitvault.memory import cites, recall, sections
from gitvault.memory.fences import outbound, strip_recall
from gitvault.resolve import Location
from gitvault.status import charts, hosts
from gitvault.vault import frontmatter, gitcmd, layout, origin, statedir
from gitvault.vault.times import parse_time

# In every page's head: how refresh_pages knows a file at a remembered path is still a page.
GENERATOR = '<meta name="generator" content="gitvault view">'
SESSIONS_SHOWN = 300  # the newest sessions on the timeline
REVERTS_SHOWN = 100
FOLDS_SHOWN = 200
PATHS_SHOWN = 20
COMMITS_EMBEDDED = 300  # commits whose text the page carries (no known host)
SHOW_CHARS = 6_000  # of one commit's text
SUMMARY_CHARS = 600  # of a session's summary, as recall cuts it
MARKS = ("stale", "dangling", "repointed")


class NoVault(GitvaultError):
    pass


@dataclass
class Line:
    """A digest line as the page shows it."""

    kind: str  # heading | item | text
    text: str  # outbound already
    status: str = ""  # verify's: ok | stale | dangling | repointed; "" when not checked
    reasons: list[str] = field(default_factory=list)


@dataclass
class Event:
    when: int
    kind: str  # session | decision | revert | fold
    title: str  # outbound already
    detail: str = ""  # outbound already
    slug: str = ""  # sessions: the anchor s-<slug>


@dataclass
class Commit:
    sha: str  # full (or the hex prefix a host can resolve)
    href: str  # a host's commit page, or #c-<sha>
    text: str = ""  # embedded: `git show --stat`, or the vault's note when this clone lacks it


@dataclass
class Report:
    name: str
    generated: int
    tip: str
    folded_at: str = ""
    merger: str = ""
    host: hosts.Host | None = None
    lines: list[Line] = field(default_factory=list)
    verified: bool = False  # verify.json holds results for this digest
    events: list[Event] = field(default_factory=list)
    paths: list[tuple[str, int]] = field(default_factory=list)
    commits: dict[str, Commit] = field(default_factory=dict)  # c:<prefix> → its commit
    sessions: set[str] = field(default_factory=set)  # slugs on the page
    older_sessions: int = 0  # sessions beyond SESSIONS_SHOWN, left off the timeline
    unpushed: int = 0  # cited commits on no branch of origin (known host): shown in the page
    notes: int = 0
    folds: int = 0


def default_path(loc: Location) -> Path:
    """Where the page goes without --out: the user's cache folder, one file per repository
    (never inside a worktree, where `git add -A` would commit it, nor in .git)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    where = loc.workdir or loc.common_dir
    tag = hashlib.sha256(os.fsencode(loc.common_dir.resolve())).hexdigest()[:8]
    name = "".join(c if c.isalnum() or c in "._-" else "-" for c in where.name)[:60] or "repo"
    return Path(base) / "gitvault" / "view" / f"{name}-{tag}.html"


def collect(loc: Location, now: float | None = None) -> Report:
    cwd = loc.workdir or loc.common_dir
    rev = layout.branch_ref(gitcmd.vault_branch(cwd))
    tip = gitcmd.ref_exists(cwd, rev)
    if tip is None:
        raise NoVault("there is no vault in this repository yet", hint="run `gitvault install`")
    report = Report(
        name=(loc.workdir or loc.common_dir).name, generated=int(now or time.time()), tip=tip
    )
    folders = [layout.SESSIONS + "/", layout.TOMBSTONES + "/"]
    entries = gitcmd.ls_tree(cwd, tip, [layout.DIGEST, *folders])
    notes = gitcmd.ls_tree(cwd, tip, [layout.NOTES + "/"], recursive=True)
    by_path = {e.path: e for e in entries}
    tombs = cites.tombstones_from(by_path)
    origins = origin.load(loc)
    noted = {sha: e.oid for e in notes if (sha := layout.note_sha(e.path))}
    report.notes = len(noted)
    _digest(loc, report, by_path.get(layout.DIGEST), origins, tombs)
    _sessions(cwd, report, entries, origins, tombs)
    report.paths = charts.top_paths(loc, PATHS_SHOWN)  # brings the per-path index current
    _reverts(loc, report, tombs)
    _folds(cwd, report, tip)
    report.events.sort(key=lambda e: (e.when, e.kind), reverse=True)
    _commits(cwd, report, noted)
    return report


def _digest(
    loc: Location,
    report: Report,
    entry: gitcmd.TreeEntry | None,
    origins: origin.Origins,
    tombs: frozenset[str],
) -> None:
    if entry is None:
        return
    data = gitcmd.cat_blobs(loc.common_dir, [entry.oid]).get(entry.oid, b"")
    meta, body = frontmatter.parse(data.decode("utf-8", "replace"))
    report.folded_at = outbound(str(meta.get("folded_at", ""))[:25])
    report.merger = outbound(str(meta.get("merger", ""))[:40])
    came = origins.of(layout.DIGEST, entry.oid) if origins else None
    marks = _marks(loc, entry.oid)
    report.verified = marks is not None
    for stored, shown in recall.digest_lines(strip_recall(body).strip(), origins, came, tombs):
        if not stored.strip():
            continue
        if stored.startswith("# "):
            continue  # the digest's title: the page has its own
        if stored.startswith("## "):
            heading = stored[3:].strip()
            report.lines.append(
                Line("heading", outbound(heading, own_headings=frozenset([heading])))
            )
            continue
        kind = "item" if stored.lstrip().startswith("- ") else "text"
        text = outbound(shown.lstrip()[2:] if kind == "item" else shown)
        status, reasons = (marks or {}).get(stored, ("", []))  # "": a line verify skips
        report.lines.append(Line(kind, text, status, [outbound(r) for r in reasons]))


def _marks(loc: Location, digest_blob: str) -> dict[str, tuple[str, list[str]]] | None:
    """line → (status, reasons) from verify.json when it checked this digest, else None."""
    data = statedir.verify_results(loc)
    if data is None or data.get("digest_blob") != digest_blob:
        return None
    out: dict[str, tuple[str, list[str]]] = {}
    lines = data.get("lines")
    for item in lines if isinstance(lines, list) else []:
        if isinstance(item, dict) and isinstance(item.get("line"), str):
            status = str(item.get("status") or "ok")
            reasons = item.get("reasons")
            out[item["line"]] = (
                status if status in MARKS else "ok",
                [str(r) for r in reasons] if isinstance(reasons, list) else [],
            )
    return out


def _sessions(
    cwd: Path,
    report: Report,
    entries: list[gitcmd.TreeEntry],
    origins: origin.Origins,
    tombs: frozenset[str],
) -> None:
    paths = sorted((e for e in entries if layout.session_slug(e.path)), key=lambda e: e.path)
    visible = [
        e
        for e in reversed(paths)
        if not cites.path_is_buried(e.path, tombs)
        and not ((came := origins.of(e.path)) is not None and came.hidden)
    ]
    shown = visible[:SESSIONS_SHOWN]
    report.older_sessions = len(visible) - len(shown)
    blobs = gitcmd.cat_blobs(cwd, [e.oid for e in shown])
    for entry in shown:
        slug = layout.session_slug(entry.path) or ""
        meta, body = frontmatter.parse(blobs.get(entry.oid, b"").decode("utf-8", "replace"))
        found = sections.split_sections(strip_recall(body))
        when = int(parse_time(meta.get("saved_at")) or 0)
        title = str(meta.get("title") or slug)
        mode = str(meta.get("mode") or "")
        branch = meta.get("branch")
        mark = origin.label(origins.of(entry.path)) if origins else ""
        detail = " · ".join(
            part
            for part in (
                "automatic record" if mode == "auto" else "",
                f"branch {branch}" if isinstance(branch, str) and branch else "",
                mark,
            )
            if part
        )
        summary = found.get("summary", "").strip()
        if len(summary) > SUMMARY_CHARS:
            summary = summary[:SUMMARY_CHARS] + " …"
        report.sessions.add(slug)
        report.events.append(
            Event(
                when,
                "session",
                outbound(title),
                outbound("\n".join(p for p in (detail, summary) if p)),
                slug=slug,
            )
        )
        for decision in sections.bullets(found.get("key decisions", "")):
            if not cites.is_forgotten(decision, tombs):
                report.events.append(Event(when, "decision", outbound(decision), f"s:{slug}"))


def _reverts(loc: Location, report: Report, tombs: frozenset[str]) -> None:
    from gitvault.pathrecall.index import PathIndex

    try:
        found = PathIndex(loc).reverts(REVERTS_SHOWN)
    except (GitvaultError, OSError, ValueError):
        return
    except Exception as exc:  # sqlite3.Error, without importing sqlite3 for the type
        if type(exc).__module__ == "sqlite3":
            return
        raise
    for revert, target in found:
        if cites.is_buried(f"c:{revert.sha}", tombs):
            continue
        undone = (
            f"reverts c:{target.sha[:7]} {target.subject}"
            if target is not None and not cites.is_buried(f"c:{target.sha}", tombs)
            else f"reverts {revert.target}"
            if revert.target
            else ""
        )
        why = f"why: {revert.reason}" if revert.reason else ""
        report.events.append(
            Event(
                revert.time,
                "revert",
                outbound(f"c:{revert.sha[:7]} {revert.subject}"),
                outbound("\n".join(p for p in (undone, why) if p)),
            )
        )


def _folds(cwd: Path, report: Report, tip: str) -> None:
    proc = gitcmd.run_git(
        ["log", f"-n{FOLDS_SHOWN}", "--format=%x00%ct%x00%s", "--grep=^fold ", tip, "--"],
        cwd,
        check=False,
    )
    records = proc.stdout.decode("utf-8", "replace").split("\0")[1:]
    for when, subject in zip(records[::2], records[1::2], strict=False):
        if when.strip().isdigit():
            report.folds += 1
            report.events.append(Event(int(when), "fold", outbound(subject.strip()[:300])))


def _cited(report: Report) -> list[str]:
    texts = [line.text for line in report.lines]
    texts += [t for e in report.events for t in (e.title, e.detail)]
    return list(dict.fromkeys(c for t in texts for c in cites.cites_in(t) if c.startswith("c:")))


def _commits(cwd: Path, report: Report, noted: dict[str, str]) -> None:
    """Each cited commit's link: the host's page when origin is a known host, else the text
    the page embeds (`git show --stat`, or the vault's note when this clone lacks it)."""
    report.host = hosts.parse_remote(_origin_url(cwd))
    by7: dict[str, list[str]] = {}
    for sha in noted:
        by7.setdefault(sha[:7], []).append(sha)
    full: dict[str, str] = {}
    for cite in _cited(report):
        prefix = cite[2:]
        if not hosts.SHA.fullmatch(prefix):
            continue
        matches = [s for s in by7.get(prefix[:7], []) if s.startswith(prefix)]
        if len(matches) == 1:
            full[cite] = matches[0]
        elif report.host is not None and not matches:
            full[cite] = prefix  # not noted here: the host resolves the prefix, or says so
    if report.host is not None:
        local = _not_on_origin(cwd, [sha for sha in full.values() if len(sha) == 40])
        for cite, sha in full.items():
            if sha not in local:
                report.commits[cite] = Commit(sha, report.host.commit_url(sha))
        full = {cite: sha for cite, sha in full.items() if sha in local}
        report.unpushed = len(set(full.values()))
    wanted = list(dict.fromkeys(full.values()))[:COMMITS_EMBEDDED]
    shown = _show(cwd, wanted)
    missing = [sha for sha in wanted if sha not in shown]
    blobs = gitcmd.cat_blobs(cwd, [noted[s] for s in missing if s in noted])
    for sha in missing:
        note = blobs.get(noted.get(sha, ""), b"").decode("utf-8", "replace")
        if note:
            shown[sha] = "(this clone does not have the commit; the vault's note of it)\n\n" + note
    for cite, sha in full.items():
        if sha in shown:
            report.commits[cite] = Commit(sha, f"#c-{sha}", outbound(_cut(shown[sha])))


def _not_on_origin(cwd: Path, shas: list[str]) -> set[str]:
    """The commits among shas that no remote-tracking branch of origin holds (the host would
    answer 404 for them: the page carries their text instead); commits this clone lacks are
    not among them."""
    if not shas:
        return set()
    proc = gitcmd.run_git(
        ["rev-list", "--ignore-missing", *shas, "--not", "--remotes=origin", "--"],
        cwd,
        check=False,
    )
    if proc.returncode != 0:
        return set()
    return set(proc.stdout.decode("ascii", "replace").split()) & set(shas)


def _origin_url(cwd: Path) -> str | None:
    proc = gitcmd.run_git(["remote", "get-url", "origin"], cwd, check=False)
    return proc.stdout.decode("utf-8", "replace").strip() if proc.returncode == 0 else None


def _show(cwd: Path, shas: list[str]) -> dict[str, str]:
    """sha → `git show --stat` text (the author's name, not the address: the page may be
    shared), in one git call. Each record starts with a NUL and its sha: git stops a message
    at a NUL, so no commit's text can forge another's record."""
    if not shas:
        return {}
    fmt = "%x00%H%x00commit %H%nAuthor: %an%nDate:   %ad%n%n%B"
    proc = gitcmd.run_git(
        [
            "log",
            "--no-walk=unsorted",
            "--ignore-missing",
            "--stat=100",
            "--no-color",
            "--date=iso",
            f"--format={fmt}",
            *shas,
            "--",
        ],
        cwd,
        check=False,
    )
    records = proc.stdout.decode("utf-8", "replace").split("\0")[1:]
    wanted = set(shas)
    out: dict[str, str] = {}
    for sha, text in zip(records[::2], records[1::2], strict=False):
        if sha in wanted and sha not in out:
            out[sha] = text.rstrip()
    return out


def _cut(text: str) -> str:
    return text if len(text) <= SHOW_CHARS else text[:SHOW_CHARS] + "\n[… cut]"


# -- the page -----------------------------------------------------------------------------


def script_json(data: object) -> str:
    """JSON safe inside a <script> element: no `</script>`, no `<!--`, no character a
    JavaScript parser would take as a line end inside a string."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (
        ("&", "\\u0026"),
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


def _hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


def _asset(name: str) -> str:
    return resources.view_asset(name).read_text(encoding="utf-8")


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}" + ("" if n == 1 else "s")


def _day(moment: int) -> str:
    try:
        return (
            datetime.fromtimestamp(moment, tz=UTC).strftime("%Y-%m-%d %H:%M")
            if moment > 0
            else "undated"
        )
    except (OverflowError, OSError, ValueError):  # a forged date beyond what a clock shows
        return "undated"


class _Page:
    def __init__(self, report: Report) -> None:
        self.report = report
        self.items: list[list[str]] = []  # [element id, its text in lower case] for the search

    def linked(self, text: str) -> str:
        """Text, escaped, with each citation the page can follow made a link."""
        out: list[str] = []
        pos = 0
        for start, end, cite in cites.cite_spans(text):
            out.append(_esc(text[pos:start]))
            href = self.href(cite)
            word = _esc(text[start:end])
            if href is None:
                out.append(f'<span class="cite">{word}</span>')
            else:
                external = ' rel="noopener noreferrer"' if not href.startswith("#") else ""
                out.append(f'<a class="cite" href="{_esc(href)}"{external}>{word}</a>')
            pos = end
        out.append(_esc(text[pos:]))
        return "".join(out)

    def href(self, cite: str) -> str | None:
        if cite.startswith("s:"):
            slug = cite[2:]
            ok = slug in self.report.sessions and layout.is_slug(slug)
            return f"#s-{slug}" if ok else None
        found = self.report.commits.get(cite)
        return found.href if found else None

    def item(self, ident: str, *texts: str) -> str:
        self.items.append([ident, " ".join(texts).lower()])
        return ident

    def digest(self) -> str:
        r = self.report
        if not r.lines:
            return '<p class="empty">No digest yet: run <code>gitvault fold</code>.</p>'
        parts: list[str] = []
        heading = ""
        group: list[str] = []

        def close() -> None:
            if heading or group:
                items = f'<ul class="gv-list">{"".join(group)}</ul>' if group else ""
                parts.append(f'<div class="gv-group">{heading}{items}</div>')
            group.clear()

        for n, line in enumerate(r.lines):
            if line.kind == "heading":
                close()
                heading = f"<h3>{_esc(line.text)}</h3>"
                continue
            marked = line.status if line.status in MARKS else ""
            ident = self.item(f"d-{n}", line.text, marked, *line.reasons)
            mark = ""
            if line.status in MARKS:
                why = "; ".join(line.reasons)
                mark = (
                    f' <span class="mark {line.status}">{line.status}'
                    + (f": {_esc(why)}" if why else "")
                    + "</span>"
                )
            group.append(
                f'<li class="gv-item {line.kind}" id="{ident}">{self.linked(line.text)}{mark}</li>'
            )
        close()
        return "".join(parts)

    def verify(self) -> str:
        r = self.report
        if not r.lines:
            return '<p class="empty">Nothing to verify: there is no digest yet.</p>'
        if not r.verified:
            return (
                '<p class="empty">The digest has not been verified since its last fold: run '
                "<code>gitvault verify</code>, then <code>gitvault view</code> again.</p>"
            )
        counts: dict[str, int] = {}
        for line in r.lines:
            if line.status:
                counts[line.status] = counts.get(line.status, 0) + 1
        summary = ", ".join(f"{counts[k]} {k}" for k in ("ok", *MARKS) if counts.get(k))
        item = self.item
        rows = [
            f'<li class="gv-item" id="{item(f"v-{n}", line.status, line.text, *line.reasons)}">'
            f'<span class="mark {line.status}">{line.status}</span> '
            f'<a href="#d-{n}">{_esc(line.text)}</a>'
            + (f'<div class="why">{_esc("; ".join(line.reasons))}</div>' if line.reasons else "")
            + "</li>"
            for n, line in enumerate(r.lines)
            if line.status in MARKS
        ]
        body = f'<ul class="gv-list">{"".join(rows)}</ul>' if rows else ""
        return f'<p class="summary">Verify checked the digest: {_esc(summary)}.</p>{body}'

    def timeline(self) -> str:
        r = self.report
        if not r.events:
            return '<p class="empty">No session, revert or fold yet.</p>'
        rows = []
        for n, event in enumerate(r.events):
            ident = f"s-{event.slug}" if event.slug and layout.is_slug(event.slug) else f"e-{n}"
            self.item(ident, event.kind, _day(event.when), event.title, event.detail)
            detail = (
                f'<div class="detail">{self.linked(event.detail)}</div>' if event.detail else ""
            )
            rows.append(
                f'<li class="gv-item ev {event.kind}" id="{ident}">'
                f'<time>{_day(event.when)}</time> <span class="kind">{event.kind}</span> '
                f'<span class="title">{self.linked(event.title)}</span>{detail}</li>'
            )
        older = (
            f'<p class="note">{_count(r.older_sessions, "older session")} not shown here '
            "(<code>gitvault log --kind session</code>).</p>"
            if r.older_sessions
            else ""
        )
        return f'<ol class="gv-list timeline">{"".join(rows)}</ol>{older}'

    def paths(self) -> str:
        r = self.report
        if not r.paths:
            return '<p class="empty">The per-path index knows no path yet.</p>'
        most = max(n for _, n in r.paths)
        rows = []
        for n, (path, commits) in enumerate(r.paths):
            shown = outbound(path)
            ident = self.item(f"p-{n}", shown)
            rows.append(
                f'<tr class="gv-item" id="{ident}"><td class="path">{_esc(shown)}</td>'
                f'<td class="n">{commits}</td>'
                f'<td><progress max="{most}" value="{commits}">{commits}</progress></td></tr>'
            )
        return (
            '<table class="paths"><thead><tr><th>path</th><th>commits</th><th></th></tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )

    def commits(self) -> str:
        embedded = {c.sha: c for c in self.report.commits.values() if c.text}
        if not embedded:
            return ""
        why = "that is on no branch of origin" if self.report.host else "(origin is no known host)"
        rows = []
        for sha, commit in embedded.items():
            ident = self.item(f"c-{sha}", sha, commit.text)
            rows.append(
                f'<article class="gv-item commit" id="{ident}"><h3>{sha[:12]}</h3>'
                f"<pre>{_esc(commit.text)}</pre></article>"
            )
        return (
            '<section id="commits" class="gv-section"><h2>Commits cited</h2>'
            '<p class="note">What <code>git show --stat</code> says of each commit the page '
            f"cites {why}.</p>{''.join(rows)}</section>"
        )


def render(report: Report) -> str:
    page = _Page(report)
    sections_html = [
        ("digest", "Digest", page.digest()),
        ("verify", "Verify", page.verify()),
        ("timeline", "Timeline", page.timeline()),
        ("paths", "Paths the memory knows most about", page.paths()),
    ]
    commits_html = page.commits()
    css, js = _asset("view.css"), _asset("view.js")
    data = script_json({"items": page.items})
    policy = (
        "default-src 'none'; "
        f"style-src {_hash(css)}; script-src {_hash(js)}; "
        "img-src 'none'; base-uri 'none'; form-action 'none'"
    )
    r = report
    where = (
        f"commits link to {r.host.name} ({_esc(r.host.host + '/' + '/'.join(r.host.segments))})"
        if r.host
        else "commits are shown in the page (origin is no known host)"
    )
    if r.host and r.unpushed:
        where += f"; {_count(r.unpushed, 'cited commit')} on no branch of origin: shown in the page"
    folded = (
        f"digest folded {_esc(r.folded_at[:16].replace('T', ' '))} by {_esc(r.merger)}"
        if r.folded_at
        else "no digest yet"
    )
    more = "+" if r.folds >= FOLDS_SHOWN else ""
    nav = " ".join(f'<a href="#{key}">{_esc(title)}</a>' for key, title, _ in sections_html)
    if commits_html:
        nav += ' <a href="#commits">Commits cited</a>'
    body = "".join(
        f'<section id="{key}" class="gv-section"><h2>{_esc(title)}</h2>{inner}</section>'
        for key, title, inner in sections_html
    )
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_esc(policy)}">'
        '<meta name="referrer" content="no-referrer">'
        f"{GENERATOR}"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>gitvault · {_esc(r.name)}</title><style>{css}</style></head><body>"
        f'<header><h1>Memory of <span class="repo">{_esc(r.name)}</span></h1>'
        f'<p class="meta">{_count(r.notes, "commit note")} · '
        f"{_count(len(r.sessions), 'session')} · {_count(r.folds, 'fold')}{more} · {folded} · "
        f"vault {r.tip[:12]} · written {_day(r.generated)} UTC · {where}</p>"
        f'<p class="search"><input id="gv-search" type="search" hidden '
        'placeholder="Filter this page" aria-label="Filter this page" autocomplete="off"> '
        '<output id="gv-count" aria-live="polite"></output></p>'
        f"<nav>{nav}</nav></header><main>{body}{commits_html}</main>"
        f'<script type="application/json" id="gv-data">{data}</script>'
        f"<script>{js}</script></body></html>\n"
    )


def write(loc: Location, out: Path | None = None, now: float | None = None) -> Path:
    """Collect, render and write the page; the path written (recorded in the state folder, so
    forget and redact reach this copy of the vault's text too: refresh_pages)."""
    from gitvault.vault.files import atomic_write, make_dirs

    target = out if out is not None else default_path(loc)
    make_dirs(target.parent)
    atomic_write(target, render(collect(loc, now)).encode("utf-8"))
    _remember(loc, Path(os.path.abspath(target)))
    return target


MAX_PAGES = 50  # pages remembered per repository (the oldest forgotten first)
PAGE_LIMIT = 64 * 1024 * 1024


def _pages(loc: Location) -> list[str]:
    data = statedir.VIEW_PAGES_FILE.read(loc) or {}
    pages = data.get("pages")
    return [p for p in pages if isinstance(p, str) and p] if isinstance(pages, list) else []


def _remember(loc: Location, page: Path) -> None:
    pages = [p for p in _pages(loc) if p != str(page)] + [str(page)]
    try:
        statedir.VIEW_PAGES_FILE.write(loc, {"pages": pages[-MAX_PAGES:]})
    except OSError:
        pass  # the page is written; only a later forget will not know of it


def refresh_pages(loc: Location) -> list[tuple[str, str | None]]:
    """Write every page `view` wrote here again from the vault as it is now (after forget or
    redact: a page must not keep what the vault no longer shows). Only a regular file that is
    still a gitvault page is written (never through a link, never a file put there since);
    the others are forgotten. Each page kept: (path, None), or (path, why it could not be
    written)."""
    from gitvault.vault.files import read_regular

    done: list[tuple[str, str | None]] = []
    for page in _pages(loc):
        try:
            head = read_regular(page, PAGE_LIMIT)[:4096]
        except OSError:
            continue  # gone, moved, a link or not a file: not a page of ours any more
        if GENERATOR.encode() not in head:
            continue
        try:
            write(loc, Path(page))
            done.append((page, None))
        except (OSError, GitvaultError) as exc:
            done.append((page, getattr(exc, "message", None) or str(exc)))
    kept = [p for p, _ in done]
    try:
        statedir.VIEW_PAGES_FILE.write(loc, {"pages": kept})
    except OSError:
        pass
    return done
