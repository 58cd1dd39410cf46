"""What the display outputs know about each table: the latest state, nodes online, and the
automatic pocket counts (issue 6 §4). Shared by the MQTT feeds and the web scoreboard; each
output owns its own `Venues` (they are cheap) and feeds it from the Output callbacks.

Pocket counts are per table and *business day*: a day starts at `day_start_hour` local time
(default 06:00, so a night that runs past midnight stays one day). Every ball that drops
counts (the cue ball too, also kept apart as `cue`), by pocket, by hour of the day (local
hour "00".."23") and by game (one entry per rack of a match: game, rack, balls).
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta

from railbird.core.records import ShotRecord, StateRecord
from railbird.core.revision import state_rev
from railbird.scoreboard.screens import _pair, player_index
from railbird.tableorder import natural_sorted, pair_key
from rbproto.codec import POCKETS


class PocketCounts:
    def __init__(self, day: str):
        self.day = day
        self.total = 0
        self.cue = 0
        self.by_pocket = dict.fromkeys(POCKETS, 0)
        self.by_hour: dict[str, int] = {}
        self.by_game: list[dict] = []

    def add(self, ball, pocket: str, hour: str, game_key: tuple) -> None:
        self.total += 1
        if ball == 0:
            self.cue += 1
        if pocket in self.by_pocket:
            self.by_pocket[pocket] += 1
        self.by_hour[hour] = self.by_hour.get(hour, 0) + 1
        if (
            not self.by_game
            or (self.by_game[-1]["match"], self.by_game[-1]["game"], self.by_game[-1]["rack"])
            != game_key
        ):
            self.by_game.append(
                {"match": game_key[0], "game": game_key[1], "rack": game_key[2], "balls": 0}
            )
            del self.by_game[:-200]  # bounded: a day has far fewer racks per table
        self.by_game[-1]["balls"] += 1

    def as_dict(self) -> dict:
        return {
            "day": self.day,
            "total": self.total,
            "cue": self.cue,
            "by_pocket": dict(self.by_pocket),
            "by_hour": dict(sorted(self.by_hour.items())),
            "by_game": [dict(g) for g in self.by_game],
        }


class Table:
    def __init__(self, venue: str, table: str):
        self.venue = venue
        self.table = table
        self.game = None
        self.state: dict | None = None
        self.fen = None
        self.announcements: list[dict] = []
        self.last_shot: dict | None = None
        self.inplay: dict | None = None  # the shot in play, provisional (Output.on_inplay)
        self.nodes: dict[str, bool] = {}
        self.counts: PocketCounts | None = None
        self.match_no = 1
        self.version = 0
        self.call: dict | None = None  # the event's match called here (railbird.events)
        # the sensor health (health.Report.as_dict; None: not given yet), Output.on_sensors
        self.sensors: dict | None = None

    @property
    def online(self) -> bool:
        return any(self.nodes.values())

    def scores(self):
        if not self.state:
            return None
        p = _pair(self.state, self.state.get("scores"))
        return None if p is None else [int(p[0]), int(p[1])]

    def at_table(self):
        return None if not self.state else player_index(self.state, self.state.get("at_table"))

    def snapshot(self, day: str) -> dict:
        st = self.state or {}
        return {
            "venue": self.venue,
            "table": self.table,
            "game": self.game,
            "state": self.state,
            "fen": self.fen,
            "rev": state_rev(self.fen),  # what the referee app's input names
            "announcements": self.announcements,
            "online": self.online,
            "nodes": dict(self.nodes),
            "players": st.get("players"),
            "scores": self.scores(),
            "at_table": self.at_table(),
            "last_shot": self.last_shot,
            "inplay": self.inplay,
            "version": self.version,
            "call": self.call,
            "sensors": self.sensors,
            "pockets": (
                self.counts.as_dict()
                if self.counts and self.counts.day == day
                else PocketCounts(day).as_dict()
            ),
        }


class Venues:
    def __init__(self, day_start_hour: int = 6, clock=time.time):
        self.day_start_hour = day_start_hour
        self.clock = clock
        self.tables: dict[tuple[str, str], Table] = {}
        self.lock = threading.RLock()

    def day_and_hour(self, t: float | None = None) -> tuple[str, str]:
        now = datetime.fromtimestamp(self.clock() if t is None else t)
        day = (now - timedelta(hours=self.day_start_hour)).date().isoformat()
        return day, f"{now.hour:02d}"

    def table(self, venue: str, table: str) -> Table:
        key = (venue, table)
        t = self.tables.get(key)
        if t is None:
            t = self.tables[key] = Table(venue, table)
        return t

    # -- the Output events -------------------------------------------------------------
    def on_shot(self, venue, table, shot, at: float | None = None) -> Table:
        """`at`: the shot's wall-clock time (default now; `restore` passes the journal's)."""
        with self.lock:
            t = self.table(venue, table)
            day, hour = self.day_and_hour(at)
            if t.counts is None or t.counts.day != day:
                if t.counts is not None and t.counts.day > day:
                    return t  # older than the day being counted (restore): not today's
                t.counts = PocketCounts(day)
                t.match_no = 1  # matches are numbered per table and business day
            st = t.state or {}
            key = (t.match_no, t.game or st.get("game"), st.get("rack", 1))
            for p in shot.get("pocketed") or ():
                t.counts.add(p.get("ball"), p.get("pocket"), hour, key)
            t.last_shot = shot
            t.inplay = None  # the shot has closed: its ruling replaces the provisional view
            t.version += 1
            return t

    def on_state(self, venue, table, game, state, fen, announcements) -> Table:
        with self.lock:
            t = self.table(venue, table)
            old = t.state or {}
            if (
                state
                and old
                and (
                    state.get("rack", 1) < old.get("rack", 1)
                    or state.get("players") != old.get("players")
                    or game != t.game
                )
            ):
                t.match_no += 1  # a new match started on this table
            t.game, t.state, t.fen = game, state, fen
            t.announcements = list(announcements or [])
            t.version += 1
            return t

    def on_inplay(self, venue, table, inplay) -> Table:
        with self.lock:
            t = self.table(venue, table)
            t.inplay = dict(inplay)
            t.version += 1
            return t

    def on_node(self, venue, table, node, status) -> Table:
        with self.lock:
            t = self.table(venue, table)
            # a `birth` has no state field: the node is up
            t.nodes[node] = status.get("state", "online") == "online"
            t.version += 1
            return t

    def on_sensors(self, venue, table, report) -> Table:
        """The table's sensor health (a railbird.core.health.Report) as its views show it."""
        with self.lock:
            t = self.table(venue, table)
            t.sensors = report.as_dict()
            t.version += 1
            return t

    def expect_nodes(self, venue, table, nodes) -> Table:
        """The table's configured nodes: one never heard from shows as offline, not as
        missing from the list (a board must not say "sensors online" while one is absent)."""
        with self.lock:
            t = self.table(venue, table)
            for node in nodes:
                t.nodes.setdefault(node, False)
            return t

    def restore(self, venue, table, history, nodes) -> Table:
        """Output.restore: replay the table's recent shots (with their wall-clock times,
        so today's pocket counts come back as they were) and states; the last state is
        shown without its announcements (they were shown before the restart)."""
        with self.lock:
            t = self.table(venue, table)
            for r in history:
                if isinstance(r, ShotRecord):
                    self.on_shot(venue, table, r.shot, at=r.wall)
                elif isinstance(r, StateRecord):
                    self.on_state(venue, table, r.game, r.state, r.fen, [])
            for node, status in sorted(nodes.items()):
                self.on_node(venue, table, node, status)
            t.announcements = []
            t.inplay = None  # a shot still in play comes again from the pipeline
            return t

    # -- views ---------------------------------------------------------------------------
    def snapshot(self, venue, table) -> dict | None:
        with self.lock:
            t = self.tables.get((venue, table))
            return None if t is None else t.snapshot(self.day_and_hour()[0])

    def set_call(self, venue, table, call: dict | None) -> bool:
        """The event's match called to this table (shown ready to start on its screens),
        or None; -> whether it changed."""
        with self.lock:
            t = self.table(venue, table)
            if t.call == call:
                return False
            t.call = call
            t.version += 1
            return True

    def venue_tables(self, venue) -> list[Table]:
        with self.lock:
            return [
                t
                for (v, _), t in sorted(self.tables.items(), key=lambda kv: pair_key(kv[0]))
                if v == venue
            ]

    def venues(self) -> list[str]:
        with self.lock:
            return natural_sorted({v for v, _ in self.tables})

    def keys(self) -> list:
        with self.lock:
            return list(self.tables)

    def table_summary(self, venue, table, day: str | None = None) -> dict | None:
        """The `table_summary` message of protocol/SPEC.md for one table (None: unknown),
        with the pocket counts of business day `day` (default today): the table's own part
        of the venue summary (railbird.outputs.summaries)."""
        with self.lock:
            t = self.tables.get((venue, table))
            if t is None:
                return None
            day = day or self.day_and_hour()[0]
            counts = t.counts if t.counts and t.counts.day == day else PocketCounts(day)
            msg = {
                "v": 1,
                "table": table,
                "game": t.game,
                "scores": t.scores() or [],
                "at_table": t.at_table(),
                "online": t.online,
                "pocketed_today": counts.total,
                "pockets": counts.as_dict(),
            }
            if t.sensors is not None:
                msg["sensors"] = t.sensors
            return msg
