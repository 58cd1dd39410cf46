"""The host daemon: ingest -> journal -> pipeline -> outputs, on one worker thread.

    d = Daemon(cfg, outputs=[...])       # cfg: railbird.config.Config
    d.start()                            # rebuilds every table from the journal, connects
    d.referee_input("club", "t1", {"type": "undo"})   # -> {"ok": ..., "state"/"error": ...}
    d.stats(); d.stop()

Order of work for each group of inputs taken from the queue: every input is run through the
pipeline and written to the journal with the records it produced, the transaction commits,
only then are the MQTT messages acknowledged (manual ack) and the outputs called. A crash
anywhere before the commit leaves the messages unacknowledged, so the broker sends them
again; a crash after it is repaired by the replay at start-up plus de-duplication.

A reconnect to the broker after losing it (not the first connect of the process: after a host
crash the broker kept the session and the nodes went on) is journalled as a `reconnect`
input: the pipeline then holds every node's table until that node is caught up
(docs/host.md "Per-node watermarks").

A failed batch (a full disk, or the code failing on an input) is undone whole: the journal
transaction is rolled back, nothing is acknowledged, answered or dispatched, and the pipeline
is rebuilt from the journal, which is exactly its state before the batch (the pipeline is a
function of the journalled inputs). A transient fault (`faults.transient`) keeps the batch
for another try after a backoff, while the stats say `journal_error`; referee input from the
same process is answered with the error at once instead of waiting. Any other exception is
the code failing on one input: the batch is tried again one input at a time, and an input
that fails alone is journalled as source `failed` with its raw payload (never replayed),
acknowledged, counted (`inputs_set_aside`) and logged, so one bad input neither wedges
ingest nor leaves a half-done batch.

Time ticks (`Pipeline.tick`) release events and close shots when a table is quiet. Each
table is ticked on its own deadline (railbird.daemon.ticks), between batches, however full
the inbox is. After a (re)connect ticks wait until the ingest has caught up: until the
broker echoes the host's `online` message, which it queued behind everything it held for
the host (`caught_up`, railbird.daemon.ingest), or the inbox stayed empty for
`CATCHUP_IDLE_S`; so a backlog queued at the broker is never declared late. A tick that
changed a table is journalled with that table, like any other input, so that the replay
reproduces it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import replace
from typing import Any, TypeAlias

from railbird.config import masked
from railbird.core import health
from railbird.core.pipeline import Pipeline
from railbird.core.records import (
    ConflictRecord,
    InplayRecord,
    NodeRecord,
    Outcome,
    PendingRecord,
    QuarantinedRecord,
    Record,
    RefereeRecord,
    ShotRecord,
    Source,
    StateRecord,
    Status,
)
from railbird.core.refauth import is_referee_topic, seal
from railbird.core.revision import state_rev
from railbird.daemon import gcpolicy, retention
from railbird.daemon.answer import referee_answer
from railbird.daemon.faults import Faults, describe, transient
from railbird.daemon.ingest import COUNTERS as INGEST_COUNTERS, HOST_PERIOD_S, Ingest, now_us
from railbird.daemon.journal import Journal
from railbird.daemon.journalerror import JournalError
from railbird.daemon.ratelog import RateLog
from railbird.daemon.replay import Rebuilt, run_input
from railbird.daemon.snapshots import Snapshots, carried, resume
from railbird.daemon.ticks import Timers, deadline
from railbird.history.store import HistoryStore
from railbird.registry import ratings

log = logging.getLogger("railbird.daemon")

INBOX_MAX = 10_000
BATCH_MAX = 500
# When a table's tick is due within DUE_SOON_US a batch takes at most TICK_BATCH inputs
# (about 10-20 ms of work at 1,000 tables), so a backlog in the inbox delays a shot's close
# by that much, not by a whole BATCH_MAX batch (~150 ms, more on a busy machine).
TICK_BATCH = 50
DUE_SOON_US = 100_000
# The network threads (the broker ingest, the feeds' client, the web loop) wait for the GIL
# whenever the worker computes; at CPython's default 5 ms switch interval each of their
# reads costs up to one interval under load, so at 1,000 tables the nodes' messages queued
# behind a busy worker for most of a second (docs/performance.md "Scale"). At 1 ms they
# take turns five times as often: `make bench`'s one-event batches with the feeds on went
# from 2,136-2,221 to 3,125-3,346 events/s, 474-491 to 268-339 µs of CPU per message (two
# runs of each, alternated, on a machine another job was loading).
SWITCH_INTERVAL_S = 0.001
TICK_S = 0.05
CATCHUP_IDLE_S = 0.1
TICK_AGAIN_US = 1_000_000  # cluster mode: a tick asked for and not back yet is asked again


RESTORE_S = 26 * 3600  # history given to the outputs at start: covers any business day

# An inbox entry: its kind ("mqtt", "local", "adopted", "tick_in", "connected",
# "disconnected", "caught_up") and what that kind carries (see `_apply`).
Item: TypeAlias = tuple[Any, ...]
Key: TypeAlias = tuple[str, str]  # (venue, table)
# what `_apply` hands `_deliver`: acks, referee answers, local futures and their results,
# the records for the outputs
Done: TypeAlias = tuple[
    list[tuple[int, int]],
    list[tuple[str, bytes] | None],
    list[tuple["Future[dict[str, Any]]", dict[str, Any]]],
    list[Record],
]


class Daemon:
    def __init__(
        self,
        cfg: Any,  # a railbird.config.Config
        outputs: Iterable[Any] = (),
        journal_path: str | None = None,
        connect: bool = True,
        ingest: Callable[[queue.Queue[Item]], Any] | None = None,
    ) -> None:
        """`ingest(inbox)`: builds the source of input in place of the MQTT ingest (cluster
        mode: railbird.cluster.ingest); its `now` (if it has one) is the daemon's clock."""
        self.cfg = cfg
        self.outputs = list(outputs)
        self.journal = Journal(journal_path or cfg.journal, cfg.journal_sync)
        self.pipeline = Pipeline(cfg)
        self.inbox: queue.Queue[Item] = queue.Queue(INBOX_MAX)
        self.ingest: Any  # Ingest, the cluster's ingest, or None
        if ingest is not None:
            self.ingest = ingest(self.inbox)
        elif connect:
            self.ingest = Ingest(cfg.broker, cfg.venue, cfg.subscribe, self.inbox, cfg.knows)
        else:
            self.ingest = None
        # host time, the axis of rx and ticks: CLOCK_MONOTONIC; the cluster's is wall-clock
        # time, which every worker shares with the stream's timestamps
        self.now: Callable[[], int] = getattr(self.ingest, "now", now_us)
        self._adopted: dict[Key, StateRecord] = {}  # last state of a table taken over
        self.output_errors = 0
        # each table's sensor health as the outputs were last given it (Pipeline.sensor_report)
        self._sensors: dict[Key, health.Report] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._caught_up = False
        self._connected_before = False
        self._idle_since: float | None = None
        self.timers = Timers()  # per-table tick deadlines
        self._last_stats = time.monotonic()
        self._beat = time.monotonic()  # the worker's last loop (health, host heartbeat)
        self._host_beat_at = 0.0
        self.replayed = 0
        self.faults = Faults()
        # lines a sender controls (rejected, conflict, quarantined): at most 10 per kind per 10 s
        self.lines = RateLog(log)
        self._retry: list[Item] = []  # a batch that failed transiently, for the next try
        self._dirty = False  # the pipeline saw a batch that was rolled back
        self.snapshots = Snapshots(cfg, self.journal)
        self._retention_at: float | None = None  # monotonic time of the last retention check
        # match history, in the batches' transactions (the rows they wrote, as written)
        self.history = HistoryStore(self.journal.db, self.journal)

    # -- life cycle ----------------------------------------------------------------------
    def start(self) -> Daemon:
        t0 = time.monotonic()
        if sys.getswitchinterval() > SWITCH_INTERVAL_S:
            sys.setswitchinterval(SWITCH_INTERVAL_S)
        initial = self._initial_states()
        try:
            self.pipeline, rb = resume(self.cfg, self.journal, since_wall=time.time() - RESTORE_S)
        except sqlite3.DatabaseError as e:
            raise JournalError(f"journal {self.journal.path}: cannot be read: {e}") from None
        self.replayed = rb["inputs"]
        if "rebuilt" in rb:  # tables rebuilt alone: the statistics are carried from now on
            try:
                carried(self.journal, rb["snapshot"])
            except sqlite3.OperationalError as e:  # a full disk: ingest waits for it, not this
                log.error("the start from a snapshot of another config is not noted: %s", e)
        # a journal from before the history, or written by another tool; what it reads
        # back is kept, so no collection walks the venue's rebuilt state meanwhile (as resume)
        with gcpolicy.paused():
            self.history.start()
        self._schedule_all()
        self._caught_up = self.ingest is None  # no broker: no backlog to wait for
        log.info(
            "rebuilt %d table(s) from %s and %d journalled input(s) in %.2f s",
            len(self.pipeline.tables),
            (f"the snapshot after input {rb['snapshot']}" if rb["snapshot"] else "nothing")
            + (f" ({len(rb['rebuilt'])} rebuilt alone)" if "rebuilt" in rb else ""),
            rb["inputs"],
            time.monotonic() - t0,
        )
        # secrets (password, referee token, client id) never in the journal: "***"
        raw = masked(json.loads(json.dumps(getattr(self.cfg, "raw", None) or {}, default=str)))
        try:
            self.journal.db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('config', ?)", (json.dumps(raw),)
            )
        except sqlite3.OperationalError as e:  # a full disk: ingest waits for it, not this
            log.error("the config is not journalled: %s", e)
        for out in self.outputs:
            self._call(out, "start")
        self._restore(rb, initial)
        self._thread = threading.Thread(target=self._run, name="railbird-daemon", daemon=True)
        self._thread.start()
        if self.ingest is not None:
            # a journal from an earlier run: the broker should still hold the host's session
            self.ingest.expect_session = self.replayed > 0 or rb["snapshot"] > 0
            positions = getattr(self.ingest, "load_positions", None)
            if positions is not None:  # cluster mode: where this journal is in the stream
                positions(self.journal)
            self.ingest.start()
        return self

    def stop(self) -> None:
        if self.ingest is not None:
            self.ingest.stop()
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.lines.close()
        for out in self.outputs:
            self._call(out, "stop")
        self.journal.close()

    def stats(self) -> dict[str, Any]:
        d = self.pipeline.stats()
        d["output_errors"] = self.output_errors
        if self.ingest is not None:
            d["connected"] = self.ingest.connected.is_set()
            for name in INGEST_COUNTERS:
                d[name] = getattr(self.ingest, name)
        extra = getattr(self.ingest, "stats", None)
        if extra is not None:  # cluster mode: tables owned, takeovers
            d.update(extra())
        d["replayed"] = self.replayed
        d["history_errors"] = self.history.errors
        d.update(self.faults.stats())
        return d

    # -- referee input from the same process (web referee panel, CLI) --------------------------
    def referee_input(
        self,
        venue: str,
        table: str,
        inp: dict[str, Any],
        by: str | None = None,
        id: str | None = None,
        timeout: float = 5.0,
        rev: str | None = None,
    ) -> dict[str, Any]:
        """Feed one referee input; -> {"ok": True, "state", "fen", "rev", "announcements"}
        or {"ok": False, "error"} ("stale": True and the "rev" of now when `rev`, the
        revision it was made against, is not the table's; core/revision.py). Journalled
        like MQTT referee input."""
        msg: dict[str, Any] = {"input": inp}
        if by is not None:
            msg["by"] = by
        if id is not None:
            msg["id"] = id
        if rev is not None:
            msg["rev"] = rev
        fut: Future[dict[str, Any]] = Future()
        self.inbox.put(("local", self.now(), venue, table, msg, fut))
        try:
            result: dict[str, Any] = fut.result(timeout)
            return result
        except Exception as e:  # noqa: BLE001 - timeout or a dead worker: the caller gets why
            return {"ok": False, "error": f"daemon did not answer: {e or type(e).__name__}"}

    # -- worker ------------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            wait = self.faults.retry_at - time.monotonic()
            if wait > 0:  # backoff after a failed write: no new input, no ticks
                self._stop.wait(min(wait, TICK_S))
                self._maybe_stats()
                self._heartbeat()
                continue
            items, self._retry = self._retry, []
            if not items:
                try:
                    items = [self.inbox.get(timeout=self._wait())]
                except queue.Empty:
                    items = []
            limit = self._batch_limit()
            while items and len(items) < limit:
                try:
                    items.append(self.inbox.get_nowait())
                except queue.Empty:
                    break
            try:
                if items:
                    self._idle_since = None
                    self._process(items)
                else:
                    self._idle()
                self._tick_due()
            except Exception:  # never let the worker die (logged)
                log.exception("daemon worker error")
            self._maybe_stats()
            self._heartbeat()
            self.lines.flush()

    def _heartbeat(self) -> None:
        """From the worker loop, so a hung worker stops it: displays then say the scores
        may be stale (protocol/SPEC.md `host`)."""
        self._beat = time.monotonic()
        if self.faults.error is not None:
            return  # nothing is scored while the journal fails: displays must say stale
        if self.ingest is not None and self._beat - self._host_beat_at >= HOST_PERIOD_S:
            self._host_beat_at = self._beat
            self.ingest.heartbeat()

    def health(self) -> dict[str, Any]:
        """For the web pages' heartbeat: how long since the worker last looped, and whether
        the host holds its broker connection (None without MQTT), and the table time now."""
        return {
            "worker_age_s": round(time.monotonic() - self._beat, 3),
            "broker": None if self.ingest is None else self.ingest.connected.is_set(),
            "journal_error": self.faults.error,
            # table time now (the axis of ticks and the shot clock's deadlines): a page
            # counts a shot clock down from it (docs/displays.md "Shot clock")
            "now_us": self.now(),
        }

    def _process(self, items: list[Item]) -> None:
        """One batch, all or nothing (module docstring, "A failed batch")."""
        error = self._attempt(items)
        if error is None:
            return
        if not transient(error):
            error = self._isolate(items)
            if error is None:
                return
        self._retry = self._answer_locals(items, error)
        self.faults.failed(error, len(self._retry))

    def _attempt(self, items: list[Item]) -> BaseException | None:
        flags = (self._caught_up, self._connected_before)
        try:
            if self._dirty:
                self._rebuild()
            done = self._apply(items)
        except Exception as e:  # noqa: BLE001 - undone whole, whatever it was (logged by _undo)
            self._undo(flags, e)
            return e
        self.faults.ok()
        self._schedule(items, done[-1])
        self._deliver(*done)
        return None

    def _undo(self, flags: tuple[bool, bool], error: BaseException) -> None:
        if not transient(error):
            log.error("batch failed on an internal error", exc_info=error)
        try:
            self.journal.rollback()
        except sqlite3.Error as e:
            log.error("journal rollback failed: %s", e)
        self._caught_up, self._connected_before = flags
        self._dirty = True
        try:
            self._rebuild()
        except Exception as e:  # noqa: BLE001 - logged; rebuilt again before the next attempt
            log.error("pipeline rebuild failed: %s", describe(e))

    def _rebuild(self) -> None:
        """The pipeline as of the last commit: a fresh one fed the journal, as at start."""
        self.pipeline, self._dirty = resume(self.cfg, self.journal)[0], False
        self._schedule_all()

    def _isolate(self, items: list[Item]) -> BaseException | None:
        """After an internal error: each input alone, setting aside any that fails alone.
        -> None, or a transient error (the batch from that input on waits in `_retry`)."""
        for i, item in enumerate(items):
            error = self._attempt([item])
            if error is not None and not transient(error):
                error = self._set_aside(item, error)
            if error is not None:
                del items[:i]
                return error
        return None

    def _set_aside(self, item: Item, error: BaseException) -> BaseException | None:
        reason = f"internal: {describe(error)}"[:500]
        kind = item[0]
        try:
            if kind == "mqtt":
                _, rx, topic, payload, _mid, _qos = item
                payload = self._sealed(topic, payload)
                venue, tbl = _venue_table(topic)
                self.journal.add_input(
                    Source.FAILED, rx, topic, payload, venue, tbl, Status.REJECTED, reason
                )
            elif kind == "local":
                _, rx, venue, table, msg, _fut = item
                payload = json.dumps(msg, default=str)
                self.journal.add_input(
                    Source.FAILED, rx, None, payload, venue, table, Status.REJECTED, reason
                )
            self.journal.commit()
        except Exception as e:  # noqa: BLE001 - logged or returned: the input must not wedge
            with contextlib.suppress(sqlite3.Error):  # the next write says why
                self.journal.rollback()
            if transient(e):
                return e
            log.error("input not journalled either: %s", describe(e))
        self.faults.set_aside += 1
        log.error("input set aside (journalled as 'failed', not scored): %s: %s", kind, reason)
        if kind == "mqtt" and self.ingest is not None:
            self.ingest.ack(item[4], item[5])
        elif kind == "local":
            item[5].set_result({"ok": False, "error": reason})
        elif kind == "connected":
            self._caught_up, self._connected_before = False, True
        return None

    def _sealed(self, topic: str, payload: bytes) -> bytes:
        """The token of referee input is checked here and never kept: the pipeline and the
        journal see the sealed payload (railbird.core.refauth)."""
        return seal(payload, self.cfg.referee_token) if is_referee_topic(topic) else payload

    @staticmethod
    def _answer_locals(items: list[Item], error: BaseException) -> list[Item]:
        """Referee input from this process is answered now rather than after the retry
        (its caller waits only seconds); the MQTT messages stay for the next try."""
        keep = []
        for item in items:
            if item[0] == "local":
                item[5].set_result(
                    {"ok": False, "error": f"not applied: journal write failed ({error})"}
                )
            else:
                keep.append(item)
        return keep

    def _apply(self, items: list[Item]) -> Done:
        """Pipeline and journal for every input, then the commit; raises on any failure.
        -> what `_deliver` sends once the batch is in."""
        acks: list[tuple[int, int]] = []
        dispatch: list[Record] = []
        futures: list[tuple[Future[dict[str, Any]], dict[str, Any]]] = []
        answers: list[tuple[str, bytes] | None] = []
        for item in items:
            kind = item[0]
            if kind == "mqtt":
                _, rx, topic, payload, mid, qos = item
                payload = self._sealed(topic, payload)
                venue, tbl = _venue_table(topic)
                status, reason, records = _run(
                    self.pipeline, Source.MQTT, rx, topic, payload, venue, tbl
                )
                iid = self.journal.add_input(
                    Source.MQTT, rx, topic, payload, venue, tbl, status, reason
                )
                if status == Status.REJECTED:
                    self.lines.log("rejected", logging.WARNING, "rejected %s: %s", topic, reason)
                elif reason is None:
                    pass  # the usual case: a conflict or a quarantine always says why
                elif any(isinstance(r, ConflictRecord) for r in records):
                    # a node reused (node, boot, seq): an alarm (journalled in `conflicts`)
                    self.lines.log("conflict", logging.ERROR, "conflict on %s: %s", topic, reason)
                elif any(isinstance(r, QuarantinedRecord) for r in records):
                    self.lines.log("quarantined", logging.WARNING, "%s: %s", topic, reason)
                self.journal.add_records(iid, records)
                dispatch += records
                acks.append((mid, qos))
                if topic.endswith("/referee"):
                    answers.append(referee_answer(topic, payload, status, reason, records))
            elif kind == "adopted":
                # cluster mode: a table's history, journalled by the worker that owned it
                # before, taken over from the stream (railbird.cluster.ingest). Kept here as
                # input so that a restart rebuilds the table; its records are that worker's
                # and are neither journalled again nor shown again (the last state is, once
                # the takeover is complete: `caught_up`)
                rx, topic, payload = item[1:4]
                payload = self._sealed(topic, payload)  # referee input, as live
                venue, tbl = _venue_table(topic)
                records = _run(self.pipeline, Source.ADOPTED, rx, topic, payload, venue, tbl)[2]
                self.journal.add_input(Source.ADOPTED, rx, topic, payload, venue, tbl, Status.OK)
                for r in records:
                    if isinstance(r, StateRecord):
                        self._adopted[(r.venue, r.table)] = r
            elif kind == "tick_in":
                # cluster mode: a table's tick, requested by `_tick_due` and come back through
                # the stream in order with the table's messages (railbird.cluster.ingest)
                _, rx, venue, table, mid, qos = item
                records = _run(self.pipeline, Source.TICK, rx, None, None, venue, table)[2]
                if records:
                    iid = self.journal.add_input(
                        Source.TICK, rx, None, None, venue, table, Status.OK
                    )
                    self.journal.add_records(iid, records)
                    dispatch += records
                acks.append((mid, qos))
            elif kind == "local":
                _, rx, venue, table, msg, fut = item
                text = json.dumps(msg)  # journalled as it is run: the replay reads this
                status, reason, records = _run(
                    self.pipeline, Source.LOCAL, rx, None, text, venue, table
                )
                iid = self.journal.add_input(
                    Source.LOCAL, rx, None, text, venue, table, status, reason
                )
                self.journal.add_records(iid, records)
                dispatch += records
                futures.append((fut, _referee_result(status, reason, records)))
            elif kind in ("connected", "disconnected"):
                self._caught_up = False  # a backlog may follow: no ticks until it is drained
                if kind == "connected":
                    if self._connected_before:
                        # the broker was lost (and so, most likely, were the nodes): every
                        # node holds its table until it is caught up (per-node watermarks)
                        rx = item[1]
                        records = _run(self.pipeline, Source.RECONNECT, rx, None, None, None, None)[
                            2
                        ]
                        iid = self.journal.add_input(Source.RECONNECT, rx, status=Status.OK)
                        self.journal.add_records(iid, records)
                        dispatch += records
                    self._connected_before = True
            elif kind == "caught_up":  # the broker has handed over what it held
                self._caught_up = True
                dispatch += [replace(r, announcements=[]) for r in self._adopted.values()]
                self._adopted.clear()
        self.journal.flush()  # the batch's events, before anything below reads the journal
        position = getattr(self.ingest, "before_commit", None)
        if position is not None:  # cluster mode: each table's stream position, in this commit
            position(self.journal, items)
        self.history.after_batch()
        self.snapshots.after_batch(self.pipeline)  # in this transaction, when due
        self.journal.commit()
        return acks, answers, futures, dispatch

    def _deliver(
        self,
        acks: list[tuple[int, int]],
        answers: list[tuple[str, bytes] | None],
        futures: list[tuple[Future[dict[str, Any]], dict[str, Any]]],
        dispatch: list[Record],
    ) -> None:
        if self.ingest is not None:
            self.ingest.ack_all(acks)
            for answer in filter(None, answers):  # the console learns what became of it
                self.ingest.publish(*answer, qos=1)
        for fut, res in futures:
            fut.set_result(res)
        self._dispatch(dispatch)

    def _idle(self) -> None:
        now = time.monotonic()
        connected = self.ingest is None or self.ingest.connected.is_set()
        if not connected:
            self._idle_since = None
            return
        if self._idle_since is None:
            self._idle_since = now
        if not self._caught_up:
            if now - self._idle_since >= CATCHUP_IDLE_S:
                self._caught_up = True
            else:
                return
        if self._retention_at is None or now - self._retention_at >= retention.CHECK_EVERY_S:
            self._retention_at = now
            self._retention()
        if self.history.results_changed:
            self.history.results_changed = False
            self._ratings()

    def _ratings(self) -> None:
        """Worker thread, idle: a match ended (or an ended one was undone); the ratings are
        refitted over the history (docs/events.md, "Ratings"), in a transaction of their own
        so the batches' commits never wait for a fit."""
        try:
            ratings.refresh(self.journal.db)
        except Exception as e:  # noqa: BLE001 - scoring goes on; tried at the next match end
            with contextlib.suppress(sqlite3.Error):
                self.journal.rollback()
            log.error("ratings not refitted: %s", describe(e))

    def _retention(self) -> None:
        """Worker thread, idle: export and delete raw inputs past the retention age."""
        try:
            retention.run(self.cfg, self.journal)
        except Exception as e:  # noqa: BLE001 - inputs are kept; tried again next time
            with contextlib.suppress(sqlite3.Error):
                self.journal.rollback()
            log.error("journal retention failed (inputs kept): %s", describe(e))

    def tick(self, t: int, tables: Iterable[Key] | None = None) -> list[Record]:
        """Worker thread only. Ticks `tables` ((venue, table) keys; None: every table, as one
        input) at host time `t`; each table a tick changed is journalled as an input of its
        own. A tick whose write fails is undone like a failed batch."""
        flags = (self._caught_up, self._connected_before)
        out: list[Record] = []
        keys: Iterable[Key | None] = [None] if tables is None else tables
        try:
            if self._dirty:
                self._rebuild()
            for key in keys:
                venue, tbl = key or (None, None)
                records = _run(self.pipeline, Source.TICK, t, None, None, venue, tbl)[2]
                if records:
                    iid = self.journal.add_input(Source.TICK, t, None, None, venue, tbl, Status.OK)
                    self.journal.add_records(iid, records)
                    out += records
            if out:
                self.journal.flush()  # the rows kept back, before the history reads the journal
                self.history.after_batch()
                self.snapshots.after_batch(self.pipeline)
                self.journal.commit()
        except Exception as e:  # noqa: BLE001 - undone and logged like a failed batch
            self._undo(flags, e)
            self.faults.failed(e, 0)
            return []
        self.faults.ok()
        return out

    # -- per-table ticks (issue 16, item 2) -------------------------------------------------
    def _tick_due(self) -> None:
        """Tick the tables whose deadline has come, between batches: time advances whatever
        the inbox holds. Not while the broker is away, nor before the ingest has caught up
        after a (re)connect (module docstring)."""
        if not self._caught_up or time.monotonic() < self.faults.retry_at:
            return
        if self.ingest is not None and not self.ingest.connected.is_set():
            return
        now = self.now()
        keys = self.timers.due(now)
        if not keys:
            return
        request = getattr(self.ingest, "request_tick", None)
        if request is not None:
            # cluster mode: the tick is an input of the stream like any message, so a worker
            # that takes the table over replays it in its place (docs/scaling.md); asked
            # again if it has not come back within TICK_AGAIN_US
            request(keys)
            for key in keys:
                self.timers.set(key, now + TICK_AGAIN_US)
            return
        records = self.tick(now, keys)
        for key in keys:
            self.timers.set(key, deadline(self.pipeline, key, now))
        self._dispatch(records)

    def _batch_limit(self) -> int:
        at = self.timers.next_at()
        if at is not None and at - self.now() < DUE_SOON_US:
            return TICK_BATCH
        return BATCH_MAX

    def _wait(self) -> float:
        """How long the worker may wait for input: until the next table is due."""
        ready = self._caught_up and (self.ingest is None or self.ingest.connected.is_set())
        at = self.timers.next_at() if ready else None
        if at is None:
            return TICK_S
        return min(TICK_S, max(0.0, (at - self.now()) / 1e6))

    def _schedule(self, items: list[Item], records: list[Record]) -> None:
        """New deadlines for the tables a batch touched: O(batch), not O(tables)."""
        keys: set[tuple[str, str]] = set()
        for item in items:
            if item[0] in ("mqtt", "adopted"):
                venue, table = _venue_table(item[2])
            elif item[0] in ("local", "tick_in"):
                venue, table = item[2], item[3]
            else:
                continue
            # a topic of no table has no deadline (no table of the pipeline's: None)
            if isinstance(venue, str) and isinstance(table, str):
                keys.add((venue, table))
        for r in records:  # every record is of a table
            keys.add((r.venue, r.table))
        now = self.now()
        for key in keys:
            self.timers.set(key, deadline(self.pipeline, key, now))

    def _schedule_all(self) -> None:
        """Every table's deadline afresh (start, and a pipeline rebuilt from the journal)."""
        self.timers.clear()
        now = self.now()
        for key in self.pipeline.tables:
            self.timers.set(key, deadline(self.pipeline, key, now))

    # -- outputs --------------------------------------------------------------------------------
    def _initial_states(self) -> dict[Key, StateRecord]:
        """The configured match of each table as a state record (before any input), so a
        board shows the match, not nothing, before the first shot of a fresh journal: no
        cause, no source, journalled at no time (`wall` None)."""
        out: dict[Key, StateRecord] = {}
        for key, t in self.pipeline.tables.items():
            try:
                snap = t.game.snapshot()
            except Exception:  # a bug must not stop the start-up: the board waits for input
                log.exception("no initial state for %s/%s", *key)
                continue
            game = t.game.game
            if snap and game is not None:  # a snapshot is of a match, a match of a game
                out[key] = StateRecord(
                    venue=key[0],
                    table=key[1],
                    game=game,
                    state=snap["state"],
                    fen=snap["fen"],
                    announcements=[],
                    cause=None,
                    source=None,
                )
        return out

    def _restore(self, rb: Rebuilt, initial: dict[Key, StateRecord]) -> None:
        """Bring every output up to date after the replay: per table today's shots and
        states (pocket counts survive a restart) and the current state WITHOUT the
        announcements of the last input (they were shown before; a board must not flash a
        stale FOUL). Outputs without `restore` get the last state only."""
        if not self.outputs:
            return
        keys = set(rb["history"]) | set(rb["states"]) | set(initial) | set(rb["nodes"])
        for key in sorted(keys):
            hist: list[ShotRecord | StateRecord] = list(rb["history"].get(key, []))
            if not (hist and hist[0].wall is None) and key in initial:
                # no state before the window: it starts with the configured match
                hist.insert(0, initial[key])
            nodes = rb["nodes"].get(key, {})
            for out in self.outputs:
                if hasattr(out, "restore"):
                    self._call(out, "restore", key[0], key[1], hist, nodes)
                else:
                    last = next((r for r in reversed(hist) if isinstance(r, StateRecord)), None)
                    if last is not None:
                        self._call(
                            out, "on_state", key[0], key[1], last.game, last.state, last.fen, []
                        )
        # the sensor health the rebuilt tables' kept shots give, as before the restart
        self._give_sensors(self.pipeline.tables)

    def _give_sensors(self, keys: Iterable[Key]) -> None:
        """Each table's sensor health to the outputs that show it, when it is not what they
        were last given: it changes with a shot's close, rarely (health.Report)."""
        for key in sorted(keys):
            rep = self.pipeline.sensor_report(*key)
            if rep is None or rep == self._sensors.get(key):
                continue
            self._sensors[key] = rep
            for out in self.outputs:
                if hasattr(out, "on_sensors"):
                    self._call(out, "on_sensors", key[0], key[1], rep)

    def _call(self, out: Any, method: str, *args: Any) -> None:
        try:
            getattr(out, method)(*args)
        except Exception:  # a broken output must not stop scoring
            self.output_errors += 1
            log.exception("output %s.%s failed", getattr(out, "name", out), method)

    def _dispatch(self, records: list[Record]) -> None:
        if not self.outputs or not records:
            return
        # outputs that keep a table's newest view for the batch's end (the web's snapshots)
        batched = [out for out in self.outputs if hasattr(out, "end_batch")]
        for out in batched:
            self._call(out, "begin_batch")
        shot_tables: set[Key] = set()
        for r in records:
            match r:
                case ShotRecord():
                    shot = dict(r.shot.items())
                    for out in self.outputs:
                        self._call(out, "on_shot", r.venue, r.table, shot)
                    shot_tables.add((r.venue, r.table))
                case StateRecord():
                    for out in self.outputs:
                        self._call(
                            out,
                            "on_state",
                            r.venue,
                            r.table,
                            r.game,
                            r.state,
                            r.fen,
                            r.announcements,
                        )
                case NodeRecord():
                    for out in self.outputs:
                        self._call(out, "on_node", r.venue, r.table, r.node, r.status)
                case InplayRecord():  # provisional: the shot's own records replace it
                    for out in self.outputs:
                        self._call(out, "on_inplay", r.venue, r.table, dict(r.inplay))
        if shot_tables:  # only a closed shot changes a table's sensor health
            self._give_sensors(shot_tables)
        for out in batched:
            self._call(out, "end_batch")

    def _maybe_stats(self) -> None:
        period = self.cfg.stats_period_s
        if period and time.monotonic() - self._last_stats >= period:
            self._last_stats = time.monotonic()
            log.info("stats %s", json.dumps(self.stats(), sort_keys=True))


def _run(
    pipeline: Pipeline,
    source: Source,
    rx: int | None,
    topic: str | None,
    payload: bytes | str | None,
    venue: str | None,
    tbl: str | None,
) -> Outcome:
    """A live input through the pipeline as its replay will run it (railbird.daemon.replay)."""
    out = run_input(pipeline, source, rx, topic, payload, venue, tbl)
    assert out is not None  # only `failed` input is never run, and it is never live
    return out


def _venue_table(topic: str) -> tuple[str | None, str | None]:
    p = topic.split("/") if isinstance(topic, str) else []
    return (p[2] if len(p) > 2 else None, p[3] if len(p) > 3 else None)


def _referee_result(status: Status, reason: str | None, records: list[Record]) -> dict[str, Any]:
    for r in records:
        if isinstance(r, PendingRecord):
            # Shot facts held for the shot in play (docs/host.md "Referee facts").
            return {
                "ok": True,
                "pending": True,
                "facts": r.facts,
                "state": r.state,
                "fen": r.fen,
                "rev": state_rev(r.fen),
                "announcements": [],
            }
        if isinstance(r, StateRecord):
            return {
                "ok": True,
                "state": r.state,
                "fen": r.fen,
                "rev": state_rev(r.fen),
                "announcements": r.announcements,
            }
        if status == Status.STALE and isinstance(r, RefereeRecord):
            return {"ok": False, "stale": True, "rev": r.rev, "error": reason or "stale"}
    return {"ok": False, "error": reason or "refused"}
