"""``craft-env serve`` in a real browser: headless Chromium driven by Selenium (tests/chromium.py).

Four windows play one whole game, one seat each: three directors type
their messages (keys only), the builder clicks cells and the send button.
A person builds with scripted directors using the keyboard alone, and a
refresh in the middle of that game rejoins the seat with the game intact, a
builder picks cells on the turned drawing of the board,
and an open page rides out a server restart. The organiser sets a game
up on the lobby page, and its seat link opens the seat.
The pages are 800 px wide; the console holds no error (a
Content-Security-Policy violation would be one). One game's log then goes
through ``craft-env report`` and ``replay``. Skips without Chromium,
chromedriver or selenium (CI installs them).
"""

from __future__ import annotations

import json

import pytest

from craft_env.cli import main
from craft_env.eval.logs.games import read_games

import chromium  # before selenium: without selenium it skips this module
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait
from web_client import Served

#: Generous: it only bounds how long a wait may take when the machine is busy; a passing test never waits it out.
WAIT = 90
HOSTILE = '<img src=x onerror="window.__pwned=1"> put a small green block on my left column, bottom layer'


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    server = Served(tmp_path_factory.mktemp("served") / "games")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    driver = chromium.start(tmp_path_factory.mktemp("chromium-profile"), "800,1000")
    yield driver
    driver.quit()


@pytest.fixture(autouse=True)
def _close_windows(browser):
    """Each test closes the windows it opened: every open page keeps a long poll, and Chromium holds at most
    six connections to one server, so a seventh page's requests would wait for a poll to end."""
    first = browser.window_handles[0]
    yield
    for handle in browser.window_handles:
        if handle != first:
            browser.switch_to.window(handle)
            browser.close()
    browser.switch_to.window(first)


def _body(driver, name: str) -> str:
    return driver.find_element(By.TAG_NAME, "body").get_attribute(name) or ""


def _my_turn(driver, turn: int) -> None:
    WebDriverWait(driver, WAIT).until(
        lambda d: _body(d, "data-your-turn") == "1" and _body(d, "data-turn") == str(turn)
    )


def _acting(served: Served, token: str) -> tuple[str, int, str]:
    """``(seat to act, turn, status)`` once the game waits on a person or has ended."""
    deadline_state = None
    for _ in range(200):
        state = served.state(token, wait=0)
        public = state["public"]
        person = public["acting"] and state["kinds"][public["acting"]] == "person"
        if public["status"] != "playing" or person:
            return public["acting"], public["turn"], public["status"]
        deadline_state = served.state(token, since=public["version"], wait=5)
    raise AssertionError(f"the game did not come to a person: {deadline_state}")


def _open(driver, url: str):
    driver.switch_to.new_window("window")
    driver.get(url)
    return driver.current_window_handle


def test_four_people_play_a_whole_game(served, browser, tmp_path):
    created = served.create(
        title="four people", structures=[0], turns=2, oracle_n=3,
        seats={"D1": "person", "D2": "person", "D3": "person", "builder": "person"},
    )
    windows = {seat: _open(browser, f"{served.url}/play#seat={t}") for seat, t in created["tokens"].items()}
    spectator = created["spectator"]
    messages = 0
    while True:
        seat, turn, status = _acting(served, spectator)
        if status != "playing":
            break
        browser.switch_to.window(windows[seat])
        _my_turn(browser, turn)
        if seat == "builder":
            browser.find_element(By.ID, "cell-1-1").click()
            assert browser.find_element(By.ID, "move").get_attribute("value").startswith("place gs (1,1) L")
            browser.find_element(By.ID, "send-move").click()
        else:
            box = browser.find_element(By.ID, "message")
            box.send_keys(HOSTILE if messages == 0 else "put a small red block on my middle column, layer 0")
            box.send_keys(Keys.ENTER)
            messages += 1
        WebDriverWait(browser, WAIT).until(lambda d: _body(d, "data-your-turn") == "0")
    assert status == "done"
    browser.switch_to.window(windows["builder"])
    WebDriverWait(browser, WAIT).until(lambda d: _body(d, "data-status") == "done")
    page = browser.find_element(By.TAG_NAME, "body").text
    assert "<img src=x" in page  # the hostile message shows as text
    assert browser.execute_script("return window.__pwned === undefined")
    browser.save_screenshot(str(tmp_path / "builder.png"))
    for handle in windows.values():
        browser.switch_to.window(handle)
        assert chromium.console_errors(browser) == []
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= 800  # nothing runs off the side at 800 px
    out = served.root / served.lobby.games[created["id"]].out.name
    turns = [json.loads(line) for line in (out / "run_1" / "log.jsonl").read_text().splitlines()]
    assert [t["turn_number"] for t in turns if t["kind"] == "turn"] == [1, 2]
    assert main(["report", str(out), "--no-plots"]) == 0
    assert main(["replay", str(out), "-o", str(tmp_path / "replay.html")]) == 0


def test_a_person_builds_by_keyboard_and_a_refresh_rejoins(served, browser):
    created = served.create(title="keys", structures=[2], turns=3, oracle_n=3, seats={"builder": "person"})
    token = created["tokens"]["builder"]
    browser.switch_to.new_window("window")
    browser.get(f"{served.url}/play#seat={token}")
    for turn in (1, 2, 3):
        _my_turn(browser, turn)
        if turn == 2:
            browser.refresh()  # the page rejoins its seat with the game as it was
            _my_turn(browser, turn)
            assert "turn 1 builder" in browser.find_element(By.ID, "conversation").text
        first = browser.find_element(By.CSS_SELECTOR, "button.candidate")
        first.send_keys(Keys.ENTER)
        if turn < 3:
            WebDriverWait(browser, WAIT).until(lambda d, t=turn: _body(d, "data-turn") == str(t + 1))
    WebDriverWait(browser, WAIT).until(lambda d: _body(d, "data-status") == "done")
    assert "structure" in browser.find_element(By.ID, "results").text
    assert chromium.console_errors(browser) == []


def test_the_builder_clicks_the_turned_drawing_of_the_board(served, browser):
    """After one quarter turn of the view, a click on the drawing's floor tile and then on the top face of the
    block placed there name the board's cell (0,1), not the drawn one; the log holds both placements."""
    created = served.create(title="drawing", structures=[2], turns=2, oracle_n=3, seats={"builder": "person"})
    n = served.state(created["tokens"]["builder"], wait=0)["frame"]["n"]
    drawn = f"1,{n - 1}"  # cell (0,1) turned a quarter: (i, j) -> (j, n-1-i), common.js turnCell
    browser.switch_to.new_window("window")
    browser.get(f"{served.url}/play#seat={created['tokens']['builder']}")
    _my_turn(browser, 1)
    browser.find_element(By.ID, "turn-view").click()
    assert "turned 90" in browser.find_element(By.ID, "view-note").text
    browser.find_element(By.CSS_SELECTOR, f"#board [data-cell='{drawn}'][data-face='floor']").click()
    assert browser.find_element(By.ID, "move").get_attribute("value") == "place gs (0,1) L0"
    browser.find_element(By.ID, "send-move").click()
    _my_turn(browser, 2)
    assert "turned 90" in browser.find_element(By.ID, "view-note").text  # the view stays turned
    top = f"#board polygon[data-cell='{drawn}'][data-face='top']"
    size = Select(browser.find_element(By.ID, "size"))
    size.select_by_value("l")
    browser.find_element(By.CSS_SELECTOR, top).click()  # a large block's first half: picked, on both views
    assert browser.find_elements(By.CSS_SELECTOR, "#board polygon.picked")
    assert "picked" in browser.find_element(By.ID, "cell-0-1").get_attribute("class")
    size.select_by_value("s")
    browser.find_element(By.CSS_SELECTOR, top).click()
    assert browser.find_element(By.ID, "move").get_attribute("value") == "place gs (0,1) L1"
    assert not browser.find_elements(By.CSS_SELECTOR, "#board polygon.picked")
    browser.find_element(By.ID, "send-move").click()
    WebDriverWait(browser, WAIT).until(lambda d: _body(d, "data-status") == "done")
    assert chromium.console_errors(browser) == []
    (game,) = read_games(served.root / created["id"] / "run_1" / "log.jsonl").values()
    assert [(t["move"], t["executed"]) for t in game.turns] == [("place gs (0,1) L0", True), ("place gs (0,1) L1", True)]


def test_the_organiser_sets_up_a_game_on_the_lobby_page(served, browser):
    browser.switch_to.new_window("window")
    browser.get(f"{served.url}/#organiser={served.organiser}")
    WebDriverWait(browser, WAIT).until(lambda d: d.find_element(By.ID, "kind-D1").is_displayed())
    field = browser.find_element(By.ID, "structures")
    field.clear()
    field.send_keys("99")
    browser.find_element(By.ID, "create").click()
    WebDriverWait(browser, WAIT).until(lambda d: "structures" in d.find_element(By.ID, "trouble").text)
    refused = chromium.console_errors(browser)  # the browser logs the refusal's 400 itself, and nothing else
    assert [e["source"] for e in refused] == ["network"] and "400" in refused[0]["message"]
    field.clear()
    field.send_keys("4")
    browser.find_element(By.ID, "title").send_keys("from the form")
    for seat in ("D2", "D3"):
        Select(browser.find_element(By.ID, f"kind-{seat}")).select_by_value("scripted")
    browser.find_element(By.ID, "label-D1").send_keys("P09")
    before = set(served.lobby.games)
    browser.find_element(By.ID, "create").click()
    WebDriverWait(browser, WAIT).until(lambda d: "Started game" in d.find_element(By.ID, "created").text)
    (game_id,) = set(served.lobby.games) - before
    setup = served.lobby.games[game_id].setup
    assert setup.structures == [4] and setup.title == "from the form" and setup.labels == {"D1": "P09"}
    assert setup.kinds == {"builder": "scripted", "D1": "person", "D2": "scripted", "D3": "scripted"}
    row = f"tr[data-game='{game_id}']"
    WebDriverWait(browser, WAIT).until(lambda d: d.find_elements(By.CSS_SELECTOR, row))
    links = [i.get_attribute("value") for i in browser.find_elements(By.CSS_SELECTOR, f"{row} .links input")]
    seat_link = next(link for link in links if "#seat=" in link)
    browser.get(seat_link)
    WebDriverWait(browser, WAIT).until(lambda d: "director D1" in d.find_element(By.ID, "who").text)
    assert chromium.console_errors(browser) == []


def test_a_page_rides_out_a_server_restart(tmp_path, browser):
    """The server stops in the middle of a game and starts again on the same port: the open page says it lost
    the connection, then rejoins its seat in the resumed game, which goes on to its end."""
    first = Served(tmp_path / "games")
    port = first.port
    created = first.create(structures=[5], turns=2, oracle_n=3, seats={"builder": "person"})
    browser.switch_to.new_window("window")
    browser.get(f"{first.url}/play#seat={created['tokens']['builder']}")
    _my_turn(browser, 1)
    browser.find_element(By.CSS_SELECTOR, "button.candidate").send_keys(Keys.ENTER)
    _my_turn(browser, 2)
    first.stop()
    WebDriverWait(browser, WAIT).until(lambda d: "reconnecting" in d.find_element(By.ID, "trouble").text)
    again = Served(tmp_path / "games", port=port)
    try:
        WebDriverWait(browser, WAIT).until(lambda d: d.find_element(By.ID, "trouble").text == "")
        _my_turn(browser, 2)
        browser.find_element(By.CSS_SELECTOR, "button.candidate").send_keys(Keys.ENTER)
        WebDriverWait(browser, WAIT).until(lambda d: _body(d, "data-status") == "done")
    finally:
        again.stop()
    (game,) = read_games(again.root / created["id"] / "run_1" / "log.jsonl").values()
    assert game.status == "done" and game.attempt == 2 and [t["turn_number"] for t in game.turns] == [1, 2]

