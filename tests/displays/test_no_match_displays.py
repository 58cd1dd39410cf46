"""An abandoned match has no result (protocol/REFEREE.md §9): the table page, the venue
board, the streaming overlay and the terminal board say "no match" rather than showing it
as a match in play or a win; a conceded match shows the winner. Referee input goes through
the real daemon (`Daemon.referee_input`), the pages through real Chromium."""

from __future__ import annotations

import pytest

from harness import browser as B
from railbird.config import from_dict
from railbird.daemon.worker import Daemon
from railbird.outputs.web.server import WebOutput
from railbird.termboard import TermBoard

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def venue(tmp_path):
    cfg = from_dict(
        {
            "venue": "club",
            "tables": {
                "t1": {
                    "game": "10-ball",
                    "players": ["Ann", "Bob"],
                    "race_to": 2,
                    "nodes": ["t1-pockets"],
                }
            },
        }
    )
    web = WebOutput(host="127.0.0.1", port=0, pins={"club": "4711"})
    d = Daemon(cfg, outputs=[web], journal_path=str(tmp_path / "j.sqlite"), connect=False)
    web.referee = d.referee_input
    d.start()
    yield d, web
    d.stop()


@pytest.fixture
def drv(tmp_path):
    drv = B.chrome(tmp_path / "chrome")
    yield drv
    drv.quit()


def referee(d, *inputs) -> dict:
    res = None
    for inp in inputs:
        res = d.referee_input("club", "t1", inp)
        assert res["ok"], (inp, res)
    return res["state"]


def term(state) -> str:
    board = TermBoard({"t1": "10-ball"})
    board.on_state("t1", state, state.get("fen"), [])
    return board.render(100, color=False)


def test_abandoned_match_shows_no_match_and_a_concession_the_winner(venue, drv):
    d, web = venue
    st = referee(d, {"type": "lag", "winner": "Ann"}, {"type": "abandon"})
    assert st["ended"] == "abandoned"
    assert "NO MATCH: the last match was abandoned" in term(st)
    B.viewport(drv, B.PHONE)
    drv.get(web.url + "/v/club/t/t1/")
    B.wait_text(drv, "#over-winner", "No match")
    assert "abandoned" in B.text(drv, "#over-detail")
    assert not B.visible(drv, "#inhand")  # nobody is at the table
    drv.get(web.url + "/v/club/")
    B.wait_contains(drv, "#table-t1", "No match (abandoned)")
    assert "wins" not in B.text(drv, "#table-t1")
    drv.get(web.url + "/v/club/t/t1/overlay")
    B.wait_text(drv, "#over", "No match")

    # the next match is played again, and a concession shows its winner everywhere
    st = referee(d, {"type": "match"}, {"type": "lag", "winner": "Bob"})
    st = referee(d, {"type": "concede", "player": "Bob"})
    assert st["match_winner"] == "Ann" and st["ended"] == "conceded"
    assert "MATCH OVER: Ann wins the match" in term(st)
    drv.get(web.url + "/v/club/t/t1/")
    B.wait_text(drv, "#over-winner", "Ann wins the match")
