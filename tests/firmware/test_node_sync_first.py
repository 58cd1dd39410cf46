"""A node that booted while the broker was unreachable holds its backlog after connecting
until its first sync result is out (rbnode/node.py SYNC_FIRST_MS), so the host can map the
backlog's node times before it arrives (docs/host.md "Table time"; the host side of this
soak finding is tests/host/test_offline_boot.py)."""

import threading
import time

import pytest

from harness.mqttsub import subscriber
from harness.waiting import wait_for
from rbnode.simnode import SimNode
from rbproto import codec

pytestmark = pytest.mark.broker
NODE, PW = "n1", "node-pw"


class SyncHost:
    """Answers sync requests and records the node's messages in arrival order."""

    def __init__(self, broker):
        self.lock = threading.Lock()
        self.order = []  # (kind, boot)
        self.c = subscriber(broker.port, self._on, "sync-host")

    def _on(self, c, u, m):
        t2 = time.monotonic_ns() // 1000
        kind, venue, table, node, msg = codec.decode_message(m.topic, m.payload)
        if kind == "sync_req":
            resp = {
                "v": 1,
                "id": msg["id"],
                "t1": msg["t1"],
                "t2": t2,
                "t3": time.monotonic_ns() // 1000,
            }
            c.publish(
                codec.topic(venue, table, "sync_resp", node), codec.encode("sync_resp", resp), qos=0
            )
        with self.lock:
            self.order.append((kind, msg.get("boot")))

    def kinds(self, boot):
        with self.lock:
            return [k for k, b in self.order if b == boot]

    def close(self):
        self.c.loop_stop()
        self.c.disconnect()


def test_backlog_waits_for_the_first_sync_result(broker, tmp_path):
    broker.add_user(NODE, PW)
    broker.stop()  # the node boots while the broker is unreachable
    sn = SimNode(
        "127.0.0.1", broker.port, "club", "t1", NODE, PW, tmp_path / "node", seed=21, speed=1
    )
    sn.start()
    host = None
    try:
        sn.call(setattr, sn.node.mqtt, "backoff_max_ms", 300)
        for i, p in enumerate(("HL", "HR", "SL", "SR", "FL", "FR")):
            sn.drop(p, 30000, at_us=sn.now_us + 20_000 + i * 100_000)
        wait_for(lambda: sn.status()["queue"] == 6, lambda: f"the backlog: {sn.status()}", 20)
        assert not sn.connected()
        broker.start()
        host = SyncHost(broker)
        sn.wait_connected(15)
        deadline = time.monotonic() + 10
        while "events" not in host.kinds(sn.boot) and time.monotonic() < deadline:
            time.sleep(0.02)
        kinds = host.kinds(sn.boot)
        assert "events" in kinds, kinds
        first_ev = kinds.index("events")
        assert "sync_result" in kinds[:first_ev], kinds
    finally:
        sn.stop()
        if host is not None:
            host.close()
