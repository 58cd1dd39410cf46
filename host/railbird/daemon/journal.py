"""The journal: SQLite in WAL mode, one transaction per group of inputs.

Tables:
- `inputs`   every input of the pipeline in arrival order: raw MQTT messages (topic, payload
             bytes, host receive time `rx`), local referee input, and time ticks that changed
             something. `status`/`reason` say what became of it (ok, duplicate, rejected...).
- `events`   timeline events by (venue, table, node, boot, seq), unique; `pos` is the position
             in the table's timeline, `late` = 1 for events that arrived after the window.
- `shots`, `states`, `referee`, `rules_errors`, `nodes`: derived records.

The inputs table is the source of truth: `inputs()` yields them in order so that a fresh
pipeline can replay them (`railbird.daemon.worker.rebuild`, `railbird replay`). Derived tables are
written in the same transaction as the input that produced them, so they are always
consistent with it.
"""

from __future__ import annotations

import json
import sqlite3
import time

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS inputs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  source TEXT NOT NULL,            -- mqtt | local | tick | reconnect
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
CREATE TABLE IF NOT EXISTS nodes (
  venue TEXT, tbl TEXT, node TEXT, status TEXT, input_id INTEGER,
  PRIMARY KEY (venue, tbl, node)
);
"""


def _j(x) -> str:
    return json.dumps(x, sort_keys=True, separators=(",", ":"))


class Journal:
    def __init__(self, path, synchronous: str = "normal"):
        self.path = str(path)
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute(f"PRAGMA synchronous={'FULL' if synchronous == 'full' else 'NORMAL'}")
        self.db.executescript(SCHEMA)
        self._in_tx = False

    def close(self) -> None:
        if self._in_tx:
            self.commit()
        self.db.close()

    # -- writing -------------------------------------------------------------------------
    def begin(self) -> None:
        if not self._in_tx:
            self.db.execute("BEGIN")
            self._in_tx = True

    def commit(self) -> None:
        if self._in_tx:
            self.db.execute("COMMIT")
            self._in_tx = False

    def add_input(
        self, source, rx, topic=None, payload=None, venue=None, table=None, status=None, reason=None
    ) -> int:
        self.begin()
        cur = self.db.execute(
            "INSERT INTO inputs (source, rx, wall, topic, payload, venue, tbl, status, reason)"
            " VALUES (?,?,?,?,?,?,?,?,?)",
            (source, rx, time.time(), topic, payload, venue, table, status, reason),
        )
        return cur.lastrowid

    def add_records(self, input_id: int, records: list) -> None:
        ex = self.db.execute
        for r in records:
            typ = r["type"]
            if typ in ("event", "late"):
                e = r["event"]
                ex(
                    "INSERT OR IGNORE INTO events VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        r["venue"],
                        r["table"],
                        e.node,
                        e.boot,
                        e.seq,
                        e.t,
                        e.t_node,
                        e.kind,
                        e.pocket,
                        e.rail,
                        e.amp,
                        e.dur,
                        e.n,
                        int(e.synced),
                        1 if typ == "late" else 0,
                        r.get("pos"),
                        input_id,
                    ),
                )
            elif typ == "shot":
                s = r["shot"]
                ex(
                    "INSERT OR REPLACE INTO shots VALUES (?,?,?,?,?)",
                    (r["venue"], r["table"], s["n"], _j(s), input_id),
                )
            elif typ == "state":
                ex(
                    "INSERT INTO states (venue, tbl, game, state, fen, announcements, cause,"
                    " source, input_id) VALUES (?,?,?,?,?,?,?,?,?)",
                    (
                        r["venue"],
                        r["table"],
                        r["game"],
                        _j(r["state"]),
                        r["fen"],
                        _j(r["announcements"]),
                        r["cause"],
                        r["source"],
                        input_id,
                    ),
                )
            elif typ == "referee":
                ex(
                    "INSERT INTO referee (venue, tbl, rid, by_, input, ok, error, source,"
                    " input_id) VALUES (?,?,?,?,?,?,?,?,?)",
                    (
                        r["venue"],
                        r["table"],
                        r["id"],
                        r["by"],
                        _j(r["input"]),
                        int(r["ok"]),
                        r["error"],
                        r["source"],
                        input_id,
                    ),
                )
            elif typ == "rules_error":
                ex(
                    "INSERT INTO rules_errors (venue, tbl, input, error, source, input_id)"
                    " VALUES (?,?,?,?,?,?)",
                    (r["venue"], r["table"], _j(r["input"]), r["error"], r["source"], input_id),
                )
            elif typ == "node":
                ex(
                    "INSERT OR REPLACE INTO nodes VALUES (?,?,?,?,?)",
                    (r["venue"], r["table"], r["node"], _j(r["status"]), input_id),
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
