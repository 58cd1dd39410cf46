"""The ratings the host keeps: the fit of `railbird.competition.ratings` over every rack
result in the match history, kept in the journal and refitted when a match ends
(docs/events.md, "Ratings").

Tables (created where missing, like the registry's):
- `rating_matches` one row per rated match, in the order the matches ended (end time, then
                   match id): the match, its two players (registry ids), the racks each won,
                   and both players' ratings of the fit over every rated match up to and
                   including this one: the ratings over time;
- `ratings`        the current rating of every registered player (the fit over all rated
                   matches): rating, starter, racks, racks won, established;
- `rating_marks`   the starter ratings the fit used, as JSON; the director's handicap
                   chart (`railbird.competition.handicap`), as its text.

A match is rated when it is over (won, conceded or abandoned: the racks were played), its
game scores racks (not 14.1, whose scores are points), and both names are registered
players, each to exactly one (a merged duplicate's name is the player who stays; a name two
listed players share is left out until one of them is renamed). `refresh` compares the rated
matches with those kept, and refits from the first that differs (a new one at the end, most
often; an undone win, a late registration or a merge further back), and everything when a
starter changed: so what it keeps is always what `compute` gives from the history alone.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from railbird.competition import handicap
from railbird.competition.handicap import Chart
from railbird.competition.players import folded
from railbird.competition.ratings import RackResult, Rating, fit
from railbird.history.store import has_history
from railbird.rules import GAMES

from .players import BUSY_MS, has_players

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS rating_matches (
  seq INTEGER PRIMARY KEY, match INTEGER NOT NULL, end_ REAL NOT NULL,
  a INTEGER NOT NULL, b INTEGER NOT NULL, won_a INTEGER NOT NULL, won_b INTEGER NOT NULL,
  rating_a REAL NOT NULL, rating_b REAL NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS rating_matches_a ON rating_matches (a, seq)",
    "CREATE INDEX IF NOT EXISTS rating_matches_b ON rating_matches (b, seq)",
    """CREATE TABLE IF NOT EXISTS ratings (
  player INTEGER PRIMARY KEY, rating REAL NOT NULL, starter INTEGER NOT NULL,
  racks INTEGER NOT NULL, won INTEGER NOT NULL, established INTEGER NOT NULL
)""",
    "CREATE TABLE IF NOT EXISTS rating_marks (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)
OVER = ("won", "conceded", "abandoned")


@dataclass(frozen=True, slots=True)
class RatedMatch:
    """A match of the history as the fit counts it, and the two players' ratings after it."""

    match: int
    end: float
    a: int
    b: int
    won_a: int
    won_b: int
    rating_a: float = 0.0
    rating_b: float = 0.0

    @property
    def result(self) -> RackResult:
        return RackResult(self.a, self.b, self.won_a, self.won_b)

    def basis(self) -> tuple[int, float, int, int, int, int]:
        return (self.match, self.end, self.a, self.b, self.won_a, self.won_b)


@dataclass(frozen=True, slots=True)
class Kept:
    """What the fit gives (or the host kept): the current ratings and the rated matches."""

    ratings: dict[int, Rating]
    matches: list[RatedMatch]
    starters: dict[int, int | None]


def ensure(db: sqlite3.Connection) -> None:
    for sql in SCHEMA:
        db.execute(sql)


def name_index(db: sqlite3.Connection) -> dict[str, int | None]:
    """Folded name -> the listed player it stands for (None: two listed players share it).
    A merged duplicate's name stands for the player who stays (unless a listed player has
    that name too)."""
    if not has_players(db):
        return {}
    rows = db.execute("SELECT id, folded, merged_into FROM players ORDER BY id").fetchall()
    merged = {pid: into for pid, _, into in rows}

    def survivor(pid: int) -> int:
        seen = {pid}
        while merged.get(pid) is not None:
            pid = merged[pid]
            if pid in seen:
                break
            seen.add(pid)
        return pid

    out: dict[str, int | None] = {}
    for pid, name, into in rows:  # the listed players' names first: they win over aliases
        if into is None:
            out[name] = None if name in out else pid
    for pid, name, into in rows:
        if into is not None and name not in out:
            out[name] = survivor(pid)
    return out


def starters(db: sqlite3.Connection) -> dict[int, int | None]:
    """The listed players and the starter ratings the director gave them."""
    if not has_players(db):
        return {}
    rows = db.execute("SELECT id, rating FROM players WHERE merged_into IS NULL ORDER BY id")
    return dict(rows.fetchall())


def rated_matches(db: sqlite3.Connection) -> list[RatedMatch]:
    """Every match the fit counts, in the order they ended (module docstring)."""
    if not has_history(db):
        return []
    index = name_index(db)
    racks = {name for name, game in GAMES.items() if game.rack_scored}
    marks = ",".join("?" * len(OVER))
    rows = db.execute(
        "SELECT id, end_, game, player_a, player_b, record FROM history_matches"
        f" WHERE begun = 1 AND end_ IS NOT NULL AND result IN ({marks}) ORDER BY end_, id",
        OVER,
    )
    out = []
    for mid, end, game, name_a, name_b, record in rows:
        if game not in racks or not isinstance(name_a, str) or not isinstance(name_b, str):
            continue
        a, b = index.get(folded(name_a)), index.get(folded(name_b))
        if a is None or b is None or a == b:
            continue
        scores = json.loads(record).get("scores") or [0, 0]
        won_a, won_b = (max(0, int(s or 0)) for s in scores[:2])
        if won_a + won_b:
            out.append(RatedMatch(mid, float(end), a, b, won_a, won_b))
    return out


def compute(db: sqlite3.Connection, start: int = 0, kept: Sequence[RatedMatch] = ()) -> Kept:
    """The fit from the history alone: the current ratings, and each rated match with both
    players' ratings after it. `kept[:start]` (rated matches with their ratings, as kept)
    are taken as they are: `refresh` refits only from the first that differs."""
    first = starters(db)
    rated = rated_matches(db)
    done = list(kept[:start])
    results = [m.result for m in done]
    for m in rated[start:]:
        results.append(m.result)
        now = fit(results, first)
        done.append(_with(m, now))
    return Kept(fit(results, first), done, first)


def _with(m: RatedMatch, ratings: dict[int, Rating]) -> RatedMatch:
    return RatedMatch(m.match, m.end, m.a, m.b, m.won_a, m.won_b,
                      ratings[m.a].rating, ratings[m.b].rating)  # fmt: skip


def kept(db: sqlite3.Connection) -> Kept:
    """What the host kept (empty before the first refresh)."""
    if not _has_tables(db):
        return Kept({}, [], {})
    rows = db.execute(
        "SELECT match, end_, a, b, won_a, won_b, rating_a, rating_b FROM rating_matches"
        " ORDER BY seq"
    ).fetchall()
    matches = [RatedMatch(*r) for r in rows]
    ratings = {
        p: Rating(p, r, s, n, w, bool(e))
        for p, r, s, n, w, e in db.execute(
            "SELECT player, rating, starter, racks, won, established FROM ratings ORDER BY player"
        )
    }
    row = db.execute("SELECT value FROM rating_marks WHERE key = 'starters'").fetchone()
    first = {int(k): v for k, v in json.loads(row[0]).items()} if row else {}
    return Kept(ratings, matches, first)


def refresh(db: sqlite3.Connection) -> int:
    """Bring the kept ratings up to date with the history, in a transaction of its own (or
    a savepoint of the caller's); -> how many rated matches were refitted."""
    own = not db.in_transaction
    db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
    db.execute("BEGIN IMMEDIATE" if own else "SAVEPOINT ratings")
    try:
        ensure(db)
        before = kept(db)
        now_starters = starters(db)
        rated = rated_matches(db)
        same = 0
        if before.starters == now_starters:
            for old, new in zip(before.matches, rated, strict=False):
                if old.basis() != new.basis():
                    break
                same += 1
        changed = same != len(before.matches) or same != len(rated)
        if changed or before.starters != now_starters or (not before.ratings and now_starters):
            after = compute(db, same, before.matches)
            _store(db, after, same)
        else:
            after = before
    except BaseException:
        db.execute("ROLLBACK" if own else "ROLLBACK TO ratings")
        if not own:
            db.execute("RELEASE ratings")
        raise
    db.execute("COMMIT" if own else "RELEASE ratings")
    return len(after.matches) - same


def recompute(db: sqlite3.Connection) -> Kept:
    """Everything refitted from the history, in a transaction of its own (`railbird
    ratings recompute`)."""
    db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
    db.execute("BEGIN IMMEDIATE")
    try:
        ensure(db)
        after = compute(db)
        _store(db, after, 0)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return after


def _store(db: sqlite3.Connection, k: Kept, keep: int) -> None:
    db.execute("DELETE FROM rating_matches WHERE seq > ?", (keep,))
    db.executemany(
        "INSERT INTO rating_matches VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(i + 1, *m.basis(), m.rating_a, m.rating_b)
         for i, m in enumerate(k.matches) if i >= keep],
    )  # fmt: skip
    db.execute("DELETE FROM ratings")
    db.executemany(
        "INSERT INTO ratings VALUES (?, ?, ?, ?, ?, ?)",
        [(r.player, r.rating, r.starter, r.racks, r.won, int(r.established))
         for r in k.ratings.values()],
    )  # fmt: skip
    db.execute(
        "INSERT OR REPLACE INTO rating_marks VALUES ('starters', ?)",
        (json.dumps({str(p): v for p, v in sorted(k.starters.items())}),),
    )


def _has_tables(db: sqlite3.Connection) -> bool:
    row = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='ratings'")
    return row.fetchone() is not None


def rating_of(db: sqlite3.Connection, player: int) -> Rating | None:
    """The kept rating of a player (None: none kept yet)."""
    if not _has_tables(db):
        return None
    row = db.execute(
        "SELECT player, rating, starter, racks, won, established FROM ratings WHERE player = ?",
        (player,),
    ).fetchone()
    if row is None:
        return None
    p, r, s, n, w, e = row
    return Rating(int(p), float(r), int(s), int(n), int(w), bool(e))


def over_time(db: sqlite3.Connection, player: int, limit: int = 200) -> list[tuple[float, float]]:
    """(end of match, the player's rating after it) for the player's last `limit` rated
    matches, oldest first: the rating over time."""
    if not _has_tables(db):
        return []
    rows = db.execute(
        "SELECT end_, CASE WHEN a = ? THEN rating_a ELSE rating_b END FROM rating_matches"
        " WHERE a = ? OR b = ? ORDER BY seq DESC LIMIT ?",
        (player, player, player, int(limit)),
    ).fetchall()
    return [(float(e), float(r)) for e, r in reversed(rows)]


def chart(db: sqlite3.Connection) -> Chart | None:
    """The director's handicap chart (None: races are not handicapped)."""
    if not _has_tables(db):
        return None
    row = db.execute("SELECT value FROM rating_marks WHERE key = 'handicap'").fetchone()
    return None if row is None else handicap.parse(row[0])


def set_chart(db: sqlite3.Connection, new: Chart | None) -> None:
    db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
    db.execute("BEGIN IMMEDIATE")
    try:
        ensure(db)
        if new is None:
            db.execute("DELETE FROM rating_marks WHERE key = 'handicap'")
        else:
            db.execute("INSERT OR REPLACE INTO rating_marks VALUES ('handicap', ?)", (new.text(),))
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def races(db: sqlite3.Connection, a: int, b: int) -> tuple[int, int] | None:
    """The handicapped races of two rated players by the chart (None: no chart, or one of
    them not rated yet)."""
    c, ra, rb = chart(db), rating_of(db, a), rating_of(db, b)
    if c is None or ra is None or rb is None:
        return None
    return c.races(ra.rating, rb.rating)
