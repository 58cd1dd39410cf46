# Real MicroPython: the status LED's pattern logic (rbnode.led), its pin writes through the
# simulated hardware layer, and the node's own condition for Wi-Fi and broker down. Prints
# MP-LED lines that test_status_led.py compares with hardware/installation.md's table.
from rbnode import led, node as rbnode_node
from rbnode.hw.sim import SimHardware

SPAN = 2400  # ms: two periods of the longest pattern
for c in range(len(led.NAMES)):
    wins = []
    start = None
    for ms in range(SPAN):
        on = led.lit(c, ms)
        if on and start is None:
            start = ms
        elif not on and start is not None:
            wins.append([start, ms])
            start = None
    if start is not None:
        wins.append([start, SPAN])
    print("MP-LED", led.NAMES[c], wins)

hw = SimHardware(seed=1)
s = led.StatusLed(hw)
for ms in range(1000, 1400, led.LED_MS):
    hw.now_us = ms * 1000
    s.update(led.WIFI_DOWN, ms)
print("MP-LED-WRITES", [[t, 1 if on else 0] for t, on in hw.led])

order = []
for args in (
    (0, 0, 1, 1, 1),
    (1, 0, 1, 1, 1),
    (1, 1, 1, 1, 1),
    (1, 1, 0, 1, 1),
    (1, 1, 0, 0, 1),
    (1, 1, 0, 0, 0),
):
    order.append(led.NAMES[led.condition(*args)])
print("MP-LED-ORDER", order)

hw = SimHardware(seed=2)
hw.wlan().active(True)
n = rbnode_node.Node(
    hw,
    {
        "venue": "club",
        "table": "t1",
        "node": "t1-node",
        "wdt": False,
        "spill": 0,
        "broker": {"host": "127.0.0.1", "port": 1},
    },
)
seen = [led.NAMES[n.condition()]]
hw.net_up = False
seen.append(led.NAMES[n.condition()])
print("MP-LED-NODE", seen)
print("MP-LED-OK")
