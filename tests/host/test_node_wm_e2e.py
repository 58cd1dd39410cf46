"""End to end through a private mosquitto: the simulated node firmware states its watermark
(`wm`) in every batch and `railbird`'s daemon releases a one-node table's drop on it,
without the reorder window (docs/shots.md "Release").

The window is set to 20 s so that the assertion is about the mechanism, not about speed:
without the node's watermark nothing could be released before table time passed the drop by
20 s, and the test gives up after 10 s.
"""

import pytest

from harness.waiting import poll
from railbird.config import from_dict
from railbird.daemon.worker import Daemon
from rbnode.simnode import SimNode

pytestmark = pytest.mark.broker
NODE, PW = "t1-node", "node-pw"
KEY = ("club", "t1")


def test_a_drop_is_released_by_the_nodes_watermark_not_the_window(broker, tmp_path):
    broker.add_user(NODE, PW)
    cfg = from_dict(
        {
            "venue": "club",
            "journal": str(tmp_path / "j.sqlite"),
            "reorder_window_ms": 20_000,
            "broker": {"port": broker.port, "password": "host-secret", "client_id": "h-wm"},
            "tables": {"t1": {"nodes": [NODE]}},
        }
    )
    d = Daemon(cfg).start()
    sn = SimNode("127.0.0.1", broker.port, "club", "t1", NODE, PW, tmp_path / "node", seed=5)
    try:
        assert d.ingest.connected.wait(10)
        sn.start()
        sn.wait_connected(10)
        # the host answers the node's time sync; the wm of an unsynced node releases nothing
        assert poll(lambda: d.pipeline.clocks.get(NODE, sn.boot).synced, 10)
        sn.drop("SL", 40_000)
        table = d.pipeline.tables[KEY]
        assert poll(lambda: table.timeline.counts["released"] >= 1, 10), d.stats()
        assert table.marks[NODE].wm is not None
        assert d.stats()["late"] == 0
    finally:
        sn.stop()
        d.stop()
