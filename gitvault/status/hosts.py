"""Where a commit of this project can be seen on its hosting service: `origin`'s URL (https,
ssh or scp-like `git@host:owner/repo`) parsed, checked against the known hosts, and rebuilt
from its checked parts. Nothing of the URL is copied as it was: a remote's URL is untrusted
text (a clone's config, or a shared repository's), so a link is only ever
`https://<known host>/<checked segments>/…/<hex sha>`.

Known: GitHub, GitLab (nested groups), Bitbucket, and the Gitea family (Codeberg, gitea.com).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from gitvault.named import NamedTuple

# host → (kind, how many path segments the repository takes: (least, most))
KNOWN: dict[str, tuple[str, tuple[int, int]]] = {
    "github.com": ("github", (2, 2)),
    "gitlab.com": ("gitlab", (2, 20)),
    "bitbucket.org": ("bitbucket", (2, 2)),
    "codeberg.org": ("gitea", (2, 2)),
    "gitea.com": ("gitea", (2, 2)),
}
_COMMIT_PAGE = {
    "github": "/commit/",
    "gitlab": "/-/commit/",
    "bitbucket": "/commits/",
    "gitea": "/commit/",
}
NAMES = {"github": "GitHub", "gitlab": "GitLab", "bitbucket": "Bitbucket", "gitea": "Gitea"}
_SEGMENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")
_SCP = re.compile(r"(?:[A-Za-z0-9._~+-]{1,64}@)?(?P<host>[A-Za-z0-9.-]{1,253}):(?P<path>[^:]*)")
SHA = re.compile(r"[0-9a-f]{7,40}")
_SCHEMES = ("https", "http", "ssh", "git", "git+ssh", "ssh+git")


class Host(NamedTuple):
    kind: str  # github | gitlab | bitbucket | gitea
    host: str  # a key of KNOWN
    segments: tuple[str, ...]  # owner/…/repository, each checked against _SEGMENT

    @property
    def name(self) -> str:
        return NAMES[self.kind]

    @property
    def base(self) -> str:
        return f"https://{self.host}/{'/'.join(self.segments)}"

    def commit_url(self, sha: str) -> str:
        """The commit's page; sha must be hex (7 to 40 digits, lower case)."""
        if not SHA.fullmatch(sha):
            raise ValueError(f"not a commit sha: {sha!r}")
        return self.base + _COMMIT_PAGE[self.kind] + sha


def parse_remote(url: str | None) -> Host | None:
    """The known host a remote URL names, or None (unknown host, another scheme, a local
    path, anything malformed)."""
    if not url or len(url) > 2048:
        return None
    if not url.isascii() or any(not c.isprintable() or c.isspace() for c in url):
        return None
    if "://" in url:
        try:
            parts = urlsplit(url)
            host = parts.hostname or ""
            parts.port  # noqa: B018 - a malformed port raises ValueError
        except ValueError:
            return None
        if parts.scheme.lower() not in _SCHEMES or parts.query or parts.fragment:
            return None
        path = parts.path
    else:
        match = _SCP.fullmatch(url)
        if match is None:
            return None
        host, path = match.group("host"), match.group("path")
    host = host.lower().rstrip(".")
    if host not in KNOWN:
        return None
    kind, (least, most) = KNOWN[host]
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[: -len(".git")]
    segments = tuple(path.split("/")) if path else ()
    if not least <= len(segments) <= most:
        return None
    if not all(_SEGMENT.fullmatch(s) and s not in (".", "..") for s in segments):
        return None
    return Host(kind, host, segments)
