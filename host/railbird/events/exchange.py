"""The stored events out of the journal as JSON or CSV, and into another journal from the
JSON (docs/events.md, "Export and import"; players and results: railbird.registry.exchange).

Out, JSON: every stored event, oldest first: its id, venue, name, whether it is closed,
whether matches are called by themselves (`auto`), the matches started at their tables
(`began`), and the tournament as its log rebuilds it (`railbird.competition.jsonform.dump`:
settings, entrants, the draw, every start and result), so it can be loaded back.
Out, CSV: a report, one row per match (event, match, round, both seats' names and registry
ids, state, winner, score, table), every cell through the history's one neutraliser
(`railbird.history.export.csv_cell`). A CSV is not importable: it holds what the matches
show, not the draw's settings and order of changes an event is rebuilt from.

In (JSON only): every event is checked through the core (`jsonform.load`, which replays its
log through `start` and `record`, then the store's own `replay` of the changes it will
store), so a bracket the rules refuse is refused with the reason. An entrant is the target
registry's player with the same id and name, else the one listed player of that name (case
and accents ignored), else a new player of that name; two players of that name and none
with the file's id is refused (rename one first). An event whose id is in the journal
already is skipped when it is the same event (venue, tournament, closed or not), refused
as a clash otherwise; an open event is refused where its venue has another open one. All
in one transaction: any refused event and nothing is imported.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from railbird.competition import jsonform
from railbird.competition.errors import CompetitionError, InvalidName
from railbird.competition.players import clean_name, folded
from railbird.competition.spec import Entrant
from railbird.competition.tournament import Recorded, Started, Tournament
from railbird.history.export import to_csv
from railbird.registry import players as registry

from .store import (
    AutoCall,
    Began,
    Called,
    Change,
    EventStore,
    Finished,
    StoreError,
    ensure,
    has_tournaments,
    op_json,
    replay,
)

FORMAT = 1  # the file's `format`; another is refused
MATCH_COLUMNS = ("event", "event_name", "match", "round", "player_a", "id_a", "player_b",
                 "id_b", "state", "winner", "score_a", "score_b", "table")  # fmt: skip
NOT_IMPORTABLE = (
    "a tournaments CSV is a report of the matches, not the event (its settings, draw and "
    "order of changes): import the JSON (`railbird export tournaments --format json`)"
)
Row = dict[str, Any]


@dataclass(frozen=True, slots=True)
class EventError:
    event: int  # 1: the file's first event
    error: str


@dataclass
class Imported:
    added: int = 0
    skipped: int = 0  # the same event was there already
    players_added: int = 0
    errors: list[EventError] = field(default_factory=list)


# -- out ------------------------------------------------------------------------------------
def tournaments(db: sqlite3.Connection) -> list[Row]:
    """Every stored event, oldest first; a stored event that does not replay is a
    `CompetitionError` with the reason (nothing half-exported)."""
    if not has_tournaments(db):
        return []
    store = EventStore(db)
    out = []
    for eid, venue, created, closed in db.execute(
        "SELECT id, venue, created, closed FROM tournaments ORDER BY id"
    ).fetchall():
        ev = store.load(eid)
        out.append(
            {
                "id": eid,
                "venue": venue,
                "name": ev.tournament.spec.name,
                "created": created,
                "closed": closed is not None,
                "closed_at": closed,
                "auto": ev.auto,
                "began": sorted(ev.began),
                "tournament": jsonform.dump(ev.tournament),
            }
        )
    return out


def render(rows: list[Row], fmt: str) -> str:
    if fmt == "json":
        doc = {"format": FORMAT, "tournaments": rows}
        return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    return to_csv(MATCH_COLUMNS, [m for r in rows for m in _match_rows(r)])


def _match_rows(ev: Row) -> list[Row]:
    view = jsonform.view(jsonform.load(ev["tournament"]))
    out = []
    for m in view["matches"]:
        seats, score, winner = m["seats"], m["score"], m["winner"]
        out.append(
            {
                "event": ev["id"],
                "event_name": ev["name"],
                "match": m["id"],
                "round": m["round"],
                "player_a": seats[0]["name"],
                "id_a": seats[0]["player"],
                "player_b": seats[1]["name"],
                "id_b": seats[1]["player"],
                "state": m["state"],
                "winner": None if winner is None else seats[winner]["name"],
                "score_a": None if score is None else score[0],
                "score_b": None if score is None else score[1],
                "table": m["table"],
            }
        )
    return out


# -- in -------------------------------------------------------------------------------------
def read_tournaments(text: str) -> list[Row]:
    """The events of a tournaments file (each checked on import); a file that is not one
    at all is an `InvalidName`."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise InvalidName(f"not JSON: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InvalidName(f'not a tournaments file of format {FORMAT} ({{"format": 1, ...}})')
    rows = doc.get("tournaments")
    if not isinstance(rows, list):
        raise InvalidName('no "tournaments" list')
    return [r if isinstance(r, dict) else {"_bad": "an event is a JSON object"} for r in rows]


def import_tournaments(
    db: sqlite3.Connection,
    events: Iterable[Row],
    write: bool = True,
    clock: Callable[[], float] = time.time,
) -> Imported:
    """Every event checked and stored in one transaction; any error (or `write=False`, a
    check): none stored, the counts say what would have been. `db` in autocommit mode."""
    res = Imported()
    db.execute("BEGIN IMMEDIATE")
    try:
        ensure(db)
        registry.ensure(db)
        for n, ev in enumerate(events, 1):
            try:
                _one(db, ev, res, clock())
            except CompetitionError as e:
                label = ev.get("id") if isinstance(ev, dict) else None
                what = f"event {label}: {e}" if type(label) is int else str(e)
                res.errors.append(EventError(n, what))
    except BaseException:
        db.execute("ROLLBACK")
        raise
    if res.errors:
        db.execute("ROLLBACK")
        res.added = res.skipped = res.players_added = 0
    elif not write:
        db.execute("ROLLBACK")
    else:
        db.execute("COMMIT")
    return res


def _field(ev: Row, key: str, kind: type, what: str, default: object = None) -> Any:
    v = ev.get(key, default)
    if type(v) is not kind:  # bool is not an int here, nor an int a bool
        raise InvalidName(what)
    return v


def _one(db: sqlite3.Connection, ev: Row, res: Imported, now: float) -> None:
    if "_bad" in ev:
        raise InvalidName(ev["_bad"])
    eid = _field(ev, "id", int, "an event's id is a whole number")
    if eid < 1:
        raise InvalidName("id: an event's id is a whole number from 1")
    venue = _field(ev, "venue", str, "a venue is named by text").strip()
    if not venue:
        raise InvalidName("venue: a venue is named by text")
    closed = _field(ev, "closed", bool, "closed is true or false")
    auto = _field(ev, "auto", bool, "auto is true or false", True)
    began = _field(ev, "began", list, "began is a list of match ids", [])
    if not all(isinstance(m, str) for m in began):
        raise InvalidName("began: a list of match ids")
    created = ev.get("created", now)
    closed_at = ev.get("closed_at") if closed else None
    for key, v in (("created", created), ("closed_at", closed_at)):
        if v is not None and (type(v) not in (int, float)):
            raise InvalidName(f"{key}: a time in seconds since 1970")
    t = jsonform.load(ev.get("tournament"))  # the core replays the log: the rules check it
    t, new_players = _in_registry(db, t)
    changes = _changes(t, set(began), auto)
    drawn = jsonform.dump(t) | {"log": []}
    if replay(eid, drawn, changes, closed).tournament != t:  # the store could not hold it
        raise StoreError("the event's log cannot be stored as the event service's changes")
    if _there(db, eid, venue, t, closed, auto, set(began)):
        res.skipped += 1
        return
    if not closed:
        other = db.execute(
            "SELECT id FROM tournaments WHERE venue = ? AND closed IS NULL", (venue,)
        ).fetchone()
        if other is not None:
            raise StoreError(
                f"venue {venue!r} has an open event ({other[0]}) here: close it first, "
                "or import this one closed"
            )
    db.execute(
        "INSERT INTO tournaments (id, venue, doc, created, closed) VALUES (?, ?, ?, ?, ?)",
        (
            eid,
            venue,
            json.dumps(drawn, sort_keys=True),
            created,
            (closed_at or now) if closed else None,
        ),
    )
    db.executemany(
        "INSERT INTO tournament_log (event, seq, op, wall) VALUES (?, ?, ?, ?)",
        [(eid, seq, json.dumps(op_json(c)), now) for seq, c in enumerate(changes, 1)],
    )
    res.added += 1
    res.players_added += new_players


def _there(
    db: sqlite3.Connection, eid: int, venue: str, t: Tournament, closed: bool, auto: bool,
    began: set[str],
) -> bool:  # fmt: skip
    """True: this event is in the journal already; a different one of its id: a clash."""
    row = db.execute("SELECT venue FROM tournaments WHERE id = ?", (eid,)).fetchone()
    if row is None:
        return False
    have = EventStore(db).load(eid)
    same = (row[0], have.tournament, have.closed, have.auto, set(have.began)) == (
        venue, t, closed, auto, began)  # fmt: skip
    if not same:
        raise StoreError(
            f"this journal has another event {eid} ({have.tournament.spec.name!r} at "
            f"{row[0]!r}): not replaced"
        )
    return True


def _in_registry(db: sqlite3.Connection, t: Tournament) -> tuple[Tournament, int]:
    """The tournament with each entrant as the target registry's player (found or added),
    and how many were added."""
    reg = registry.PlayerRegistry(db)
    added = 0
    entrants = []
    for e in t.entrants:
        name = clean_name(e.name)
        pid = _same(reg, e.player, name)
        if pid is None:
            same = reg.named(name)
            if len(same) > 1:
                raise registry.RegistryError(
                    f"{len(same)} players are named {name!r} in this registry: rename one first"
                )
            if same:
                pid = same[0].id
            else:
                pid = reg.add(name).id
                added += 1
        entrants.append(Entrant(pid, e.name))
    doc = jsonform.dump(t)
    doc["entrants"] = [{"player": e.player, "name": e.name} for e in entrants]
    return jsonform.load(doc), added  # again through the core: two entrants one player


def _same(reg: registry.PlayerRegistry, pid: int, name: str) -> int | None:
    """The registry's player of this id, when it is the same person by name."""
    try:
        p = reg.resolve(pid)
    except registry.RegistryError:
        return None
    return p.id if folded(p.name) == folded(name) else None


def _changes(t: Tournament, began: set[str], auto: bool) -> list[Change]:
    """The event service's changes that rebuild `t` (railbird.events.store)."""
    started = {op.match for op in t.log if isinstance(op, Started)}
    if began - started:
        raise StoreError(f"began: {', '.join(sorted(began - started))} never started")
    out: list[Change] = []
    for op in t.log:
        match op:
            case Started(match=m, table=table):
                if table is None:
                    raise StoreError(f"match {m} started at no table: the service calls to one")
                out.append(Called(m, table))
                if m in began:
                    out.append(Began(m))
            case Recorded(match=m, result=r):
                out.append(Finished(m, r.winner, r.score, "table" if r.score else "director"))
    if not auto:
        out.append(AutoCall(False))
    return out
