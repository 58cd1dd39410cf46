"""The break model's invariants (core/breakmodel.py, issue 26 item 3): what the rail events
say can only add confidence (more rails, more or louder hits, more clicks never lower the
confidence that at least k object balls or the cue ball reached a rail), a larger k is never
more likely than a smaller one, and a decision never leaves the range the sensors prove."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings, strategies as st

from railbird.core import breakmodel as bm
from railbird.core.breakfit import POWER, SAFE
from railbird.core.game import shot_input
from rbproto.codec import RAILS

START = 1_000_000
hit = st.tuples(
    st.integers(START, START + 8_000_000), st.sampled_from(RAILS), st.integers(200, 4095)
)
hits = st.lists(hit, max_size=40)


FITS = st.sampled_from((POWER, SAFE))


def conf(rails, clicks=0, drops=0, fit=POWER):
    return bm.assess(bm.features(rails, START, clicks, drops), fit)


def test_the_committed_fits_are_monotone_by_construction():
    assert bm.fit_for("14.1") is SAFE
    assert {bm.fit_for(g) for g in ("10-ball", "9-ball", "8-ball")} == {POWER}
    for fit in (POWER, SAFE):
        assert len(fit.weights) == len(fit.cue_weights) == len(bm.FEATURES)
        assert all(w >= 0 for w in fit.weights + fit.cue_weights)
        assert list(fit.cuts) == sorted(fit.cuts) and len(fit.cuts) == len(bm.COUNTS)
        # never both "at least k" and "fewer than k"; a count ruled at all is ruled both ways
        for sure, unsure in zip(fit.sure, fit.unsure, strict=True):
            assert sure > 0.5 > unsure and (sure > 1) == (unsure < 0)
        assert all(a <= b for a, b in zip(fit.x_min, fit.x_max, strict=True))


@settings(max_examples=40, deadline=None)
@given(hits, hit, st.integers(0, 30), st.integers(0, 3), FITS)
def test_another_distinct_hit_never_lowers_a_confidence(rails, extra, clicks, drops, fit):
    # a distinct hit: more than RAIL_ECHO_US from every other (closer, it may be an echo)
    if any(abs(extra[0] - t) <= bm.RAIL_ECHO_US for t, _, _ in rails):
        extra = (max([START, *(t for t, _, _ in rails)]) + bm.RAIL_ECHO_US + 1, *extra[1:])
    before = conf(rails, clicks, drops, fit)
    after = conf([*rails, extra], clicks, drops, fit)
    for p, q in zip(before.at_least, after.at_least, strict=True):
        assert q >= p
    assert after.cue_ball_to_rail >= before.cue_ball_to_rail


@settings(max_examples=30, deadline=None)
@given(hits, st.integers(0, 30), st.integers(0, 3), FITS)
def test_more_clicks_or_drops_never_lower_a_confidence(rails, clicks, drops, fit):
    base = conf(rails, clicks, drops, fit)
    more_clicks, more_drops = (
        conf(rails, clicks + 1, drops, fit),
        conf(rails, clicks, drops + 1, fit),
    )
    for more in (more_clicks, more_drops):
        assert all(q >= p for p, q in zip(base.at_least, more.at_least, strict=True))


@settings(max_examples=30, deadline=None)
@given(hits, st.integers(0, 30), st.integers(0, 3), st.integers(0, 15), st.integers(0, 15), FITS)
def test_a_decision_stays_inside_the_sensors_range(rails, clicks, drops, a, b, fit):
    lo, hi = min(a, b), max(a, b)
    c = conf(rails, clicks, drops, fit)
    assert list(c.at_least) == sorted(c.at_least, reverse=True)  # P(>= k) falls with k
    d = bm.decide(c, lo, hi, drops, fit)
    assert lo <= d.lo <= d.hi <= hi


def test_a_decision_follows_the_thresholds():
    # a fit that rules every count (the committed ones leave some to the referee)
    fit = replace(POWER, sure=(0.9,) * 4, unsure=(0.1,) * 4, cue_sure=0.9)
    sure = bm.BreakConfidence((0.95,) * 4, 0.95)
    assert bm.decide(sure, 0, 15, 0, fit) == bm.BreakDecision(4, 15, True, sure)
    # pocketed balls count on top (8.4): two pocketed, two more to a rail make four
    assert bm.decide(sure, 0, 15, 2, fit).lo == 2
    unsure = bm.BreakConfidence((0.95, 0.05, 0.0, 0.0), 0.0)
    assert bm.decide(unsure, 0, 15, 0, fit) == bm.BreakDecision(1, 1, None, unsure)
    # a model that contradicts the sensors decides nothing
    assert (bm.decide(unsure, 3, 15, 0, fit).lo, bm.decide(unsure, 3, 15, 0, fit).hi) == (3, 15)
    # a threshold out of [0, 1] never rules
    never = replace(fit, sure=(2.0,) * 4, unsure=(-1.0,) * 4, cue_sure=2.0)
    assert bm.decide(sure, 0, 15, 0, never) == bm.BreakDecision(0, 15, None, sure)


def test_a_break_unlike_every_training_break_is_not_decided():
    x = bm.features([], START, 0, 0)  # no rail hit at all: no training break was like it
    assert not bm.seen(x, POWER) and not bm.seen(x, SAFE)
    shot = _shot([])
    assert bm.decide_shot(shot, 0, 10, "10-ball").lo == 0
    assert bm.decide_shot(shot, 0, 10, "10-ball").hi == 10


def _shot(rails, ball_drops=()):
    return {
        "table": "t1",
        "start": START,
        "end": START + 9_000_000,
        "pocketed": [{"pocket": p, "ball": None, "t": START} for p in ball_drops],
        "rails": [{"t": t, "rail": r, "amp": a, "source": "sensed"} for t, r, a in rails],
        "object_balls_to_rail": 3,
        "object_balls_to_rail_range": [0, 10],
        "warnings": [],
        "clicks": 0,
        "strike": None,
    }


def test_shot_input_carries_the_model_only_on_a_break():
    shot = _shot([(START + 200_000 + i * 90_000, RAILS[i % 6], 900) for i in range(12)])
    state = {"breaking": True, "balls_on_table": list(range(1, 11)), "game": "10-ball"}
    inp = shot_input(shot, "warn", state)
    d = bm.decide_shot(shot, 0, 10, "10-ball")
    assert inp["comment"] == f"break model: {d.confidence.text()}"
    assert inp["object_balls_to_rail_range"] == [d.lo, d.hi]
    assert d.lo <= inp["object_balls_to_rail"] <= d.hi
    assert ("cue_ball_to_rail" in inp) == (d.cue_ball_to_rail is not None)
    assert ("cue_ball_to_rail" in inp["uncertain"]) == (d.cue_ball_to_rail is None)
    later = shot_input(shot, "warn", dict(state, breaking=False))
    assert "comment" not in later and "object_balls_to_rail" not in later
