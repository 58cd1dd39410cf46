"""The rating fit's invariants (docs/events.md, "Ratings"): the formula's scale, that the
order of the results does not matter, that relabelling the players relabels their ratings,
that a player who wins every rack against a field rates above all of it, that a player
without racks keeps the starter and one with racks moves from it, and that the fit is the
maximum of the likelihood with its prior (the gradient is zero there)."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings, strategies as st

from railbird.competition import handicap
from railbird.competition.errors import InvalidName
from railbird.competition.ratings import (
    DEFAULT_STARTER,
    ESTABLISHED_RACKS,
    PRIOR_RACKS,
    RackResult,
    expected,
    fit,
)
from tests.fuzz.budget import examples

PLAYERS = st.integers(1, 12)
RESULTS = st.lists(
    st.builds(RackResult, PLAYERS, PLAYERS, st.integers(0, 9), st.integers(0, 9)),
    max_size=40,
)
STARTERS = st.dictionaries(PLAYERS, st.none() | st.integers(200, 900), max_size=12)


def test_100_points_are_2_to_1_odds_per_rack():
    assert expected(600, 500) == pytest.approx(2 / 3)
    assert expected(700, 500) == pytest.approx(4 / 5)
    assert expected(500, 500) == 0.5
    assert expected(400, 500) == pytest.approx(1 / 3)


def test_two_to_one_over_many_racks_gives_100_points():
    """With the prior outweighed (thousands of racks), 2:1 in racks is 100 points apart."""
    r = fit([RackResult(1, 2, 2000, 1000)])
    assert r[1].rating - r[2].rating == pytest.approx(100, abs=1.0)
    assert r[1].rating + r[2].rating == pytest.approx(2 * DEFAULT_STARTER, abs=0.2)
    assert r[1].established and r[1].racks == 3000 and r[1].won == 2000


def test_a_newcomer_moves_from_the_starter_and_is_established_after_enough_racks():
    few = fit([RackResult(1, 2, 5, 0)], {1: 400, 2: 600})
    assert 400 < few[1].rating < 600 and not few[1].established
    assert fit([], {3: 450})[3].rating == 450
    many = fit([RackResult(1, 2, 9, 9)] * (ESTABLISHED_RACKS // 18 + 1), {1: 400, 2: 600})
    assert many[1].established and many[1].rating > few[1].rating - 1


@settings(max_examples=examples("competition.ratings.order", 40), deadline=None)
@given(results=RESULTS, starters=STARTERS, seed=st.integers(0, 2**32))
def test_the_order_of_results_does_not_matter(results, starters, seed):
    shuffled = list(results)
    random.Random(seed).shuffle(shuffled)
    # a match written from the other side is the same match
    flipped = [RackResult(r.b, r.a, r.won_b, r.won_a) for r in shuffled]
    assert fit(results, starters) == fit(shuffled, starters) == fit(flipped, starters)


@settings(max_examples=examples("competition.ratings.relabel", 40), deadline=None)
@given(results=RESULTS, starters=STARTERS, seed=st.integers(0, 2**32))
def test_relabelling_players_relabels_their_ratings(results, starters, seed):
    """Symmetric: the fit does not care who is called what (nor which ids come first)."""
    ids = list(range(1, 13))
    new = list(range(101, 113))
    random.Random(seed).shuffle(new)
    to = dict(zip(ids, new, strict=True))
    moved = [RackResult(to[r.a], to[r.b], r.won_a, r.won_b) for r in results]
    before = fit(results, starters)
    after = fit(moved, {to[p]: v for p, v in starters.items()})
    assert {to[p]: (r.rating, r.racks, r.won) for p, r in before.items()} == {
        p: (r.rating, r.racks, r.won) for p, r in after.items()
    }
    # mirrored: every rack won becomes a rack lost, every starter reflected about 500
    mirror = [RackResult(r.a, r.b, r.won_b, r.won_a) for r in results]
    reflected = {p: None if v is None else 1000 - v for p, v in starters.items()}
    back = fit(mirror, reflected)
    for p, r in before.items():
        assert back[p].rating == pytest.approx(1000 - r.rating, abs=0.11)


@settings(max_examples=examples("competition.ratings.field", 40), deadline=None)
@given(
    field=st.lists(st.integers(300, 800), min_size=1, max_size=6),
    among=st.lists(
        st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 9), st.integers(0, 9)),
        max_size=30,
    ),
    starter=st.none() | st.integers(200, 900),
    racks=st.integers(PRIOR_RACKS, 60),
)
def test_a_player_who_wins_every_rack_against_a_rated_field_rates_above_it(
    field, among, starter, racks
):
    """Player 0 won all `racks` (at least the prior's weight) against each of the field,
    who played each other any way: 0 rates above every one of them."""
    n = len(field)
    results = [RackResult(0, i + 1, racks, 0) for i in range(n)]
    results += [RackResult(a % n + 1, b % n + 1, wa, wb) for a, b, wa, wb in among]
    starters = {i + 1: r for i, r in enumerate(field)} | {0: starter}
    r = fit(results, starters)
    assert all(r[0].rating > r[i + 1].rating for i in range(n)), r


@settings(max_examples=examples("competition.ratings.optimum", 40), deadline=None)
@given(results=RESULTS, starters=STARTERS)
def test_the_fit_is_where_the_likelihood_with_its_prior_is_flat(results, starters):
    """The formula in the docs, checked directly: for every player, racks won plus half
    the prior equal the racks expected at the fitted ratings."""
    r = fit(results, starters)
    won = dict.fromkeys(r, PRIOR_RACKS / 2)
    exp = {p: PRIOR_RACKS * expected(r[p].rating, r[p].starter) for p in r}
    for x in results:
        if x.a == x.b or x.won_a + x.won_b == 0:
            continue
        n = x.won_a + x.won_b
        won[x.a] += x.won_a
        won[x.b] += x.won_b
        exp[x.a] += n * expected(r[x.a].rating, r[x.b].rating)
        exp[x.b] += n * expected(r[x.b].rating, r[x.a].rating)
    for p in r:
        # the ratings are rounded to 0.1: the gradient is within what that moves
        slack = (PRIOR_RACKS + r[p].racks) * 0.05 * math.log(2) / 100 + 1e-6
        assert won[p] == pytest.approx(exp[p], abs=slack)


def test_results_that_count_nothing_are_ignored():
    assert fit([RackResult(1, 1, 3, 0), RackResult(1, 2, 0, 0)]) == {}
    with pytest.raises(ValueError, match="at least one rack"):
        fit([], prior_racks=0)


# -- the handicap chart ------------------------------------------------------------------------
CHART = "0:5-5 50:5-4 100:5-3 150:6-3"


def test_the_chart_gives_the_races_of_a_gap():
    c = handicap.parse(CHART)
    assert c.races(500, 500) == (5, 5)
    assert c.races(620, 500) == (5, 3)  # 120: the band of 100-149
    assert c.races(500, 620) == (3, 5)  # in the players' order
    assert c.races(549.9, 500) == (5, 5) and c.races(550, 500) == (5, 4)
    assert c.races(900, 100) == (6, 3)
    assert handicap.parse(c.text()) == c
    assert handicap.parse("0:5-5, 50:5-4") == handicap.parse(" 0:5-5  50:5-4 ")


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("", "at least one band"),
        ("10:5-5", "starts at a gap of 0"),
        ("0:5-5 50:5-4 40:5-3", "gaps rise"),
        ("0:5-5 50:4-5", "the stronger's no shorter"),
        ("0:5-4 50:5-5", "no longer race"),
        ("0:5-5 x", "GAP:STRONGER-WEAKER"),
        ("0:0-0", "races from 1"),
    ],
)
def test_a_chart_that_makes_no_sense_is_refused(spec, why):
    with pytest.raises(InvalidName, match=why):
        handicap.parse(spec)


@settings(max_examples=examples("competition.handicap", 40), deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.integers(1, 300), st.integers(0, 2), st.integers(0, 1)), max_size=8
    ),
    base=st.integers(1, 9),
    ra=st.floats(0, 2000),
    rb=st.floats(0, 2000),
)
def test_a_wider_gap_never_helps_the_weaker_player(steps, base, ra, rb):
    """Any chart the parser accepts: races for a gap are monotone, and symmetric in the
    players' order."""
    bands, gap, strong, weak = [f"0:{base}-{base}"], 0, base, base
    for dgap, dlead, dweak in steps:
        gap, weak = gap + dgap, max(1, weak - dweak)
        strong = min(handicap.MAX_RACE, max(strong, weak) + dlead)
        if strong - weak < int(bands[-1].split(":")[1].split("-")[0]) - int(
            bands[-1].split("-")[1]
        ):
            continue
        bands.append(f"{gap}:{strong}-{weak}")
    c = handicap.parse(" ".join(bands))
    lo, hi = sorted((ra, rb))
    s1, w1 = c.races(hi, lo)
    s2, w2 = c.races(hi + 50, lo)
    assert w2 <= w1 and s2 - w2 >= s1 - w1
    assert c.races(ra, rb) == tuple(reversed(c.races(rb, ra))) or ra == rb
