"""The last shot's facts in force (protocol/REFEREE.md §3c): every fact marked sensed,
presumed or the referee's, a correction built from them reaching the truth whatever the
order of the taps, and the one-tap confirm ruling exactly what was ruled."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from railbird.rules import Referee
from railbird.rules.errors import BadInput
from railbird.rules.shotfacts import ORIGINS

# What a confirmation of the ruling must leave as it was (it only makes facts certain).
RULED = (
    "scores",
    "at_table",
    "ball_in_hand",
    "balls_on_table",
    "to_spot",
    "pocketed",
    "awaiting",
    "consecutive_fouls",
    "breaking",
    "rack",
    "rack_winner",
    "match_winner",
    "call",
)


def ten_ball(**extra) -> Referee:
    r = Referee(
        {"type": "match", "game": "10-ball", "players": ["Ann", "Bob"], "race_to": 2, **extra}
    )
    r.feed({"type": "lag", "winner": "Ann"})
    return r


def drops(view):
    return [(d["ball"], d["pocket"], d["origin"]) for d in view["pocketed"]]


def fact(view, name):
    return next((f for f in view["facts"] if f["fact"] == name), None)


def test_a_break_with_the_3_and_the_10_down_is_identified_in_either_order():
    """Issue 22, 1: the host presumes the 1 and the 2; the referee says SR was the 3 and FL
    the 10. Each correction is built from the facts in force, so the second keeps the
    first, and the end is the truth: the 1 on the table, the 10 to spot."""
    for order in (("SR", "FL"), ("FL", "SR")):
        r = ten_ball()
        r.feed({"type": "shot", "pocketed": [{"pocket": "SR"}, {"pocket": "FL"}]})
        view = r.shot_facts()
        assert drops(view) == [(1, "SR", "presumed"), (2, "FL", "presumed")]
        assert view["presumed"] == ["first_contact", "pocketed"]
        truth = {"SR": 3, "FL": 10}
        for pocket in order:
            # what the app does for one "Which?": the list in force, that entry replaced,
            # the presumed ones left without a ball (still the engine's to presume)
            pocketed = [
                {"ball": truth[pocket], "pocket": d["pocket"], "source": "referee"}
                if d["pocket"] == pocket
                else (
                    {"pocket": d["pocket"]}
                    if d["origin"] == "presumed"
                    else {"ball": d["ball"], "pocket": d["pocket"], "source": d["origin"]}
                )
                for d in view["pocketed"]
            ]
            st_ = r.feed({"type": "confirm", "pocketed": pocketed})
            view = r.shot_facts()
        assert drops(view) == [(3, "SR", "referee"), (10, "FL", "referee")]
        assert 1 in st_["balls_on_table"] and st_["to_spot"] == [10]
        assert st_["at_table"] == "Ann" and view["presumed"] == ["first_contact"]


def test_one_correction_leaves_the_other_drop_presumed_from_what_is_left():
    r = ten_ball()
    r.feed({"type": "shot", "pocketed": [{"pocket": "SR"}, {"pocket": "FL"}]})
    r.feed({"type": "confirm", "pocketed": [{"ball": 1, "pocket": "FL"}, {"pocket": "SR"}]})
    # FL is the 1 (the referee's); SR is then presumed the lowest left, the 2
    assert drops(r.shot_facts()) == [(1, "FL", "referee"), (2, "SR", "presumed")]


def test_the_cue_balls_pocket_is_corrected_like_any_drop():
    r = ten_ball()
    r.feed({"type": "shot", "pocketed": [], "object_balls_to_rail": 5})  # Bob to shoot
    r.feed({"type": "shot", "pocketed": [{"ball": 0, "pocket": "SR", "source": "sensed"}]})
    view = r.shot_facts()
    assert drops(view) == [(0, "SR", "sensed")]
    st_ = r.feed(
        {"type": "confirm", "pocketed": [{"ball": 0, "pocket": "FL", "source": "referee"}]}
    )
    assert drops(r.shot_facts()) == [(0, "FL", "referee")]
    assert st_["ball_in_hand"] == "anywhere" and st_["at_table"] == "Ann"  # Bob scratched
    assert r.last_shot()["pocketed"] == [{"ball": 0, "pocket": "FL", "source": "referee"}]


def test_a_sensed_drop_the_referee_leaves_stays_sensed():
    r = ten_ball()
    r.feed(
        {
            "type": "shot",
            "pocketed": [{"ball": 0, "pocket": "HL", "source": "sensed"}, {"pocket": "SR"}],
        }
    )
    r.feed(
        {
            "type": "confirm",
            "pocketed": [
                {"ball": 0, "pocket": "HL", "source": "sensed"},
                {"ball": 5, "pocket": "SR"},
            ],
        }
    )
    assert drops(r.shot_facts()) == [(0, "HL", "sensed"), (5, "SR", "referee")]


def test_the_one_tap_confirm_makes_every_presumption_the_referees_and_rules_the_same():
    r = ten_ball()
    before = r.feed({"type": "shot", "pocketed": [{"pocket": "SR"}, {"pocket": "FL"}]})
    confirm = r.shot_facts()["confirm"]
    assert confirm == {
        "pocketed": [
            {"ball": 1, "pocket": "SR", "source": "referee"},
            {"ball": 2, "pocket": "FL", "source": "referee"},
        ],
        "first_contact": 1,
    }
    after = r.feed({"type": "confirm", **confirm})
    assert {k: after[k] for k in RULED} == {k: before[k] for k in RULED}
    assert after["rulings"][0]["text"] == (
        "The referee confirms the last shot (first_contact, pocketed) as ruled"
    )
    view = r.shot_facts()
    assert view["presumed"] == [] and view["confirm"] == {}
    assert {f["fact"]: f["origin"] for f in view["facts"]} == {"first_contact": "referee"}


def test_a_presumption_with_no_one_value_is_not_confirmed_by_a_tap():
    """8-ball, open table: "a legal ball" was hit first; no number says which, so the tap
    leaves it presumed for the referee to name."""
    r = Referee({"type": "match", "game": "8-ball", "players": ["Ann", "Bob"], "race_to": 2})
    r.feed({"type": "lag", "winner": "Ann"})
    r.feed({"type": "shot", "pocketed": [], "object_balls_to_rail": 5})  # legal break, no ball
    r.feed({"type": "shot", "pocketed": [], "rail_after_contact": True})  # Bob, open table
    view = r.shot_facts()
    assert fact(view, "first_contact") == {
        "fact": "first_contact",
        "value": None,
        "origin": "presumed",
    }
    assert "first_contact" not in view["confirm"]


def test_a_provisional_ruling_is_confirmed_on_its_fair_facts_not_the_estimate():
    r = ten_ball()
    before = r.feed(
        {
            "type": "shot",
            "pocketed": [],
            "object_balls_to_rail": 3,
            "object_balls_to_rail_range": [2, 9],
            "uncertain": ["object_balls_to_rail"],
        }
    )
    assert before["provisional"] and before["at_table"] == "Bob"
    view = r.shot_facts()
    assert fact(view, "object_balls_to_rail")["uncertain"] is True
    # the estimate (3) would be an illegal break; the ruling was the fair default
    assert view["confirm"]["object_balls_to_rail"] >= 4
    after = r.feed({"type": "confirm", **view["confirm"]})
    assert {k: after[k] for k in RULED} == {k: before[k] for k in RULED}
    assert after["provisional"] == [] and after["unconfirmed"] == []


def test_a_held_shot_offers_its_choices_not_a_confirm():
    r = ten_ball(referee=True)
    r.feed(
        {
            "type": "shot",
            "pocketed": [],
            "object_balls_to_rail": 3,
            "object_balls_to_rail_range": [2, 9],
            "uncertain": ["object_balls_to_rail"],
        }
    )
    assert r.state.awaiting == "referee_check" and r.shot_facts()["confirm"] == {}
    r.feed({"type": "confirm", "object_balls_to_rail": 3})
    # the answer is folded into the shot and is the referee's
    assert fact(r.shot_facts(), "object_balls_to_rail") == {
        "fact": "object_balls_to_rail",
        "value": 3,
        "origin": "referee",
    }


def test_fourteen_one_break_presumptions_confirm_to_the_same_ruling():
    r = Referee({"type": "match", "game": "14.1", "players": ["Cy", "Di"], "target": 25})
    r.feed({"type": "lag", "winner": "Cy"})
    before = r.feed({"type": "shot", "pocketed": []})
    view = r.shot_facts()
    assert view["confirm"] == {"object_balls_to_rail": 2, "cue_ball_to_rail": True}
    after = r.feed({"type": "confirm", **view["confirm"]})
    assert {k: after[k] for k in RULED} == {k: before[k] for k in RULED}


def test_entered_must_name_shot_facts():
    r = ten_ball()
    with pytest.raises(BadInput, match="entered must be a list of fact names"):
        r.feed({"type": "shot", "pocketed": [], "entered": ["colour"]})


def test_no_view_without_a_shot_to_correct():
    r = ten_ball()
    assert r.shot_facts() is None


# A random 10-ball game of unidentified drops, with or without a first ball reported: after
# every shot the one-tap confirm rules what was ruled, and leaves nothing presumed that
# has a value.
SHOTS = st.lists(
    st.tuples(
        st.lists(st.sampled_from(["HL", "HR", "SL", "SR", "FL", "FR"]), max_size=3),
        st.booleans(),  # a scratch
        st.booleans(),  # first contact reported as the lowest ball
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SHOTS)
def test_confirming_the_facts_in_force_never_changes_a_ruling(shots):
    r = ten_ball()
    for pockets, scratch, contact in shots:
        balls = sorted(set(r.state.on_table) | set(r.state.to_spot))
        if r.state.over or r.state.awaiting is not None or not balls:
            break
        shot = {"type": "shot", "pocketed": [{"pocket": p} for p in pockets][: len(balls)]}
        if scratch:
            shot["pocketed"].append({"ball": 0, "pocket": "HL"})
        if contact:
            shot["first_contact"] = balls[0]
        if not pockets:
            shot["rail_after_contact"] = True
        before = r.feed(shot)
        view = r.shot_facts()
        assert view is not None
        assert {x["origin"] for x in view["pocketed"] + view["facts"]} <= set(ORIGINS)
        if not view["confirm"]:
            continue
        twin = copy.deepcopy(r)
        after = twin.feed({"type": "confirm", **view["confirm"]})
        assert {k: after[k] for k in RULED} == {k: before[k] for k in RULED}
        left = twin.shot_facts()
        assert all(d["origin"] != "presumed" for d in left["pocketed"])
        assert left["confirm"] == {}
