"""Issue 15, item 4 (display side): a pocketed ball is on every display at once, marked
provisional, and the ruling replaces it when the shot closes.

End to end: `railbird run` with a private mosquitto and the simulated node firmware (one
node, synced, sending its watermark): a ball through a pocket beam reaches the table's web
stream as `inplay` (pocket, count) before the shot's record, the MQTT `inplay` topic holds it
(retained) and is cleared when the shot closes, and the terminal board fed over MQTT says
IN PLAY (provisional) meanwhile. Behaviour, not timing: the latency is `make bench`'s.
The serial scoreboard's announcement and the record fan-out are checked in-process."""

from __future__ import annotations

import json
import threading
import time
import urllib.request

import pytest
from hypothesis import given, settings, strategies as st

from harness.hostproc import RailbirdRun
from harness.mqttsub import subscriber
from harness.waiting import poll
from railbird.core.records import HoldRecord, HoldState, InplayRecord
from railbird.hostwatch import HostWatch
from railbird.termboard import TermBoard
from rbnode.simnode import SimNode

NODE, PW = "t1-pockets", "node-pw"
QUIET_MS = 2500

CONFIG = """
venue = "club"
subscribe = ["t1"]
stats_period_s = 0
[broker]
host = "127.0.0.1"
port = {port}
password = "host-secret"
client_id = "railbird-host-inplay"
[shots]
quiet_ms = {quiet}
[tables.t1]
game = "14.1"
players = ["Ann", "Bob"]
target = 50
nodes = ["{node}"]
[outputs.web]
host = "127.0.0.1"
port = 0
"""


class Stream:
    """The table's event stream (/events/v/<venue>/t/<table>), read on a thread: every
    `table` event with the time it arrived."""

    def __init__(self, url: str):
        self.resp = urllib.request.urlopen(url, timeout=30)
        self.events: list[tuple[float, dict]] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        event = None
        try:
            for raw in self.resp:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event == "table":
                    with self.lock:
                        self.events.append((time.monotonic(), json.loads(line[6:])))
        except (OSError, ValueError):
            return

    def first(self, pred, timeout: float, what: str) -> tuple[float, dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                for t, snap in self.events:
                    if pred(snap):
                        return t, snap
            time.sleep(0.01)
        with self.lock:
            last = self.events[-1][1] if self.events else None
        raise AssertionError(f"the web stream never showed {what}; last: {last}")


def _pockets(x) -> list:
    return [p.get("pocket") for p in ((x or {}).get("pocketed") or ())]


@pytest.mark.broker
def test_a_released_drop_is_shown_in_play_before_the_shot_closes(broker, tmp_path):
    broker.add_user(NODE, PW)
    host = RailbirdRun(
        tmp_path / "host", CONFIG.format(port=broker.port, node=NODE, quiet=QUIET_MS)
    )
    url = host.start_with_web()
    node = SimNode("127.0.0.1", broker.port, "club", "t1", NODE, PW, tmp_path / "node")
    inplay_msgs: list[tuple[float, bytes]] = []
    sub = subscriber(
        broker.port,
        lambda c, u, m: inplay_msgs.append((time.monotonic(), m.payload)),
        "inplay-test",
        topic="railbird/v1/club/t1/inplay",
        user="railbird-display",
        password="display-secret",
    )
    watch = HostWatch("club", port=broker.port, password="display-secret", client_id="tb")
    board = TermBoard({"t1": "14.1"})
    try:
        node.start()
        node.wait_connected()
        watch.start()
        host.wait(lambda s: s["sync_samples"] >= 3, "the node synced", timeout=30)
        stream = Stream(f"{url}/events/v/club/t/t1")
        stream.first(lambda s: s["table"] == "t1", 10, "the table's snapshot")
        node.drop("FR", dur_us=30_000)
        host.wait(lambda s: s["events"] >= 1, "the drop ingested", timeout=20)
        # provisional first: the pocket, no shot closed yet
        t_ip, snap = stream.first(lambda s: _pockets(s.get("inplay")) == ["FR"], 20, "FR in play")
        assert snap["inplay"]["provisional"] is True
        assert snap["last_shot"] is None, snap["last_shot"]
        # the terminal board (over MQTT) says so while the shot is open
        poll(lambda: _pockets(watch.inplay().get("t1")) == ["FR"], 5)
        board.sync(watch)
        text = board.render(color=False)
        assert "IN PLAY (provisional): FR" in text and "+1 pt" in text, text
        # then the ruling: the shot closes, its record replaces the provisional view
        t_shot, snap = stream.first(
            lambda s: _pockets(s.get("last_shot")) == ["FR"], QUIET_MS / 1000 + 10, "the shot"
        )
        assert snap["inplay"] is None
        assert t_ip < t_shot
        # MQTT: retained provisional message, then cleared
        poll(lambda: inplay_msgs and inplay_msgs[-1][1] == b"", 5)
        shown = [json.loads(p) for _, p in inplay_msgs if p]
        assert any(_pockets(m) == ["FR"] and m["provisional"] for m in shown), inplay_msgs
        assert inplay_msgs[-1][1] == b"", inplay_msgs  # cleared when the shot closed
        poll(lambda: watch.inplay().get("t1") is None, 5)
        board.sync(watch)
        assert "IN PLAY" not in board.render(color=False)
    finally:
        watch.stop()
        sub.disconnect()
        sub.loop_stop()
        node.stop()
        host.stop()


def test_every_output_gets_the_inplay_record_and_the_serial_board_marks_it_provisional():
    """The worker hands `inplay` records to each output's on_inplay (a record type an output
    does not know is skipped); the serial scoreboard shows it as a provisional announcement
    (protocol/SCOREBOARD.md "In play"), the web tables keep it until the shot closes."""
    from railbird.daemon.worker import Daemon
    from railbird.outputs.base import Output
    from railbird.outputs.serial_scoreboard import SerialScoreboardOutput
    from railbird.outputs.tables import Venues

    class Seen(Output):
        def __init__(self):
            self.got = []

        def on_inplay(self, venue, table, inplay):
            self.got.append((venue, table, inplay))

    seen, plain = Seen(), Output()  # `plain` keeps the default: ignores it
    serial = SerialScoreboardOutput("/nonexistent/port", "club", "t1")
    d = Daemon.__new__(Daemon)
    d.outputs, d.output_errors = [seen, plain, serial], 0
    ip = {"shot": 4, "start": 10, "pocketed": [{"pocket": "SL", "t": 12}], "provisional": True}
    serial.on_state("club", "t1", "14.1", {"players": ["A", "B"]}, "", [])
    d._dispatch(
        [
            InplayRecord(venue="club", table="t1", inplay=ip),
            # a kind no output is called for
            HoldRecord(venue="club", table="t1", node="n", state=HoldState.HELD, known=1, at=2),
        ]
    )
    assert seen.got == [("club", "t1", ip)] and d.output_errors == 0
    ann = list(serial.link._ann_queue)
    assert ann and ann[-1]["t"] == "DOWN   1" and ann[-1]["u"] == "1PT PROV", ann

    v = Venues()
    v.on_inplay("club", "t1", ip)
    assert v.snapshot("club", "t1")["inplay"] == ip
    v.on_shot("club", "t1", {"n": 4, "pocketed": [{"pocket": "SL", "ball": None, "t": 12}]})
    assert v.snapshot("club", "t1")["inplay"] is None


@settings(max_examples=150, deadline=None)
@given(
    game=st.sampled_from(["10-ball", "9-ball", "8-ball", "14.1", "none"]),
    down=st.lists(
        st.fixed_dictionaries(
            {"pocket": st.sampled_from(["HL", "HR", "SL", "SR", "FL", "FR"])},
            optional={"ball": st.sampled_from([0, None, 3])},
        ),
        min_size=1,
        max_size=15,
    ),
)
def test_the_led_board_can_draw_every_character_of_a_ball_in_play(game, down):
    """The in-play announcement in 14.1 was `+2  PROV`; a seven-segment digit cannot draw a
    '+', and the board's font drew it as '-': minus two points on the LED board while the
    player was scoring them. Every character of every in-play row must be one the font has,
    and each row must fit the board's 8 digits."""
    import segfont
    from railbird.outputs.serial_scoreboard import SerialScoreboardOutput

    serial = SerialScoreboardOutput("/nonexistent/port", "club", "t1")
    serial.game = game
    serial.on_inplay("club", "t1", {"shot": 1, "start": 1, "pocketed": down})
    (ann,) = serial.link._ann_queue
    for row in (ann["t"], ann["u"]):
        assert len(row) <= 8, row
        assert all(ch in segfont.GLYPHS for ch in row.upper()), row
