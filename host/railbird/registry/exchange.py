"""Players and results out of the journal and players into it, as JSON and CSV
(docs/events.md, "Export and import").

Out: the players (name, nickname, starter and kept rating, external ids) and the results
(every rated match: both players with their registry and external ids, the racks each
won), so a league or a rating service can take them by its own numbers. The CSV has one
column per external id system (`id.fargo`, `a.id.fargo`); its cells go through the
history's one neutraliser (`railbird.history.export.csv_cell`: text beginning with = + -
@ TAB or CR is written with a leading apostrophe, so a spreadsheet shows it and runs
nothing), and `csv_value` takes the apostrophe off again when it is read back.

In: players only (results come from the tables' own journal). Every row is checked and
applied in one transaction: a row's player is the registered one with the same external
id (any system), else the one listed player of that name (case and accents ignored), else
a new one; a matched player takes the row's nickname, starter and ids where the row has
them. Any bad row (a name the rules refuse, a rating out of range, an id that belongs to
another player, a name two registered players share) is reported with its
row number, and then nothing at all is imported: a file is fixed and imported again whole,
never half in (a second import of the same file changes nothing). Two rows of one new
name are one player: the second updates the first.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from railbird.competition.errors import CompetitionError, InvalidName
from railbird.competition.players import Player, clean_name
from railbird.history.export import csv_value, to_csv
from railbird.history.period import iso

from . import ratings
from .players import PlayerRegistry, RegistryError, ensure

FORMAT = 1  # the JSON's `format`; another is refused
PLAYER_COLUMNS = ("id", "name", "nickname", "starter", "rating", "racks", "established")
RESULT_COLUMNS = ("match", "end", "table", "game", "player_a", "player_b", "id_a", "id_b",
                  "racks_a", "racks_b")  # fmt: skip
Row = dict[str, Any]


@dataclass(frozen=True, slots=True)
class RowError:
    row: int  # 1: the first player (CSV: the line after the header)
    error: str


@dataclass
class Imported:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    errors: list[RowError] = field(default_factory=list)


# -- out ---------------------------------------------------------------------------------
def players(db: sqlite3.Connection) -> list[Row]:
    reg = PlayerRegistry(db)
    kept = ratings.kept(db).ratings
    out = []
    for p in reg.listed():
        r = kept.get(p.id)
        out.append(
            {
                "id": p.id,
                "name": p.name,
                "nickname": p.nickname,
                "starter": p.rating,
                "rating": None if r is None else r.rating,
                "racks": 0 if r is None else r.racks,
                "established": False if r is None else r.established,
                "external": dict(p.external),
                "aliases": reg.aliases(p.id),
            }
        )
    return out


def results(db: sqlite3.Connection) -> list[Row]:
    """Every rated match (railbird.registry.ratings), oldest first."""
    reg = PlayerRegistry(db)
    ext = {p.id: dict(p.external) for p in reg.listed()}
    where: dict[int, tuple[str, str]] = {}
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'history_matches'").fetchone():
        where = {
            mid: (t, g) for mid, t, g in db.execute("SELECT id, tbl, game FROM history_matches")
        }
    out = []
    for m in ratings.rated_matches(db):
        table, game = where.get(m.match, (None, None))
        out.append(
            {
                "match": m.match,
                "end": iso(m.end),
                "table": table,
                "game": game,
                "player_a": reg.get(m.a).name,
                "player_b": reg.get(m.b).name,
                "id_a": m.a,
                "id_b": m.b,
                "external_a": ext.get(m.a, {}),
                "external_b": ext.get(m.b, {}),
                "racks_a": m.won_a,
                "racks_b": m.won_b,
            }
        )
    return out


def render(kind: str, rows: list[Row], fmt: str) -> str:
    """`kind`: "players" or "results"; `fmt`: "json" or "csv"."""
    if fmt == "json":
        return json.dumps({"format": FORMAT, kind: rows}, indent=1, ensure_ascii=False) + "\n"
    if kind == "players":
        systems = sorted({s for r in rows for s in r["external"]})
        cols = [*PLAYER_COLUMNS, *(f"id.{s}" for s in systems)]
        flat = [
            r | {"established": "yes" if r["established"] else "no"}
            | {f"id.{s}": v for s, v in r["external"].items()}
            for r in rows
        ]  # fmt: skip
        return to_csv(cols, flat)
    systems = sorted({s for r in rows for k in ("external_a", "external_b") for s in r[k]})
    cols = [*RESULT_COLUMNS]
    cols += [f"{side}.id.{s}" for side in ("a", "b") for s in systems]
    flat = [
        r | {f"a.id.{s}": v for s, v in r["external_a"].items()}
        | {f"b.id.{s}": v for s, v in r["external_b"].items()}
        for r in rows
    ]  # fmt: skip
    return to_csv(cols, flat)


# -- in ----------------------------------------------------------------------------------
def read_players(text: str, fmt: str) -> list[Row]:
    """The rows of a players file: each {"name", "nickname", "starter", "external"} as
    given (checked on import); a file that is not one at all is an `InvalidName`."""
    if fmt == "json":
        try:
            doc = json.loads(text)
        except ValueError as e:
            raise InvalidName(f"not JSON: {e}") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise InvalidName(f'not a players file of format {FORMAT} ({{"format": 1, ...}})')
        rows = doc.get("players")
        if not isinstance(rows, list):
            raise InvalidName('no "players" list')
        return [r if isinstance(r, dict) else {"_bad": "a player is a JSON object"} for r in rows]
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames is None or "name" not in reader.fieldnames:
        raise InvalidName("a players CSV has a header line with a `name` column")
    out = []
    for line in reader:
        if None in line:  # more cells than the header names
            out.append({"_bad": "more cells than the header has columns"})
            continue
        cells = {k: csv_value(v) for k, v in line.items()}
        row: Row = {}
        external = {k[3:]: v for k, v in cells.items() if k.startswith("id.") and v}
        starter = cells.get("starter") or None
        row["name"] = cells.get("name")
        row["nickname"] = cells.get("nickname") or None
        row["starter"] = starter
        row["external"] = external
        out.append(row)
    return out


def import_players(db: sqlite3.Connection, rows: Iterable[Row], write: bool = True) -> Imported:
    """Every row checked and applied in one transaction; any error (or `write=False`, a
    check): none applied, the counts say what would have been."""
    reg = PlayerRegistry(db)
    res = Imported()
    db.execute("BEGIN IMMEDIATE")
    try:
        ensure(db)  # a journal with no player yet
        for n, row in enumerate(rows, 1):
            try:
                _one(reg, row, res)
            except CompetitionError as e:
                res.errors.append(RowError(n, str(e)))
    except BaseException:
        db.execute("ROLLBACK")
        raise
    if res.errors:
        db.execute("ROLLBACK")
        res.added = res.updated = res.unchanged = 0
    elif not write:
        db.execute("ROLLBACK")
    else:
        db.execute("COMMIT")
    return res


def _starter(value: object) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            raise InvalidName(
                f"a rating is a whole number from 0 to 9999 (got {value!r})"
            ) from None
    if type(value) is not int:
        raise InvalidName(f"a rating is a whole number from 0 to 9999 (got {value!r})")
    return value


def _one(reg: PlayerRegistry, row: Row, res: Imported) -> None:
    if "_bad" in row:
        raise InvalidName(row["_bad"])
    name = row.get("name")
    nickname = row.get("nickname") or None
    starter = _starter(row.get("starter"))
    external = row.get("external") or {}
    if not isinstance(external, dict):
        raise InvalidName("external ids are an object of system: id")
    ids: list[tuple[str, object]] = [(str(sy), v) for sy, v in sorted(external.items())]
    found = _match(reg, name, ids)
    if found is None:
        reg.add(clean_name(name), nickname, starter, [(sy, str(v)) for sy, v in ids])
        res.added += 1
        return
    changes: Row = {}
    if nickname is not None and nickname != found.nickname:
        changes["nickname"] = nickname
    if starter is not None and starter != found.rating:
        changes["rating"] = starter
    new_ids = [(sy, str(v)) for sy, v in ids if dict(found.external).get(sy) != v]
    if not changes and not new_ids:
        res.unchanged += 1
        return
    reg.edit(found.id, external=new_ids, **changes)
    res.updated += 1


def _match(reg: PlayerRegistry, name: object, ids: list[tuple[str, object]]) -> Player | None:
    """The registered player a row stands for, or None: a new one."""
    db = reg.db
    for system, value in ids:
        hit = db.execute(
            "SELECT player FROM player_ids WHERE system = ? AND value = ?",
            (system, value.strip() if isinstance(value, str) else value),
        ).fetchone()
        if hit is not None:
            return reg.resolve(hit[0])
    same = reg.named(clean_name(name))
    if len(same) > 1:
        raise RegistryError(
            f"{same[0].name} is the name of {len(same)} players: give an external id to say which"
        )
    return same[0] if same else None
