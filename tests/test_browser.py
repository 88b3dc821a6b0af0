"""The web board in a real browser: headless Chromium driven by Selenium (issue 17 section 2).

The server (:func:`nard_ai.interfaces.http.create_app`, the shipped network at 0-ply) runs with
uvicorn in a thread on a free loopback port. The test loads the page, enters a position by its
Position ID, reads the ranked plays, drags a checker, plays a move of a seeded game against the engine by clicking
the highlighted checker and point, waits for the engine's reply, and takes a screenshot. A second test uploads a
``.mat`` record to the match analysis panel and reads its warning (shown as text) and its errors table (each
error named by the record's move ``N)`` and file line).

Skipped, with the reason, where Selenium, Chromium or chromedriver is missing (``.ci/run`` installs
Debian's ``chromium`` and ``chromium-driver`` where apt is available).
"""

from __future__ import annotations

import shutil
import threading
import time

import pytest

import nard_ai as na

selenium = pytest.importorskip("selenium", reason="selenium is not installed (pip install selenium)")

from conftest import RENAMED_MAT  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="no headless browser: install Debian's chromium and chromium-driver "
    "(apt-get install chromium chromium-driver) to run the web board in a browser",
)


@pytest.fixture(scope="module")
def server():
    import uvicorn

    from nard_ai.interfaces.http import bind_socket, create_app, server_config

    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    config = server_config(create_app(), "127.0.0.1", port)
    config.log_level = "warning"
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        if time.monotonic() > deadline:
            pytest.fail("the server did not start within 30 s")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(10)
    sock.close()


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000"):  # fmt: skip
        options.add_argument(arg)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def _wait(driver, seconds=20):
    return WebDriverWait(driver, seconds)


def _press(driver, element) -> None:
    """A pointer press at the element's centre, as the board's handler reads it (elementsFromPoint).

    The board's transparent hit areas lie above the checkers, so a WebDriver click on a checker
    would be intercepted; the press goes to whatever is at that point, as a user's would.
    """
    driver.execute_script(
        "const b = arguments[0].getBoundingClientRect();"
        "document.getElementById('board').dispatchEvent(new PointerEvent('pointerdown',"
        " {bubbles: true, clientX: b.x + b.width / 2, clientY: b.y + b.height / 2}));",
        element,
    )


def _drag(driver, source: str, target: str) -> None:
    """Press on ``source``'s centre, move and release on ``target``'s (CSS selectors)."""
    driver.execute_script(
        "const c = (e) => { const b = document.querySelector(e).getBoundingClientRect();"
        " return {bubbles: true, clientX: b.x + b.width / 2, clientY: b.y + b.height / 2}; };"
        "const from = c(arguments[0]), to = c(arguments[1]);"
        "document.getElementById('board').dispatchEvent(new PointerEvent('pointerdown', from));"
        "window.dispatchEvent(new PointerEvent('pointermove', to));"
        "window.dispatchEvent(new PointerEvent('pointerup', to));",
        source,
        target,
    )


def test_the_page_ranks_plays_plays_a_game_move_and_takes_a_screenshot(server, browser, tmp_path):
    d = browser
    d.get(server + "/")
    # the page decodes the starting position on load (POST /web/position)
    _wait(d).until(EC.text_to_be_present_in_element((By.ID, "pid"), "4HPwATDgc/ABMA"))

    # enter a position by ID: the starting position's gnubg Position ID (README "The position layout")
    box = d.find_element(By.ID, "position-input")
    box.clear()
    box.send_keys("4HPwATDgc/ABMA")
    d.find_element(By.ID, "position-set").click()
    _wait(d).until(EC.text_to_be_present_in_element((By.ID, "message"), "set"))
    Select(d.find_element(By.ID, "die1")).select_by_value("3")
    Select(d.find_element(By.ID, "die2")).select_by_value("1")
    d.find_element(By.ID, "hint").click()
    _wait(d).until(lambda drv: len(drv.find_elements(By.CSS_SELECTOR, "#plays tbody tr")) > 0)
    rows = d.find_elements(By.CSS_SELECTOR, "#plays tbody tr")
    # the opening 3-1 has 16 legal plays (README: legal_plays(board, (3, 1)) is (16, 26)), and every
    # opening book and gnubg's 0-ply rank 8/5 6/5 first
    assert len(rows) == 16
    assert rows[0].get_attribute("data-notation") == "8/5 6/5"
    best_cells = rows[0].find_elements(By.TAG_NAME, "td")
    assert float(best_cells[2].text) > 0  # making the 5-point: a positive cubeless equity

    # drag a checker from the 6-point to the 5-point: the page's Position ID follows the board
    # (the expected ID from the engine's encoder, nard_ai.formats.position_id)
    board = na.starting_board()
    board[6] -= 1
    board[5] += 1
    _drag(d, '[data-target="6"]', '[data-target="5"]')
    _wait(d).until(EC.text_to_be_present_in_element((By.ID, "pid"), na.position_id(board)))

    # a game against the engine: seed 1 opens with 3-6 (tests/test_web.py pins game_dice(1, 0))
    d.find_element(By.ID, "mode-play").click()
    d.find_element(By.ID, "game-new").click()
    _wait(d).until(EC.text_to_be_present_in_element((By.ID, "game-dice"), "Your roll: 3-6"))
    # click highlighted sources and destinations until a play is complete and the engine answers
    for _ in range(4):
        if d.find_elements(By.CSS_SELECTOR, "#game-log li"):
            break
        _press(d, d.find_element(By.CSS_SELECTOR, "circle.source"))
        dest = _wait(d).until(lambda drv: drv.find_elements(By.CSS_SELECTOR, "rect.dest-target"))
        _press(d, dest[0])
    _wait(d, 30).until(lambda drv: len(drv.find_elements(By.CSS_SELECTOR, "#game-log li")) >= 2)
    log = [li.text for li in d.find_elements(By.CSS_SELECTOR, "#game-log li")]
    assert log[0].startswith("You 3-6: ")
    assert log[1].startswith("Engine ")
    _wait(d).until(EC.text_to_be_present_in_element((By.ID, "game-dice"), "Your roll"))

    shot = tmp_path / "web-board.png"
    assert d.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000


# A 3-point match (the lines counted from 1 in the comments) whose game 2 names other players, with markup in
# the names: the page shows read_mat's warning as text, never as HTML.
RENAMED = RENAMED_MAT.replace(
    " carol : 1                      dave : 0", " <b>carol</b> : 1               dave : 0"
)  # conftest's record, markup in game 2's first name (line 10)
assert "<b>carol</b>" in RENAMED, "conftest.RENAMED_MAT's line 10 changed: put the markup back in"


def test_the_match_panel_shows_the_records_warnings_and_its_move_numbers_and_lines(server, browser, tmp_path):
    from nard_ai.formats.mat import read_mat
    from nard_ai.reports.analysis import analyze_match

    d = browser
    d.get(server + "/")
    _wait(d).until(EC.text_to_be_present_in_element((By.ID, "pid"), "4HPwATDgc/ABMA"))
    d.find_element(By.ID, "mode-match").click()
    record = tmp_path / "renamed.mat"
    record.write_text(RENAMED)
    d.find_element(By.ID, "mat-file").send_keys(str(record))
    d.find_element(By.ID, "mat-analyse").click()
    _wait(d, 30).until(EC.text_to_be_present_in_element((By.ID, "message"), "decisions analysed"))
    assert "1 warning" in d.find_element(By.ID, "message").text

    match = read_mat(RENAMED)
    items = d.find_elements(By.CSS_SELECTOR, "#mat-warnings li")
    assert [li.text for li in items] == [f"warning: {w}" for w in match.warnings]
    assert "'<b>carol</b>'" in items[0].text  # the markup as text: no element made of it
    assert not d.find_elements(By.CSS_SELECTOR, "#mat-warnings b")

    heads = [th.text for th in d.find_elements(By.CSS_SELECTOR, "#mat-errors thead th")]
    assert heads[:4] == ["Game", "Move N)", "Line", "Player"]
    rows = [
        [td.text for td in tr.find_elements(By.TAG_NAME, "td")[:4]]
        for tr in d.find_elements(By.CSS_SELECTOR, "#mat-errors tbody tr")
    ]
    # the marked decisions of the same analysis (the server's 0-ply agent), named as nard analyze names them
    errors = [x for x in analyze_match(match, na.load_agent(None, ply=0)).decisions if x.skill]
    assert rows == [[str(x.game), f"{x.move})", str(x.line), match.players[x.player]] for x in errors]
