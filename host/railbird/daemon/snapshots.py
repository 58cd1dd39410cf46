"""Journal snapshots: the pipeline's state after an input, so that a restart loads the last
one and replays only the inputs after it (docs/host.md "Journal and restart").

`Snapshots.after_batch(pipeline)` runs in the daemon's open journal transaction, after the
batch's inputs and records and before the commit: when `every_inputs` inputs or `every_s`
seconds have gone by since the last snapshot it writes the pipeline's state
(railbird.core.snapshot, zlib-compressed JSON) as of the newest journalled input, so the
snapshot is in the journal exactly when the inputs it covers are. Kept: the newest
`KEEP_LATEST`; with a retention age, the newest of each day within it (retention cuts the
journal at one of those, railbird.daemon.retention); and the base, the snapshot the inputs
before it were deleted at.

`resume(cfg, journal)` is the restart: the newest usable snapshot, loaded, plus the inputs
after it through `rebuild`. A snapshot made under this configuration (`config_key`) is
loaded whole. One made under another keeps each table's configuration key
(`snapshot.table_key`, column `tables`): after a configuration change the tables whose key
is the same resume from it, and the others (added, or their game, rules options, nodes or
shot parameters changed) are rebuilt alone, from a fresh pipeline and their own inputs up
to the snapshot plus the venue-wide ones (`Journal.table_inputs`), then grafted in with
their nodes' clock models and boots and their node status (`_partly`). That is exactly the
state a replay of every input under the new configuration reaches, because a table's
state depends on its own inputs, the venue-wide ones and its nodes' clocks alone, and a
node counts on one table only; so it is done only when that holds: a venue of its own
(not "*"), no unknown tables accepted, every table with its `nodes` (a table that takes
any node shares its nodes' clocks with the others). Otherwise, or when every table
changed, the journal is replayed from the beginning as before. The venue's statistics
(`snapshot.STATISTICS`) are carried from the snapshot, as the daemon counted them, not
recounted: `railbird replay --check` compares the snapshots after such a start without
them (`STATISTICS_CARRIED_KEY`).

The outputs' history from before the snapshot comes from the journal's derived tables
(`shots`, `states`: what the replay produced when those inputs came in), that of a table
rebuilt alone from its rebuild. With the inputs before the base deleted, the base is where
a replay from the beginning starts (and a configuration change cannot rebuild a table
alone: its first inputs are gone).
"""

from __future__ import annotations

import gc
import json
import logging
import time
import zlib
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from railbird.config import Config
from railbird.core import snapshot as snap
from railbird.core.pipeline import SHOTS_KEPT, Pipeline
from railbird.core.records import Origin, Record, ShotRecord, StateRecord
from railbird.daemon import gcpolicy
from railbird.daemon.journal import Journal
from railbird.daemon.journalerror import JournalError
from railbird.daemon.replay import Rebuilt, TableKey, rebuild

log = logging.getLogger("railbird.snapshots")

EVERY_INPUTS = 5_000  # a restart replays at most this many inputs (about 0.5 s) ...
EVERY_S = 600.0  # ... or those of the last 10 minutes
# ... times one for every this many tables: a snapshot's cost grows with the tables (it holds
# them all) while it blocks the worker, so a fixed 5,000 inputs had a 1,000-table venue spend
# about 8 % of the worker on snapshots, one every ~12 s, each delaying every table's shots
# (make bench-scale). Scaled, the share stays about constant; a restart replays at most
# about 50 inputs a table (about 2.5 s at 1,000 tables). Below 200 tables nothing changes.
TABLES_PER_STEP = 100
KEEP_LATEST = 2
DAY_S = 86_400
BASE_KEY = "inputs_deleted_upto"  # meta: inputs with id <= this were exported and deleted
NEWEST_KEY = "newest_snapshot"  # Journal.remembered: (input_id, wall) of the newest, or None
# meta: the input id of the first restart that rebuilt tables alone (`_partly`): the
# statistics of the snapshots after it are carried, not those of a replay of every input
STATISTICS_CARRIED_KEY = "statistics_carried_after"


def base(journal: Journal) -> int:
    """The id up to which inputs were deleted (0: the journal has all of them)."""
    row = journal.db.execute("SELECT value FROM meta WHERE key = ?", (BASE_KEY,)).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _blob(pipeline: Pipeline) -> bytes:
    # A collection in the middle of the dump walks every object the venue holds: at 1,000
    # tables 0.39 of the dump's 0.49 s, the worker stopped. The dump's objects are freed as
    # soon as it is encoded, so none is needed until then.
    with gcpolicy.paused():
        # each table's last shots are in the journal's `shots` table already (`_shots`)
        return zlib.compress(snap.encode(snap.dump(pipeline, shots=False)), 1)


def read(blob: bytes) -> snap.SnapshotData:
    return snap.decode(zlib.decompress(blob))


class Snapshots:
    def __init__(
        self,
        cfg: Config,
        journal: Journal,
        every_inputs: int | None = None,
        every_s: float | None = None,
        keep_days: int | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.journal = journal
        self.key = snap.config_key(cfg)
        self.tables = table_keys_text(cfg)
        self.every_inputs = EVERY_INPUTS if every_inputs is None else every_inputs
        self.every_s = EVERY_S if every_s is None else every_s
        self.keep_days = cfg.journal_keep_inputs_days if keep_days is None else keep_days
        self.clock = clock
        self.since = clock()  # no snapshot yet: time counts from here
        self.taken = 0
        self.failed_at: int | None = None  # input id of a snapshot that could not be made

    def after_batch(self, pipeline: Pipeline, now: float | None = None) -> bool:
        """Inside the open transaction: take a snapshot if one is due. -> taken"""
        # both kept by the journal across batches (read once; a rollback drops what the
        # batch set): two queries per batch were a few percent of the worker
        newest = self.journal.newest_input()
        if newest is None:
            return False
        now = self.clock() if now is None else now
        last = self.journal.remembered(NEWEST_KEY, self._read_newest)
        last_id, last_wall = last if last is not None else (0, self.since)
        if newest <= last_id:
            return False
        every = self.every_inputs * max(1, len(pipeline.tables) // TABLES_PER_STEP)
        if newest - last_id < every and now - last_wall < self.every_s:
            return False
        if self.failed_at is not None and newest - self.failed_at < every:
            return False
        return self.take(pipeline, newest, now)

    def _read_newest(self) -> tuple[int, float] | None:
        row: tuple[int, float] | None = self.journal.db.execute(
            "SELECT input_id, wall FROM snapshots ORDER BY input_id DESC LIMIT 1"
        ).fetchone()
        return row

    def take(self, pipeline: Pipeline, input_id: int, now: float) -> bool:
        """The pipeline's state as of input `input_id` (it must have seen exactly the
        journal's inputs up to it), in the open transaction, and the pruning. A state that
        cannot be kept is logged and skipped (the batch goes in without a snapshot); a
        journal write error is raised, as for any write of the batch."""
        try:
            blob = _blob(pipeline)
        except Exception as e:  # noqa: BLE001 - a bug in snapshots must not stop scoring
            self.failed_at = input_id
            log.error("no snapshot after input %d: %s: %s", input_id, type(e).__name__, e)
            return False
        self.failed_at = None
        self.journal.begin()
        db = self.journal.db
        db.execute(
            "INSERT OR REPLACE INTO snapshots (input_id, wall, format, config, state, tables)"
            " VALUES (?,?,?,?,?,?)",
            (input_id, now, snap.FORMAT, self.key, blob, self.tables),
        )
        rows = db.execute("SELECT input_id, wall FROM snapshots ORDER BY input_id").fetchall()
        drop = [
            (i,) for i, _ in rows if i not in keep(rows, base(self.journal), now, self.keep_days)
        ]
        db.executemany("DELETE FROM snapshots WHERE input_id = ?", drop)
        kept = [r for r in rows if (r[0],) not in drop]
        self.journal.remember(NEWEST_KEY, max(kept) if kept else None)
        self.taken += 1
        return True


def keep(rows: Sequence[tuple[int, float]], base_id: int, now: float, keep_days: int) -> set[int]:
    """Which snapshots (input_id, wall) to keep: the newest KEEP_LATEST, the base, and with
    a retention age the newest of each day (UTC) from the age on, for retention to cut at."""
    ids = {i for i, _ in sorted(rows)[-KEEP_LATEST:]}
    ids.update(i for i, _ in rows if i == base_id)
    if keep_days and keep_days > 0:
        oldest = now - (keep_days + 2) * DAY_S
        per_day: dict[int, int] = {}  # day -> the newest snapshot's input id
        for i, wall in rows:
            if wall >= oldest:
                day = int(wall // DAY_S)
                per_day[day] = max(per_day.get(day, i), i)
        ids.update(per_day.values())
    return {i for i in ids if i >= base_id}


# -- restart ---------------------------------------------------------------------------------
def table_keys_text(cfg: Config) -> str | None:
    """The `tables` column of a snapshot made under `cfg` (None: venue "*", whose tables
    are never rebuilt alone)."""
    if cfg.venue == "*":
        return None
    return json.dumps(snap.table_keys(cfg), sort_keys=True, separators=(",", ":"))


def tables_apart(cfg: Config) -> bool:
    """Whether each table's state depends on its own inputs and nodes alone under `cfg`,
    so that it can be rebuilt apart from the others (module docstring)."""
    return (
        cfg.venue != "*"
        and not cfg.accept_unknown_tables
        and bool(cfg.table)
        and all(tc.nodes for tc in cfg.table.values())
    )


@dataclass
class Start:
    """Where a replay of the rest of the journal starts: `pipeline` has seen the inputs up to
    `after`; `rebuilt` its tables rebuilt alone from their inputs (`_partly`), `history`
    what that rebuild gave them (with `since_wall`: their shots and states)."""

    pipeline: Pipeline
    after: int
    rebuilt: set[TableKey] = field(default_factory=set)
    history: Rebuilt | None = None
    partly: bool = False  # from a snapshot of another configuration (`_partly`)


def starting_point(cfg: Config, journal: Journal, latest: bool = True) -> tuple[Pipeline, int]:
    """(pipeline, input id it has seen up to) to replay the rest of the journal into:
    `latest` the newest usable snapshot, else the beginning (a fresh pipeline, or the base
    snapshot once inputs before it were deleted)."""
    s = start(cfg, journal, latest)
    return s.pipeline, s.after


def start(
    cfg: Config, journal: Journal, latest: bool = True, since_wall: float | None = None
) -> Start:
    """`starting_point`, with the tables rebuilt alone when the snapshot is of another
    configuration (`since_wall`: and their history from then on, as `rebuild`'s)."""
    key = snap.config_key(cfg)
    first = base(journal)
    rows = journal.db.execute(
        "SELECT input_id, format, config, tables FROM snapshots WHERE input_id >= ?"
        " ORDER BY input_id DESC",
        (first,),
    ).fetchall()
    apart = not first and tables_apart(cfg)
    tried: list[tuple[int, str | None]] = []
    for i, fmt, config, tables in rows if latest else ():
        if fmt != snap.FORMAT or i <= first:
            continue
        if config == key:
            tried.append((i, None))
        elif apart and tables is not None:
            tried.append((i, tables))
    if first:
        tried.append((first, None))  # the base must be used, whatever config made it
    for input_id, tables in tried:
        try:
            if tables is None:
                return Start(load(cfg, journal, input_id), input_id)
            partly = _partly(cfg, journal, input_id, json.loads(tables), since_wall)
            if partly is not None:
                return partly
        except Exception as e:  # noqa: BLE001 - a snapshot that does not load: an older one
            log.error("snapshot after input %d not usable: %s", input_id, e)
    if first:
        raise JournalError(
            f"journal {journal.path}: inputs up to {first} were deleted and the snapshot "
            "that replaces them cannot be loaded"
        )
    return Start(Pipeline(cfg), 0)


def _partly(
    cfg: Config,
    journal: Journal,
    input_id: int,
    stored: dict[str, str],
    since_wall: float | None,
) -> Start | None:
    """The snapshot after `input_id`, made under another configuration whose tables had the
    keys `stored`, with every table whose key `cfg` changed rebuilt alone (module
    docstring). None when no table kept its key: the whole journal is replayed instead."""
    keys = snap.table_keys(cfg)
    kept = {name for name, k in keys.items() if stored.get(name) == k}
    if not kept:
        return None
    venue = cfg.venue
    redo = {(venue, name) for name in keys if name not in kept}
    p = load(cfg, journal, input_id, other_config=True)
    fresh = Pipeline(cfg)  # the configured tables, in the order a replay makes them
    history: Rebuilt | None = None
    if redo:
        history = rebuild(fresh, journal, since_wall=since_wall, tables=(redo, input_id))
    # a node counts on its table alone (`tables_apart`): the kept tables' nodes have the
    # snapshot's clocks and boots, every other node what the rebuild gave it (a node of
    # a table that is gone has none, as in a replay under `cfg`)
    ours = {n for name in kept for n in cfg.table[name].nodes}
    p.clocks._clocks = {
        **{k: c for k, c in p.clocks._clocks.items() if k[0] in ours},
        **{k: c for k, c in fresh.clocks._clocks.items() if k[0] not in ours},
    }
    p.boots = {
        **{n: b for n, b in p.boots.items() if n in ours},
        **{n: b for n, b in fresh.boots.items() if n not in ours},
    }
    p.node_status = {
        **{k: m for k, m in p.node_status.items() if k[1] in kept and k[0] == venue},
        **{k: m for k, m in fresh.node_status.items() if (k[0], k[1]) in redo},
    }
    p.tables = {k: fresh.tables[k] if k in redo else p.tables[k] for k in fresh.tables}
    log.info(
        "the configuration changed since the snapshot after input %d: %d table(s) resume "
        "from it, %d rebuilt alone from their inputs (%s)",
        input_id,
        len(kept),
        len(redo),
        ", ".join(t for _, t in sorted(redo)) or "none",
    )
    return Start(p, input_id, redo, history, partly=True)


def carried(journal: Journal, after: int) -> None:
    """Note that a start rebuilt tables alone from the snapshot after `after`: the statistics
    of the later snapshots are carried (the first such start is kept)."""
    journal.db.execute(
        "INSERT OR IGNORE INTO meta VALUES (?, ?)", (STATISTICS_CARRIED_KEY, str(after))
    )


def statistics_carried_after(journal: Journal) -> int | None:
    """The input id after which the snapshots' statistics are carried (None: never)."""
    row = journal.db.execute(
        "SELECT value FROM meta WHERE key = ?", (STATISTICS_CARRIED_KEY,)
    ).fetchone()
    return int(row[0]) if row and row[0] is not None else None


def stored(journal: Journal, cfg: Config, after: int = 0) -> dict[int, bytes]:
    """{input id: the state as `snapshot.encode` gives it} of the snapshots after `after`
    made under `cfg` (for `railbird replay --check` to compare)."""
    rows = journal.db.execute(
        "SELECT input_id, state FROM snapshots WHERE input_id > ? AND format = ? AND config = ?",
        (after, snap.FORMAT, snap.config_key(cfg)),
    )
    return {i: zlib.decompress(blob) for i, blob in rows}  # as dump(pipeline, shots=False)


def load(cfg: Config, journal: Journal, input_id: int, other_config: bool = False) -> Pipeline:
    """The snapshot after `input_id` as a pipeline for `cfg` (`other_config`: known to be
    of another configuration, whose changed tables the caller rebuilds)."""
    row = journal.db.execute(
        "SELECT state, config FROM snapshots WHERE input_id = ?", (input_id,)
    ).fetchone()
    if row is None:
        raise ValueError(f"no snapshot after input {input_id}")
    if not other_config and row[1] != snap.config_key(cfg):
        log.warning("snapshot after input %d was made under another configuration", input_id)
    return snap.load(
        cfg, read(row[0]), shots=lambda venue, table: _shots(journal, venue, table, input_id)
    )


def _shots(journal: Journal, venue: str, table: str, upto: int) -> list[dict[str, Any]]:
    """A table's last SHOTS_KEPT shots as of input `upto` (`Table.shots`), from the journal."""
    rows = journal.db.execute(
        "SELECT shot FROM shots WHERE venue = ? AND tbl = ? AND input_id <= ?"
        " ORDER BY input_id DESC, n DESC LIMIT ?",
        (venue, table, upto, SHOTS_KEPT),
    ).fetchall()
    return [json.loads(s) for (s,) in reversed(rows)]


def resume(
    cfg: Config,
    journal: Journal,
    since_wall: float | None = None,
    on_records: Callable[[list[Record]], object] | None = None,
) -> tuple[Pipeline, Rebuilt]:
    """The restart: -> (pipeline, rebuild's result) from the newest usable snapshot and the
    inputs after it; `rb["snapshot"]` is its input id (0: none)."""
    # Collections paused while the pipeline and the outputs' history are built (kept, all
    # of it): from a snapshot the inputs replayed are few (`EVERY_INPUTS`, or the minutes
    # since it), so is the cyclic garbage they leave; every input of a journal without one
    # is replayed with collections on.
    collecting = gc.isenabled()
    with gcpolicy.paused():
        s = start(cfg, journal, since_wall=since_wall)
        pipeline, after = s.pipeline, s.after
        if not after and collecting:
            gc.enable()
        rb = rebuild(pipeline, journal, on_records, since_wall, after=after)
        rb["snapshot"] = after
        if s.partly:
            rb["rebuilt"] = sorted(s.rebuilt)
        if s.history is not None:
            _join(rb, s.history, s.rebuilt)
        if since_wall is not None:
            if after:
                _history_before(journal, pipeline, rb, after, since_wall, skip=s.rebuilt)
            nodes: dict[TableKey, dict[str, dict[str, Any]]] = {}
            for (venue, table, node), status in pipeline.node_status.items():
                nodes.setdefault((venue, table), {})[node] = status
            rb["nodes"] = nodes
    return pipeline, rb


# -- the outputs' history from the derived tables ------------------------------------------
_STATE_COLS = "s.id, s.venue, s.tbl, s.game, s.state, s.fen, s.announcements, s.cause, s.source"
_Text = str | None  # a nullable TEXT column
# A row of _STATE_COLS; with the state's input id and that input's wall clock (NULL once
# retention deleted the input) after them. venue, tbl, game and fen are never NULL: the
# journal writes them from a StateRecord, whose fields they are (str)
StateRow = tuple[int, str, str, str, _Text, str, _Text, _Text, _Text]
StateRowAt = tuple[int, str, str, str, _Text, str, _Text, _Text, _Text, int, float | None]
# sh.shot, sh.input_id, i.wall
ShotRowAt = tuple[str, int, float | None]


def _state(row: StateRow | StateRowAt, wall: float | None = None) -> StateRecord:
    _id, venue, tbl, game, state, fen, anns, cause, source = row[:9]
    return StateRecord(
        venue=venue,
        table=tbl,
        game=game,
        state=json.loads(state if state is not None else "null"),  # NULL: None, as always
        fen=fen,
        announcements=json.loads(anns) if anns is not None and anns != "[]" else [],
        cause=cause,
        source=None if source is None else Origin(source),
        wall=wall,
    )


def _join(rb: Rebuilt, head: Rebuilt, keys: set[TableKey]) -> None:
    """Prepend to rb's history and states, for the tables `keys` rebuilt alone up to the
    snapshot, what that rebuild (`head`) gave them: a full replay's history of them."""
    for key in keys:
        if key not in rb["states"] and key in head["states"]:
            rb["states"][key] = head["states"][key]
        tail = rb["history"].get(key, [])
        if tail and tail[0].wall is None:
            continue  # the inputs after the snapshot reach back before the window: complete
        before = head["history"].get(key, [])
        if before or tail:
            rb["history"][key] = before + tail


def _history_before(
    journal: Journal,
    pipeline: Pipeline,
    rb: Rebuilt,
    after: int,
    since: float,
    skip: Collection[TableKey] = (),
) -> None:
    """Prepend to rb's history and states what the inputs up to `after` (not replayed)
    gave: their shot and state records from `since` on, after the last state before it.
    The window starts at the first input journalled at or after `since`. `skip`: tables
    rebuilt alone, whose history their rebuild gave (`_join`)."""
    db = journal.db
    start = db.execute(
        "SELECT MIN(id) FROM inputs WHERE wall >= ? AND id <= ?", (since, after)
    ).fetchone()[0]
    start = after + 1 if start is None else start
    history, last = rb["history"], rb["states"]
    keys = set(pipeline.tables) | set(history)
    for key in sorted(keys - set(skip)):
        tail = history.get(key, [])
        venue, tbl = key
        if key not in last:
            row = db.execute(
                f"SELECT {_STATE_COLS} FROM states s WHERE s.venue = ? AND s.tbl = ?"
                " AND s.input_id <= ? ORDER BY s.input_id DESC, s.id DESC LIMIT 1",
                (venue, tbl, after),
            ).fetchone()
            if row is not None:
                last[key] = _state(row)
        if tail and tail[0].wall is None:
            continue  # the replayed inputs reach back before the window: complete
        row = db.execute(
            f"SELECT {_STATE_COLS} FROM states s WHERE s.venue = ? AND s.tbl = ?"
            " AND s.input_id < ? ORDER BY s.input_id DESC, s.id DESC LIMIT 1",
            (venue, tbl, start),
        ).fetchone()
        head = [] if row is None else [_state(row)]
        states = db.execute(
            f"SELECT {_STATE_COLS}, s.input_id, i.wall FROM states s"
            " LEFT JOIN inputs i ON i.id = s.input_id WHERE s.venue = ? AND s.tbl = ?"
            " AND s.input_id BETWEEN ? AND ? ORDER BY s.input_id, s.id",
            (venue, tbl, start, after),
        ).fetchall()
        shots = db.execute(
            "SELECT sh.shot, sh.input_id, i.wall FROM shots sh"
            " LEFT JOIN inputs i ON i.id = sh.input_id WHERE sh.venue = ? AND sh.tbl = ?"
            " AND sh.input_id BETWEEN ? AND ? ORDER BY sh.input_id, sh.n",
            (venue, tbl, start, after),
        ).fetchall()
        window = _interleave(venue, tbl, states, shots)
        if head or window:
            history[key] = head + window + tail


def _interleave(
    venue: str, tbl: str, states: list[StateRowAt], shots: list[ShotRowAt]
) -> list[ShotRecord | StateRecord]:
    """Shot and state records in the order the pipeline made them: by input, and within an
    input each shot followed by the state it led to (a referee input makes no shot)."""
    # input id -> (shots, states)
    by_input: dict[int, tuple[list[ShotRecord], list[StateRecord]]] = {}
    for row in states:
        by_input.setdefault(row[9], ([], []))[1].append(_state(row, wall=row[10]))
    for shot, iid, wall in shots:
        rec = ShotRecord(venue=venue, table=tbl, shot=json.loads(shot), wall=wall)
        by_input.setdefault(iid, ([], []))[0].append(rec)
    out: list[ShotRecord | StateRecord] = []
    for iid in sorted(by_input):
        shot_recs, state_recs = by_input[iid]
        for i in range(max(len(shot_recs), len(state_recs))):
            out.extend(recs[i] for recs in (shot_recs, state_recs) if i < len(recs))
    return out
