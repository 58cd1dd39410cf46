"""The event service: an event's matches called to the venue's tables and their results
taken back, in the host (docs/events.md "Running an event").

    desk = EventDesk(journal_path, "club", tables=web.tables_of_venue, export_dir=...)
    desk.notify = web.event_changed      # the tables whose call changed: push them
    desk.on_state("club", "t1", state)   # every table state (the web output forwards it)
    desk.call_for("t1")                  # what t1's screens show: the match called there

A match is *called* to a table (the core's `start`: its players are busy), automatically as
tables come free (`auto`, on by default) or by the director (`assign`). The table's screens
show it ready to start, with the players and the race; the referee starts it with one tap,
which applies the match's `match` input (`railbird.competition.tournament.match_input`)
at that table. The first state of the table with the called match's players and no winner
is its start (`Began`); a later state of those players with a `match_winner` is its end:
the result (the winner's seat and the racks or points per seat; a conceded match whose
score is not a finished race is a forfeit) goes into the bracket, and the next matches are
called to the free tables. A match is recognised only after its start was seen, so the
finished state of an earlier match between the same two players (a grand-final reset on
the same table) is never taken for the next one.

Every change is journalled before it is shown (`railbird.events.store`), and a restart
rebuilds the event from the journal; the web output's `restore` hands the tables' last
states over again, so a match that ended while the host was down is taken then.

Thread safety: `on_state` runs on the daemon's thread, the director's requests in the web
server's threads: one lock. `notify` and the export run after the lock is released...
within it, in order, since both are quick (a few kilobytes).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from railbird.competition import jsonform
from railbird.competition.errors import CompetitionError
from railbird.competition.spec import make_spec
from railbird.competition.tournament import (
    MatchState,
    Result,
    Tournament,
    create,
    draw,
    is_complete,
    match_input,
    next_matches,
    playable,
    record,
    start,
)
from railbird.events import export
from railbird.events.store import AutoCall, Began, Called, Change, EventStore, Finished
from railbird.registry import ratings
from railbird.registry.players import PlayerRegistry

log = logging.getLogger("railbird.events")

MAX_ENTRANTS = 128


class EventError(CompetitionError):
    """A director's request the event refuses, with the reason."""


class EventDesk:
    def __init__(
        self,
        journal: str | Path,
        venue: str,
        tables: Callable[[], list[str]],
        export_dir: str | Path | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.venue = venue
        self.tables = tables  # the venue's tables, in natural order
        self.export_dir = Path(export_dir) if export_dir else None
        self.notify: Callable[[], None] = lambda: None  # the calls changed: push them
        self._lock = threading.RLock()
        self._db = sqlite3.connect(str(journal), isolation_level=None, check_same_thread=False)
        self.store = EventStore(self._db, clock)
        self.registry = PlayerRegistry(self._db, clock)
        self.stats = {"results": 0, "calls": 0, "exports": 0, "export_errors": 0}
        self.event_id: int | None = None
        self.t: Tournament | None = None
        self.began: set[str] = set()
        self.auto = True
        self.closed = False
        self.live: dict[str, dict[str, Any]] = {}  # table -> its last state, as shown
        cur = self.store.current(venue)
        if cur is not None:
            self.event_id, self.t = cur.id, cur.tournament
            self.began, self.auto, self.closed = set(cur.began), cur.auto, cur.closed

    def close_db(self) -> None:
        self._db.close()

    # -- reading ---------------------------------------------------------------------------
    def _open(self) -> Tournament | None:
        return None if self.t is None or self.closed else self.t

    def _at(self, table: str):
        t = self._open()
        if t is None:
            return None
        for m in t.matches:
            if m.state is MatchState.IN_PLAY and m.table == table:
                return m
        return None

    def _match_input(self, t: Tournament, match_id: str) -> dict[str, Any]:
        """The match input, with the registry's chart and ratings for a handicapped event."""
        if not t.spec.handicap:
            return match_input(t, match_id)
        found = {p: ratings.rating_of(self._db, p) for p in t.match(match_id).players}
        rated = {p: r.rating for p, r in found.items() if r is not None}
        return match_input(t, match_id, ratings.chart(self._db), rated)

    def call_for(self, table: str) -> dict[str, Any] | None:
        """The match called to `table`, as its screens show it; None: nothing called."""
        with self._lock:
            t, m = self.t, self._at(table)
            if t is None or m is None:
                return None
            inp = self._match_input(t, m.id)
            return {
                "event": t.spec.name,
                "match": m.id,
                "round": str(m.round),
                "round_name": export.round_name(str(m.round)),
                "players": inp["players"],
                "game": t.spec.game,
                "goal": m.goal,
                "goal_field": t.spec.goal_field,
                "input": inp,
                "began": m.id in self.began,
            }

    def public(self) -> dict[str, Any] | None:
        """The event as the boards and the export show it: the bracket, the standings,
        the matches in play with their tables and live scores, the matches up next."""
        with self._lock:
            t = self.t
            if t is None:
                return None
            v = jsonform.view(t)
            calls = {tb: c for tb in self.tables() if (c := self.call_for(tb)) is not None}
            for c in calls.values():
                c.pop("input")
            for m in v["matches"]:
                live = self.live.get(m["table"] or "")
                if m["state"] == MatchState.IN_PLAY.value and m["id"] in self.began and live:
                    names = [s["name"] for s in m["seats"]]
                    if live.get("players") == names:
                        m["live"] = [live["scores"].get(n, 0) for n in names]
            called = {c["match"] for c in calls.values()}
            up = [m for m in playable(t) if m.id not in called] if not self.closed else []
            v.update(
                id=self.event_id,
                venue=self.venue,
                auto=self.auto,
                closed=self.closed,
                calls=calls,
                up_next=[
                    {
                        "match": m.id,
                        "round": str(m.round),
                        "players": [t.name_of(p) for p in m.players],
                    }
                    for m in up
                ],
                free_tables=[tb for tb in self.tables() if tb not in calls],
            )
            return v

    # -- the tables' side ------------------------------------------------------------------
    def on_state(self, venue: str, table: str, state: dict | None) -> None:
        """A table's new state (daemon thread): its start or its end, if it is the
        match called there."""
        if venue != self.venue or not isinstance(state, dict):
            return
        raw = state.get("scores")
        scores: dict[str, int] = raw if isinstance(raw, dict) else {}
        live = {
            "players": state.get("players"),
            "scores": scores,
            "match_winner": state.get("match_winner"),
            "ended": state.get("ended"),
        }
        with self._lock:
            before = self.live.get(table)
            self.live[table] = live
            m = self._at(table)
            if m is None or self.t is None:
                return
            names = [self.t.name_of(p) for p in m.players]
            if live["players"] != names:
                return
            winner = live["match_winner"]
            if m.id not in self.began:
                if winner is None and live["ended"] is None:
                    self._journal(Began(m.id))
                    self.began.add(m.id)
                    self._changed()
                return
            if winner in names:
                seat = names.index(winner)
                score = (int(scores.get(names[0], 0)), int(scores.get(names[1], 0)))
                self._finish(m.id, seat, score, "table")
            elif before is None or before.get("scores") != scores:
                self._export()  # live scores: a rack was won

    def _finish(self, match_id: str, seat: int, score: tuple[int, int] | None, by: str) -> None:
        assert self.t is not None
        result = Result(seat, score)
        try:
            t = record(self.t, match_id, result)
        except CompetitionError as e:
            if score is None:
                raise
            # a conceded match is not a finished race: the core takes it as a forfeit
            log.info("match %s: %s; recorded as a forfeit", match_id, e)
            result = Result(seat, None)
            t = record(self.t, match_id, result)
        self._journal(Finished(match_id, seat, result.score, by))
        self.t = t
        self.stats["results"] += 1
        log.info("event %s: match %s won by %s", self.event_id, match_id, t.name_of(
            t.match(match_id).seats[seat].player or 0))  # fmt: skip
        self._call_free()
        self._changed()

    def _call_free(self) -> None:
        t = self._open()
        if t is None or not self.auto or is_complete(t):
            return
        free = [tb for tb in self.tables() if self._at(tb) is None]
        for m, table in zip(next_matches(t, len(free)), free, strict=False):
            self._call(m.id, table)

    def _call(self, match_id: str, table: str) -> None:
        assert self.t is not None
        t = start(self.t, match_id, table)
        self._journal(Called(match_id, table))
        self.t = t
        self.stats["calls"] += 1
        log.info("event %s: match %s called to %s", self.event_id, match_id, table)

    def _journal(self, change: Change) -> None:
        assert self.event_id is not None
        self.store.append(self.event_id, change)

    def _changed(self) -> None:
        self._export()
        try:
            self.notify()
        except Exception:  # the screens are pushed again on the next change
            log.exception("event screens not pushed")

    def _export(self) -> None:
        if self.export_dir is None:
            return
        view = self.public()
        if view is None:
            return
        try:
            export.write(self.export_dir, view)
            self.stats["exports"] += 1
        except OSError as e:  # a full disk: the event goes on, the export waits for the next
            self.stats["export_errors"] += 1
            log.error("event export to %s not written: %s", self.export_dir, e)

    # -- the director's side ---------------------------------------------------------------
    def create_event(self, form: dict[str, Any]) -> dict[str, Any]:
        """A new event from the director's form, drawn and started: {name, format, game,
        goal, players: [names], seeding, seed, round_goals, shot_clock}. The players are found
        in the registry by name (or added to it); `shot_clock` is the match input's (absent:
        no clock, protocol/REFEREE.md §9b), given to every match of the event."""
        names = form.get("players")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise EventError("players: a list of names, one per entrant")
        names = [n.strip() for n in names if n.strip()]
        if not 2 <= len(names) <= MAX_ENTRANTS:
            raise EventError(f"an event has 2 to {MAX_ENTRANTS} players (got {len(names)})")
        seed = form.get("seed", 0)
        spec = make_spec(
            form.get("format"),
            form.get("game"),
            form.get("goal"),
            round_goals=form.get("round_goals"),
            seeding=form.get("seeding", "seeded"),
            seed=seed if seed is not None else 0,
            name=form.get("name") or "",
            shot_clock=form.get("shot_clock"),
            handicap=form.get("handicap", False),
        )
        with self._lock:
            if self._open() is not None:
                raise EventError("an event is open at this venue: close it first")
            entrants = self.registry.entrants([self._player(n) for n in names])
            t = draw(create(spec, entrants))
            self.event_id = self.store.create(self.venue, t)
            self.t, self.began, self.auto, self.closed = t, set(), True, False
            log.info("event %s (%s): %d players drawn", self.event_id, spec.name, len(names))
            self._call_free()
            self._changed()
            return self.public() or {}

    def _player(self, name: str) -> int:
        found = self.registry.named(name)
        if len(found) > 1:
            raise EventError(f"{len(found)} players are named {name!r}: rename one first")
        if found:
            return found[0].id
        return self.registry.add(name).id

    def assign(self, match_id: str, table: str) -> None:
        with self._lock:
            self._need()
            if table not in self.tables():
                raise EventError(f"there is no table {table!r} at {self.venue}")
            if self._at(table) is not None:
                raise EventError(f"{table} has a match called already")
            self._call(match_id, table)
            self._changed()

    def set_auto(self, on: bool) -> None:
        with self._lock:
            self._need()
            self._journal(AutoCall(on))
            self.auto = on
            self._call_free()
            self._changed()

    def forfeit(self, match_id: str, winner: int) -> None:
        """The director's result for a match not played (a no-show): `winner` is the seat
        that goes through."""
        if winner not in (0, 1):
            raise EventError("winner: seat 0 or seat 1")
        with self._lock:
            t = self._need()
            state = t.match(match_id).state
            if state not in (MatchState.READY, MatchState.IN_PLAY):
                raise EventError(f"match {match_id} is {state.value}: it takes no result")
            self._finish(match_id, winner, None, "director")

    def close(self) -> None:
        with self._lock:
            self._need()
            assert self.event_id is not None
            self.store.close(self.event_id)
            self.closed = True
            self._changed()

    def _need(self) -> Tournament:
        t = self._open()
        if t is None:
            raise EventError("no event is open at this venue: create one")
        return t
