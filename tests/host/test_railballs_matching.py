"""`fewest_balls` (railbird.core.railballs) finds its maximum matching from a greedy one
(issue 16, item 5: it was a large part of a shot's cost): the same count as Kuhn's
algorithm from the empty matching, the reference below, on any hits. `distinct_hits` skips
its pairwise search when no two hits are close: the same hits as that search, on any hits.
`object_balls_to_rail` takes its clusters, hits and shortcuts in one pass: the same result
as its parts one after the other."""

from hypothesis import given, settings, strategies as st

from railbird.core.railballs import (
    HITS_MAX,
    RAIL_ECHO_US,
    RAILS,
    TABLE_MM,
    distinct_hits,
    fewest_balls,
    object_balls_to_rail,
    rail_distances,
)
from railbird.core.shots import ShotParams
from railbird.core.timeline import Event

RAIL = st.sampled_from(["H", "F", "LH", "LF", "RH", "RF"])


def reference(hits, dist, speed_mm_s) -> int:
    n = len(hits)
    succ = [[] for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            a, b = hits[i], hits[j]
            if (b.t - a.t) * speed_mm_s >= dist[a.rail, b.rail] * 1_000_000:
                succ[i].append(j)
    match_of = [-1] * n

    def augment(i, seen) -> bool:
        for j in succ[i]:
            if j in seen:
                continue
            seen.add(j)
            if match_of[j] < 0 or augment(match_of[j], seen):
                match_of[j] = i
                return True
        return False

    return n - sum(1 for i in range(n) if augment(i, set()))


@settings(max_examples=300)
@given(
    st.lists(st.tuples(st.integers(0, 4000), RAIL), max_size=40),
    st.integers(300, 30_000),
    st.sampled_from(["7ft", "8ft", "9ft"]),
)
def test_same_count_as_kuhn_from_the_empty_matching(spec, speed, size):
    hits = [
        Event(t=t * 1000, node="n", boot=1, seq=i, kind="rail", rail=r, amp=900)
        for i, (t, r) in enumerate(sorted(spec))
    ]
    dist = rail_distances(TABLE_MM[size])
    assert fewest_balls(hits, dist, speed) == reference(hits, dist, speed)


def test_one_ball_and_many_balls():
    p = ShotParams()
    dist = rail_distances(p.table_mm)
    # one ball: H then F, far enough apart in time
    one = [
        Event(t=0, node="n", boot=1, seq=0, kind="rail", rail="H"),
        Event(t=2_000_000, node="n", boot=1, seq=1, kind="rail", rail="F"),
    ]
    assert fewest_balls(one, dist, p.ball_speed_max_mm_s) == 1
    # the same rails 1 ms apart: no ball crosses the table in 1 ms, two balls
    two = [
        Event(t=0, node="n", boot=1, seq=0, kind="rail", rail="H"),
        Event(t=1_000, node="n", boot=1, seq=1, kind="rail", rail="F"),
    ]
    assert fewest_balls(two, dist, p.ball_speed_max_mm_s) == 2
    assert fewest_balls([], dist, p.ball_speed_max_mm_s) == 0


def echo_reference(rails, echo_us) -> list:
    """Every hit against every other: left out when another rail's hit within `echo_us` is
    louder, or as loud and earlier in the list."""
    out = []
    for i, e in enumerate(rails):
        if not any(
            j != i
            and o.rail != e.rail
            and abs(o.t - e.t) <= echo_us
            and ((o.amp or 0) > (e.amp or 0) or ((o.amp or 0) == (e.amp or 0) and j < i))
            for j, o in enumerate(rails)
        ):
            out.append(e)
    return out


@settings(max_examples=300)
@given(
    st.lists(
        st.tuples(st.integers(0, 60), RAIL, st.one_of(st.none(), st.integers(0, 3))), max_size=12
    ),
    st.booleans(),
)
def test_distinct_hits_as_the_pairwise_search(spec, in_order):
    # times in ms steps of 2: hits within the 5 ms echo window and hits apart both come up
    spec = sorted(spec, key=lambda x: x[0]) if in_order else spec
    hits = [
        Event(t=t * 2000, node="n", boot=1, seq=i, kind="rail", rail=r, amp=a)
        for i, (t, r, a) in enumerate(spec)
    ]
    assert distinct_hits(hits, RAIL_ECHO_US) == echo_reference(hits, RAIL_ECHO_US)


def obr_reference(rails, start, object_drops, bound, p) -> dict:
    """`object_balls_to_rail` as its parts, one pass each."""
    clusters = 0
    last_hit: dict = {}
    for e in rails:
        if e.t - start > p.break_window_us:
            break
        prev = last_hit.get(e.rail)
        if prev is None or e.t - prev > p.rail_merge_us:
            clusters += 1
        last_hit[e.rail] = e.t
    hits = echo_reference([e for e in rails if e.rail in RAILS][:HITS_MAX], RAIL_ECHO_US)
    balls = reference(hits, rail_distances(tuple(p.table_mm)), p.ball_speed_max_mm_s)
    hi = max(0, min(bound, p.max_object_balls))
    lo = min(hi, max(0, balls - 1 - object_drops))
    return {"estimate": min(max(clusters, lo), hi), "range": [lo, hi], "balls": balls}


@settings(max_examples=400)
@given(
    st.lists(
        st.tuples(st.integers(0, 120), st.one_of(RAIL, st.just("X")), st.integers(0, 4095)),
        max_size=70,
    ),
    st.sampled_from([0, 5_000, 1_500_000, 1_900_000]),
    st.integers(0, 4),
    st.integers(-1, 15),
    st.sampled_from(["7ft", "9ft"]),
)
def test_object_balls_to_rail_as_its_parts(spec, before, drops, bound, size):
    # times in 5 ms steps, the shot starting `before` the first: echoes, hits on one rail
    # exactly rail_merge_us apart, balls that cannot make two hits, hits past the break
    # window and more than HITS_MAX hits all come up
    p = ShotParams(table_mm=TABLE_MM[size])
    spec = sorted(spec, key=lambda x: x[0])
    rails = [
        Event(t=t * 5000, node="n", boot=1, seq=i, kind="rail", rail=r, amp=a)
        for i, (t, r, a) in enumerate(spec)
    ]
    start = (spec[0][0] * 5000 if spec else 0) - before
    got = object_balls_to_rail(rails, start, drops, bound, p)
    assert got == obr_reference(rails, start, drops, bound, p)
