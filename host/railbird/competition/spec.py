"""An event's settings and its entrants, checked once when the event is created.

The game, its rules edition (the named options of `railbird.rules.options`) and the break
order come from the rules engine's own registries, never from a list of our own: an event
of a game the engine does not know, or with an option that does not apply to the game, is
refused with the engine's reason. The goal of each match is the game's own goal field
(`race_to` racks, or the `target` points of 14.1: `railbird.rules.vocabulary.game_facts`),
one for the whole event with an override per round (`Round`, e.g. W1 or GF1).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from railbird.rules import GAMES
from railbird.rules.errors import BadInput
from railbird.rules.match import BREAK_ORDERS
from railbird.rules.options import parse_options
from railbird.rules.shotclock import ShotClockSettings, parse_shot_clock
from railbird.rules.vocabulary import game_facts

from .errors import CompetitionError
from .players import clean_text

GOAL_MAX = 100_000  # the rules engine's bound on race_to and target
ENTRANTS_MAX = 1024  # a bracket of 1,024: far past any venue's event, still quick to lay out


class Format(StrEnum):
    ROUND_ROBIN = "round_robin"
    SINGLE = "single_elimination"
    DOUBLE = "double_elimination"


class Seeding(StrEnum):
    SEEDED = "seeded"  # the entrants in the order given are seeds 1, 2, ...
    DRAWN = "drawn"  # the order is drawn with the event's RNG seed (repeatable)


class Stage(StrEnum):
    """Which part of the event a round belongs to; its value is the round's prefix."""

    POOL = "R"  # a round robin round
    WINNERS = "W"  # the winners' bracket (the only bracket of single elimination)
    LOSERS = "L"  # the losers' bracket
    FINAL = "GF"  # the grand final of double elimination: GF1, and GF2 (the reset)


@dataclass(frozen=True, slots=True)
class Round:
    stage: Stage
    number: int  # from 1

    def __str__(self) -> str:
        return f"{self.stage.value}{self.number}"

    @classmethod
    def parse(cls, text: object) -> Round:
        if isinstance(text, str):
            # longest prefix first: "GF" before a one-letter stage
            for stage in sorted(Stage, key=lambda s: -len(s.value)):
                rest = text[len(stage.value) :]
                if text.startswith(stage.value) and rest.isdigit() and rest[0] != "0":
                    return cls(stage, int(rest))
        raise CompetitionError(f"a round is written like R1, W2, L3, GF1 (got {text!r})")


@dataclass(frozen=True, slots=True)
class Entrant:
    player: int  # the registry's player id
    name: str  # the name at entry, shown where the registry is not at hand


@dataclass(frozen=True, slots=True)
class EventSpec:
    format: Format
    game: str  # a name of railbird.rules.GAMES
    goal: int  # every match's race (racks) or points target, unless its round has its own
    round_goals: tuple[tuple[Round, int], ...] = ()  # sorted by the round's text
    options: tuple[tuple[str, object], ...] = ()  # the rules' canonical (name, value) pairs
    break_order: str = "alternate"
    seeding: Seeding = Seeding.SEEDED
    seed: int = 0  # the draw's RNG seed (Seeding.DRAWN)
    name: str = ""  # the event's name, for the boards
    # every match's shot clock (protocol/REFEREE.md §9b); None: none, as in casual play
    shot_clock: ShotClockSettings | None = None
    # handicapped races from the director's chart (docs/events.md "Handicapped races"):
    # `tournament.match_input` takes the chart and the two players' ratings
    handicap: bool = False

    @property
    def goal_field(self) -> str:
        """The name of the goal in a match input of this game: `race_to` or `target`."""
        field = game_facts(self.game)["goal"]
        assert isinstance(field, str)
        return field

    def goal_for(self, rnd: Round) -> int:
        for r, g in self.round_goals:
            if r == rnd:
                return g
        return self.goal


def make_spec(
    format: object,
    game: object,
    goal: object,
    *,
    round_goals: object = None,
    options: object = None,
    break_order: object = "alternate",
    seeding: object = Seeding.SEEDED,
    seed: object = 0,
    name: object = "",
    shot_clock: object = None,
    handicap: object = False,
) -> EventSpec:
    """Settings checked against the rules engine; `CompetitionError` with the reason. Takes
    any value (a stored or typed-in form) and says what is wrong with it."""
    fmt = _member(Format, format, "format")
    how = _member(Seeding, seeding, "seeding")
    if not isinstance(game, str) or game not in GAMES:
        raise CompetitionError(f"game must be one of {', '.join(GAMES)} (got {game!r})")
    try:
        opts = parse_options(options, game)
    except BadInput as e:
        raise CompetitionError(str(e)) from None
    if not isinstance(break_order, str) or break_order not in BREAK_ORDERS:
        raise CompetitionError(f"break_order must be one of {', '.join(BREAK_ORDERS)}")
    whole = _goal(goal, "the event's goal")
    if round_goals is None:
        round_goals = {}
    if not isinstance(round_goals, dict):
        raise CompetitionError('round goals are an object: round -> goal, e.g. {"GF1": 9}')
    goals = []
    for text, g in sorted(round_goals.items(), key=lambda kv: str(kv[0])):
        rnd = Round.parse(text)
        goals.append((rnd, _goal(g, f"the goal of round {rnd}")))
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise CompetitionError("the draw's seed is a whole number")
    title = clean_text(name, "the event's name") if name else ""
    try:
        clock = parse_shot_clock(shot_clock)
    except BadInput as e:
        raise CompetitionError(str(e)) from None
    if type(handicap) is not bool:
        raise CompetitionError("handicap is true or false")
    if handicap and game_facts(game)["goal"] != "race_to":
        raise CompetitionError(f"{game} is played to points: handicapped races are for rack games")
    return EventSpec(
        fmt, game, whole, tuple(goals), opts, break_order, how, seed, title, clock, handicap
    )


def _member(kind: type[Format] | type[Seeding], value: object, what: str) -> Any:
    for m in kind:
        if value == m.value:
            return m
    raise CompetitionError(
        f"{what} must be one of {', '.join(m.value for m in kind)} (got {value!r})"
    )


def _goal(goal: object, what: str) -> int:
    if not isinstance(goal, int) or isinstance(goal, bool) or not 1 <= goal <= GOAL_MAX:
        raise CompetitionError(f"{what} is a whole number from 1 to {GOAL_MAX}")
    return goal
