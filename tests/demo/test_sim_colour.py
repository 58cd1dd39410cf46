"""A 10-ball race played by the simulator with a colour station in the ball return
(hardware/colour.md): the sensed shots name every pocketed ball, the referee enters no
identity, and the race goes exactly as it does when the referee names every ball; with
the station unplugged the host says so and the rules presume, saying so."""

from __future__ import annotations

import random

import pytest

from railbird.core.game import shot_input
from railbird.core.shots import ShotParams
from railbird.rules import Referee
from railbird.sim import physics
from railbird.sim.physics import ShotPlan
from railbird.sim.table import Offline, make_source

TEN = {"type": "match", "game": "10-ball", "players": ["Ann", "Bob"], "race_to": 3}


def race(seed: int, colour: bool, turns: int = 250):
    lines: list[dict] = []
    r = Offline("t1", TEN, make_source(TEN, seed), seed=seed, out=lines.append, colour=colour)
    r.run(turns=turns)
    return r, lines


@pytest.mark.parametrize("seed", [3, 8])
def test_a_race_with_the_colour_station_needs_no_identity_from_the_referee(seed):
    sensed, lines = race(seed, colour=True)
    refereed, _ = race(seed, colour=False)
    assert sensed.refused == 0
    shots = [i for i in lines if i["type"] == "shot"]
    pocketed = [p for i in shots for p in i["pocketed"]]
    assert len(pocketed) > 20
    # every ball named by the sensors: the station (sensed) or the cue detector (inferred)
    assert all(p.get("ball") is not None for p in pocketed), pocketed
    assert all(p.get("source") in ("sensed", "inferred") for p in pocketed)
    assert not any(i["type"] == "confirm" and "pocketed" in i for i in lines)
    assert sensed.expect.fen == refereed.expect.fen  # the same race as with a referee
    # at least one whole race to 3 was played (the simulator starts the next when one ends)
    assert sum(1 for i in lines if i["type"] == "match") >= 2


def test_with_the_station_unplugged_the_host_says_so_and_presumes():
    plan = ShotPlan("pot", [(4, "FL")], rails=2)
    edges = [e for e in physics.edges(plan, random.Random(1), colour=True) if e.kind != "ball"]
    params = ShotParams(cue_return_us=physics.shot_params().cue_return_us, colour_station=True)
    shot = physics.sensed_shot(edges, params)
    assert any("colour station unplugged" in w for w in shot["warnings"])
    ref = Referee(dict(TEN))
    ref.feed({"type": "lag", "winner": "Ann"})
    ref.feed({"type": "shot", "pocketed": [], "rail_after_contact": True,
              "object_balls_to_rail": 4})  # fmt: skip
    ref.feed(shot_input(shot, state=ref.state_json()))
    texts = [r["text"] for r in ref.state_json().get("rulings") or []]
    assert any("not identified: presumed to be the 1" in t for t in texts), texts
