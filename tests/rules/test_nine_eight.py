"""Nine-ball (WPA section 2) and eight-ball (section 3), per wpa-reference.md §5-§6."""

import pytest

from railbird.rules import OutOfTurn
from rulehelp import PUSH, SAFETY, call, feed, match, opt, rules_of, shot


def test_nine_2_5_nine_on_break_wins():
    r = match("9-ball")
    out = feed(r, shot("9SL", first_contact=1))
    assert out["rack_winner"] == "Ann" and out["breaker"] == "Bob"


def test_nine_2_5_combination_on_nine_wins_without_call():
    r = match("9-ball")
    out = feed(r, shot("2SL"), shot("9FL", first_contact=1))
    assert out["rack_winner"] == "Ann"


def test_nine_2_4_push_out_nine_spotted():
    r = match("9-ball")
    feed(r, shot(object_balls_to_rail=4))
    out = feed(r, PUSH, shot("9FL", first_contact=5))
    assert (
        out["to_spot"] == [9] and out["awaiting"] == "shoot_or_pass" and out["rack_winner"] is None
    )


def test_nine_2_6_nine_spotted_on_foul():
    r = match("9-ball")
    feed(r, shot("2SL"))
    out = feed(r, shot("9FL", first_contact=3))  # wrong ball first
    assert out["to_spot"] == [9] and "2.7.2" in rules_of(out) and out["ball_in_hand"] == "anywhere"


def test_nine_2_8_three_fouls_lose_rack():
    r = match("9-ball")
    feed(r, shot("2SL"))
    for _ in range(4):
        feed(r, shot("0FL"))
    out = feed(r, shot("0FL"))
    assert out["rack_winner"] == "Bob" and "2.8" in rules_of(out)


def test_nine_no_calls():
    r = match("9-ball")
    feed(r, shot("2SL"))
    with pytest.raises(OutOfTurn):
        r.feed(call(1, "FL"))


def eight_open():
    r = match("8-ball")
    feed(r, shot("3FL", "11SR"))
    return r


def test_eight_3_4_called_ball_assigns_groups():
    r = eight_open()
    out = feed(r, call(12, "FR"), shot("12FR"))
    assert out["groups"] == {"Ann": "stripes", "Bob": "solids"}


def test_eight_3_4_open_table_eight_first_is_foul():
    r = eight_open()
    out = feed(r, call(12, "FR"), shot(first_contact=8))
    assert out["ball_in_hand"] == "anywhere" and "3.9.2" in rules_of(out)


def test_eight_3_6_safety_balls_stay_down():
    r = eight_open()
    out = feed(r, SAFETY, shot("5SL"))
    assert 5 in out["pocketed"] and out["at_table"] == "Bob" and out["to_spot"] == []


def test_eight_3_8_eight_on_foul_loses_rack():
    r = eight_open()
    out = feed(r, shot("8FL", "0SR"))
    assert out["rack_winner"] == "Bob"


def test_eight_3_9_no_three_foul_rule():
    r = eight_open()
    for _ in range(6):
        out = feed(r, shot("0FL"))
    assert out["rack_winner"] is None and out["consecutive_fouls"] == {"Ann": 0, "Bob": 0}


def test_eight_3_3_eight_on_break_spot_or_rebreak():
    r = match("8-ball")
    out = feed(r, shot("8FL"))
    assert out["awaiting"] == "spot_or_rebreak" and out["at_table"] == "Ann"
    out = feed(r, opt("spot"))
    assert out["to_spot"] == [8] and out["awaiting"] is None and out["at_table"] == "Ann"


def test_eight_3_3_eight_with_scratch_on_break():
    r = match("8-ball")
    out = feed(r, shot("8FL", "0SL"))
    assert out["awaiting"] == "spot_or_break" and out["at_table"] == "Bob"
    out = feed(r, opt("break"))
    assert (
        out["breaking"] and out["at_table"] == "Bob" and out["balls_on_table"] == list(range(1, 16))
    )


def test_eight_3_3_illegal_break_options():
    r = match("8-ball")
    out = feed(r, shot(object_balls_to_rail=2))
    assert out["awaiting"] == "accept_or_break"
    out = feed(r, opt("rebreak"))
    assert out["at_table"] == "Ann" and out["breaking"]


def test_eight_win_by_called_eight_after_group():
    r = match("8-ball", race_to=1)
    feed(r, shot("3FL"), call(1, "FL"), shot("1FL"))  # Ann solids
    for b in (2, 4, 5, 6, 7):
        feed(r, call(b, "SR"), shot(f"{b}SR"))
    out = feed(r, call(8, "HL"), shot("8HL"))
    assert out["match_winner"] == "Ann"
