"""Precise error types of the rules engine (python-chess style).

Every error leaves the game state unchanged: the engine is pure, so the caller simply
keeps the state it had. `str(err)` is the reason shown to the referee.
"""


class RulesError(ValueError):
    """Base class: the input cannot be applied to this state."""


class BadInput(RulesError):
    """Malformed input: unknown type, missing field, wrong field type or value."""


class ImpossibleInput(RulesError):
    """Physically implausible facts (a ball pocketed that is not on the table, the same
    ball pocketed twice, an unknown pocket). Not a foul: the facts cannot be true."""


class OutOfTurn(RulesError):
    """Well-formed input in the wrong place, e.g. a push-out after a foul on the break,
    a shot while a player must first choose to shoot or pass, any input after the match."""


class FenError(RulesError):
    """Text that is not a canonical state line (see railbird.rules.fen)."""
