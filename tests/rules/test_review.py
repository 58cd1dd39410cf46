"""Review pass (issue 5): transcript tests for places where the engine disagreed with the
seed text read as WPA, named after the rule; the referee's confirmation of uncertain sensed
facts (issue 5 item 6); and defaults recorded in the rulings when a fact is not reported."""

import pytest

from railbird.rules import BadInput, ImpossibleInput, OutOfTurn, apply, from_fen, to_fen
from rulehelp import MISS, call, feed, match, rules_of, shot


def ten_after_break(**kw):
    r = match(**kw)
    feed(r, shot("2SL", first_contact=1))  # Ann continues
    return r


def lip(ball, pocket="SR", us=6_000_000):
    return {"ball": ball, "pocket": pocket, "rested_us": us}


# -- general 30: a ball that falls by itself is not a stroke --------------------------------
def test_general_30_lone_lip_drop_is_not_a_stroke_and_not_a_foul():
    """What the host sends for a ball that settles into a pocket with the table at rest:
    no rails, nothing else. Not a shot: no 6.3 foul, the turn and the call stand."""
    r = ten_after_break()
    feed(r, call(1, "FL"))
    before = r.state
    out = feed(
        r,
        {
            "type": "shot",
            "pocketed": [lip(5)],
            "rail_after_contact": False,
            "object_balls_to_rail": 0,
        },
    )
    assert "general 30" in rules_of(out) and "9.10.3" not in rules_of(out)
    assert out["at_table"] == "Ann" and out["consecutive_fouls"]["Ann"] == 0
    assert 5 in out["balls_on_table"] and out["call"] == {"ball": 1, "pocket": "FL"}
    assert r.state == before


def test_general_30_lip_ball_during_a_real_stroke_is_restored_and_the_stroke_counts():
    r = ten_after_break()
    out = feed(
        r, {"type": "shot", "pocketed": [lip(5)], "first_contact": 1, "rail_after_contact": True}
    )
    assert 5 in out["balls_on_table"] and out["at_table"] == "Bob"  # a miss


def test_general_30_hanging_cue_ball_is_restored_not_a_scratch():
    """Seed 30: 'a ball' hanging more than 5 s - the cue ball too."""
    r = ten_after_break()
    out = feed(r, {"type": "shot", "pocketed": [lip(0)], "rail_after_contact": False})
    assert "9.10.1" not in rules_of(out) and out["ball_in_hand"] is None
    assert out["at_table"] == "Ann" and out["consecutive_fouls"]["Ann"] == 0


def test_general_30_lone_lip_drop_in_14_1_scores_nothing_and_costs_nothing():
    r = match("14.1")
    feed(r, call(5, "FL"), shot("5FL"))
    out = feed(r, {"type": "shot", "pocketed": [lip(9, "HL")], "rail_after_contact": False})
    assert out["scores"] == {"Ann": 1, "Bob": 0} and out["at_table"] == "Ann"
    assert out["run"]["Ann"] == 1 and 9 in out["balls_on_table"]


# -- general 29: the most serious penalty (general 28 is more than a plain foul) -----------
def test_general_29_intentional_foul_with_a_scratch_keeps_the_general_28_warning():
    r = ten_after_break()
    out = feed(r, shot("0FL", fouls=["general 28"]))
    assert "general 28" in rules_of(out)  # the warning is given
    feed(r, call(1, "FL"), MISS)  # Bob
    out = feed(r, shot("0FL", fouls=["general 28"]))
    assert out["match_winner"] == "Bob"


# -- general 34 in 14.1: WPA 1.9 -> stalemate -> 4.12 new lag --------------------------------
def test_general_34_unrestorable_interference_in_14_1_relags_scores_stand():
    r = match("14.1", breaker="Ann")
    feed(r, call(5, "FL"), shot("5FL"), MISS)
    out = feed(r, {"type": "interference"})
    assert out["awaiting"] == "lag" and out["scores"] == {"Ann": 1, "Bob": 0}
    assert out["balls_on_table"] == list(range(1, 16)) and "general 34" in rules_of(out)
    out = feed(r, {"type": "lag", "winner": "Bob"})
    assert out["at_table"] == "Bob" and out["breaking"]


def test_general_34_seed_option_same_breaker_in_14_1():
    r = match("14.1", options=["bca_34_same_breaker"])
    feed(r, call(5, "FL"), shot("5FL"), MISS)
    out = feed(r, {"type": "interference"})
    assert out["awaiting"] is None and out["breaker"] == "Ann" and out["at_table"] == "Ann"
    assert out["breaking"] and out["scores"] == {"Ann": 1, "Bob": 0}


# -- 4.8: answers that cannot be true are refused -----------------------------------------
def test_rule_4_8_answers_about_a_fifteenth_ball_that_was_pocketed_are_refused():
    r = match("14.1")
    feed(r, call(5, "FL"), shot("5FL"))
    for b in [1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12]:
        feed(r, call(b, "FL"), shot(f"{b}FL"))
    feed(r, call(13, "FL"), shot("13FL", "14SL", "15FR"))
    with pytest.raises(ImpossibleInput):
        r.feed({"type": "rerack", "ball_in_rack_area": True})
    with pytest.raises(ImpossibleInput):
        r.feed({"type": "rerack", "ball_behind_head_string": True})


def test_rule_4_8_fifteenth_ball_cannot_be_in_rack_area_and_behind_head_string():
    r = match("14.1")
    feed(r, call(5, "FL"), shot("5FL"))
    for b in [1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14]:
        feed(r, call(b, "FL"), shot(f"{b}FL"))
    with pytest.raises(ImpossibleInput):
        r.feed({"type": "rerack", "ball_in_rack_area": True, "ball_behind_head_string": True})


# -- defaults: a fact neither sensed nor entered is recorded in the ruling ----------------
def test_defaults_first_contact_not_reported_is_recorded_10_ball():
    r = ten_after_break()
    out = feed(r, call(1, "FL"), {"type": "shot", "pocketed": [{"ball": 1, "pocket": "FL"}]})
    d = [x for x in out["rulings"] if x["rule"] == "9.10.2"]
    assert d and "not reported" in d[0]["text"] and "the 1" in d[0]["text"]
    assert out["at_table"] == "Ann"


def test_defaults_rail_after_contact_not_reported_is_recorded():
    r = ten_after_break()
    out = feed(r, {"type": "shot", "pocketed": [], "first_contact": 1})
    d = [x for x in out["rulings"] if x["rule"] == "9.10.3"]
    assert d and "not reported" in d[0]["text"] and out["consecutive_fouls"]["Ann"] == 0


def test_defaults_break_requirement_not_reported_is_recorded():
    r = match("10-ball")
    out = feed(r, {"type": "shot", "pocketed": [], "first_contact": 1})
    assert any(x["rule"] == "9.3.2" and "not reported" in x["text"] for x in out["rulings"])
    r = match("14.1")
    out = feed(r, {"type": "shot", "pocketed": []})
    assert any(x["rule"] == "4.3.2" and "not reported" in x["text"] for x in out["rulings"])
    r = match("14.1")
    out = feed(r, {"type": "shot", "pocketed": [], "object_balls_to_rail": 3})
    assert any(x["rule"] == "4.3.2" and "cue ball" in x["text"] for x in out["rulings"])


def test_defaults_reported_facts_record_no_default():
    r = ten_after_break()
    out = feed(r, {"type": "shot", "pocketed": [], "first_contact": 1, "rail_after_contact": True})
    assert not any("not reported" in x["text"] for x in out["rulings"])


# -- issue 5 item 6: confirmation of an uncertain sensed fact -----------------------------
def test_confirm_uncertain_fact_applied_as_sensed_then_confirmed():
    r = ten_after_break()
    out = feed(
        r,
        {
            "type": "shot",
            "pocketed": [{"ball": 1, "pocket": "FL"}],
            "first_contact": 1,
            "uncertain": ["first_contact"],
        },
    )
    assert out["unconfirmed"] == ["first_contact"] and out["at_table"] == "Ann"
    assert any("first_contact" in x["text"] for x in out["rulings"] if x["rule"] == "1.10")
    out = feed(r, {"type": "confirm"})
    assert out["unconfirmed"] == [] and out["at_table"] == "Ann"
    assert "1.10" in rules_of(out)
    with pytest.raises(OutOfTurn):
        r.feed({"type": "confirm"})  # nothing left to confirm


def test_confirm_inferred_source_of_a_pocketed_ball_is_uncertain():
    r = ten_after_break()
    out = feed(
        r,
        {
            "type": "shot",
            "pocketed": [{"ball": 0, "pocket": "HR", "source": "inferred", "t": 123}],
            "first_contact": 1,
        },
    )
    assert out["unconfirmed"] == ["pocketed"] and out["ball_in_hand"] == "anywhere"


def test_confirm_correction_replays_the_last_shot_with_the_referees_facts():
    """The sensors were unsure of the first ball hit; Bob already called his shot. The
    referee corrects: the 3 was hit first, a foul (9.10.2). Bob's call is replayed."""
    r = ten_after_break()
    out = feed(
        r,
        {
            "type": "shot",
            "pocketed": [],
            "first_contact": 1,
            "rail_after_contact": True,
            "uncertain": ["first_contact"],
        },
    )
    assert out["at_table"] == "Bob" and out["ball_in_hand"] is None
    feed(r, call(1, "SL"))
    out = feed(r, {"type": "confirm", "first_contact": 3})
    assert out["at_table"] == "Bob" and out["ball_in_hand"] == "anywhere"
    assert out["consecutive_fouls"]["Ann"] == 1 and out["unconfirmed"] == []
    assert "9.10.2" in rules_of(out) and "1.10" in rules_of(out)
    assert out["call"] == {"ball": 1, "pocket": "SL"}  # Bob's call re-applied
    assert [x for x in out["rulings"] if x["rule"] == "9.5"]
    # the correction can itself be corrected (the last shot is now the corrected one)
    out = feed(r, {"type": "confirm", "first_contact": 1})
    assert out["ball_in_hand"] is None and out["consecutive_fouls"]["Ann"] == 0


def test_confirm_correction_of_pocketed_ball_identity_14_1():
    r = match("14.1")
    feed(r, call(5, "FL"), shot("5FL"))
    out = feed(
        r,
        call(3, "FL"),
        {"type": "shot", "pocketed": [{"pocket": "FL"}], "uncertain": ["pocketed"]},
    )
    assert out["scores"]["Ann"] == 2  # presumed the called 3
    out = feed(r, {"type": "confirm", "pocketed": [{"ball": 4, "pocket": "FL"}]})
    assert out["scores"]["Ann"] == 1 and out["to_spot"] == [4] and out["at_table"] == "Bob"


def test_confirm_correction_that_conflicts_with_a_later_input_is_refused():
    r = ten_after_break()
    feed(r, {"type": "shot", "pocketed": [], "first_contact": 1})  # Bob to shoot
    feed(r, call(3, "SL"))
    before = r.state
    with pytest.raises(OutOfTurn):  # the 3 is gone on the corrected shot: Bob's call fails
        r.feed({"type": "confirm", "pocketed": [{"ball": 3, "pocket": "HR"}], "first_contact": 1})
    assert r.state == before


def test_confirm_without_a_shot_or_with_a_bad_fact_is_refused():
    r = match("10-ball")
    with pytest.raises(OutOfTurn):
        r.feed({"type": "confirm", "first_contact": 1})
    r = ten_after_break()
    with pytest.raises(BadInput, match="first_contact must be an integer"):
        r.feed({"type": "confirm", "first_contact": "x"})
    with pytest.raises(BadInput, match="uncertain must be a list of fact names"):
        r.feed({"type": "shot", "pocketed": [], "uncertain": ["colour"]})


def test_confirm_the_match_winning_shot_can_be_corrected():
    r = match("10-ball", race_to=1)
    feed(r, shot("2SL", first_contact=1), call(10, "FL"))
    out = feed(
        r,
        {
            "type": "shot",
            "pocketed": [{"ball": 10, "pocket": "FL"}],
            "first_contact": 1,
            "uncertain": ["first_contact"],
        },
    )
    assert out["match_winner"] == "Ann"
    out = feed(r, {"type": "confirm", "first_contact": 4})
    assert out["match_winner"] is None and out["ball_in_hand"] == "anywhere"
    assert out["to_spot"] == [10]


def test_confirm_undo_and_pure_apply():
    r = ten_after_break()
    feed(r, {"type": "shot", "pocketed": [], "first_contact": 1, "uncertain": ["first_contact"]})
    s = r.state
    st, rulings = apply(s, {"type": "confirm"})
    assert st.unconfirmed == () and rulings
    with pytest.raises(OutOfTurn):
        apply(s, {"type": "confirm", "first_contact": 2})  # needs the history: Referee
    feed(r, {"type": "confirm"})
    out = feed(r, {"type": "undo"})
    assert out["unconfirmed"] == ["first_contact"]


def test_confirm_unconfirmed_facts_round_trip_in_fen_and_lapse_at_the_next_shot():
    r = ten_after_break()
    plain = to_fen(r.state)
    assert "unc=" not in plain  # the line is unchanged when nothing is unconfirmed
    feed(
        r,
        {
            "type": "shot",
            "pocketed": [],
            "first_contact": 1,
            "uncertain": ["first_contact", "rail_after_contact"],
        },
    )
    text = to_fen(r.state)
    # the facts by their letters (first_contact f, rail_after_contact a), sorted by name
    assert " unc=fa " in text and to_fen(from_fen(text)) == text
    out = feed(r, {"type": "shot", "pocketed": [], "first_contact": 1})
    assert out["unconfirmed"] == [] and any("stand" in x["text"] for x in out["rulings"])


def test_confirm_in_the_cli_transcript():
    import json

    from railbird.commands.referee import process_line

    ref = None
    lines = [
        {"type": "match", "game": "14.1", "players": ["Ann", "Bob"], "target": 50},
        {"type": "lag", "winner": "Ann"},
        {"type": "call", "ball": 5, "pocket": "FL"},
        {
            "type": "shot",
            "pocketed": [
                {"ball": 5, "pocket": "FL"},
                {"ball": 0, "pocket": "HL", "source": "inferred"},
            ],
        },
        {"type": "confirm", "pocketed": [{"ball": 5, "pocket": "FL"}]},
    ]
    outs = []
    for line in lines:
        ref, out = process_line(ref, json.dumps(line))
        outs.append(out)
    assert outs[3]["scores"]["Ann"] == -1 and outs[3]["unconfirmed"] == ["pocketed"]
    assert outs[4]["scores"]["Ann"] == 1 and outs[4]["at_table"] == "Ann"
