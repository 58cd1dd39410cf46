"""Rulings that depend on a fact the sensors cannot decide (protocol/REFEREE.md §3b, issue 15
item 3): the shot is ruled for every value the sensors allow; the same outcome for all is a
fact, anything else waits for the referee (option `referee`) or is ruled on the fair
default and marked provisional. Never a silent guess."""

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from railbird.rules import BadInput, from_fen, to_fen
from railbird.rules.valid import valid_inputs
from rulehelp import GAMES, feed, match, rack_size, rules_of, shot

CONFIRM = {"type": "confirm"}
UNDO = {"type": "undo"}


def ranged(lo, hi, est=None, *pots, **facts):
    """A sensed break: the estimate and the range the rail sensors support."""
    est = lo if est is None else est
    return shot(
        *pots,
        object_balls_to_rail=est,
        object_balls_to_rail_range=[lo, hi],
        uncertain=["object_balls_to_rail"],
        **facts,
    )


def texts(out):
    return [x["text"] for x in out["rulings"]]


def flagged(r, out) -> bool:
    return out["awaiting"] == "referee_check" or bool(out["provisional"])


# -- 10-ball 9.3.2: four object balls to a rail unless a ball is pocketed ------------------
def test_ten_ball_three_ball_break_estimated_five_awaits_the_referee_at_the_table():
    """Three balls reached a rail; the sensors say 3-9 (estimate 5). With a referee the
    shot is held: no ruling until he says, and his console gets one button per outcome."""
    r = match("10-ball", referee=True)
    out = feed(r, ranged(3, 9, 5))
    assert out["awaiting"] == "referee_check"
    assert out["at_table"] == "Ann" and out["ball_in_hand"] == "kitchen"  # nothing ruled yet
    assert "held for the referee's check" in " ".join(texts(out))
    assert out["check"]["facts"] == ["object_balls_to_rail"]
    (confirm,) = [
        v for v in valid_inputs(r.state, correct=r.correctable()) if v["type"] == "confirm"
    ]
    labels = {c["label"]: c["facts"] for c in confirm["choices"]}
    assert labels["legal break"] == {"object_balls_to_rail": 5}
    illegal = next(f for lab, f in labels.items() if lab.startswith("foul"))
    assert illegal == {"object_balls_to_rail": 3}
    assert "shot" not in {v["type"] for v in valid_inputs(r.state)}  # play waits
    with pytest.raises(Exception, match="awaiting referee check"):
        r.feed(shot())
    out = feed(r, {"type": "confirm", **illegal})
    assert out["awaiting"] is None and out["check"] is None
    assert "9.3.2" in rules_of(out) and out["at_table"] == "Bob"
    assert out["ball_in_hand"] == "anywhere" and out["unconfirmed"] == []


def test_ten_ball_three_ball_break_without_referee_is_legal_and_provisional():
    """No referee: the fair default (requirement met, REFEREE.md §3) applies, marked
    provisional in the state and the rulings until the referee confirms or corrects it."""
    r = match("10-ball")
    out = feed(r, ranged(3, 9, 5))
    assert out["awaiting"] is None and out["at_table"] == "Bob"  # legal break, nothing down
    (prov,) = out["provisional"]
    assert prov["fact"] == "object_balls_to_rail" and prov["rule"] == "9.3.2"
    assert prov["ruling"] == "legal break"
    assert any(t.startswith("Provisional: legal break") for t in texts(out))
    assert out["unconfirmed"] == ["object_balls_to_rail"]
    illegal = next(c["facts"] for c in prov["choices"] if c["rule"] == "9.3.2")
    out = feed(r, {"type": "confirm", **illegal})  # the referee corrects it
    assert "9.3.2" in rules_of(out) and out["ball_in_hand"] == "anywhere"
    assert out["provisional"] == [] and out["unconfirmed"] == []


def test_a_provisional_ruling_confirmed_or_played_on_is_no_longer_provisional():
    r = match("10-ball")
    feed(r, ranged(2, 7, 4))
    out = feed(r, CONFIRM)
    assert out["provisional"] == [] and "is confirmed" in " ".join(texts(out))
    r = match("10-ball")
    feed(r, ranged(2, 7, 4))
    out = feed(r, shot(first_contact=1, rail_after_contact=True))  # Bob plays on
    assert out["provisional"] == [] and "stands" in " ".join(texts(out))


@pytest.mark.parametrize(
    ("lo", "hi", "pots", "legal"),
    [((4, 9, (), True)), ((0, 3, (), False)), ((0, 9, ("5FL",), True)), ((4, 4, (), True))],
    ids=["all-legal", "all-illegal", "ball-pocketed", "one-value"],
)
@pytest.mark.parametrize("referee", [True, False])
def test_ten_ball_decisive_range_is_ruled_without_flags(lo, hi, pots, legal, referee):
    r = match("10-ball", referee=referee)
    out = feed(r, ranged(lo, hi, lo, *pots))
    assert out["awaiting"] is None and out["provisional"] == []
    assert out["unconfirmed"] == []  # the exact count decides nothing
    assert ("9.3.2" not in rules_of(out)) == legal


def test_range_is_checked_and_bounded_never_refused_as_impossible():
    r = match("10-ball")
    with pytest.raises(BadInput, match="within"):
        r.feed(ranged(2, 5, 7))
    with pytest.raises(BadInput, match="lo <= hi"):
        r.feed(shot(object_balls_to_rail_range=[5, 2]))
    out = feed(r, ranged(4, 15, 6))  # 10 balls on the table: the range is cut to 4-10
    assert out["provisional"] == [] and "9.3.2" not in rules_of(out)


# -- 14.1 4.3.2: a called ball pocketed, or two object balls and the cue ball to a rail -----
def test_straight_pool_opening_break_one_or_more_balls_awaits_or_is_provisional():
    r = match("14.1", referee=True)
    out = feed(r, ranged(1, 6, 3))
    assert out["awaiting"] == "referee_check" and out["scores"] == {"Ann": 0, "Bob": 0}
    out = feed(r, {"type": "confirm", "object_balls_to_rail": 1})
    assert "4.3.2" in rules_of(out) and out["scores"]["Ann"] == -2
    assert out["awaiting"] == "accept_or_rebreak"
    r = match("14.1")
    out = feed(r, ranged(1, 6, 3))
    assert out["provisional"][0]["rule"] == "4.3.2"
    assert not any("breaking foul" in t for t in texts(out))
    assert out["scores"]["Ann"] == 0 and out["at_table"] == "Bob"


@pytest.mark.parametrize(
    ("lo", "hi", "pots", "foul"),
    [(2, 9, (), False), (0, 1, (), True), (1, 6, ("7FR",), False), (0, 6, ("7FR", "8FL"), False)],
)
def test_straight_pool_decisive_ranges(lo, hi, pots, foul):
    """Pocketed balls count as driven to a rail (8.4), on top of the range."""
    r = match("14.1", referee=True)
    out = feed(r, ranged(lo, hi, lo, *pots, cue_ball_to_rail=True))
    assert out["awaiting"] != "referee_check" and out["provisional"] == []
    assert ("4.3.2" in rules_of(out)) == foul


# -- the same for any fact flagged uncertain that decides a ruling --------------------------
def test_uncertain_no_rail_after_contact_awaits_or_is_provisional():
    """A strike and nothing else sensed: a no-rail foul (6.3) only if no ball reached a
    rail, which a soft touch does not show on the sensors."""
    base = shot(first_contact=1, rail_after_contact=False, uncertain=["rail_after_contact"])
    r = match("10-ball", lag="Ann", referee=True)
    feed(r, shot("2FL"))  # legal break, Ann continues
    out = feed(r, base)
    assert out["awaiting"] == "referee_check" and out["at_table"] == "Ann"
    out = feed(r, {"type": "confirm", "rail_after_contact": False})
    assert "9.10.3" in rules_of(out) and out["ball_in_hand"] == "anywhere"
    r = match("10-ball", lag="Ann")
    feed(r, shot("2FL"))
    out = feed(r, base)
    assert out["provisional"][0]["rule"] == "9.10.3" and "9.10.3" not in rules_of(out)[:-1]
    assert out["at_table"] == "Bob" and out["ball_in_hand"] is None
    # a ball pocketed: no rail is needed, so nothing is in doubt
    r = match("10-ball", lag="Ann", referee=True)
    feed(r, shot("2FL"))
    out = feed(r, dict(base, pocketed=[{"ball": 1, "pocket": "SL"}]))
    assert out["awaiting"] is None


# -- history: undo, corrections, the state line ---------------------------------------------
def test_held_shot_undo_and_correction_after_the_answer():
    r = match("10-ball", referee=True)
    before = r.state
    feed(r, ranged(3, 9, 5))
    assert feed(r, UNDO)["awaiting"] is None and r.state == before
    feed(r, ranged(3, 9, 5))
    out = feed(r, {"type": "confirm", "object_balls_to_rail": 3})
    assert out["ball_in_hand"] == "anywhere"
    out = feed(r, UNDO)  # the answer withdrawn: the shot is held again
    assert out["awaiting"] == "referee_check"
    feed(r, CONFIRM)  # as sensed: 5, legal
    assert r.state.at_table == 1 and r.state.ball_in_hand is None
    out = feed(r, {"type": "confirm", "object_balls_to_rail": 2})  # a later correction
    assert out["ball_in_hand"] == "anywhere" and out["awaiting"] is None
    assert "9.3.2" in rules_of(out)


def test_fen_round_trips_a_held_shot_and_a_provisional_ruling():
    for referee in (True, False):
        r = match("10-ball", referee=referee)
        out = feed(r, ranged(3, 9, 5))
        assert from_fen(out["fen"]) == r.state and to_fen(r.state) == out["fen"]
        # the compact form (rules/fendoubt.py), not percent-encoded JSON
        assert (" check=p;" in out["fen"]) == referee and (" prov=o|" in out["fen"]) != referee
        assert len(out["fen"]) <= 512


def test_referee_is_a_match_field_and_an_option():
    assert match("10-ball", referee=True).state.opt("referee") is True
    assert match("10-ball", options=["referee"]).state.opt("referee") is True
    assert match("10-ball", options=["referee"], referee=False).state.opt("referee") is False
    assert match("14.1").state.opt("referee") is False


# -- the invariant: decided alike for every value in the range, or flagged -------------------
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    game=st.sampled_from(GAMES),
    referee=st.booleans(),
    data=st.data(),
)
def test_any_range_is_decided_for_every_value_or_flagged(game, referee, data):
    balls = rack_size(game)
    pots = data.draw(st.lists(st.integers(1, balls), unique=True, max_size=2))
    room = balls - len(pots)
    lo = data.draw(st.integers(0, room))
    hi = data.draw(st.integers(lo, room))
    est = data.draw(st.integers(lo, hi))
    cue = data.draw(st.sampled_from([None, True, False]))
    facts = {} if cue is None else {"cue_ball_to_rail": cue}
    pocketed = [f"{b}FL" if i == 0 else f"{b}FR" for i, b in enumerate(pots)]
    # each value as a certain fact
    outcomes = []
    for v in range(lo, hi + 1):
        r = match(game, referee=referee)
        outcomes.append(
            json.dumps(feed(r, shot(*pocketed, object_balls_to_rail=v, **facts)), sort_keys=True)
        )
    r = match(game, referee=referee)
    out = feed(r, ranged(lo, hi, est, *pocketed, **facts))
    if len({json.loads(o)["fen"] for o in outcomes}) == 1:  # the same state for all
        assert not flagged(r, out), out
        ruled = json.loads(outcomes[0])
        for key in ("at_table", "ball_in_hand", "scores", "awaiting", "balls_on_table"):
            assert out[key] == ruled[key], key
    else:
        assert flagged(r, out), out
        assert (out["awaiting"] == "referee_check") == referee


# -- ruling a range for the counts that can differ only (doubt.ALIKE_FROM) ----------------
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    game=st.sampled_from(GAMES),
    referee=st.booleans(),
    data=st.data(),
)
def test_a_range_ruled_for_its_distinct_counts_rules_as_every_count(game, referee, data):
    """The whole answer (state, rulings, the referee's choices and their facts, the
    provisional entry) is the same as ruling every count of the range."""
    from railbird.rules import doubt

    balls = rack_size(game)
    pots = data.draw(st.lists(st.integers(1, balls), unique=True, max_size=2))
    off = data.draw(st.lists(st.integers(1, balls), unique=True, max_size=2))
    off = [b for b in off if b not in pots]
    room = balls - len(pots) - len(off)
    lo = data.draw(st.integers(0, room))
    hi = data.draw(st.integers(lo, room))
    est = data.draw(st.integers(lo, hi))
    facts = {}
    cue = data.draw(st.sampled_from([None, True, False]))
    if cue is not None:
        facts["cue_ball_to_rail"] = cue
    doubtful = data.draw(st.sets(st.sampled_from(["cue_ball_to_rail", "rail_after_contact"])))
    pocketed = [f"{b}FL" if i == 0 else f"{b}FR" for i, b in enumerate(pots)]
    sensed = ranged(lo, hi, est, *pocketed, off_table=off, **facts)
    sensed["uncertain"] = sorted({"object_balls_to_rail", *doubtful})

    def answer():
        r = match(game, referee=referee)
        return json.dumps(feed(r, sensed), sort_keys=True)

    cut = answer()
    saved, doubt.ALIKE_FROM = doubt.ALIKE_FROM, None  # every count of the range
    try:
        every = answer()
    finally:
        doubt.ALIKE_FROM = saved
    assert cut == every
