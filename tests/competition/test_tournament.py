"""The tournament formats on small events worked by hand (docs/events.md): where byes go,
the losers' bracket's byes, the grand final and its reset, the race per round, what a
table is given, the standings' tie rules, and the refusals. Each test states the bracket
it expects, so a change to the layout shows here as well as in the property tests."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from railbird import rules
from railbird.competition import jsonform, tournament as T
from railbird.competition.errors import CompetitionError, NotAllowed
from railbird.competition.layout import FromEntry
from railbird.competition.spec import Entrant, Format, Seeding, Stage, make_spec
from railbird.competition.standings import standings
from railbird.competition.tournament import MatchState as S, Result
from tests.competition.play import check_complete, entrants, play


def event(fmt=Format.DOUBLE, n=4, game="9-ball", goal=3, **kw) -> T.Tournament:
    return T.draw(T.create(make_spec(fmt, game, goal, **kw), entrants(n)))


def win(t, mid, seat, loser_score=0):
    score = [loser_score, loser_score]
    score[seat] = t.match(mid).goal
    return T.record(t, mid, Result(seat, (score[0], score[1])))


def states(t) -> dict[str, str]:
    return {m.id: m.state.value for m in t.matches}


def test_two_players_double_elimination_is_a_match_and_the_grand_final():
    t = event(n=2)
    assert [m.id for m in t.matches] == ["W1-1", "GF1", "GF2"]
    t = win(t, "W1-1", 0)
    gf1 = t.match("GF1")
    assert gf1.state is S.READY and gf1.players == (100, 101)  # the W1 loser's second life
    t = win(t, "GF1", 1)  # the losers' bracket side wins: both have one loss
    assert t.match("GF2").state is S.READY and t.match("GF2").players == (100, 101)
    assert not T.is_complete(t)
    t = win(t, "GF2", 1)
    assert T.is_complete(t) and T.champion(t) == 101
    assert [(r.player, r.place, r.won, r.lost) for r in standings(t)] == [
        (101, 1, 2, 1),
        (100, 2, 1, 2),
    ]


def test_no_reset_when_the_winners_bracket_side_wins_the_grand_final():
    t = win(event(n=2), "W1-1", 0)
    t = win(t, "GF1", 0)
    assert t.match("GF2").state is S.VOID
    assert T.is_complete(t) and T.champion(t) == 100


def test_byes_go_to_the_top_seeds_each_against_a_different_bye():
    t = event(n=6, fmt=Format.SINGLE)
    byes = [m for m in t.matches if m.state is S.BYE]
    assert sorted(m.winner.player for m in byes) == [100, 101]  # seeds 1 and 2
    assert [m.players for m in t.matches if m.round.number == 1 and m.state is S.READY] == [
        (103, 104),  # 4 v 5
        (102, 105),  # 3 v 6
    ]


def test_the_losers_bracket_meets_empty_seats_from_first_round_byes():
    # 5 in a bracket of 8: seeds 1, 2, 3 have byes. W1: 1-bye, 4v5, 2-bye, 3-bye.
    t = event(n=5)
    assert states(t)["W1-1"] == "bye" and states(t)["W1-2"] == "ready"
    # L1 pairs the W1 losers: (nobody, loser of 4v5) and (nobody, nobody)
    assert states(t)["L1-2"] == "void"
    assert states(t)["L1-1"] == "waiting"
    t = win(t, "W1-2", 0)  # seed 4 beats seed 5
    assert states(t)["L1-1"] == "bye"  # seed 5 goes through L1 without playing
    # L2-2 holds the winner of the void L1-2 (nobody) and a W2 loser: a bye once known
    assert t.match("L2-2").seats[0].empty
    t = win(t, "W2-1", 0)
    t = win(t, "W2-2", 1)
    assert {states(t)["L2-1"], states(t)["L2-2"]} == {"ready", "bye"}
    # the player with the L1 bye plays in L2: no two byes running
    l2 = next(m for m in t.matches if m.id.startswith("L2") and m.state is S.READY)
    assert 104 in l2.players


def test_a_drawn_event_is_repeatable_from_its_seed():
    a = event(n=16, seeding=Seeding.DRAWN, seed=42)
    b = event(n=16, seeding=Seeding.DRAWN, seed=42)
    c = event(n=16, seeding=Seeding.DRAWN, seed=43)
    assert a.positions == b.positions and a.positions != c.positions
    assert sorted(a.positions or ()) == list(range(16))
    assert event(n=16).positions == tuple(range(16))  # seeded: the order entered
    # pinned: the shuffle uses `random()` alone, the one sequence Python promises to repeat
    # for a seed, so a draw announced tonight comes out the same on any later Python
    assert T.shuffled(list(range(8)), 42) == [6, 4, 3, 2, 7, 1, 0, 5]


def test_the_draw_is_made_once():
    with pytest.raises(NotAllowed, match="draw is made already"):
        T.draw(event())


def test_a_table_is_given_the_rules_engines_match_input():
    t = event(n=4, game="10-ball", goal=5, round_goals={"GF1": 7, "GF2": 7},
              options=["wpa2016_ten_last_ball"], break_order="winner")  # fmt: skip
    inp = T.match_input(t, "W1-1")
    assert inp == {
        "type": "match",
        "game": "10-ball",
        "players": ["Player 1", "Player 4"],
        "race_to": 5,
        "break_order": "winner",
        "options": {"wpa2016_ten_last_ball": True},
    }
    state = rules.new_match(inp)  # the engine takes it as it is
    assert state.goal == 5 and state.players == ("Player 1", "Player 4")
    # 14.1 is played to points: the engine's own goal field
    straight = event(n=2, game="14.1", goal=100)
    assert T.match_input(straight, "W1-1")["target"] == 100
    rules.new_match(T.match_input(straight, "W1-1"))
    assert t.match("GF1").goal == 7 and t.match("W1-1").goal == 5


def test_a_score_must_fit_the_race():
    t = event(goal=5)
    for bad in [(5, 5), (4, 2), (6, 1), (-1, 5)]:
        with pytest.raises(CompetitionError, match="race to 5"):
            T.record(t, "W1-1", Result(0 if bad[0] > bad[1] else 1, bad))
    with pytest.raises(CompetitionError, match="seat 0 or seat 1"):
        T.record(t, "W1-1", Result(2, None))
    T.record(t, "W1-1", Result(1, None))  # a forfeit has no score


def test_results_only_for_matches_that_are_ready():
    t = event(n=4)
    with pytest.raises(NotAllowed, match="W2-1 cannot take a result: it is waiting"):
        win(t, "W2-1", 0)
    with pytest.raises(CompetitionError, match="no match 'X9'"):
        win(t, "X9", 0)


def test_a_player_in_play_is_not_called_to_another_table():
    t = event(fmt=Format.ROUND_ROBIN, n=4)
    first = T.playable(t)[0]
    t = T.start(t, first.id, "t1")
    assert all(not set(m.players) & set(first.players) for m in T.playable(t))
    clash = next(m for m in t.matches if m.state is S.READY and set(m.players) & set(first.players))
    with pytest.raises(NotAllowed, match="a player is in another match"):
        T.start(t, clash.id)
    assert len(T.next_matches(t)) == 1  # the other two players


def test_round_robin_ties_are_broken_by_head_to_head_then_score():
    # 3 players, each wins once: a cycle, so head-to-head cannot separate; score does
    t = event(fmt=Format.ROUND_ROBIN, n=3, goal=3)
    order = {frozenset(m.players): m for m in t.matches if m.state is S.READY}

    def beat(t, a, b, lost):
        m = order[frozenset((a, b))]
        seat = m.players.index(a)
        score = [lost, lost]
        score[seat] = 3
        return T.record(t, m.id, Result(seat, (score[0], score[1])))

    t = beat(t, 100, 101, 2)
    t = beat(t, 101, 102, 0)
    t = beat(t, 102, 100, 1)
    rows = standings(t)
    # differences: 100: +1-2 = -1, 101: -1+3 = +2, 102: -3+2 = -1; then racks won: 100 has
    # 4, 102 has 3
    assert [(r.player, r.place) for r in rows] == [(101, 1), (100, 2), (102, 3)]
    assert T.is_complete(t) and all(r.byes == 1 for r in rows)
    # head-to-head first: 4 players by forfeits (no score), two on 2 wins and two on 1;
    # in each pair the one who beat the other is ahead
    t = event(fmt=Format.ROUND_ROBIN, n=4, goal=1)
    wins = {(100, 101), (100, 102), (101, 103), (102, 101), (102, 103), (103, 100)}
    for m in [m for m in t.matches if m.state is S.READY]:
        a, b = m.players
        t = T.record(t, m.id, Result(0 if (a, b) in wins else 1, None))
    rows = standings(t)
    assert [(r.player, r.won, r.place) for r in rows] == [
        (100, 2, 1),
        (102, 2, 2),
        (101, 1, 3),
        (103, 1, 4),
    ]


def test_a_round_goal_must_name_a_round_of_the_event():
    spec = make_spec(Format.SINGLE, "9-ball", 5, round_goals={"W4": 9})
    with pytest.raises(CompetitionError, match="round W4 has a goal but this event has no"):
        T.create(spec, entrants(4))
    with pytest.raises(CompetitionError, match="a round is written like"):
        make_spec(Format.SINGLE, "9-ball", 5, round_goals={"final": 9})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"game": "snooker"}, "game must be one of 10-ball, 14.1, 9-ball, 8-ball"),
        ({"options": ["thai_4_11_fifteen"]}, "option thai_4_11_fifteen does not apply to 9-ball"),
        ({"goal": 0}, "goal is a whole number from 1"),
        ({"format": "swiss"}, "format must be one of round_robin"),
        ({"break_order": "coin"}, "break_order must be one of"),
        ({"seeding": "lottery"}, "seeding must be one of"),
    ],
)
def test_settings_are_checked_against_the_rules_engine(kwargs, message):
    args = {"format": "double_elimination", "game": "9-ball", "goal": 5, **kwargs}
    with pytest.raises(CompetitionError, match=message):
        make_spec(args.pop("format"), args.pop("game"), args.pop("goal"), **args)


def test_entrants_are_checked():
    spec = make_spec(Format.SINGLE, "9-ball", 3)
    with pytest.raises(CompetitionError, match="entered twice"):
        T.create(spec, [Entrant(1, "Ann"), Entrant(1, "Ann")])
    with pytest.raises(CompetitionError, match="2 to 1024 entrants"):
        T.create(spec, [Entrant(1, "Ann")])
    with pytest.raises(CompetitionError, match="control characters"):
        T.create(spec, [Entrant(1, "Ann\x1b[2J"), Entrant(2, "Bob")])


def test_a_stored_event_that_the_rules_refuse_is_refused_not_misread():
    t = win(event(n=4), "W1-1", 0)
    doc = json.loads(json.dumps(jsonform.dump(t)))
    assert jsonform.load(doc) == t
    for broken, message in [
        ({**doc, "format": 2}, "this railbird reads form 1"),
        ({**doc, "log": [{"result": "W2-1", "winner": 0, "score": None}]}, "it is waiting"),
        ({**doc, "log": [{"result": "W1-1", "winner": True, "score": None}]}, "seat 0 or"),
        ({**doc, "log": [{"undo": "W1-1"}]}, "a start or a result"),
        ({**doc, "positions": [0, 0, 1, 2]}, "every entrant exactly once"),
        ({**doc, "entrants": "Ann"}, "entrants must be a list"),
        ("[]", "must be a JSON object"),
    ]:
        with pytest.raises(CompetitionError, match=message):
            jsonform.load(broken)


def test_the_view_shows_where_each_seat_comes_from():
    v = jsonform.view(event(n=3))
    l2 = next(m for m in v["matches"] if m["id"] == "L2-1")
    assert [s["from"] for s in l2["seats"]] == ["winner of L1-1", "loser of W2-1"]
    w1 = v["matches"][0]
    assert w1["state"] == "bye" and w1["seats"][1]["bye"] is True
    json.dumps(v)


def test_the_checks_fail_on_a_double_elimination_without_the_reset():
    """The property tests' checks can fail: without GF2, a losers' bracket winner who
    takes GF1 is champion while the winners' bracket winner has one loss."""
    failures = 0
    for seed in range(40):
        t = event(n=4)
        broken = dataclasses.replace(t, layout=t.layout[:-1])
        broken = T._with(broken, ())
        try:
            check_complete(play(broken, random.Random(seed)))
        except AssertionError:
            failures += 1
    assert failures > 0


def test_the_checks_fail_on_byes_drawn_against_each_other():
    """Positions filled in plain order (1 v 2, 3 v 4, ...) instead of the seeding order put
    the byes together: first-round matches of nobody, and a player who then has byes in W1
    and W2, both of which the bye check refuses."""
    t = event(n=5)
    plain = tuple(
        dataclasses.replace(d, seats=(FromEntry(2 * i), FromEntry(2 * i + 1)))
        if d.round.stage is Stage.WINNERS and d.round.number == 1
        else d
        for i, d in enumerate(t.layout)
    )
    broken = T._with(dataclasses.replace(t, layout=plain), ())
    assert broken.match("W1-4").state is S.VOID  # positions 6 and 7: nobody v nobody
    with pytest.raises(AssertionError, match=r"two byes running|first-round match of nobody"):
        check_complete(play(broken, random.Random(1)))


def test_an_events_shot_clock_goes_to_every_match_and_survives_storage():
    """Issue 25, item 3: the event sets the shot clock (every number its own, the WPA
    numbers by name); each table's match input carries it; the stored form keeps it; a
    casual event has none."""
    assert "shot_clock" not in T.match_input(event(), "W1-1")
    clock = {"preset": "wpa", "shot_s": 30, "extension_s": 30, "first_shot_s": 30}
    t = event(game="10-ball", shot_clock=clock)
    inp = T.match_input(t, "W1-1")
    assert inp["shot_clock"]["shot_s"] == 30 and inp["shot_clock"]["warning_s"] == 10
    assert rules.Referee(inp).state.goal == 3  # the engine takes it as it is
    back = jsonform.load(json.loads(json.dumps(jsonform.dump(t))))
    assert back.spec.shot_clock == t.spec.shot_clock
    with pytest.raises(CompetitionError, match="shot_clock"):
        event(shot_clock={"shot_s": "35"})
