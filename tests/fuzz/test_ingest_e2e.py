"""Fuzz, end to end: the same interleavings of good and bad node traffic as the in-process
target, published in real time through a private mosquitto (the project config: nodes with
their own logins, the referee login, an unknown node's login, some bad ones retained) into
`railbird run`. Its journal must hold every good event exactly once and every far-future one
in quarantine, each input answered as the protocol says; the host never dies, and a restart
(which hands it every retained message again) journals none of the retained junk.

One broker and one host for the module; each example its own boots, so examples do not see
each other's events."""

from __future__ import annotations

import itertools
import json
import sqlite3
import time

import paho.mqtt.client as paho
import pytest
from hypothesis import HealthCheck, Phase, given, note, settings, strategies as st

from harness.hostproc import RailbirdRun
from railbird.broker import PrivateBroker
from railbird.daemon.ingest import now_us, protocol_retains
from railbird.daemon.journal import py_int

from . import ingest as F
from .budget import examples

pytestmark = [pytest.mark.broker, pytest.mark.slow]

NODE_PW = "node-pw"
UNKNOWN = ("intruder", "ghost", "t3-x")  # logins of nodes no table lists
E2E_KINDS = tuple(k for k in F.BUILD if k not in F.IN_PROCESS_ONLY)

CONFIG = """
venue = "club"
reorder_window_ms = 500
stats_period_s = 0
[broker]
host = "127.0.0.1"
port = {port}
user = "railbird-host"
password = "host-secret"
[shots]
quiet_ms = 400
lip_rest_ms = 400
[tables.t1]
game = "10-ball"
players = ["Ann", "Bob"]
race_to = 5
nodes = {t1}
[tables.t2]
game = "14.1"
players = ["Cy", "Di"]
target = 50
nodes = {t2}
"""


class Rig:
    def __init__(self, tmp):
        self.broker = PrivateBroker(tmp / "broker")
        for login in [*F.GOOD_NODES, F.BROKEN, *UNKNOWN]:
            self.broker.add_user(login, NODE_PW)
        self.broker.start()
        conf = CONFIG.format(
            port=self.broker.port, t1=json.dumps(F.TABLES["t1"]), t2=json.dumps(F.TABLES["t2"])
        )
        self.host = RailbirdRun(tmp / "host", conf)
        self.host.start()
        self.clients: dict = {}
        self.boots = itertools.count(1)
        self.retained = 0

    def client(self, login: str | None) -> paho.Client:
        login = login or "railbird-referee"
        c = self.clients.get(login)
        if c is None:
            c = paho.Client(paho.CallbackAPIVersion.VERSION2, protocol=paho.MQTTv5)
            pw = "referee-secret" if login == "railbird-referee" else NODE_PW
            c.username_pw_set(login, pw)
            c.connect("127.0.0.1", self.broker.port)
            c.loop_start()
            self.clients[login] = c
        return c

    def publish(self, m: F.Msg) -> None:
        info = self.client(m.node).publish(m.topic, m.payload, qos=1, retain=m.retain)
        info.wait_for_publish(10)
        self.retained += m.retain

    def close(self):
        for c in self.clients.values():
            c.disconnect()
            c.loop_stop()
        if self.host.alive:
            self.host.stop()
        self.broker.stop()


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    r = Rig(tmp_path_factory.mktemp("fuzz-e2e"))
    yield r
    r.close()


def for_broker(b: F.Bad) -> F.Bad:
    """An unknown node publishes with a login of its own, which must exist."""
    if b.kind == "unknown node" and b.p["name"] not in UNKNOWN:
        return F.Bad(b.kind, dict(b.p, name=UNKNOWN[len(b.p["name"]) % len(UNKNOWN)]))
    return b


def journal_since(path, last_input: int):
    db = sqlite3.connect(path)
    try:
        inputs = db.execute(
            "SELECT id, topic, payload, status, reason FROM inputs"
            " WHERE id > ? AND source = 'mqtt' ORDER BY id",
            (last_input,),
        ).fetchall()
        events = db.execute("SELECT node, boot, seq FROM events").fetchall()
        quarantined = db.execute("SELECT node, boot, seq FROM quarantined").fetchall()
        top = db.execute("SELECT COALESCE(MAX(id), 0) FROM inputs").fetchone()[0]
    finally:
        db.close()

    def as_keys(rows):
        return [(n, py_int(b), py_int(s)) for n, b, s in rows]

    return inputs, as_keys(events), as_keys(quarantined), top


@settings(
    max_examples=examples("ingest end to end", 5),
    phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),  # explaining: minutes
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=F.plans(max_batches=3, max_pause_us=300_000), data=st.data())
def test_the_journal_holds_every_good_event_once_whatever_comes_between(rig, plan, data):
    host = rig.host
    plan = plan.with_boots(100 * next(rig.boots))
    good = plan.good()
    bads = data.draw(F.interleaving(len(good), max_bad=25, kinds=E2E_KINDS), label="bad")
    bads = [(pos, for_broker(b)) for pos, b in bads]
    before = host.stats()
    *_, last_input = journal_since(host.journal, 0)

    t0 = min(m.rx for m in good) - 1
    shift = now_us() + 100_000 - t0
    msgs = F.noisy(plan, bads, shift)
    note(f"{len(good)} good, {len(bads)} bad: {sorted(b.kind for _, b in bads)}")
    for m in msgs:
        wait = (m.rx + shift - now_us()) / 1e6
        if wait > 0:
            time.sleep(wait)
        rig.publish(m)

    want = before["received"] + len(msgs)
    done = host.wait(
        lambda s: s["received"] >= want and s["pending"] == 0,
        f"{want} inputs received, every event released",
        timeout=30,
    )
    assert done["received"] == want, done  # nothing the broker delivered went missing
    inputs, events, quarantined, _ = journal_since(host.journal, last_input)

    # every input answered as the protocol says: found by topic and payload (a referee
    # payload is journalled sealed, so referee input is found by topic alone)
    by_content: dict = {}
    for m in msgs:
        key = m.topic if m.topic.endswith("/referee") else (m.topic, m.payload)
        by_content.setdefault(key, []).append(m)
    assert len(inputs) == len(msgs)
    for _id, topic, payload, status, reason in inputs:
        key = topic if topic.endswith("/referee") else (topic, bytes(payload))
        ms = by_content.get(key)
        assert ms, (topic, payload)
        allowed = {s for m in ms for s in m.expect}
        assert status in allowed, (topic, payload[:200], status, reason)
        codes = {c for m in ms for c in m.codes}
        if status == "rejected" and codes and all(m.codes for m in ms):
            assert (reason or "").split(":")[0] in codes, (topic, payload[:200], reason)

    # every good event journalled exactly once; the far-future ones quarantined, not events
    boots = {(n.node, n.boot) for n in [*plan.nodes, plan.broken]}
    ev = [k for k in events if k[:2] in boots]
    assert len(ev) == len(set(ev))
    assert set(ev) == plan.good_keys()
    future = sum(m.payload.count(b'"seq"') for m in msgs if m.label in ("future", "broken clock"))
    assert len([k for k in quarantined if k[:2] in boots]) == future
    assert host.alive


def test_a_restart_journals_none_of_the_retained_junk(rig):
    """Retained junk (on topics the protocol never retains) comes back on every subscribe:
    the restarted host acknowledges and clears it but journals none of it."""
    host = rig.host
    m = F.Msg(0, "railbird/v1/club/t1/node/t1-a/events", b"{retained junk", "bad json", ())
    m.node, m.retain = "t1-a", True
    rejected = host.stats()["rejected"]
    rig.publish(m)
    host.wait(lambda s: s["rejected"] > rejected, "the live copy rejected")
    host.stop()
    *_, last_input = journal_since(host.journal, 0)
    host.start()
    s = host.wait(lambda s: s.get("retained_ignored", 0) >= 1, "the retained copy ignored")
    # looking for what must NOT be journalled: a slow machine can only make this pause pass
    # falsely (junk not journalled yet), never fail falsely
    time.sleep(1.0)
    inputs, *_ = journal_since(host.journal, last_input)
    # Only topics the protocol never retains are junk by their retain flag alone: a retained
    # birth, status or config is the protocol's own, and one an earlier example left
    # malformed is rejected and counted again (whether a good one replaced it depends on the
    # order the broker got the nodes' publishes in).
    assert [i for i in inputs if not protocol_retains(i[1])] == [], inputs
    assert s["retained_ignored"] >= 1
