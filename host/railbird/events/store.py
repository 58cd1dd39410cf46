"""The events' tables in the journal's database, and every change to an event. (They are
`tournaments` and `tournament_log`: the journal's `events` table holds the sensors' events.)

Tables (created where missing, like the players registry's: a table added alone needs no
journal migration, railbird.daemon.migrations):
- `tournaments` one row per event: its venue, its drawn form (`railbird.competition.jsonform`
               `dump` with an empty log: settings, entrants, the draw's positions), when it
               was made and when the director closed it (NULL: the venue's current event);
- `tournament_log` every change after the draw, in order (`seq`): a match called to a table,
               its start seen at the table, its result, the automatic calling turned on or
               off. An event is rebuilt by replaying its log through the core
               (`replay`), so the journal alone holds it: a restart loses nothing.

Each change is one transaction of its own (BEGIN IMMEDIATE, waiting up to BUSY_MS for the
daemon's worker, which writes the same journal).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from railbird.competition import jsonform
from railbird.competition.errors import CompetitionError
from railbird.competition.tournament import Result, Tournament, record, start

BUSY_MS = 5000

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS tournaments (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  venue TEXT NOT NULL,
  doc TEXT NOT NULL,            -- jsonform.dump of the drawn event, its log empty
  created REAL NOT NULL,        -- wall clock
  closed REAL                   -- NULL: the venue's current event
)""",
    """CREATE TABLE IF NOT EXISTS tournament_log (
  event INTEGER NOT NULL REFERENCES tournaments (id),
  seq INTEGER NOT NULL,
  op TEXT NOT NULL,             -- JSON: one of the ops below (`op_json`)
  wall REAL NOT NULL,
  PRIMARY KEY (event, seq)
)""",
)


class StoreError(CompetitionError):
    """A stored event that cannot be read back, or a change to an event that is not there."""


# -- the changes, typed ---------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Called:
    """The match is called to this table (the core's `start`)."""

    match: str
    table: str


@dataclass(frozen=True, slots=True)
class Began:
    """The table started the called match (its `match` input was applied there)."""

    match: str


@dataclass(frozen=True, slots=True)
class Finished:
    """The match's result: from the table's state when the match ended (`by` "table"), or
    a forfeit the director recorded (`by` "director")."""

    match: str
    winner: int
    score: tuple[int, int] | None
    by: str


@dataclass(frozen=True, slots=True)
class AutoCall:
    """Matches are called to free tables by themselves (on) or only by the director."""

    on: bool


Change = Called | Began | Finished | AutoCall


def op_json(c: Change) -> dict[str, object]:
    match c:
        case Called(match=m, table=t):
            return {"op": "called", "match": m, "table": t}
        case Began(match=m):
            return {"op": "began", "match": m}
        case Finished(match=m, winner=w, score=s, by=by):
            return {"op": "finished", "match": m, "winner": w,
                    "score": None if s is None else list(s), "by": by}  # fmt: skip
        case AutoCall(on=on):
            return {"op": "auto", "on": on}


def op_of(d: object) -> Change:
    if not isinstance(d, dict):
        raise StoreError("an event's change must be a JSON object")
    kind = d.get("op")
    try:
        if kind == "called":
            return Called(str(d["match"]), str(d["table"]))
        if kind == "began":
            return Began(str(d["match"]))
        if kind == "finished":
            s = d.get("score")
            score = None if s is None else (int(s[0]), int(s[1]))
            return Finished(str(d["match"]), int(d["winner"]), score, str(d.get("by", "table")))
        if kind == "auto":
            return AutoCall(bool(d["on"]))
    except (KeyError, TypeError, ValueError, IndexError) as e:
        raise StoreError(f"a stored change {kind!r} is incomplete: {e}") from None
    raise StoreError(f"an unknown change {kind!r} in an event's log")


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """An event as its log left it."""

    id: int
    tournament: Tournament
    began: frozenset[str]  # matches the table has started
    auto: bool
    closed: bool


def replay(event_id: int, doc: object, changes: Sequence[Change], closed: bool) -> Rebuilt:
    """The event after its changes, through the core's own operations: a log the rules
    would refuse is refused with the reason, not misread."""
    t = jsonform.load(doc)
    began: set[str] = set()
    auto = True
    for c in changes:
        match c:
            case Called(match=m, table=table):
                t = start(t, m, table)
            case Began(match=m):
                began.add(m)
            case Finished(match=m, winner=w, score=s):
                t = record(t, m, Result(w, s))
            case AutoCall(on=on):
                auto = on
    return Rebuilt(event_id, t, frozenset(began), auto, closed)


def ensure(db: sqlite3.Connection) -> None:
    for sql in SCHEMA:
        db.execute(sql)


def has_tournaments(db: sqlite3.Connection) -> bool:
    row = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='tournaments'")
    return row.fetchone() is not None


class EventStore:
    def __init__(self, db: sqlite3.Connection, clock: Callable[[], float] = time.time) -> None:
        """`db`: a connection to the journal in autocommit mode (isolation_level None)."""
        self.db = db
        self.clock = clock
        db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")

    def create(self, venue: str, t: Tournament) -> int:
        """A new drawn event, the venue's current one (an open one before it is closed)."""
        doc = json.dumps(jsonform.dump(t), sort_keys=True)
        now = self.clock()
        self.db.execute("BEGIN IMMEDIATE")
        try:
            ensure(self.db)
            self.db.execute(
                "UPDATE tournaments SET closed = ? WHERE venue = ? AND closed IS NULL", (now, venue)
            )
            cur = self.db.execute(
                "INSERT INTO tournaments (venue, doc, created) VALUES (?, ?, ?)", (venue, doc, now)
            )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        assert cur.lastrowid is not None
        return cur.lastrowid

    def append(self, event_id: int, change: Change) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            row = self.db.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM tournament_log WHERE event = ?", (event_id,)
            ).fetchone()
            self.db.execute(
                "INSERT INTO tournament_log (event, seq, op, wall) VALUES (?, ?, ?, ?)",
                (event_id, row[0] + 1, json.dumps(op_json(change)), self.clock()),
            )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def close(self, event_id: int) -> None:
        self.db.execute("UPDATE tournaments SET closed = ? WHERE id = ?", (self.clock(), event_id))

    def current(self, venue: str) -> Rebuilt | None:
        """The venue's open event, or else its newest; None: the venue has had none."""
        if not has_tournaments(self.db):
            return None
        row = self.db.execute(
            "SELECT id FROM tournaments WHERE venue = ?"
            " ORDER BY closed IS NOT NULL, id DESC LIMIT 1",
            (venue,),
        ).fetchone()
        return None if row is None else self.load(row[0])

    def load(self, event_id: int) -> Rebuilt:
        if not has_tournaments(self.db):
            raise StoreError("the journal holds no events")
        row = self.db.execute(
            "SELECT doc, closed FROM tournaments WHERE id = ?", (event_id,)
        ).fetchone()
        if row is None:
            raise StoreError(f"no event {event_id}")
        ops = self.db.execute(
            "SELECT op FROM tournament_log WHERE event = ? ORDER BY seq", (event_id,)
        ).fetchall()
        try:
            doc = json.loads(row[0])
            changes = [op_of(json.loads(o[0])) for o in ops]
        except ValueError as e:
            raise StoreError(f"event {event_id} is not readable: {e}") from None
        return replay(event_id, doc, changes, row[1] is not None)

    def venues(self) -> list[str]:
        if not has_tournaments(self.db):
            return []
        return [
            r[0] for r in self.db.execute("SELECT DISTINCT venue FROM tournaments ORDER BY venue")
        ]
