"""The shot clock on the LED scoreboard (issue 25, item 3; protocol/SCOREBOARD.md
"Screens"): the host output renders the seconds as they change and the warning, the
firmware (under CPython, the real board code) shows them on row 1, over a REAL
pseudo-terminal. The output's table time is injected, so no assertion waits on real
seconds passing."""

from __future__ import annotations

from harness.waiting import poll
from railbird.outputs.serial_scoreboard import SerialScoreboardOutput
from railbird.scoreboard.screens import clock_fields
from tests.displays.conftest import expected_rows

FAST = {"ack_timeout": 0.15, "reopen_interval": 0.1, "ping_interval": 0.5}
S = 1_000_000


def shows(cable, *texts, timeout=10.0):
    want = expected_rows(*texts)
    ok = poll(lambda: cable.board is not None and cable.board.segments() == want, timeout)
    assert ok, f"board shows {cable.board.text() if cable.board else None}, want {list(texts)}"


def clock(status, **kw):
    base = {"status": status, "deadline": None, "remaining_us": None, "warning_us": 10 * S}
    return dict(base, **kw)


def test_the_board_counts_the_seconds_down_and_calls_the_warning(cable):
    cable.plug()
    now = [100 * S]
    out = SerialScoreboardOutput(str(cable.path), "bar", "t1", now=lambda: now[0], **FAST)
    out.start()
    try:
        state = {"scores": [0, 0], "at_table": 0, "breaker": 0, "goal": 5, "fouls": [0, 0]}
        out.on_state("bar", "t1", "10-ball", state, "", [])
        shows(cable, "  0.    0", "RACE   5", "BRK    A")  # no clock: the race as before
        running = dict(state, shot_clock=clock("running", deadline=135 * S))
        out.on_state("bar", "t1", "10-ball", running, "", [])
        shows(cable, "  0.    0", "TIME  35", "BRK    A")
        now[0] = 110 * S + 1  # 24.999999 s left: the board shows 25, with no new state
        shows(cable, "  0.    0", "TIME  25", "BRK    A")
        now[0] = 126 * S + 500_000  # 8.5 s left: inside the warning
        shows(cable, "  0.    0", "WARN   9", "BRK    A")
        held = dict(state, shot_clock=clock("held", remaining_us=20 * S))
        out.on_state("bar", "t1", "10-ball", held, "", [])
        shows(cable, "  0.    0", "HOLD  20", "BRK    A")
        out_of_time = dict(state, shot_clock=clock("expired", remaining_us=0))
        out.on_state("bar", "t1", "10-ball", out_of_time, "", [])
        shows(cable, "  0.    0", "TIME OUT", "BRK    A")
    finally:
        out.stop()


def test_clock_fields_round_up_and_say_nothing_when_nothing_is_timed():
    assert clock_fields(None, 0) == {}
    assert clock_fields(clock("idle"), 0) == {}
    assert clock_fields(clock("stopped", remaining_us=3 * S), 0) == {}
    assert clock_fields(clock("running", deadline=11 * S + 1), 0) == {"sc": 12, "ss": "r"}
    assert clock_fields(clock("running", deadline=10 * S), 0) == {"sc": 10, "ss": "w"}
    assert clock_fields(clock("running", deadline=5 * S), 9 * S) == {"sc": 0, "ss": "w"}
    assert clock_fields(clock("waiting", remaining_us=35 * S), 0) == {"sc": 35, "ss": "p"}
