"""The output state dict of the JSONL contract (protocol/REFEREE.md)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from . import doubt
from .fen import to_fen
from .inputs import JsonObject
from .state import Ruling, State

T = TypeVar("T")


def state_to_json(state: State, rulings: Iterable[Ruling | dict[str, str]] = ()) -> JsonObject:
    names = state.players

    def per_player(pair: tuple[T, T]) -> dict[str, T]:
        return {names[0]: pair[0], names[1]: pair[1]}

    def name(i: int | None) -> str | None:
        return None if i is None else names[i]

    call: str | dict[str, object] | None
    if state.safety:
        call = "safety"
    elif state.push_out:
        call = "push_out"
    elif state.call:
        call = {"ball": state.call[0], "pocket": state.call[1]}
    else:
        call = None
    out: JsonObject = {
        "game": state.game,
        "players": list(names),
        "rack": state.rack,
        # the match's race to (racks) or, in 14.1, points target: the FEN's goal= (additive)
        "goal": state.goal,
        "inning": state.inning,
        "at_table": name(state.at_table),
        "breaker": name(state.breaker),
        "breaking": state.breaking,
        "awaiting": state.awaiting,
        "ball_in_hand": state.ball_in_hand,
        "call": call,
        "push_out_allowed": state.push_out_allowed,
        "balls_on_table": list(state.on_table),
        "pocketed": list(state.pocketed),
        "to_spot": list(state.to_spot),
        "scores": per_player(state.scores),
        "consecutive_fouls": per_player(state.fouls),
        "rack_winner": name(state.rack_winner),
        "match_winner": name(state.match_winner),
        "ended": state.ended,
        "unconfirmed": list(state.unconfirmed),
        # REFEREE.md §3b: a shot held for the referee's check, and provisional rulings
        # with the likely call proposed, where there is one (`proposed`)
        "check": _held(doubt.load(state.check)),
        "provisional": [
            doubt.with_proposal(e, doubt.sensed_in(e["facts"], e["text"]))
            for e in doubt.load(state.provisional) or []
        ],
    }
    if state.races is not None:  # REFEREE.md §2: a handicapped match, a race per player
        out["races"] = per_player(state.races)
    if state.game == "14.1":
        out["run"] = per_player(state.run)
        out["high_run"] = per_player(state.high_run)
        out["points"] = per_player(state.credited)
        out["penalties"] = per_player(state.penalties)
    if state.game == "8-ball":
        out["groups"] = per_player(state.groups)
    out["rulings"] = [r if isinstance(r, dict) else r.as_dict() for r in rulings]
    out["fen"] = to_fen(state)
    return out


def _held(held: Any) -> Any:
    """The held shot (REFEREE.md §3b) with its proposed call, from the shot's sensed values."""
    if held is None:
        return None
    shot = held["shot"]
    return doubt.with_proposal(held, {f: shot.get(f) for f in held["facts"]})
