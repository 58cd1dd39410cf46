"""A bug in a message handler is not a lost link (issue 21): a retained config that makes
the node's config handler raise is counted (`callback_errors`) and reported in the status
(`callback_error`), and the connection stays up. Before, the client took the handler's
exception for a lost connection, reconnected at once, got the retained config again and
raised again: 955 reconnects in 10 s, no backoff, nothing in the status.

The window is 10 s of the node's own clock (the simulated hardware's, at speed 1), and the
assertion is 0 reconnects: a faster or slower machine makes it neither easier nor harder
(the broken client reconnects as fast as the machine lets it, at least once per window)."""

import json
import threading
import time

import pytest

from harness.mqttsub import subscriber
from rbnode.simnode import SimNode
from rbproto import codec

pytestmark = pytest.mark.broker
NODE, PW = "n1", "node-pw"
CFG_TOPIC = codec.topic("club", "t1", "config", NODE)
STATUS_TOPIC = codec.topic("club", "t1", "status", NODE)
# Valid JSON, not a valid config (no pockets, no rails): the codec refuses it, but the
# "config_bug" set's handler reads `pockets` before the codec checks it and raises KeyError.
MALFORMED = json.dumps({"v": 1, "rev": 9}).encode()
WINDOW_US = 10_000_000


class StatusWatch:
    def __init__(self, broker):
        self.lock = threading.Lock()
        self.statuses = []
        self.c = subscriber(broker.port, self._on, "handler-err-host")

    def _on(self, c, u, m):
        if m.topic == STATUS_TOPIC:
            with self.lock:
                self.statuses.append(json.loads(m.payload))

    def last_online(self):
        with self.lock:
            for s in reversed(self.statuses):
                if s["state"] == "online":
                    return s
        return None

    def close(self):
        self.c.loop_stop()
        self.c.disconnect()


def test_retained_config_that_breaks_the_handler_keeps_the_link(broker, tmp_path):
    broker.add_user(NODE, PW)
    host = StatusWatch(broker)
    # retained before the node starts: every connect gets it at once, as in the field
    host.c.publish(CFG_TOPIC, MALFORMED, qos=1, retain=True).wait_for_publish(5)
    sn = SimNode(
        "127.0.0.1",
        broker.port,
        "club",
        "t1",
        NODE,
        PW,
        tmp_path / "node",
        seed=7,
        speed=1,
        fw_faults={None: "config_bug"},  # None: the set flashed at the root
    )
    sn.start()
    try:
        sn.wait_connected()
        t0 = sn.now_us
        while sn.now_us - t0 < WINDOW_US:
            time.sleep(0.1)
        c = sn.counters()
        mq = sn.call(lambda: dict(sn.node.mqtt.counters))
        assert (c["reconnects"], mq["connects"]) == (0, 1), (c, mq, sn.node.mqtt.last_error)
        assert c.get("callback_errors", 0) >= 1, c
        assert sn.connected()
        st = sn.status()
        assert st["callback_error"].startswith(CFG_TOPIC + ": KeyError("), st
        # and what the broker holds says so too (a status goes out at once on the error)
        deadline = time.monotonic() + 5
        while True:
            s = host.last_online()
            if s is not None and s.get("callback_error"):
                break
            assert time.monotonic() < deadline, host.statuses[-3:]
            time.sleep(0.05)
        codec.validate("status", s)
        assert s["counters"]["callback_errors"] >= 1
        assert "KeyError" in s["callback_error"]
    finally:
        sn.stop()
        host.close()
