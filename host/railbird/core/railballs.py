"""How many object balls reached a rail: an estimate and the range the rail sensors support
(docs/shots.md "Object balls to a rail"; protocol/REFEREE.md §3b).

One piezo per rail (H, F, LH, LF, RH, RF) says when a rail was hit hard enough, not by
which ball, and merges hits on its rail within its refractory time. Counting hits, or
clusters of hits, over-counts on a break (balls come back to the same rails) and cannot
tell a three-ball break from a legal one (issue 15). What the events do prove is a lower
bound: two hits on rails too far apart for any ball to travel between them in the time
between the hits were made by two balls. The fewest balls that can have made all the hits
is a minimum path cover of the hits (each ball's hits in time order, every pair of them
reachable at `ball_speed_max_mm_s`), = hits - maximum matching. Less the cue ball and
the object balls that dropped (they may be among those balls), that is `lo`. Nothing the
sensors give bounds the count from above (a soft touch stays under the threshold, two balls
on one rail within the refractory time are one hit), so `hi` is every object ball that can
have reached a rail. Pure: no I/O.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, TypedDict

from railbird.core.timeline import Event
from rbproto.codec import RAILS

if TYPE_CHECKING:  # shots imports this module: ShotParams is for the annotation only
    from railbird.core.shots import ShotParams

BALL_RADIUS_MM = 28.575  # 2 1/4 in ball (WPA)
# Playing surface (cushion nose to cushion nose), length x width, mm, by table size (WPA:
# 100 x 50 in, 88 x 44 in, 78 x 39 in).
TableMM = tuple[int, int]  # (length, width) of the playing surface, mm
TABLE_MM: dict[str, TableMM] = {"7ft": (1981, 991), "8ft": (2235, 1118), "9ft": (2540, 1270)}
RAIL_SET = frozenset(RAILS)
HITS_MAX = 64  # hits considered (the earliest); a subset only weakens the bound
# A hit on another rail this close to a louder one may be that impact heard through the
# frame (two balls on two rails within 5 ms is rare enough that leaving one out costs little)
RAIL_ECHO_US = 5_000

Point = tuple[float, float]  # a ball centre's (x, y) on the table, mm
Segment = tuple[Point, Point]
RailDistances = dict[tuple[str, str], float]  # (rail, rail) -> mm (`rail_distances`)


class RailBalls(TypedDict):
    """`object_balls_to_rail`'s answer."""

    estimate: int
    range: list[int]  # [lo, hi]
    balls: int  # the fewest balls that can have made the hits (`fewest_balls`)


def rail_segments(table_mm: TableMM) -> dict[str, Segment]:
    """Where a ball's centre is when it touches each rail: a segment per rail, foot at
    y = 0. Pocket openings are left out (each rail runs to the corner, the long rails to
    the middle), which only shortens distances: the bound stays a lower bound."""
    length, width = table_mm
    r = BALL_RADIUS_MM
    x0, x1, y0, y1, mid = r, width - r, r, length - r, length / 2
    return {
        "H": ((x0, y1), (x1, y1)),
        "F": ((x0, y0), (x1, y0)),
        "LH": ((x0, mid), (x0, y1)),
        "LF": ((x0, y0), (x0, mid)),
        "RH": ((x1, mid), (x1, y1)),
        "RF": ((x1, y0), (x1, mid)),
    }


def _point_segment(p: Point, a: Point, b: Point) -> float:
    (px, py), (ax, ay), (bx, by) = p, a, b
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - ax - t * dx, py - ay - t * dy)


@functools.lru_cache(maxsize=16)
def rail_distances(table_mm: TableMM) -> RailDistances:
    """Shortest distance (mm) a ball's centre travels from touching one rail to touching
    another: 0 for a rail and itself or its neighbours across a pocket. Computed once per
    table size (it was half the pipeline's time, recomputed for every shot): the dict is
    shared, callers only read it."""
    seg = rail_segments(table_mm)
    out: RailDistances = {}
    for a in RAILS:
        for b in RAILS:
            (p, q), (s, t) = seg[a], seg[b]
            out[a, b] = min(
                _point_segment(p, s, t),
                _point_segment(q, s, t),
                _point_segment(s, p, q),
                _point_segment(t, p, q),
            )
    return out


def distinct_hits(rails: list[Event], echo_us: int) -> list[Event]:
    """The hits that cannot be an echo of another: a hit on another rail within `echo_us`
    of a louder one (or as loud and earlier) may be the same impact heard through the frame,
    so it is left out. Leaving hits out only weakens the bound."""
    prev = None
    for e in rails:
        if prev is not None and e.t - prev <= echo_us:
            break
        prev = e.t
    else:
        # in time order (a shot's rail events are) and no two hits within echo_us: none is
        # an echo, and the pairwise search below would find none (the usual shot)
        return list(rails)
    out: list[Event] = []
    for i, e in enumerate(rails):
        echo = False
        for j, o in enumerate(rails):
            if j == i or o.rail == e.rail or abs(o.t - e.t) > echo_us:
                continue
            if (o.amp or 0) > (e.amp or 0) or ((o.amp or 0) == (e.amp or 0) and j < i):
                echo = True
                break
        if not echo:
            out.append(e)
    return out


def _rail_of(hit: Event) -> str:
    """The rail of a hit `fewest_balls` is given: one on a known rail (`object_balls_to_rail`
    keeps only those). A hit on no rail has no distance to any other: refused, by name."""
    if hit.rail is None:
        raise ValueError(f"a rail hit without a rail: {hit!r}")
    return hit.rail


def fewest_balls(hits: list[Event], dist: RailDistances, speed_mm_s: int) -> int:
    """The fewest balls that can have made `hits` (time order): a minimum path cover of the
    graph whose edge i -> j says one ball can make hit j after hit i (it can travel from
    rail i to rail j in the time between them), = len(hits) - maximum matching."""
    n = len(hits)
    if n < 2:
        return n  # no pair to match (a shot with one rail hit or none)
    speed = speed_mm_s
    ts = [h.t for h in hits]
    rs = [_rail_of(h) for h in hits]
    for i in range(n - 1):
        if (ts[i + 1] - ts[i]) * speed < dist[rs[i], rs[i + 1]] * 1_000_000:
            break
    else:
        # one ball can have made every hit after the one before: a path through all of them
        # (a matching of n - 1, the most there is: the first hit follows none)
        return 1
    # µs * mm/s >= mm * 1e6: integer-safe form of dt >= d / v
    succ: list[list[int] | None] = [None] * n  # i -> the hits one ball can make after hit i

    def successors(i: int) -> list[int]:  # succ[i], worked out the first time it is needed
        s = succ[i]
        if s is None:
            ti, ri = ts[i], rs[i]
            s = succ[i] = [
                j for j in range(i + 1, n) if (ts[j] - ti) * speed >= dist[ri, rs[j]] * 1_000_000
            ]
        return s

    match_of = [-1] * n  # j -> i matched into it
    # A greedy matching first (most hits follow one another by one ball: each takes the
    # first free hit it reaches, found without listing all it reaches), then augmenting
    # paths from the hits it left unmatched: a maximum matching as from the empty one
    # (Kuhn), with few searches.
    free: list[int] = []
    for i in range(n):
        ti, ri = ts[i], rs[i]
        for j in range(i + 1, n):
            if match_of[j] < 0 and (ts[j] - ti) * speed >= dist[ri, rs[j]] * 1_000_000:
                match_of[j] = i
                break
        else:
            free.append(i)

    def augment(i: int, seen: set[int]) -> bool:
        for j in successors(i):
            if j in seen:
                continue
            seen.add(j)
            if match_of[j] < 0 or augment(match_of[j], seen):
                match_of[j] = i
                return True
        return False

    matched = n - len(free) + sum(1 for i in free if augment(i, set()))
    return n - matched


def object_balls_to_rail(
    rails: list[Event], start: int, object_drops: int, bound: int, p: ShotParams
) -> RailBalls:
    """{"estimate", "range": [lo, hi], "balls"} for a shot's rail events (timeline order),
    the shot starting at `start`.

    `object_drops`: object balls pocketed on the shot (they count apart, 8.4, and may have
    made some of the hits); `bound`: the object balls that can have reached a rail and
    stayed on the table. The estimate is the hit clusters of the first `break_window_us`
    (hits on one rail within `rail_merge_us` are one), put inside the range."""
    window, merge = p.break_window_us, p.rail_merge_us
    length, width = p.table_mm  # a tuple however it was given: rail_distances caches by it
    dist = rail_distances((length, width))
    speed = p.ball_speed_max_mm_s
    # One pass (issue 16, item 5: this ran for every shot): the clusters; the hits (the
    # first HITS_MAX on known rails); whether two of them come within RAIL_ECHO_US (then
    # `distinct_hits` has echoes to weigh), and whether one ball can have made each after the
    # one before (then it made them all: `fewest_balls` is 1, see there).
    clusters = 0
    last_hit: dict[str | None, int] = {}
    counting = True
    hits: list[Event] = []
    spread = chain = True
    prev_t = 0  # the last hit's time and rail (prev_rail None: no hit yet)
    prev_rail: str | None = None
    for e in rails:
        t, rail = e.t, e.rail
        if counting:
            if t - start > window:
                counting = False
            else:
                before = last_hit.get(rail)
                if before is None or t - before > merge:
                    clusters += 1
                last_hit[rail] = t
        # `rail is not None`: a rail event always names its rail (the codec requires it), and
        # None is not in RAIL_SET anyway; the check is what lets the type say str
        if rail is not None and rail in RAIL_SET and len(hits) < HITS_MAX:
            if prev_rail is not None:
                dt = t - prev_t
                if dt <= RAIL_ECHO_US:
                    spread = False
                elif chain and dt * speed < dist[prev_rail, rail] * 1_000_000:
                    chain = False
            hits.append(e)
            prev_t, prev_rail = t, rail
    if not spread:
        balls = fewest_balls(distinct_hits(hits, RAIL_ECHO_US), dist, speed)
    elif chain:
        balls = min(len(hits), 1)
    else:
        balls = fewest_balls(hits, dist, speed)
    hi = max(0, min(bound, p.max_object_balls))
    # the cue ball may have made some of the hits, and so may each object ball that dropped
    lo = min(hi, max(0, balls - 1 - object_drops))
    return {"estimate": min(max(clusters, lo), hi), "range": [lo, hi], "balls": balls}
