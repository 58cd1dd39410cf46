"""A year of a busy venue's history, for the history benchmark (railbird.bench.history) and
the tests of the history's pages: a journal (the daemon's schema, railbird.daemon.journal)
whose history tables (railbird.history.store) hold `tables` tables x `days` business days x
`per_day` matches of `drops` balls each, in the rows the store writes (a match's record is
`railbird.history.fold.Match.as_dict`'s shape).

The rows are written directly, not folded from played inputs: playing 17,520 matches
through the rules would take hours and measure the rules, while what these figures are
about is reading and serving the history. The journal has no `states` or `shots`, so the
daemon's fold finds nothing to catch up and leaves the rows as they are. A year (8 tables,
17,520 matches, 350,400 drops) takes some seconds to write; `cached` keeps it under build/.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import time
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

from railbird.history import store
from rbproto.codec import POCKETS

VENUE = "club"
NAMES = (
    "Ann", "Bob", "Cleo", "Dev", "Eve", "Finn", "Gus", "Hana", "Ivo", "Jay", "Kim", "Lou",
    "Mia", "Ned", "Ola", "Pat", "Quin", "Rae", "Sol", "Tom", "Uma", "Vik", "Wes", "Xia", "Yan",
    "Zoe", "Abe", "Bea", "Cal", "Dot", "Eli", "Fay", "Gil", "Hal", "Ida", "Jon", "Kai", "Lea",
    "Max", "Nia", "Oto", "Pia", "Ray", "Sue", "Tia", "Ugo", "Val", "Wim",
)  # fmt: skip
LAST_DAY = date(2026, 11, 30)  # the year's last business day; fixed, so the cache holds


@dataclass(frozen=True)
class Year:
    tables: int = 8
    days: int = 365
    per_day: int = 6  # matches per table and business day, from 18:00
    drops: int = 20  # balls per match
    name_len: int = 0  # pad every name to this many characters (a journal from before
    # names were capped at 64: railbird.rules refuses longer ones now)
    last_day: date = LAST_DAY

    @property
    def first_day(self) -> date:
        return self.last_day - timedelta(days=self.days - 1)

    @property
    def matches(self) -> int:
        return self.tables * self.days * self.per_day

    def key(self) -> str:
        return (
            f"{self.tables}t-{self.days}d-{self.per_day}m-{self.drops}b-{self.name_len}n-"
            f"{self.last_day.isoformat()}"
        )


def _name(rnd: random.Random, year: Year) -> str:
    name = rnd.choice(NAMES)
    return name + "." * max(0, year.name_len - len(name))


def write(path: str | Path, year: Year, seed: int = 1) -> dict:
    """The journal at `path` (created; must not exist) -> its figures."""
    from railbird.daemon.journal import Journal

    Journal(path).close()  # the daemon's schema, empty
    rnd = random.Random(seed)
    db = sqlite3.connect(path)
    store.ensure(db)
    matches, drops = [], []
    mid = 0
    for d in range(year.days):
        day = year.first_day + timedelta(days=d)
        evening = time.mktime(datetime(day.year, day.month, day.day, 18).timetuple())
        for t in range(1, year.tables + 1):
            table = f"t{t}"
            for k in range(year.per_day):
                mid += 1
                start = evening + k * 75 * 60 + rnd.randint(0, 300)
                end = start + rnd.randint(40, 70) * 60
                a, b = _name(rnd, year), _name(rnd, year)
                while b == a:
                    b = _name(rnd, year)
                won = rnd.randint(0, 1)
                shooters = [rnd.randint(0, 1) for _ in range(year.drops)]
                balls = [shooters.count(0), shooters.count(1)]
                record = {
                    "id": mid,
                    "venue": VENUE,
                    "table": table,
                    "game": "10-ball",
                    "players": [a, b],
                    "goal": 5,
                    "start": start,
                    "end": end,
                    "result": "won",
                    "winner": (a, b)[won],
                    "scores": [5, rnd.randint(0, 4)] if won == 0 else [rnd.randint(0, 4), 5],
                    "racks": rnd.randint(5, 9),
                    "innings": rnd.randint(20, 60),
                    "high_runs": [rnd.randint(1, 4), rnd.randint(1, 4)],
                    "fouls": [rnd.randint(0, 5), rnd.randint(0, 5)],
                    "balls": balls,
                    "cue": [0, 0],
                    "begun": True,
                }
                matches.append(
                    (mid, VENUE, table, "10-ball", a, b, start, end, "won", 1,
                     json.dumps(record, sort_keys=True, separators=(",", ":")))
                )  # fmt: skip
                step = (end - start) / (year.drops + 1)
                for i, who in enumerate(shooters):
                    wall = start + step * (i + 1)
                    drops.append(
                        (VENUE, table, mid * 100 + i, 0, wall, rnd.choice(POCKETS), None,
                         (a, b)[who], mid)
                    )  # fmt: skip
    with db:
        db.executemany("INSERT INTO history_matches VALUES (?,?,?,?,?,?,?,?,?,?,?)", matches)
        db.executemany("INSERT INTO history_drops VALUES (?,?,?,?,?,?,?,?,?)", drops)
    db.close()
    return {"matches": len(matches), "drops": len(drops), "mb": os.path.getsize(path) / 2**20}


def cached(year: Year, cache: str | Path, progress=None) -> tuple[Path, dict]:
    """The journal of `year` under `cache`, written once (`progress(seconds)` after)."""
    cache = Path(cache)
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"history-{year.key()}.sqlite"
    meta = path.with_suffix(".json")
    if path.exists() and meta.exists():
        return path, json.loads(meta.read_text())
    tmp = path.with_suffix(".tmp")
    for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        p.unlink(missing_ok=True)
    t0 = time.monotonic()
    figures = write(tmp, year)
    os.replace(tmp, path)
    meta.write_text(json.dumps(figures))
    if progress is not None:
        progress(time.monotonic() - t0)
    return path, figures
