"""The shot clock on the pages (issue 25, item 3; docs/displays.md "Shot clock"): the table
page (phone or TV) and the overlay count down on their own clock from the state's
deadline and the heartbeat's table time, call the warning; the referee app (phone size) has
the extension button, and the time foul proposed when time runs out, which the referee
gives with one tap. Input through the real daemon, pages in real Chromium."""

from __future__ import annotations

import pytest

from harness import browser as B
from railbird.config import from_dict
from railbird.daemon.worker import Daemon
from railbird.outputs.web.server import WebOutput

from .refapp import phone_browser, tap, text, wait_for, wait_text

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PIN = "4711"


def _host(tmp_path):
    table = {"game": "10-ball", "players": ["Ann", "Bob"], "race_to": 2, "nodes": ["n1"]}
    cfg = from_dict({"venue": "club", "tables": {"t1": table}})
    web = WebOutput(host="127.0.0.1", port=0, pins={"club": PIN})
    d = Daemon(cfg, outputs=[web], journal_path=str(tmp_path / "j.sqlite"), connect=False)
    web.referee = d.referee_input
    d.start()
    return d, web


def _feed(d, *inputs) -> dict:
    res = None
    for inp in inputs:
        res = d.referee_input("club", "t1", inp)
        assert res["ok"], (inp, res)
    return res["state"]


def _seconds(drv, css):
    t = B.text(drv, css + " .sc-num").strip()
    return int(t) if t.isdigit() else None


def _cls(drv, css):
    return drv.execute_script(f"return document.querySelector('{css}').className")


def test_pages_count_down_warn_and_the_referee_gives_the_time_foul(tmp_path):
    d, web = _host(tmp_path)
    # one browser at phone size for every page: a Chromium start is most of the test's time
    drv = phone = phone_browser(tmp_path / "phone")
    try:
        match = {"type": "match", "shot_clock": {"preset": "wpa", "shot_s": 300}}
        st = _feed(d, match, {"type": "lag", "winner": "Ann"})
        # the break: cue ball in hand behind the head string, the count waits for it
        assert st["shot_clock"]["status"] == "waiting"
        st = _feed(d, {"type": "clock", "action": "placed"})
        assert st["shot_clock"]["status"] == "running"
        drv.get(web.url + "/v/club/t/t1/")
        B.wait_until(lambda: (_seconds(drv, "#shotclock") or 0) > 250, what="the countdown")
        first = _seconds(drv, "#shotclock")
        # no message per second: the page counts down on its own
        B.wait_until(lambda: (_seconds(drv, "#shotclock") or 999) < first, what="a second less")
        assert "warn" not in _cls(drv, "#shotclock")
        B.viewport(drv, (1920, 1080))  # the table page on a TV across the room
        B.wait_until(lambda: (_seconds(drv, "#shotclock") or 999) < first, what="the TV's count")
        assert B.visible(drv, "#shotclock")
        B.viewport(drv, B.PHONE)
        _feed(d, {"type": "clock", "action": "adjust", "seconds": 8})
        B.wait_until(lambda: "warn" in _cls(drv, "#shotclock"), what="the warning")
        assert (_seconds(drv, "#shotclock") or 99) <= 8
        drv.get(web.url + "/v/club/")  # the venue board's card of the table
        B.wait_until(lambda: (_seconds(drv, "#table-t1 .shotclock") or 99) <= 8, what="the card")
        drv.get(web.url + "/v/club/t/t1/overlay")
        B.wait_until(lambda: (_seconds(drv, "#shotclock") or 99) <= 8, what="the overlay's count")
        # the referee app: the extension button, then the time foul proposed
        phone.get(web.url + "/v/club/t/t1/referee")
        wait_for(phone, lambda x: text(x, "#signin"), "the sign-in screen")
        for digit in PIN:
            tap(phone, f'button[data-key="{digit}"]')
        tap(phone, "#pin-ok")
        wait_text(phone, "#clock", "Shot clock")
        tap(phone, '#clock button[data-action="extension"]')
        wait_for(
            phone,
            lambda x: web.venues.snapshot("club", "t1")["state"]["shot_clock"]["extended"],
            "the extension",
        )
        wait_for(phone, lambda x: (_seconds(x, "#ref-shotclock") or 0) > 10, "25 s more")
        _feed(d, {"type": "clock", "action": "adjust", "seconds": 1})
        wait_text(phone, "#clock", "Time ran out", timeout=60)
        wait_text(phone, "#ref-shotclock", "TIME")
        st = web.venues.snapshot("club", "t1")["state"]
        assert st["at_table"] == "Ann" and st["consecutive_fouls"]["Ann"] == 0  # not applied
        tap(phone, '#clock button[data-act="clock-foul"]')
        wait_for(
            phone,
            lambda x: web.venues.snapshot("club", "t1")["state"]["at_table"] == "Bob",
            "the time foul given",
        )
        st = web.venues.snapshot("club", "t1")["state"]
        assert st["consecutive_fouls"]["Ann"] == 1 and st["ball_in_hand"] == "anywhere"
        assert st["shot_clock"]["status"] == "waiting" and st["shot_clock"]["player"] == 1
    finally:
        phone.quit()
        d.stop()
