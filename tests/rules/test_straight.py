"""14.1 continuous, seed section 4: one test (at least) per rule, named after it."""

import pytest

from railbird.rules import OutOfTurn, RulesError
from rulehelp import MISS, SAFETY, call, feed, match, opt, rules_of, shot


def broken(**kw):
    """Ann breaks legally with a called 5 in FL (5 points short of nothing)."""
    r = match("14.1", **kw)
    feed(r, call(5, "FL"), shot("5FL"))
    return r


def run_down(r, balls, pocket="FL"):
    out = None
    for b in balls:
        out = feed(r, call(b, pocket), shot(f"{b}{pocket}"))
    return out


def test_rule_4_intro_one_point_per_ball_and_target_wins():
    r = match("14.1", target=3)
    feed(r, call(5, "FL"), shot("5FL"))
    out = run_down(r, [1, 2])
    assert out["scores"]["Ann"] == 3 and out["match_winner"] == "Ann"
    with pytest.raises(OutOfTurn):
        r.feed(call(3, "FL"))


def test_rule_4_1_lag_winner_chooses_who_breaks():
    r = match("14.1", lag="Ann", breaker="Bob")
    out = r.state_json()
    assert out["at_table"] == "Bob" and "4.1" in rules_of(out)


def test_rule_4_2_opening_rack_is_fifteen_balls():
    out = match("14.1").state_json()
    assert out["balls_on_table"] == list(range(1, 16)) and out["ball_in_hand"] == "kitchen"


def test_rule_4_3_1_break_from_kitchen_with_a_call():
    r = match("14.1")
    out = feed(r, call(3, "SL"))
    assert out["call"] == {"ball": 3, "pocket": "SL"} and out["ball_in_hand"] == "kitchen"


def test_rule_4_3_2_cue_ball_and_two_object_balls_to_rail_is_legal():
    r = match("14.1")
    out = feed(r, shot(object_balls_to_rail=2, cue_ball_to_rail=True))
    assert out["scores"] == {"Ann": 0, "Bob": 0} and out["at_table"] == "Bob"
    assert out["awaiting"] is None


def test_rule_4_3_2_breaking_foul_minus_two_and_opponent_option():
    r = match("14.1")
    out = feed(r, shot(object_balls_to_rail=1, cue_ball_to_rail=True))
    assert out["scores"]["Ann"] == -2 and out["awaiting"] == "accept_or_rebreak"
    assert out["at_table"] == "Bob" and out["consecutive_fouls"]["Ann"] == 0
    out = feed(r, opt("rebreak"))
    assert out["at_table"] == "Ann" and out["breaking"] and out["ball_in_hand"] == "kitchen"
    out = feed(r, shot(object_balls_to_rail=0, cue_ball_to_rail=False))
    assert out["scores"]["Ann"] == -4  # -2 each time
    out = feed(r, opt("accept"))
    assert out["at_table"] == "Bob" and out["awaiting"] is None and not out["breaking"]


def test_rule_4_3_2_uncalled_ball_does_not_meet_requirement():
    r = match("14.1")
    out = feed(r, shot("7FR", object_balls_to_rail=1, cue_ball_to_rail=False))
    assert out["scores"]["Ann"] == -2 and out["to_spot"] == [7]
    r = match("14.1", options=["thai_4_3_any_ball"])
    out = feed(r, shot("7FR", object_balls_to_rail=1, cue_ball_to_rail=False))
    assert out["scores"]["Ann"] == 0 and out["to_spot"] == [7]  # Thai: met; uncalled -> spot


def test_rule_4_4_rerack_of_fourteen_and_continue():
    r = broken()
    out = run_down(r, [1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14])
    assert out["scores"]["Ann"] == 14 and out["balls_on_table"] == [15]
    assert out["awaiting"] == "rerack" and out["at_table"] == "Ann"
    out = feed(r, {"type": "rerack"})
    assert out["balls_on_table"] == list(range(1, 16)) and out["rack"] == 2
    assert out["awaiting"] is None and out["ball_in_hand"] is None
    out = feed(r, call(15, "SR"), shot("15SR", "3FL"))
    assert out["scores"]["Ann"] == 16 and out["run"]["Ann"] == 16


def test_rule_4_4_call_without_rerack_answer_means_no_interference():
    r = broken()
    run_down(r, [1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14])
    out = feed(r, call(15, "HL"))
    assert out["balls_on_table"] == list(range(1, 16)) and "4.8" in rules_of(out)


def test_rule_4_5_safety_balls_spotted_no_points():
    r = broken()
    out = feed(r, SAFETY, shot("2SL"))
    assert out["to_spot"] == [2] and out["scores"]["Ann"] == 1 and out["at_table"] == "Bob"


def test_rule_4_6_miss_spots_pocketed_balls_in_order():
    r = broken()
    out = feed(r, call(1, "FL"), shot("9SR", "3HL"))
    assert out["to_spot"] == [3, 9] and out["at_table"] == "Bob"
    assert any("general 31" in x["text"] for x in out["rulings"] if x["rule"] == "4.6")


def test_rule_4_6_fifteenth_ball_on_apex_note_after_rerack():
    r = broken()
    run_down(r, [1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14])
    feed(r, {"type": "rerack"})
    out = feed(r, call(15, "FL"), shot("15SR"))
    assert out["to_spot"] == [15] and any("(4.6)" in x["text"] for x in out["rulings"])


def test_rule_4_7_every_other_ball_on_legal_shot_counts():
    r = broken()
    out = feed(r, call(1, "FL"), shot("1FL", "2SR", "9HL"))
    assert out["scores"]["Ann"] == 4 and out["to_spot"] == [] and "4.7" in rules_of(out)


def test_rule_4_7_score_can_go_negative():
    r = match("14.1")
    out = feed(r, shot(object_balls_to_rail=0, cue_ball_to_rail=False))
    assert out["scores"]["Ann"] == -2 and out["penalties"]["Ann"] == 2


def rack_to_last(**kw):
    r = broken(**kw)
    run_down(r, [1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14])
    return r


def test_rule_4_8_1_fifteenth_pocketed_with_fourteenth_reracks_fifteen():
    r = broken()
    run_down(r, [1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12])
    out = feed(r, call(13, "FL"), shot("13FL", "14SL", "15FR"))
    assert out["awaiting"] == "rerack" and out["balls_on_table"] == []
    out = feed(r, {"type": "rerack"})
    assert out["balls_on_table"] == list(range(1, 16)) and "4.8.1" in rules_of(out)
    assert out["ball_in_hand"] is None  # the cue ball stays where it is


def test_rule_4_8_1_with_cue_ball_in_rack_area_goes_to_kitchen():
    r = broken()
    run_down(r, [1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13])
    feed(r, call(14, "FL"), shot("14FL", "15SL"))
    out = feed(r, {"type": "rerack", "cue_ball_in_rack_area": True})
    assert out["ball_in_hand"] == "kitchen" and "4.8.1" in rules_of(out)


def test_rule_4_8_2_both_in_rack_area_rack_fifteen_cue_in_kitchen():
    r = rack_to_last()
    out = feed(r, {"type": "rerack", "cue_ball_in_rack_area": True, "ball_in_rack_area": True})
    assert out["ball_in_hand"] == "kitchen" and "4.8.2" in rules_of(out)
    assert out["balls_on_table"] == list(range(1, 16)) and out["at_table"] == "Ann"


def test_rule_4_8_3_only_ball_in_rack_area_goes_to_head_spot():
    r = rack_to_last()
    out = feed(r, {"type": "rerack", "ball_in_rack_area": True})
    texts = [x["text"] for x in out["rulings"] if x["rule"] == "4.8.3"]
    assert texts and "head spot" in texts[0] and out["ball_in_hand"] is None


def test_rule_4_8_3_thai_option_puts_ball_on_apex():
    r = rack_to_last(options=["thai_4_8_c_apex"])
    out = feed(r, {"type": "rerack", "ball_in_rack_area": True})
    assert any("apex" in x["text"] for x in out["rulings"] if x["rule"] == "4.8.3")


def test_rule_4_8_4_only_cue_ball_ball_below_head_string_kitchen():
    r = rack_to_last()
    out = feed(r, {"type": "rerack", "cue_ball_in_rack_area": True})
    assert out["ball_in_hand"] == "kitchen" and "4.8.4" in rules_of(out)


def test_rule_4_8_4_only_cue_ball_ball_behind_head_string_head_spot():
    r = rack_to_last()
    out = feed(
        r, {"type": "rerack", "cue_ball_in_rack_area": True, "ball_behind_head_string": True}
    )
    assert out["ball_in_hand"] is None
    assert any("head spot" in x["text"] for x in out["rulings"] if x["rule"] == "4.8.4")


def test_rule_4_8_rerack_only_when_due():
    r = broken()
    with pytest.raises(OutOfTurn):
        r.feed({"type": "rerack"})


def test_rule_4_9_1_scratch_minus_one_kitchen_and_balls_spotted():
    r = broken()
    out = feed(r, call(1, "FL"), shot("1FL", "0FR"))
    assert out["scores"]["Ann"] == 0 and out["to_spot"] == [1]
    assert out["ball_in_hand"] == "kitchen" and out["at_table"] == "Bob"


@pytest.mark.parametrize("n", [2, 3, 5, 6, 7, 8, 9, 11, 12, 13])
def test_rule_4_9_n_standard_foul_cue_ball_where_it_lies(n):
    r = broken()
    out = feed(r, call(1, "FL"), shot(fouls=[f"4.9.{n}"]))
    assert f"4.9.{n}" in rules_of(out) and out["scores"]["Ann"] == 0
    assert out["ball_in_hand"] is None and out["at_table"] == "Bob"


def test_rule_4_9_4_ball_off_table_spotted():
    r = broken()
    out = feed(r, call(1, "FL"), shot(off_table=[8, 2]))
    assert out["to_spot"] == [2, 8] and "4.9.4" in rules_of(out)


def test_rule_4_9_10_second_paragraph_gives_kitchen():
    r = broken()
    out = feed(r, shot(fouls=["6.11.2"]))
    assert out["ball_in_hand"] == "kitchen"
    r = broken()
    out = feed(r, shot(fouls=["4.9.10"]))
    assert out["ball_in_hand"] is None  # first paragraph: cue ball where it lies


def test_rule_4_9_six_two_is_not_a_foul_in_14_1():
    r = broken()
    with pytest.raises(RulesError):
        r.feed(shot(fouls=["6.2"]))


def test_rule_4_10_break_and_standard_foul_on_same_shot_is_minus_two():
    r = match("14.1")
    out = feed(r, shot("0FL", object_balls_to_rail=1, cue_ball_to_rail=False))
    assert out["scores"]["Ann"] == -2 and out["consecutive_fouls"]["Ann"] == 0
    assert out["ball_in_hand"] == "kitchen" and "4.10" in rules_of(out)


def test_rule_4_10_called_ball_made_with_scratch_is_standard_foul():
    r = match("14.1")
    out = feed(r, call(5, "FL"), shot("5FL", "0FR"))
    assert out["scores"]["Ann"] == -1 and out["consecutive_fouls"]["Ann"] == 1
    assert out["to_spot"] == [5] and out["awaiting"] is None


def three_fouls(**kw):
    r = broken(**kw)  # Ann 1
    feed(r, shot("0FL"))  # Ann foul 1 (0)
    feed(r, call(1, "SL"), MISS)  # Bob misses
    feed(r, shot(fouls=["6.6"]))  # Ann foul 2 (-1)
    out = feed(r, call(1, "SL"), MISS)  # Bob misses: Ann warned
    assert "6.14" in rules_of(out)
    return r, feed(r, shot("0FL"))  # Ann foul 3


def test_rule_4_11_third_foul_costs_sixteen_and_offender_rebreaks():
    _r, out = three_fouls()
    assert out["scores"]["Ann"] == 1 - 18 and out["penalties"]["Ann"] == 18
    assert out["consecutive_fouls"]["Ann"] == 0
    assert out["at_table"] == "Ann" and out["breaking"] and out["ball_in_hand"] == "kitchen"
    assert out["balls_on_table"] == list(range(1, 16)) and out["awaiting"] is None


def test_rule_4_11_thai_options_fifteen_and_count_from_one():
    _r, out = three_fouls(options=["thai_4_11_fifteen", "thai_4_11_count_from_one"])
    assert out["scores"]["Ann"] == 1 - 17 and out["consecutive_fouls"]["Ann"] == 1


def test_rule_4_11_breaking_fouls_do_not_count():
    r, out = three_fouls()
    out = feed(r, shot(object_balls_to_rail=0, cue_ball_to_rail=False))
    assert out["consecutive_fouls"]["Ann"] == 0 and out["scores"]["Ann"] == -19


def test_rule_4_11_breaking_foul_does_not_reset_the_count():
    r = match("14.1", lag="Ann", breaker="Bob")
    feed(r, shot(object_balls_to_rail=1, cue_ball_to_rail=True), opt("accept"))  # Bob -2
    feed(r, shot("0FL"))  # Ann foul 1
    out = feed(r, shot(object_balls_to_rail=5))  # Bob legal
    assert out["consecutive_fouls"]["Ann"] == 1


def test_rule_4_12_stalemate_relag_scores_stand():
    r = broken()
    out = feed(r, {"type": "stalemate"})
    assert out["awaiting"] == "lag" and out["scores"]["Ann"] == 1
    out = feed(r, {"type": "lag", "winner": "Bob"})
    assert (
        out["at_table"] == "Bob" and out["breaking"] and out["balls_on_table"] == list(range(1, 16))
    )


def test_rule_4_high_run_tracked():
    r = broken()
    run_down(r, [1, 2])
    out = feed(r, call(3, "FL"), MISS)
    assert out["high_run"]["Ann"] == 3 and out["run"]["Ann"] == 3
    feed(r, call(3, "FL"), MISS)
    out = feed(r, call(3, "FL"), shot("3FL"))
    assert out["run"]["Ann"] == 1 and out["high_run"]["Ann"] == 3
