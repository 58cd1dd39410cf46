"""A node's messages published straight from the test (paho, the node's own login), with
the boot, seq and t the test chooses: what a node with a broken boot counter or a strange
clock would send, which the simulated firmware never does."""

from __future__ import annotations

import json

from harness.mqttsub import client
from rbproto import codec


class NodePub:
    def __init__(self, port: int, node: str, password: str, venue="club", table="t1"):
        self.node, self.venue, self.table = node, venue, table
        self.c = client(port, node, password)

    def raw(self, kind: str, body: dict, timeout: float = 5) -> None:
        """Publish `body` without the codec's checks (numbers it would refuse go out too)."""
        payload = json.dumps(body, separators=(",", ":"))
        info = self.c.publish(codec.topic(self.venue, self.table, kind, self.node), payload, qos=1)
        info.wait_for_publish(timeout)

    def events(self, boot: int, events: list) -> None:
        self.raw("events", {"v": 1, "node": self.node, "boot": boot, "events": events})

    def close(self) -> None:
        self.c.disconnect()
        self.c.loop_stop()


def shot_events(first_seq: int, t0: int, shots: int, spacing_us: int = 1_000_000) -> list:
    """`shots` shots of a rail hit and a drop 200 ms later, one second apart: 2 events each."""
    out = []
    pockets = ("FR", "SL", "HL", "SR", "HR", "FL")
    for i in range(shots):
        t = t0 + i * spacing_us
        out.append({"seq": first_seq + 2 * i, "t": t, "kind": "rail", "rail": "F", "amp": 900})
        out.append(
            {
                "seq": first_seq + 2 * i + 1,
                "t": t + 200_000,
                "kind": "drop",
                "pocket": pockets[i % 6],
                "dur": 30_000,
            }
        )
    return out
