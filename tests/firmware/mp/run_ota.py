# Real MicroPython: every scenario of ota_scenarios.py (the over-the-air state machine on the
# simulated flash with power cuts). Run by test_ota.py with tests/harness/mp_run.mjs; prints
# "OTA <name> ok <detail>" per scenario and "OTA-ALL-OK" at the end.
import os

import ota_scenarios as sc

BASE = "/ota-mp"
os.mkdir(BASE)
for name in sc.SCENARIOS:
    d = BASE + "/" + name
    os.mkdir(d)
    print("OTA", name, "ok", getattr(sc, name)(d))
for name, history, finish in sc.CUTS:
    d = BASE + "/" + name
    os.mkdir(d)
    print("OTA", name, "ok", sc.power_cuts(d, history, finish))
print("OTA-ALL-OK")
