"""`valid_inputs(state)`: what a referee console offers now (protocol/REFEREE.md, "Match
control through the host"), case by case against the rule that decides it. The property
that every listed input is accepted and one always exists is in
tests/host/test_match_control.py (it needs the host's `match`)."""

from __future__ import annotations

from dataclasses import replace

from railbird.rules import Referee, new_match, valid_inputs

POCKETS = ["HL", "HR", "SL", "SR", "FL", "FR"]


def match(game: str, **kw) -> dict:
    goal = {"target": 25} if game == "14.1" else {"race_to": 2}
    return {"type": "match", "game": game, "players": ["Ann", "Bob"], **goal, **kw}


def started(game: str, **kw) -> Referee:
    ref = Referee(match(game, **kw))
    ref.feed({"type": "lag", "winner": "Ann"})
    return ref


def by_type(state, **kw) -> dict:
    out = {v["type"]: v for v in valid_inputs(state, **kw)}
    assert len(out) == len(valid_inputs(state, **kw))  # each type once
    return out


def test_before_the_lag_only_the_lag_and_match_control_1_2():
    st = new_match(match("10-ball"))
    assert list(by_type(st)) == ["lag", "concede", "abandon"]
    assert by_type(st)["lag"] == {"type": "lag", "players": ["Ann", "Bob"]}
    # a match nobody has begun may be replaced by a new one (the host's `fresh`)
    assert list(by_type(st, fresh=True)) == ["match", "lag", "concede", "abandon"]


def test_ten_ball_break_has_no_call_and_no_safety_9_and_9_6():
    st = started("10-ball").state
    v = by_type(st)
    assert "call" not in v and "push_out" not in v
    assert {"shot", "stalemate", "interference", "concede", "abandon"} <= set(v)


def test_after_a_legal_ten_ball_break_the_balls_left_may_be_called_and_a_push_out_played():
    ref = started("10-ball")
    ref.feed({"type": "shot", "pocketed": [{"ball": 3, "pocket": "FR"}]})
    v = by_type(ref.state, undo=True)
    assert v["call"] == {
        "type": "call",
        "balls": [1, 2, 4, 5, 6, 7, 8, 9, 10],
        "pockets": POCKETS,
        "safety": True,
    }
    assert v["push_out"] == {"type": "push_out"}  # 9.4: only on the shot after the break
    assert "undo" in v


def test_wpa_2025_ten_ball_has_no_safety_call():
    ref = started("10-ball", options=["wpa2025_no_safety_call"])
    ref.feed({"type": "shot", "pocketed": [{"ball": 3, "pocket": "FR"}]})
    assert by_type(ref.state)["call"]["safety"] is False


def test_nine_ball_is_not_a_call_shot_game():
    ref = started("9-ball")
    ref.feed({"type": "shot", "pocketed": [{"ball": 3, "pocket": "FR"}]})
    v = by_type(ref.state)
    assert "call" not in v and "push_out" in v


def test_fourteen_one_break_may_call_any_ball_but_not_safety_4_3():
    v = by_type(started("14.1").state)
    assert v["call"]["balls"] == list(range(1, 16)) and v["call"]["safety"] is False


def test_eight_ball_the_8_is_callable_only_once_the_group_is_cleared_3_6():
    st = replace(started("8-ball").state, breaking=False, ball_in_hand=None)
    assert 8 not in by_type(st)["call"]["balls"]
    cleared = replace(
        st,
        groups=("solids", "stripes"),
        on_table=(8, 9, 10),
        pocketed=(1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 14, 15),
    )
    # Ann (at the table) has cleared the solids; the stripes may be called (the shot would
    # then be a foul, not an input the engine refuses)
    assert by_type(cleared)["call"]["balls"] == [8, 9, 10]


def test_spotted_balls_may_be_called_general_31():
    st = replace(started("14.1").state, on_table=tuple(range(1, 14)), to_spot=(14, 15))
    assert by_type(st)["call"]["balls"] == list(range(1, 16))


def test_shoot_or_pass_offers_only_the_option_9_4():
    ref = started("10-ball")
    ref.feed({"type": "shot", "pocketed": [{"ball": 3, "pocket": "FR"}]})
    ref.feed({"type": "push_out"})
    ref.feed({"type": "shot", "pocketed": [], "rail_after_contact": True})
    assert ref.state.awaiting == "shoot_or_pass"
    v = by_type(ref.state, undo=True)
    assert v["option"] == {"type": "option", "choices": ["shoot", "pass"]}
    assert list(v) == ["option", "stalemate", "interference", "undo", "concede", "abandon"]


def test_fourteen_one_breaking_foul_offers_accept_or_rebreak_4_3():
    ref = started("14.1")
    ref.feed({"type": "shot", "pocketed": [], "object_balls_to_rail": 0, "cue_ball_to_rail": False})
    assert ref.state.awaiting == "accept_or_rebreak"
    assert by_type(ref.state)["option"]["choices"] == ["accept", "rebreak"]


def test_eight_ball_break_options_3_3():
    st = started("8-ball").state
    for awaiting, choices in (
        ("spot_or_rebreak", ["spot", "rebreak"]),
        ("spot_or_break", ["spot", "break"]),
        ("accept_or_break", ["accept", "break", "rebreak"]),
    ):
        assert by_type(replace(st, awaiting=awaiting))["option"]["choices"] == choices


def test_fourteen_one_rerack_asks_only_what_applies_4_8():
    st = replace(
        started("14.1").state,
        breaking=False,
        awaiting="rerack",
        on_table=(7,),
        pocketed=tuple(b for b in range(1, 16) if b != 7),
    )
    v = by_type(st)
    assert v["rerack"] == {
        "type": "rerack",
        "fields": ["cue_ball_in_rack_area", "ball_in_rack_area", "ball_behind_head_string"],
    }
    assert "call" not in v and "shot" not in v
    # 4.8.1: the 15th ball went down with the 14th: only the cue ball can be in the way
    gone = replace(st, on_table=(), pocketed=tuple(range(1, 16)))
    assert by_type(gone)["rerack"]["fields"] == ["cue_ball_in_rack_area"]


def test_uncertain_facts_offer_a_confirm_and_a_correction_3a():
    ref = started("10-ball")
    ref.feed({"type": "shot", "pocketed": [{"ball": 3, "pocket": "FR", "source": "inferred"}]})
    v = by_type(ref.state, correct=True)
    assert v["confirm"] == {"type": "confirm", "unconfirmed": ["pocketed"], "correct": True}
    assert "confirm" not in by_type(replace(ref.state, unconfirmed=()))


def test_after_the_match_only_a_new_match_undo_or_a_correction():
    st = started("10-ball").state
    won = replace(st, match_winner=0, at_table=None)
    assert list(by_type(won)) == ["match"]
    assert list(by_type(won, undo=True, correct=True)) == ["match", "confirm", "undo"]
    abandoned = replace(st, ended="abandoned", at_table=None)
    assert list(by_type(abandoned, undo=True)) == ["match", "undo"]


def test_concede_and_abandon_through_the_engine_1_11():
    ref = started("9-ball")
    out = ref.feed({"type": "concede", "player": 1})
    assert out["match_winner"] == "Ann" and out["ended"] == "conceded"
    assert out["rulings"][0]["rule"] == "1.11"
    assert out["fen"].endswith(" end=conceded")
    ref.feed({"type": "undo"})
    out = ref.feed({"type": "abandon"})
    assert out["match_winner"] is None and out["ended"] == "abandoned"
    assert out["fen"].endswith(" inn=1 end=abandoned")  # no unc=: nothing unconfirmed
