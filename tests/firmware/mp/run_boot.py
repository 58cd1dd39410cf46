# Real MicroPython: firmware/boot.py itself (not a copy of its logic) picks the set. Run by
# test_ota.py with tests/harness/mp_run.mjs, firmware/ as the first path (so /lib-0/boot.py);
# the file system root "/" stands for the board's flash. Prints one "BOOT ..." line per check.
import json
import os
import sys

from rbnode import ota
from rbnode.hw.storage import FileStorage

st = FileStorage("")
with open("/lib-0/boot.py") as f:
    BOOT = f.read()
PATH = list(sys.path)


def put(path, data):
    parts = path.split("/")
    d = ""
    for p in parts[1:-1]:
        d = d + "/" + p
        try:
            os.stat(d)
        except OSError:
            os.mkdir(d)
    with open(path, "wb") as f:
        f.write(data)


def make_slot(slot, version, files):
    entries = []
    for p, data in files.items():
        put("/fw/%s/%s" % (slot, p), data)
        entries.append({"path": p, "size": len(data), "sha256": ota.sha256_hex(data)})
    man = json.dumps({"version": version, "files": entries}).encode()
    put("/fw/%s/manifest.json" % slot, man)


def boot():
    """A reset: the flashed set's modules are what boot.py starts from."""
    sys.path[:] = PATH
    for name in list(sys.modules):
        if name.split(".")[0] in ("rbnode", "rbproto", "fwprobe"):
            del sys.modules[name]
    try:
        exec(BOOT, {"__name__": "__main__"})
    except SystemExit as e:  # the chip's reset (rbnode.hw.sim.SimChip off the board)
        print("BOOT reset", e)


# 1. a set on trial in slot a: boot.py puts it first and counts the boot
make_slot("a", "v-a", {"fwprobe.py": b"WHO = 'slot a'\n"})
s = ota.read_state(st)
s["try"] = {"slot": "a", "id": "u1", "version": "v-a", "boots": 0, "max": 3, "trial_s": 60}
ota.write_state(st, s)
boot()
import fwprobe

print("BOOT trial", fwprobe.WHO, sys.path[0], ota.read_state(st)["try"]["boots"])
ota.commit(st)
# 2. a set on trial whose rbnode does not import: rolled back at once (no REPL hang)
make_slot("b", "v-b", {"rbnode/__init__.py": b"raise ImportError('broken set')\n"})
s = ota.read_state(st)
s["try"] = {"slot": "b", "id": "u2", "version": "v-b", "boots": 0, "max": 3, "trial_s": 60}
ota.write_state(st, s)
boot()  # boot.py resets the board at once (here: SystemExit from the chip's reset)
s = ota.read_state(st)
print("BOOT broken", s["try"], s["cur"], s["last"]["state"], s["last"]["error"])
# 3. the next boot runs the confirmed set a
boot()
import fwprobe

print("BOOT after", fwprobe.WHO, sys.path[0], ota.read_state(st)["run"])
