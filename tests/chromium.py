"""Headless Chromium for the page tests (test_replay_browser.py, test_leaderboard_browser.py).

Importing this module skips the importing test module when selenium is not
installed (the test extra); ``start`` skips when Chromium or chromedriver is
missing (CI installs them, see .ci/run). The driver is the system
chromedriver, by path, so Selenium Manager never looks for (or downloads)
one.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (the test extra)")
from selenium.webdriver.chrome.service import Service  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
FLAGS = (
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
)


def start(profile: Path, size: str = "1280,960"):
    """A headless Chromium with a fresh profile in ``profile`` that logs the console and the network."""
    if not CHROMIUM or not CHROMEDRIVER:
        pytest.skip("Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--window-size={size}", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def console_errors(driver) -> list[dict]:
    """The console's errors so far (a Content-Security-Policy violation is one)."""
    return [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]


def requests(driver, url: str) -> tuple[set[str], set[str]]:
    """``(what the page at url requested, what anything requested off this machine)`` since the last call."""
    from_page, off_machine = set(), set()
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] != "Network.requestWillBeSent":
            continue
        requested = message["params"]["request"]["url"].split("#")[0]
        if message["params"].get("documentURL", "").split("#")[0] == url:
            from_page.add(requested)
        if requested.split(":", 1)[0] in ("http", "https", "ws", "wss", "ftp"):
            off_machine.add(requested)
    return from_page, off_machine
