"""A name typed in the referee app's New match form, registered on the way (docs/events.md,
"The New match form"): validated by the registry's one rule (`clean_name`), and a name
already registered (case and accents ignored) is the player who has it, not a second
record. desk.py routes it (POST /api/v/<venue>/players, a referee's session or PIN); it
writes the journal through its own connection, waiting for the daemon's transaction like
`railbird players` does (registry.players.BUSY_MS).
"""

from __future__ import annotations

import logging
import sqlite3

from railbird.competition.errors import CompetitionError
from railbird.competition.players import clean_name
from railbird.outputs.web.wire import Reply, json_reply
from railbird.registry.players import PlayerRegistry

log = logging.getLogger("railbird.outputs.web")


def register(journal: str | None, body: dict) -> Reply:
    """{"name"} -> 200 {"ok", "player": {"id", "name", "nickname"}, "existing"}; 422 with
    the reason for a name the rules refuse; 503 without a journal or while it is locked."""
    if journal is None:
        return json_reply(503, {"ok": False, "error": "this host keeps no players (no journal)"})
    name = body.get("name")
    try:
        db = sqlite3.connect(journal, isolation_level=None, timeout=5.0)
    except sqlite3.Error as e:
        return json_reply(503, {"ok": False, "error": f"the players cannot be written now: {e}"})
    try:
        reg = PlayerRegistry(db)
        try:
            same = reg.named(clean_name(name))
            existing = bool(same)
            p = same[0] if same else reg.add(clean_name(name))
        except CompetitionError as e:
            return json_reply(422, {"ok": False, "error": str(e)})
        if not existing:
            log.info("player %d registered from the New match form", p.id)
        player = {"id": p.id, "name": p.name, "nickname": p.nickname}
        return json_reply(200, {"ok": True, "player": player, "existing": existing})
    except sqlite3.Error as e:
        return json_reply(503, {"ok": False, "error": f"the players cannot be written now: {e}"})
    finally:
        db.close()
