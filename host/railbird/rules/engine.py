"""`apply(state, input) -> (state, rulings)`: a flat dispatch on the input type to the
rules object of the state's game (variants as small overrides, python-chess style)."""

from __future__ import annotations

from .errors import BadInput, OutOfTurn, RulesError
from .frozen import replace
from .general import GeneralRules
from .inputs import CHOICES, SHOT_FACTS, JsonObject, input_type, parse_shot
from .nineball import NineBall
from .state import Ruling, State
from .straight import StraightPool
from .tenball import TenBall


def _games() -> dict[str, GeneralRules]:
    from .eightball import EightBall

    return {g.name: g for g in (TenBall(), StraightPool(), NineBall(), EightBall())}


GAMES = _games()


def rules_for(state: State) -> GeneralRules:
    return GAMES[state.game]


def new_match(match: JsonObject) -> State:
    """A new match from a `match` input dict; the next input is the lag."""
    if not isinstance(match, dict):
        raise BadInput("a match must be a JSON object")
    if match.get("type", "match") != "match":
        raise BadInput("the first input must be a match")
    input_type({**match, "type": "match"})
    game = match.get("game")
    if not isinstance(game, str) or game not in GAMES:
        raise BadInput(f"game must be one of {', '.join(GAMES)}")
    return GAMES[game].new_match(match)


def apply(state: State, inp: JsonObject) -> tuple[State, list[dict[str, str]]]:
    """Apply one input; returns the new state and the rulings (announcements) as dicts
    {"text", "rule"}. Raises RulesError (the caller keeps `state`)."""
    st, rulings = apply_traced(state, inp)
    return st, [r.as_dict() for r in rulings]


def apply_traced(state: State, inp: JsonObject) -> tuple[State, list[Ruling]]:
    """`apply` with the rulings as `Ruling` values, which also say what each default
    presumed (`Ruling.presumed`: the shot's facts view, railbird.rules.shotfacts)."""
    kind = input_type(inp)
    if kind == "match":
        raise OutOfTurn("the match has already started")
    if kind == "undo":
        raise OutOfTurn("undo needs the input history: use railbird.rules.Referee")
    if kind == "confirm" and state.awaiting == "referee_check":  # REFEREE.md §3b
        R: list[Ruling] = []
        game = rules_for(state)
        st = game.on_check(game.spot_pending(replace(state, rack_winner=None)), inp, R)
        return st, R
    if kind == "confirm":  # also after the match: the deciding shot may be confirmed
        if any(k in inp for k in SHOT_FACTS):
            raise OutOfTurn("a correction needs the input history: use railbird.rules.Referee")
        R = []
        game = rules_for(state)
        st = game.on_confirm(game.spot_pending(replace(state, rack_winner=None)), R)
        return st, R
    if state.over:
        # REFEREE.md §2: what is left after the match is putting the deciding shot right.
        raise OutOfTurn("the match is over: only undo, or confirm of the deciding shot")
    game = rules_for(state)
    R = []
    st = game.spot_pending(replace(state, rack_winner=None))
    if kind == "lag":
        st = game.on_lag(st, inp, R)
    elif kind == "call":
        st = game.on_call(st, inp, R)
    elif kind == "push_out":
        st = game.on_push_out(st, R)
    elif kind == "shot":
        st = game.on_shot(st, parse_shot(inp), R)
    elif kind == "option":
        choice = inp.get("choice")
        if choice not in CHOICES:
            raise BadInput(f"choice must be one of {', '.join(CHOICES)}")
        st = game.on_option(st, choice, R)
    elif kind == "rerack":
        st = game.on_rerack(st, inp, R)
    elif kind in ("stalemate", "interference"):
        if st.awaiting == "lag":
            raise OutOfTurn("the lag comes first")
        st = game.on_stalemate(st, R) if kind == "stalemate" else game.on_interference(st, R)
    elif kind == "concede":
        st = game.on_concede(st, inp, R)
    elif kind == "abandon":
        st = game.on_abandon(st, R)
    else:  # input_type() knows every type
        raise RulesError(f"unhandled input {kind}")
    return st, R
