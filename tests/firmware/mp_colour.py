# The colour station (rbnode.colour, hardware/colour.md) on simulated hardware, in real
# MicroPython and in CPython (test_colour.py runs it): a rack's 16 balls read as they roll
# past, the reads in the node's batches as `ball` events the codec accepts, birth caps
# `colour`, counters; two balls touching; the sensors unplugged (no reads, errors counted,
# the station named in sensing_dead).

import json
import sys

from rbnode.colour import ColourStation, classify
from rbnode.hw.sim import SimHardware
from rbnode.node import Node
from rbproto import codec

SENSING = {
    "v": 1,
    "rev": 1,
    "pockets": [{"ch": i, "pocket": codec.POCKETS[i]} for i in range(6)],
    "rails": [],
    "cue_ch": None,
    "batch_max": 32,
}
RACK = [3, 12, 0, 8, 1, 9, 15, 7, 2, 10, 4, 13, 5, 14, 6, 11]
if sys.implementation.name == "micropython":
    RACK = RACK[:8]  # the same checks on half a rack: the unix port's floats are slow


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def read_all(hw, st, us):
    end = hw.now_us + us
    while hw.now_us < end:
        hw.advance(2400)
        st.poll(hw.now_us)


def t_station_reads_a_rack():
    hw = SimHardware(seed=4, colour=3)
    got = []
    st = ColourStation(hw, lambda t, b, c: got.append((t, b, c)))
    read_all(hw, st, 50000)  # the ambient settles
    passes = hw.schedule_balls(hw.now_us + 10000, RACK, touching=(5, 7))
    read_all(hw, st, 250000 * len(RACK))
    check(len(got) == len(RACK), "a read per ball, got %r" % (got,))
    right = 0
    for i in range(len(RACK)):
        t0, ball = passes[i]
        t, b, c = got[i]
        check(abs(t - t0) <= 2400, "read at %d, pass at %d" % (t, t0))
        if c >= 60:
            check(b == ball, "ball %d read as %d at %d %%" % (ball, b, c))
            right += 1
    check(right >= len(RACK) - 1, "confident reads %d of %d" % (right, len(RACK)))
    check(st.reads == len(RACK) and st.errors == 0 and st.ok, "counters")
    print("PASS station rack %d of %d confident" % (right, len(RACK)))


def t_classify():
    check(classify([0] * 9, 0.0, 3) == (0, 0), "too few readings")
    v = [0.0] * 9
    v[3] = 30.0
    check(classify(v, 2.0, 32)[0] == 3, "solid red")
    check(classify(v, 12.0, 40)[0] == 11, "red stripe")
    check(classify([0.0] * 9, 39.0, 40)[0] == 0, "cue ball")
    v[8] = 25.0
    check(classify(v, 2.0, 57)[1] < 60, "two balls in one pass: not confident")
    print("PASS classify")


def t_node_sends_reads():
    hw = SimHardware(seed=5, colour=3)
    n = Node(
        hw,
        {
            "venue": "club",
            "table": "t1",
            "node": "n1",
            "sensing": SENSING,
            "spill": 0,
            "broker": {"host": "127.0.0.1", "port": 1},
            "wdt": False,
        },
    )
    check("colour" in n.birth_msg()["caps"], "caps %r" % (n.birth_msg()["caps"],))
    end = hw.now_us + 50000
    while hw.now_us < end:
        hw.advance(2400)
        n.poll_sensors()
    hw.schedule_balls(hw.now_us + 5000, [9, 0])
    end = hw.now_us + 600000
    while hw.now_us < end:
        hw.advance(2400)
        n.poll_sensors()
    b = n.next_batch()
    check(b is not None, "a batch")
    m = json.loads(b[0])
    codec.validate("events", m)
    ev = [(e["kind"], e["ball"]) for e in m["events"]]
    check(ev == [("ball", 9), ("ball", 0)], "%r" % (m["events"],))
    check(n.counters()["colour_reads"] == 2, "counter")
    # unplugged: nothing read, the failures counted, the station named as dead
    hw.colour_unplugged = True
    hw.schedule_balls(hw.now_us + 5000, [4])
    end = hw.now_us + 400000
    while hw.now_us < end:
        hw.advance(2400)
        n.poll_sensors()
    check(n.counters()["colour_reads"] == 2, "no read unplugged")
    check(n.counters()["colour_errors"] > 0 and "colour" in n.sensing_dead(), "dead")
    n.stop()
    print("PASS node colour events and caps")


def t_learn_colours():
    # a table's balls off the nominal colours: what the station's readings teach
    from rbnode.colour import learn_colours
    from rbnode.hw import simcolour as sc

    hw = SimHardware(seed=6)
    rgb = sc.table_colours(hw._rnd, 0.15)
    readings = {}
    for k, ball in enumerate([0, 1, 2, 3, 4, 5, 6, 7, 8]):
        for _ in range(2):
            for _t, seen in sc.ball_pass(ball, 600.0, hw._rnd, rgb=rgb):
                for s in seen:
                    if s is not None:
                        c = sc.counts(s, 0.0, 0, hw._rnd)
                        readings.setdefault(k, []).append((c[0], c[1], c[2]))
    got = learn_colours(readings)
    for k in range(9):
        for i in range(3):
            err = abs(got[k][i] - rgb[k][i])
            check(
                err <= 0.1 * rgb[k][i] + 0.01,
                "colour %d channel %d: %r vs %r" % (k, i, got[k], rgb[k]),
            )
    print("PASS learn colours")


t_classify()
t_learn_colours()
t_station_reads_a_rack()
t_node_sends_reads()
print("ALL OK")
