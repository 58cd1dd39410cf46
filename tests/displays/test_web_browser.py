"""The web scoreboard in a REAL headless Chromium (Debian chromium + chromium-driver):
the table page follows a simulated pot and referee input live, and the referee endpoint
works only with the PIN."""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request

import pytest

from railbird.config import from_dict
from railbird.daemon.worker import Daemon
from railbird.outputs.web.server import WebOutput

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"
PIN = "4711"

pytestmark = pytest.mark.browser


@pytest.fixture
def browser(tmp_path):
    if not (shutil.which(CHROMIUM) and shutil.which(DRIVER)):
        pytest.fail("chromium/chromedriver missing: run tools/ensure-chromium.sh (make test does)")
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'chrome'}",
        "--window-size=1280,1000",
    ):
        opts.add_argument(flag)
    drv = webdriver.Chrome(options=opts, service=Service(DRIVER))
    drv.set_page_load_timeout(20)
    yield drv
    drv.quit()


@pytest.fixture
def host(tmp_path):
    cfg = from_dict(
        {
            "venue": "club",
            "tables": {
                "t1": {
                    "game": "14.1",
                    "players": ["Ann", "Bob"],
                    "target": 50,
                    "nodes": ["t1-node"],
                }
            },
        }
    )
    web = WebOutput(host="127.0.0.1", port=0, pins={"club": PIN})
    d = Daemon(cfg, outputs=[web], journal_path=str(tmp_path / "journal.sqlite"), connect=False)
    web.referee = d.referee_input
    d.start()
    assert d.referee_input("club", "t1", {"type": "lag", "winner": "Ann"})["ok"]
    # Ann breaks without a pot (break requirement presumed met): Bob to shoot
    assert d.referee_input("club", "t1", {"type": "shot", "pocketed": []})["ok"]
    yield d, web
    d.stop()


def _wait_text(drv, css, want, timeout=10):
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(
        drv, timeout, ignored_exceptions=(StaleElementReferenceException, NoSuchElementException)
    ).until(
        lambda d: d.find_element(By.CSS_SELECTOR, css).text.strip() == want,
        message=f"{css} never showed {want!r}",
    )


def _post(web, body):
    req = urllib.request.Request(
        web.url + "/api/v/club/t1/referee",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def test_table_page_follows_play_live(browser, host):
    from selenium.webdriver.common.by import By

    d, web = host
    drv = browser
    drv.get(web.url + "/v/club/t1/")
    _wait_text(drv, "#name-a", "Ann")
    _wait_text(drv, "#name-b", "Bob")
    _wait_text(drv, "#score-b", "0")
    assert "up" in drv.find_element(By.ID, "pb").get_attribute("class")  # Bob at the table

    # a simulated pot: the sensors' shot (pocket FL, ball not identified) reaches the
    # outputs and the rules; the open page updates over server-sent events
    shot = {
        "table": "t1",
        "n": 3,
        "start": 0,
        "end": 1,
        "pocketed": [{"ball": None, "pocket": "FL", "t": 1, "source": "sensed"}],
        "rails": [],
    }
    web.on_shot("club", "t1", shot)
    assert d.referee_input("club", "t1", {"type": "shot", "pocketed": [{"pocket": "FL"}]})["ok"]
    _wait_text(drv, "#score-b", "1")
    _wait_text(drv, "#pocket-FL b", "1")

    # referee input with the PIN (the referee app's work; here over the endpoint): a foul
    # with its rule (14.1: one point off) reaches the open page, then an undo
    assert _post(web, {"pin": "1234", "input": {"type": "undo"}})[0] == 403  # wrong PIN
    assert web.venues.snapshot("club", "t1")["scores"] == [0, 1]
    foul = {"type": "shot", "pocketed": [], "fouls": ["6.5"]}
    assert _post(web, {"pin": PIN, "input": foul})[0] == 200
    _wait_text(drv, "#score-b", "0")  # 1 - 1 for the foul
    assert "foul" in drv.find_element(By.ID, "meta-b").text
    assert _post(web, {"pin": PIN, "input": {"type": "undo"}})[0] == 200
    _wait_text(drv, "#score-b", "1")

    # the venue board shows the table too
    drv.get(web.url + "/v/club/")
    _wait_text(drv, "#table-t1 .row.pa .s", "0")
    _wait_text(drv, "#table-t1 .row.pb .s", "1")


def test_referee_endpoint_refuses_without_pin_and_locks_out(host):
    _d, web = host
    before = web.venues.snapshot("club", "t1")["state"]
    assert _post(web, {"inputs": [{"type": "undo"}]})[0] == 403
    assert _post(web, {"pin": "", "input": {"type": "undo"}})[0] == 403
    assert web.venues.snapshot("club", "t1")["state"] == before
    code, res = _post(web, {"pin": PIN, "input": {"type": "bogus"}})
    assert code == 422 and not res["ok"]
    # a request without a PIN is not a guess (a signed-out phone retrying its queue):
    # only wrong PINs count towards the lockout
    for _ in range(5):
        _post(web, {"pin": "0000", "input": {"type": "undo"}})
    # five wrong PINs within a minute: even the right PIN waits
    assert _post(web, {"pin": PIN, "input": {"type": "undo"}})[0] == 429
    assert web.venues.snapshot("club", "t1")["state"] == before
