"""Issue 13, item 8: a node scores only on the table it is configured for. The project ACL
lets a node write its own subtree under any table (`railbird/+/+/+/node/<id>/#`), and a table
without a `nodes` list (one made from `[default_table]` under `accept_unknown_tables`) takes
any node; so a node's login (its password is on the board) could score on another table.
The host refuses a node's messages on any table but the one whose `nodes` lists it, and
counts them (`rejected_by_reason["wrong table"]`).

Real parts: a private mosquitto with the project config, `railbird run` as a subprocess, the
node's own login publishing with paho."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from harness.hostproc import RailbirdRun
from harness.mqttsub import client, subscriber
from railbird.broker import PrivateBroker, confined_acl
from rbproto import codec

from .nodepub import NodePub, shot_events

pytestmark = [pytest.mark.broker, pytest.mark.slow]

NODE, PW, BOOT = "t1-node", "node-pw", 2
SHOTS = 4  # 2 events each

CONFIG = """
venue = "club"
accept_unknown_tables = true
reorder_window_ms = 150
stats_period_s = 0
[broker]
host = "127.0.0.1"
port = {port}
user = "railbird-host"
password = "host-secret"
client_id = "railbird-host-confine"
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
[tables.t3]
game = "10-ball"
players = ["Ed", "Fa"]
race_to = 3
nodes = ["t3-node"]
[default_table]
game = "10-ball"
race_to = 3
"""


def journal(path, sql):
    db = sqlite3.connect(path)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def test_a_node_scores_only_on_its_own_table(broker, tmp_path):
    broker.add_user(NODE, PW)
    host = RailbirdRun(tmp_path / "host", CONFIG.format(port=broker.port, node=NODE))
    host.start()
    own = NodePub(broker.port, NODE, PW, table="t1")
    open_table = NodePub(broker.port, NODE, PW, table="t2")  # [default_table]: any node
    listed = NodePub(broker.port, NODE, PW, table="t3")  # nodes = ["t3-node"]
    try:
        evs = shot_events(0, 3_000_000, SHOTS)
        for e in evs:
            own.events(BOOT, [e])
        # the same node, other boots, on the other tables: each refused
        for i, e in enumerate(evs):
            open_table.events(BOOT + 1, [dict(e, seq=i)])
            listed.events(BOOT + 2, [dict(e, seq=i)])
        open_table.raw(
            "status",
            {"v": 1, "node": NODE, "boot": BOOT + 1, "state": "online", "uptime_us": 9_000_000},
        )
        s = host.wait(
            lambda s: s["events"] >= len(evs) and s["received"] >= 3 * len(evs) + 1,
            "every message handled",
        )
    finally:
        for c in (own, open_table, listed):
            c.close()
        host.proc.terminate()
        host.proc.wait(10)

    by_reason = s["rejected_by_reason"]
    print(f"stats: events {s['events']}, rejected {by_reason}")
    assert s["events"] == len(evs), s  # only the own table's
    assert by_reason.get("wrong table") == 2 * len(evs) + 1, by_reason
    tables = journal(host.journal, "SELECT DISTINCT tbl FROM events")
    assert tables == [("t1",)], tables
    refused = journal(
        host.journal,
        "SELECT tbl, count(*) FROM inputs WHERE status = 'rejected' GROUP BY tbl ORDER BY tbl",
    )
    assert refused == [("t2", len(evs) + 1), ("t3", len(evs))], refused
    reasons = journal(host.journal, "SELECT DISTINCT reason FROM inputs WHERE tbl = 't2'")
    assert reasons == [("wrong table: node t1-node reports for club/t1, not club/t2",)], reasons


def published_through(broker, tables=("t1", "t2", "t3")) -> list:
    """The tables under which the broker passes on an `events` message of the node's login
    (QoS 0: a refused publish is dropped silently)."""
    got, lock = [], threading.Lock()
    body = {"v": 1, "node": NODE, "boot": 1, "events": [{"seq": 0, "t": 1, "kind": "cue"}]}
    last = codec.encode("events", {**body, "boot": 2})
    done = threading.Event()

    def on_message(client, userdata, msg):
        if msg.payload == last:
            done.set()  # everything published before it has been dealt with
            return
        with lock:
            got.append(msg.topic.split("/")[3])

    watch = subscriber(broker.port, on_message, "watch", topic="railbird/+/club/+/node/+/events")
    node = client(broker.port, NODE, PW)
    try:
        # its own table first: mosquitto may close the connection at a refused publish
        node.publish(f"railbird/v2/club/t1/node/{NODE}/events", b"{}")  # counted by the host
        for t in tables:
            node.publish(codec.topic("club", t, "events", NODE), codec.encode("events", body))
        # then the last one, own table, on the same connection (QoS 1: sent again should
        # the broker have closed it): once the broker passes it on it has dealt with every
        # one before it. Were one late, this would pass falsely, never fail falsely.
        node.publish(codec.topic("club", tables[0], "events", NODE), last, qos=1)
        assert done.wait(20), "the node's last message never passed on"
    finally:
        for c in (node, watch):
            c.disconnect()
            c.loop_stop()
    return sorted(got)


def test_the_broker_can_confine_a_node_to_its_table_too(tmp_path):
    """The project ACL's node pattern lets the node publish under every table; the ACL that
    `confined_acl` makes from the host config (`python -m railbird.broker acl --config ...`)
    passes on only its own table's."""
    with PrivateBroker(tmp_path / "open", users={NODE: PW}) as b:
        assert published_through(b) == ["t1", "t1", "t2", "t3"]
    acl = confined_acl("club", {"t1": [NODE], "t3": ["t3-node"]})
    with PrivateBroker(tmp_path / "confined", users={NODE: PW}, acl=acl) as b:
        assert published_through(b) == ["t1", "t1"]
