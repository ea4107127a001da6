"""A real headless Chromium (Debian's chromium and chromium-driver) driven by Selenium, for the
pages gitvault writes. Chromium starts with a fresh profile and without the background
services that reach the network (the machine has none); Selenium is given the driver's path, so
Selenium Manager never looks for (or downloads) one."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = (
    "--headless",
    "--no-sandbox",  # as root
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--window-size=1200,1000",
)


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            return f"{path} is missing (Debian: apt-get install {package}; .ci/run installs it)"
    try:
        import PIL  # noqa: F401
        import selenium  # noqa: F401
    except ImportError as exc:
        return f"{exc.name} is not installed (pip install -e '.[test]')"
    return None


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """A Selenium driver of a fresh headless Chromium that records the console; quit after."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="gitvault-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager: never the network
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        driver.set_page_load_timeout(60)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def console_problems(driver: Any) -> list[str]:
    """Console messages at warning level or above (errors, CSP violations, uncaught ones)."""
    return [
        f"{entry.get('level')}: {entry.get('message')}"
        for entry in driver.get_log("browser")
        if entry.get("level") in ("SEVERE", "WARNING")
    ]


def screenshot_content(png: bytes) -> tuple[int, float]:
    """(distinct colours, share of pixels that are not the page's background) of a PNG."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 24) or []
    background = max(colours)[1] if colours else (255, 255, 255)
    total = image.width * image.height
    other = sum(n for n, colour in colours if colour != background)
    return len(colours), other / total if total else 0.0
