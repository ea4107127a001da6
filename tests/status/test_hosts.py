"""Commit links from `origin`'s URL: known hosts only, rebuilt from checked parts."""

from __future__ import annotations

import pytest

from gitvault.status import hosts

SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    ("url", "page"),
    [
        ("https://github.com/acme/widgets.git", "https://github.com/acme/widgets/commit/"),
        ("https://github.com/acme/widgets", "https://github.com/acme/widgets/commit/"),
        ("git@github.com:acme/widgets.git", "https://github.com/acme/widgets/commit/"),
        ("ssh://git@github.com/acme/widgets.git", "https://github.com/acme/widgets/commit/"),
        (
            "https://user:t0ken@GitHub.com/acme/widgets.git/",
            "https://github.com/acme/widgets/commit/",
        ),
        ("https://gitlab.com/group/sub/proj.git", "https://gitlab.com/group/sub/proj/-/commit/"),
        ("ssh://git@gitlab.com:2222/group/proj.git", "https://gitlab.com/group/proj/-/commit/"),
        ("git@gitlab.com:group/sub/proj.git", "https://gitlab.com/group/sub/proj/-/commit/"),
        ("https://bitbucket.org/team/repo.git", "https://bitbucket.org/team/repo/commits/"),
        ("git@bitbucket.org:team/repo.git", "https://bitbucket.org/team/repo/commits/"),
        (
            "https://codeberg.org/forgejo/forgejo.git",
            "https://codeberg.org/forgejo/forgejo/commit/",
        ),
        ("git@codeberg.org:me/my.repo.git", "https://codeberg.org/me/my.repo/commit/"),
        ("https://gitea.com/gitea/tea", "https://gitea.com/gitea/tea/commit/"),
    ],
)
def test_a_known_host_gives_its_commit_page(url: str, page: str) -> None:
    host = hosts.parse_remote(url)
    assert host is not None, url
    assert host.commit_url(SHA) == page + SHA
    assert "t0ken" not in host.commit_url(SHA) and "user" not in host.base


@pytest.mark.parametrize(
    "url",
    [
        None,
        "",
        "javascript:alert(1)",
        "javascript://github.com/%0aalert(1)",
        "data:text/html,<script>alert(1)</script>",
        "file:///srv/git/widgets.git",
        "/srv/git/widgets.git",
        "../widgets",
        "https://github.com.evil.example/acme/widgets",
        "https://evil.example/github.com/acme/widgets",
        "https://github.com/acme",
        "https://github.com/acme/widgets/extra",
        "https://github.com/acme/widgets?tab=x",
        "https://github.com/acme/widgets#frag",
        'https://github.com/acme/wid"gets',
        "https://github.com/acme/wid gets",
        "https://github.com/acme/..",
        "https://github.com/../widgets",
        "https://github.com/acme/widgets\x1b[31m",
        "https://github.com/acme/widgets\u2028",
        "https://github.com:99999/acme/widgets",
        "ftp://github.com/acme/widgets",
        "git@github.com:acme/<img>.git",
        "https://gitlab.com/" + "/".join(["g"] * 30),
    ],
)
def test_anything_else_gives_no_link(url: str | None) -> None:
    assert hosts.parse_remote(url) is None


def test_a_commit_page_is_built_from_hex_only() -> None:
    host = hosts.parse_remote("git@github.com:acme/widgets.git")
    assert host is not None
    assert host.commit_url("abc1234").endswith("/commit/abc1234")
    for bad in ("javascript:alert(1)", "ABC1234", "abc12", "abc1234/../../x", SHA + "0"):
        with pytest.raises(ValueError):
            host.commit_url(bad)
