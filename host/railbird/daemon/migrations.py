"""The journal's schema version (`PRAGMA user_version`) and the steps between versions.

Released versions:
- 1: the journals of every release before versions existed (user_version 0): `inputs`,
  `events`, `shots`, `states`, `referee`, `rules_errors`, `nodes`, `meta`; later releases
  of version 1 added tables only (`conflicts`, ...), which `SCHEMA` creates where missing.
- 2: `snapshots` (the pipeline state after an input, railbird.daemon.snapshots), and the
  indexes a restart reads by: inputs by wall-clock time, shots and states by table and input.
- 3: `events` keyed by (venue, tbl, node, boot, seq) alone, WITHOUT ROWID, and no index on
  `pos` (`EVENTS_COLUMNS`): the same columns and rows, a third of the B-tree writes.
- 4: `snapshots.tables`, each table's configuration key (railbird.core.snapshot.table_key),
  and the index `inputs_table` (inputs by table): a configuration change rebuilds only the
  tables it touched, from their own inputs.

Opening a journal: `refuse_newer` first, before any pragma, so a journal written by a newer
railbird is refused (`JournalError`, one line) with nothing in it changed; then `prepare`
creates the tables of `SCHEMA` that are missing and runs every step from the journal's
version to `VERSION`, each in its own transaction with the version it reaches, so an
interrupted upgrade resumes where it stopped. A new journal takes the same steps as an old
one, so both end with the same schema (tests/hardening/test_journal_schema.py compares them).

A change to the journal's layout adds a step here (ALTER, CREATE, a data fix: whatever gets
a journal of the previous version to the new one) and a test that opens a journal of the
previous version. A table added to `SCHEMA` alone (CREATE TABLE IF NOT EXISTS) needs no step.
"""

from __future__ import annotations

import sqlite3

from railbird.daemon.journalerror import JournalError

# The events table from version 3 on: keyed by its primary key alone (WITHOUT ROWID, no
# index on `pos`), so an event row is one B-tree insert instead of three (the rowid table,
# the primary key's index, `events_pos`). Nothing read events by `pos`; the worker wrote 8
# rows per message through all three (issue 21).
EVENTS_COLUMNS = """
  venue TEXT NOT NULL, tbl TEXT NOT NULL, node TEXT NOT NULL, boot INTEGER NOT NULL,
  seq INTEGER NOT NULL, t INTEGER NOT NULL, t_node INTEGER NOT NULL, kind TEXT NOT NULL,
  pocket TEXT, rail TEXT, amp INTEGER, dur INTEGER, n INTEGER, synced INTEGER,
  late INTEGER NOT NULL, pos INTEGER, input_id INTEGER,
  PRIMARY KEY (venue, tbl, node, boot, seq)
) WITHOUT ROWID"""

# Each step: (the version it reaches, its statements).
STEPS: list[tuple[int, tuple[str, ...]]] = [
    (
        2,
        (
            """CREATE TABLE IF NOT EXISTS snapshots (
  input_id INTEGER PRIMARY KEY,   -- the pipeline's state after this input
  wall REAL NOT NULL,             -- wall clock when taken
  format INTEGER NOT NULL,        -- railbird.core.snapshot.FORMAT
  config TEXT NOT NULL,           -- railbird.core.snapshot.config_key of the config
  state BLOB NOT NULL             -- zlib-compressed JSON (railbird.core.snapshot.encode)
)""",
            "CREATE INDEX IF NOT EXISTS inputs_wall ON inputs (wall)",
            "CREATE INDEX IF NOT EXISTS shots_input ON shots (venue, tbl, input_id)",
            "CREATE INDEX IF NOT EXISTS states_input ON states (venue, tbl, input_id)",
        ),
    ),
    (
        3,
        (
            # copied in key order (the old table's primary key index): appends, not a
            # random insert per row; `events_pos` goes with the old table
            f"CREATE TABLE events_v3 ({EVENTS_COLUMNS}",
            "INSERT INTO events_v3 SELECT * FROM events ORDER BY venue, tbl, node, boot, seq",
            "DROP TABLE events",
            "ALTER TABLE events_v3 RENAME TO events",
        ),
    ),
    (
        4,
        (
            # {table: railbird.core.snapshot.table_key} of the config that made it (NULL:
            # made before version 4, or of a venue "*"): after a config change the tables
            # whose key is the same resume from the snapshot (railbird.daemon.snapshots)
            "ALTER TABLE snapshots ADD COLUMN tables TEXT",
            # the inputs of one table, for rebuilding it alone (and the venue-wide ones,
            # whose tbl is NULL)
            "CREATE INDEX IF NOT EXISTS inputs_table ON inputs (tbl, venue)",
        ),
    ),
]
VERSION = STEPS[-1][0]


def version(db: sqlite3.Connection) -> int:
    """The journal's schema version (1 for one written before versions existed)."""
    found: int = db.execute("PRAGMA user_version").fetchone()[0]
    return max(1, found)


def refuse_newer(db: sqlite3.Connection, path: str) -> None:
    """A journal of a newer schema than this code knows: `JournalError`, nothing changed."""
    found = db.execute("PRAGMA user_version").fetchone()[0]
    if found > VERSION:
        raise JournalError(
            f"journal {path}: schema version {found} was written by a newer railbird "
            f"(this one reads up to version {VERSION}); upgrade railbird to open it"
        )


def prepare(db: sqlite3.Connection, path: str, schema: str) -> None:
    """Refuse a newer journal, create what is missing, upgrade an older one. `db` is in
    autocommit mode (isolation_level None)."""
    refuse_newer(db, path)
    found = db.execute("PRAGMA user_version").fetchone()[0]
    db.executescript(schema)
    current = max(1, found)
    for reaches, statements in STEPS:
        if reaches <= current:
            continue
        db.execute("BEGIN IMMEDIATE")
        try:
            for sql in statements:
                db.execute(sql)
            db.execute(f"PRAGMA user_version = {int(reaches)}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        current = reaches
