"""Referee inputs that bring a 10-ball race to 2 (Ann v Bob) to the states every board must
show (protocol/REFEREE.md §2): each scene is the inputs after the previous one's, and what the
rules make of them is checked by the tests (they assert the state before the pages)."""

from __future__ import annotations

MATCH = {"game": "10-ball", "players": ["Ann", "Bob"], "race_to": 2}


def call(ball, pocket):
    return {"type": "call", "ball": ball, "pocket": pocket}


def shot(*pocketed, fouls=None):
    s = {"type": "shot", "pocketed": [{"ball": b, "pocket": p} for b, p in pocketed]}
    if fouls:
        s["fouls"] = fouls
    return s


MISS = shot()
FOUL = shot(fouls=["6.3"])  # no rail after contact

# name, inputs, what the state then says (the tests check it before any page)
SCENES = [
    # Ann breaks: the cue ball in hand behind the head string
    ("break", [{"type": "lag", "winner": "Ann"}], {"ball_in_hand": "kitchen", "at_table": "Ann"}),
    # Ann pots the 3 on the break and calls the 1; she fouls: Bob has ball in hand anywhere
    (
        "ball-in-hand",
        [shot((3, "FL")), call(1, "SR"), FOUL],
        {"ball_in_hand": "anywhere", "at_table": "Bob", "consecutive_fouls": {"Ann": 1, "Bob": 0}},
    ),
    # Bob misses, Ann fouls again, Bob misses: Ann comes to the table on two fouls and calls
    (
        "two-fouls",
        [call(1, "SR"), MISS, call(1, "SR"), FOUL, call(1, "HL"), MISS, call(1, "HL")],
        {
            "at_table": "Ann",
            "consecutive_fouls": {"Ann": 2, "Bob": 0},
            "call": {"ball": 1, "pocket": "HL"},
        },
    ),
    # Ann pots the 10, not called: it is spotted and Bob may shoot or pass
    (
        "to-spot",
        [shot((10, "FR"))],
        {"to_spot": [10], "awaiting": "shoot_or_pass", "at_table": "Bob"},
    ),
]
# Bob shoots and wins two racks (calls and pots the 10 each time): the match is over
OVER_INPUTS = [
    {"type": "option", "choice": "shoot"},
    call(10, "HL"),
    shot((10, "HL")),
    shot((2, "SL")),  # Bob breaks rack 2 and pots the 2: he stays at the table
    call(10, "FR"),
    shot((10, "FR")),
]
