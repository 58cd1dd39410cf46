"""The simulated referee and breaks the rail sensors cannot decide (protocol/REFEREE.md §3b):
on a weak or safe break he enters how many balls reached a rail, as he saw them, and at a
table with a referee he answers a shot held for his check, so simulated matches go on."""

from __future__ import annotations

import pytest

from railbird.rules import Referee, to_fen
from railbird.sim import physics
from railbird.sim.physics import ShotPlan
from railbird.sim.player import Style
from railbird.sim.table import Offline, make_source

TEN = {"type": "match", "game": "10-ball", "players": ["Ann", "Bob"], "race_to": 3}
STRAIGHT = {"type": "match", "game": "14.1", "players": ["Cy", "Di"], "target": 40}


def test_the_referee_says_how_many_balls_reached_a_rail_on_a_soft_break():
    assert physics.referee_facts(ShotPlan("weak_break", [], None, 1, 0.4)) == {
        "object_balls_to_rail": 1
    }
    assert physics.referee_facts(ShotPlan("safe_break", [], None, 3, 0.5)) == {
        "object_balls_to_rail": 2,
        "cue_ball_to_rail": True,
    }


@pytest.mark.parametrize("match", [TEN, STRAIGHT], ids=["10-ball", "14.1"])
@pytest.mark.parametrize("referee", [False, True])
def test_soft_breaks_are_ruled_as_the_referee_saw_them(match, referee):
    """Many soft breaks: each is ruled a fact (the referee's count), never held or
    provisional, and the transcript replays to the same state."""
    match = dict(match, referee=referee)
    style = Style(weak_break=0.5)
    lines: list = []
    r = Offline("t1", match, make_source(match, 7, style=style), seed=7, out=lines.append)
    held = provisional = 0
    for _ in range(150):
        if not r.step():
            break
        st = r.current_state()
        held += st["awaiting"] == "referee_check"
        provisional += bool(st["provisional"])
    assert r.refused == 0
    assert held == provisional == 0
    ref = Referee(match)
    for inp in lines:
        ref = Referee(inp) if inp["type"] == "match" else ref
        if inp["type"] != "match":
            ref.feed(inp)
    assert to_fen(ref.state) == r.expect.fen


def test_the_referee_answers_a_held_shot():
    from railbird.sim.player import Player

    p = Player(dict(TEN, referee=True), 1)
    ref = Referee(dict(TEN, referee=True))
    ref.feed({"type": "lag", "winner": "Ann"})
    st = ref.feed(
        {
            "type": "shot",
            "pocketed": [],
            "object_balls_to_rail": 5,
            "object_balls_to_rail_range": [2, 9],
            "uncertain": ["object_balls_to_rail"],
        }
    )
    assert st["awaiting"] == "referee_check"
    turn = p.next_turn(st)
    assert turn.plan is None and turn.inputs == [{"type": "confirm"}]
    assert ref.feed(turn.inputs[0])["awaiting"] is None  # accepted: play goes on
