"""The history tables in the journal, and the queries the CLI and the web pages make.

Tables (created here, next to the journal's own):
- `history_matches`  one row per match (`railbird.history.fold.Match.as_dict` in `record`,
                     the columns a query filters by beside it), keyed by the id of the
                     match's first `states` row;
- `history_drops`    one row per ball the pocket sensors saw drop: table, shot, wall-clock
                     time, pocket, ball, the player at the table, the match;
- `history_marks`    how far the fold has read: the last `states` id and `shots` rowid.

They are derived from the journal's `states` and `shots` records and the wall-clock time of
the input that produced them, which are never deleted (railbird.daemon.retention deletes
raw inputs only: the history keeps each time it needs in its own rows before that). The
daemon calls `after_batch` in every transaction that writes records, so the history commits
with them; it folds them as its journal says it wrote them (`Written`: the rows as these
queries would give them, not read back). A rolled-back batch rolls the history back too,
and the store then reloads its fold (`catch_up` notices the marks moved back). `catch_up`
also brings a journal written before the history existed, or by another tool, up to date:
`railbird history` runs it first. Reloading re-folds only the last two matches of each
table from their first state (an undo can reach back no further), so a restart costs two
matches, not the whole journal.

A failure here never stops scoring: `after_batch` runs in a savepoint, and on an error it is
undone, logged and tried again from the marks with the next batch.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol

from railbird.history.fold import Fold, Match
from railbird.history.paging import PageKey
from railbird.sqlrows import insert_rows
from railbird.tableorder import natural_sorted

log = logging.getLogger("railbird.history")

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS history_matches (
  id INTEGER PRIMARY KEY,   -- states.id of the match's first state
  venue TEXT NOT NULL, tbl TEXT NOT NULL, game TEXT,
  player_a TEXT, player_b TEXT,
  start REAL, end_ REAL,    -- wall clock: first applied input, deciding input
  result TEXT, begun INTEGER NOT NULL,
  record TEXT NOT NULL      -- the match as JSON (railbird.history.fold.Match.as_dict)
)""",
    "CREATE INDEX IF NOT EXISTS history_matches_start ON history_matches (venue, start)",
    "CREATE INDEX IF NOT EXISTS history_matches_a ON history_matches (player_a, start)",
    "CREATE INDEX IF NOT EXISTS history_matches_b ON history_matches (player_b, start)",
    "CREATE INDEX IF NOT EXISTS history_matches_tbl ON history_matches (venue, tbl, id)",
    """CREATE TABLE IF NOT EXISTS history_drops (
  venue TEXT NOT NULL, tbl TEXT NOT NULL, shot INTEGER NOT NULL, i INTEGER NOT NULL,
  wall REAL, pocket TEXT, ball INTEGER, player TEXT, match INTEGER,
  PRIMARY KEY (venue, tbl, shot, i)
)""",
    "CREATE INDEX IF NOT EXISTS history_drops_wall ON history_drops (venue, wall)",
    "CREATE INDEX IF NOT EXISTS history_drops_player ON history_drops (player, wall)",
    "CREATE TABLE IF NOT EXISTS history_marks (key TEXT PRIMARY KEY, value INTEGER NOT NULL)",
)
CHUNK = 2000  # states read per step when catching up a long journal
RELOAD_MATCHES = 2  # per table: the current match and the one an undo of `match` brings back
ERROR_LOG_S = 60.0
DROP_COLUMNS = 9  # of history_drops
DROPPED_KEPT = 64  # per table: the newest shot numbers with drops known without a query

# a match's JSON, with one encoder (`json.dumps` with options builds one per call)
_record_json = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode

_STATES = (
    "SELECT s.id, s.venue, s.tbl, s.game, s.state, s.fen, s.announcements, s.cause,"
    " s.input_id, i.wall FROM states s LEFT JOIN inputs i ON i.id = s.input_id"
)
_SHOTS = (
    "SELECT sh.rowid, sh.venue, sh.tbl, sh.n, sh.shot, sh.input_id, i.wall FROM shots sh"
    " LEFT JOIN inputs i ON i.id = sh.input_id"
)


class Written(Protocol):
    """What the writer of the journal knows of the rows it wrote (railbird.daemon.journal):
    the daemon's batches are folded from there, not SELECTed back."""

    shots_written: dict[str, dict[str, Any]]  # the open transaction's shots by JSON text

    def take_written(self) -> tuple[Sequence[tuple], Sequence[tuple]] | None:
        """The `states` and `shots` rows written since the last take, as `_STATES` and
        `_SHOTS` give them; None: not known (read them)."""

    def log_written(self) -> None:
        """Every row there is has been read: keep the rows written from now on."""

    def flush(self) -> None:
        """Write the rows the journal keeps back for the open transaction, so that the
        history's queries see them."""


def ensure(db: sqlite3.Connection) -> None:
    """Create the history tables where missing (one statement at a time: `executescript`
    would commit the caller's transaction)."""
    for sql in SCHEMA:
        db.execute(sql)


def _state_rec(row) -> dict:
    sid, venue, tbl, game, state, fen, anns, cause, iid, wall = row
    return {
        "id": sid,
        "venue": venue,
        "table": tbl,
        "game": game,
        "state": _loads(state),
        "fen": fen,
        "announcements": _loads(anns) or [],
        "cause": cause,
        "input_id": iid,
        "wall": wall,
    }


def _shot_rec(row, parsed=None) -> dict:
    """`parsed`: shots by their JSON text, as the journal wrote them in this transaction
    (railbird.daemon.journal `shots_written`): taken from there, not parsed again."""
    rowid, venue, tbl, n, shot, iid, wall = row
    d = parsed.get(shot) if parsed else None
    return {
        "rowid": rowid,
        "venue": venue,
        "table": tbl,
        "n": n,
        "shot": d if d is not None else (_loads(shot) or {}),
        "input_id": iid,
        "wall": wall,
    }


def _loads(s):
    try:
        return json.loads(s) if s is not None else None
    except ValueError:
        return None


def _in_order(states: list[dict], shots: list[dict]):
    """States and shots in journal order: by input, a shot before the state its input
    produced (the pipeline rules a shot after assembling it), ties in table order."""
    keyed = [((r["input_id"] or 0, 0, r["rowid"]), "shot", r) for r in shots]
    keyed += [((r["input_id"] or 0, 1, r["id"]), "state", r) for r in states]
    keyed.sort(key=lambda x: x[0])
    return [(kind, r) for _, kind, r in keyed]


class HistoryStore:
    def __init__(self, db: sqlite3.Connection, written: Written | None = None):
        """`written`: the journal that writes `db` (railbird.daemon.journal.Journal): the
        rows of its transactions are folded as it wrote them, and its shots without parsing
        their text again. Without it every batch's rows are read back."""
        self.db = db
        self.written = written
        self.parsed = None if written is None else written.shots_written
        self.fold: Fold | None = None
        self.marks: tuple[int, int] | None = None  # what `fold` has read
        self._rows: dict[int, tuple] = {}  # match id -> its indexed columns as written
        # per table (from, shot numbers): of the shots numbered `from` or more exactly those
        # with rows in history_drops, so a pocketed shot needs no query to tell whether it
        # was written before (only a correction writes one again: the table's last shot).
        # Rebuilt with the fold (`_reload`), so a rolled-back batch leaves nothing behind.
        self._dropped: dict[tuple, tuple[int, set[int]]] = {}
        # rows for history_drops, one after the other, written once per `_apply`
        self._drops: list[object] = []
        self.errors = 0
        self._error_logged = 0.0
        # a match ended, or one that had ended is in play again (an undo): the ratings
        # (railbird.registry.ratings) are refitted when the daemon is next idle; set in a
        # batch that is rolled back it costs a refit that finds nothing changed
        self.results_changed = True  # and once at the start: the ratings may be older
        self._over: set[int] = set()  # matches last written as over (an undo may reopen)

    # -- the daemon's side ---------------------------------------------------------------
    def after_batch(self) -> None:
        """In the caller's transaction: fold what the batch wrote. Never raises, but for
        a failure to write the rows the journal kept back (the batch's own, not the
        history's: the caller undoes the batch)."""
        db = self.db
        if self.written is not None:
            # the batch's rows in before the queries below, outside the savepoint that
            # undoes the history's writes alone
            self.written.flush()
        try:
            db.execute("SAVEPOINT history")
            try:
                self.catch_up()
            except BaseException:
                self.fold = None  # the savepoint undoes what it wrote: reload next time
                db.execute("ROLLBACK TO history")
                db.execute("RELEASE history")
                raise
            db.execute("RELEASE history")
        except Exception as e:  # noqa: BLE001 - history must never stop scoring
            self.fold = None
            self.errors += 1
            now = time.monotonic()
            if now - self._error_logged >= ERROR_LOG_S:
                self._error_logged = now
                log.error(
                    "match history not updated (tried again with the next batch; "
                    "%d failure(s) so far): %s: %s",
                    self.errors,
                    type(e).__name__,
                    e,
                )

    def start(self) -> None:
        """At the daemon's start, in a transaction of its own: fold what the journal holds
        beyond the marks (a journal from before the history). Never raises."""
        t0 = time.monotonic()
        if self.written is not None:
            self.written.flush()
        try:
            n = update(self.db, self)
        except Exception as e:  # noqa: BLE001 - history must never stop scoring
            self.fold = None
            self.errors += 1
            log.error("match history not brought up to date: %s: %s", type(e).__name__, e)
            return
        if n:
            log.info("match history: %d record(s) folded in %.2f s", n, time.monotonic() - t0)

    # -- folding -------------------------------------------------------------------------
    def _read_marks(self) -> tuple[int, int]:
        d = dict(self.db.execute("SELECT key, value FROM history_marks"))
        return int(d.get("states", 0)), int(d.get("shots", 0))

    def catch_up(self) -> int:
        """Fold every state and shot written since the marks; -> how many. Runs in the
        caller's transaction (or autocommits each statement without one)."""
        if self.fold is None:
            ensure(self.db)
        marks = self._read_marks()
        reloaded = self.fold is None or self.marks != marks
        if reloaded:
            ensure(self.db)  # the batch that created the tables may have been rolled back
            self._reload(marks)
        taken = None if self.written is None or reloaded else self.written.take_written()
        if taken is not None:
            done = self._fold_written(taken, marks)
        else:
            done = self._fold_read(marks)
            if self.written is not None:  # all is read: the journal keeps what comes next
                self.written.log_written()
        return done

    def _fold_written(self, taken, marks: tuple[int, int]) -> int:
        """The rows the journal says it wrote since the marks, as `_fold_read` would have
        read them: those with an id (rowid) past the marks, a shot written again only as
        it is now (`Journal.take_written`)."""
        s_upto, sh_upto = marks
        states = [_state_rec(r) for r in taken[0] if r[0] > s_upto]
        shots = [_shot_rec(r, self.parsed) for r in taken[1] if r[0] > sh_upto]
        if states or shots:
            self._apply(states, shots)
            s_upto = states[-1]["id"] if states else s_upto
            sh_upto = max([sh_upto] + [r["rowid"] for r in shots])
        self._mark(marks, (s_upto, sh_upto))
        return len(states) + len(shots)

    def _fold_read(self, marks: tuple[int, int]) -> int:
        """The rows past the marks, read from the journal's tables."""
        s_upto, sh_upto = marks
        done = 0
        while True:
            states = [
                _state_rec(r)
                for r in self.db.execute(
                    _STATES + " WHERE s.id > ? ORDER BY s.id LIMIT ?", (s_upto, CHUNK)
                )
            ]
            last = len(states) < CHUNK
            q = _SHOTS + " WHERE sh.rowid > ?"
            args: tuple = (sh_upto,)
            if not last:  # the shots up to the last input of this chunk
                q += " AND sh.input_id <= ?"
                args += (states[-1]["input_id"] or 0,)
            rows = self.db.execute(q + " ORDER BY sh.rowid", args)
            shots = [_shot_rec(r, self.parsed) for r in rows]
            if not states and not shots:
                break
            self._apply(states, shots)
            done += len(states) + len(shots)
            s_upto = states[-1]["id"] if states else s_upto
            sh_upto = max([sh_upto] + [r["rowid"] for r in shots])
            if last:
                break
        self._mark(marks, (s_upto, sh_upto))
        return done

    def _mark(self, marks: tuple[int, int], now: tuple[int, int]) -> None:
        if now != marks:
            self.db.executemany(
                "INSERT OR REPLACE INTO history_marks VALUES (?, ?)",
                (("states", now[0]), ("shots", now[1])),
            )
        self.marks = now

    def _apply(self, states: list[dict], shots: list[dict]) -> None:
        changed: dict[int, Match] = {}
        fold = self.fold
        assert fold is not None  # loaded by `catch_up`
        self._drops = []
        for kind, r in _in_order(states, shots):
            if kind == "state":
                for m in fold.state(r):
                    changed[m.id] = m
                continue
            if self._seen(r):
                continue  # a shot written again (same number): its balls are counted
            drops, counted = fold.shot(r)
            if drops:
                self._note_dropped(r["venue"], r["table"], {d.shot for d in drops})
                for d in drops:
                    self._drops += (d.venue, d.table, d.shot, d.i, d.wall, d.pocket, d.ball,
                                    d.player, d.match)  # fmt: skip
            if counted is not None:
                changed[counted.id] = counted
        self._write_drops()
        for m in changed.values():
            self._write(m)

    def _write_drops(self) -> None:
        if self._drops:
            insert_rows(self.db, "INSERT OR IGNORE INTO history_drops", DROP_COLUMNS, self._drops)
            self._drops = []

    def _seen(self, shot: dict) -> bool:
        if not shot["shot"].get("pocketed"):
            return False
        venue, table, n = shot["venue"], shot["table"], shot["n"]
        known = self._dropped.get((venue, table))
        if known is None:  # the table's newest shot with drops, once per reload
            (newest,) = self.db.execute(
                "SELECT MAX(shot) FROM history_drops WHERE venue=? AND tbl=?", (venue, table)
            ).fetchone()
            known = (0, set()) if newest is None else (newest, {newest})
            self._dropped[(venue, table)] = known
        start, numbers = known
        if isinstance(n, int) and n >= start:
            return n in numbers
        self._write_drops()  # the query sees the drops of the shots before this one
        return (  # older than what is kept: rare
            self.db.execute(
                "SELECT 1 FROM history_drops WHERE venue=? AND tbl=? AND shot=? LIMIT 1",
                (venue, table, n),
            ).fetchone()
            is not None
        )

    def _note_dropped(self, venue: str, table: str, numbers: set[int]) -> None:
        known = self._dropped.get((venue, table))
        if known is None:
            return  # `_seen` reads the table's newest when it needs it
        start, kept = known
        kept.update(n for n in numbers if n >= start)
        if len(kept) > DROPPED_KEPT:
            oldest = min(kept)
            kept.discard(oldest)
            self._dropped[(venue, table)] = (oldest + 1, kept)

    def _write(self, m: Match) -> None:
        d = m.as_dict()
        record = _record_json(d)
        if d["result"] != "in progress":
            self.results_changed = self.results_changed or m.id not in self._over
            self._over.add(m.id)
        elif m.id in self._over:
            self.results_changed = True
            self._over.discard(m.id)
        b = m.players[1] if len(m.players) > 1 else None
        indexed = (m.venue, m.table, m.players[0], b, d["start"])
        if self._rows.get(m.id) == indexed:
            # most writes: the same match one input on; its indexed columns stay as they are
            self.db.execute(
                "UPDATE history_matches SET end_=?, result=?, begun=?, record=? WHERE id=?",
                (d["end"], d["result"], int(d["begun"]), record, m.id),
            )
            return
        self.db.execute(
            "INSERT OR REPLACE INTO history_matches VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (m.id, m.venue, m.table, m.game, m.players[0], b, d["start"], d["end"],
             d["result"], int(d["begun"]), record),
        )  # fmt: skip
        self._rows[m.id] = indexed
        if len(self._rows) > 256:  # only the matches in play are written again
            del self._rows[next(iter(self._rows))]

    def _reload(self, marks: tuple[int, int]) -> None:
        """The fold as it stood at `marks`: the last matches of each table folded again
        from their first state (nothing is written)."""
        self.fold = fold = Fold()
        self._rows.clear()  # what is written is read again as needed: no row is assumed
        self._over.clear()
        self._dropped.clear()
        s_upto, sh_upto = marks
        kept = {}
        tables = self.db.execute("SELECT DISTINCT venue, tbl FROM history_matches").fetchall()
        for venue, tbl in tables:
            rows = self.db.execute(
                "SELECT id, record FROM history_matches WHERE venue=? AND tbl=?"
                " ORDER BY id DESC LIMIT ?",
                (venue, tbl, RELOAD_MATCHES),
            ).fetchall()
            first = min(r[0] for r in rows)
            for mid, record in rows:
                kept[mid] = _loads(record) or {}
                if kept[mid].get("result", "in progress") != "in progress":
                    self._over.add(mid)
            row = self.db.execute("SELECT input_id FROM states WHERE id=?", (first,)).fetchone()
            first_input = (row[0] if row else None) or 0
            states = [
                _state_rec(r)
                for r in self.db.execute(
                    _STATES + " WHERE s.venue=? AND s.tbl=? AND s.id >= ? AND s.id <= ?"
                    " ORDER BY s.id",
                    (venue, tbl, first, s_upto),
                )
            ]
            shots = [
                _shot_rec(r)
                for r in self.db.execute(
                    _SHOTS + " WHERE sh.venue=? AND sh.tbl=? AND sh.input_id >= ?"
                    " AND sh.rowid <= ? ORDER BY sh.rowid",
                    (venue, tbl, first_input, sh_upto),
                )
            ]
            for kind, r in _in_order(states, shots):
                if kind == "state":
                    fold.state(r)
                else:
                    fold.shot(r)
        # a match whose first inputs are gone from the journal keeps the start it had
        for t in fold.tables.values():
            for m in [t.match, *t.earlier]:
                if m is not None and m.id in kept and m.start is None:
                    m.start_hint = kept[m.id].get("start")
        self.marks = marks


# -- queries ---------------------------------------------------------------------------
def has_history(db: sqlite3.Connection) -> bool:
    return (
        db.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='history_matches'"
        ).fetchone()
        is not None
    )


def matches(
    db: sqlite3.Connection,
    venue: str | None = None,
    table: str | None = None,
    player: str | None = None,
    since: float | None = None,
    until: float | None = None,
) -> list[dict]:
    """The matches that began (an input was applied) in [since, until), oldest first."""
    if not has_history(db):
        return []
    cond, args = _where(venue, table, player, since, until)
    q = f"SELECT record FROM history_matches WHERE begun = 1{cond} ORDER BY start, tbl, id"
    return [json.loads(r[0]) for r in db.execute(q, args)]


def _where(
    venue: str | None,
    table: str | None,
    player: str | None,
    since: float | None,
    until: float | None,
) -> tuple[str, list]:
    """The conditions of a matches query (after `WHERE begun = 1`) and their arguments."""
    q, args = _and(
        (("venue = ?", venue), ("tbl = ?", table), ("start >= ?", since), ("start < ?", until))
    )
    if player is not None:
        q += " AND (player_a = ? OR player_b = ?)"
        args += [player, player]
    return q, args


def matches_page(
    db: sqlite3.Connection,
    venue: str | None = None,
    table: str | None = None,
    player: str | None = None,
    since: float | None = None,
    until: float | None = None,
    after: PageKey | None = None,
    limit: int = 500,
    newest_first: bool = False,
) -> list[tuple[PageKey, str]]:
    """At most `limit` matches of `matches`, each as (its key, its record as JSON text),
    beginning just past `after` in the order asked (oldest first, or newest first): a page
    and the cursor of the next (its last key). The order is that of `matches`, and a key
    seen on one page never shows again, whatever is added meanwhile (keyset paging; the
    index on (venue, start) finds the page without reading the ones before)."""
    if not has_history(db):
        return []
    cond, args = _where(venue, table, player, since, until)
    if after is not None:
        cond += " AND (start, tbl, id) " + ("< (?, ?, ?)" if newest_first else "> (?, ?, ?)")
        args += list(after)
    order = " DESC" if newest_first else ""
    q = (
        "SELECT start, tbl, id, record FROM history_matches WHERE begun = 1 AND start IS NOT NULL"
        f"{cond} ORDER BY start{order}, tbl{order}, id{order} LIMIT ?"
    )
    return [((r[0], r[1], r[2]), r[3]) for r in db.execute(q, [*args, int(limit)])]


def summary(
    db: sqlite3.Connection,
    venue: str | None = None,
    table: str | None = None,
    player: str | None = None,
    since: float | None = None,
    until: float | None = None,
) -> tuple[int, int, int]:
    """(matches, won by `player`, `player`'s best run) of the matches `matches` would list,
    without reading them: the pages' summary of a period too long for one page."""
    if not has_history(db):
        return 0, 0, 0
    cond, args = _where(venue, table, player, since, until)
    q = (
        "SELECT COUNT(*), COALESCE(SUM(json_extract(record, '$.winner') = ?), 0),"
        " COALESCE(MAX(CASE WHEN player_a = ? THEN json_extract(record, '$.high_runs[0]')"
        " ELSE json_extract(record, '$.high_runs[1]') END), 0)"
        f" FROM history_matches WHERE begun = 1{cond}"
    )
    n, won, best = db.execute(q, [player, player, *args]).fetchone()
    if player is None:
        return int(n), 0, 0
    return int(n), int(won or 0), int(best or 0)


def has_player(db: sqlite3.Connection, venue: str, player: str) -> bool:
    """Whether `player` played a match at `venue`, ever."""
    if not has_history(db):
        return False
    row = db.execute(
        "SELECT 1 FROM history_matches WHERE begun = 1 AND venue = ?"
        " AND (player_a = ? OR player_b = ?) LIMIT 1",
        (venue, player, player),
    ).fetchone()
    return row is not None


def players(db: sqlite3.Connection, venue: str, limit: int = 60) -> list[str]:
    """The venue's players, the most recently seen first (a match form's known players)."""
    if not has_history(db):
        return []
    q = (
        "SELECT name, MAX(start) AS seen FROM ("
        " SELECT player_a AS name, start FROM history_matches WHERE venue = ? AND begun = 1"
        " UNION ALL"
        " SELECT player_b AS name, start FROM history_matches WHERE venue = ? AND begun = 1"
        ") WHERE name IS NOT NULL AND name != '' GROUP BY name ORDER BY seen DESC, name LIMIT ?"
    )
    return [r[0] for r in db.execute(q, (venue, venue, limit))]


def drop_counts(
    db: sqlite3.Connection,
    by: str,
    day_start_hour: int = 6,
    venue: str | None = None,
    table: str | None = None,
    player: str | None = None,
    since: float | None = None,
    until: float | None = None,
) -> list[tuple]:
    """Pocket counts: rows (table, key, pocket, balls, cue balls) with `key` the business
    day (YYYY-MM-DD, the day starting at `day_start_hour` local time) for `by="day"`, the
    local hour ("00".."23") for `"hour"`, "" for `"pocket"`. SQLite's `localtime` is the C
    library's, the same as Python's `time.localtime`."""
    if not has_history(db):
        return []
    h = int(day_start_hour)
    key = {
        "day": f"date(wall, 'unixepoch', 'localtime', '-{h} hours')",
        "hour": "strftime('%H', wall, 'unixepoch', 'localtime')",
        "pocket": "''",
    }[by]
    q = (
        f"SELECT tbl, {key} AS k, pocket, COUNT(*), SUM(ball IS 0) FROM history_drops"
        " WHERE wall IS NOT NULL"
    )
    where, args = _drop_filter(venue, table, player, since, until)
    q += where
    q += " GROUP BY tbl, k, pocket ORDER BY tbl, k, pocket"
    return [tuple(r) for r in db.execute(q, args)]


def _and(conditions) -> tuple[str, list]:
    """(" AND cond ..." for every (cond, value) whose value is not None, their values)."""
    q, args = "", []
    for cond, value in conditions:
        if value is not None:
            q += f" AND {cond}"
            args.append(value)
    return q, args


def _drop_filter(venue, table, player, since, until) -> tuple[str, list]:
    """The history_drops conditions of the given filters (None: not filtered)."""
    return _and(
        (
            ("venue = ?", venue),
            ("tbl = ?", table),
            ("player = ?", player),
            ("wall >= ?", since),
            ("wall < ?", until),
        )
    )


BUCKET_S = 900  # every time zone's offset, and every change of it, is in whole quarter hours


def drop_buckets(
    db: sqlite3.Connection,
    venue: str | None = None,
    table: str | None = None,
    player: str | None = None,
    since: float | None = None,
    until: float | None = None,
) -> Iterator[tuple[int, str, int, int]]:
    """Pocket counts per quarter hour: rows (quarter hours since the epoch, pocket, balls,
    cue balls), every table together, read as they are taken (a year is some 60,000 rows:
    never all in memory). A quarter hour lies in one local hour and one business
    day, so the caller folds these few thousand rows into days and hours (`by_local_time`)
    instead of SQLite converting each of a year's drops to local time (three scans of
    350,400 drops took 1.3 s; this one, 0.3 s)."""
    if not has_history(db):
        return
    q = (
        f"SELECT CAST(wall / {BUCKET_S} AS INTEGER) AS b, pocket, COUNT(*), SUM(ball IS 0)"
        " FROM history_drops WHERE wall IS NOT NULL"
    )
    where, args = _drop_filter(venue, table, player, since, until)
    q += where
    q += " GROUP BY b, pocket"
    yield from db.execute(q, args)


def by_local_time(
    rows: Iterable[tuple[int, str, int, int]], day_start_hour: int
) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """`drop_buckets` rows -> balls per business day (YYYY-MM-DD), per local hour ("00"..
    "23") and per pocket: what `drop_counts` gives, every table together."""
    days: dict[str, int] = {}
    hours: dict[str, int] = {}
    pockets: dict[str, int] = {}
    local: dict[int, tuple[str, str]] = {}
    for b, pocket, n, _cue in rows:
        keys = local.get(b)
        if keys is None:
            t = time.localtime(b * BUCKET_S)
            # the local clock less the day's start hour, as SQLite's `date(..., '-6 hours')`
            day = datetime(*t[:6]) - timedelta(hours=int(day_start_hour))
            keys = local[b] = (day.date().isoformat(), f"{t.tm_hour:02d}")
        days[keys[0]] = days.get(keys[0], 0) + n
        hours[keys[1]] = hours.get(keys[1], 0) + n
        pockets[pocket] = pockets.get(pocket, 0) + n
    return days, hours, pockets


def venues(db: sqlite3.Connection) -> list[str]:
    if not has_history(db):
        return []
    return natural_sorted(r[0] for r in db.execute("SELECT DISTINCT venue FROM history_matches"))


def tables(db: sqlite3.Connection, venue: str) -> list[str]:
    """The tables of a venue that had a match or a ball dropped."""
    if not has_history(db):
        return []
    rows = db.execute(
        "SELECT tbl FROM history_matches WHERE venue=? UNION SELECT tbl FROM history_drops"
        " WHERE venue=? ORDER BY 1",
        (venue, venue),
    )
    return natural_sorted(r[0] for r in rows)


def open_readonly(path) -> sqlite3.Connection:
    """A read-only connection to a journal (the web pages: the daemon writes it)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    db.execute("PRAGMA busy_timeout = 2000")
    return db


def update(db: sqlite3.Connection, store: HistoryStore | None = None) -> int:
    """Catch the history up in a transaction of its own (`railbird history`, the daemon's
    start); -> how many records were folded."""
    store = store or HistoryStore(db)
    if db.in_transaction:
        return store.catch_up()
    db.execute("BEGIN IMMEDIATE")
    try:
        n = store.catch_up()
    except BaseException:
        db.execute("ROLLBACK")
        store.fold = None
        raise
    db.execute("COMMIT")
    return n
