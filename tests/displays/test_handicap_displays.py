"""Issue 25, item 4: a handicapped match (`races`, protocol/REFEREE.md §1) shows its race
per player, A's first ("race 5-3"), wherever the race is shown: the LED scoreboard
(host's SCREEN fields and the board's rows), the terminal board, and, in a real Chromium,
the table page and the streaming overlay."""

from __future__ import annotations

import pytest

import layout  # firmware/scoreboard (conftest puts it on sys.path)
from harness import browser as B
from railbird.config import from_dict
from railbird.daemon.worker import Daemon
from railbird.outputs.web.server import WebOutput
from railbird.rules import Referee, to_fen
from railbird.scoreboard.screens import screen_fields
from railbird.termboard import TermBoard

MATCH = {"type": "match", "game": "9-ball", "players": ["Ann", "Bob"], "races": [5, 3]}


def _handicapped() -> Referee:
    ref = Referee(MATCH)
    ref.feed({"type": "lag", "winner": "Ann"})
    return ref


def test_the_led_scoreboard_shows_both_races():
    fields = screen_fields("9-ball", _handicapped().state_json())
    assert fields["r"] == "5-3"
    row1 = layout.rows({k: str(v) for k, v in fields.items()})[1]
    assert row1 == "RACE 5-3"
    # two-digit races do not fit after RACE: the row keeps both whole
    assert layout.rows({"g": "9", "a": "0", "b": "0", "r": "11-10"})[1] == "R  11-10"
    plain = Referee(dict(MATCH, races=None, race_to=5))
    assert screen_fields("9-ball", plain.state_json())["r"] == 5  # a plain race as before


def test_the_terminal_board_shows_both_races():
    ref = _handicapped()
    b = TermBoard({"t1": "9-ball"})
    b.on_state("t1", ref.state_json(), to_fen(ref.state), ref.announcements)
    assert "t1 · 9-ball · race 5-3" in b.render(100, color=False)


@pytest.mark.browser
def test_the_table_page_and_the_overlay_show_both_races(tmp_path):
    cfg = from_dict(
        {
            "venue": "club",
            "tables": {
                "t1": {"game": "9-ball", "players": ["Ann", "Bob"], "race_to": 5,
                       "nodes": ["t1-pockets"]},
            },
        }
    )  # fmt: skip
    web = WebOutput(host="127.0.0.1", port=0, pins={"club": "4711"}, title="Club Night")
    d = Daemon(cfg, outputs=[web], journal_path=str(tmp_path / "j.sqlite"), connect=False)
    web.referee, web.health = d.referee_input, d.health
    d.start()
    drv = B.chrome(tmp_path / "chrome")
    try:
        for inp in (MATCH, {"type": "lag", "winner": "Ann"}):
            assert d.referee_input("club", "t1", inp)["ok"], inp
        B.viewport(drv, B.PHONE)
        drv.get(web.url + "/v/club/t/t1/")
        B.wait_until(lambda: B.text(drv, "#game").startswith("9-ball · race 5-3"), 10, "game")
        drv.get(web.url + "/v/club/t/t1/overlay")
        B.wait_until(lambda: B.text(drv, "#race") == "RACE 5-3", 10, "overlay race")
    finally:
        drv.quit()
        d.stop()
