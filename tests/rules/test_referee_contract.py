"""The referee contract (protocol/REFEREE.md) against the engine (issue 11): one test per
point where they disagreed, named after the point, pinning the behaviour REFEREE.md now
states (spotted balls, input after the match, `rack`, `object_balls_to_rail`, `inning`,
the rule cited for a passed push-out, a hanging ball that falls while a decision waits)."""

import json

import pytest

from railbird.commands.referee import process_line
from railbird.rules import ImpossibleInput, OutOfTurn, from_fen, to_fen
from rulehelp import MISS, PUSH, SAFETY, call, feed, match, opt, rules_of, shot

CONFIRM = {"type": "confirm"}
UNDO = {"type": "undo"}


def lip_drop(ball, pocket="SR"):
    """What the host sends for a ball that hung on the lip for 6 s and then fell by
    itself with the table at rest (general 30): no rail, nothing else."""
    return {
        "type": "shot",
        "pocketed": [{"ball": ball, "pocket": pocket, "rested_us": 6_000_000}],
        "rail_after_contact": False,
    }


def texts(out):
    return [x["text"] for x in out["rulings"]]


# -- 1. spotted balls are on the table from the next input of any kind ----------------------
def ten_with_ten_to_spot():
    """Ann's break drops the 10 (spotted, 9 intro) with the first ball hit flagged
    uncertain, so that a plain `confirm` is also an input that applies."""
    r = match()
    out = feed(r, shot("10FL", "4SR", first_contact=1, uncertain=["first_contact"]))
    assert out["to_spot"] == [10] and 10 not in out["balls_on_table"]
    assert " spot=10 " in out["fen"]
    return r


@pytest.mark.parametrize(
    "nxt",
    [PUSH, call(1, "FR"), shot("1FR"), CONFIRM, lip_drop(5), {"type": "stalemate"}],
    ids=["push_out", "call", "shot", "confirm", "ball settling", "stalemate"],
)
def test_contract_spotted_balls_on_table_after_any_input(nxt):
    r = ten_with_ten_to_spot()
    out = feed(r, nxt)
    assert out["to_spot"] == [] and 10 in out["balls_on_table"]
    assert " spot=" not in out["fen"] and from_fen(out["fen"]) == r.state


def test_contract_spotted_balls_on_table_after_an_option_and_back_in_to_spot_after_undo():
    r = match()
    feed(r, shot("4SR", first_contact=1), call(1, "FL"))
    out = feed(r, shot("10SL", first_contact=1))  # 9.7: wrong ball, the 10 is spotted
    assert out["awaiting"] == "shoot_or_pass" and out["to_spot"] == [10]
    fen_before = out["fen"]
    out = feed(r, opt("shoot"))
    assert out["to_spot"] == [] and 10 in out["balls_on_table"]
    out = feed(r, UNDO)  # the position before the option: the 10 still to be spotted
    assert out["to_spot"] == [10] and 10 not in out["balls_on_table"]
    assert out["fen"] == fen_before and to_fen(r.state) == fen_before


def test_contract_spotted_balls_a_correction_shows_the_corrected_shots_own_spots():
    r = ten_with_ten_to_spot()
    out = feed(r, {"type": "confirm", "first_contact": 1})  # the shot itself, ruled again
    assert out["to_spot"] == [10] and 10 not in out["balls_on_table"]


# -- 2. after the match: undo and confirm of the deciding shot, nothing else ------------------
def won_on_an_uncertain_shot():
    r = match(race_to=1)
    feed(r, shot("2SL", first_contact=1), call(10, "FL"))
    out = feed(r, shot("10FL", first_contact=1, uncertain=["first_contact"]))
    assert out["match_winner"] == "Ann" and out["unconfirmed"] == ["first_contact"]
    return r


REFUSED_AFTER_THE_MATCH = [
    {"type": "lag", "winner": "Ann"},
    call(1, "FL"),
    SAFETY,
    PUSH,
    MISS,
    lip_drop(3),
    opt("shoot"),
    {"type": "rerack"},
    {"type": "stalemate"},
    {"type": "interference"},
]


@pytest.mark.parametrize("inp", REFUSED_AFTER_THE_MATCH, ids=lambda i: i["type"])
def test_contract_after_the_match_other_inputs_are_refused(inp):
    r = won_on_an_uncertain_shot()
    before = r.state
    with pytest.raises(OutOfTurn, match="the match is over"):
        r.feed(inp)
    assert r.state == before
    _, out = process_line(r, json.dumps(inp))  # the CLI: an error line, state unchanged
    assert "match is over" in out["error"] and r.state == before


def test_contract_after_the_match_undo_and_confirm_are_accepted():
    r = won_on_an_uncertain_shot()
    out = feed(r, CONFIRM)  # §3a: the uncertain facts of the deciding shot confirmed
    assert out["unconfirmed"] == [] and out["match_winner"] == "Ann"
    out = feed(r, UNDO)  # withdraws the confirmation
    assert out["unconfirmed"] == ["first_contact"] and out["match_winner"] == "Ann"
    out = feed(r, {"type": "confirm", "first_contact": 4})  # corrected: a foul, no win
    assert out["match_winner"] is None and out["ball_in_hand"] == "anywhere"
    out = feed(r, UNDO)  # withdraws the (corrected) deciding shot
    assert out["match_winner"] is None and out["call"] == {"ball": 10, "pocket": "FL"}


def test_contract_after_the_match_a_confirm_with_nothing_uncertain_is_refused():
    r = match(race_to=1)
    feed(r, shot("2SL", first_contact=1), call(10, "FL"))
    out = feed(r, shot("10FL", first_contact=1))
    assert out["match_winner"] == "Ann"
    with pytest.raises(OutOfTurn, match="no uncertain fact"):
        r.feed(CONFIRM)
    assert feed(r, UNDO)["match_winner"] is None


# -- 3. `rack`: every rack set up in 14.1; the game number in rack games --------------------
def test_contract_rack_14_1_rebreak_after_a_breaking_foul_is_a_new_rack():
    """WPA 4.3: the breaker breaks again from a full re-rack of 15 balls."""
    r = match("14.1", breaker="Bob")
    out = feed(r, shot(object_balls_to_rail=1, cue_ball_to_rail=True))
    assert out["awaiting"] == "accept_or_rebreak" and out["rack"] == 1
    out = feed(r, opt("rebreak"))
    assert out["rack"] == 2 and out["breaking"] and out["balls_on_table"] == list(range(1, 16))
    out = feed(r, shot(object_balls_to_rail=0, cue_ball_to_rail=True), opt("rebreak"))
    assert out["rack"] == 3  # each re-break is another rack set up
    out = feed(r, {"type": "stalemate"})  # 4.12: all 15 re-racked, new lag
    assert out["rack"] == 4 and out["awaiting"] == "lag"
    assert feed(r, {"type": "lag", "winner": "Ann"})["rack"] == 4


def test_contract_rack_14_1_accepted_table_is_the_same_rack():
    r = match("14.1", breaker="Bob")
    feed(r, shot(object_balls_to_rail=1, cue_ball_to_rail=True))
    assert feed(r, opt("accept"))["rack"] == 1


def test_contract_rack_14_1_third_foul_rerack_is_a_new_rack():
    r = match("14.1")
    feed(r, call(5, "FL"), shot("5FL"))
    for _ in range(2):  # Ann fouls, Bob misses: Ann on two fouls
        feed(r, shot(fouls=["6.6"]), call(7, "FL"), shot(first_contact=7))
    out = feed(r, shot(fouls=["6.6"]))
    assert "4.11" in rules_of(out) and out["rack"] == 2 and out["breaking"]


def test_contract_rack_rack_games_keep_the_number_on_a_replay_or_rebreak():
    r = match("10-ball")
    feed(r, shot("2SL", first_contact=1))
    assert feed(r, {"type": "stalemate"})["rack"] == 1  # 9.12: same rack, same breaker
    r = match("8-ball")
    out = feed(r, shot("8SL"))  # 3.3: the 8 on a legal break
    assert out["awaiting"] == "spot_or_rebreak"
    assert feed(r, opt("rebreak"))["rack"] == 1
    r = match("10-ball", race_to=2)
    feed(r, shot("2SL", first_contact=1), call(10, "FL"))
    assert feed(r, shot("10FL"))["rack"] == 2  # a new game


# -- 4. object_balls_to_rail: balls still on the table; pocketed/off-table ones are added ------
def test_contract_object_balls_to_rail_excludes_pocketed_balls_which_count_on_top():
    """8.4: a pocketed ball counts as driven to a rail. The fact counts the others, so one
    ball pocketed and one more to a rail, plus the cue ball, meets 4.3.2."""
    r = match("14.1")
    out = feed(r, shot("7FR", object_balls_to_rail=1, cue_ball_to_rail=True))
    assert "4.3.2" not in rules_of(out) and out["scores"]["Ann"] == 0
    assert out["at_table"] == "Bob" and out["to_spot"] == [7]  # uncalled: spotted (4.6)
    r = match("14.1")
    out = feed(r, shot("7FR", object_balls_to_rail=0, cue_ball_to_rail=True))
    assert "4.3.2" in rules_of(out) and out["scores"]["Ann"] == -2  # one ball in all
    r = match("14.1")
    out = feed(r, shot(off_table=[3], object_balls_to_rail=1, cue_ball_to_rail=True))
    assert "4.3.2" not in rules_of(out) and "4.9.4" in rules_of(out)  # a 6.5 foul only
    r = match("10-ball")  # 9.3.2: three to a rail and one off the table are four
    out = feed(r, shot(off_table=[6], object_balls_to_rail=3))
    assert "9.3.2" not in rules_of(out) and "9.10.5" in rules_of(out)


@pytest.mark.parametrize(
    "facts",
    [
        {"pocketed": [{"ball": 7, "pocket": "FR"}]},
        {"off_table": [7]},
        {"pocketed": [{"pocket": "FR"}]},  # a ball not identified is one ball down too
    ],
    ids=["pocketed", "off_table", "unidentified"],
)
def test_contract_object_balls_to_rail_certain_limit_is_the_balls_left_on_the_table(facts):
    r = match("14.1")
    with pytest.raises(ImpossibleInput, match="more object balls to a rail"):
        r.feed({"type": "shot", **facts, "object_balls_to_rail": 15, "cue_ball_to_rail": True})
    out = feed(r, {"type": "shot", **facts, "object_balls_to_rail": 14, "cue_ball_to_rail": True})
    assert "4.3.2" not in rules_of(out)


def test_contract_object_balls_to_rail_uncertain_estimate_is_bounded_by_the_same_limit():
    r = match("14.1")
    out = feed(
        r,
        shot(
            "7FR",
            object_balls_to_rail=15,
            cue_ball_to_rail=True,
            uncertain=["object_balls_to_rail"],
        ),
    )
    assert any("estimated at 15" in t and "taken as 14" in t for t in texts(out))
    assert out["unconfirmed"] == ["object_balls_to_rail"]


def test_contract_object_balls_to_rail_estimate_stays_an_estimate_through_a_correction():
    """A correction of another fact leaves the sensors' estimate an estimate (bounded,
    still unconfirmed) rather than turning it into a certain, impossible count."""
    r = match("10-ball")
    out = feed(r, shot(object_balls_to_rail=10, uncertain=["object_balls_to_rail"]))
    assert out["at_table"] == "Bob"  # legal break, nothing down
    out = feed(r, {"type": "confirm", "pocketed": [{"ball": 3, "pocket": "FR"}]})
    assert out["at_table"] == "Ann" and 3 not in out["balls_on_table"]
    assert out["unconfirmed"] == ["object_balls_to_rail"]
    assert any("taken as 9" in t for t in texts(out))


def test_contract_object_balls_to_rail_range_a_decisive_range_is_a_fact():
    """§3b: with `object_balls_to_rail_range` the estimate is ruled only if every value in
    the range rules alike; then nothing is left to confirm."""
    r = match("10-ball")
    rng = {"object_balls_to_rail_range": [4, 12], "uncertain": ["object_balls_to_rail"]}
    out = feed(r, shot(object_balls_to_rail=6, **rng))
    assert out["at_table"] == "Bob" and out["unconfirmed"] == [] and out["provisional"] == []


@pytest.mark.parametrize("referee", [True, False])
def test_contract_object_balls_to_rail_range_an_undecided_range_is_never_a_silent_ruling(referee):
    r = match("10-ball", referee=referee)
    rng = {"object_balls_to_rail_range": [2, 8], "uncertain": ["object_balls_to_rail"]}
    out = feed(r, shot(object_balls_to_rail=6, **rng))
    if referee:
        assert out["awaiting"] == "referee_check" and out["at_table"] == "Ann"
        assert out["unconfirmed"] == ["object_balls_to_rail"]
        out = feed(r, CONFIRM)  # the referee confirms the sensors' estimate: 6, legal
        assert out["awaiting"] is None and out["at_table"] == "Bob"
    else:
        assert out["provisional"][0]["ruling"] == "legal break"
        assert out["unconfirmed"] == ["object_balls_to_rail"]
        out = feed(r, CONFIRM)
        assert out["provisional"] == [] and out["unconfirmed"] == []


# -- 5. inning: turns at play; a decision and the turn it leads to are one inning ----------
def test_contract_inning_14_1_breaking_foul_and_rebreak_are_the_breakers_two_innings():
    r = match("14.1", breaker="Bob")
    assert r.state_json()["inning"] == 1
    out = feed(r, shot(object_balls_to_rail=1, cue_ball_to_rail=True))
    assert out["at_table"] == "Ann" and out["inning"] == 2  # Ann at the table to decide
    out = feed(r, opt("rebreak"))  # she hands it back: her visit was no inning
    assert out["at_table"] == "Bob" and out["inning"] == 2
    out = feed(r, shot(object_balls_to_rail=2, cue_ball_to_rail=True))  # legal, nothing called
    assert out["at_table"] == "Ann" and out["inning"] == 3


def test_contract_inning_14_1_accepted_table_is_the_deciders_inning():
    r = match("14.1", breaker="Bob")
    feed(r, shot(object_balls_to_rail=1, cue_ball_to_rail=True))
    out = feed(r, opt("accept"))
    assert out["at_table"] == "Ann" and out["inning"] == 2
    out = feed(r, MISS)
    assert out["at_table"] == "Bob" and out["inning"] == 3


def test_contract_inning_ten_ball_pass_after_push_out():
    r = match()
    out = feed(r, shot("2SL", first_contact=1), PUSH, shot(first_contact=4))
    assert out["at_table"] == "Bob" and out["inning"] == 2
    out = feed(r, opt("pass"))  # Ann shoots again: her second inning, Bob had none
    assert out["at_table"] == "Ann" and out["inning"] == 2
    out = feed(r, call(1, "FL"), MISS)
    assert out["at_table"] == "Bob" and out["inning"] == 3


def test_contract_inning_eight_ball_break_options():
    r = match("8-ball")  # illegal break: Bob re-racks and breaks himself
    out = feed(r, shot(object_balls_to_rail=2))
    assert out["awaiting"] == "accept_or_break" and out["inning"] == 2
    out = feed(r, opt("break"))
    assert out["at_table"] == "Bob" and out["breaking"] and out["inning"] == 2
    r = match("8-ball")  # ... or has Ann break again
    feed(r, shot(object_balls_to_rail=2))
    out = feed(r, opt("rebreak"))
    assert out["at_table"] == "Ann" and out["inning"] == 2
    r = match("8-ball")  # the 8 on a legal break: Ann re-breaks in the same inning
    feed(r, shot("8SL"))
    out = feed(r, opt("rebreak"))
    assert out["at_table"] == "Ann" and out["inning"] == 1


# -- 6. the rule cited for the option: push-out 9.4, wrong ball 9.7, safety 9.6 -------------
def test_contract_pass_after_push_out_cites_9_4():
    r = match()
    feed(r, shot("2SL", first_contact=1), PUSH, shot(first_contact=4))
    out = feed(r, opt("pass"))
    assert rules_of(out) == ["9.4"] and texts(out) == ["Bob passes the shot back"]
    r = match()
    feed(r, shot("2SL", first_contact=1), PUSH, shot(first_contact=4))
    assert rules_of(feed(r, opt("shoot"))) == ["9.4"]


def test_contract_option_after_a_wrongly_pocketed_ball_cites_9_7_and_after_a_safety_9_6():
    r = match()
    feed(r, shot("2SL", first_contact=1), call(1, "FL"), shot("3SR", first_contact=1))
    assert rules_of(feed(r, opt("pass"))) == ["9.7"]
    r = match()
    feed(r, shot("2SL", first_contact=1), SAFETY, shot("3SR", first_contact=1))
    assert rules_of(feed(r, opt("shoot"))) == ["9.6"]


def test_contract_nine_ball_pass_after_push_out_cites_2_4():
    r = match("9-ball")
    feed(r, shot("2SL", first_contact=1), PUSH, shot(first_contact=4))
    assert rules_of(feed(r, opt("pass"))) == ["2.4"]


# -- 7. a ball that falls by itself (general 30) while a decision is awaited --------------
def awaiting_shoot_or_pass():
    r = match()
    feed(r, shot("2SL", first_contact=1), call(1, "FL"), shot("3SR", first_contact=1))
    return r


def awaiting_accept_or_rebreak():
    r = match("14.1", breaker="Bob")
    feed(r, shot(object_balls_to_rail=1, cue_ball_to_rail=True))
    return r


def awaiting_rerack():
    r = match("14.1")
    feed(r, call(5, "FL"), shot("5FL"))
    for b in (1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14):
        feed(r, call(b, "FL"), shot(f"{b}FL"))
    return r


@pytest.mark.parametrize(
    ("setup", "ball"),
    [
        (awaiting_shoot_or_pass, 5),
        (awaiting_accept_or_rebreak, 9),
        (awaiting_rerack, 15),
        (lambda: match(lag=None), 4),
    ],
    ids=["shoot_or_pass", "accept_or_rebreak", "rerack", "lag"],
)
def test_contract_hanging_ball_falls_while_a_decision_is_awaited(setup, ball):
    r = setup()
    before = r.state
    assert before.awaiting
    out = feed(r, lip_drop(ball))
    assert "general 30" in rules_of(out) and r.state == before  # nothing changes
    assert ball in out["balls_on_table"] and out["awaiting"] == before.awaiting
    if before.awaiting != "rerack":  # (a stroke there takes the default answers, §3)
        with pytest.raises(OutOfTurn):  # a real stroke still waits for the decision
            r.feed(shot(first_contact=ball, rail_after_contact=True))


def test_contract_hanging_ball_leaves_the_14_1_rerack_answers_to_the_referee():
    r = awaiting_rerack()
    out = feed(r, lip_drop(15))
    assert out["awaiting"] == "rerack" and "4.8" not in rules_of(out)
    out = feed(r, {"type": "rerack", "cue_ball_in_rack_area": True, "ball_in_rack_area": True})
    assert "4.8.2" in rules_of(out) and out["ball_in_hand"] == "kitchen"
    assert out["balls_on_table"] == list(range(1, 16))


def test_contract_rerack_answers_not_given_are_a_recorded_default():
    r = awaiting_rerack()
    out = feed(r, call(15, "HL"))
    d = [x for x in out["rulings"] if x["rule"] == "4.8" and x["text"].endswith("(default)")]
    assert len(d) == 1 and "not reported" in d[0]["text"]
