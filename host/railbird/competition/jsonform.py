"""A tournament as JSON, for storage, and back; and a read-only view for pages and exports.

The stored form holds what is state and nothing derived: the settings, the entrants, the
draw's positions and the log of starts and results. Reading it lays the event out again
and replays the log through `tournament.start` and `tournament.record`, so a stored event
that the rules would refuse (a result for a match not ready, a score outside its race) is
refused with the reason instead of misread, and `load(dump(t)) == t`. `FORMAT` is the form's
number; another is refused.

`view` is the event as pages show it (the matches with their states, seats and results,
the standings): derived, never read back.
"""

from __future__ import annotations

from typing import Any

from .errors import CompetitionError
from .layout import LoserOf, WinnerOf
from .spec import Entrant, EventSpec, make_spec
from .standings import standings
from .tournament import (
    Match,
    Recorded,
    Result,
    Started,
    Tournament,
    champion,
    create,
    is_complete,
    record,
    start,
    with_positions,
)

FORMAT = 1


def dump(t: Tournament) -> dict[str, Any]:
    log: list[dict[str, Any]] = []
    for op in t.log:
        match op:
            case Started(match=mid, table=table):
                log.append({"start": mid, "table": table})
            case Recorded(match=mid, result=r):
                score = list(r.score) if r.score is not None else None
                log.append({"result": mid, "winner": r.winner, "score": score})
    return {
        "format": FORMAT,
        "spec": _spec(t.spec),
        "entrants": [{"player": e.player, "name": e.name} for e in t.entrants],
        "positions": None if t.positions is None else list(t.positions),
        "log": log,
    }


def _spec(s: EventSpec) -> dict[str, Any]:
    return {
        "name": s.name,
        "format": s.format.value,
        "game": s.game,
        "goal": s.goal,
        "round_goals": {str(r): g for r, g in s.round_goals},
        "options": dict(s.options),
        "break_order": s.break_order,
        "seeding": s.seeding.value,
        "seed": s.seed,
        "shot_clock": None if s.shot_clock is None else s.shot_clock.as_dict(),
        **({"handicap": True} if s.handicap else {}),  # absent in an older form: False
    }


def load(doc: object) -> Tournament:
    """The tournament of a stored form; `CompetitionError` with the reason for anything
    else."""
    d = _obj(doc, "a stored tournament")
    if d.get("format") != FORMAT:
        raise CompetitionError(
            f"a stored tournament of form {d.get('format')!r}; this railbird reads form {FORMAT}"
        )
    s = _obj(d.get("spec"), "the event's settings")
    spec = make_spec(
        s.get("format"),
        s.get("game"),
        s.get("goal"),
        round_goals=s.get("round_goals"),
        options=s.get("options") or None,
        break_order=s.get("break_order", "alternate"),
        seeding=s.get("seeding", "seeded"),
        seed=s.get("seed", 0),
        name=s.get("name", ""),
        shot_clock=s.get("shot_clock"),
        handicap=s.get("handicap", False),
    )
    entrants = []
    for e in _list(d.get("entrants"), "entrants"):
        e = _obj(e, "an entrant")
        player, name = e.get("player"), e.get("name")
        if not isinstance(player, int) or isinstance(player, bool):
            raise CompetitionError("an entrant's player is a registry id (a whole number)")
        if not isinstance(name, str):
            raise CompetitionError("an entrant's name is text")
        entrants.append(Entrant(player, name))
    t = create(spec, entrants)
    positions = d.get("positions")
    if positions is not None:
        order = _list(positions, "positions")
        if not all(type(p) is int for p in order):
            raise CompetitionError("positions are entrant numbers")
        t = with_positions(t, order)
    elif d.get("log"):
        raise CompetitionError("a log without a draw")
    for item in _list(d.get("log", []), "log"):
        op = _obj(item, "a log entry")
        if "start" in op:
            table = op.get("table")
            if table is not None and not isinstance(table, str):
                raise CompetitionError("a table is named by text")
            t = start(t, _str(op["start"]), table)
        elif "result" in op:
            t = record(t, _str(op["result"]), _result(op))
        else:
            raise CompetitionError(f"a log entry is a start or a result (got {sorted(op)})")
    return t


def _result(op: dict[str, Any]) -> Result:
    winner, score = op.get("winner"), op.get("score")
    if winner not in (0, 1) or isinstance(winner, bool):
        raise CompetitionError("a result's winner is seat 0 or seat 1")
    if score is None:
        return Result(winner, None)
    pair = _list(score, "a score")
    if len(pair) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) for x in pair):
        raise CompetitionError("a score is two whole numbers, one per player")
    return Result(winner, (pair[0], pair[1]))


def _obj(x: object, what: str) -> dict[str, Any]:
    if not isinstance(x, dict):
        raise CompetitionError(f"{what} must be a JSON object")
    return x


def _list(x: object, what: str) -> list[Any]:
    if not isinstance(x, list):
        raise CompetitionError(f"{what} must be a list")
    return x


def _str(x: object) -> str:
    if not isinstance(x, str):
        raise CompetitionError("a match is named by its id (text)")
    return x


def view(t: Tournament) -> dict[str, Any]:
    """The event as a page shows it: every match, the standings, the champion."""
    return {
        "name": t.spec.name,
        "format": t.spec.format.value,
        "game": t.spec.game,
        "goal_field": t.spec.goal_field,
        "drawn": t.positions is not None,
        "complete": is_complete(t),
        "champion": champion(t),
        "matches": [_match(t, i, m) for i, m in enumerate(t.matches)],
        "standings": [
            {
                "player": s.player,
                "name": s.name,
                "place": s.place,
                "played": s.played,
                "won": s.won,
                "lost": s.lost,
                "for": s.score_for,
                "against": s.score_against,
                "byes": s.byes,
                "out_in": s.out_in,
            }
            for s in standings(t)
        ],
    }


def _match(t: Tournament, i: int, m: Match) -> dict[str, Any]:
    def feeds(seat: int) -> str | None:
        src = t.layout[i].seats[seat]
        match src:
            case WinnerOf(match=j):
                return f"winner of {t.layout[j].id}"
            case LoserOf(match=j):
                return f"loser of {t.layout[j].id}"
        return None

    return {
        "id": m.id,
        "round": str(m.round),
        "state": m.state.value,
        "goal": m.goal,
        "table": m.table,
        "seats": [
            {
                "player": s.player,
                "name": None if s.player is None else t.name_of(s.player),
                "bye": s.empty,
                "from": feeds(seat),
            }
            for seat, s in enumerate(m.seats)
        ],
        "winner": None if m.result is None else m.result.winner,
        "score": None if m.result is None or m.result.score is None else list(m.result.score),
    }
