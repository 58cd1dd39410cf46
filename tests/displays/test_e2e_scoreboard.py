"""End to end: simulated node -> private mosquitto -> host daemon -> pty serial port ->
scoreboard firmware under CPython. Pot, foul and rack win reach the digits; the USB cable is
pulled and put back in the middle and nothing is lost on the board."""

from __future__ import annotations

import sys

import pytest

from harness.waiting import poll
from railbird.config import from_dict
from railbird.daemon.worker import Daemon
from railbird.outputs.serial_scoreboard import SerialScoreboardOutput
from tests.displays.conftest import REPO, expected_rows

sys.path.insert(0, str(REPO / "firmware"))

pytestmark = [pytest.mark.broker, pytest.mark.slow]


def shows(cable, *texts, timeout=15.0):
    want = expected_rows(*texts)
    ok = poll(lambda: cable.board is not None and cable.board.segments() == want, timeout)
    assert ok, f"board shows {cable.board.text() if cable.board else None}, want {list(texts)}"


def test_node_to_board_with_unplug(broker, cable, tmp_path):
    from rbnode.simnode import SimNode

    broker.add_user("n1", "n1-secret")
    cfg = from_dict(
        {
            "venue": "club",
            "broker": {
                "host": "127.0.0.1",
                "port": broker.port,
                "user": "railbird-host",
                "password": "host-secret",
            },
            "tables": {
                "t1": {"game": "10-ball", "players": ["Ann", "Bob"], "race_to": 2, "nodes": ["n1"]}
            },
        }
    )
    cable.plug()
    board_out = SerialScoreboardOutput(
        str(cable.path), "club", "t1", ack_timeout=0.15, reopen_interval=0.1, ping_interval=0.5
    )
    d = Daemon(cfg, outputs=[board_out], journal_path=str(tmp_path / "j.sqlite")).start()
    sn = SimNode(
        "127.0.0.1", broker.port, "club", "t1", "n1", "n1-secret", str(tmp_path / "node"), seed=1
    )
    try:
        sn.start()
        sn.wait_connected()
        assert d.referee_input("club", "t1", {"type": "lag", "winner": "Ann"})["ok"]
        shows(cable, "  0.    0", "RACE   2", "BRK    A", "INN    1")

        # a pot on the break, seen by the FL beam only
        sn.drop("FL")
        assert poll(lambda: d.stats()["shots"] >= 1, 15), d.stats()
        shows(cable, "  0.    0", "RACE   2", "BRK    A", "INN    1")

        # a scratch: the cue ball drops in SR and is seen in the ball return -> foul
        sn.drop("SR")
        sn.cue()
        shows(cable, "  0    0.", "RACE   2", "FOUL", "IN HAND")

        # the USB cable is pulled; the rack is won meanwhile (referee calls, Bob pots the 10)
        cable.unplug()
        assert poll(lambda: not board_out.link.connected, 5)
        assert d.referee_input("club", "t1", {"type": "call", "ball": 10, "pocket": "HL"})["ok"]
        assert d.referee_input(
            "club", "t1", {"type": "shot", "pocketed": [{"ball": 10, "pocket": "HL"}]}
        )["ok"]
        # the host noticed the port is gone and keeps failing to reopen it
        assert poll(lambda: board_out.link.stats["open_failures"] >= 1, 5)
        cable.plug()  # the board was USB powered: it boots blank and says HELLO
        shows(cable, "  0    1.", "RACE   2", "RACK B", "")
        assert board_out.stats["errors"] == 0 and d.output_errors == 0
    finally:
        sn.stop()
        d.stop()
