"""Match control through the host (protocol/REFEREE.md, "Match control through the host"):
what a `match` input means on a table that already has, or had, a match.

A `match` may leave out any field: each missing one comes from the last match on the table
(so `{"type": "match"}` after the end is the next match with the same players), else from
the table's config (`referee` too: whether a referee is at the table). The race or target,
break order and options belong to a game, so they are taken only from a match of the same
game.
"""

from __future__ import annotations

from typing import Any

MATCH_FIELDS = (
    "game",
    "players",
    "race_to",
    "races",
    "target",
    "break_order",
    "options",
    "referee",
    "shot_clock",
)
PER_GAME = ("race_to", "races", "target", "break_order", "options")
# `race_to` and `races` (a race per player: a handicapped match) are one goal: a match that
# gives either takes neither from an earlier match
RACE = ("race_to", "races")

IN_PROGRESS = "a match is in progress: finish, concede or abandon it first"
NO_GAME = "no game: give the game (the table's config names none)"


def complete_match(
    inp: dict[str, Any], last: dict[str, Any] | None, table: dict[str, Any] | None
) -> dict[str, Any]:
    """The full `match` input for `inp`: its own fields, the rest from `last` (the table's
    last match) or `table` (the match of the table's config). A field given as null
    counts as missing."""
    sources = [s for s in (last, table) if s]
    given = {k: inp[k] for k in MATCH_FIELDS if inp.get(k) is not None}
    out = {"type": "match"}
    game = given.get("game") or next((s["game"] for s in sources if s.get("game")), None)
    if game is not None:
        out["game"] = game
    players = given.get("players") or next(
        (s["players"] for s in sources if s.get("players")), None
    )
    if players is not None:
        out["players"] = players
    # whether a referee is at the table (REFEREE.md §3b) belongs to the table, not the game
    referee = given.get("referee")
    if referee is None:
        referee = next((s["referee"] for s in sources if s.get("referee") is not None), None)
    if referee is not None:
        out["referee"] = referee
    # so does the shot clock (an event's setting, core/shotclock.py)
    clock = given.get("shot_clock")
    if clock is None:
        clock = next((s["shot_clock"] for s in sources if s.get("shot_clock") is not None), None)
    if clock is not None:
        out["shot_clock"] = clock
    for key in PER_GAME:
        if key in given:
            out[key] = given[key]
            continue
        if key in RACE:
            if not any(k in given for k in RACE):  # both from the first match that has one
                s = next((s for s in sources if s.get("game") == game and _race(s)), None)
                if s is not None and s.get(key) is not None:
                    out[key] = s[key]
            continue
        for s in sources:
            if s.get("game") == game and s.get(key) is not None:
                out[key] = s[key]
                break
    return out


def _race(match: dict[str, Any]) -> bool:
    return any(match.get(k) is not None for k in RACE)
