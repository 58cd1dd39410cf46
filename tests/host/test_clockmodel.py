"""Per-node clock model: min-delay filtering, offset and drift fit."""

import random

from hypothesis import given, settings, strategies as st

from railbird.core.clockmodel import BootClock


def exchange(t1, offset, drift, d_up, d_down, proc=50):
    """Node sends at node time t1; host = node * (1 + drift) + offset."""

    def host(tn):
        return int(tn * (1 + drift) + offset)

    t2 = host(t1 + d_up)
    t3 = t2 + proc
    t4 = t1 + d_up + proc + d_down
    return t1, t2, t3, t4


def test_min_delay_samples_win():
    c = BootClock()
    rnd = random.Random(3)
    for i in range(20):
        up = 300 if i == 7 else rnd.randint(2000, 40000)
        down = 300 if i == 7 else rnd.randint(2000, 40000)
        c.add_sample(*exchange(1_000_000 + i * 1000, 5_000_000, 0.0, up, down))
    assert abs(c.to_table(2_000_000) - 7_000_000) <= 400


def test_drift_is_fitted_over_a_long_span():
    c = BootClock()
    drift = 40e-6  # 40 ppm
    for i in range(10):
        c.add_sample(*exchange(i * 30_000_000, 1_000, drift, 500, 500))
    assert abs(c.drift - drift) < 2e-6
    t = 600_000_000
    assert abs(c.to_table(t) - int(t * (1 + drift) + 1_000)) < 200


def test_no_drift_from_a_short_span_and_bad_samples_refused():
    c = BootClock()
    assert not c.add_sample(100, 50, 60, 90)  # node clock ran backwards
    c.add_sample(*exchange(0, 10, 1e-3, 500, 500))
    c.add_sample(*exchange(1_000_000, 10, 1e-3, 500, 500))
    assert c.drift == 0.0


def test_fallback_from_arrival_until_synced():
    c = BootClock()
    assert c.to_table(1000) == 1000  # nothing known: node time as is
    c.observe_arrival(1000, 9_000)
    c.observe_arrival(2000, 20_000)  # a looser upper bound: the tightest one is kept
    assert c.to_table(1000) == 9_000 and not c.synced
    c.observe_arrival(3000, 9_500)  # a tighter one
    assert c.to_table(1000) == 7_500
    c.add_sample(*exchange(5000, 3000, 0.0, 100, 100))
    assert c.synced and c.to_table(1000) == 4000


@settings(max_examples=200)
@given(
    st.lists(st.tuples(st.integers(0, 10**9), st.integers(-(10**8), 10**8)), max_size=4),
    st.lists(st.tuples(st.integers(0, 10**8), st.integers(-(10**7), 10**8)), max_size=3),
    st.lists(st.integers(0, 2 * 10**9), max_size=9),
    st.one_of(st.none(), st.integers(0, 2 * 10**9)),
)
def test_many_times_map_and_bound_as_one(syncs, arrivals, ts, rx):
    # synced (drift fitted or not) and unsynced models, provisional offsets of any sign,
    # with and without an arrival time to cap them
    c = BootClock(min_span_us=10_000_000)
    for t_node, bound in arrivals:
        c.observe_arrival(t_node, t_node + bound)
    for i, (t1, offset) in enumerate(syncs):
        c.add_sample(*exchange(t1, offset + 10**9, 100e-6 * (i % 3), 300 + i, 250))
    assert c.to_table_many(ts, rx) == [c.to_table(t, rx) for t in ts]
    assert c.latest_many(ts, rx) == [c.latest(t, rx) for t in ts]
