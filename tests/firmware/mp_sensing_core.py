# Runs in real MicroPython (WebAssembly port): clock, ring, beam, rail on simulated hardware.
from rbnode import ring as R
from rbnode.beam import Beam
from rbnode.clock import Clock
from rbnode.hw import hal
from rbnode.hw.sim import SimHardware
from rbnode.rail import Rail

PERIOD = 1 << 30
HALF = PERIOD >> 1


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def t_clock():
    # Pseudo-random spacings below half the period, start just before a wrap.
    state = [12345]

    def rnd(n):
        x = state[0]
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        state[0] = x
        return x % n

    true = [0]
    start = PERIOD - 777

    def ticks():
        return (start + true[0]) & (PERIOD - 1)

    c = Clock(ticks, hal.ticks_diff)
    k = 0
    while k < 3000:
        true[0] += rnd(HALF)
        check(c.now() == true[0], "now")
        age = rnd(HALF)
        if age > true[0]:
            age = true[0]
        check(c.extend((start + true[0] - age) & (PERIOD - 1)) == true[0] - age, "extend")
        k += 1
    wraps = true[0] // PERIOD
    check(wraps > 500, "wraps")
    # Same ticks arithmetic as the C time.ticks_diff of this port.
    import time

    check(time.ticks_diff(5, time.ticks_add(0, -5)) == 10, "port ticks_diff")
    print("PASS clock wraps=%d" % wraps)


def t_ring():
    r = R.EventRing(512, seq0=40)
    big = (1 << 63) + 12345
    check(r.push(big, R.K_DROP, 3, 30000) == 40, "seq0")
    check(r.get(0) == (40, big, R.K_DROP, 3, 30000), "t64")
    n = 1
    while n < 512:
        r.push(n, R.K_RAIL, R.RAIL | 1, n & 4095)
        n += 1
    check(r.push(1, 1, 1, 1) == -1 and r.dropped == 1, "overflow")
    check(r.pop(100) == 100 and len(r) == 412, "pop")
    check(r.peek()[0] == 140, "seq after pop")
    check(r.push(7, R.K_JAM, 0, 2000000) == 552, "seq continues")
    print("PASS ring")


def rig(**kw):
    hw = SimHardware(**kw)
    clk = Clock(hw.ticks_us, hw.ticks_diff)
    ring = R.EventRing(1024)
    beams = [Beam(hw, clk, ring.push, c) for c in range(6)]
    beams.append(Beam(hw, clk, ring.push, 0, kind="cue"))
    rails = [Rail(hw, clk, ring.push, c, threshold=300, refractory_us=40000) for c in range(6)]
    return hw, ring, beams, rails


def run(hw, chans, us, step=1000):
    end = hw.now_us + us
    while hw.now_us < end:
        hw.advance(step)
        for c in chans:
            c.poll()


def evs(ring, kind=None):
    out = []
    i = 0
    while i < len(ring):
        e = ring.get(i)
        if kind is None or e[2] == kind:
            out.append(e)
        i += 1
    return out


def t_beam():
    hw, ring, beams, _rails = rig(
        seed=5, irq_delay_us=100, irq_jitter_us=500, start_ticks=PERIOD - 60000
    )
    hw.schedule_drop(0, 50000, 26000)  # two balls 30 ms apart (4 ms gap)
    hw.schedule_drop(0, 80000, 26000)
    t = hw.schedule_bounce("beam", 1, 50000, 3, 200, 600)  # chatter + ball + chatter
    hw.schedule_drop(1, t, 30000)
    hw.schedule_bounce("beam", 1, t + 30600, 3, 200, 600)
    hw.schedule_bounce("beam", 2, 50000, 1, 1500, 0)  # glitch
    hw.schedule_drop(3, 50000, 3000000)  # jam
    hw.schedule_cue(300000, 50000)
    run(hw, beams, 4000000, 2000)
    drops = evs(ring, R.K_DROP)
    chs = [e[3] for e in drops]
    check(chs.count(0) == 2, "30 ms apart -> two drops: %r" % drops)
    check(chs.count(1) == 1, "bounce merged")
    check(chs.count(2) == 0 and beams[2].glitches == 1, "glitch filtered")
    check(chs.count(3) == 1 and len(evs(ring, R.K_JAM)) == 1, "jam once")
    check(len(evs(ring, R.K_CUE)) == 1, "cue")
    print("PASS beam debounce/jam/cue")
    hw, ring, beams, _rails = rig(irq_delay_us=50)
    hw.busy(250000)
    c = 0
    while c < 6:
        hw.schedule_drop(c, 10000 + c * 1000, 30000)
        c += 1
    run(hw, beams, 1000000)
    lost = 0
    for e in evs(ring, R.K_LOST):
        lost += e[4]
    check(hw.irq_overflow >= 4 and lost == hw.irq_overflow, "lost %d %d" % (lost, hw.irq_overflow))
    print("PASS beam lost=%d" % lost)


def t_rail():
    hw, ring, _beams, rails = rig(irq_delay_us=30)
    hw.schedule_rail(0, 10000, 299)
    hw.schedule_rail(0, 100000, 3000)
    hw.schedule_rail(0, 120000, 2000)
    hw.schedule_rail(0, 141000, 800)
    run(hw, rails, 300000)
    got = [(e[1], e[3], e[4]) for e in evs(ring, R.K_RAIL)]
    check(got == [(100030, R.RAIL, 3000), (141030, R.RAIL, 800)], "rail %r" % got)
    rails[0].configure(threshold=100, refractory_us=1000)
    hw.schedule_rail(0, 400000, 150)
    run(hw, rails, 200000)
    check(len(evs(ring, R.K_RAIL)) == 3, "configure")
    print("PASS rail")


t_clock()
t_ring()
t_beam()
t_rail()
print("ALL OK")
