"""The fouls the referee app offers by name (rules.fouls.declarable): every one is accepted
by the engine when declared, and the ruling cites the rule number the app shows."""

from __future__ import annotations

import pytest

from railbird.rules.engine import GAMES
from railbird.rules.fouls import SAME_AS_WPA, declarable
from rulehelp import MISS, match


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_listed_foul_is_accepted_and_cited(game):
    listed = declarable(GAMES[game])
    assert listed, game
    for foul in listed:
        r = match(game)
        r.feed(MISS)  # the break: the declared foul is on the next shot, a normal one
        out = r.feed({"type": "shot", "pocketed": [], "fouls": [foul["declare"]]})
        cited = [x["rule"] for x in out["rulings"]]
        assert foul["rule"] in cited, (game, foul, out["rulings"])
        assert any(foul["name"].split(" (")[0] in x["text"] for x in out["rulings"]), (
            game,
            foul,
            out["rulings"],
        )


def test_lists_follow_each_games_section():
    ten = {f["declare"]: f for f in declarable(GAMES["10-ball"])}
    straight = {f["declare"]: f for f in declarable(GAMES["14.1"])}
    # 10-ball (9.10) has "wrong ball first" and no kitchen foul; 14.1 (4.9) the reverse
    assert ten["6.2"]["rule"] == "9.10.2" and "6.11" not in ten
    assert "6.2" not in straight and straight["6.11"]["rule"] == "4.9.10"
    # the serious foul is cited by the game's serious-foul rule
    assert ten["6.16"] == {
        "declare": "6.16",
        "rule": "9.11",
        "name": "unsportsmanlike conduct",
        "grade": "serious",
    }
    # counted by the engine or no foul under the WPA text: never offered
    for lst in (ten, straight):
        assert "6.14" not in lst and "general 26" not in lst


@pytest.mark.parametrize("game", sorted(GAMES))
def test_each_foul_is_offered_once(game):
    """General 22 (double hit) and 23 (push shot) are 6.7 and 6.8 under other numbers: the
    app offers the game's own list entry only (9.10.7, 9.10.8...); the engine still takes
    either number when declared (tests/rules/test_general.py)."""
    g = GAMES[game]
    codes = [f["declare"] for f in declarable(g)]
    assert len(codes) == len(set(codes))
    for n, wpa in SAME_AS_WPA.items():
        assert wpa in codes and f"general {n}" not in codes, (game, n)
    names = [f["name"].lower() for f in declarable(g)]
    assert sum("double hit" in x for x in names) == 1, names
    assert sum("push shot" in x for x in names) == 1, names
