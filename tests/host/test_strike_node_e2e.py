"""End to end through a private mosquitto: the simulated node firmware with a strike sensor
configured (hardware/strike.md) announces `strike` and `wm` in its birth and sends `strike`
events with their amplitude; the daemon journals them as events of the table, nothing
refused."""

import json

import pytest

from harness.mqttsub import subscriber
from harness.waiting import wait_for
from railbird.config import from_dict
from railbird.daemon.worker import Daemon
from rbnode.simnode import SimNode, default_device_config
from rbproto import codec

pytestmark = pytest.mark.broker
NODE, PW = "t1-node", "node-pw"


def test_strike_events_reach_the_journal_and_the_birth_announces_them(broker, tmp_path):
    broker.add_user(NODE, PW)
    births = []
    sub = subscriber(
        broker.port,
        lambda c, u, m: births.append(json.loads(m.payload)),
        "strike-birth",
        topic=codec.topic("club", "t1", "birth", NODE),
    )
    cfg = from_dict(
        {
            "venue": "club",
            "journal": str(tmp_path / "j.sqlite"),
            "reorder_window_ms": 100,
            "broker": {"port": broker.port, "password": "host-secret", "client_id": "h-st"},
            "shots": {"quiet_ms": 500},
            "tables": {"t1": {"nodes": [NODE]}},
        }
    )
    sensing = dict(default_device_config()["sensing"])
    sensing["strike"] = {"ch": 6, "threshold": 300, "refractory_us": 30000}
    d = Daemon(cfg).start()
    sn = SimNode(
        "127.0.0.1", broker.port, "club", "t1", NODE, PW, tmp_path / "node", seed=9, sensing=sensing
    )
    try:
        assert d.ingest.connected.wait(10)
        sn.start()
        sn.wait_connected(10)
        wait_for(lambda: d.pipeline.clocks.get(NODE, sn.boot).synced, "the node synced")

        def stimuli():
            # one call on the node's thread: the times are relative to one instant of the
            # simulated clock, which cannot move between them however late this test runs
            t = sn.strike(2600)
            sn.strike(2000, at_us=t + 9_000)  # 9 ms after the first: its ringing
            sn.rail("LF", 900, at_us=t + 400_000)
            sn.strike(150, at_us=t + 700_000)  # under the threshold: bar noise

        sn.call(stimuli)
        wait_for(lambda: d.stats()["events"] >= 2, "two events")
        sn.wait_idle(10)
        # the bar noise, 700 ms in, is the last edge: once the node has counted it, it has
        # sensed the others (waited for: a starved simulation runs late)
        wait_for(lambda: sn.counters().get("strike_below", 0) >= 1, lambda: str(sn.counters()))
        c = sn.counters()
        assert c["strikes"] == 1 and c["strike_suppressed"] == 1 and c["strike_below"] == 1

        def rows():
            return d.journal.db.execute(
                "SELECT kind, amp FROM events WHERE node = ? ORDER BY t_node", (NODE,)
            ).fetchall()

        wait_for(lambda: len(rows()) >= 2, "two events journalled")
        assert rows() == [("strike", 2600), ("rail", 900)]
        s = d.stats()
        assert s["rejected"] == 0 and s["unknown_kind_events"] == 0
        assert births and {"strike", "wm"} <= set(births[-1]["caps"])
    finally:
        sn.stop()
        d.stop()
        sub.loop_stop()
        sub.disconnect()
