"""The rules engine: WPA general rules, 10-ball and 14.1 (seed text), 9-ball and 8-ball, as
pure functions over immutable game state (docs/rules.md). May import only the standard
library: no other part of `railbird`, no I/O, so every other part can use it.

Public API (used by the host daemon and the web scoreboard):
    Referee(match).feed(input) -> output dict; .state, .state_json(), .announcements,
        .shot_facts() (the last shot's facts in force, REFEREE.md §3c)
    new_match(match) -> State; apply(state, input) -> (State, rulings)
    state_to_json(state) -> dict; to_fen(state) -> str; from_fen(text) -> State
    valid_inputs(state, undo=, correct=, fresh=, facts=) -> the inputs acceptable now
Errors: RulesError and its precise kinds BadInput, ImpossibleInput, OutOfTurn, FenError.
The input/output contract is protocol/REFEREE.md.

Modules: `state` (the immutable game state and rulings), `engine` (`apply`: general rules,
then the game's overrides), `general` (the WPA general rules), `fouls` (the foul catalogue),
the games `tenball`, `nineball`, `eightball`, `straight` (14.1) and `rotation` (what the
rotation games share), `match` (matches, races, break orders), `options` (named rule options
and editions), `inputs` (JSON input parsed into typed values), `doubt` (uncertain sensed
facts that decide a ruling), `shotfacts` (the last shot's facts in force, each sensed,
presumed or the referee's), `referee` (`Referee`: a match fed input by input, with undo),
`valid` (the inputs acceptable now), `shotclock` (the match's shot-clock settings and
the WPA preset; the host runs the clock), `errors` (the error kinds), `jsonview` (state as
JSON), `frozen` (a fast `replace` for the frozen values),
`vocabulary` (the registry of each game's facts, which codec, schemas, boards, CLI and web
pages derive from or are checked against),
and the one-line text form: `fen` (writing and reading), `fenvalues` (its value codes),
`fendoubt` (a held shot and a provisional ruling in it) and `fenlegacy` (earlier forms still
read).
"""

from .engine import GAMES, apply, new_match
from .errors import BadInput, FenError, ImpossibleInput, OutOfTurn, RulesError
from .fen import from_fen, to_fen
from .jsonview import state_to_json
from .options import OPTIONS
from .referee import Referee
from .state import Ruling, State
from .valid import valid_inputs

__all__ = [
    "GAMES",
    "OPTIONS",
    "BadInput",
    "FenError",
    "ImpossibleInput",
    "OutOfTurn",
    "Referee",
    "RulesError",
    "Ruling",
    "State",
    "apply",
    "from_fen",
    "new_match",
    "state_to_json",
    "to_fen",
    "valid_inputs",
]
