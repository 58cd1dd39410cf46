"""`fewest_balls` (railbird.core.railballs) finds its maximum matching from a greedy one
(issue 16, item 5: it was a large part of a shot's cost): the same count as Kuhn's
algorithm from the empty matching, the reference below, on any hits. `distinct_hits` skips
its pairwise search when no two hits are close: the same hits as that search, on any hits."""

from hypothesis import given, settings, strategies as st

from railbird.core.railballs import RAIL_ECHO_US, distinct_hits, fewest_balls, rail_distances
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
    from railbird.core.railballs import TABLE_MM

    hits = [
        Event(t * 1000, "n", 1, i, "rail", rail=r, amp=900) for i, (t, r) in enumerate(sorted(spec))
    ]
    dist = rail_distances(TABLE_MM[size])
    assert fewest_balls(hits, dist, speed) == reference(hits, dist, speed)


def test_one_ball_and_many_balls():
    p = ShotParams()
    dist = rail_distances(p.table_mm)
    # one ball: H then F, far enough apart in time
    one = [Event(0, "n", 1, 0, "rail", rail="H"), Event(2_000_000, "n", 1, 1, "rail", rail="F")]
    assert fewest_balls(one, dist, p.ball_speed_max_mm_s) == 1
    # the same rails 1 ms apart: no ball crosses the table in 1 ms, two balls
    two = [Event(0, "n", 1, 0, "rail", rail="H"), Event(1_000, "n", 1, 1, "rail", rail="F")]
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
    hits = [Event(t * 2000, "n", 1, i, "rail", rail=r, amp=a) for i, (t, r, a) in enumerate(spec)]
    assert distinct_hits(hits, RAIL_ECHO_US) == echo_reference(hits, RAIL_ECHO_US)
