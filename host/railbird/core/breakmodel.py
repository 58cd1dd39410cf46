"""Break rulings from the rail sensors: a calibrated model of how many object balls reached a
rail on a break, and whether the cue ball did (docs/shots.md "The break model";
protocol/REFEREE.md §3b).

The rail piezos cannot say which ball hit (core/railballs.py): the range they prove is wide
on every break (0-15 on a 10-ball break), so the rules alone would hold or mark provisional
nearly every break. What the events do show is how much happened: how many rails were hit,
how many hits and how loud, how early, how many ball-on-ball clicks the strike sensor heard.
From those this module gives calibrated confidences that at least k object balls (k = 1-4:
the break requirements, 10-ball, 9-ball and 8-ball four, 14.1 two) reached a rail or were
pocketed (8.4 counts a pocketed ball as one driven to a rail), and that the cue ball reached
a rail (14.1 4.3.2). Two fits: 14.1's opening safe break (SAFE) and every other game's
power break (POWER). `decide` narrows the sensors' range, and says the cue ball's rail,
only where the confidence passes the model's thresholds, chosen on simulated training
breaks so that none was ruled wrong (and checked on validation seeds), and only for a break
like the training ones (`seen`); elsewhere the range stays and the rules hold the break for
the referee or rule it provisional.

The model is a proportional-odds logistic model (one weight per feature, one cut per k, so
P(>= k) never grows with k) with non-negative weights on features that never fall when a hit
is added: more rails, more hits, louder hits or more clicks never lower a confidence. Its
coefficients are `core/breakfit.py`, written by `make train-breaks`
(tools/sensing_corpus/train_breaks.py). Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from railbird.core.breakfit import POWER, SAFE, BreakFit
from railbird.core.railballs import RAIL_ECHO_US

# The counts the rules tell apart on a break: "at least k object balls to a rail", k = 1..4
COUNTS = (1, 2, 3, 4)
HEAD_RAILS = frozenset(("H", "LH", "RH"))  # the breaking end's rails (the rest: the foot's)
RAIL_THRESHOLD = 200
BURST_US = 300_000
LOUD = 1000  # the rail channel's threshold (ADC counts): a hit is at least this loud
# Features, in the order of the fit's weights; every one is >= 0 and never falls when a hit
# (or a click, or an object-ball drop) is added.
FEATURES = (
    "rails",  # distinct rails hit
    "rails_1s",  # distinct rails hit in the first second
    "rails_twice",  # rails hit at least twice in the first 3 s
    "hits_1s",  # log(1 + rail hits in the first second)
    "hits_3s",  # log(1 + rail hits in the first 3 s)
    "hits",  # log(1 + rail hits)
    "loud_2s",  # sum of log(amp / threshold) over the hits of the first 2 s
    "burst",  # most distinct rails hit within BURST_US of each other (balls moving at once)
    "rails_loud",  # distinct rails hit at LOUD or more
    "head",  # log(1 + hits on the head rails H, LH, RH: the breaking end)
    "head_late",  # log(1 + hits on the head rails after the first second)
    "foot",  # log(1 + hits on the foot rails F, LF, RF: the rack's end)
    "clicks",  # log(1 + ball-on-ball clicks the strike sensor heard)
    "drops",  # object balls pocketed
)


@dataclass(frozen=True, slots=True)
class BreakConfidence:
    """The model's answer for one break: P(at least k object balls reached a rail or were
    pocketed) for k in COUNTS, and P(the cue ball reached a rail)."""

    at_least: tuple[float, ...]
    cue_ball_to_rail: float

    def text(self) -> str:
        """How the rulings and the shot's rules input cite it."""
        ps = ", ".join(f">= {k}: {p:.3f}" for k, p in zip(COUNTS, self.at_least, strict=True))
        return f"object balls to a rail {ps}; cue ball to a rail {self.cue_ball_to_rail:.3f}"


@dataclass(frozen=True, slots=True)
class BreakDecision:
    """What the model decides: the range of object balls to a rail it supports (inside the
    sensors' range) and the cue ball's rail (None: not confident)."""

    lo: int
    hi: int
    cue_ball_to_rail: bool | None
    confidence: BreakConfidence


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def features(
    rails: Iterable[tuple[int, str, int]], start: int, clicks: int, object_drops: int
) -> tuple[float, ...]:
    """The model's features of a break: `rails` its rail hits (t µs, rail, amp) in any
    order, `start` the shot's start (the strike when the strike sensor heard it). Hits are
    counted without their echoes (`_distinct`)."""
    hit_rails: set[str] = set()
    rails = _distinct(sorted(rails))
    early_rails: set[str] = set()
    per_rail: dict[str, int] = {}
    n = n1 = n3 = head = head_late = foot = 0
    loud_rails: set[str] = set()
    loud = 0.0
    for t, rail, amp in rails:
        dt = t - start
        n += 1
        hit_rails.add(rail)
        if dt <= 1_000_000:
            n1 += 1
            early_rails.add(rail)
        if dt <= 3_000_000:
            n3 += 1
            per_rail[rail] = per_rail.get(rail, 0) + 1
        if dt <= 2_000_000:
            loud += math.log(max(amp, RAIL_THRESHOLD) / RAIL_THRESHOLD)
        if amp >= LOUD:
            loud_rails.add(rail)
        if rail in HEAD_RAILS:
            head += 1
            head_late += dt > 1_000_000
        else:
            foot += 1
    return (
        float(len(hit_rails)),
        float(len(early_rails)),
        float(sum(1 for c in per_rail.values() if c >= 2)),
        math.log1p(n1),
        math.log1p(n3),
        math.log1p(n),
        loud,
        float(_burst(rails)),
        float(len(loud_rails)),
        math.log1p(head),
        math.log1p(head_late),
        math.log1p(foot),
        math.log1p(max(0, clicks)),
        float(max(0, object_drops)),
    )


def _distinct(rails: list[tuple[int, str, int]]) -> list[tuple[int, str, int]]:
    """The hits that are not an echo of a louder one: a hit on another rail within
    RAIL_ECHO_US of a louder one (or as loud and earlier) may be that impact heard through
    the frame (core/railballs.py `distinct_hits`). A hit added more than RAIL_ECHO_US from
    every other changes no other's standing: the features never fall for it."""
    out = []
    for i, (t, rail, amp) in enumerate(rails):
        echo = False
        for j in range(i - 1, -1, -1):
            o = rails[j]
            if t - o[0] > RAIL_ECHO_US:
                break
            if o[1] != rail and o[2] >= amp:
                echo = True
                break
        if not echo:
            for j in range(i + 1, len(rails)):
                o = rails[j]
                if o[0] - t > RAIL_ECHO_US:
                    break
                if o[1] != rail and (o[2] > amp or (o[2] == amp and o[0] < t)):
                    echo = True
                    break
        if not echo:
            out.append((t, rail, amp))
    return out


def _burst(rails: list[tuple[int, str, int]]) -> int:
    """The most distinct rails among hits within BURST_US of the window's first (time
    order): a hit more can only add to some window."""
    best = 0
    for i, (t, _, _) in enumerate(rails):
        seen = set()
        for u, rail, _ in rails[i:]:
            if u - t > BURST_US:
                break
            seen.add(rail)
        best = max(best, len(seen))
    return best


def assess(x: tuple[float, ...], fit: BreakFit) -> BreakConfidence:
    """The confidences for a break's features (`features`)."""
    z = sum(w * v for w, v in zip(fit.weights, x, strict=True))
    at_least = tuple(_sigmoid(z - c) for c in fit.cuts)
    zc = fit.cue_bias + sum(w * v for w, v in zip(fit.cue_weights, x, strict=True))
    return BreakConfidence(at_least, _sigmoid(zc))


def decide(
    conf: BreakConfidence, lo: int, hi: int, object_drops: int, fit: BreakFit
) -> BreakDecision:
    """The range [lo, hi] of object balls to a rail (those that stayed on the table) the
    sensors support, narrowed where the model is confident. The model's counts are the
    rules' (8.4): balls to a rail and the `object_drops` pocketed. At least k where
    P(>= k) reaches `fit.sure`, fewer than k where it is at most `fit.unsure`; no narrowing
    at all where that would leave the sensors' range."""
    new_lo, new_hi = lo, hi
    for k, p, sure, unsure in zip(COUNTS, conf.at_least, fit.sure, fit.unsure, strict=True):
        if p >= sure:
            new_lo = max(new_lo, k - object_drops)
        elif p <= unsure:
            new_hi = min(new_hi, k - 1 - object_drops)
            break  # P(>= k) falls with k: every larger k is as unlikely
    if new_lo > new_hi:
        new_lo, new_hi = lo, hi
    cue: bool | None = None
    if conf.cue_ball_to_rail >= fit.cue_sure:
        cue = True
    return BreakDecision(new_lo, new_hi, cue, conf)


def fit_for(game: object) -> BreakFit:
    """The fit for a game's break: 14.1's opening break is a safe break (two object balls
    and the cue ball to a rail), every other game's a power break (four balls)."""
    return SAFE if game == "14.1" else POWER


def object_drops(shot: Mapping[str, Any]) -> int:
    """The object balls pocketed on an assembled shot (a drop not paired with the cue
    detector), as `core.game.object_balls_bound` counts them."""
    return sum(1 for p in shot["pocketed"] if p.get("ball") != 0)


def shot_features(shot: Mapping[str, Any]) -> tuple[float, ...]:
    """`features` of an assembled shot (core/shots.py `Shot`, as assembled or read back)."""
    hits = ((r["t"], r["rail"], r["amp"]) for r in shot["rails"])
    return features(hits, shot["start"], int(shot.get("clicks") or 0), object_drops(shot))


def decide_shot(shot: Mapping[str, Any], lo: int, hi: int, game: object) -> BreakDecision:
    """The decision on an assembled break shot in `game`, from the range [lo, hi]."""
    fit = fit_for(game)
    x = shot_features(shot)
    conf = assess(x, fit)
    if not seen(x, fit):  # a break unlike every training break: the model says nothing
        return BreakDecision(lo, hi, None, conf)
    return decide(conf, lo, hi, object_drops(shot), fit)


def seen(x: tuple[float, ...], fit: BreakFit) -> bool:
    """Whether every feature lies within what the training breaks had (the fit's box)."""
    return all(a <= v <= b for v, a, b in zip(x, fit.x_min, fit.x_max, strict=True))
