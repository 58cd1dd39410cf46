"""A node that reconnects with a backlog publishes a status as soon as the backlog (RAM ring,
flash spill, in-flight batches) is out, so the host can end its hold on the node's table
(docs/host.md "Per-node watermarks") without waiting for the periodic status
(`status_period_s`, 30 s)."""

import threading
import time

import pytest

from harness.mqttsub import subscriber
from harness.waiting import poll
from rbnode.simnode import SimNode, default_device_config
from rbproto import codec

pytestmark = pytest.mark.broker
NODE, PW = "n1", "node-pw"


class Recorder:
    """Records the node's live (not retained) messages with their arrival time."""

    def __init__(self, broker):
        self.lock = threading.Lock()
        self.msgs = []  # (monotonic s, kind, msg)
        self.c = subscriber(broker.port, self._on, "drain-rec")

    def _on(self, c, u, m):
        if m.retain:
            return
        kind, _venue, _table, _node, msg = codec.decode_message(m.topic, m.payload)
        with self.lock:
            self.msgs.append((time.monotonic(), kind, msg))

    def snapshot(self):
        with self.lock:
            return list(self.msgs)

    def close(self):
        self.c.loop_stop()
        self.c.disconnect()


def test_status_once_the_backlog_is_drained(broker, tmp_path):
    broker.add_user(NODE, PW)
    sensing = default_device_config()["sensing"]
    for r in sensing["rails"]:
        r["refractory_us"] = 20000
    # a small ring, so the offline backlog also fills the flash spill
    sn = SimNode(
        "127.0.0.1",
        broker.port,
        "club",
        "t1",
        NODE,
        PW,
        tmp_path / "node",
        seed=31,
        speed=1,
        keepalive_s=5,
        sensing=sensing,
        dev={"ring": 64},
    )
    sn.start()
    rec = None
    try:
        sn.wait_connected()
        sn.wait_idle(timeout=30)
        period = sn.call(lambda: sn.node.cfg["status_period_s"])
        assert period >= 30
        sn.call(setattr, sn.node.mqtt, "backoff_max_ms", 500)
        broker.stop()
        truth = sn.random(2.0, drops=20, min_gap_us=60000)
        truth += sn.random(2.0, rails=120, min_gap_us=25000)
        while sn.call(lambda: bool(sn.hw._edges)):
            time.sleep(0.05)

        def held():  # (status, in flight) once every sensed event is queued, spilt or sent
            st = sn.status()
            inflight = sn.call(lambda: sum(p[1] for p in sn.node._pending))
            done = st["queue"] + st["spill"] + inflight == len(truth)
            return (st, inflight) if done else None

        # the node files its events in its own time: waited for, not a fixed sleep
        st, inflight = poll(held, 30, 0.05) or (
            sn.status(),
            sn.call(lambda: sum(p[1] for p in sn.node._pending)),
        )
        assert not sn.connected() and st["spill"] > 0, st
        assert st["queue"] + st["spill"] + inflight == len(truth), (st, inflight)
        broker.start()
        t_up = time.monotonic()
        rec = Recorder(broker)
        sn.wait_connected(15)
        # the drained status: after the backlog's last events, queue 0 and spill 0
        deadline = t_up + 15
        found = None
        while found is None and time.monotonic() < deadline:
            time.sleep(0.05)
            msgs = rec.snapshot()
            n = 0
            for t, kind, msg in msgs:
                if kind == "events":
                    n += len(msg["events"])
                elif kind == "status" and n >= len(truth) and msg["state"] == "online":
                    found = (t, msg)
                    break
        assert found is not None, [
            (k, m.get("queue"), m.get("spill")) for _, k, m in rec.snapshot() if k != "events"
        ]
        t_status, msg = found
        t_last = max(t for t, k, _ in rec.snapshot() if k == "events")
        print(
            f"\nbacklog {len(truth)} (spill {st['spill']}); last events "
            f"{t_last - t_up:.2f} s after the broker came back, "
            f"status {t_status - t_last:.3f} s later"
        )
        assert msg["queue"] == 0 and msg["spill"] == 0, msg
        assert msg["counters"]["reconnects"] >= 1
        assert msg["counters"]["published"] == msg["counters"]["events"], msg["counters"]
        assert t_status - t_last < 1.5
        assert t_status - t_up < period / 3
    finally:
        sn.stop()
        if rec is not None:
            rec.close()
