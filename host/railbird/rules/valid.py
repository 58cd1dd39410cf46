"""`valid_inputs(state)`: the referee inputs acceptable now, so a console can offer only
those (protocol/REFEREE.md, "Match control through the host").

A pure function of the state plus three facts only the input history knows (whether there
is something to undo, a shot to correct, or whether the match has not begun). It asks the
game's own hooks (`check_call`, `check_safety_allowed`) rather than restating the rules,
and a property test holds it to the engine: every input it lists is accepted, and it never
lists nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from . import doubt
from .errors import RulesError
from .inputs import JsonObject
from .state import OPTION_CHOICES, POCKETS, State

if TYPE_CHECKING:  # for the annotation only: valid.py imports the engine lazily, too
    from .general import GeneralRules


def _accepts(hook: Callable[..., object], *args: object) -> bool:
    try:
        hook(*args)
    except RulesError:
        return False
    return True


def _call(game: GeneralRules, st: State) -> JsonObject | None:
    """The `call` entry: the balls that may be called (on the table or about to be
    spotted) and whether a safety may be called; None when no call is possible."""
    if not game.call_shot:
        return None
    balls = []
    if not st.breaking or game.call_on_break:
        balls = [
            b
            for b in sorted(set(st.on_table) | set(st.to_spot))
            if _accepts(game.check_call, st, b)
        ]
    safety = _accepts(game.check_safety_allowed, st)
    if not balls and not safety:
        return None
    return {"type": "call", "balls": balls, "pockets": list(POCKETS), "safety": safety}


def _rerack(st: State) -> JsonObject:
    fields = ["cue_ball_in_rack_area"]
    if st.on_table:  # 4.8.1: with the 15th ball pocketed only the cue ball can interfere
        fields += ["ball_in_rack_area", "ball_behind_head_string"]
    return {"type": "rerack", "fields": fields}


def valid_inputs(
    state: State,
    *,
    undo: bool = False,
    correct: bool = False,
    fresh: bool = False,
    facts: JsonObject | None = None,
) -> list[JsonObject]:
    """The input types acceptable in `state`, each a dict with its `type` and what a
    console needs to offer it: `lag` and `concede` the `players`, `option` the `choices`,
    `call` the `balls`, `pockets` and whether `safety` may be called, `rerack` the answer
    `fields` that apply, `confirm` the `unconfirmed` facts, whether the last shot may be
    corrected (`correct`) and, given, the shot's `facts` in force (`Referee.shot_facts`,
    REFEREE.md §3c: what a correction starts from).

    `undo`: the history has an input to withdraw. `correct`: a `confirm` with facts would
    find a shot of this match to rule again. `fresh`: no input has been applied to this
    match yet, so the host may replace it with a new `match`."""
    from .engine import rules_for

    game = rules_for(state)
    out: list[JsonObject] = []
    if state.over or fresh:
        out.append({"type": "match"})
    if not state.over:
        awaiting = state.awaiting
        if awaiting == "lag":
            out.append({"type": "lag", "players": list(state.players)})
        elif awaiting in OPTION_CHOICES:
            out.append({"type": "option", "choices": list(OPTION_CHOICES[awaiting])})
        elif awaiting == "rerack":
            out.append(_rerack(state))
        elif awaiting is None:
            call = _call(game, state)
            if call is not None:
                out.append(call)
            if game.push_out_game and state.push_out_allowed:
                out.append({"type": "push_out"})
            out.append({"type": "shot"})
        if awaiting != "lag":
            out += [{"type": "stalemate"}, {"type": "interference"}]
    if state.unconfirmed or correct:
        entry = {"type": "confirm", "unconfirmed": list(state.unconfirmed), "correct": correct}
        # REFEREE.md §3b: the outcomes a held shot may have, each a `confirm` with the
        # facts that give it (one button each on a console). A provisional ruling's
        # choices are in the state (`provisional`): they are corrections, which a later
        # input may conflict with, so they are not promised here.
        held = doubt.load(state.check)
        if held is not None:
            entry["choices"] = held["choices"]
        if facts is not None and correct:
            entry["facts"] = facts
        out.append(entry)
    if undo:
        out.append({"type": "undo"})
    if not state.over:
        out += [{"type": "concede", "players": list(state.players)}, {"type": "abandon"}]
    return out
