# The strike sensor and the batch watermark on simulated hardware, with the real node code.
# Runs in real MicroPython (WebAssembly port) and in CPython (test_strike_wm.py runs both):
# strike events with threshold and refractory, a comparator-only input, the IRQ path under
# heap_lock (MicroPython), the config checks, birth caps, and `wm` while a beam is blocked,
# with a spill, and over a seeded random game (never above an event sent later, never
# decreasing).
import json

from rbnode import config as rbconfig, ring as R
from rbnode.clock import Clock
from rbnode.hw.sim import SimHardware
from rbnode.node import Node
from rbnode.rail import Strike
from rbproto import codec

SENSING = {
    "v": 1,
    "rev": 1,
    "pockets": [{"ch": i, "pocket": codec.POCKETS[i]} for i in range(6)],
    "rails": [
        {"ch": i, "rail": codec.RAILS[i], "threshold": 200, "refractory_us": 50000}
        for i in range(6)
    ],
    "cue_ch": 6,
    "strike": {"ch": 6, "threshold": 300, "refractory_us": 40000},
    "batch_max": 32,
}


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def ring_events(ring):
    return [ring.get(i) for i in range(len(ring))]


def t_strike_channel():
    hw = SimHardware(seed=2, irq_delay_us=25)
    clk = Clock(hw.ticks_us, hw.ticks_diff)
    ring = R.EventRing(64)
    s = Strike(hw, clk, ring.push, "strike", 0, threshold=300, refractory_us=40000)
    hw.schedule_strike(0, 10000, 2500)  # the tip on the cue ball
    hw.schedule_strike(0, 30000, 1800)  # 20 ms later: the same stroke ringing
    hw.schedule_strike(0, 200000, 250)  # below the threshold: bar noise through the slate
    hw.schedule_strike(0, 400000, 900)  # the next stroke
    end = 600000
    while hw.now_us < end:
        hw.advance(1000)
        s.poll()
    got = [(e[1], e[2], e[3], e[4]) for e in ring_events(ring)]
    want = [(10025, R.K_STRIKE, R.CH_STRIKE, 2500), (400025, R.K_STRIKE, R.CH_STRIKE, 900)]
    check(got == want, "strike events %r" % (got,))
    check(s.suppressed == 1 and s.below == 1 and s.events == 2, "strike counters")
    # a comparator-only input: every edge outside the refractory time, no amplitude
    hw2 = SimHardware(seed=2, irq_delay_us=25, strike_adc=False)
    clk2 = Clock(hw2.ticks_us, hw2.ticks_diff)
    ring2 = R.EventRing(64)
    s2 = Strike(hw2, clk2, ring2.push, "strike", 0, threshold=300, refractory_us=40000)
    hw2.schedule_strike(0, 10000, 0)
    hw2.schedule_strike(0, 20000, 0)
    hw2.schedule_strike(0, 90000, 0)
    while hw2.now_us < 200000:
        hw2.advance(1000)
        s2.poll()
    got = [(e[1], e[4]) for e in ring_events(ring2)]
    check(got == [(10025, R.NO_AMP), (90025, R.NO_AMP)], "comparator-only %r" % (got,))
    print("PASS strike channel")


def t_irq_heap_lock():
    try:
        import micropython
    except ImportError:
        print("SKIP heap lock (CPython)")
        return
    hw = SimHardware(seed=4, irq_delay_us=10)
    clk = Clock(hw.ticks_us, hw.ticks_diff)
    ring = R.EventRing(16)
    s = Strike(hw, clk, ring.push, "strike", 0)
    pin = hw.pin("strike", 0)
    err = "none"
    micropython.heap_lock()
    try:
        for _ in range(12):
            s._on_edge(pin)  # the handler as the port schedules it
    except MemoryError:
        err = "MemoryError"
    micropython.heap_unlock()
    check(err == "none", "strike IRQ handler allocated")
    check(s.irq_calls == 12 and s.ring_overflow == 4, "strike edge ring")
    print("PASS strike irq heap_lock")


def t_config():
    hw = SimHardware(seed=1)
    cfg = rbconfig.check(SENSING, hw)
    check(cfg["strike"] == {"ch": 6, "threshold": 300, "refractory_us": 40000}, "strike cfg")
    minimal = dict(SENSING, strike={"ch": 6})
    cfg = rbconfig.check(minimal, hw)
    check(cfg["strike"]["refractory_us"] == 30000 and cfg["strike"]["threshold"] == 0, "defaults")
    refused = []
    for st in ({"ch": 2}, {"ch": 7}, {"ch": 6, "threshold": 5000}):
        try:
            rbconfig.check(dict(SENSING, strike=st), hw)
        except rbconfig.ConfigError as e:
            refused.append(e.reason)
    check(len(refused) == 3, "refusals %r" % (refused,))
    check("strike.ch: channel 2 is also rail LH" in refused[0], refused[0])
    check("strike.ch: channel 7 not in pin map sim" in refused[1], refused[1])
    check("strike.threshold" in refused[2], refused[2])
    # on a rail input that no rail uses: allowed
    five = dict(SENSING, rails=SENSING["rails"][:5], strike={"ch": 5})
    check(rbconfig.check(five, hw)["strike"]["ch"] == 5, "strike on a free rail input")
    # no strike: the hash a config had before strike existed
    plain = dict(SENSING)
    del plain["strike"]
    h0 = rbconfig.config_hash(rbconfig.check(plain, hw))
    check(h0 == rbconfig.config_hash(rbconfig.check(dict(plain, strike=None), hw)), "hash")
    check(h0 != rbconfig.config_hash(rbconfig.check(SENSING, hw)), "hash covers strike")
    print("PASS config")


def make_node(seed, sensing=SENSING, spill=0, irq_delay_us=30):
    hw = SimHardware(seed=seed, irq_delay_us=irq_delay_us)
    dev = {
        "venue": "club",
        "table": "t1",
        "node": "n1",
        "sensing": sensing,
        "spill": spill,
        "broker": {"host": "127.0.0.1", "port": 1},
        "wdt": False,
    }
    return hw, Node(hw, dev)


def run(hw, n, us, step=1000):
    end = hw.now_us + us
    while hw.now_us < end:
        hw.advance(step)
        n.poll_sensors()


def batch(n):
    b = n.next_batch()
    if b is None:
        return None
    return json.loads(b[0])


def drain(n):
    # every batch the node has ready, in publish order: ([wm], [[event t]])
    wms = []
    ts = []
    while True:
        m = batch(n)
        if m is None:
            return wms, ts
        wms.append(m["wm"])
        ts.append([e["t"] for e in m["events"]])


def t_node_strike_and_caps():
    hw, n = make_node(5)
    caps = n.birth_msg()["caps"]
    check("strike" in caps and "wm" in caps, "caps %r" % (caps,))
    hw.schedule_strike(0, 10000, 3000)
    hw.schedule_strike(0, 20000, 3000)  # ringing
    run(hw, n, 100000)
    m = batch(n)
    ev = m["events"]
    check(len(ev) == 1 and ev[0]["kind"] == "strike" and ev[0]["amp"] == 3000, "%r" % (ev,))
    codec.validate("events", m)
    check(n.counters()["strikes"] == 1 and n.counters()["strike_suppressed"] == 1, "counters")
    # a refused config keeps the old one and says why
    n._on_config(json.dumps(dict(SENSING, rev=2, strike={"ch": 0})).encode())
    check(n.config_error is not None and "strike.ch" in n.config_error, n.config_error)
    check(n.cfg["rev"] == 1 and n._strike is not None, "old config kept")
    n.stop()
    _hw2, n2 = make_node(6, sensing=dict(SENSING, strike=None))
    caps = n2.birth_msg()["caps"]
    check("strike" not in caps and "wm" in caps, "caps without strike %r" % (caps,))
    n2.stop()
    print("PASS node strike and caps")


def t_wm_blocked_beam():
    hw, n = make_node(7)
    hw.schedule_drop(0, 100000, 40000)  # blocked 100..140 ms, its drop sent when it clears
    hw.schedule_rail(2, 110000, 900)  # a rail hit while the beam is blocked
    run(hw, n, 125000)
    m = batch(n)
    check([e["kind"] for e in m["events"]] == ["rail"], "rail first %r" % (m,))
    wm1 = m["wm"]
    check(wm1 <= 100030, "wm %d not below the blocked-since time" % wm1)
    run(hw, n, 100000)  # the beam cleared at 140 ms: the drop is in the ring
    m = batch(n)
    drop = m["events"][0]
    check(drop["kind"] == "drop" and drop["t"] == 100030, "drop %r" % (m,))
    check(drop["t"] >= wm1, "a drop sent after wm %d is stamped before it" % wm1)
    wm2 = m["wm"]
    check(wm2 > drop["t"] and wm2 >= wm1, "wm rose after the drop went: %d" % wm2)
    check(wm2 <= n.clock.now(), "wm beyond the node's time")
    n.stop()
    print("PASS wm blocked beam %d %d" % (wm1, wm2))


def t_wm_spill():
    sensing = dict(SENSING, batch_max=2)
    hw, n = make_node(8, sensing=sensing, spill=64)
    for i in range(5):
        hw.schedule_rail(i, 10000 + i * 10000, 500 + i)
    run(hw, n, 80000)
    n._spill_some(10)  # offline: the ring went to flash
    hw.schedule_rail(5, 90000, 700)
    run(hw, n, 20000)
    wms, sent = drain(n)
    check([len(b) for b in sent] == [2, 2, 1, 1], "batches %r" % (sent,))
    for i in range(len(sent)):
        later = [t for b in sent[i + 1 :] for t in b]
        check(not later or min(later) >= wms[i], "wm %d above an event sent later" % wms[i])
        check(i == 0 or wms[i] >= wms[i - 1], "wm decreased")
    check(wms[-1] > max(sent[-1]), "wm rises once all is sent")
    n.stop()
    print("PASS wm spill %r" % (wms,))


def t_wm_backlog():
    # a backlog longer than WM_SCAN after the batch holds the watermark until it drains
    hw, n = make_node(9)
    for i in range(110):
        hw.schedule_rail(i % 6, 10000 + i * 10000, 500)  # 60 ms apart per rail
    hw.schedule_drop(1, 100000, 40000)
    run(hw, n, 1300000)
    wms, ts = drain(n)
    # 111 events: 79 left after the first batch (held), 47 after the second (scanned)
    check(
        len(wms) == 4 and wms[0] == 0 and wms[1] > 0, "held while the backlog is long %r" % (wms,)
    )
    for i in range(3):
        later = [t for b in ts[i + 1 :] for t in b]
        check(wms[i] <= min(later) and wms[i] <= wms[i + 1], "wm %r above %d" % (wms, min(later)))
    check(wms[3] > max(ts[3]), "then rises %r" % (wms,))
    n.stop()
    print("PASS wm backlog %r" % (wms,))


def t_wm_random(seed):
    hw, n = make_node(seed, sensing=dict(SENSING, batch_max=3), spill=256)
    hw.schedule_random(5000, 3000000, drops=25, rails=60, min_gap_us=60000)
    for i in range(12):
        hw.schedule_strike(0, 20000 + i * 240000, 400 + 100 * i)
    sent = []  # (wm, [t]) in publish order
    step = 0
    while hw.now_us < 3300000:
        run(hw, n, 1000 + (hw.rand32() % 7) * 1000)
        step += 1
        if hw.rand32() % 11 == 0:
            n._spill_some(hw.rand32() % 6)  # offline for a moment: some of the ring to flash
        if hw.rand32() % 3 == 0:
            m = batch(n)
            if m is not None:
                sent.append((m["wm"], [e["t"] for e in m["events"]]))
    while True:
        run(hw, n, 5000)
        m = batch(n)
        if m is None and not len(n.ring) and not len(n.spill):
            break
        if m is not None:
            sent.append((m["wm"], [e["t"] for e in m["events"]]))
    low = None  # the lowest event time sent from here on, walking backwards
    for i in range(len(sent) - 1, -1, -1):
        wm, ts = sent[i]
        if low is not None and wm > low:
            raise AssertionError("batch %d: wm %d above a later event %d" % (i, wm, low))
        check(i == 0 or sent[i - 1][0] <= wm, "wm decreased at batch %d" % i)
        for t in ts:
            if low is None or t < low:
                low = t
    total = sum(len(ts) for _, ts in sent)
    check(total == n.c["events"], "all sent: %d of %d" % (total, n.c["events"]))
    n.stop()
    return len(sent), total


t_strike_channel()
t_irq_heap_lock()
t_config()
t_node_strike_and_caps()
t_wm_blocked_beam()
t_wm_spill()
t_wm_backlog()
for seed in (11, 12, 13):
    b, e = t_wm_random(seed)
    print("PASS wm random seed %d: %d batches, %d events" % (seed, b, e))
print("ALL OK")
