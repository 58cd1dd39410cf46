"""Clock: 64-bit µs from the 2**30-wrapping ticks_us, across many wraps (DESIGN §4)."""

from hypothesis import given, settings, strategies as st

from rbnode.clock import Clock
from rbnode.hw import hal
from rbnode.hw.sim import SimHardware

PERIOD = 1 << 30
HALF = PERIOD >> 1


class FakeTicks:
    def __init__(self, start):
        self.start = start
        self.t = 0  # true µs since boot

    def ticks_us(self):
        return (self.start + self.t) & (PERIOD - 1)


def test_ticks_diff_matches_micropython_semantics():
    assert hal.ticks_diff(5, PERIOD - 5) == 10
    assert hal.ticks_diff(PERIOD - 5, 5) == -10
    assert hal.ticks_diff(HALF - 1, 0) == HALF - 1
    assert hal.ticks_diff(HALF, 0) == -HALF
    assert hal.ticks_add(PERIOD - 1, 2) == 1


@settings(max_examples=300, deadline=None)
@given(
    start=st.integers(0, PERIOD - 1),
    steps=st.lists(st.integers(0, HALF - 1), min_size=1, max_size=400),
)
def test_now_is_true_time_across_many_wraps(start, steps):
    f = FakeTicks(start)
    c = Clock(f.ticks_us, hal.ticks_diff)
    prev = 0
    for s in steps:
        f.t += s
        n = c.now()
        assert n == f.t
        assert n >= prev
        prev = n


@settings(max_examples=200, deadline=None)
@given(
    start=st.integers(0, PERIOD - 1),
    steps=st.lists(
        st.tuples(st.integers(1, HALF // 2), st.integers(0, HALF - 1)), min_size=1, max_size=200
    ),
)
def test_extend_maps_recent_ticks(start, steps):
    """extend(ticks captured `age` µs ago) == that instant, even if update() was last
    called up to ~4 min before (updates every <= HALF/2 here, ages < HALF)."""
    f = FakeTicks(start)
    c = Clock(f.ticks_us, hal.ticks_diff)
    for gap, age in steps:
        f.t += gap
        age = min(age, f.t)
        captured = (f.start + f.t - age) & (PERIOD - 1)
        assert c.extend(captured) == f.t - age


def test_one_hundred_wraps_with_sim_start_near_wrap():
    hw = SimHardware(start_ticks=PERIOD - 10)
    c = Clock(hw.ticks_us, hw.ticks_diff)
    wraps = 0
    last = hw.ticks_us()
    step = 7 * 60 * 1000 * 1000 + 12345  # 7 min: the node updates far more often
    while wraps < 100:
        hw.advance(step)
        assert c.now() == hw.now_us
        if hw.ticks_us() < last:
            wraps += 1
        last = hw.ticks_us()
    assert c.now() > 99 * PERIOD  # ~30 hours of node time


def test_never_steps_back_on_a_stale_source():
    f = FakeTicks(123)
    c = Clock(f.ticks_us, hal.ticks_diff)
    f.t = 1000
    assert c.now() == 1000
    assert c.now() == 1000
