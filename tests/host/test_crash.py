"""End to end: private mosquitto, the simulated node firmware, `railbird run` as a
subprocess. The host is SIGKILLed mid-game and restarted: no event lost, none counted twice,
and the shots and game state equal those of a run without the crash."""

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.hostproc import RailbirdRun
from harness.mqttsub import client
from rbnode.simnode import SimNode
from rbproto import codec

pytestmark = [pytest.mark.broker, pytest.mark.slow]

NODE, PW = "t1-node", "node-pw"
SPACING_MS = 900
# (ms after the shot's start, kind, name, amp/dur)
SHOTS = [
    [
        (0, "rail", "F", 2500),
        (60, "rail", "LF", 1800),
        (80, "rail", "RF", 1700),
        (150, "rail", "LH", 900),
        (200, "rail", "RH", 800),
        (250, "drop", "FR", 30000),
        (350, "rail", "H", 500),
    ],
    [(0, "drop", "SL", 30000), (200, "rail", "H", 600)],
    [
        (0, "rail", "RH", 700),
        (100, "drop", "HL", 30000),
        (250, "drop", "FR", 30000),
        (400, "rail", "F", 600),
    ],
    [
        (0, "drop", "SR", 30000),
        (100, "rail", "LH", 600),
        (200, "drop", "HR", 25000),
        (350, "cue", None, 30000),
    ],
    [(0, "rail", "LF", 900), (200, "rail", "RF", 400)],
    [(0, "drop", "FL", 30000), (150, "rail", "F", 700)],
]
N_EVENTS = sum(len(s) for s in SHOTS)

CONFIG = """
venue = "club"
subscribe = ["t1"]
reorder_window_ms = 150
stats_period_s = 0
[broker]
host = "127.0.0.1"
port = {port}
user = "railbird-host"
password = "host-secret"
client_id = "{client_id}"
[shots]
quiet_ms = 400
lip_rest_ms = 400
cue_before_ms = 500
break_window_ms = 500
[tables.t1]
game = "10-ball"
players = ["Ann", "Bob"]
race_to = 3
nodes = ["{node}"]
"""


class Host(RailbirdRun):
    def __init__(self, workdir: Path, port: int, client_id: str):
        super().__init__(workdir, CONFIG.format(port=port, client_id=client_id, node=NODE))

    def results(self):
        db = sqlite3.connect(self.journal)
        shots = [json.loads(s) for (s,) in db.execute("SELECT shot FROM shots ORDER BY n")]
        events = db.execute(
            "SELECT node, boot, seq, kind, pocket, rail, late FROM events ORDER BY pos"
        ).fetchall()
        fens = [f for (f,) in db.execute("SELECT fen FROM states ORDER BY id")]
        db.close()
        return shots, events, fens


def referee(port, input_, rid):
    c = client(port, "railbird-referee", "referee-secret")
    info = c.publish(
        codec.topic("club", "t1", "referee"),
        codec.encode("referee", {"v": 1, "input": input_, "id": rid, "by": "test"}),
        qos=1,
    )
    info.wait_for_publish(5)
    c.disconnect()
    c.loop_stop()


def normalise(shots):
    """Table times relative to the first shot (the two runs' nodes booted at different host
    times); everything else compared exactly."""
    t0 = shots[0]["start"]
    out = []
    for s in shots:
        s = json.loads(json.dumps(s))
        s["start"] -= t0
        s["end"] -= t0
        for p in s["pocketed"]:
            p["t"] -= t0
        for r in s["rails"]:
            r["t"] -= t0
        s.pop("rest_before", None)
        out.append(s)
    return out


def play(broker, tmp_path, name, crash: bool):
    host = Host(tmp_path / name, broker.port, f"railbird-host-{name}")
    host.start()
    sn = SimNode("127.0.0.1", broker.port, "club", "t1", NODE, PW, tmp_path / name / "node", seed=7)
    sn.start()
    try:
        sn.wait_connected()
        host.wait(lambda s: s.get("sync_samples", 0) >= 3, "sync samples")
        referee(broker.port, {"type": "lag", "winner": 0}, f"{name}-lag")
        host.wait(lambda s: s.get("states", 0) >= 1, "lag applied")
        base = sn.now_us + 300_000
        for i, shot in enumerate(SHOTS):
            for ms, kind, what, v in shot:
                at = base + (i * SPACING_MS + ms) * 1000
                if kind == "drop":
                    sn.drop(what, dur_us=v, at_us=at)
                elif kind == "rail":
                    sn.rail(what, v, at_us=at)
                else:
                    sn.cue(dur_us=v, at_us=at)
        if crash:
            # mid-game: after the second shot, in the middle of the third
            host.wait(lambda s: s.get("shots", 0) >= 2, "two shots before the crash")
            time.sleep(0.25)
            host.kill()
            time.sleep(1.0)  # the node goes on playing; the broker queues for the host
            host.start()
        sn.wait_idle()
        host.wait(
            lambda s: (
                s.get("events", 0) >= N_EVENTS
                and s.get("shots", 0) >= len(SHOTS)
                and s.get("pending", 1) == 0
            ),
            "all shots",
            timeout=30,
        )
        stats = host.stats()
    finally:
        sn.stop()
        if host.proc.poll() is None:
            host.stop()
    return host, stats


def test_sigkill_mid_game_loses_nothing_and_changes_nothing(broker, tmp_path):
    broker.add_user(NODE, PW)
    ref_host, _ref_stats = play(broker, tmp_path, "steady", crash=False)
    crash_host, crash_stats = play(broker, tmp_path, "crash", crash=True)
    ref_shots, ref_events, ref_fens = ref_host.results()
    shots, events, fens = crash_host.results()

    # no event lost, none counted twice
    assert len(events) == N_EVENTS == len(ref_events)
    assert len({(e[0], e[1], e[2]) for e in events}) == N_EVENTS
    assert not any(e[6] for e in events)  # nothing late
    assert crash_stats["events"] == N_EVENTS and crash_stats["late"] == 0
    assert crash_stats["replayed"] > 0  # it really rebuilt from the journal
    assert [e[3:6] for e in events] == [e[3:6] for e in ref_events]

    # same shots, same game
    assert len(shots) == len(SHOTS)
    assert normalise(shots) == normalise(ref_shots)
    assert fens == ref_fens and fens[-1]
    assert [len(s["pocketed"]) for s in shots] == [1, 1, 2, 2, 0, 1]

    # the replay tool agrees with the journal
    r = subprocess.run(
        [sys.executable, "-m", "railbird", "replay", str(crash_host.journal), "--check"],
        capture_output=True,
    )
    assert r.returncode == 0, r.stderr
