"""A ruling the sensors cannot decide (protocol/REFEREE.md §3b) on every display: without a
referee the table page, the venue board, the streaming overlay and the terminal board mark
it provisional; with one, the referee app offers the outcomes as one-tap buttons and the
ruling follows the tap. Input through the real daemon, pages in real Chromium."""

from __future__ import annotations

import pytest

from harness import browser as B
from railbird.config import from_dict
from railbird.daemon.worker import Daemon
from railbird.outputs.web.server import WebOutput
from railbird.termboard import TermBoard

from .refapp import phone_browser, tap, text, wait_for, wait_text

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PIN = "4711"
# What the host sends for a break whose rail hits prove two object balls at most: legal or
# not depends on balls the sensors cannot count.
BREAK = {
    "type": "shot",
    "pocketed": [],
    "rail_after_contact": True,
    "object_balls_to_rail": 5,
    "object_balls_to_rail_range": [2, 9],
    "uncertain": ["object_balls_to_rail"],
}


def _host(tmp_path, referee: bool):
    table = {"game": "10-ball", "players": ["Ann", "Bob"], "race_to": 2, "nodes": ["n1"]}
    cfg = from_dict({"venue": "club", "tables": {"t1": dict(table, referee=referee)}})
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


def _shows(drv, css, want):
    """The element shows `want` (the pages set some chips in capitals)."""
    B.wait_until(lambda: want in B.text(drv, css).lower(), what=f"{css} to show {want!r}")


@pytest.fixture
def drv(tmp_path):
    drv = B.chrome(tmp_path / "chrome")
    yield drv
    drv.quit()


def test_without_a_referee_every_display_marks_the_ruling_provisional(tmp_path, drv):
    d, web = _host(tmp_path, referee=False)
    try:
        st = _feed(d, {"type": "lag", "winner": "Ann"}, BREAK)
        assert st["provisional"][0]["ruling"] == "legal break"
        board = TermBoard({"t1": "10-ball"})
        board.on_state("t1", st, st.get("fen"), [])
        assert "PROVISIONAL: legal break (9.3.2)" in board.render(100, color=False)
        drv.get(web.url + "/v/club/t/t1/")
        _shows(drv, "#awaiting", "provisional: legal break (9.3.2)")
        drv.get(web.url + "/v/club/")
        _shows(drv, "#table-t1", "provisional: legal break")
        drv.get(web.url + "/v/club/t/t1/overlay")
        _shows(drv, "#inhand", "provisional: legal break")
        # the referee confirms it: no longer provisional anywhere
        st = _feed(d, {"type": "confirm"})
        assert st["provisional"] == []
        drv.get(web.url + "/v/club/t/t1/")
        B.wait_text(drv, "#name-a", "Ann")
        assert "provisional" not in B.text(drv, "#awaiting").lower()
    finally:
        d.stop()


def test_with_a_referee_the_app_offers_the_outcomes_as_one_tap_buttons(tmp_path):
    d, web = _host(tmp_path, referee=True)
    phone = phone_browser(tmp_path / "phone")
    try:
        st = _feed(d, {"type": "lag", "winner": "Ann"}, BREAK)
        assert st["awaiting"] == "referee_check"
        phone.get(web.url + "/v/club/t/t1/referee")
        wait_for(phone, lambda x: text(x, "#signin"), "the sign-in screen")
        for digit in PIN:
            tap(phone, f'button[data-key="{digit}"]')
        tap(phone, "#pin-ok")
        wait_text(phone, "#check", "the sensors cannot decide")
        assert "Legal break" in text(phone, "#check") and "Foul" in text(phone, "#check")
        tap(phone, '#check button[data-act="check"][data-i="0"]')  # the first: the foul
        wait_for(
            phone,
            lambda x: web.venues.snapshot("club", "t1")["state"]["awaiting"] is None,
            "the ruling",
        )
        s = web.venues.snapshot("club", "t1")["state"]
        assert s["ball_in_hand"] == "anywhere" and s["at_table"] == "Bob"
    finally:
        phone.quit()
        d.stop()


# issue 26: what the host sends for a strike with nothing sensed after it (core/game.py)
STRIKE_ONLY = {
    "type": "shot",
    "pocketed": [],
    "rail_after_contact": False,
    "uncertain": ["rail_after_contact"],
}
BREAK_IN = {
    "type": "shot",
    "pocketed": [{"ball": 2, "pocket": "FL"}],
    "rail_after_contact": True,
    "object_balls_to_rail": 5,
}


def test_a_strike_only_shot_is_proposed_as_the_likely_foul_and_accepted_in_one_tap(tmp_path):
    d, web = _host(tmp_path, referee=True)
    phone = phone_browser(tmp_path / "phone")
    try:
        st = _feed(d, {"type": "lag", "winner": "Ann"}, BREAK_IN, STRIKE_ONLY)
        assert st["awaiting"] == "referee_check" and st["check"]["proposed"].startswith("foul")
        phone.get(web.url + "/v/club/t/t1/referee")
        wait_for(phone, lambda x: text(x, "#signin"), "the sign-in screen")
        for digit in PIN:
            tap(phone, f'button[data-key="{digit}"]')
        tap(phone, "#pin-ok")
        wait_text(phone, "#btn-check-proposed", "Likely: Foul")
        assert "No foul" in text(phone, "#check")  # the dismissal, one tap too
        tap(phone, "#btn-check-proposed")
        wait_for(
            phone,
            lambda x: web.venues.snapshot("club", "t1")["state"]["awaiting"] is None,
            "the ruling",
        )
        s = web.venues.snapshot("club", "t1")["state"]
        assert s["ball_in_hand"] == "anywhere" and s["at_table"] == "Bob"
    finally:
        phone.quit()
        d.stop()
