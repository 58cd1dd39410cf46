# Real MicroPython: the node's asyncio tasks run (sensor, publisher, status, sync, net,
# MQTT reconnect loop, supervisor) on simulated hardware; no broker is reachable (the
# WebAssembly port has no sockets), so the client keeps retrying with backoff while the
# sensing path queues events. Run by test_node_micropython.py with tests/harness/mp_run.mjs
# (in steps).
import asyncio

from rbnode import node as rbnode_node
from rbnode.hw.sim import SimHardware

hw = SimHardware(seed=3)
dev = {
    "venue": "club",
    "table": "t1",
    "node": "n1",
    "sensing": SENSING,
    "broker": {"host": "127.0.0.1", "port": 1, "backoff_max_ms": 200},
}
n = rbnode_node.Node(hw, dev)
n.mqtt.backoff_max_ms = 200


async def drive():
    # simulated time follows the loop: 2 ms per step, sensors polled by the node's task
    while not n._stopping:
        hw.advance(2000)
        await asyncio.sleep_ms(1)


for i in range(12):
    hw.schedule_rail(i % 6, 5000 + i * 20000, 400 + i)
hw.schedule_drop(0, 7000, 30000)
tasks = [asyncio.create_task(c) for c in n.tasks()]
tasks.append(asyncio.create_task(drive()))
# --step-- wait=1500
c = n.counters()
print(
    "MP-NODE events",
    c["events"],
    "queue",
    len(n.ring),
    "conn_fail",
    n.mqtt.counters["conn_fail"],
    "feeds",
    n.sup.feeds,
    "stalled",
    n.sup.stalled,
)
print("MP-NODE last_error", n.mqtt.last_error)
st = n.status_msg()
from rbproto import codec

codec.encode("status", st)
n.stop()
print("MP-NODE-OK")
