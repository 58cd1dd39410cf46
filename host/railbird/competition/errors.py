"""The errors of the competition package: one base class, so a caller (a command, a web
handler) catches `CompetitionError` and shows its text, which is written for the user."""

from __future__ import annotations


class CompetitionError(ValueError):
    """A request the competition rules refuse; the text says why, for the user."""


class InvalidName(CompetitionError):
    """A name, nickname or external id that may not be kept (empty, too long, a control
    character)."""


class NotAllowed(CompetitionError):
    """An operation the tournament's state does not allow now (a result for a match that
    is not ready, a draw made twice)."""
