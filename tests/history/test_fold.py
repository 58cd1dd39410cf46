"""The history fold against hand-computed expectations: matches with players, game, result,
start and end, racks, innings, high runs, fouls and balls pocketed, through undo, a
correction, a concession, an abandoned match, a replaced configured match and an undo of
`match` (protocol/REFEREE.md §2, §3a, §9; docs/history.md)."""

from __future__ import annotations

import pytest

from railbird.history import store
from railbird.history.fold import Fold, fouls_by, goal_of
from tests.history.nights import TENBALL, Night, at, tenball_race

STRAIGHT = {"type": "match", "game": "14.1", "players": ["Cleo", "Dev"], "target": 5}
W = at("2026-11-27 20:00")


@pytest.fixture
def night(tmp_path):
    n = Night(tmp_path / "journal.sqlite")
    yield n
    n.close()


def history(night, **filters) -> list[dict]:
    store.update(night.journal.db)
    return store.matches(night.journal.db, **filters)


def test_a_ten_ball_race_won(night):
    tenball_race(night, "t1", W)
    (m,) = history(night)
    assert m == {
        "id": m["id"],
        "venue": "club",
        "table": "t1",
        "game": "10-ball",
        "players": ["Ann", "Bob"],
        "goal": 2,
        "start": W,  # the lag
        "end": W + 360,  # the deciding shot
        "result": "won",
        "winner": "Bob",
        "scores": [1, 2],
        "racks": 3,
        "innings": 6,  # Ann, Bob, Bob (breaks rack 2), Ann, Ann (breaks rack 3), Bob
        "high_runs": [1, 1],  # racks won: Bob, Ann, Bob: never two in a row
        "fouls": [0, 1],  # Bob's scratch on the break of rack 2
        "balls": [2, 2],  # Ann: FR on the break, the 10 in HL; Bob: the 10 twice
        "cue": [0, 1],
        "begun": True,
    }


def test_racks_won_in_a_row_are_the_high_run_of_a_rack_game(night):
    """Race to 3, the winner breaks: Bob wins racks 1 and 2, Ann rack 3, Bob rack 4."""
    night.table("t1", dict(TENBALL, race_to=3, break_order="winner"))
    night.referee("t1", W, {"type": "lag", "winner": "Ann"})
    plan = [  # (the break's drops, who pots the called 10 after it)
        ([], "Bob"),  # Ann's break: nothing down, Bob to shoot
        (["HL"], "Bob"),  # Bob's break: a ball down, Bob stays
        ([], "Ann"),  # Bob's break: nothing, Ann to shoot
        ([], "Bob"),  # Ann's break: nothing, Bob to shoot
    ]
    for i, (drops, potter) in enumerate(plan):
        w = W + 100 * (i + 1)
        assert night.shot("t1", w, drops)["at_table"] == potter
        night.referee("t1", w + 10, {"type": "call", "ball": 10, "pocket": "FL"})
        assert night.shot("t1", w + 20, [("FL", 10)])["rack_winner"] == potter
    (m,) = history(night)
    assert (m["result"], m["winner"], m["scores"]) == ("won", "Bob", [1, 3])
    assert m["high_runs"] == [1, 2]
    assert (m["racks"], m["innings"]) == (4, 7)
    assert m["balls"] == [1, 4] and m["end"] == W + 420


def test_straight_pool_high_runs_fouls_and_points(night):
    """14.1 to 5: Cleo's safe break; Dev runs 2, misses; Cleo runs 3, then scratches (-1,
    her foul); Dev runs 3 and wins 5-2. High runs 3 and 3, one foul."""
    t = "t2"
    night.table(t, STRAIGHT)
    w = at("2026-11-27 21:00")
    night.referee(t, w, {"type": "lag", "winner": "Cleo"})
    assert night.shot(t, w + 10, [])["at_table"] == "Dev"
    dt = 20
    for balls, pocket in (((1, 2), "SL"), ((3, 4, 5), "HR")):
        for b in balls:
            night.referee(t, w + dt, {"type": "call", "ball": b, "pocket": pocket})
            night.shot(t, w + dt + 5, [(pocket, b)])
            dt += 10
        night.referee(t, w + dt, {"type": "call", "ball": 15, "pocket": "FL"})
        if pocket == "SL":
            night.shot(t, w + dt + 5, [])  # Dev misses
        else:
            st = night.shot(t, w + dt + 5, [("FR", 0)])  # Cleo scratches
            assert st["scores"] == {"Cleo": 2, "Dev": 2}
        dt += 10
    for b in (6, 7, 8):
        night.referee(t, w + dt, {"type": "call", "ball": b, "pocket": "HL"})
        st = night.shot(t, w + dt + 5, [("HL", b)])
        dt += 10
    assert st["match_winner"] == "Dev" and st["high_run"] == {"Cleo": 3, "Dev": 3}
    (m,) = history(night)
    assert (m["game"], m["goal"], m["result"], m["winner"]) == ("14.1", 5, "won", "Dev")
    assert (m["start"], m["end"]) == (w, w + dt - 5)
    assert m["scores"] == [2, 5]
    assert m["high_runs"] == [3, 3]
    assert m["fouls"] == [1, 0]
    assert m["balls"] == [3, 5] and m["cue"] == [1, 0]
    assert (m["racks"], m["innings"]) == (1, 4)  # Cleo breaks, Dev, Cleo, Dev


def test_undo_withdraws_a_foul_and_a_rack_but_not_the_balls(night):
    night.table("t1", TENBALL)
    night.referee("t1", W, {"type": "lag", "winner": "Ann"})
    night.shot("t1", W + 10, [("SR", 0)])  # Ann scratches on the break: a foul
    night.referee("t1", W + 20, {"type": "undo"})
    night.shot("t1", W + 30, [])
    night.referee("t1", W + 40, {"type": "call", "ball": 10, "pocket": "FL"})
    night.shot("t1", W + 50, [("FL", 10)])  # Bob wins rack 1 ...
    night.referee("t1", W + 60, {"type": "undo"})  # ... withdrawn
    (m,) = history(night)
    assert m["fouls"] == [0, 0]
    assert m["scores"] == [0, 0] and m["high_runs"] == [0, 0] and m["racks"] == 1
    assert m["balls"] == [0, 1] and m["cue"] == [1, 0]  # they did drop
    assert (m["result"], m["end"]) == ("in progress", None)


def test_a_correction_replaces_the_shot_it_rules_again(night):
    night.table("t1", TENBALL)
    night.referee("t1", W, {"type": "lag", "winner": "Ann"})
    night.shot("t1", W + 10, [])
    night.shot("t1", W + 20, [])  # Bob misses
    night.referee("t1", W + 30, {"type": "confirm", "first_contact": 5})  # wrong ball first
    assert history(night)[0]["fouls"] == [0, 1]
    night.referee("t1", W + 40, {"type": "confirm", "first_contact": 1})  # no, the 1 first
    assert history(night)[0]["fouls"] == [0, 0]
    night.referee("t1", W + 50, {"type": "confirm", "first_contact": 5})
    night.referee("t1", W + 60, {"type": "undo"})  # the corrected shot is withdrawn
    m = history(night)[0]
    assert m["fouls"] == [0, 0] and m["innings"] == 2


def test_concede_abandon_and_match_control(night):
    """A configured match nobody began is replaced (not listed); a concession; the next
    match abandoned; a new match withdrawn by undo brings the abandoned one back."""
    t = "t3"
    night.table(t, {"type": "match", "game": "9-ball", "players": ["Cy", "Dee"], "race_to": 3})
    night.referee(t, W, {"type": "match", "players": ["Eve", "Finn"]})
    night.referee(t, W + 60, {"type": "lag", "winner": "Eve"})
    night.shot(t, W + 70, ["HL", "SR"])
    night.shot(t, W + 80, [])
    night.referee(t, W + 90, {"type": "concede", "player": "Finn"})
    night.referee(t, W + 600, {"type": "match"})
    night.referee(t, W + 660, {"type": "lag", "winner": "Finn"})
    night.shot(t, W + 670, ["FL"])
    night.referee(t, W + 680, {"type": "abandon"})
    night.referee(t, W + 700, {"type": "match", "players": ["Gus", "Hal"]})
    night.referee(t, W + 710, {"type": "undo"})
    ms = history(night)
    assert [(m["players"], m["result"], m["winner"]) for m in ms] == [
        (["Eve", "Finn"], "conceded", "Eve"),
        (["Eve", "Finn"], "abandoned", None),
    ]
    first, second = ms
    assert (first["start"], first["end"], first["scores"]) == (W + 60, W + 90, [0, 0])
    assert first["balls"] == [2, 0] and first["game"] == "9-ball" and first["goal"] == 3
    assert (second["start"], second["end"], second["balls"]) == (W + 660, W + 680, [0, 1])
    # the drops after the abandon belong to no match
    night.shot(t, W + 720, ["HR"], refused_ok=True)  # the rules refuse it: the match is over
    store.update(night.journal.db)
    rows = night.journal.db.execute(
        "SELECT pocket, player, match FROM history_drops WHERE tbl='t3' ORDER BY shot, i"
    ).fetchall()
    assert rows == [
        ("HL", "Eve", first["id"]),
        ("SR", "Eve", first["id"]),
        ("FL", "Finn", second["id"]),
        ("HR", None, None),
    ]


def test_filters_by_player_table_and_period(night):
    tenball_race(night, "t1", at("2026-11-27 20:00"))
    tenball_race(night, "t2", at("2026-11-28 05:30"))  # still the business day of the 27th
    tenball_race(night, "t1", at("2026-11-28 19:00"))
    assert len(history(night)) == 3
    assert [m["table"] for m in history(night, table="t1")] == ["t1", "t1"]
    assert history(night, player="Nobody") == []
    assert len(history(night, player="Ann")) == 3
    since, until = at("2026-11-27 06:00"), at("2026-11-28 06:00")
    assert [m["table"] for m in history(night, since=since, until=until)] == ["t1", "t2"]


def test_a_table_set_up_afresh_starts_a_new_match(night):
    """Play on a table whose match is over, without a `match` input (the daemon restarted
    with another config): a new match, not more of the old one."""
    tenball_race(night, "t1", W)
    night.table("t1", dict(TENBALL, players=["Ann", "Cy"]))
    night.referee("t1", W + 3600, {"type": "lag", "winner": "Cy"})
    ms = history(night)
    assert [(m["players"], m["result"]) for m in ms] == [
        (["Ann", "Bob"], "won"),
        (["Ann", "Cy"], "in progress"),
    ]
    assert ms[0]["end"] == W + 360 and ms[1]["start"] == W + 3600


def test_pure_helpers():
    assert goal_of("g=14.1 p=A/B goal=150 order=alternate") == 150
    assert goal_of(None) is None
    anns = [
        {"text": "Foul by Ann: cue ball scratch or off the table (6.1)"},
        {"text": "Foul on the break by Bob: no rail"},
        {"text": "Ann loses 1 point (standard foul); score 2"},
        {"text": "Wrongly pocketed ball(s), called ball missed; no foul: Ann to shoot"},
        {"text": "Foul by Annabel: not Ann's"},
    ]
    assert fouls_by(anns, ("Ann", "Bob")) == (1, 1)
    # a state that is not a match state (no players) changes nothing
    assert Fold().state({"id": 1, "venue": "v", "table": "t", "state": {"x": 1}}) == []
