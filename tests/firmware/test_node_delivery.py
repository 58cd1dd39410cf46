"""The node app on simulated hardware against the private mosquitto (auth + ACL): every
drop and rail hit reaches a subscriber exactly once after de-duplication by
(node, boot, seq), in order, with its original timestamp; also across a 30 s broker outage
(RAM ring -> flash spill -> in order after the reconnect) and across node restarts (the
boot counter rises; spilled events keep their boot)."""

import asyncio
import threading
import time

import pytest

from harness.mqttsub import subscriber
from harness.waiting import poll
from rbnode.node import Node
from rbnode.simnode import SimNode, default_device_config
from rbproto import codec

pytestmark = [pytest.mark.broker, pytest.mark.slow]

NODE, PW = "n1", "node-pw"


def sensing(refractory_us=20000):
    s = default_device_config()["sensing"]
    for r in s["rails"]:
        r["refractory_us"] = refractory_us
    return s


class Host:
    """A host-like subscriber: persistent session, validates with the codec, de-dups by
    (node, boot, seq) and records arrival order."""

    def __init__(self, broker, client_id="test-host"):
        self.lock = threading.Lock()
        self.events = []  # de-duplicated, arrival order: (boot, event dict)
        self.seen = set()
        self.dups = 0
        self.msgs = []  # (topic, payload) of everything else
        self.order = []  # (kind, boot) of every message, arrival order
        self.c = subscriber(broker.port, self._on, client_id, persistent=True)

    def _on(self, c, u, m):
        kind, _venue, _table, node, msg = codec.decode_message(m.topic, m.payload)
        with self.lock:
            self.order.append((kind, msg.get("boot")))
            if kind != "events":
                self.msgs.append((kind, msg))
                return
            for ev in msg["events"]:
                key = (node, msg["boot"], ev["seq"])
                if key in self.seen:
                    self.dups += 1
                    continue
                self.seen.add(key)
                self.events.append((msg["boot"], ev))

    def count(self):
        with self.lock:
            return len(self.events)

    def wait_count(self, n, timeout=60):
        deadline = time.monotonic() + timeout
        while self.count() < n and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.count()

    def close(self):
        self.c.loop_stop()
        self.c.disconnect()


def check_delivery(host, truth, tol_us=200):
    """Exactly once, in order per boot, matching the truth with original timestamps."""
    evs = list(host.events)
    # in order: seq strictly increasing within a boot, boots in arrival order never go back
    last = {}
    boots = []
    for boot, ev in evs:
        assert ev["seq"] > last.get(boot, -1), ("out of order", boot, ev)
        last[boot] = ev["seq"]
        if not boots or boots[-1] != boot:
            assert boot not in boots, f"boot {boot} came back after another boot"
            boots.append(boot)
    assert len(evs) == len(truth), (len(evs), len(truth))
    # match with the scripted truth: per boot, both sorted by time
    for b in sorted({t[0] for t in truth}):
        # ties (a drop and a rail hit scheduled at the same µs) sort by kind, then name
        want = sorted((t for t in truth if t[0] == b), key=lambda t: (t[3], t[1], t[2]))
        got = sorted(
            (e for bb, e in evs if bb == b),
            key=lambda e: (e["t"], e["kind"], e.get("pocket") or e.get("rail")),
        )
        assert len(got) == len(want), (b, len(got), len(want))
        for (_boot, kind, name, at, v), e in zip(want, got, strict=True):
            assert e["kind"] == kind, (e, (kind, name, at, v))
            assert 0 <= e["t"] - at <= tol_us, (e, (kind, name, at, v))
            if kind == "drop":
                assert e["pocket"] == name and abs(e["dur"] - v) <= tol_us, (e, v)
            else:
                assert e["rail"] == name and e["amp"] == v, (e, v)


def schedule(sn, seconds, drops, rails):
    truth = sn.random(seconds, drops=drops, rails=0, min_gap_us=60000)
    truth += sn.random(seconds, drops=0, rails=rails, min_gap_us=25000)
    return truth


@pytest.fixture
def host(broker):
    broker.add_user(NODE, PW)
    h = Host(broker)
    yield h
    h.close()


def test_1000_drops_5000_rails_exactly_once(broker, host, tmp_path):
    sn = SimNode(
        "127.0.0.1",
        broker.port,
        "club",
        "t1",
        NODE,
        PW,
        tmp_path / "node",
        seed=11,
        speed=10,
        sensing=sensing(),
    )
    sn.start()
    try:
        sn.wait_connected()
        truth = schedule(sn, 36.0, 1000, 5000)
        assert len(truth) == 6000
        sn.wait_idle(timeout=60)
        assert host.wait_count(6000, 20) == 6000
        c = sn.counters()
        print("\ncounters:", c, "dups:", host.dups)
        check_delivery(host, truth)
        assert c["dropped_ram"] == 0 and c["lost_edges"] == 0 and c["irq_overflow"] == 0
    finally:
        sn.stop()


def test_broker_down_30s_mid_stream(broker, host, tmp_path):
    sn = SimNode(
        "127.0.0.1",
        broker.port,
        "club",
        "t1",
        NODE,
        PW,
        tmp_path / "node",
        seed=12,
        speed=1,
        sensing=sensing(),
        keepalive_s=5,
    )
    sn.start()
    try:
        sn.wait_connected()
        truth = schedule(sn, 40.0, 1000, 5000)
        time.sleep(5)
        broker.stop()
        t_down = time.monotonic()
        time.sleep(30)  # real time: the node keeps sensing; ring -> spill
        # and at least the ring's worth spilt before the broker is back, however slowly
        # this machine ran the node meanwhile (its sensing runs in real time)
        poll(lambda: sn.counters()["spilled"] > 512, 90, 0.1)
        mid = sn.counters()
        spill_len = sn.status()["spill"]
        broker.start()
        print(
            f"\noutage {time.monotonic() - t_down:.1f} s; at restart: spill {spill_len}, "
            f"counters {mid}"
        )
        sn.wait_idle(timeout=60)
        assert host.wait_count(6000, 30) == 6000
        c = sn.counters()
        print("after: counters", c, "dups:", host.dups)
        assert c["spilled"] > 512 and c["reconnects"] >= 1
        assert c["dropped_ram"] == 0 and c["dropped_spill"] == 0
        check_delivery(host, truth)
    finally:
        sn.stop()


def test_node_restarts_boot_rises_nothing_lost(broker, host, tmp_path):
    sn = SimNode(
        "127.0.0.1",
        broker.port,
        "club",
        "t1",
        NODE,
        PW,
        tmp_path / "node",
        seed=13,
        speed=10,
        sensing=sensing(),
    )
    sn.start()
    try:
        sn.wait_connected()
        b1 = sn.boot
        truth = schedule(sn, 12.0, 300, 1500)
        sn.wait_idle(timeout=60)
        # broker away, more play: queued in RAM / in flight when the node restarts
        broker.stop()
        truth += schedule(sn, 3.0, 50, 250)
        while sn.call(lambda: bool(sn.hw._edges)):
            time.sleep(0.05)
        # wait for the edges to reach the queue (the broker is down, so they stay there)
        # rather than sleeping a fixed 0.3 s that a busy machine may not cover
        queued = poll(lambda: sn.status()["queue"], timeout=60)
        sn.restart(park=True)  # graceful: RAM queue parked in the flash spill
        b2 = sn.boot
        assert b2 == b1 + 1
        truth += schedule(sn, 6.0, 150, 750)
        time.sleep(0.5)
        broker.start()
        sn.wait_connected(20)
        sn.wait_idle(timeout=60)
        # a power cut with nothing queued, then a third boot
        sn.restart(park=False, reset_cause="power")
        b3 = sn.boot
        assert b3 == b2 + 1
        sn.wait_connected(20)
        truth += schedule(sn, 3.0, 50, 250)
        sn.wait_idle(timeout=60)
        n = len(truth)
        assert host.wait_count(n, 30) == n
        print(f"\nboots {b1} {b2} {b3}; queued at restart {queued}; {n} events; dups {host.dups}")
        assert queued > 0
        check_delivery(host, truth)
        births = [m for k, m in host.msgs if k == "birth"]
        assert [m["boot"] for m in births][-3:] == [b1, b2, b3] or sorted(
            {m["boot"] for m in births}
        ) == [b1, b2, b3]
        assert births[-1]["reset"] == "power"
    finally:
        sn.stop()


async def _status_task_without_birth(self):
    """The status task as if starved of CPU until the backlog is out (as under load): it
    sends the status due on connect and once drained after it, never the birth."""
    m = self.mqtt
    while not self._stopping:
        self.sup.beat("status")
        if (
            m.isconnected()
            and (self._status_now.is_set() or (self._drain_status and self.drained()))
            and m.inflight_count() < m.max_inflight
        ):
            self._status_now.clear()
            if self.drained():
                self._drain_status = False
            await m.publish(self.t_status, codec.encode("status", self.status_msg()), 1, True)
        await asyncio.sleep(0.1)


def test_birth_goes_before_the_boots_events_and_is_owed_by_wait_idle(
    broker, host, tmp_path, monkeypatch
):
    """Regression: the birth used to be sent only by the status task, which wakes every
    100 ms; under load a reconnecting node drained its backlog first, wait_idle() returned
    and the power cut that followed lost that boot's birth for good. Now the publisher sends
    the birth before the boot's first events, and wait_idle() waits for it. A status task
    that never gets to the birth makes the old race certain."""
    monkeypatch.setattr(Node, "_status_task", _status_task_without_birth)
    sn = SimNode(
        "127.0.0.1",
        broker.port,
        "club",
        "t1",
        NODE,
        PW,
        tmp_path / "node",
        seed=14,
        speed=10,
        sensing=sensing(),
    )
    sn.start()
    try:
        boots = []
        n = 0
        for _k in range(3):
            sn.wait_connected(20)
            boots.append(sn.boot)
            n += len(schedule(sn, 1.0, 10, 40))
            sn.wait_idle(timeout=30)
            sn.restart(park=False, reset_cause="power")  # cut right after idle
        assert host.wait_count(n, 30) == n
        with host.lock:
            order = list(host.order)
        for b in boots:
            kinds = [k for k, bb in order if bb == b and k in ("birth", "events")]
            assert kinds and kinds[0] == "birth", (b, kinds[:3])
            assert kinds.count("birth") == 1, (b, kinds.count("birth"))
    finally:
        sn.stop()


def test_wait_idle_counts_an_unsent_birth(broker, host, tmp_path, monkeypatch):
    """SimNode.idle() is what tests wait on before a power cut: while connected, a birth
    nobody has sent yet is still owed, so the node is not idle."""

    async def never(self):
        return False

    monkeypatch.setattr(Node, "_status_task", _status_task_without_birth)
    monkeypatch.setattr(Node, "_publish_birth", never)
    sn = SimNode(
        "127.0.0.1",
        broker.port,
        "club",
        "t1",
        NODE,
        PW,
        tmp_path / "node",
        seed=15,
        speed=10,
        sensing=sensing(),
    )
    sn.start()
    try:
        sn.wait_connected(20)
        # the birth is never sent, so idle() must stay false however long this takes: a
        # slow machine could only make this pass falsely (idle not yet computed), never
        # fail falsely; the sleep gives the node its chance to claim idle wrongly
        time.sleep(0.3)
        assert not sn.idle()
        with pytest.raises(TimeoutError):
            sn.wait_idle(timeout=0.5)
    finally:
        sn.stop()
