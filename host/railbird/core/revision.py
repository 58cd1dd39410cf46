"""The revision of a table's state, and the refusal of referee input made against another.

A referee acts on what a screen showed: the call grid, the last shot's card, an option. If
the table has moved on before the input arrives (a shot closed, another phone declared a
foul, the input waited in an offline queue), applying it would rule the wrong shot. So
every state a screen gets carries its revision (`rev`), every input may carry the `rev` it
was made against, and the host refuses one whose `rev` is not the table's now (status
`stale`, protocol/SPEC.md `referee`, protocol/REFEREE.md "Revisions").

The revision is a digest of the state line (`fen`, rules/fen.py), which writes the whole
rules state and nothing else: two equal states have the same revision (an input made for a
state that an undo brought back is valid again, as it means the same there), and the
revision is the same in a replay, after a snapshot and on every host, with nothing of its
own to keep. A state without a line (the line failed) has none, and input for it is not
checked.
"""

from __future__ import annotations

import hashlib
from typing import Any

REV_LEN = 16  # hex digits: 64 bits, against states of one table, not against an attacker


def state_rev(fen: str | None) -> str | None:
    """The revision of the state whose line is `fen` (None: no line, no revision)."""
    if not fen:
        return None
    return hashlib.sha256(fen.encode("utf-8")).hexdigest()[:REV_LEN]


def stale_reason(state: dict[str, Any] | None) -> str:
    """Why input made against an older revision is refused, in the referee's words, with
    where the table is now (from the state alone, so a replay says the same)."""
    head = "stale: the table has changed since this was entered"
    if not state:
        return head + "; there is no match on it now"
    where = []
    if state.get("match_winner") or state.get("ended"):
        where.append("the match is over")
    else:
        if state.get("inning"):
            where.append(f"inning {state['inning']}")
        if state.get("at_table"):
            where.append(f"{state['at_table']} at the table")
    return head + (f" (now {', '.join(where)})" if where else "") + ": look again and re-enter it"
