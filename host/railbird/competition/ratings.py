"""Ratings per rack on the scale league players know: a difference of 100 points is 2:1
odds for each rack (docs/events.md, "Ratings").

The expected chance that A wins a rack against B is

    P(A beats B) = 1 / (1 + 2 ** (-(Ra - Rb) / 100))

and the ratings are the one set that makes every rack result together most likely (a
Bradley-Terry maximum-likelihood fit over all results, not an update match by match), with
a prior that anchors each player at their starter rating: `PRIOR_RACKS` racks, half won
and half lost, against an opponent rated at the starter. So a newcomer's rating moves away
from the starter as their racks come in, a player who wins every rack still has a finite
rating, and the fit has exactly one answer (the objective is strictly concave).

The fit is deterministic: the results are counted per pair first (so their order does not
matter) and solved in player-id order by Newton steps, player by player, from the starter
ratings, until no rating moves by more than `TOLERANCE`; ratings are then rounded to a
tenth of a point. The same results always give the same ratings, bit for bit: the host
refits whenever a match ends, and refitting from the history gives the same figures.

Pure: no I/O, no clock.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

SCALE = 100.0  # rating points for 2:1 odds per rack
DEFAULT_STARTER = 500  # the rating of a player the director gave none (an average player)
PRIOR_RACKS = 20  # the starter counts as this many racks, half won, against its own rating
ESTABLISHED_RACKS = 100  # racks played for a rating to be established, not provisional
TOLERANCE = 1e-7  # rating points: the fit stops when no rating moves more in a sweep
MAX_SWEEPS = 10_000
_K = math.log(2.0) / SCALE  # rating points -> natural log-odds


@dataclass(frozen=True, slots=True)
class RackResult:
    """Racks won by each of two players in one match: `a` won `won_a`, `b` won `won_b`."""

    a: int
    b: int
    won_a: int
    won_b: int


@dataclass(frozen=True, slots=True)
class Rating:
    player: int
    rating: float  # rounded to 0.1
    starter: int
    racks: int  # real racks played (the prior's not counted)
    won: int
    established: bool


def expected(ra: float, rb: float) -> float:
    """The chance that a player rated `ra` wins a rack against one rated `rb`."""
    return 1.0 / (1.0 + math.pow(2.0, -(ra - rb) / SCALE))


def fit(
    results: Iterable[RackResult],
    starters: Mapping[int, int | None] | None = None,
    prior_racks: int = PRIOR_RACKS,
    established_racks: int = ESTABLISHED_RACKS,
) -> dict[int, Rating]:
    """Every player's rating from all `results`; `starters`: player id -> the starter rating
    (None or missing: `DEFAULT_STARTER`). A player in `starters` without racks keeps the
    starter. A result of a player against themselves, or with no racks, counts nothing."""
    if prior_racks <= 0:
        raise ValueError("the prior is at least one rack")
    given = dict(starters or {})
    games: dict[tuple[int, int], list[int]] = {}  # (low id, high id) -> [low won, high won]
    for r in results:
        if r.a == r.b or r.won_a < 0 or r.won_b < 0 or r.won_a + r.won_b == 0:
            continue
        if r.a < r.b:
            key, w = (r.a, r.b), (r.won_a, r.won_b)
        else:
            key, w = (r.b, r.a), (r.won_b, r.won_a)
        cell = games.setdefault(key, [0, 0])
        cell[0] += w[0]
        cell[1] += w[1]
    ids = sorted(set(given) | {p for pair in games for p in pair})
    starter = {p: _starter(given.get(p)) for p in ids}
    opponents: dict[int, list[tuple[int, int, int]]] = {p: [] for p in ids}  # (opp, won, n)
    for (lo, hi), (wl, wh) in sorted(games.items()):
        opponents[lo].append((hi, wl, wl + wh))
        opponents[hi].append((lo, wh, wl + wh))
    x = {p: starter[p] * _K for p in ids}  # log-strengths
    prior = {p: starter[p] * _K for p in ids}
    half = prior_racks / 2.0
    tol = TOLERANCE * _K
    for _ in range(MAX_SWEEPS):
        moved = 0.0
        for p in ids:
            xp = x[p]
            q = _sigmoid(xp - prior[p])
            grad = half - prior_racks * q
            curv = prior_racks * q * (1.0 - q)
            for o, won, n in opponents[p]:
                q = _sigmoid(xp - x[o])
                grad += won - n * q
                curv += n * q * (1.0 - q)
            step = grad / curv
            # a step of at most 2 (about 290 points) keeps a long way from home convergent
            step = max(-2.0, min(2.0, step))
            x[p] = xp + step
            moved = max(moved, abs(step))
        if moved < tol:
            break
    out = {}
    for p in ids:
        racks = sum(n for _, _, n in opponents[p])
        won = sum(w for _, w, _ in opponents[p])
        out[p] = Rating(p, round(x[p] / _K, 1), starter[p], racks, won, racks >= established_racks)
    return out


def _starter(value: int | None) -> int:
    return DEFAULT_STARTER if value is None else int(value)


def _sigmoid(d: float) -> float:
    if d >= 0:
        return 1.0 / (1.0 + math.exp(-d))
    e = math.exp(d)
    return e / (1.0 + e)
