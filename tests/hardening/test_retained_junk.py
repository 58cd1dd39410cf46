"""Issue 13, item 9: retained junk is not journalled again on every reconnect. The protocol
retains only `birth`, `status`, `config`, `state`, `summary` and `host` (protocol/SPEC.md, topic
table); a retained message on any other topic is junk that the broker would hand the host
again on every subscribe (the probe: 2,000 retained messages under invented tables gave 2k,
4k, 6k journalled inputs after three reconnects). The host journals none of those retained
copies, counts them, and clears them at the broker (an empty retained message on the v1 topic).

Real parts: a private mosquitto with the project config, `railbird run` as a subprocess, the
junk published retained with a node's and a referee's own logins."""

from __future__ import annotations

import json
import sqlite3
import threading
import time

import pytest

from harness.hostproc import RailbirdRun
from harness.mqttsub import client, subscriber
from rbproto import codec

from .nodepub import NodePub, shot_events

pytestmark = [pytest.mark.broker, pytest.mark.slow]

NODE, PW, BOOT = "t1-node", "node-pw", 4
JUNK_TABLES = 150  # invented tables, one retained `events` message each
RECONNECTS = 3

CONFIG = """
venue = "club"
reorder_window_ms = 150
stats_period_s = 0
[broker]
host = "127.0.0.1"
port = {port}
user = "railbird-host"
password = "host-secret"
client_id = "railbird-host-junk"
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


def publish_retained(port, user, password, messages) -> None:
    """(topic, payload) pairs, QoS 1 and retained, each acknowledged by the broker."""
    c = client(port, user, password)
    try:
        for topic, payload in messages:
            c.publish(topic, payload, qos=1, retain=True).wait_for_publish(5)
    finally:
        c.disconnect()
        c.loop_stop()


def retained_at_broker(port, topic_filter) -> list:
    """The retained messages a fresh subscriber gets for `topic_filter` (with the host's
    login: no other may read referee input, tests/hardening/test_secrets.py). No fixed wait:
    the broker answers a connection's packets in order, and QoS 0 copies wait for no inflight
    window, so every retained message of the filter has arrived once a later SUBACK has."""
    got, lock = [], threading.Lock()

    def on_message(client, userdata, msg):
        if msg.retain:
            with lock:
                got.append(msg.topic)

    marker = "railbird/v1/club/retained-probe/end"
    c = subscriber(port, on_message, f"retained-probe-{time.monotonic_ns()}", marker)
    try:
        done, subacks = threading.Event(), []

        def on_subscribe(client, userdata, mid, reason_codes, properties):
            subacks.append(mid)
            if len(subacks) == 2:  # the filter's, then the marker's
                done.set()

        c.on_subscribe = on_subscribe
        c.subscribe(topic_filter, 0)
        c.subscribe(marker, 0)
        assert done.wait(5), "no SUBACK for the end marker subscription"
        with lock:
            return list(got)
    finally:
        c.disconnect()
        c.loop_stop()


def retained_junk(port) -> list:
    """Retained messages under node and referee topics that the protocol never retains
    (`birth` and `status` are retained by design; none are published here)."""
    return retained_at_broker(port, "railbird/v1/club/+/node/+/#") + retained_at_broker(
        port, "railbird/v1/club/+/referee"
    )


def journal_inputs(path) -> int:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT count(*) FROM inputs WHERE source = 'mqtt'").fetchone()[0]
    finally:
        db.close()


def junk() -> list:
    ev = codec.encode(
        "events",
        {
            "v": 1,
            "node": NODE,
            "boot": BOOT,
            "events": [{"seq": 0, "t": 1000, "kind": "drop", "pocket": "HL", "dur": 1}],
        },
    )
    out = [(codec.topic("club", f"junk-{i}", "events", NODE), ev) for i in range(JUNK_TABLES)]
    # the node's own table too: a retained batch there would be a duplicate at best
    out.append((codec.topic("club", "t1", "sync_result", NODE), b'{"v":1}'))
    return out


def referee_junk() -> list:
    # a retained referee input would be applied again on every reconnect
    msg = json.dumps({"v": 1, "input": {"type": "undo"}, "id": "stale"}).encode()
    return [(codec.topic("club", f"ref-{i}", "referee"), msg) for i in range(10)]


def test_retained_junk_is_neither_journalled_again_nor_kept(broker, tmp_path):
    broker.add_user(NODE, PW)
    publish_retained(broker.port, NODE, PW, junk())
    publish_retained(broker.port, "railbird-referee", "referee-secret", referee_junk())
    n_junk = JUNK_TABLES + 1 + 10
    assert len(retained_junk(broker.port)) == n_junk

    host = RailbirdRun(tmp_path / "host", CONFIG.format(port=broker.port, node=NODE))
    host.start()
    node = NodePub(broker.port, NODE, PW)
    try:
        first = host.wait(lambda s: s["received"] + s["retained_ignored"] >= n_junk, "the junk")
        # these pauses look for what must NOT happen (a retained copy journalled, now or
        # after a resubscribe): a slow machine can only make them pass falsely, never fail
        # falsely; the counts stay 0 whatever the speed when the host is right
        time.sleep(0.5)
        counts = [journal_inputs(host.journal)]
        for _ in range(RECONNECTS):
            before = host.stats()["connects"]
            broker.restart()  # the host reconnects and subscribes again
            host.wait(lambda s, c=before: s["connects"] > c, "reconnected")
            time.sleep(1.0)
            counts.append(journal_inputs(host.journal))
        # live play still counts: retained copies only are ignored
        for e in shot_events(0, 2_000_000, 2):
            node.events(BOOT, [e])
        done = host.wait(lambda s: s["events"] >= 4, "live events")
    finally:
        node.close()
        host.proc.terminate()
        host.proc.wait(10)

    print(f"journalled mqtt inputs after start and {RECONNECTS} reconnects: {counts}")
    assert counts == [counts[0]] * (RECONNECTS + 1), counts
    assert counts[0] == 0, f"retained junk journalled: {counts}"
    assert first["retained_ignored"] >= n_junk
    assert done["events"] == 4
    assert retained_junk(broker.port) == []
