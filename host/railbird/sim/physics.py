"""Shot plans -> timed sensor edges, with plausible pool-table timing.

A `ShotPlan` says what happens on the table (which object balls drop in which pockets, a
scratch, how hard the shot is); `edges(plan, rng)` turns it into the sensor edges a node
would see, in microseconds from the cue strike (which no sensor sees):

- a ball rolls about 1-3 m/s: the cue ball meets the object ball 0.1-0.5 s after the strike,
  an object ball reaches its pocket 0.3-1.5 s after that; a 57.15 mm ball crossing a pocket
  beam blocks it for about 25-80 ms (faster balls: shorter);
- a break shakes every rail within a second (several hits per rail, high amplitude), then
  the balls roll out for another 1-3 s with weaker, sparser hits;
- the simulated table has a short ball return: a scratched cue ball reaches the cue-ball
  detector SIM_CUE_RETURN_MS after it drops (±5 %; the host pairs the detector with the
  drop whose delay is nearest to its pocket's expected one, docs/shots.md), and is the last
  ball to drop, 0.6 s or more after the others, so the pairing is never ambiguous; a host
  that plays against the simulator is configured with these delays (`cue_return_ms`);
- hits on one rail are at least 130 ms apart (the firmware's refractory time is 50 ms and the
  host merges hits closer than 100 ms into one ball), and nothing happens near the 2 s edge
  of the host's break window, so the host's facts do not depend on a few µs of jitter;
- every shot has at least one rail hit (a shot with no sensed activity would never reach the
  host) and no gap between two edges is longer than `max_gap_us` (the host closes a shot
  after a quiet period; a gap longer than that would split one shot in two).

Everything is a pure function of the plan and the `random.Random` passed in.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rbproto.codec import RAILS

if TYPE_CHECKING:  # the core is imported where it is used (below); this is for annotations
    from railbird.core.shots import Shot

# Rails that end at each pocket (docs/architecture.md, "Conventions"): a ball rattling in the
# jaws touches them.
POCKET_RAILS = {
    "HL": ("H", "LH"),
    "HR": ("H", "RH"),
    "SL": ("LH", "LF"),
    "SR": ("RH", "RF"),
    "FL": ("F", "LF"),
    "FR": ("F", "RF"),
}

SAME_RAIL_GAP_US = 130_000
SAME_POCKET_GAP_US = 200_000
BREAK_WINDOW_US = 2_000_000  # host default (docs/shots.md): keep clear of its edge
WINDOW_GUARD_US = 120_000
DEFAULT_MAX_GAP_US = 1_000_000
# Return delays of the simulated table (pocket -> ms): shorter than a real table's (docs/
# shots.md) so that a scratch fits in the short quiet periods of demos and tests.
SIM_CUE_RETURN_MS = {"HL": 600, "HR": 600, "SL": 500, "SR": 500, "FL": 400, "FR": 400}


@dataclass(frozen=True)
class Edge:
    """One sensor stimulus: `kind` rail (value = amplitude 0-4095), drop (value = beam
    blocked time µs), cue (cue-ball detector, value = blocked time µs) or ball (the colour
    station's read, hardware/colour.md: value = the number read, `conf` its confidence)."""

    t_us: int
    kind: str
    where: str | None
    value: int
    conf: int = 0

    def as_dict(self) -> dict:
        d = {"t_us": self.t_us, "kind": self.kind, "where": self.where, "value": self.value}
        if self.kind == "ball":
            d["conf"] = self.conf
        return d


@dataclass
class ShotPlan:
    """What happens on one shot. `kind`: break, pot, miss, safety, push_out, weak_break
    (too few balls to a rail), safe_break (14.1 opening break: two balls and the cue ball
    to a rail). `pots`: object balls that drop, in order, as (ball, pocket) - the ball is
    what the simulator believes; the host only senses the pocket. `scratch`: the pocket the
    cue ball falls in, or None. `rails`: how many rail hits after contact (ignored for
    breaks). `power`: 0..1, scales speeds and amplitudes.

    What the sensors cannot see, which the referee enters (`referee_facts`):
    `first_contact` (the ball hit first, when it is not the presumed one: 10-ball "wrong
    ball first"), `rail_after_contact` (False: no ball reached a rail after contact, though
    the cue ball hit one before it) and `fouls` (declared rule numbers); on a weak or safe
    break, how many object balls (and whether the cue ball) reached a rail."""

    kind: str
    pots: list = field(default_factory=list)
    scratch: str | None = None
    rails: int = 2
    power: float = 0.5
    text: str = ""
    first_contact: int | None = None
    rail_after_contact: bool | None = None
    fouls: list = field(default_factory=list)

    def as_dict(self) -> dict:
        d = {
            "kind": self.kind,
            "pots": [list(p) for p in self.pots],
            "scratch": self.scratch,
            "rails": self.rails,
            "power": self.power,
            "text": self.text,
        }
        if self.first_contact is not None:
            d["first_contact"] = self.first_contact
        if self.rail_after_contact is not None:
            d["rail_after_contact"] = self.rail_after_contact
        if self.fouls:
            d["fouls"] = list(self.fouls)
        return d


def referee_facts(plan: ShotPlan, colour: bool = False) -> dict:
    """The facts a referee enters for this shot, as the fields of a `confirm` input
    (protocol/REFEREE.md §3a): the identity of every ball that dropped (object balls in drop
    order, then the cue ball) whenever an object ball dropped (not with a colour station:
    `colour`), plus the plan's unsensed facts. Empty when there is nothing the sensors did
    not see."""
    facts: dict = {}
    if plan.pots and not colour:  # with a colour station the sensors name the balls
        pocketed = [{"ball": b, "pocket": p} for b, p in plan.pots]
        if plan.scratch:
            pocketed.append({"ball": 0, "pocket": plan.scratch})
        facts["pocketed"] = pocketed
    if plan.first_contact is not None:
        facts["first_contact"] = plan.first_contact
    if plan.rail_after_contact is not None:
        facts["rail_after_contact"] = plan.rail_after_contact
    if plan.fouls:
        facts["fouls"] = list(plan.fouls)
    # The balls that reached a rail on a soft break: the rail sensors give a range, and a
    # ruling that depends on where in it the truth lies is held or provisional (REFEREE.md
    # §3b); the referee saw how many, and says so as he would at a real table.
    if plan.kind == "weak_break":
        facts["object_balls_to_rail"] = 1
    elif plan.kind == "safe_break":
        facts["object_balls_to_rail"] = 2
        facts["cue_ball_to_rail"] = True
    return facts


def _amp(rng: random.Random, lo: int, hi: int) -> int:
    return max(250, min(4095, rng.randint(lo, hi)))


def _drop_dur(rng: random.Random, power: float) -> int:
    # 57.15 mm at 0.7-2.3 m/s through the beam: ~25-80 ms
    speed = 0.7 + 1.6 * power * rng.uniform(0.6, 1.0)
    return int(57_150 / speed)


def edges(
    plan: ShotPlan, rng: random.Random, max_gap_us: int = DEFAULT_MAX_GAP_US, colour: bool = False
) -> list:
    """The sensor edges of `plan`, sorted by time (µs from the cue strike). A break hits
    every rail several times: the host's rail-cluster estimate of object balls to a rail
    often exceeds the balls on the table, and the host bounds it (docs/shots.md). With
    `colour`, the colour station reads every pocketed ball after its pocket's return delay
    (±5 %), through the node's own driver on the simulated station (`colour_read`)."""
    out: list[Edge] = []
    p = max(0.05, min(1.0, plan.power))
    if plan.kind == "break":
        contact = rng.randint(140_000, 220_000)
        for rail in RAILS:  # every rail shaken, most several times, within a second
            t = contact + rng.randint(60_000, 300_000)
            for _ in range(rng.randint(2, 4)):
                if t > 1_000_000:
                    break
                out.append(Edge(t, "rail", rail, _amp(rng, 1800, 4095)))
                t += rng.randint(SAME_RAIL_GAP_US, 320_000)
        for _ in range(rng.randint(3, 8)):  # the balls roll out
            t = rng.randint(1_100_000, 3_400_000)
            out.append(Edge(t, "rail", rng.choice(RAILS), _amp(rng, 300, 1500)))
        first_drop, last_drop = 450_000, 2_600_000
    elif plan.kind in ("weak_break", "safe_break"):
        contact = rng.randint(180_000, 300_000)
        n = 3 if plan.kind == "safe_break" else 1  # clusters the host counts
        rails = rng.sample(RAILS, n)
        for rail in rails:
            t = contact + rng.randint(400_000, 1_100_000)
            out.append(Edge(t, "rail", rail, _amp(rng, 500, 2200)))
        first_drop, last_drop = 700_000, 1_700_000
    else:
        contact = rng.randint(100_000, int(200_000 + 300_000 * (1 - p)))
        n = max(1, plan.rails)
        lo = 300 + int(900 * p)
        hi = 900 + int(2500 * p)
        if plan.kind in ("safety", "push_out"):
            lo, hi = 260, 900
        t = contact + rng.randint(250_000, 700_000)
        for _ in range(n):
            out.append(Edge(t, "rail", rng.choice(RAILS), _amp(rng, lo, hi)))
            t += rng.randint(250_000, 800_000)
        first_drop, last_drop = contact + 300_000, contact + 1_500_000
    # Object balls drop, then (last) the cue ball.
    t = rng.randint(first_drop, (first_drop + last_drop) // 2)
    last_in: dict = {}
    for _ball, pocket in plan.pots:
        prev = last_in.get(pocket)
        if prev is not None and t - prev < SAME_POCKET_GAP_US:
            t = prev + SAME_POCKET_GAP_US
        out.append(Edge(t, "drop", pocket, _drop_dur(rng, p)))
        # the ball rattles in the jaws and touches a rail now and then
        if rng.random() < 0.3:
            out.append(
                Edge(
                    t - rng.randint(40_000, 90_000),
                    "rail",
                    rng.choice(POCKET_RAILS[pocket]),
                    _amp(rng, 260, 900),
                )
            )
        last_in[pocket] = t
        t += rng.randint(150_000, 600_000)
    if plan.scratch:
        drops = [e.t_us for e in out if e.kind == "drop"]
        t = max([t] + [d + 600_000 for d in drops])
        prev = last_in.get(plan.scratch)
        if prev is not None and t - prev < SAME_POCKET_GAP_US:
            t = prev + SAME_POCKET_GAP_US
        out.append(Edge(t, "drop", plan.scratch, _drop_dur(rng, p)))
        expect = SIM_CUE_RETURN_MS[plan.scratch] * 1000
        delay = rng.randint(expect * 19 // 20, expect * 21 // 20)
        out.append(Edge(t + delay, "cue", None, rng.randint(30_000, 60_000)))
        if colour:
            out.append(colour_read(t + delay + 40_000, 0, rng))
    if colour:
        dropped = [e for e in out if e.kind == "drop"]
        for (ball, _pocket), d in zip(plan.pots, dropped, strict=False):
            expect = SIM_CUE_RETURN_MS[d.where or "FL"] * 1000
            at = d.t_us + rng.randint(expect * 19 // 20, expect * 21 // 20)
            out.append(colour_read(at, ball, rng))
    return _tidy(out, max_gap_us)


REPO = Path(__file__).resolve().parents[3]


def firmware_path() -> str:
    """Make the firmware package (rbnode) importable: it lives in the repository's
    firmware/ directory, next to host/ (the simulator needs a checkout)."""
    fw = REPO / "firmware"
    if not (fw / "rbnode").is_dir():
        raise RuntimeError(
            f"node firmware not found at {fw}: the simulator runs from a checkout of the repository"
        )
    if str(fw) not in sys.path:
        sys.path.insert(0, str(fw))
    return str(fw)


def colour_read(t_us: int, ball: int, rng: random.Random) -> Edge:
    """The colour station's read of `ball` reaching it at `t_us`: the firmware's driver
    (rbnode.colour) on the simulated station (rbnode.hw.simcolour: random orientation,
    speed, ambient light, noise)."""
    firmware_path()
    from rbnode.hw import simcolour  # type: ignore[import-not-found]  # firmware/ at run time

    ((_, number, conf),) = simcolour.read_balls([ball], rng.random)
    return Edge(t_us, "ball", None, number, conf)


def _tidy(out: list, max_gap_us: int) -> list:
    """Sort; keep same-rail hits apart and clear of the break-window edge; cap the gaps.
    Repeated until stable (capping a gap moves later edges earlier, into the window)."""
    cap = max(200_000, max_gap_us)
    es = sorted(out, key=lambda e: (e.t_us, e.kind, e.where or ""))
    for _ in range(12):
        es = _cap_gaps(es, cap)
        t0 = es[0].t_us if es else 0
        last_rail: dict = {}
        kept = []
        for e in es:
            if e.kind == "rail":
                rel = e.t_us - t0
                if abs(rel - BREAK_WINDOW_US) < WINDOW_GUARD_US:
                    # just before the window's edge instead (earlier never widens a gap
                    # before it)
                    e = Edge(
                        t0 + BREAK_WINDOW_US - WINDOW_GUARD_US, e.kind, e.where, e.value, e.conf
                    )
                prev = last_rail.get(e.where)
                if prev is not None and e.t_us - prev < SAME_RAIL_GAP_US:
                    continue
                last_rail[e.where] = e.t_us
            kept.append(e)
        if not any(e.kind == "rail" for e in kept):  # a shot must be seen: one rail at least
            t = kept[0].t_us - 150_000 if kept else 300_000
            kept.insert(0, Edge(max(t, 50_000), "rail", RAILS[0], 600))
        kept.sort(key=lambda e: (e.t_us, e.kind, e.where or ""))
        if kept == es and _cap_gaps(kept, cap) == kept:
            break
        es = kept
    return es


def _cap_gaps(es: list, cap: int) -> list:
    res = []
    shift = 0
    prev_t = None
    for e in es:
        t = e.t_us - shift
        if prev_t is not None and t - prev_t > cap:
            shift += t - prev_t - cap
            t = prev_t + cap
        res.append(Edge(t, e.kind, e.where, e.value, e.conf))
        prev_t = t
    return res


def duration_us(es: list) -> int:
    return es[-1].t_us if es else 0


def sensed_shot(es: list, params=None, table: str = "sim", n: int = 1) -> Shot:
    """The shot the host will assemble from these edges (railbird.core.shots.assemble on the
    same events), for the simulator's own expectation of the game state."""
    from railbird.core.shots import assemble
    from railbird.core.timeline import Event

    evs = []
    for i, e in enumerate(es):
        if e.kind == "rail":
            evs.append(
                Event(t=e.t_us, node="sim", boot=1, seq=i, kind="rail", rail=e.where, amp=e.value)
            )
        elif e.kind == "drop":
            evs.append(
                Event(t=e.t_us, node="sim", boot=1, seq=i, kind="drop", pocket=e.where, dur=e.value)
            )
        elif e.kind == "ball":
            evs.append(
                Event(t=e.t_us, node="sim", boot=1, seq=i, kind="ball", ball=e.value, conf=e.conf)
            )
        else:
            evs.append(Event(t=e.t_us, node="sim", boot=1, seq=i, kind="cue", dur=e.value))
    return assemble(table, n, evs, 10_000_000, [], params or shot_params())


def shot_params(**kw):
    """The host's shot parameters for the simulated table (its ball-return delays)."""
    from railbird.core.shots import ShotParams, cue_return_us

    return ShotParams(cue_return_us=cue_return_us(measured=SIM_CUE_RETURN_MS), **kw)


def sensed_input(
    es: list, params=None, lip_policy: str = "warn", state: dict | None = None
) -> dict:
    """The rules input the host derives from these edges (host.game.shot_input) in the
    game state `state`."""
    from railbird.core.game import shot_input

    return shot_input(sensed_shot(es, params), lip_policy, state)
