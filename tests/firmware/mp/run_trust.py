# Real MicroPython: rbnode.trust and rbproto.signing decide on the commands of
# trust_vectors.json (written by tests/firmware/test_ota_signed.py with the host's real
# signatures). Prints "TRUST <name> <verdict>" per vector (verdict "ok" or the refusal),
# then "TRUST-TIME us=<one verify> alloc=<bytes>" and "TRUST-ALL-OK".
import gc
import json
import sys
import time

from rbnode.trust import Trust
from rbproto import signing

V = None
for d in sys.path:  # mp_run.mjs puts each --path directory on sys.path
    try:
        with open(d + "/trust_vectors.json") as f:
            V = json.load(f)
        break
    except OSError:
        pass
for v in V["vectors"]:
    t = Trust(v["dev"])
    if v["kind"] == "update":
        why = t.update(v["msg"], v["retained"], v["boot"], v["running"])
    else:
        why = t.config(v["msg"], v["retained"])
    print("TRUST", v["name"], "ok" if why is None else why)

# one verification, timed, and the heap it takes (gc off: everything it allocates)
key = signing.public_key(V["time"]["key"])
st = V["time"]["statement"].encode()
sig = V["time"]["sig"]
gc.collect()
gc.disable()
a0 = gc.mem_alloc()
t0 = time.ticks_us()
ok = signing.verify(key, st, sig)
us = time.ticks_diff(time.ticks_us(), t0)
alloc = gc.mem_alloc() - a0
gc.enable()
assert ok
print("TRUST-TIME us=%d alloc=%d" % (us, alloc))
print("TRUST-ALL-OK")
