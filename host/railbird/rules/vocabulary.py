"""The games' facts as plain data, read off the rules classes (`engine.GAMES`): the one
registry every other part derives from (codec and schema copies, scoreboards, CLI choices,
the terminal board, the web pages' generated `static/games.js`). tests/codebase/
test_vocabulary.py checks every copy that must remain against it."""

from __future__ import annotations

from .engine import GAMES
from .options import OPTIONS
from .state import POCKETS


def game_facts(name: str) -> dict[str, object]:
    """One game: its scoreboard code, rack (balls), unit (`racks` won or `points`), the goal
    field of its `match` input, whether the three-foul rule (6.14) applies, its options."""
    g = GAMES[name]
    return {
        "code": g.code,
        "rack": g.rack_size,
        "unit": "racks" if g.rack_scored else "points",
        "goal": "race_to" if g.rack_scored else "target",
        "three_fouls": g.three_fouls,
        "options": [o for o, spec in OPTIONS.items() if name in spec.games],
    }


def registry() -> dict[str, object]:
    """Every game, in the engine's order (the protocol's enum order), and the pockets."""
    return {"games": {name: game_facts(name) for name in GAMES}, "pockets": list(POCKETS)}


GAME_NAMES: tuple[str, ...] = tuple(GAMES)
