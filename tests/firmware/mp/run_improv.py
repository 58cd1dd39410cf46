# Real MicroPython: rbnode.improv's packets and session, rbnode.netcfg's trial and revert on
# the simulated hardware (tests/firmware/test_node_net.py runs it).
from rbnode import improv, netcfg
from rbnode.hw.sim import SimHardware

got = []
s = improv.Session(("rbnode", "rbnode-0.1.0", "sim", "n1"), lambda a, b: got.append((a, b)))
st = improv.packet(3, bytes((2, 0)))
out = s.feed(b"noise" + st[:4])
out += s.feed(st[4:])
print("MP-IMPROV-STATE", list(out))
w = improv.packet(3, bytes((1, 9, 3)) + b"abc" + bytes((4,)) + b"pass")
print("MP-IMPROV-WIFI", got == [], list(s.feed(w)), got)
bad = bytearray(st)
bad[-1] ^= 1
print("MP-IMPROV-BAD", list(s.feed(bytes(bad))))
print("MP-IMPROV-RESULT", list(s.result(True)))

hw = SimHardware(seed=3)
n = netcfg.Net(hw, {"wifi": {"ssid": "a", "password": "p"}, "broker": {"host": "h", "port": 1}})
print("MP-NET-BEGIN", n.begin({"id": "x", "broker": {"host": "h2", "port": 2}, "trial_s": 10}, 0))
print("MP-NET-EARLY", n.tick(9000000))
print("MP-NET-TICK", n.tick(10000000), n.cur["host"], n.report["state"])
n2 = netcfg.Net(hw, {"wifi": {"ssid": "a", "password": "p"}, "broker": {"host": "h", "port": 1}})
print("MP-NET-LOADED", n2.report["state"], n2.cur["host"])
print("MP-IMPROV-OK")
