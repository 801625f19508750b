"""The leaderboard page in a real browser: headless Chromium driven by Selenium with the system chromedriver.

Builds a board from real ``craft-env run`` logs (scripted and random teams,
one with a script-bearing model name and messages) beside the published
rows, opens it from a file:// URL, and checks: every tab opens, clicking a
column title reorders the rows, the search filters them, a permalink
reopens the same tab and sort, hovering a bar shows its value, the
injected text ran nothing, the console has no errors and no request left
the page. Every step waits for the page's state (``body[data-*]``), never
for time. Skips when Chromium, chromedriver or selenium is missing (CI
installs them, see .ci/run).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from craft_env.cli import main

import chromium  # before selenium: without selenium it skips this module
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

HOSTILE_MODEL = '<img src=x onerror="window.__pwned = 1">'
HOSTILE_MESSAGE = "</script><script>window.__pwned = 2</script><img src=x onerror=alert(1)>"
TABS = ("table", "bands", "structures", "failures", "behaviour")
WAIT = 60  # seconds: a ceiling for a busy machine, not a delay; every wait returns as soon as the state holds


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> tuple[Path, dict]:
    """The board's HTML file and its data (JSON of the same board)."""
    root = tmp_path_factory.mktemp("board-browser")
    base = ["--protocol", "paper", "--structures", "0,2,7", "--turns", "6", "--no-progress", "--no-plots"]
    assert main(["run", "--out", str(root / "scripted"), "--runs", "2", *base]) == 0
    random = ["--director-model", "random", "--builder-model", "random"]
    assert main(["run", "--out", str(root / "random"), *random, *base]) == 0
    config = json.loads((root / "random" / "config.json").read_text())
    config["director_model"] = HOSTILE_MODEL
    (root / "random" / "config.json").write_text(json.dumps(config))
    summary = json.loads((root / "random" / "run_1" / "summary.json").read_text())  # runs must agree to pool
    summary["director_model"] = HOSTILE_MODEL
    (root / "random" / "run_1" / "summary.json").write_text(json.dumps(summary))
    log = root / "random" / "run_1" / "log.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    for line in lines:
        for reply in line.get("director_responses") or []:
            reply["message"] = HOSTILE_MESSAGE
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    html, data = root / "board.html", root / "board.json"
    inputs = [str(root / "scripted"), str(root / "random"), "--group", "team=scripted", "--samples", "1000"]
    assert main(["leaderboard", *inputs, "-o", str(html)]) == 0
    assert main(["leaderboard", *inputs, "--format", "json", "-o", str(data)]) == 0
    return html, json.loads(data.read_text())


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    driver = chromium.start(tmp_path_factory.mktemp("chromium-profile"), size="1400,1000")
    yield driver
    driver.quit()


def _state(driver) -> dict:
    body = driver.find_element(By.TAG_NAME, "body")
    return {k: body.get_attribute(f"data-{k}") for k in ("tab", "sort", "q", "rendered", "tip")}


def _wait(driver, check, message: str):
    return WebDriverWait(driver, WAIT).until(lambda d: check(d), message)


def _open(driver, url: str) -> None:
    """Load ``url`` afresh (not a jump within the open page) and wait for the page's first render."""
    driver.get("about:blank")
    driver.get(url)
    _wait(driver, lambda d: _state(d)["rendered"] == "1", "the page never rendered")


def _first_group_rows(driver) -> list[str]:
    table = driver.find_element(By.CSS_SELECTOR, "section:not([hidden]) table.board")
    return [row.get_attribute("data-key") for row in table.find_elements(By.CSS_SELECTOR, "tbody tr")]


def test_leaderboard_in_chromium(page, browser):
    html, data = page
    url = html.resolve().as_uri()
    by_key = {e["key"]: e for e in data["entries"]}
    first_group = data["groups"][0]["entries"]
    _open(browser, url)
    assert _state(browser)["tab"] == "table" and _state(browser)["sort"] == "rank"

    # every tab opens, by its button, and shows its content
    content = {"table": "table.board tbody tr", "bands": "td.interval svg", "structures": "article.card svg",
               "failures": ".stack .seg", "behaviour": "table.board tbody tr"}
    for tab in TABS:
        browser.find_element(By.CSS_SELECTOR, f'#tabs button[data-tab="{tab}"]').click()
        _wait(browser, lambda d, tab=tab: _state(d)["tab"] == tab, f"tab {tab} did not open")
        section = browser.find_element(By.ID, f"tab-{tab}")
        assert section.is_displayed()
        assert section.find_elements(By.CSS_SELECTOR, content[tab]), tab
        shown = [s.get_attribute("id") for s in browser.find_elements(By.CSS_SELECTOR, "section.tab")]
        assert [name for name in shown if browser.find_element(By.ID, name).is_displayed()] == [f"tab-{tab}"]

    # the table in rank order; a column title sorts (numbers: high first, then low first)
    browser.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="table"]').click()
    _wait(browser, lambda d: _state(d)["tab"] == "table", "back to the table")
    assert _first_group_rows(browser) == first_group
    progress = sorted(first_group, key=lambda k: (by_key[k]["m"]["progress"], -by_key[k]["position"]))
    before = _state(browser)["rendered"]
    browser.find_element(By.CSS_SELECTOR, 'th[data-key="progress"]').click()
    _wait(browser, lambda d: _state(d)["sort"] == "-progress" and _state(d)["rendered"] != before, "sort")
    descending = _first_group_rows(browser)
    browser.find_element(By.CSS_SELECTOR, 'th[data-key="progress"]').click()
    _wait(browser, lambda d: _state(d)["sort"] == "progress", "sort ascending")
    ascending = _first_group_rows(browser)
    values = [by_key[k]["m"]["progress"] for k in ascending]
    assert values == sorted(values)
    assert ascending != descending and ascending[0] == progress[0]
    browser.find_element(By.CSS_SELECTOR, 'th[data-key="name"]').click()
    _wait(browser, lambda d: _state(d)["sort"] == "name", "sort by name")
    names = [by_key[k]["name"] for k in _first_group_rows(browser)]
    assert names != [by_key[k]["name"] for k in first_group] and names[0] == HOSTILE_MODEL

    # the search filters the rows, and clearing it brings them back
    box = browser.find_element(By.ID, "search")
    box.send_keys("gemini")
    _wait(browser, lambda d: _state(d)["q"] == "gemini", "search")
    rows = browser.find_elements(By.CSS_SELECTOR, "#tab-table table.board tbody tr")
    shown = [row.get_attribute("data-key") for row in rows]
    assert shown and all("gemini" in by_key[k]["name"].lower() for k in shown)
    assert len(shown) == sum("gemini" in e["name"].lower() for e in data["entries"])
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.BACKSPACE)
    _wait(browser, lambda d: _state(d)["q"] == "", "search cleared")

    # a permalink reopens the same tab and sort
    browser.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="behaviour"]').click()
    _wait(browser, lambda d: _state(d)["tab"] == "behaviour", "behaviour tab")
    browser.find_element(By.CSS_SELECTOR, 'th[data-key="chatter"]').click()
    _wait(browser, lambda d: _state(d)["sort"] == "-chatter", "sort by chatter")
    rows = _first_group_rows(browser)
    link = browser.current_url
    assert "tab=behaviour" in link and "sort=-chatter" in link
    _open(browser, url)
    assert _state(browser)["tab"] == "table"
    _open(browser, link)
    assert _state(browser)["tab"] == "behaviour" and _state(browser)["sort"] == "-chatter"
    assert _first_group_rows(browser) == rows
    header = browser.find_element(By.CSS_SELECTOR, 'th[data-key="chatter"]')
    assert "sorted-desc" in header.get_attribute("class")
    panic = browser.find_element(By.CSS_SELECTOR, '#tab-behaviour th[data-key="panic"]')
    assert panic.text == "Panic" and "start over" in panic.get_attribute("title")
    _open(browser, url + "#tab=table&q=GPT-4o&tag=published")
    assert browser.find_element(By.ID, "search").get_attribute("value") == "GPT-4o"
    assert {by_key[k]["name"] for k in _first_group_rows(browser)} == {"GPT-4o", "GPT-4o-Mini"}

    # hovering a bar of the failure analysis shows its value
    _open(browser, url + "#tab=failures")
    bar = '.stack-row[data-key="scripted"] .seg[data-category="correct"]'
    seg = browser.find_element(By.CSS_SELECTOR, bar)
    ActionChains(browser).move_to_element(seg).perform()
    tip = browser.find_element(By.ID, "tip")
    _wait(browser, lambda d: tip.is_displayed(), "no tooltip on hover")
    share = by_key["scripted"]["taxonomy"]["correct"]
    assert f"correct: {share:.3f}" in tip.text and _state(browser)["tip"] == tip.text
    hidden_table = browser.find_element(By.CSS_SELECTOR, "#tab-failures table.sr-only")
    assert f"{share:.3f}" in hidden_table.get_attribute("textContent")  # the values, for screen readers
    _open(browser, url + "#tab=bands")
    delta = browser.find_element(By.CSS_SELECTOR, "td.delta")
    ActionChains(browser).move_to_element(delta).perform()
    _wait(browser, lambda d: d.find_element(By.ID, "tip").is_displayed(), "no tooltip on a difference")
    assert "95% interval" in browser.find_element(By.ID, "tip").text

    # the hostile name and messages are text, and ran nothing
    _open(browser, url + "#tab=table")
    assert HOSTILE_MODEL in browser.find_element(By.ID, "tab-table").text
    assert browser.find_elements(By.TAG_NAME, "img") == []
    assert browser.execute_script("return window.__pwned === undefined")
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018

    # no console errors (a CSP violation would be one), and nothing was requested but the page itself
    assert chromium.console_errors(browser) == []
    from_page, off_machine = chromium.requests(browser, url)
    assert from_page == {url} and off_machine == set()
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
