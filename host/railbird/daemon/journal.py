"""The journal: SQLite in WAL mode, one transaction per group of inputs.

Tables:
- `inputs`   every input of the pipeline in arrival order: raw MQTT messages (topic, payload
             bytes, host receive time `rx`), local referee input, and time ticks that changed
             something. `status`/`reason` say what became of it (ok, duplicate, rejected...).
             Source `failed`: an input the code failed on, kept raw and never replayed.
- `events`   timeline events by (venue, table, node, boot, seq), unique; `pos` is the position
             in the table's timeline, `late` = 1 for events that arrived after the window.
- `conflicts` events whose (venue, table, node, boot, seq) was seen before with other
             content (a node that reused its boot counter): kept here, not in the timeline.
- `quarantined` events whose table time lay implausibly far beyond their arrival `rx` (a
             broken node clock; railbird.core.clockmodel `latest`), with what the clock model
             made of them (`t`) and why: kept here, not in the timeline.
- `shots`, `states`, `referee`, `rules_errors`, `nodes`: derived records.
- `snapshots` the pipeline's state after an input (railbird.daemon.snapshots): a restart
             loads the newest and replays only the inputs after it.

The inputs table is the source of truth: `inputs()` yields them in order so that a fresh
pipeline can replay them (`railbird.daemon.replay`, `railbird replay`). Derived tables are
written in the same transaction as the input that produced them, so they are always
consistent with it. Integers are kept exactly: the protocol's `uint` goes up to 2^64 - 1 and
SQLite's INTEGER only to 2^63 - 1, so an integer outside SQLite's range is stored as its
decimal digits in a BLOB (`sql_int`; SQLite would turn a text too large for INTEGER into an
inexact REAL) and read back with `py_int`. A batch whose writes fail is rolled back whole
(`rollback`); the daemon then rebuilds its pipeline from what is committed and tries again.

No secret is journalled: MQTT referee input is kept sealed (its token replaced by the
check's outcome, railbird.core.refauth), the config masked, and a journal from before that
is sealed when opened (railbird.daemon.sealing). The file is created 0600, and so SQLite
creates its -wal and -shm (railbird.private).

Opening refuses what is not a journal (`JournalError`, one line for the user): an empty file
(a journal that lost its content must not silently start afresh), a file that is not SQLite,
a SQLite database of something else, a journal of a newer schema version; a journal of an
older one is upgraded (railbird.daemon.migrations). Raw inputs past the retention age are
exported and deleted by railbird.daemon.retention.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from railbird import private
from railbird.core.records import (
    ConflictRecord,
    EventRecord,
    LateRecord,
    NodeRecord,
    QuarantinedRecord,
    Record,
    RefereeRecord,
    RulesErrorRecord,
    ShotRecord,
    StateRecord,
)
from railbird.daemon import migrations, sealing
from railbird.daemon.journalerror import JournalError  # also imported from here by its users

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS inputs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  source TEXT NOT NULL,            -- mqtt | local | tick | reconnect | failed (set aside)
  rx INTEGER,                      -- host monotonic µs at receipt (tick: the tick time)
  wall REAL NOT NULL,              -- wall clock, for people
  topic TEXT, payload BLOB,
  venue TEXT, tbl TEXT,
  status TEXT, reason TEXT
);
CREATE TABLE IF NOT EXISTS events (
  venue TEXT NOT NULL, tbl TEXT NOT NULL, node TEXT NOT NULL, boot INTEGER NOT NULL,
  seq INTEGER NOT NULL, t INTEGER NOT NULL, t_node INTEGER NOT NULL, kind TEXT NOT NULL,
  pocket TEXT, rail TEXT, amp INTEGER, dur INTEGER, n INTEGER, synced INTEGER,
  late INTEGER NOT NULL, pos INTEGER, input_id INTEGER,
  PRIMARY KEY (venue, tbl, node, boot, seq)
);
CREATE INDEX IF NOT EXISTS events_pos ON events (venue, tbl, pos);
CREATE TABLE IF NOT EXISTS shots (
  venue TEXT NOT NULL, tbl TEXT NOT NULL, n INTEGER NOT NULL, shot TEXT NOT NULL,
  input_id INTEGER, PRIMARY KEY (venue, tbl, n)
);
CREATE TABLE IF NOT EXISTS states (
  id INTEGER PRIMARY KEY AUTOINCREMENT, venue TEXT, tbl TEXT, game TEXT, state TEXT,
  fen TEXT, announcements TEXT, cause TEXT, source TEXT, input_id INTEGER
);
CREATE TABLE IF NOT EXISTS referee (
  id INTEGER PRIMARY KEY AUTOINCREMENT, venue TEXT, tbl TEXT, rid TEXT, by_ TEXT,
  input TEXT, ok INTEGER, error TEXT, source TEXT, input_id INTEGER
);
CREATE TABLE IF NOT EXISTS rules_errors (
  id INTEGER PRIMARY KEY AUTOINCREMENT, venue TEXT, tbl TEXT, input TEXT, error TEXT,
  source TEXT, input_id INTEGER
);
CREATE TABLE IF NOT EXISTS conflicts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  venue TEXT NOT NULL, tbl TEXT NOT NULL, node TEXT NOT NULL, boot INTEGER NOT NULL,
  seq INTEGER NOT NULL, t_node INTEGER, event TEXT NOT NULL, input_id INTEGER
);
CREATE TABLE IF NOT EXISTS quarantined (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  venue TEXT NOT NULL, tbl TEXT NOT NULL, node TEXT NOT NULL, boot INTEGER NOT NULL,
  seq INTEGER NOT NULL, t_node INTEGER, t INTEGER, rx INTEGER, event TEXT NOT NULL,
  reason TEXT, input_id INTEGER
);
CREATE TABLE IF NOT EXISTS nodes (
  venue TEXT, tbl TEXT, node TEXT, status TEXT, input_id INTEGER,
  PRIMARY KEY (venue, tbl, node)
);
"""


def _j(x) -> str:
    return json.dumps(x, sort_keys=True, separators=(",", ":"))


I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def sql_int(x):
    """An integer as SQLite keeps it exactly (None stays None)."""
    if x is None or I64_MIN <= x <= I64_MAX:
        return x
    return str(x).encode("ascii")


def py_int(v):
    """The integer `sql_int` stored (None stays None)."""
    return int(v) if isinstance(v, bytes) else v


def _refuse_non_journal(path: str) -> None:
    p = Path(path)
    if p.is_dir():
        raise JournalError(f"journal {path}: is a directory")
    if p.exists() and p.stat().st_size == 0:
        raise JournalError(
            f"journal {path}: the file is empty (0 bytes), not a journal; "
            "move it away to start a new journal"
        )


class Journal:
    def __init__(self, path, synchronous: str = "normal"):
        self.path = str(path)
        _refuse_non_journal(self.path)
        # 0600 before the first byte: SQLite gives the -wal and -shm the same mode
        try:
            private.ensure_private(self.path)
        except OSError as e:
            raise JournalError(f"journal {self.path}: cannot open it: {e.strerror or e}") from None
        for side in ("-wal", "-shm"):
            private.narrow(self.path + side)
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as e:
            raise JournalError(f"journal {self.path}: cannot open it: {e}") from None
        try:
            tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master")}
            if tables and "inputs" not in tables:
                raise JournalError(
                    f"journal {self.path}: a SQLite database, but not a railbird journal "
                    "(no inputs table)"
                )
            migrations.refuse_newer(self.db, self.path)  # before anything changes in it
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(f"PRAGMA synchronous={'FULL' if synchronous == 'full' else 'NORMAL'}")
            migrations.prepare(self.db, self.path, SCHEMA)  # version check, upgrade
            sealing.seal_journal(self.db)  # no referee token left from an older railbird
        except sqlite3.DatabaseError as e:
            self.db.close()
            raise JournalError(f"journal {self.path}: damaged, or not a journal: {e}") from None
        except JournalError:
            self.db.close()
            raise
        # The shots written in the open transaction, by their JSON text: the match history
        # reads them back in the same transaction (railbird.history.store) and takes them
        # from here instead of parsing the text again. Emptied when the transaction ends.
        self.shots_written: dict = {}
        # Values read from the journal once and then kept up to date by its writers
        # (`remembered`), so that a batch does not ask SQLite for them again: the committed
        # ones, and those set in the open transaction (dropped by a rollback).
        self._kept: dict = {}
        self._open: dict = {}

    def remembered(self, key: str, read):
        """The value kept under `key`, as of the open transaction; `read()` (a query in it)
        when none is kept."""
        if key in self._open:
            return self._open[key]
        if key in self._kept:
            return self._kept[key]
        value = self._open[key] = read()
        return value

    def remember(self, key: str, value) -> None:
        """`key`'s value as the open transaction leaves it (kept if it commits)."""
        self._open[key] = value

    def newest_input(self) -> int | None:
        """The id of the newest input (None: none), without a query once known."""
        return self.remembered(
            "newest_input", lambda: self.db.execute("SELECT MAX(id) FROM inputs").fetchone()[0]
        )

    def close(self) -> None:
        self.rollback()  # an open transaction here is a batch that never committed
        self.db.close()

    # -- writing -------------------------------------------------------------------------
    # SQLite itself may end a transaction on an error (a full disk): `in_transaction` is
    # the connection's real state, never a flag of ours that could disagree with it.
    def begin(self) -> None:
        if not self.db.in_transaction:
            self.db.execute("BEGIN")

    def commit(self) -> None:
        self.shots_written.clear()
        if self.db.in_transaction:
            self.db.execute("COMMIT")
            self._kept.update(self._open)
        elif self._open:  # SQLite ended the transaction itself: what it kept is not known
            self._kept.clear()
        self._open.clear()

    def rollback(self) -> None:
        """Undo everything since `begin`: after a failed write the batch is not in."""
        self.shots_written.clear()
        self._open.clear()
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    def add_input(
        self,
        source,
        rx,
        topic=None,
        payload=None,
        venue=None,
        table=None,
        status=None,
        reason=None,
        wall=None,
    ) -> int:
        """`wall`: the wall-clock time to record (default now; tools that write a journal
        of simulated days give theirs)."""
        self.begin()
        cur = self.db.execute(
            "INSERT INTO inputs (source, rx, wall, topic, payload, venue, tbl, status, reason)"
            " VALUES (?,?,?,?,?,?,?,?,?)",
            (
                source,
                rx,
                time.time() if wall is None else wall,
                topic,
                payload,
                venue,
                table,
                status,
                reason,
            ),
        )
        self._open["newest_input"] = cur.lastrowid
        return cur.lastrowid

    def add_records(self, input_id: int, records: list[Record]) -> None:
        """Each record into its table, by its type (railbird.core.records); the kinds no
        table keeps (hold, inplay, pending) are left out."""
        ex = self.db.execute
        events = []  # written with one executemany: the rows of a batch of 8 cost half
        for r in records:
            if isinstance(r, (EventRecord, LateRecord)):
                e = r.event
                ints = (e.boot, e.seq, e.t, e.t_node, e.amp, e.dur, e.n)
                nums = (e.boot, e.seq, e.t, e.t_node, e.amp or 0, e.dur or 0, e.n or 0)
                if min(nums) < I64_MIN or max(nums) > I64_MAX:  # rare: see `sql_int`
                    ints = tuple(sql_int(x) for x in ints)
                boot, seq, t, t_node, amp, dur, n = ints
                events.append(
                    (
                        r.venue,
                        r.table,
                        e.node,
                        boot,
                        seq,
                        t,
                        t_node,
                        e.kind,
                        e.pocket,
                        e.rail,
                        amp,
                        dur,
                        n,
                        int(e.synced),
                        1 if isinstance(r, LateRecord) else 0,
                        r.pos if isinstance(r, EventRecord) else None,
                        input_id,
                    )
                )
            elif isinstance(r, ConflictRecord):
                e = r.event
                ex(
                    "INSERT INTO conflicts (venue, tbl, node, boot, seq, t_node, event,"
                    " input_id) VALUES (?,?,?,?,?,?,?,?)",
                    (
                        r.venue,
                        r.table,
                        e.node,
                        sql_int(e.boot),
                        sql_int(e.seq),
                        sql_int(e.t_node),
                        _j(e.node_dict()),
                        input_id,
                    ),
                )
            elif isinstance(r, QuarantinedRecord):
                e = r.event
                ex(
                    "INSERT INTO quarantined (venue, tbl, node, boot, seq, t_node, t, rx, event,"
                    " reason, input_id) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        r.venue,
                        r.table,
                        e.node,
                        sql_int(e.boot),
                        sql_int(e.seq),
                        sql_int(e.t_node),
                        sql_int(e.t),
                        r.rx,
                        _j(e.node_dict()),
                        r.reason,
                        input_id,
                    ),
                )
            elif isinstance(r, ShotRecord):
                s = r.shot
                text = _j(s)
                ex(
                    "INSERT OR REPLACE INTO shots VALUES (?,?,?,?,?)",
                    (r.venue, r.table, s["n"], text, input_id),
                )
                self.shots_written[text] = s
            elif isinstance(r, StateRecord):
                ex(
                    "INSERT INTO states (venue, tbl, game, state, fen, announcements, cause,"
                    " source, input_id) VALUES (?,?,?,?,?,?,?,?,?)",
                    (
                        r.venue,
                        r.table,
                        r.game,
                        _j(r.state),
                        r.fen,
                        _j(r.announcements),
                        r.cause,
                        r.source,
                        input_id,
                    ),
                )
            elif isinstance(r, RefereeRecord):
                ex(
                    "INSERT INTO referee (venue, tbl, rid, by_, input, ok, error, source,"
                    " input_id) VALUES (?,?,?,?,?,?,?,?,?)",
                    (
                        r.venue,
                        r.table,
                        r.id,
                        r.by,
                        _j(r.input),
                        int(r.ok),
                        r.error,
                        r.source,
                        input_id,
                    ),
                )
            elif isinstance(r, RulesErrorRecord):
                ex(
                    "INSERT INTO rules_errors (venue, tbl, input, error, source, input_id)"
                    " VALUES (?,?,?,?,?,?)",
                    (r.venue, r.table, _j(r.input), r.error, r.source, input_id),
                )
            elif isinstance(r, NodeRecord):
                ex(
                    "INSERT OR REPLACE INTO nodes VALUES (?,?,?,?,?)",
                    (r.venue, r.table, r.node, _j(r.status), input_id),
                )
        if events:
            self.db.executemany(
                "INSERT OR IGNORE INTO events VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", events
            )

    # -- reading -------------------------------------------------------------------------
    def inputs(self, after: int = 0, wall: bool = False):
        """(id, source, rx, topic, payload, venue, tbl[, wall]) in journal order."""
        cols = "id, source, rx, topic, payload, venue, tbl" + (", wall" if wall else "")
        cur = self.db.execute(f"SELECT {cols} FROM inputs WHERE id > ? ORDER BY id", (after,))
        yield from cur

    def count(self, table: str, where: str = "", args=()) -> int:
        return self.db.execute(f"SELECT COUNT(*) FROM {table} {where}", args).fetchone()[0]

    def shots(self, venue=None, table=None) -> list:
        q = "SELECT shot FROM shots"
        args = ()
        if venue is not None:
            q += " WHERE venue=? AND tbl=?"
            args = (venue, table)
        q += " ORDER BY venue, tbl, n"
        return [json.loads(s) for (s,) in self.db.execute(q, args)]
