"""Journals written before referee input was sealed (railbird.core.refauth) hold the referee
token in raw referee payloads and in the journalled config. `seal_journal` removes it once,
when such a journal is opened:

- every MQTT referee input gets its sealed form, with the verdict the daemon reached then
  (rejected `unauthorized`: false; anything else: true), so replay needs no token and
  reaches the same results;
- the journalled config gets its secrets masked (railbird.config.masked);
- with SQLite's `secure_delete` the old bytes are overwritten in the file, and the WAL is
  checkpointed and truncated, so no copy of them is left in the journal's files.

`meta` key `sealed` marks a journal as done (a new journal is marked at once), so the scan
runs once per journal.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from railbird.core.records import Status
from railbird.core.refauth import reseal

DONE = "sealed"


def _old_config(db: sqlite3.Connection) -> dict[str, Any]:
    row = db.execute("SELECT value FROM meta WHERE key='config'").fetchone()
    try:
        raw = json.loads(row[0]) if row and row[0] else {}
    except ValueError:
        return {}
    return raw if isinstance(raw, dict) else {}


def seal_journal(db: sqlite3.Connection) -> int:
    """Seal an old journal's referee input (the module docstring); -> how many inputs were
    rewritten. `db` in autocommit mode, no transaction open."""
    if db.execute("SELECT 1 FROM meta WHERE key=?", (DONE,)).fetchone():
        return 0
    from railbird.config import masked

    raw = _old_config(db)
    given = raw.get("referee_token")
    token = given if isinstance(given, str) and given != "***" else ""
    secure = db.execute("PRAGMA secure_delete").fetchone()[0]
    db.execute("PRAGMA secure_delete = ON")
    n = 0
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            rows = db.execute(
                "SELECT id, payload, status, reason FROM inputs"
                " WHERE source IN ('mqtt', 'failed') AND topic LIKE '%/referee'"
            ).fetchall()
            for iid, payload, status, reason in rows:
                if payload is None:
                    continue
                if isinstance(payload, str):
                    payload = payload.encode("utf-8", "surrogateescape")
                ok = not (
                    status == Status.REJECTED and str(reason or "").startswith("unauthorized")
                )
                sealed = reseal(payload, ok, token)
                if sealed != bytes(payload):
                    db.execute("UPDATE inputs SET payload=? WHERE id=?", (sealed, iid))
                    n += 1
            if raw:
                db.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('config', ?)", (json.dumps(masked(raw)),)
                )
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, '1')", (DONE,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        if n or raw:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.execute(f"PRAGMA secure_delete = {int(secure)}")
    return n
