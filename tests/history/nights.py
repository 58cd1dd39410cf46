"""Journals of simulated nights for the history tests: inputs written as the daemon writes
them (`Journal.add_input` with the wall-clock time of a simulated evening, then the records
the input produced), game states from the host's own match layer (`railbird.core.game.Game`,
the rules engine behind it), shots as the shot assembler reports them."""

from __future__ import annotations

import time
from datetime import datetime

from railbird.core.game import Game
from railbird.core.records import Origin, ShotRecord, StateRecord
from railbird.daemon.journal import Journal
from railbird.history.store import HistoryStore

TENBALL = {"type": "match", "game": "10-ball", "players": ["Ann", "Bob"], "race_to": 2}


def at(text: str) -> float:
    """Local wall-clock time of 'YYYY-MM-DD HH:MM[:SS]'."""
    fmt = "%Y-%m-%d %H:%M:%S" if text.count(":") == 2 else "%Y-%m-%d %H:%M"
    return time.mktime(datetime.strptime(text, fmt).timetuple())


class Night:
    """Writes one venue's tables into a journal: `referee` for referee input (a state
    record), `shot` for a sensed shot (a shot record, then the state the rules give it)."""

    def __init__(self, path, venue: str = "club", live: bool = False):
        """`live`: keep the history in each input's transaction, as the daemon does."""
        self.journal = Journal(str(path))
        self.venue = venue
        # as the daemon's: folding the rows the journal says it wrote (`Written`)
        self.history = HistoryStore(self.journal.db, self.journal) if live else None
        self.games: dict[str, Game] = {}
        self.shots: dict[str, int] = {}
        self.rx = 0

    def table(self, table: str, match: dict | None = None) -> Night:
        self.games[table] = Game(match)
        return self

    def _write(self, table, wall, records) -> int:
        self.rx += 1000
        # the evening's time, not the test's
        iid = self.journal.add_input(
            "local", self.rx, None, b"{}", self.venue, table, "ok", wall=wall
        )
        self.journal.add_records(iid, records)
        if self.history is not None:
            self.journal.flush()  # as the daemon: the batch's rows in before the history reads
            self.history.after_batch()
        self.journal.commit()
        return iid

    def _state(self, table, inp, res, source) -> StateRecord:
        return StateRecord(
            venue=self.venue,
            table=table,
            game=self.games[table].game,
            state=res["state"],
            fen=res["fen"],
            announcements=res["announcements"],
            cause=inp.get("type"),
            source=Origin(source),
        )

    def referee(self, table: str, wall: float, inp: dict) -> dict:
        ok, res = self.games[table].feed(inp)
        assert ok, (inp, res)
        self._write(table, wall, [self._state(table, inp, res, "referee")])
        return res["state"]

    def shot(self, table: str, wall: float, pockets=(), facts=None, refused_ok=False):
        """A sensed shot with drops in `pockets` ([pocket] or [(pocket, ball)]); `facts`:
        the referee's (ball identities, fouls), ruled with it as the host does."""
        n = self.shots[table] = self.shots.get(table, 0) + 1
        pocketed = []
        for p in pockets:
            pocket, ball = (p, None) if isinstance(p, str) else p
            d = {"pocket": pocket, "t": n * 1000}
            if ball is not None:
                d["ball"] = ball
            pocketed.append(d)
        shot = {"n": n, "start": n * 1_000_000, "pocketed": pocketed, "rails": [],
                "warnings": []}  # fmt: skip
        records: list = [ShotRecord(venue=self.venue, table=table, shot=shot)]
        game = self.games[table]
        state = None
        if game.available:
            inp = {"type": "shot", "pocketed": [
                {"pocket": p["pocket"], **({"ball": p["ball"]} if "ball" in p else {})}
                for p in pocketed], "rail_after_contact": True}  # fmt: skip
            inp.update(facts or {})
            ok, res = game.feed(inp)
            assert ok or refused_ok, (inp, res)
            if ok:
                records.append(self._state(table, inp, res, "sensed"))
                state = res["state"]
        self._write(table, wall, records)
        return state

    def close(self) -> None:
        self.journal.close()


def tenball_race(n: Night, table: str, w: float):
    """Ann v Bob, race to 2. Ann breaks one ball in (FR), misses; Bob's called 10 wins rack
    1; Bob scratches breaking rack 2 (SL, his foul); Ann's called 10 wins rack 2; Ann's
    break pockets nothing; Bob's called 10 wins the match 2-1 at 20:06."""
    if table in n.games:
        n.referee(table, w - 60, TENBALL)
    else:
        n.table(table, TENBALL)
    n.referee(table, w, {"type": "lag", "winner": "Ann"})
    n.shot(table, w + 60, ["FR"])
    n.shot(table, w + 120, [])
    n.referee(table, w + 130, {"type": "call", "ball": 10, "pocket": "FL"})
    assert n.shot(table, w + 180, [("FL", 10)])["scores"] == {"Ann": 0, "Bob": 1}
    n.shot(table, w + 240, [("SL", 0)])
    n.referee(table, w + 250, {"type": "call", "ball": 10, "pocket": "HL"})
    assert n.shot(table, w + 300, [("HL", 10)])["scores"] == {"Ann": 1, "Bob": 1}
    n.shot(table, w + 330, [])
    n.referee(table, w + 340, {"type": "call", "ball": 10, "pocket": "HR"})
    st = n.shot(table, w + 360, [("HR", 10)])
    assert st["match_winner"] == "Bob"
