# Runs in real MicroPython: heap used by the sensing buffers, and the IRQ path under
# micropython.heap_lock() (allocation raises MemoryError there).
import gc
import micropython

from rbnode import ring as R
from rbnode.beam import Beam
from rbnode.clock import Clock
from rbnode.hw.sim import SimHardware
from rbnode.rail import Rail

hw = SimHardware(irq_delay_us=10, start_ticks=(1 << 30) - 5)
hw.advance(100)  # ticks wrapped: ticks_us() is a small int near 0
gc.collect()
a0 = gc.mem_alloc()
clk = Clock(hw.ticks_us, hw.ticks_diff)
ring = R.EventRing(512)
gc.collect()
a1 = gc.mem_alloc()
beams = [Beam(hw, clk, ring.push, c) for c in range(6)]
beams.append(Beam(hw, clk, ring.push, 0, kind="cue"))
rails = [Rail(hw, clk, ring.push, c) for c in range(6)]
gc.collect()
a2 = gc.mem_alloc()
print("HEAP ring512=%d channels13=%d total=%d" % (a1 - a0, a2 - a1, a2 - a0))

# --- IRQ path under heap lock ---
bpin = hw.pin("beam", 0)
rpin = hw.pin("rail", 0)
b_irq = beams[0]._irq
c_irq = beams[6]._irq
r_irq = rails[0]._irq
probe = beams[0]._lost._bar._cb
n = 0
err = "none"
micropython.heap_lock()
try:
    while n < 40:  # 40 > ring sizes: exercises the "ring full" path too
        bpin._level = n & 1
        b_irq(bpin)
        c_irq(bpin)
        r_irq(rpin)
        n += 1
    probe(0)
except MemoryError:
    err = "MemoryError"
micropython.heap_unlock()
print(
    "LOCKED irq_calls=%d beam_ovf=%d rail_ovf=%d err=%s"
    % (beams[0].irq_calls, beams[0].ring_overflow, rails[0].ring_overflow, err)
)

# --- control: an allocating call does raise under the same lock ---
ctl = "no error"
micropython.heap_lock()
try:
    x = bytearray(64)
    ctl = "allocated %d" % len(x)
except MemoryError:
    ctl = "MemoryError"
micropython.heap_unlock()
print("CONTROL %s" % ctl)

# the edges stored under the lock are processed normally afterwards
hw.advance(10000)
beams[0].poll()
rails[0].poll()
print("AFTER events=%d" % len(ring))
