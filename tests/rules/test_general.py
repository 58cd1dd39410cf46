"""General rules 21-42 of the third seed (BCA-derived, read through WPA), the match layer
(lag, race, break order of general 35, match winner) and general 29."""

import pytest

from railbird.rules import BadInput, OutOfTurn
from rulehelp import MISS, call, feed, match, rules_of, shot


def ten_after_break(**kw):
    r = match(**kw)
    feed(r, shot("2SL"))  # Ann continues
    return r


@pytest.mark.parametrize("item", [21, 22, 23, 24, 25, 39, 40])
def test_general_standard_fouls_declared_by_referee(item):
    """21 placing, 22 double hit, 23 push shot, 24 equipment, 25 scoop jump, 39 stroke on
    ball in hand, 40 interference: standard fouls, cited by their general number."""
    r = ten_after_break()
    out = feed(r, shot("1FL", fouls=[f"general {item}"]))
    assert f"general {item}" in rules_of(out)
    assert out["at_table"] == "Bob" and out["ball_in_hand"] == "anywhere"
    assert out["consecutive_fouls"]["Ann"] == 1


def test_general_21_touching_ball_while_placing_in_14_1_costs_a_point():
    r = match("14.1")
    feed(r, call(5, "FL"), shot("5FL"))
    out = feed(r, shot(fouls=["general 21"]))
    assert out["scores"]["Ann"] == 0 and out["ball_in_hand"] is None


def test_general_22_double_hit():
    r = ten_after_break()
    assert "general 22" in rules_of(feed(r, shot(fouls=["general 22"])))


def test_general_23_push_shot():
    r = ten_after_break()
    assert feed(r, shot(fouls=["general 23"]))["ball_in_hand"] == "anywhere"


def test_general_24_dropped_chalk_touching_ball():
    r = ten_after_break()
    assert feed(r, shot(fouls=["general 24"]))["consecutive_fouls"]["Ann"] == 1


def test_general_25_scooped_jump_shot():
    r = ten_after_break()
    assert feed(r, shot(fouls=["general 25"]))["at_table"] == "Bob"


def test_general_26_jump_miscue_is_not_a_foul_under_wpa():
    r = ten_after_break()
    out = feed(r, call(1, "FL"), shot("1FL", fouls=["general 26"]))
    assert out["at_table"] == "Ann" and out["consecutive_fouls"]["Ann"] == 0
    assert "general 26" in rules_of(out)


def test_general_26_jump_miscue_is_a_foul_with_bca_option():
    r = ten_after_break(options=["bca_jump_miscue_foul"])
    out = feed(r, call(1, "FL"), shot("1FL", fouls=["general 26"]))
    assert out["at_table"] == "Bob" and out["ball_in_hand"] == "anywhere"


def test_general_27_ball_off_table_is_a_foul_spotted_per_game():
    r = match("14.1")
    feed(r, call(5, "FL"), shot("5FL"))
    out = feed(r, call(1, "FL"), shot(off_table=[4]))
    assert out["to_spot"] == [4] and out["scores"]["Ann"] == 0  # 14.1: spotted
    r = ten_after_break()
    out = feed(r, shot(off_table=[4]))
    assert out["to_spot"] == [] and 4 in out["pocketed"]  # 10-ball: not spotted
    # ... but a foul in every game (9.10 item 5): ball in hand for the opponent
    assert out["at_table"] == "Bob" and out["ball_in_hand"] == "anywhere"
    assert out["consecutive_fouls"]["Ann"] == 1
    out = feed(r, shot(fouls=["general 27"]))
    assert "general 27" in rules_of(out)


def test_general_28_intentional_foul_warning_then_loss_of_match():
    r = ten_after_break()
    out = feed(r, shot(fouls=["general 28"]))
    assert "general 28" in rules_of(out) and out["match_winner"] is None
    feed(r, call(1, "FL"), MISS)  # Bob
    out = feed(r, shot(fouls=["general 28"]))
    assert out["match_winner"] == "Bob"


def test_general_29_several_fouls_one_penalty():
    r = match("14.1")
    feed(r, call(5, "FL"), shot("5FL"))
    out = feed(r, shot("0FL", off_table=[3], fouls=["6.6"]))
    assert "general 29" in rules_of(out)
    assert out["scores"]["Ann"] == 0 and out["consecutive_fouls"]["Ann"] == 1  # one foul, -1
    assert out["ball_in_hand"] == "kitchen"  # the scratch decides where the cue ball goes


def test_general_29_serious_beats_standard():
    r = ten_after_break()
    out = feed(r, shot("0FL", fouls=["6.16"]))
    assert out["rack_winner"] == "Bob"


def test_general_30_hanging_ball_dropping_after_five_seconds_is_restored():
    r = ten_after_break()
    out = feed(
        r,
        {
            "type": "shot",
            "pocketed": [{"ball": 4, "pocket": "SR", "rested_us": 5_000_001}],
            "first_contact": 1,
        },
    )
    assert 4 in out["balls_on_table"] and "general 30" in rules_of(out)
    assert out["at_table"] == "Bob"  # a stroke that pocketed nothing: miss
    # without any fact of a stroke it is only a ball settling: not a shot (test_review.py)


def test_general_30_hanging_ball_within_five_seconds_counts():
    r = ten_after_break()
    out = feed(
        r, {"type": "shot", "pocketed": [{"ball": 1, "pocket": "SR", "rested_us": 5_000_000}]}
    )
    assert 1 in out["pocketed"] and out["at_table"] == "Ann"


def test_general_30_threshold_is_an_option():
    r = ten_after_break(options={"hanging_ball_us": 1_000_000})
    out = feed(
        r, {"type": "shot", "pocketed": [{"ball": 1, "pocket": "SR", "rested_us": 2_000_000}]}
    )
    assert 1 in out["balls_on_table"]


def test_general_30_ball_dropping_during_shot_replayed():
    r = ten_after_break()
    before = r.state
    out = feed(r, shot("1FL", replay="general 30"))
    assert "general 30" in rules_of(out) and r.state == before


def test_general_31_several_balls_spotted_lowest_nearest_foot_spot():
    r = match("14.1")
    feed(r, call(5, "FL"), shot("5FL"))
    out = feed(r, call(1, "FL"), shot("12SR", "3HL", "7FR"))
    assert out["to_spot"] == [3, 7, 12]
    assert any("lowest number nearest the foot spot" in x["text"] for x in out["rulings"])
    out = feed(r, call(3, "SL"), shot("3SL"))  # spotted before Bob's shot
    assert {7, 12} <= set(out["balls_on_table"]) and out["to_spot"] == []


def test_general_31_single_ball_on_foot_spot():
    r = ten_after_break()
    out = feed(r, shot("10FL", "0SL"))
    assert any("foot spot" in x["text"] for x in out["rulings"] if x["rule"] == "9.9")


def test_general_32_jammed_ball_counts_as_pocketed():
    r = ten_after_break()
    out = feed(r, {"type": "shot", "pocketed": [{"ball": 1, "pocket": "FL", "jammed": True}]})
    assert 1 in out["pocketed"] and "general 32" in rules_of(out) and out["at_table"] == "Ann"


def test_general_33_extra_balls_count_on_legal_shot():
    r = match("14.1")
    feed(r, call(5, "FL"), shot("5FL"))
    out = feed(r, call(1, "FL"), shot("1FL", "2FR"))
    assert out["scores"]["Ann"] == 3 and "general 33" in rules_of(out)


def test_general_34_interference_restored_replay_shot():
    r = ten_after_break()
    before = r.state
    out = feed(r, shot(replay=True))
    assert r.state == before and "general 34" in rules_of(out)


def test_general_34_unrestorable_interference_replays_rack_same_breaker():
    r = ten_after_break()
    out = feed(r, {"type": "interference"})
    assert (
        out["breaker"] == "Ann" and out["breaking"] and out["balls_on_table"] == list(range(1, 11))
    )


@pytest.mark.parametrize(
    ("order", "breaker"),
    [("alternate", "Bob"), ("winner", "Ann"), ("loser", "Bob"), ("trailing", "Bob")],
)
def test_general_35_break_order_options(order, breaker):
    r = match(break_order=order)
    out = feed(r, shot("2SL"), call(10, "FL"), shot("10FL"))
    assert out["rack_winner"] == "Ann" and out["breaker"] == breaker


def test_general_35_trailing_tie_falls_back_to_alternate():
    r = match(break_order="trailing", lag="Ann", breaker="Bob")
    feed(r, shot("2SL"), call(10, "FL"), shot("10FL"))  # Bob wins rack 1, Ann trails
    out = feed(r, shot("2SL"), call(10, "FL"), shot("10FL"))  # Ann wins rack 2: 1-1
    assert out["breaker"] == "Bob"  # tie: alternate after Ann's break


def test_general_36_inning_ends_on_miss_next_player_from_position():
    r = ten_after_break()
    inning = r.state.inning
    out = feed(r, call(1, "FL"), MISS)
    assert out["at_table"] == "Bob" and out["ball_in_hand"] is None
    assert out["inning"] == inning + 1


def test_general_37_frozen_ball_no_rail_is_a_foul():
    r = ten_after_break()
    out = feed(r, shot(fouls=["general 37"]))
    assert "general 37" in rules_of(out) and out["ball_in_hand"] == "anywhere"


def test_general_37_no_rail_after_contact_reported_by_sensors():
    r = ten_after_break()
    out = feed(r, shot(rail_after_contact=False))
    assert "9.10.3" in rules_of(out)


def test_general_38_cue_ball_not_leaving_kitchen_14_1():
    r = match("14.1")
    feed(r, call(5, "FL"), shot("5FL", "0SR"))  # Ann scratches; Bob in hand in the kitchen
    out = feed(r, shot(fouls=["general 38"]))
    assert out["ball_in_hand"] == "kitchen" and out["at_table"] == "Ann"


def test_general_39_stroke_touching_ball_in_hand():
    r = ten_after_break()
    feed(r, shot("0FL"))  # Bob in hand
    out = feed(r, shot(fouls=["general 39"]))
    assert out["at_table"] == "Ann" and out["consecutive_fouls"]["Bob"] == 1


def test_general_40_interference_out_of_turn():
    r = ten_after_break()
    out = feed(r, shot(fouls=["general 40"]))
    assert out["at_table"] == "Bob"
    # An input while a decision is pending is refused, not a foul.
    feed(r, call(1, "FL"), shot("5SL"))
    with pytest.raises(OutOfTurn):
        r.feed(MISS)


@pytest.mark.parametrize("item", [41, 42])
def test_general_41_42_unsportsmanlike_serious_penalty(item):
    r = ten_after_break()
    out = feed(r, shot(fouls=[f"general {item}"]))
    assert out["rack_winner"] == "Bob" and f"general {item}" in rules_of(out)


def test_general_41_measuring_device():
    r = match("14.1")
    feed(r, call(5, "FL"), shot("5FL"))
    out = feed(r, shot(fouls=["general 41"]))
    assert out["scores"]["Ann"] == 1 - 16 and out["breaking"]


def test_general_42_illegal_marking():
    r = ten_after_break()
    assert feed(r, shot(fouls=["general 42"]))["scores"]["Bob"] == 1


def test_general_unknown_declared_rule_refused():
    r = ten_after_break()
    with pytest.raises(BadInput):
        r.feed(shot(fouls=["general 99"]))
    with pytest.raises(BadInput):
        r.feed(shot(fouls=["6.14"]))


def test_match_race_to_n_and_match_winner():
    r = match(race_to=2)
    feed(r, shot("2SL"), call(10, "FL"), shot("10FL"))  # Ann 1-0, Bob breaks
    out = feed(
        r, shot(object_balls_to_rail=4), call(1, "FL"), shot("1FL"), call(10, "FR"), shot("10FR")
    )  # Ann wins rack 2
    assert out["match_winner"] == "Ann" and out["scores"] == {"Ann": 2, "Bob": 0}
    with pytest.raises(OutOfTurn):
        r.feed(MISS)


def test_match_lag_required_first():
    r = match(lag=None)
    assert r.state_json()["awaiting"] == "lag"
    with pytest.raises(OutOfTurn):
        r.feed(MISS)
    with pytest.raises(BadInput):
        r.feed({"type": "lag", "winner": "Zed"})


def test_match_undo_restores_previous_state():
    r = ten_after_break()
    before = r.state_json()
    feed(r, call(1, "FL"), shot("1FL"))
    r.feed({"type": "undo"})
    out = r.feed({"type": "undo"})
    assert out["balls_on_table"] == before["balls_on_table"] and out["fen"] == before["fen"]


def test_match_unsensed_ball_identity_presumed_called_ball():
    r = ten_after_break()
    out = feed(r, call(3, "SR"), shot("?SR", first_contact=1))
    assert 3 in out["pocketed"] and out["at_table"] == "Ann" and "8.3" in rules_of(out)


def test_match_null_optional_fact_means_not_reported():
    r = match()
    out = feed(
        r,
        {"type": "shot", "pocketed": [], "object_balls_to_rail": None, "rail_after_contact": None},
    )
    assert out["ball_in_hand"] is None and out["at_table"] == "Bob"  # presumed legal break


# -- a sensed estimate of object balls to a rail (REFEREE.md §2, §3a) ---------------------------
def test_rule_1_10_sensed_break_estimate_above_the_table_is_bounded_10_ball():
    """A real 10-ball break burst: the rail sensors count more clusters than there are balls.
    Flagged uncertain it is an estimate: bounded (1.10), ruled, never impossible input."""
    from railbird.rules import ImpossibleInput
    from rulehelp import match, shot

    r = match("10-ball")
    with pytest.raises(ImpossibleInput):  # a certain fact above the table stays impossible
        r.feed(shot(object_balls_to_rail=14))
    out = r.feed(shot(object_balls_to_rail=15, uncertain=["object_balls_to_rail"]))
    assert any(x["rule"] == "1.10" and "taken as 10" in x["text"] for x in out["rulings"])
    assert not any(x["text"].startswith("Foul") for x in out["rulings"])
    assert out["at_table"] == "Bob" and out["unconfirmed"] == ["object_balls_to_rail"]


def test_rule_1_10_sensed_break_estimate_bounded_by_balls_not_pocketed_14_1():
    from rulehelp import match, shot

    r = match("14.1")
    out = r.feed(shot("?FL", "?SR", object_balls_to_rail=15, uncertain=["object_balls_to_rail"]))
    assert any("taken as 13" in x["text"] for x in out["rulings"])
    assert not any(x["text"].startswith("Foul") for x in out["rulings"])
    # the referee may correct the estimate: too few balls to a rail -> breaking foul (4.3.2)
    r = match("14.1")
    r.feed(shot(object_balls_to_rail=12, uncertain=["object_balls_to_rail"]))
    out = r.feed({"type": "confirm", "object_balls_to_rail": 1, "cue_ball_to_rail": True})
    assert "4.3.2" in [x["rule"] for x in out["rulings"]] and out["scores"]["Ann"] == -2
    assert out["unconfirmed"] == []
