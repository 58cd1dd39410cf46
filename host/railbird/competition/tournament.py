"""A tournament: its settings, entrants, draw and log, and every match's state derived from
them. Immutable: each operation returns a new `Tournament` (or raises `CompetitionError`
with the reason) and leaves the old one as it was, so a caller can keep it, store it
(`jsonform`) or undo by keeping the one before.

Operations: `create` (settings and entrants; the layout for that many entrants), `draw`
(the positions: seeded, or drawn with the event's RNG seed), `playable` and `next_matches`
(what can be called to a table now), `start` (a match called to a table: its players are
then busy), `record` (a match's winner and score, or a forfeit), `champion`,
`is_complete`, `match_input` (the rules engine's `match` input for a table: players, game,
race, options).

Only the log is state: the matches are worked out again from the layout, the positions and
the log (`_resolve`), so they cannot disagree with them. A match's state:
- WAITING  a seat still waits for an earlier match;
- READY    both players known and free to be called;
- IN_PLAY  started (on a table);
- DONE     its result is recorded;
- BYE      one seat is nobody: the other player goes through without playing;
- VOID     not played: both seats are nobody, or the grand final's reset is not needed.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from .errors import CompetitionError, NotAllowed
from .handicap import Chart
from .layout import FromEntry, LoserOf, MatchDef, WinnerOf, build
from .players import clean_name, clean_text
from .spec import Entrant, EventSpec, Format, Round, Seeding

SCORE_MIN = -1000  # a 14.1 score can be negative (fouls); far past any real one


class MatchState(StrEnum):
    WAITING = "waiting"
    READY = "ready"
    IN_PLAY = "in_play"
    DONE = "done"
    BYE = "bye"
    VOID = "void"


FINISHED = frozenset({MatchState.DONE, MatchState.BYE, MatchState.VOID})


@dataclass(frozen=True, slots=True)
class Seat:
    player: int | None = None  # None: not known yet, or nobody (`empty`)
    empty: bool = False  # nobody will sit here: the other player has a bye


UNKNOWN = Seat()
NOBODY = Seat(empty=True)


@dataclass(frozen=True, slots=True)
class Result:
    winner: int  # the seat, 0 or 1
    score: tuple[int, int] | None  # racks or points per seat; None: a forfeit


@dataclass(frozen=True, slots=True)
class Started:
    match: str
    table: str | None  # the table it was called to; None: not said


@dataclass(frozen=True, slots=True)
class Recorded:
    match: str
    result: Result


Op = Started | Recorded


@dataclass(frozen=True, slots=True)
class Match:
    id: str
    round: Round
    seats: tuple[Seat, Seat]
    state: MatchState
    goal: int
    result: Result | None = None
    table: str | None = None

    @property
    def players(self) -> tuple[int, ...]:
        a, b = self.seats[0].player, self.seats[1].player
        if a is None:
            return () if b is None else (b,)
        return (a,) if b is None else (a, b)

    @property
    def winner(self) -> Seat:
        """Who goes on: the winner, the player of a bye, nobody from a void match."""
        if self.state is MatchState.DONE and self.result is not None:
            return self.seats[self.result.winner]
        if self.state is MatchState.BYE:
            return next(s for s in self.seats if not s.empty)
        if self.state is MatchState.VOID:
            return NOBODY
        return UNKNOWN

    @property
    def loser(self) -> Seat:
        if self.state is MatchState.DONE and self.result is not None:
            return self.seats[1 - self.result.winner]
        if self.state in (MatchState.BYE, MatchState.VOID):
            return NOBODY
        return UNKNOWN


@dataclass(frozen=True, slots=True)
class Tournament:
    spec: EventSpec
    entrants: tuple[Entrant, ...]  # seed order (seeded), or as entered (drawn)
    layout: tuple[MatchDef, ...]
    positions: tuple[int, ...] | None  # entrant index by draw position; None: not drawn
    log: tuple[Op, ...]
    matches: tuple[Match, ...]  # derived from the above by `_resolve`

    def match(self, match_id: str) -> Match:
        for m in self.matches:
            if m.id == match_id:
                return m
        raise CompetitionError(f"no match {match_id!r} in this event")

    def name_of(self, player: int) -> str:
        for e in self.entrants:
            if e.player == player:
                return e.name
        raise CompetitionError(f"player {player} is not in this event")


def create(spec: EventSpec, entrants: Sequence[Entrant]) -> Tournament:
    """A tournament of `entrants` (in seed order for a seeded event), not yet drawn."""
    checked = []
    for e in entrants:
        if type(e.player) is not int or e.player < 1:
            raise CompetitionError(f"a player's id is a whole number from 1 (got {e.player!r})")
        checked.append(Entrant(e.player, clean_name(e.name)))
    ids = [e.player for e in checked]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise CompetitionError(f"a player is entered twice (id {', '.join(map(str, twice))})")
    layout = build(spec.format, len(checked))
    known = {d.round for d in layout}
    for rnd, _ in spec.round_goals:
        if rnd not in known:
            raise CompetitionError(
                f"round {rnd} has a goal but this event has no such round "
                f"(its rounds: {', '.join(sorted({str(d.round) for d in layout}))})"
            )
    t = Tournament(spec, tuple(checked), layout, None, (), ())
    return _with(t, ())


def draw(t: Tournament) -> Tournament:
    """The draw: seeds in the order entered, or that order shuffled with the event's RNG
    seed. The positions are kept, so a stored event never needs the draw again."""
    if t.positions is not None:
        raise NotAllowed("the draw is made already")
    order = list(range(len(t.entrants)))
    if t.spec.seeding is Seeding.DRAWN:
        order = shuffled(order, t.spec.seed)
    return with_positions(t, order)


def with_positions(t: Tournament, order: Sequence[int]) -> Tournament:
    """The draw as given (a draw made elsewhere, or a stored one): entrant indexes by
    position."""
    if sorted(order) != list(range(len(t.entrants))):
        raise CompetitionError("a draw places every entrant exactly once")
    t = Tournament(t.spec, t.entrants, t.layout, tuple(order), t.log, t.matches)
    return _with(t, t.log)


def shuffled(items: list[int], seed: int) -> list[int]:
    """Fisher-Yates driven by `random()` alone: of the `random` module only `random()` is
    promised the same sequence for a seed on every Python version."""
    rng = random.Random(seed)
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = min(i, int(rng.random() * (i + 1)))
        out[i], out[j] = out[j], out[i]
    return out


def playable(t: Tournament) -> tuple[Match, ...]:
    """The READY matches whose players are not busy in a match in play, in calling order
    (the layout's: earlier rounds first). They may share players (round robin): a table
    assignment calls one of them, then asks again (`next_matches` picks a set at once)."""
    busy = {p for m in t.matches if m.state is MatchState.IN_PLAY for p in m.players}
    return tuple(
        m for m in t.matches if m.state is MatchState.READY and not busy.intersection(m.players)
    )


def next_matches(t: Tournament, limit: int | None = None) -> tuple[Match, ...]:
    """Up to `limit` playable matches no two of which share a player, in calling order:
    what `limit` free tables can be given now."""
    out: list[Match] = []
    taken: set[int] = set()
    for m in playable(t):
        if limit is not None and len(out) >= limit:
            break
        if taken.isdisjoint(m.players):
            out.append(m)
            taken.update(m.players)
    return tuple(out)


def start(t: Tournament, match_id: str, table: str | None = None) -> Tournament:
    """The match is called to a table and under way; its players are busy until its
    result."""
    m = t.match(match_id)
    if m.state is not MatchState.READY:
        raise NotAllowed(f"match {match_id} cannot start: it is {m.state.value}")
    if m not in playable(t):
        raise NotAllowed(f"match {match_id} cannot start: a player is in another match")
    if table is not None:
        table = clean_text(table, "a table's name")
    return _with(t, (*t.log, Started(match_id, table)))


def record(t: Tournament, match_id: str, result: Result) -> Tournament:
    """The match's result: the winning seat and the score (racks or points per seat), or no
    score for a forfeit. A match is recorded once; it need not have been started."""
    m = t.match(match_id)
    if m.state not in (MatchState.READY, MatchState.IN_PLAY):
        raise NotAllowed(f"match {match_id} cannot take a result: it is {m.state.value}")
    if m.state is MatchState.READY and m not in playable(t):
        raise NotAllowed(f"match {match_id}: a player is in another match, still in play")
    _check_result(t.spec, m, result)
    return _with(t, (*t.log, Recorded(match_id, result)))


def _check_result(spec: EventSpec, m: Match, r: Result) -> None:
    if type(r.winner) is not int or r.winner not in (0, 1):
        raise CompetitionError("the winner is seat 0 or seat 1")
    if r.score is None:
        return
    if len(r.score) != 2 or any(type(s) is not int for s in r.score):
        raise CompetitionError("a score is two whole numbers, one per player")
    won, lost = r.score[r.winner], r.score[1 - r.winner]
    unit = "racks" if spec.goal_field == "race_to" else "points"
    if spec.goal_field == "race_to":
        if won != m.goal or not 0 <= lost < m.goal:
            raise CompetitionError(
                f"match {m.id} is a race to {m.goal}: the winner has {m.goal} racks and the "
                f"loser 0 to {m.goal - 1} (got {r.score[0]}-{r.score[1]})"
            )
    elif won < m.goal or not SCORE_MIN <= lost < m.goal:
        raise CompetitionError(
            f"match {m.id} is played to {m.goal} {unit}: the winner has at least {m.goal} and "
            f"the loser fewer (got {r.score[0]}-{r.score[1]})"
        )


def is_complete(t: Tournament) -> bool:
    return t.positions is not None and all(m.state in FINISHED for m in t.matches)


def champion(t: Tournament) -> int | None:
    """The winner of a completed elimination event (a round robin's is first in its
    standings: `railbird.competition.standings`)."""
    if not is_complete(t) or t.spec.format is Format.ROUND_ROBIN:
        return None
    last = t.matches[-1]
    if t.spec.format is Format.DOUBLE and last.state is MatchState.VOID:
        last = t.matches[-2]  # no reset: the winners' bracket winner took GF1
    return last.winner.player


def match_input(
    t: Tournament,
    match_id: str,
    chart: Chart | None = None,
    ratings: Mapping[int, float] | None = None,
) -> dict[str, object]:
    """The rules engine's `match` input for this match (protocol/REFEREE.md): what a table
    is given to start it. In a handicapped event (`spec.handicap`) with a `chart` and both
    players in `ratings` (registry id -> rating), the chart's races (`races`) in place of
    the goal; otherwise, or when the chart gives even races, the match's goal."""
    m = t.match(match_id)
    if m.state not in (MatchState.READY, MatchState.IN_PLAY):
        raise NotAllowed(f"match {match_id} has no two players to start: it is {m.state.value}")
    a, b = (t.name_of(p) for p in m.players)
    out: dict[str, object] = {
        "type": "match",
        "game": t.spec.game,
        "players": [a, b],
        t.spec.goal_field: m.goal,
        "break_order": t.spec.break_order,
    }
    races = _races(t, m.players, chart, ratings or {})
    if races is not None and races[0] != races[1]:
        del out[t.spec.goal_field]
        out["races"] = list(races)
    elif races is not None:
        out[t.spec.goal_field] = races[0]
    if t.spec.options:
        out["options"] = dict(t.spec.options)
    if t.spec.shot_clock is not None:  # every number the event's (REFEREE.md §9b)
        out["shot_clock"] = t.spec.shot_clock.as_dict()
    return out


def _races(
    t: Tournament, players: Sequence[int], chart: Chart | None, ratings: Mapping[int, float]
) -> tuple[int, int] | None:
    if not t.spec.handicap or chart is None:
        return None
    if not all(p in ratings for p in players):
        return None  # a player not rated yet plays the event's goal
    return chart.races(ratings[players[0]], ratings[players[1]])


# -- the matches from the layout, the positions and the log -------------------------------
def _with(t: Tournament, log: tuple[Op, ...]) -> Tournament:
    return Tournament(t.spec, t.entrants, t.layout, t.positions, log, _resolve(t, log))


def _resolve(t: Tournament, log: tuple[Op, ...]) -> tuple[Match, ...]:
    started: dict[str, str | None] = {}
    results: dict[str, Result] = {}
    for op in log:
        match op:
            case Started(match=mid, table=table):
                started[mid] = table
            case Recorded(match=mid, result=result):
                results[mid] = result
    n = len(t.entrants)
    out: list[Match] = []
    for d in t.layout:
        seats = (_seat(t, n, out, d.seats[0]), _seat(t, n, out, d.seats[1]))
        if d.reset and _reset_not_needed(out, d):
            state = MatchState.VOID
        elif d.id in results:
            state = MatchState.DONE
        elif seats[0].empty and seats[1].empty:
            state = MatchState.VOID
        elif seats[0].empty or seats[1].empty:
            other = seats[1] if seats[0].empty else seats[0]
            state = MatchState.WAITING if other.player is None else MatchState.BYE
        elif seats[0].player is None or seats[1].player is None:
            state = MatchState.WAITING
        else:
            state = MatchState.IN_PLAY if d.id in started else MatchState.READY
        goal = t.spec.goal_for(d.round)
        out.append(Match(d.id, d.round, seats, state, goal, results.get(d.id), started.get(d.id)))
    return tuple(out)


def _seat(t: Tournament, n: int, done: list[Match], src: FromEntry | WinnerOf | LoserOf) -> Seat:
    match src:
        case FromEntry(position=p):
            if p >= n:
                return NOBODY
            if t.positions is None:
                return UNKNOWN
            return Seat(t.entrants[t.positions[p]].player)
        case WinnerOf(match=i):
            return done[i].winner
        case LoserOf(match=i):
            return done[i].loser


def _reset_not_needed(done: list[Match], d: MatchDef) -> bool:
    """GF2 is void once GF1 is won by seat 0, the winners' bracket winner."""
    src = d.seats[1]
    assert isinstance(src, WinnerOf)  # GF2's seat 1 is GF1's winner (layout)
    gf1 = done[src.match]
    return gf1.state is MatchState.DONE and gf1.result is not None and gf1.result.winner == 0
