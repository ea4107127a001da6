"""`gitvault view`'s page in a real headless Chromium (Debian's chromium + chromium-driver,
driven by Selenium): it renders, every link resolves (an anchor of the page, or a commit page of
the known host), the search box filters, the console stays clean (the page's own policy
reports any blocked load or script there), and the screenshot has content."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from gitvault.resolve import resolve
from gitvault.status import view
from tests.support import browser
from tests.support.memory import cli_in, session_text
from tests.support.repos import Repo

pytestmark = pytest.mark.slow

WORD = "zanzibar"  # in one decision only
HOSTILE = '</script><img src=x onerror="document.title=1"><script>document.title=2</script>'

ALL_ITEMS = "return document.querySelectorAll('.gv-item').length"
VISIBLE = (
    "return Array.from(document.querySelectorAll('.gv-item'))"
    ".filter(e => e.checkVisibility()).map(e => e.textContent.toLowerCase())"
)
HREFS = "return Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))"
MISSING_TARGETS = (
    "return Array.from(document.querySelectorAll('a[href^=\"#\"]'))"
    ".map(a => a.getAttribute('href').slice(1)).filter(id => !document.getElementById(id))"
)


@pytest.fixture(scope="module")
def reason() -> None:
    why = browser.missing()
    if why:
        print(f"skipping the browser test: {why}")
        pytest.skip(why)


def make_memory(repo: Repo) -> list[str]:
    shas = [
        repo.commit(f"feat: step {i} {HOSTILE}", files={f"src/m{i}.py": f"{i}\n"}) for i in range(3)
    ]
    repo.git("revert", "--no-edit", shas[1])
    text = session_text("Browser session", decision=f"Go with {WORD} (c:{shas[0][:7]})")
    assert cli_in(repo, "save", stdin=text).code == 0
    assert cli_in(repo, "save", stdin=session_text("Other session", decision="Keep it")).code == 0
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    cli_in(repo, "verify")  # its marks: exit 1 when a line is stale, which is fine here
    return shas


def typed(driver: Any, text: str) -> list[str]:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    box = driver.find_element(By.ID, "gv-search")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.BACKSPACE)
    if text:
        box.send_keys(text)
    shown: list[str] = driver.execute_script(VISIBLE)
    return shown


def test_the_page_renders_links_resolve_search_filters_and_the_console_is_clean(
    reason: None, repo: Repo, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    shas = make_memory(repo)
    loc = resolve(repo.path)
    local = view.write(loc, tmp_path / "local.html")
    repo.git("remote", "add", "origin", "https://github.com/acme/widgets.git")
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")  # as if pushed
    hosted = view.write(loc, tmp_path / "hosted.html")
    with browser.chromium() as driver:
        driver.get(local.as_uri())
        assert driver.title.startswith("gitvault · "), driver.title  # no injected script ran
        for section in ("digest", "verify", "timeline", "paths", "commits"):
            assert driver.find_element(By.ID, section).is_displayed(), section
        assert driver.execute_script("return document.images.length") == 0
        assert driver.execute_script("return document.scripts.length") == 2
        hrefs = driver.execute_script(HREFS)
        assert hrefs and all(h.startswith("#") for h in hrefs), hrefs
        assert driver.execute_script(MISSING_TARGETS) == []
        cite = driver.find_element(By.CSS_SELECTOR, 'a.cite[href^="#c-"]')
        target = cite.get_attribute("href").split("#", 1)[1]
        cite.click()
        assert driver.execute_script("return location.hash") == f"#{target}"
        shown = driver.find_element(By.ID, target)
        assert shown.is_displayed() and "commit " in shown.text

        total = driver.execute_script(ALL_ITEMS)
        assert len(typed(driver, "")) == total
        hits = typed(driver, WORD.upper())
        assert hits and len(hits) < total and all(WORD in h for h in hits), hits
        count = driver.find_element(By.ID, "gv-count").text
        assert re.fullmatch(rf"{len(hits)} of {total} items match", count), count
        assert typed(driver, "qqq-matches-nothing") == []
        assert driver.find_element(By.ID, "gv-count").text.startswith("0 of ")
        assert len(typed(driver, "")) == total

        colours, share = browser.screenshot_content(driver.get_screenshot_as_png())
        assert colours > 30 and share > 0.02, (colours, share)
        assert browser.console_problems(driver) == []

        driver.get(hosted.as_uri())
        hrefs = driver.execute_script(HREFS)
        external = [h for h in hrefs if not h.startswith("#")]
        assert external, hrefs
        for href in external:
            match = re.fullmatch(r"https://github\.com/acme/widgets/commit/([0-9a-f]{40})", href)
            assert match and match.group(1) in shas + [repo.head()], href
        assert driver.execute_script(MISSING_TARGETS) == []
        assert browser.console_problems(driver) == []
