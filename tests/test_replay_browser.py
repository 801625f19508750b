"""The replay page in a real browser: headless Chromium driven by Selenium with the system chromedriver.

Builds a replay from a real ``craft-env run`` (one turn's messages replaced
by script-bearing text, one move marked failed), opens it from a file://
URL, steps through every turn with the arrow keys and checks the DOM shows
that turn's logged move, outcome and metrics; checks the browser console
has no errors, no request left the page, and the injected text ran nothing.
Skips when Chromium, chromedriver or selenium is missing (CI installs them,
see .ci/run).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from craft_env.cli import main

import chromium  # before selenium: without selenium it skips this module
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

SCRIPT_MESSAGE = "<img src=x onerror=alert(1)>"
FLAG_MESSAGE = '<img src=x onerror="window.__pwned = 1"><script>window.__pwned = 2</script>'
BREAKOUT = "</script><script>window.__pwned = 3</script>"
FAILURE = "Cannot remove layer 0 at (1,0)"


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> tuple[Path, list[list[dict]]]:
    """A replay of a real run with the injections above; returns the page and each game's logged turns."""
    root = tmp_path_factory.mktemp("browser")
    out = root / "run"
    args = ["run", "--out", str(out), "--structures", "0,2", "--turns", "5", "--no-progress", "--no-plots"]
    assert main(args) == 0
    log_path = out / "run_1" / "log.jsonl"
    lines = [json.loads(line) for line in log_path.read_text().splitlines()]
    turns = [line for line in lines if line["kind"] == "turn"]
    second, third = turns[1], turns[2]
    second["director_responses"][0]["message"] = SCRIPT_MESSAGE
    second["director_responses"][1]["message"] = FLAG_MESSAGE
    second["director_responses"][2]["think"] = BREAKOUT
    third.update(legal=False, failed=True, executed=False, reason=FAILURE)
    third.update(optimal=False, followed_oracle=False)
    third.update(move="remove (1,0) L0", move_attempted={"action": "remove", "position": "(1,0)", "layer": 0})
    log_path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    html = root / "replay.html"
    assert main(["replay", str(out), "-o", str(html)]) == 0
    games = [[t for t in turns if t["structure_index"] == index] for index in (0, 2)]
    return html, games


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    driver = chromium.start(tmp_path_factory.mktemp("chromium-profile"))
    yield driver
    driver.quit()


def _text(driver, element_id: str) -> str:
    return driver.find_element(By.ID, element_id).text


def _at(driver) -> tuple[str, str]:
    body = driver.find_element(By.TAG_NAME, "body")
    return body.get_attribute("data-game"), body.get_attribute("data-turn")


def _press(driver, key: str) -> None:
    driver.find_element(By.TAG_NAME, "body").send_keys(key)


def _check_turn(driver, turn: dict) -> None:
    assert _text(driver, "turn-label").startswith(f"Turn {turn['turn_number']} /")
    assert _text(driver, "move") == turn["move"]
    outcome = _text(driver, "outcome")
    if turn["legal"]:
        assert outcome.startswith("legal, " + ("optimal" if turn["optimal"] else "not optimal"))
    else:
        assert outcome == f"failed: {turn['reason']}"
    metrics = turn["progress_data"]
    assert _text(driver, "m-progress") == f"{metrics['progress']:.3f}"
    assert _text(driver, "m-iou") == f"{metrics['iou']:.3f}"
    assert _text(driver, "m-distance") == str(metrics["distance"])
    conversation = _text(driver, "conversation")
    for director in turn["director_responses"]:
        assert director["message"] in conversation


def test_replay_in_chromium(page, browser, tmp_path):
    html, games = page
    url = html.resolve().as_uri()
    browser.get(url + "#g=0&t=1")
    assert _at(browser) == ("0", "1")

    # every turn of game 0 with the right arrow, then back with the left arrow
    for k, turn in enumerate(games[0]):
        assert _at(browser) == ("0", str(k + 1))
        _check_turn(browser, turn)
        _press(browser, Keys.ARROW_RIGHT)
    assert _at(browser) == ("0", str(len(games[0])))  # stays on the last turn
    _press(browser, Keys.ARROW_LEFT)
    assert _at(browser) == ("0", str(len(games[0]) - 1))

    # the failed move shows its reason; the injected texts show as text and ran nothing
    browser.get(url + "#g=0&t=3")
    assert _text(browser, "outcome") == f"failed: {FAILURE}"
    browser.get(url + "#g=0&t=2")
    conversation = _text(browser, "conversation")
    assert SCRIPT_MESSAGE in conversation and FLAG_MESSAGE in conversation
    third_director = browser.find_elements(By.CSS_SELECTOR, "#conversation .director")[2]
    third_director.find_element(By.TAG_NAME, "summary").click()
    assert BREAKOUT in _text(browser, "conversation")
    assert browser.find_elements(By.TAG_NAME, "img") == []
    assert browser.execute_script("return window.__pwned === undefined")
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018

    # up/down change games; a link with a fragment opens that game and turn
    _press(browser, Keys.ARROW_DOWN)
    assert _at(browser) == ("1", "1")
    _check_turn(browser, games[1][0])
    _press(browser, Keys.ARROW_UP)
    assert _at(browser) == ("0", "1")
    browser.get(url + "#g=1&t=4")
    assert _at(browser) == ("1", "4")
    _check_turn(browser, games[1][3])
    browser.save_screenshot(str(tmp_path / "replay.png"))
    assert (tmp_path / "replay.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # the index lists both games and sorts by a column
    _press(browser, Keys.ESCAPE)
    assert _at(browser)[0] == ""
    rows = browser.find_elements(By.CSS_SELECTOR, "#index-table tbody tr")
    assert [r.get_attribute("data-g") for r in rows] == ["0", "1"]
    header = browser.find_element(By.CSS_SELECTOR, '#index-table th[data-key="sid"]')
    header.click()
    header = browser.find_element(By.CSS_SELECTOR, '#index-table th[data-key="sid"]')
    header.click()
    rows = browser.find_elements(By.CSS_SELECTOR, "#index-table tbody tr")
    assert [r.get_attribute("data-g") for r in rows] == ["1", "0"]
    rows[0].click()
    assert _at(browser) == ("1", "1")

    # no console errors (a CSP violation would be one), and nothing was requested but the page itself
    assert chromium.console_errors(browser) == []
    from_page, off_machine = chromium.requests(browser, url)
    assert from_page == {url} and off_machine == set()  # the page load itself is seen, nothing else
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
