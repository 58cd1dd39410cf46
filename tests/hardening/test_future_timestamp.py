"""Issue 13, item 4: one event stamped far in the future must not poison its table. An event
whose table time lies beyond its own arrival by more than the clock model can be wrong is
quarantined (journalled in `quarantined`, counted, a warning on the next shot), never put in
the timeline; the normally jittered events around it are in order as before, nothing stays
pending, a referee `confirm` afterwards is not held for a shot that never ends, and the
replay agrees. A glitch of a node without time sync must not make table times negative.

`railbird run` on a private mosquitto; the node's messages are published as the node. The
test shares CLOCK_MONOTONIC with the host (one machine), so its node clock is exact: node
time = host time - the node's boot time."""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
import time

import pytest

from harness.hostproc import RailbirdRun
from harness.mqttsub import client
from harness.waiting import wait_for
from railbird.core.clockmodel import BootClock
from rbproto import codec

from .nodepub import NodePub

NODE, PW, BOOT = "t1-node", "node-pw", 4
N = 40  # jittered events before the far-future one, and as many after it
HOUR_US = 3_600_000_000

CONFIG = """
venue = "club"
subscribe = ["t1"]
reorder_window_ms = 2000
stats_period_s = 0
[broker]
host = "127.0.0.1"
port = {port}
user = "railbird-host"
password = "host-secret"
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


def host_us() -> int:
    return time.monotonic_ns() // 1000


class Node:
    """A node booted `up_s` seconds ago whose clock is the host's minus its boot time."""

    def __init__(self, pub: NodePub, up_s: float = 5.0):
        self.pub = pub
        self.booted = host_us() - int(up_s * 1e6)
        self.seq = 0

    def now(self) -> int:
        return host_us() - self.booted

    def sync(self) -> None:
        """One exchange of the four timestamps, as a node on a quiet LAN would see it."""
        t1 = self.now()
        t2 = t1 + self.booted + 150
        self.pub.raw(
            "sync_result",
            {
                "v": 1,
                "node": self.pub.node,
                "boot": BOOT,
                "id": 1,
                "t1": t1,
                "t2": t2,
                "t3": t2 + 40,
                "t4": t1 + 340,
            },
        )

    def event(self, t: int) -> None:
        e = {"seq": self.seq, "t": t, "kind": "rail", "rail": "F", "amp": 700}
        self.seq += 1
        self.pub.events(BOOT, [e])

    def jittered(self, rng: random.Random, n: int) -> None:
        """`n` rail hits 40 ms apart, each sent live but stamped 0..120 ms before it was
        sent (a node's batch linger and a busy Wi-Fi): inside the window. The window is
        2 s, not the 300 ms a hall would use, because the delivery on this machine adds
        to the lateness (the host's clock is the real one): a loaded machine delays an
        event by hundreds of ms, which must not make it count as late here."""
        for _ in range(n):
            self.event(self.now() - rng.randrange(0, 120_000))
            time.sleep(0.04)


def _last_event_in_a_shot(journal) -> bool:
    """The journal's latest timeline event ends a closed shot (nothing is left in play)."""
    db = sqlite3.connect(journal)
    try:
        (last_event,) = db.execute("SELECT MAX(t) FROM events WHERE late = 0").fetchone()
        ends = [json.loads(shot)["end"] for (shot,) in db.execute("SELECT shot FROM shots")]
    finally:
        db.close()
    return last_event is not None and last_event in ends


def _referee_confirm(port: int) -> None:
    """A referee `confirm` with a shot fact, as a console sends it."""
    c = client(port, "railbird-referee", "referee-secret")
    try:
        body = {"v": 1, "id": "r-1", "input": {"type": "confirm", "first_contact": 1}}
        c.publish(codec.topic("club", "t1", "referee"), json.dumps(body), qos=1).wait_for_publish(5)
    finally:
        c.disconnect()
        c.loop_stop()


def _replay(journal) -> dict:
    r = subprocess.run(
        [sys.executable, "-m", "railbird", "replay", str(journal), "--check"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0 and "OK" in r.stderr, r.stderr
    return json.loads(r.stdout)["counters"]


@pytest.mark.broker
@pytest.mark.slow
def test_a_far_future_event_is_quarantined_not_poisoning_the_table(broker, tmp_path):
    broker.add_user(NODE, PW)
    host = RailbirdRun(tmp_path / "host", CONFIG.format(port=broker.port, node=NODE))
    host.start()
    pub = NodePub(broker.port, NODE, PW)
    node = Node(pub)
    rng = random.Random(13)
    try:
        node.sync()
        host.wait(lambda s: s["sync_samples"] == 1, "the sync sample")
        node.jittered(rng, N)
        s = host.wait(lambda s: s["events"] == N, "the first events")
        assert s["late"] == 0, s  # the jitter fits the window
        node.event(node.now() + HOUR_US)  # a glitch: an hour ahead
        node.jittered(rng, N)
        s = host.wait(lambda s: s["events"] == 2 * N and s["quarantined"] == 1, "all events")
        # nothing stays pending: the shots close with the quiet period
        s = host.wait(lambda s: s["pending"] == 0, "nothing pending", timeout=30)
        # the quiet period (400 ms) closes the last shot: waited for, not slept
        wait_for(lambda: _last_event_in_a_shot(host.journal), "the last shot closed", 30)
        _referee_confirm(broker.port)
        s = host.wait(lambda s: s["referee"] == 1, "the referee input")
    finally:
        pub.close()
        host.stop()
    assert s["late"] == 0, s
    assert s["quarantined"] == 1, s
    assert s["referee_pending"] == 0, s  # not held for a shot that never ends

    db = sqlite3.connect(host.journal)
    kept = db.execute("SELECT node, boot, seq, t_node, t, rx, reason FROM quarantined").fetchall()
    ref = db.execute("SELECT status FROM inputs WHERE topic LIKE '%/referee'").fetchall()
    scored = db.execute("SELECT COUNT(*), MIN(t), SUM(late) FROM events").fetchone()
    warned = [
        w
        for (shot,) in db.execute("SELECT shot FROM shots")
        for w in json.loads(shot).get("warnings", [])
        if w.startswith("quarantined:")
    ]
    db.close()
    assert ref != [("pending",)], ref
    assert len(kept) == 1, kept
    node_, boot, seq, _t_node, t, rx, reason = kept[0]
    assert (node_, boot, seq) == (NODE, BOOT, N)
    assert t - rx > HOUR_US - 10_000_000, kept  # what the clock made of it, kept as evidence
    assert "ahead of its arrival" in reason, reason
    assert scored == (2 * N, scored[1], 0), scored
    assert len(warned) == 1, warned
    c = _replay(host.journal)
    assert (c["quarantined"], c["late"], c["events"]) == (1, 0, 2 * N), c


@pytest.mark.broker
@pytest.mark.slow
def test_an_unsynced_glitch_gives_no_negative_table_times(broker, tmp_path):
    """Before its first sync sample a node's times are estimated from arrival (the tightest
    upper bound of the offset). One absurd stamp must not drag that estimate below zero (nor
    far into the past) for the rest of the boot."""
    broker.add_user(NODE, PW)
    host = RailbirdRun(tmp_path / "host", CONFIG.format(port=broker.port, node=NODE))
    host.start()
    pub = NodePub(broker.port, NODE, PW)
    node = Node(pub, up_s=2.0)
    rng = random.Random(7)
    try:
        node.jittered(rng, 10)
        host.wait(lambda s: s["events"] == 10, "the first events")
        node.event(2**62)  # a glitch: node time far beyond the host's own uptime
        node.jittered(rng, 10)
        s = host.wait(lambda s: s["events"] == 21, "all events")  # the glitch placed at arrival
        s = host.wait(lambda s: s["pending"] == 0, "nothing pending", timeout=30)
    finally:
        pub.close()
        host.stop()
    db = sqlite3.connect(host.journal)
    rows = db.execute("SELECT seq, t, late FROM events ORDER BY seq").fetchall()
    rx = dict(
        db.execute(
            "SELECT json_extract(payload, '$.events[0].seq'), rx FROM inputs WHERE source='mqtt'"
            " AND topic LIKE '%/events'"
        ).fetchall()
    )
    db.close()
    assert all(t >= 0 for _, t, _ in rows), rows
    assert s["late"] == 0, s
    after = [(seq, t) for seq, t, _ in rows if seq > 10]
    assert len(after) == 10, rows
    for seq, t in after:  # placed near their arrival, not days before it
        assert rx[seq] - 2_000_000 < t <= rx[seq], (seq, t, rx[seq])


def test_the_clock_model_bounds_a_synced_mapping_by_arrival():
    c = BootClock()
    c.add_sample(1_000_000, 51_000_150, 51_000_190, 1_000_340)  # offset 50 s, delay 300 µs
    rx = 52_000_000
    limit = c.latest(1_999_000, rx)
    assert c.to_table(1_999_000) <= rx <= limit <= rx + 110_000  # 100 ms + (300 + 2000) / 2
    assert c.to_table(1_999_000 + 3_600_000_000) > c.latest(1_999_000 + 3_600_000_000, rx)
    assert c.latest(5, None) is None  # no arrival time (offline tools): no bound


def test_one_unsynced_glitch_is_refuted_by_the_next_message():
    c = BootClock()
    c.observe_arrival(1_000_000, 1_000_020_000)  # offset at most 999.02 s
    c.observe_arrival(2_000_000, 1_001_015_000)  # 999.015 s
    c.observe_arrival(2**62, 1_002_000_000)  # the glitch: a suspect, maps nothing
    assert c.to_table(2**62, 1_002_000_000) == 1_002_000_000  # capped at its arrival
    assert c.to_table(2_500_000, 1_002_000_000) == 1_001_515_000
    c.observe_arrival(3_000_000, 1_002_030_000)  # the node's clock is far behind it: refuted
    assert c.fallback == 999_015_000
    assert c.to_table(3_000_000, 1_002_030_000) == 1_002_015_000


def test_a_genuine_drop_is_confirmed_and_provisional_times_are_never_negative():
    c = BootClock()
    c.observe_arrival(8_000_000, 30_000_000)  # an offline boot's oldest batch: 22 s
    c.observe_arrival(20_000_000, 30_001_000)  # newer: 10.001 s, a suspect for one message
    assert c.to_table(7_000_000) == 29_000_000
    c.observe_arrival(20_500_000, 30_501_000)  # stamped after it: confirmed
    assert c.to_table(7_000_000) == 17_001_000
    g = BootClock()
    g.observe_arrival(2**62, 5_000_000)  # a glitch in the very first message of a boot
    assert g.to_table(1_000_000, 5_000_100) == 0
    g.observe_arrival(1_500_000, 5_000_200)  # refuted: back to the second message's bound
    assert g.to_table(1_500_000, 5_000_200) == 5_000_200
