"""Issue 25, item 4: a handicapped race, `races: [n0, n1]` in the `match` input
(REFEREE.md §1): each player wins the match on reaching their own race."""

import pytest

from railbird.rules import BadInput, Referee
from railbird.rules.fen import from_fen
from rulehelp import feed, match, shot

NINE_ON_BREAK = shot("9FL", first_contact=1)  # 9.2: the 9 on a legal break wins the rack


def test_the_weaker_player_wins_at_their_race_of_three():
    # alternate breaks, each breaker wins his rack: Ann (race 5) is at 3 when Bob reaches 3
    r = match("9-ball", races=[5, 3], race_to=None)
    for _ in range(5):
        out = feed(r, NINE_ON_BREAK)
        assert out["match_winner"] is None
    assert out["scores"] == {"Ann": 3, "Bob": 2}  # Ann at 3 racks has not won: she needs 5
    out = feed(r, NINE_ON_BREAK)
    assert out["scores"] == {"Ann": 3, "Bob": 3} and out["match_winner"] == "Bob"
    assert out["rulings"][-1]["text"] == "Bob wins the match 3-3"


def test_the_stronger_player_needs_five():
    r = match("10-ball", races=[5, 3], race_to=None, break_order="winner")
    for n in range(1, 5):
        out = feed(r, shot("10FL", first_contact=1))  # spotted: Ann goes on
        out = feed(r, {"type": "call", "ball": 1, "pocket": "FR"}, shot("1FR"))
        out = feed(r, {"type": "call", "ball": 10, "pocket": "SL"}, shot("10SL"))
        assert out["scores"]["Ann"] == n and out["match_winner"] is None
    feed(r, shot("10FL", first_contact=1), {"type": "call", "ball": 1, "pocket": "FR"})
    feed(r, shot("1FR"), {"type": "call", "ball": 10, "pocket": "SL"})
    out = feed(r, shot("10SL"))
    assert out["scores"] == {"Ann": 5, "Bob": 0} and out["match_winner"] == "Ann"


def test_races_are_in_the_state_its_fen_and_its_json_view():
    r = match("8-ball", races=[2, 4], race_to=None)
    out = r.state_json()
    assert out["races"] == {"Ann": 2, "Bob": 4} and out["goal"] == 4
    assert "races=2/4" in out["fen"]
    assert from_fen(out["fen"]).races == (2, 4)


def test_equal_races_are_a_plain_race_to():
    same = match("9-ball", races=[3, 3], race_to=None).state_json()
    plain = match("9-ball", race_to=3).state_json()
    assert same == plain and "races" not in same
    agreed = match("9-ball", races=[3, 3], race_to=3).state_json()
    assert agreed == plain


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"game": "9-ball", "race_to": 5, "races": [5, 3]}, "race_to 5 contradicts races 5-3"),
        ({"game": "14.1", "target": 100, "races": [100, 60]}, "races are for rack games"),
        ({"game": "10-ball", "races": [5]}, "races must be a list of two integers"),
        ({"game": "10-ball", "races": [5, 0]}, "races must be a list of two integers"),
        ({"game": "10-ball", "races": [5, "3"]}, "races must be a list of two integers"),
        ({"game": "10-ball", "races": [5, True]}, "races must be a list of two integers"),
    ],
)
def test_bad_races_are_refused_with_a_reason(fields, says):
    with pytest.raises(BadInput, match=says):
        Referee({"type": "match", "players": ["Ann", "Bob"], **fields})
