"""Game state: plain immutable data (docs/architecture.md, "Rules engine").

Players are indices 0 and 1 into `players`. Per-player values are pairs. Ball sets are
sorted tuples, except `to_spot`, which is in spotting order (general rule 31: ascending,
lowest nearest the foot spot).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from .frozen import replace
from .options import option_value

T = TypeVar("T")

POCKETS = ("HL", "HR", "SL", "SR", "FL", "FR")  # docs/architecture.md, "Conventions"
BALL_IN_HAND = (None, "anywhere", "kitchen")
# The decision a player (or the referee) must make before play continues.
AWAITING = (
    None,
    "lag",  # 1.2: who breaks the first rack (or after a 14.1 stalemate)
    "shoot_or_pass",  # 9.4 / 9.6 / 9.7 (and 2.4): incoming player's option
    "accept_or_rebreak",  # 4.3 / 4.10: opponent of a 14.1 breaking foul
    "rerack",  # 4.4 / 4.8: referee's answers about the rack area
    "spot_or_rebreak",  # 8-ball 3.3: breaker pocketed the 8 on a legal break
    "spot_or_break",  # 8-ball 3.3: 8 pocketed with a scratch on the break
    "accept_or_break",  # 8-ball 3.3: illegal break
    "accept_or_kitchen",  # 8-ball 3.3: object ball jumped off the table on the break
    # REFEREE.md §3b: a referee is at the table and the ruling of the last shot depends on
    # a fact the sensors cannot decide; the shot is held in `check` until he says.
    "referee_check",
)
# The choices of each decision in `awaiting` (9.4/9.6/9.7 and 2.4; 14.1 4.3; 8-ball 3.3).
OPTION_CHOICES = {
    "shoot_or_pass": ("shoot", "pass"),
    "accept_or_rebreak": ("accept", "rebreak"),
    "spot_or_rebreak": ("spot", "rebreak"),
    "spot_or_break": ("spot", "break"),
    "accept_or_break": ("accept", "break", "rebreak"),
    "accept_or_kitchen": ("accept", "kitchen"),
}
GROUPS = (None, "solids", "stripes")
# How a match ended other than by play: conceded (1.11: loss of the match) or abandoned by
# the referee (no result).
ENDED = (None, "conceded", "abandoned")


# A ruling's level (protocol/REFEREE.md §2): "foul" only on the one ruling that states a
# foul was committed, which every game words the same way (`foul_ruling`); all else is
# "info". A "no foul" (9.7), a warning on two fouls (6.14) or a penalty line is not it.
LEVELS = ("info", "foul")
FOUL_PREFIXES = ("Foul by ", "Foul on the break by ")


@dataclass(frozen=True)
class Presumed:
    """A shot fact a default ruling presumed (REFEREE.md §3): the `confirm` fact it is
    (railbird.rules.inputs.SHOT_FACTS), the value a `confirm` gives to confirm the
    presumption (None: no single value says it, e.g. "a legal ball" in 14.1, so the referee
    must name it), and for `pocketed` the entry of the shot's list it fills."""

    fact: str
    value: object = None
    entry: int | None = None


@dataclass(frozen=True)
class Ruling:
    """One decision of the engine and the rule that produced it. `presumed`: the fact a
    default ruling presumed; kept off the wire (`as_dict`), read by the shot's facts view
    (railbird.rules.shotfacts)."""

    rule: str
    text: str
    presumed: tuple[Presumed, ...] = field(default=(), compare=False)

    def as_dict(self) -> dict[str, str]:
        return {"text": self.text, "rule": self.rule}


def foul_ruling(rule: str, player: str, name: str, *, on_break: bool = False) -> Ruling:
    """The ruling that states `player` committed the foul `name`: the only kind of ruling
    whose level is "foul" (`ruling_level`)."""
    prefix = FOUL_PREFIXES[1] if on_break else FOUL_PREFIXES[0]
    return Ruling(rule, f"{prefix}{player}: {name}")


def ruling_level(ruling: dict[str, object]) -> str:
    """The level of a ruling as the engine gave it (`{"text", "rule"}`): "foul" when it is
    a `foul_ruling`, else "info"."""
    text = ruling.get("text")
    return "foul" if isinstance(text, str) and text.startswith(FOUL_PREFIXES) else "info"


@dataclass(frozen=True)
class State:
    game: str
    players: tuple[str, str]
    goal: int  # race_to (rack games) or target points (14.1)
    break_order: str  # general 35: alternate | winner | loser | trailing
    options: tuple[tuple[str, object], ...] = ()
    awaiting: str | None = "lag"
    rack: int = 1
    breaker: int | None = None  # who broke (or breaks) this rack; 9.12 re-break
    at_table: int | None = None
    breaking: bool = False  # the next shot is a break shot
    ball_in_hand: str | None = None
    on_table: tuple[int, ...] = ()
    pocketed: tuple[int, ...] = ()  # out of play: pocketed, or off the table and not spotted
    to_spot: tuple[int, ...] = ()  # referee must spot these before the next shot
    call: tuple[int, str] | None = None
    safety: bool = False
    push_out: bool = False
    push_out_allowed: bool = False
    fresh_rack: bool = False  # 14.1: 14 balls just re-racked, untouched (4.6 apex)
    groups: tuple[str | None, str | None] = (None, None)  # 8-ball 3.4
    fouls: tuple[int, int] = (0, 0)  # consecutive standard fouls (6.14)
    intent_warned: tuple[bool, bool] = (False, False)  # general 28
    scores: tuple[int, int] = (0, 0)
    credited: tuple[int, int] = (0, 0)  # 14.1 points credited
    penalties: tuple[int, int] = (0, 0)  # 14.1 points deducted
    run: tuple[int, int] = (0, 0)
    high_run: tuple[int, int] = (0, 0)
    inning: int = 0
    rack_winner: int | None = None  # set only by the input that ended a rack
    match_winner: int | None = None
    # Facts of the last shot that were sensed but flagged uncertain (shot `uncertain`, or a
    # pocketed entry with source "inferred"): applied as sensed until the referee confirms
    # or corrects them (`confirm`), or the next shot lets them stand. Sorted fact names.
    unconfirmed: tuple[str, ...] = ()
    ended: str | None = None  # one of ENDED
    # The rule that offered the decision in `awaiting`, cited when it is taken: a pass
    # after a push-out is 9.4 (2.4), after a wrongly pocketed ball 9.7, after a safety 9.6.
    option_rule: str | None = None
    # REFEREE.md §3b, kept as canonical JSON so the state stays plain, hashable and
    # FEN-encodable. `check`: {"shot", "facts", "choices", "text"} of the shot held while
    # `awaiting` is "referee_check". `provisional`: [{"fact", "ruling", "rule", "range"?,
    # "choices"}] of a ruling made on the fair default because nobody could check the fact,
    # until the referee confirms or corrects it or the next shot lets it stand.
    check: str | None = None
    provisional: str | None = None
    # A handicapped match (REFEREE.md §1 `races`): the racks each player needs, in players'
    # order; None when both race to `goal` (then `goal` is the larger of the two).
    races: tuple[int, int] | None = None

    def opt(self, name: str) -> object:
        return option_value(self.options, name)

    def opt_flag(self, name: str) -> bool:
        """A true/false option (parse_options keeps each option of its default's type)."""
        value = self.opt(name)
        assert type(value) is bool, f"option {name} is not true/false"
        return value

    def opt_int(self, name: str) -> int:
        """A number option (parse_options keeps each option of its default's type)."""
        value = self.opt(name)
        assert type(value) is int, f"option {name} is not a number"
        return value

    def race_of(self, player: int) -> int:
        """The racks (or 14.1 points) `player` needs to win the match."""
        return self.goal if self.races is None else self.races[player]

    def other(self, player: int) -> int:
        return 1 - player

    @property
    def shooter(self) -> int:
        """`at_table` where play has begun: it is None only until the lag is decided."""
        assert self.at_table is not None, "nobody is at the table before the lag"
        return self.at_table

    @property
    def rack_breaker(self) -> int:
        """`breaker` where the rack has a breaker: None only until the lag is decided."""
        assert self.breaker is not None, "nobody has broken before the lag"
        return self.breaker

    @property
    def over(self) -> bool:
        return self.match_winner is not None or self.ended is not None


def set_pair(pair: tuple[T, T], i: int, value: T) -> tuple[T, T]:
    return (value, pair[1]) if i == 0 else (pair[0], value)


def add_pair(pair: tuple[int, int], i: int, delta: int) -> tuple[int, int]:
    return set_pair(pair, i, pair[i] + delta)


def move_balls(st: State, balls: Iterable[int], *, to: str) -> State:
    """Move balls between on_table / pocketed / to_spot, keeping every ball in exactly one
    place (the rack-size invariant). `to` is 'pocketed', 'to_spot' or 'on_table'."""
    balls = set(balls)
    if not balls:
        return st
    on = set(st.on_table) - balls
    out = set(st.pocketed) - balls
    spot = [b for b in st.to_spot if b not in balls]
    if to == "pocketed":
        out |= balls
    elif to == "on_table":
        on |= balls
    else:
        spot = sorted(set(spot) | balls)  # general 31: lowest number nearest the foot spot
    return replace(st, on_table=tuple(sorted(on)), pocketed=tuple(sorted(out)), to_spot=tuple(spot))
