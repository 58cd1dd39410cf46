"""A player as the registry keeps them, and the one validation of what a person types in
for a player: the name, the nickname, the rating and the external ids.

A name is normalised (Unicode NFC, so the same name typed on two phones is one string) and
trimmed, and then must be non-empty, at most `NAME_MAX` (64) characters and free of control
characters: the rules engine's own check (`railbird.rules.inputs.check_name`), so every name
the registry accepts is one a match accepts. Line and paragraph separators and the
bidirectional embedding, override and isolate marks are refused too: they would break a line
or reverse the text of a board. Other format characters (the zero-width joiners of emoji and
of some scripts' names) are kept.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from railbird.rules.errors import BadInput
from railbird.rules.inputs import NAME_MAX, check_name

from .errors import InvalidName

RATING_MAX = 9999  # ratings on the scales leagues use are three or four digits
EXTERNAL_MAX = 64  # an external id's value: a league or rating-service number
_SYSTEM = re.compile(r"[a-z0-9][a-z0-9_.-]{0,31}")  # the id's system: `fargo`, `league`
# Bidi embedding, override and isolate marks: they reorder the text around them on a board.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


@dataclass(frozen=True, slots=True)
class Player:
    """One person in the registry. `merged_into`: the player this record was merged into
    (a duplicate): it is no longer listed, and its id resolves to that player."""

    id: int
    name: str
    nickname: str | None = None
    rating: int | None = None
    external: tuple[tuple[str, str], ...] = ()  # (system, id) pairs, sorted by system
    merged_into: int | None = None


def clean_text(text: object, what: str, limit: int = NAME_MAX) -> str:
    """`text` normalised and trimmed, or `InvalidName` saying what is wrong with it."""
    if not isinstance(text, str):
        raise InvalidName(f"{what} must be text")
    s = unicodedata.normalize("NFC", text).strip()
    if not s:
        raise InvalidName(f"{what} is empty")
    if len(s) > limit:
        raise InvalidName(f"{what} is at most {limit} characters ({len(s)} given)")
    for c in s:
        if unicodedata.category(c) in ("Cc", "Zl", "Zp") or c in _BIDI:
            raise InvalidName(f"{what} may not contain control characters (U+{ord(c):04X} found)")
    return s


def clean_name(text: object) -> str:
    """A player's name as it is kept: see the module's docstring."""
    s = clean_text(text, "a player's name")
    try:
        return check_name(s)  # the rules' check, so a match accepts every registered name
    except BadInput as e:
        raise InvalidName(str(e)) from None


def clean_nickname(text: object) -> str | None:
    """An optional nickname: None or blank means none."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return None
    return clean_text(text, "a nickname")


def clean_rating(value: object) -> int | None:
    if value is None:
        return None
    if type(value) is not int or not 0 <= value <= RATING_MAX:
        raise InvalidName(f"a rating is a whole number from 0 to {RATING_MAX}")
    return value


def clean_system(system: object) -> str:
    """The system of an external id: a short lowercase word (`fargo`, `league`)."""
    if not isinstance(system, str) or not _SYSTEM.fullmatch(system):
        raise InvalidName(
            "an external id's system is a lowercase word of letters, digits, '_', '.' or "
            f"'-', at most 32 characters (got {system!r})"
        )
    return system


def clean_external(system: object, value: object) -> tuple[str, str]:
    """One external id: the system and the id there."""
    name = clean_system(system)
    return name, clean_text(value, f"the {name} id", EXTERNAL_MAX)


def folded(text: str) -> str:
    """The form names are searched and compared by: case and accents ignored, so "jose"
    finds "José" and "ANN" finds "Ann"."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", bare).casefold()
