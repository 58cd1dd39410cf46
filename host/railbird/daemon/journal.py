"""The journal: SQLite in WAL mode, one transaction per group of inputs.

Tables:
- `inputs`   every input of the pipeline in arrival order: raw MQTT messages (topic, payload
             bytes, host receive time `rx`), local referee input, and time ticks that changed
             something. `status`/`reason` say what became of it (ok, duplicate, rejected...).
             Source `failed`: an input the code failed on, kept raw and never replayed.
- `events`   timeline events by (venue, table, node, boot, seq), unique; `pos` is the position
             in the table's timeline, `late` = 1 for events that arrived after the window.
             Keyed by that alone (WITHOUT ROWID, no other index: one B-tree write per event,
             railbird.daemon.migrations version 3).
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
The `states` and `shots` rows a transaction writes are also kept as written for the match
history, which folds them from there (`take_written`) instead of reading them back.

The rows of the hot path (`inputs`, `events`, `shots`, `states`) are kept back until the
batch is through the pipeline and written by `flush` in a few multi-row INSERTs, with the
ids SQLite would have given them row by row; the daemon flushes before anything reads the
journal in the transaction, and `commit` and the reading methods flush too.

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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from railbird import private
from railbird.core.records import (
    ConflictRecord,
    EventRecord,
    InplayRecord,
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
from railbird.sqlrows import insert_rows

SCHEMA = (
    """
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
"""
    + f"CREATE TABLE IF NOT EXISTS events ({migrations.EVENTS_COLUMNS};"
    + """
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
)


# One encoder for every row's JSON: `json.dumps` with options builds a new one per call.
# No check for circular references (the same text; the records are trees): a few percent of
# the encoding, which is a tenth of the worker (each shot's JSON).
_j = json.JSONEncoder(sort_keys=True, separators=(",", ":"), check_circular=False).encode

T = TypeVar("T")

I64_MIN, I64_MAX = -(2**63), 2**63 - 1

# A row of `states` / `shots` as railbird.history.store reads it back (`_STATES`, `_SHOTS`):
# (id, venue, tbl, game, state, fen, announcements, cause, input_id, wall) and
# (rowid, venue, tbl, n, shot, input_id, wall).
StateRow = tuple[int, str, str, Any, str, Any, str, Any, int, float | None]
ShotRow = tuple[int, str, str, Any, str, int, float | None]


def sql_int(x: int | None) -> int | bytes | None:
    """An integer as SQLite keeps it exactly (None stays None)."""
    if x is None or I64_MIN <= x <= I64_MAX:
        return x
    return str(x).encode("ascii")


def py_int(v: int | bytes | None) -> int | None:
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


@dataclass(frozen=True)
class KeptBack:
    """A table whose rows of the open transaction the journal keeps back until `flush`:
    its INSERT up to VALUES, and its number of columns."""

    insert: str
    columns: int


# Every row of the hot path, written a few statements a batch instead of one (or several)
# a message: each statement lets go of the GIL and waits to have it back behind the MQTT
# threads (docs/performance.md). The ids the rows' AUTOINCREMENT (inputs, states) or rowid
# (shots) would get are given here, as SQLite gives them (`Journal._next`).
INPUTS = KeptBack(
    "INSERT INTO inputs (id, source, rx, wall, topic, payload, venue, tbl, status, reason)", 10
)
# INSERT OR IGNORE: a row already there (same key) is left as it is, as the row-by-row
# statement did
EVENTS = KeptBack("INSERT OR IGNORE INTO events", 17)
SHOTS = KeptBack("INSERT OR REPLACE INTO shots (rowid, venue, tbl, n, shot, input_id)", 6)
_STATE_COLUMNS = "id, venue, tbl, game, state, fen, announcements, cause, source, input_id"
STATES = KeptBack(f"INSERT INTO states ({_STATE_COLUMNS})", 10)


class Journal:
    def __init__(self, path: str | Path, synchronous: str = "normal") -> None:
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
        # takes them from here instead of parsing the text again. Emptied when the
        # transaction ends.
        self.shots_written: dict[str, dict[str, Any]] = {}
        # The `states` and `shots` rows written since the match history last took them
        # (`take_written`), as it would read them back: it folds a batch from here instead
        # of a SELECT of what the batch has just written. `_logging`: they are all here (off
        # until the history has read the journal itself, `log_written`, and again after a
        # rollback or a commit that left rows untaken). `_walls`: the wall-clock time of
        # each input of the open transaction, for the rows' `wall`.
        self._logging = False
        self._states: list[StateRow] = []
        self._shots: dict[tuple[str, str, Any], ShotRow] = {}
        self._walls: dict[int, float] = {}
        # Values read from the journal once and then kept up to date by its writers
        # (`remembered`), so that a batch does not ask SQLite for them again: the committed
        # ones, and those set in the open transaction (dropped by a rollback).
        self._kept: dict[str, Any] = {}
        self._open: dict[str, Any] = {}
        # The rows of the open transaction not yet in SQLite (`KeptBack`), each table's
        # as one flat list of values: written by `flush` (before the commit, and before
        # anything reads the journal in the batch) in multi-row INSERTs. Row by row, SQLite
        # let go of the GIL once per row and the worker waited for it back behind the MQTT
        # threads: 331 of the worker's 1,283 py-spy samples in `make bench` were the event
        # rows' executemany, and later a fifth of its time the input's INSERT
        # (docs/performance.md).
        self._inputs: list[object] = []
        self._events: list[object] = []
        self._shot_rows: list[object] = []
        self._state_rows: list[object] = []

    def remembered(self, key: str, read: Callable[[], T]) -> T:
        """The value kept under `key`, as of the open transaction; `read()` (a query in it)
        when none is kept."""
        if key in self._open:
            value: T = self._open[key]
            return value
        if key in self._kept:
            value = self._kept[key]
            return value
        value = self._open[key] = read()
        return value

    def remember(self, key: str, value: object) -> None:
        """`key`'s value as the open transaction leaves it (kept if it commits)."""
        self._open[key] = value

    def newest_input(self) -> int | None:
        """The id of the newest input (None: none), without a query once known."""

        def read() -> int | None:
            newest: int | None = self.db.execute("SELECT MAX(id) FROM inputs").fetchone()[0]
            return newest

        return self.remembered("newest_input", read)

    def _next(self, key: str, read: Callable[[], int]) -> int:
        """The id of the next row whose id the journal gives (`key`: its table's), one
        more than the last; `read()` the last from SQLite, once."""
        value = self.remembered(key, read) + 1
        self._open[key] = value
        return value

    def _sequence(self, table: str) -> int:
        """The last id an AUTOINCREMENT `table` gave, as SQLite would go on from it: the
        largest ever (`sqlite_sequence`, also after the newest rows were deleted)."""
        row = self.db.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,)).fetchone()
        (newest,) = self.db.execute(f"SELECT MAX(id) FROM {table}").fetchone()
        return max(row[0] if row else 0, newest or 0)

    def _last_input_id(self) -> int:
        return self._sequence("inputs")

    def _last_state_id(self) -> int:
        return self._sequence("states")

    def _last_shot_rowid(self) -> int:
        """SQLite gives a new `shots` row the largest rowid there plus one (the row it
        replaces counted: it is deleted after), and no shot row is ever deleted."""
        (newest,) = self.db.execute("SELECT MAX(rowid) FROM shots").fetchone()
        return newest or 0

    def close(self) -> None:
        self.rollback()  # an open transaction here is a batch that never committed
        self.db.close()

    # -- writing -------------------------------------------------------------------------
    # SQLite itself may end a transaction on an error (a full disk): `in_transaction` is
    # the connection's real state, never a flag of ours that could disagree with it.
    def begin(self) -> None:
        if not self.db.in_transaction:
            self.db.execute("BEGIN")

    def flush(self) -> None:
        """Write the rows kept back for the open transaction (`KeptBack`). The daemon calls
        it once its batch is through the pipeline, before the history and the snapshots
        read the journal; `commit` and the reading methods call it too."""
        kept = (
            (INPUTS, self._inputs),
            (EVENTS, self._events),
            (SHOTS, self._shot_rows),
            (STATES, self._state_rows),
        )
        if not any(values for _table, values in kept):
            return
        self._inputs, self._events, self._shot_rows, self._state_rows = [], [], [], []
        self.begin()
        for table, values in kept:
            if values:
                insert_rows(self.db, table.insert, table.columns, values)

    def commit(self) -> None:
        self.flush()
        self.shots_written.clear()
        self._walls.clear()
        if self.db.in_transaction:
            self.db.execute("COMMIT")
            self._kept.update(self._open)
            if self._states or self._shots:  # committed rows the history did not take
                self._stop_logging()
        else:  # SQLite ended the transaction itself: what it kept is not known
            if self._open:
                self._kept.clear()
            self._stop_logging()
        self._open.clear()

    def rollback(self) -> None:
        """Undo everything since `begin`: after a failed write the batch is not in."""
        self._inputs, self._events, self._shot_rows, self._state_rows = [], [], [], []
        self.shots_written.clear()
        self._walls.clear()
        self._stop_logging()
        self._open.clear()
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    # -- the rows written, for the match history (railbird.history.store) ----------------
    def log_written(self) -> None:
        """The history has read every `states` and `shots` row there is, in the open
        transaction: from now on the rows written are kept for `take_written`."""
        self._states, self._shots = [], {}
        self._logging = True

    def take_written(self) -> tuple[list[StateRow], list[ShotRow]] | None:
        """The `states` and `shots` rows written since the last take (or `log_written`),
        in the form and order the history's own queries give; None: not known here (the
        history reads them from the tables). Shots as they are now: a shot written again
        in between replaced the earlier row."""
        if not self._logging:
            return None
        states, shots = self._states, sorted(self._shots.values())
        self._states, self._shots = [], {}
        return states, shots

    def _stop_logging(self) -> None:
        self._logging = False
        self._states, self._shots = [], {}

    def add_input(
        self,
        source: str,
        rx: int | None,
        topic: str | None = None,
        payload: bytes | str | None = None,
        venue: str | None = None,
        table: str | None = None,
        status: str | None = None,
        reason: str | None = None,
        wall: float | None = None,
    ) -> int:
        """`wall`: the wall-clock time to record (default now; tools that write a journal
        of simulated days give theirs). -> the input's id (the row is written by `flush`)."""
        self.begin()
        if wall is None:
            wall = time.time()
        iid = self._next("input_seq", self._last_input_id)
        self._inputs += (iid, source, rx, wall, topic, payload, venue, table, status, reason)
        self._open["newest_input"] = iid
        self._walls[iid] = wall
        return iid

    def add_records(self, input_id: int, records: list[Record]) -> None:
        """Each record into its table, by its type (railbird.core.records); the kinds no
        table keeps (hold, inplay, pending) are left out."""
        ex = self.db.execute
        events = self._events  # all three written by `flush`, many rows to a statement
        shots, states = self._shot_rows, self._state_rows
        wall = self._walls.get(input_id)
        if wall is None and self._logging:  # an input of an earlier transaction: no `wall`
            self._stop_logging()
        for r in records:
            if isinstance(r, (EventRecord, LateRecord)):  # most records: 8 to a message
                e = r.event
                ints: tuple[int | bytes | None, ...] = (e.boot, e.seq, e.t, e.t_node, e.amp,
                                                        e.dur, e.n)  # fmt: skip
                nums = (e.boot, e.seq, e.t, e.t_node, e.amp or 0, e.dur or 0, e.n or 0)
                if min(nums) < I64_MIN or max(nums) > I64_MAX:  # rare: see `sql_int`
                    ints = (sql_int(e.boot), sql_int(e.seq), sql_int(e.t), sql_int(e.t_node),
                            sql_int(e.amp), sql_int(e.dur), sql_int(e.n))  # fmt: skip
                boot, seq, t, t_node, amp, dur, n = ints
                if isinstance(r, EventRecord):
                    late, pos = 0, r.pos
                else:
                    late, pos = 1, None
                events += (r.venue, r.table, e.node, boot, seq, t, t_node, e.kind, e.pocket,
                           e.rail, amp, dur, n, int(e.synced), late, pos, input_id)  # fmt: skip
            elif isinstance(r, InplayRecord):
                continue  # provisional: no table keeps it
            elif isinstance(r, ShotRecord):
                s = r.shot
                text = _j(s)
                venue, tbl, n = r.venue, r.table, s["n"]
                rowid = self._next("shots_rowid", self._last_shot_rowid)
                shots += (rowid, venue, tbl, n, text, input_id)
                self.shots_written[text] = s
                if self._logging:
                    self._shots[(venue, tbl, n)] = (rowid, venue, tbl, n, text, input_id, wall)
            elif isinstance(r, StateRecord):
                venue, tbl = r.venue, r.table
                state, anns = _j(r.state), _j(r.announcements)
                sid = self._next("states_seq", self._last_state_id)
                states += (sid, venue, tbl, r.game, state, r.fen, anns, r.cause, r.source,
                           input_id)  # fmt: skip
                if self._logging:
                    self._states.append(
                        (sid, venue, tbl, r.game, state, r.fen, anns, r.cause, input_id, wall)
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

    # -- reading -------------------------------------------------------------------------
    def inputs(self, after: int = 0, wall: bool = False) -> Iterator[Any]:
        """(id, source, rx, topic, payload, venue, tbl[, wall]) in journal order."""
        self.flush()
        cols = "id, source, rx, topic, payload, venue, tbl" + (", wall" if wall else "")
        cur = self.db.execute(f"SELECT {cols} FROM inputs WHERE id > ? ORDER BY id", (after,))
        yield from cur

    def table_inputs(
        self, tables: Iterable[tuple[str, str]], upto: int, wall: bool = False
    ) -> Iterator[Any]:
        """As `inputs`, up to input `upto`, of the (venue, table) `tables` only, and the
        venue-wide ones (no table: a host reconnect, every table's tick, a message of no
        table), in journal order: what rebuilding those tables alone replays (by the
        index `inputs_table`)."""
        cols = "id, source, rx, topic, payload, venue, tbl" + (", wall" if wall else "")
        keys = sorted(set(tables))
        which = " OR ".join(["tbl IS NULL", *["(tbl = ? AND venue = ?)"] * len(keys)])
        args: list[object] = [upto]
        for venue, tbl in keys:
            args += [tbl, venue]
        cur = self.db.execute(
            f"SELECT {cols} FROM inputs WHERE id <= ? AND ({which}) ORDER BY id", args
        )
        yield from cur

    def count(self, table: str, where: str = "", args: tuple[object, ...] = ()) -> int:
        self.flush()
        n: int = self.db.execute(f"SELECT COUNT(*) FROM {table} {where}", args).fetchone()[0]
        return n

    def shots(self, venue: str | None = None, table: str | None = None) -> list[Any]:
        self.flush()
        q = "SELECT shot FROM shots"
        args: tuple[object, ...] = ()
        if venue is not None:
            q += " WHERE venue=? AND tbl=?"
            args = (venue, table)
        q += " ORDER BY venue, tbl, n"
        return [json.loads(s) for (s,) in self.db.execute(q, args)]
