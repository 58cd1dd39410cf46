"""The venue summary, split per table and published at a bounded rate (issue 16, item 1).

Each table's summary is its own retained topic, `railbird/v1/<venue>/<table>/summary`
(`table_summary`: scores, who is at the table, nodes online, today's pocket counts); the
venue's `railbird/v1/<venue>/summary` is a small index: the venue's totals and, while the
venue has at most `INDEX_TABLES` tables, each table's short entry (protocol/SPEC.md
`summary`). A change costs the daemon's worker one set insertion (`changed`); the
publishing thread of the feeds calls `due` every `TABLE_PERIOD_S`, which encodes each
changed table once and updates the index's totals by that table's difference, and sends the
index at most every `INDEX_PERIOD_S`. No step walks every table of the venue, except once
per business day when every count starts again at 0. Nothing it sends can exceed the
protocol's limits, whatever the number of tables or racks.
"""

from __future__ import annotations

import json
import logging
import threading

from railbird.outputs.tables import Venues
from railbird.tableorder import natural_sorted, pair_key
from rbproto import codec

log = logging.getLogger("railbird.feeds")

TABLE_PERIOD_S = 0.25  # a table's summary at most 4 times a second
INDEX_PERIOD_S = 1.0  # the venue index at most once a second
INDEX_TABLES = 100  # the index lists each table's entry up to this many tables
ENTRY = ("game", "scores", "at_table", "online", "pocketed_today")  # an index entry's fields


class SummaryFeed:
    def __init__(self, venues: Venues):
        self.venues = venues
        self.lock = threading.Lock()
        self.dirty: set = set()  # (venue, table) changed since the last `due`
        self.entries: dict = {}  # venue -> {table: index entry as last sent}
        self.totals: dict = {}  # venue -> [tables online, balls pocketed today]
        self.index_due: set = set()  # venues whose index changed since it was sent
        self.index_at: dict = {}  # venue -> monotonic time the index was last sent
        self.day = None
        self.stats = {"tables": 0, "indexes": 0, "trimmed": 0, "rejected": 0}

    def changed(self, venue: str, table: str) -> None:
        """The worker thread, after the table's `Venues` entry was updated: O(1)."""
        with self.lock:
            self.dirty.add((venue, table))

    def due(self, now: float) -> list:
        """The publishing thread: [(topic, payload)] to publish retained now."""
        day = self.venues.day_and_hour()[0]
        with self.lock:
            if day != self.day:
                if self.day is not None:  # a new business day: every count is 0 again
                    self.dirty.update(self.venues.keys())
                self.day = day
            keys, self.dirty = self.dirty, set()
        out = []
        for venue, table in sorted(keys, key=pair_key):
            msg = self.venues.table_summary(venue, table, day)
            payload = self._table_payload(venue, table, msg) if msg is not None else None
            if payload is None:
                continue
            out.append((codec.topic(venue, table, "table_summary"), payload))
            self.stats["tables"] += 1
            self._account(venue, table, msg)
        for venue in natural_sorted(self.index_due):
            if now - self.index_at.get(venue, float("-inf")) < INDEX_PERIOD_S:
                continue  # sent within the period: it goes out in a later round
            out.append((codec.topic(venue, None, "summary"), self._index_payload(venue)))
            self.index_at[venue] = now
            self.index_due.discard(venue)
            self.stats["indexes"] += 1
        return out

    # -- the venue index, kept by differences ------------------------------------------------
    def _account(self, venue: str, table: str, msg: dict) -> None:
        entry = {k: msg[k] for k in ENTRY if k in msg}
        entries = self.entries.setdefault(venue, {})
        old = entries.get(table)
        if old == entry:
            return
        totals = self.totals.setdefault(venue, [0, 0])
        if old is not None:
            totals[0] -= bool(old.get("online"))
            totals[1] -= old.get("pocketed_today", 0)
        totals[0] += bool(entry.get("online"))
        totals[1] += entry.get("pocketed_today", 0)
        entries[table] = entry
        self.index_due.add(venue)

    def index(self, venue: str) -> dict:
        """The `summary` message of `venue`: totals always; the tables' entries while there
        are at most INDEX_TABLES of them (a venue index never grows with the venue)."""
        entries = self.entries.get(venue, {})
        online, pocketed = self.totals.get(venue, (0, 0))
        listed = len(entries) <= INDEX_TABLES
        return {
            "v": 1,
            "venue": venue,
            "tables": {t: entries[t] for t in natural_sorted(entries)} if listed else {},
            "complete": listed,
            "count": len(entries),
            "online_count": online,
            "pocketed_today": pocketed,
        }

    def _index_payload(self, venue: str) -> bytes:
        msg = self.index(venue)
        try:
            return codec.encode("summary", msg)
        except codec.ProtocolError as e:  # entries too long to list: totals only
            log.debug("feeds: the index of %s without its entries: %s", venue, e)
            return codec.encode("summary", dict(msg, tables={}, complete=False))

    def _table_payload(self, venue: str, table: str, msg: dict) -> bytes | None:
        """Encoded; a day of more racks than fit keeps its latest racks in `by_game`."""
        while True:
            try:
                return codec.encode("table_summary", msg)
            except codec.ProtocolError as e:
                pockets = msg.get("pockets") or {}
                games = pockets.get("by_game") or []
                if e.code != "too large" or not games:
                    self.stats["rejected"] += 1
                    log.warning("feeds: summary of %s/%s not sent: %s", venue, table, e)
                    return None
                self.stats["trimmed"] += 1
                size = len(json.dumps(msg, separators=(",", ":")))
                keep = min(len(games) - 1, len(games) * (codec.MAX_PAYLOAD - 512) // size)
                msg = dict(msg, pockets=dict(pockets, by_game=games[len(games) - keep :]))
