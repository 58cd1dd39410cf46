"""The sensor health on the owner's pages (issue 26, item 4; docs/shots.md "Sensor health"):
on a phone, the venue board shows a table whose RF rail piezo never fired through 41 shots
as suspect, by name, with what it changes in the shots, and a table whose six rails all
played as "sensors ok"; the table page says the same. Sensed input through the real
daemon (tests/host/scripts.py `play`), pages in real Chromium."""

from __future__ import annotations

import pytest

from harness import browser as B
from host import scripts as S
from railbird.config import from_dict
from railbird.core.health import CHANNELS
from railbird.daemon.ingest import now_us
from railbird.daemon.worker import Daemon
from railbird.outputs.web.server import WebOutput

pytestmark = pytest.mark.browser

ALL = ("H", "F", "LH", "LF", "RH", "RF")


@pytest.fixture
def host(tmp_path):
    tables = {
        t: {"game": "10-ball", "players": ["Ann", "Bob"], "race_to": 5, "nodes": [f"{t}-node"]}
        for t in ("t1", "t2")
    }
    cfg = from_dict({"venue": S.VENUE, "tables": tables})
    web = WebOutput(host="127.0.0.1", port=0, pins={S.VENUE: "4711"})
    d = Daemon(cfg, outputs=[web], journal_path=str(tmp_path / "j.sqlite"), connect=False)
    clock = [now_us()]  # the daemon's host clock, held by the test
    d.now = lambda: clock[0]
    d.start()
    S.play(d, clock, 41, ALL[:5], table="t1", node="t1-node")  # RF is dead
    S.play(d, clock, 41, ALL, table="t2", node="t2-node")
    yield web
    d.stop()


def test_a_dead_rail_is_shown_suspect_and_a_healthy_table_ok_on_a_phone(host, tmp_path):
    drv = B.chrome(tmp_path / "chrome", size=B.PHONE)
    try:
        B.viewport(drv, B.PHONE)
        drv.get(host.url + "/v/club/")
        bad = B.wait_contains(drv, "#table-t1 .health.suspect", "rail piezo RF")
        assert "silent 40+ shots" in bad and CHANNELS["rail"].effect in bad, bad
        assert B.visible(drv, "#table-t1 .health .effect")  # a phone shows what it changes
        B.wait_text(drv, "#table-t2 .health", "sensors ok")
        assert not drv.find_elements("css selector", "#table-t2 .health.suspect")
        # readable at phone size: nothing wider than the screen
        W = drv.execute_script("return document.documentElement.scrollWidth - innerWidth")
        assert W <= 0, f"the board is {W} px wider than the phone"
        drv.get(host.url + "/v/club/t/t1/")
        B.wait_contains(drv, "#health", "rail piezo RF")
    finally:
        drv.quit()
