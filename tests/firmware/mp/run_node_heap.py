# Real MicroPython: heap of the node after start-up with all buffers allocated (sim
# hardware, no networking). Run by test_node_heap.py with tests/harness/mp_run.mjs (in
# steps); `SENSING` (the sensing section of firmware/config.json) is prepended by the test.
import gc
import micropython

gc.collect()
# --step--
gc.collect()
base = gc.mem_alloc()
# --step--
from rbnode import node as rbnode_node
from rbnode.hw.sim import SimHardware
from rbproto import codec

# --step--
gc.collect()
mods = gc.mem_alloc()
# --step--
hw = SimHardware(seed=7)
# --step--
gc.collect()
hwb = gc.mem_alloc()
# --step--
n = rbnode_node.Node(hw, {"venue": "club", "table": "t1", "node": "n1", "sensing": SENSING})
# exercise the paths that allocate their working buffers: sensing, a full batch, status
for i in range(60):
    hw.schedule_rail(i % 6, hw.now_us + 1000 + i * 30000, 500 + i)
for i in range(6):
    hw.schedule_drop(i, hw.now_us + 2000 + i * 50000, 30000)
for _k in range(1000):
    hw.advance(2000)
    n.poll_sensors()
q = len(n.ring)
boot, evs, k, src = n._take_batch(32)
payload = codec.encode("events", {"v": 1, "node": "n1", "boot": boot, "events": evs})
st = codec.encode("status", n.status_msg())
bi = codec.encode("birth", n.birth_msg())
evs = None
boot = k = src = None
# --step--
gc.collect()
after = gc.mem_alloc()
print("HEAP-MODULES", mods - base)
print("HEAP-SIMHW", hwb - mods)
print("HEAP-NODE", after - hwb)
print("HEAP-TOTAL", after - base)
print("QUEUED", q, "BATCH-BYTES", len(payload), "STATUS-BYTES", len(st))
micropython.mem_info()
