"""Issue 25, item 4: a handicapped event (`handicap` in the event's settings) gives each
match the races of the director's chart for the two players' ratings (docs/events.md,
"Handicapped races"), as the rules engine's `races` (protocol/REFEREE.md §1)."""

from __future__ import annotations

import pytest

from railbird import rules
from railbird.competition import handicap, jsonform, tournament as T
from railbird.competition.errors import CompetitionError
from railbird.competition.spec import Format, make_spec
from tests.competition.play import entrants

CHART = handicap.parse("0:3-3 50:4-3 100:5-3")


def event(handicapped=True, game="9-ball") -> T.Tournament:
    spec = make_spec(Format.DOUBLE, game, 3, handicap=handicapped)
    return T.draw(T.create(spec, entrants(4)))


def test_a_handicapped_event_gives_the_charts_races_in_players_order():
    t = event()
    a, b = t.match("W1-1").players
    inp = T.match_input(t, "W1-1", CHART, {a: 420.0, b: 540.0})  # b is 120 stronger
    assert inp["races"] == [3, 5] and "race_to" not in inp
    state = rules.new_match(inp)  # the engine takes it as it is
    assert state.races == (3, 5)
    # an even race by the chart is a plain race_to
    even = T.match_input(t, "W1-1", CHART, {a: 500.0, b: 520.0})
    assert even["race_to"] == 3 and "races" not in even


def test_without_a_chart_or_a_rating_or_the_flag_the_event_goal_is_played():
    t = event()
    a, b = t.match("W1-1").players
    assert T.match_input(t, "W1-1", None, {a: 400.0, b: 600.0})["race_to"] == 3
    assert T.match_input(t, "W1-1", CHART, {a: 400.0})["race_to"] == 3  # b not rated yet
    plain = event(handicapped=False)
    a, b = plain.match("W1-1").players
    assert T.match_input(plain, "W1-1", CHART, {a: 400.0, b: 600.0})["race_to"] == 3


def test_the_flag_is_kept_in_the_stored_form_and_refused_for_points():
    t = event()
    assert jsonform.load(jsonform.dump(t)).spec.handicap
    assert not jsonform.load(jsonform.dump(event(handicapped=False))).spec.handicap
    with pytest.raises(CompetitionError, match="played to points"):
        make_spec(Format.DOUBLE, "14.1", 100, handicap=True)
    with pytest.raises(CompetitionError, match="true or false"):
        make_spec(Format.DOUBLE, "9-ball", 3, handicap="yes")
