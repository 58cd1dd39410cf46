# Spill and boot counter in real MicroPython (its in-memory FS stands in for littlefs).
from rbnode.bootcount import boot_count
from rbnode.hw.sim import SimHardware
from rbnode.spill import Spill

hw = SimHardware(seed=9)
root = hw.fs_root()
s = Spill(root + "/spill", capacity=1000, seg_records=64)
i = 0
while i < 1100:
    s.append(4, i, (1 << 40) + i, 3, 65, i & 4095)
    i += 1
assert s.dropped == 100 and len(s) == 1000
s.consume(200)
s.close()
s = Spill(root + "/spill", capacity=1000, seg_records=64)
assert len(s) == 800, len(s)
got = s.peek(1000)
assert [r[1] for r in got] == list(range(200, 1000))
assert got[0] == (4, 200, (1 << 40) + 200, 3, 65, 200)
b1 = boot_count(hw)
assert boot_count(hw) == b1
b2 = boot_count(SimHardware(seed=9, fs_root=root))
assert b2 == b1 + 1, (b1, b2)
print("SPILL OK boot", b1, b2)
