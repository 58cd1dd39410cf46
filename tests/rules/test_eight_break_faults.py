"""Eight-ball 3.3, the break, when it has a fault the general pipeline used to rule away
(issue 22). The rule, as the engine follows it:

- an illegal break (no ball pocketed and fewer than four object balls to a rail): the
  incoming player accepts the table, or re-racks and breaks, or has the breaker break again;
- an object ball jumped off the table on the break: a foul; the ball stays out (the 8 is
  spotted, 3.7) and the incoming player accepts the table in position or takes cue ball in
  hand behind the head string;
- any other foul on the break: cue ball in hand behind the head string.

A break with two faults keeps the incoming player's choices of both: the breaker gains
nothing from fouling twice. Which fault decides is the rule's order, not the order the
engine happens to find them in (general 29 ranks by grade)."""

from __future__ import annotations

import itertools

import pytest

from railbird.rules import RulesError
from railbird.rules.engine import GAMES
from railbird.rules.inputs import parse_shot
from railbird.rules.valid import valid_inputs
from rulehelp import feed, match, opt, shot

ILLEGAL = "illegal break: no ball pocketed and fewer than four object balls to a rail"


def choices(r):
    return next(v["choices"] for v in valid_inputs(r.state) if v["type"] == "option")


# -- (1) an object ball jumped off the table on the break -------------------------------------
def test_jumped_ball_gives_the_incoming_player_table_or_kitchen():
    r = match("8-ball")
    out = feed(r, shot("3FL", off_table=[5], object_balls_to_rail=4))
    assert out["awaiting"] == "accept_or_kitchen" and out["at_table"] == "Bob"
    assert out["ball_in_hand"] is None and 5 in out["pocketed"]  # stays out (3.7)
    assert choices(r) == ["accept", "kitchen"]
    assert (
        "accepts the table in position, or takes cue ball in hand behind the head string"
        in (out["rulings"][-1]["text"])
    )


def test_jumped_ball_accept_keeps_the_table_in_position():
    r = match("8-ball")
    feed(r, shot(off_table=[5], object_balls_to_rail=4))
    out = feed(r, opt("accept"))
    assert out["awaiting"] is None and out["ball_in_hand"] is None and out["at_table"] == "Bob"


def test_jumped_ball_kitchen_gives_cue_ball_in_hand_behind_the_head_string():
    r = match("8-ball")
    feed(r, shot(off_table=[5], object_balls_to_rail=4))
    out = feed(r, opt("kitchen"))
    assert out["awaiting"] is None and out["ball_in_hand"] == "kitchen"
    assert out["at_table"] == "Bob"


def test_jumped_ball_refuses_the_re_rack_choices():
    r = match("8-ball")
    feed(r, shot(off_table=[5], object_balls_to_rail=4))
    for c in ("break", "rebreak", "spot"):
        with pytest.raises(RulesError):
            r.feed(opt(c))


def test_the_eight_jumped_off_on_the_break_is_spotted_and_the_choice_offered():
    r = match("8-ball")
    out = feed(r, shot(off_table=[8], object_balls_to_rail=5))
    assert out["to_spot"] == [8] and out["awaiting"] == "accept_or_kitchen"


def test_jumped_ball_with_a_scratch_is_ball_in_hand_behind_the_head_string():
    # no cue ball is left in position to accept: the other remedy is all there is
    r = match("8-ball")
    out = feed(r, shot("0SL", off_table=[5], object_balls_to_rail=4))
    assert out["awaiting"] is None and out["ball_in_hand"] == "kitchen"


# -- (2) an illegal break that also scratches ---------------------------------------------------
def test_illegal_break_with_a_scratch_keeps_the_three_choices():
    r = match("8-ball")
    out = feed(r, shot("0SL", object_balls_to_rail=1))
    assert out["awaiting"] == "accept_or_break" and out["at_table"] == "Bob"
    assert choices(r) == ["accept", "break", "rebreak"]
    # the scratch's own penalty is kept too: accepting, he has the cue ball in hand
    assert out["ball_in_hand"] == "kitchen"
    texts = [x["text"] for x in out["rulings"]]
    assert f"Foul on the break by Ann: {ILLEGAL}" in texts
    assert any("penalised: " + ILLEGAL in t for t in texts)  # general 29 picks 3.3


def test_illegal_break_with_a_scratch_accept_keeps_ball_in_hand():
    r = match("8-ball")
    feed(r, shot("0SL", object_balls_to_rail=1))
    out = feed(r, opt("accept"))
    assert out["awaiting"] is None and out["ball_in_hand"] == "kitchen"
    assert out["at_table"] == "Bob"


@pytest.mark.parametrize(("choice", "breaker"), [("break", "Bob"), ("rebreak", "Ann")])
def test_illegal_break_with_a_scratch_re_rack(choice, breaker):
    r = match("8-ball")
    feed(r, shot("0SL", object_balls_to_rail=1))
    out = feed(r, opt(choice))
    assert out["breaking"] and out["at_table"] == breaker
    assert out["balls_on_table"] == list(range(1, 16)) and out["ball_in_hand"] == "kitchen"


def test_illegal_break_with_a_jumped_ball_keeps_the_three_choices():
    r = match("8-ball")
    out = feed(r, shot(off_table=[3], object_balls_to_rail=1))
    assert out["awaiting"] == "accept_or_break" and out["ball_in_hand"] == "kitchen"


def test_plain_illegal_break_is_unchanged():
    r = match("8-ball")
    out = feed(r, shot(object_balls_to_rail=2))
    assert out["awaiting"] == "accept_or_break" and out["ball_in_hand"] is None
    out = feed(r, opt("accept"))
    assert out["ball_in_hand"] is None and out["at_table"] == "Bob"


# -- (3) a break that touches no ball ----------------------------------------------------------
@pytest.mark.parametrize("rails", [None, 0])
def test_break_touching_no_ball_keeps_the_three_choices(rails):
    r = match("8-ball")
    facts = {"first_contact": None}
    if rails is not None:
        facts["object_balls_to_rail"] = rails
    out = feed(r, shot(**facts))
    assert out["awaiting"] == "accept_or_break" and out["at_table"] == "Bob"
    assert out["ball_in_hand"] == "kitchen"  # 6.3's penalty, kept on accepting
    texts = [x["text"] for x in out["rulings"]]
    assert f"Foul on the break by Ann: {ILLEGAL}" in texts
    # nothing was touched: no "presumed at least four" default is claimed
    assert not any("presumed at least four" in t for t in texts)


# -- the rule decides, not the order of detection -------------------------------------------
def test_illegal_break_wins_over_any_other_break_foul_in_any_order():
    eight = GAMES["8-ball"]
    st = match("8-ball").state
    for facts in (
        {"pocketed": [{"ball": 0, "pocket": "SL"}], "object_balls_to_rail": 1},
        {"first_contact": None, "object_balls_to_rail": 0},
        {"off_table": [3], "object_balls_to_rail": 1},
    ):
        fouls = eight.detect_fouls(st, parse_shot({"type": "shot", **facts}))
        assert len(fouls) == 2, facts
        for order in itertools.permutations(fouls):
            assert eight.most_serious(list(order), []).rule == "3.3", (facts, order)
