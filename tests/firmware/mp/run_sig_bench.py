# Real MicroPython: the time and heap of one signature check, RSA-3072 (rbproto.signing, what
# the node runs) against pure-Python Ed25519 (ed25519_ref.py), on the vectors of
# sig_bench.json (written by tools/bench_signing.py, `make bench-sign`). argv/MODE:
#   all           every figure: "SIG <scheme> ok us=<mean of N> alloc=<bytes per check>"
#   <scheme>      one check only, then "SIG-DONE" (the unix port's heap bisection)
#   none          load everything, check nothing (its baseline)
import binascii
import gc
import json
import sys
import time

import ed25519_ref

from rbproto import signing

V = None
for d in sys.path:
    try:
        with open(d + "/sig_bench.json") as f:
            V = json.load(f)
        break
    except OSError:
        pass
MODE = V["mode"] if len(sys.argv) < 2 else sys.argv[1]
RSA_KEY = signing.public_key(V["rsa"]["key"])
RSA_ST = V["rsa"]["statement"].encode()
RSA_SIG = V["rsa"]["sig"]
ED_PUB = binascii.unhexlify(V["ed25519"]["pub"])
ED_MSG = V["ed25519"]["statement"].encode()
ED_SIG = binascii.unhexlify(V["ed25519"]["sig"])
ed25519_ref._k512()
ed25519_ref._base()  # constants made once, as a node would at import


def rsa():
    return signing.verify(RSA_KEY, RSA_ST, RSA_SIG)


def ed():
    return ed25519_ref.verify(ED_PUB, ED_MSG, ED_SIG)


SCHEMES = (("rsa3072", rsa), ("ed25519", ed))
gc.collect()
if MODE == "all":
    n = V["n"]
    for name, f in SCHEMES:
        assert f(), name
        gc.collect()
        gc.disable()
        a0 = gc.mem_alloc()
        f()
        alloc = gc.mem_alloc() - a0
        gc.enable()
        gc.collect()
        t0 = time.ticks_us()
        for _ in range(n):
            f()
        us = time.ticks_diff(time.ticks_us(), t0) // n
        print("SIG %s ok us=%d alloc=%d" % (name, us, alloc))
elif MODE != "none":
    for name, f in SCHEMES:
        if name == MODE:
            assert f(), name
print("SIG-DONE")
