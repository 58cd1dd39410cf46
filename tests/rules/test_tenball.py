"""Ten-ball, seed section 9: one test (at least) per rule, named after it."""

import pytest

from railbird.rules import ImpossibleInput, OutOfTurn, RulesError
from rulehelp import MISS, PUSH, SAFETY, call, feed, match, opt, rules_of, shot


def test_rule_9_intro_ten_on_legal_break_is_spotted_and_breaker_continues():
    r = match()
    out = feed(r, shot("10FL", first_contact=1))
    assert out["to_spot"] == [10] and 10 not in out["balls_on_table"]
    assert out["at_table"] == "Ann" and out["rack_winner"] is None
    # The referee spots it before the next shot: back on the table.
    out = feed(r, call(1, "FR"), shot("1FR"))
    assert 10 in out["balls_on_table"] and out["to_spot"] == []


def test_rule_9_intro_no_call_allowed_on_the_break():
    r = match()
    with pytest.raises(OutOfTurn):
        r.feed(call(1, "FL"))


def test_rule_9_intro_lowest_ball_must_be_hit_first():
    r = match()
    feed(r, shot("3FL"))
    out = feed(r, call(2, "SR"), shot("2SR", first_contact=4))
    assert "9.10.2" in rules_of(out)
    assert out["at_table"] == "Bob" and out["ball_in_hand"] == "anywhere"


def test_rule_9_1_lag_winner_chooses_breaker_and_breaks_alternate():
    r = match(lag="Ann", breaker="Bob", race_to=3)
    assert r.state_json()["at_table"] == "Bob" and "9.1" in rules_of(r.state_json())
    out = feed(r, shot("4FL"), call(1, "FR"), shot("1FR"), call(10, "SL"), shot("10SL"))
    assert out["rack_winner"] == "Bob" and out["scores"] == {"Ann": 0, "Bob": 1}
    assert out["breaker"] == "Ann" and out["at_table"] == "Ann"  # alternate breaks


def test_rule_9_2_rack_is_ten_balls():
    out = match().state_json()
    assert out["balls_on_table"] == list(range(1, 11))
    assert out["breaking"] and out["ball_in_hand"] == "kitchen"


def test_rule_9_3_1_break_from_the_kitchen():
    out = match().state_json()
    assert out["ball_in_hand"] == "kitchen" and out["breaking"] is True


def test_rule_9_3_2_fewer_than_four_object_balls_to_rail_is_a_foul():
    r = match()
    out = feed(r, shot(object_balls_to_rail=3, cue_ball_to_rail=True))
    assert "9.3.2" in rules_of(out)
    assert out["at_table"] == "Bob" and out["ball_in_hand"] == "anywhere"
    assert out["consecutive_fouls"]["Ann"] == 1


def test_rule_9_3_2_four_object_balls_is_legal_and_cue_ball_does_not_count():
    r = match()
    out = feed(r, shot(object_balls_to_rail=4))
    assert out["ball_in_hand"] is None and out["push_out_allowed"]
    r = match(options=["thai_9_3_count_cue_ball"])
    out = feed(r, shot(object_balls_to_rail=3, cue_ball_to_rail=True))
    assert out["ball_in_hand"] is None  # Thai reading: the cue ball is the fourth ball


def test_rule_9_4_push_out_then_opponent_may_pass():
    r = match()
    feed(r, shot(object_balls_to_rail=5))  # legal dry break: Bob may push out
    out = feed(r, PUSH, shot(first_contact=6, rail_after_contact=False))
    assert out["awaiting"] == "shoot_or_pass" and out["at_table"] == "Ann"
    assert out["consecutive_fouls"] == {"Ann": 0, "Bob": 0}  # 6.2/6.3 suspended
    out = feed(r, opt("pass"))
    assert out["at_table"] == "Bob" and out["awaiting"] is None and out["ball_in_hand"] is None


def test_rule_9_4_ten_pocketed_on_push_out_is_spotted_without_penalty():
    r = match()
    feed(r, shot("2SL"))
    out = feed(r, PUSH, shot("10FR", first_contact=7))
    assert out["to_spot"] == [10] and out["awaiting"] == "shoot_or_pass"
    assert out["rack_winner"] is None and out["at_table"] == "Bob"


def test_rule_9_4_no_push_out_after_a_foul_on_the_break():
    r = match()
    feed(r, shot("0FL"))
    with pytest.raises(OutOfTurn):
        r.feed(PUSH)


def test_rule_9_4_push_out_only_on_the_first_shot_after_the_break():
    r = match()
    feed(r, shot("2SL"), call(1, "FL"), shot("1FL"))
    with pytest.raises(OutOfTurn):
        r.feed(PUSH)


def test_rule_9_4_scratch_on_push_out_is_still_a_foul():
    r = match()
    feed(r, shot("2SL"))
    out = feed(r, PUSH, shot("0HL"))
    assert out["awaiting"] is None and out["ball_in_hand"] == "anywhere"
    assert out["at_table"] == "Bob" and "9.10.1" in rules_of(out)


def test_rule_9_5_called_ball_in_called_pocket_continues():
    r = match()
    feed(r, shot("2SL"))
    out = feed(r, call(1, "HR"), shot("1HR"))
    assert out["at_table"] == "Ann" and 1 in out["pocketed"]


def test_rule_9_5_obvious_shot_without_call_counts():
    r = match()
    out = feed(r, shot("2SL"), shot("1FL"))
    assert out["at_table"] == "Ann" and "9.5" in rules_of(out)


def test_rule_9_6_safety_with_ball_pocketed_gives_option():
    r = match()
    feed(r, shot("2SL"))
    out = feed(r, SAFETY, shot("1FR"))
    assert out["awaiting"] == "shoot_or_pass" and out["at_table"] == "Bob"
    out = feed(r, opt("shoot"))
    assert out["at_table"] == "Bob" and out["awaiting"] is None


def test_rule_9_6_safety_without_pocket_passes_turn():
    r = match()
    feed(r, shot("2SL"))
    out = feed(r, SAFETY, MISS)
    assert out["at_table"] == "Bob" and out["awaiting"] is None


def test_rule_9_6_no_safety_call_under_wpa2025_option():
    r = match(options={"wpa2025_no_safety_call": True})
    feed(r, shot("2SL"))
    with pytest.raises(OutOfTurn):
        r.feed(SAFETY)


def test_rule_9_7_called_ball_in_wrong_pocket_is_not_a_foul():
    r = match()
    feed(r, shot("2SL"))
    out = feed(r, call(1, "FL"), shot("1FR"))
    assert out["awaiting"] == "shoot_or_pass" and out["at_table"] == "Bob"
    assert out["ball_in_hand"] is None and out["consecutive_fouls"]["Ann"] == 0
    assert 1 in out["pocketed"]  # wrongly pocketed balls stay down
    out = feed(r, opt("pass"))
    assert out["at_table"] == "Ann"


def test_rule_9_7_other_ball_pocketed_and_ten_spotted():
    r = match()
    feed(r, shot("2SL"))
    out = feed(r, call(1, "FL"), shot("10FR", "5SR"))
    assert out["to_spot"] == [10] and 5 in out["pocketed"]
    assert out["awaiting"] == "shoot_or_pass" and out["rack_winner"] is None


def test_rule_9_8_called_ten_wins_the_rack():
    r = match()
    feed(r, shot("2SL"))
    out = feed(r, call(10, "FL"), shot("10FL", first_contact=1))
    assert out["rack_winner"] == "Ann" and out["scores"]["Ann"] == 1
    assert out["rack"] == 2 and out["breaker"] == "Bob"


def test_rule_9_8_early_ten_spotted_under_wpa2016_option():
    r = match(options=["wpa2016_ten_last_ball"])
    feed(r, shot("2SL"))
    out = feed(r, call(10, "FL"), shot("10FL", first_contact=1))
    assert out["rack_winner"] is None and out["to_spot"] == [10] and out["at_table"] == "Ann"


def test_rule_9_8_missed_call_passes_turn_from_position():
    r = match()
    feed(r, shot("2SL"))
    out = feed(r, call(1, "FL"), MISS)
    assert out["at_table"] == "Bob" and out["ball_in_hand"] is None
    assert out["awaiting"] is None


def test_rule_9_8_other_balls_on_legal_shot_stay_down():
    r = match()
    feed(r, shot("2SL"))
    out = feed(r, call(1, "FL"), shot("1FL", "6SR"))
    assert out["at_table"] == "Ann" and {1, 6} <= set(out["pocketed"])
    assert "general 33" in rules_of(out)


def test_rule_9_9_ten_spotted_on_foul():
    r = match()
    feed(r, shot("2SL"))
    out = feed(r, call(1, "FL"), shot("10FL", "0SR"))
    assert out["to_spot"] == [10] and out["ball_in_hand"] == "anywhere"


def test_rule_9_9_ten_spotted_when_uncalled():
    r = match()
    feed(r, shot("2SL"))
    out = feed(r, call(1, "SL"), shot("1SL", "10FR"))
    assert out["to_spot"] == [10] and out["at_table"] == "Ann" and out["rack_winner"] is None


def test_rule_9_9_ten_off_the_table_spotted_other_balls_not():
    r = match()
    feed(r, shot("2SL"))
    out = feed(r, call(1, "SL"), shot(off_table=[10, 7]))
    assert out["to_spot"] == [10] and 7 in out["pocketed"] and 7 not in out["balls_on_table"]
    assert "9.10.5" in rules_of(out)


def test_rule_9_9_ten_on_break_with_foul_spotted_ball_in_hand():
    r = match()
    out = feed(r, shot("10FL", "0FR"))
    assert out["to_spot"] == [10] and out["at_table"] == "Bob"
    assert out["ball_in_hand"] == "anywhere" and not out["push_out_allowed"]


@pytest.mark.parametrize(
    ("n", "wpa"),
    list(
        enumerate(
            [
                "6.1",
                "6.2",
                "6.3",
                "6.4",
                "6.5",
                "6.6",
                "6.7",
                "6.8",
                "6.9",
                "6.10",
                "6.12",
                "6.13",
                "6.15",
            ],
            start=1,
        )
    ),
)
def test_rule_9_10_n_standard_foul_gives_ball_in_hand_anywhere(n, wpa):
    r = match()
    feed(r, shot("2SL"))
    out = feed(r, call(1, "FL"), shot("1FL", fouls=[f"9.10.{n}"]))
    assert f"9.10.{n}" in rules_of(out)
    assert out["at_table"] == "Bob" and out["ball_in_hand"] == "anywhere"
    assert out["consecutive_fouls"] == {"Ann": 1, "Bob": 0}
    assert 1 in out["pocketed"]  # only the 10 is ever spotted
    # The same foul declared by its 6.x number is cited the same way.
    r2 = match()
    feed(r2, shot("2SL"))
    assert f"9.10.{n}" in rules_of(feed(r2, shot(fouls=[wpa])))


def test_rule_9_10_six_eleven_is_not_a_ten_ball_foul():
    r = match()
    feed(r, shot("2SL"))
    with pytest.raises(RulesError):
        r.feed(shot(fouls=["6.11"]))


def test_rule_9_11_three_consecutive_fouls_lose_the_rack_after_warning():
    r = match(race_to=5)
    feed(r, shot("2SL"))  # Ann continues
    out = feed(r, shot("0FL"))  # Ann foul 1
    out = feed(r, shot("0FL"))  # Bob foul 1
    out = feed(r, shot("0FL"))  # Ann foul 2
    assert out["consecutive_fouls"]["Ann"] == 2
    out = feed(r, shot("0FL"))  # Bob foul 2 -> Ann comes to the table on two
    assert "6.14" in rules_of(out) and out["at_table"] == "Ann"
    out = feed(r, shot("0FL"))  # Ann's third
    assert out["rack_winner"] == "Bob" and "9.11" in rules_of(out)
    assert out["scores"] == {"Ann": 0, "Bob": 1}
    assert out["consecutive_fouls"] == {"Ann": 0, "Bob": 0}  # 6.14: within one rack


def test_rule_9_11_legal_shot_resets_the_count():
    r = match()
    feed(r, shot("2SL"), shot("0FL"), shot("0FL"))  # Ann 1, Bob 1
    out = feed(r, call(1, "FL"), MISS)  # Ann legal miss
    assert out["consecutive_fouls"]["Ann"] == 0


def test_rule_9_11_unsportsmanlike_conduct_loses_the_rack():
    r = match()
    feed(r, shot("2SL"))
    out = feed(r, shot(fouls=["6.16"]))
    assert out["rack_winner"] == "Bob"


def test_rule_9_12_stalemate_original_breaker_breaks_again():
    r = match(lag="Ann", breaker="Bob")
    feed(r, shot("2SL"), call(1, "FL"), MISS)
    out = feed(r, {"type": "stalemate"})
    assert out["breaker"] == "Bob" and out["at_table"] == "Bob" and out["breaking"]
    assert out["balls_on_table"] == list(range(1, 11)) and out["rack"] == 1
    assert out["scores"] == {"Ann": 0, "Bob": 0} and "9.12" in rules_of(out)


def test_rule_9_impossible_ball_not_on_table():
    r = match()
    feed(r, shot("2SL"))
    before = r.state
    with pytest.raises(ImpossibleInput):
        r.feed(shot("2FL"))
    with pytest.raises(ImpossibleInput):
        r.feed(shot("12FL"))
    with pytest.raises(ImpossibleInput):
        r.feed(shot("3FL", "3SR"))
    assert r.state == before
