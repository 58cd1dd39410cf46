"""The history for people and spreadsheets: matches and pocket counts as a text table, CSV
(one header line, RFC 4180 quoting, `\\n` line ends) and JSON.

Match columns (per player: `_a` the first player named, `_b` the second): venue, table,
game, goal (race to, or 14.1 target), player_a, player_b, start, end (local time with its
UTC offset, to the second; end empty while in progress), result (won, conceded, abandoned,
in progress), winner, score_a/_b (racks won, 14.1 points), racks, innings, high_run_a/_b,
fouls_a/_b, balls_a/_b (railbird.history.fold).

Pocket counts: per table and business day (`day`), local hour of the day (`hour`) or for
the whole period (`pocket`), with each pocket's balls, the cue ball's drops (`cue`, also
counted in `total`) and the total.
"""

from __future__ import annotations

import csv
import io
import json
import re

from railbird.history.period import clock, iso
from railbird.tableorder import natural_key
from rbproto.codec import POCKETS

MATCH_COLUMNS = (
    "venue",
    "table",
    "game",
    "goal",
    "player_a",
    "player_b",
    "start",
    "end",
    "result",
    "winner",
    "score_a",
    "score_b",
    "racks",
    "innings",
    "high_run_a",
    "high_run_b",
    "fouls_a",
    "fouls_b",
    "balls_a",
    "balls_b",
)
PER_PLAYER = (("scores", "score"), ("high_runs", "high_run"), ("fouls", "fouls"))
PER_PLAYER += (("balls", "balls"),)


def _two(v) -> list:
    v = list(v or ())
    return [*v, None, None][:2]


def match_row(m: dict) -> dict:
    """A match as one CSV row (MATCH_COLUMNS)."""
    a, b = _two(m.get("players"))
    row = {
        "venue": m.get("venue"),
        "table": m.get("table"),
        "game": m.get("game"),
        "goal": m.get("goal"),
        "player_a": a,
        "player_b": b,
        "start": iso(m.get("start")),
        "end": iso(m.get("end")),
        "result": m.get("result"),
        "winner": m.get("winner"),
        "racks": m.get("racks"),
        "innings": m.get("innings"),
    }
    for key, col in PER_PLAYER:
        row[f"{col}_a"], row[f"{col}_b"] = _two(m.get(key))
    return row


def match_json(m: dict) -> dict:
    """A match for JSON: times in ISO 8601, per-player values by name (REFEREE.md style)."""
    players = _two(m.get("players"))
    out = {
        "venue": m.get("venue"),
        "table": m.get("table"),
        "game": m.get("game"),
        "goal": m.get("goal"),
        "players": [p for p in players if p is not None],
        "start": iso(m.get("start")) or None,
        "end": iso(m.get("end")) or None,
        "result": m.get("result"),
        "winner": m.get("winner"),
        "racks": m.get("racks"),
        "innings": m.get("innings"),
    }
    for key in ("scores", "high_runs", "fouls", "balls", "cue"):
        vals = _two(m.get(key))
        out[key] = {p: v for p, v in zip(players, vals, strict=True) if p is not None}
    return out


def counts_rows(raw: list[tuple], by: str) -> list[dict]:
    """`store.drop_counts` rows -> one dict per (table, key): total, cue and per pocket."""
    rows: dict[tuple, dict] = {}
    for tbl, key, pocket, n, cue in raw:
        r = rows.get((tbl, key))
        if r is None:
            r = rows[(tbl, key)] = {"table": tbl, "total": 0, "cue": 0}
            if by != "pocket":
                r[by] = key
            r["pockets"] = dict.fromkeys(POCKETS, 0)
        r["total"] += n
        r["cue"] += cue or 0
        name = pocket if pocket in POCKETS else "other"
        r["pockets"][name] = r["pockets"].get(name, 0) + n
    return [rows[k] for k in sorted(rows, key=lambda k: (natural_key(k[0]), k[1]))]


def counts_columns(by: str, rows: list[dict]) -> list[str]:
    extra = ["other"] if any("other" in r["pockets"] for r in rows) else []
    head = ["table"] + ([by] if by != "pocket" else [])
    return head + list(POCKETS) + extra + ["cue", "total"]


def _flat(r: dict) -> dict:
    return {k: v for k, v in r.items() if k != "pockets"} | r["pockets"]


# A spreadsheet takes a cell beginning with one of these as a formula (OWASP "CSV
# injection"): a player named `=HYPERLINK(...)` would be a live link in the league
# director's sheet. Such a text cell gets a leading apostrophe, which the spreadsheet shows
# as text and hides. Numbers are written as they are: -19 is a 14.1 score, not a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(v) -> object:
    if isinstance(v, str) and v.startswith(FORMULA_STARTS):
        return "'" + v
    return "" if v is None else v


def csv_value(cell: str | None) -> str | None:
    """A cell as `csv_cell` wrote it, read back: the apostrophe before a formula's first
    character taken off (an import of an export gets the names that were exported)."""
    if cell is not None and cell.startswith("'") and cell[1:].startswith(FORMULA_STARTS):
        return cell[1:]
    return cell


def to_csv(columns, rows) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: csv_cell(r.get(k)) for k in columns})
    return buf.getvalue()


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """`text` with every control character written as an escape (`\\x1b`), so a name
    cannot move the cursor, recolour or clear the terminal it is printed on."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def to_table(columns, rows) -> str:
    """Aligned columns for a terminal, control characters escaped."""
    cells = [[str(c) for c in columns]]
    for r in rows:
        cells.append(["" if r.get(c) is None else terminal_safe(str(r.get(c))) for c in columns])
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
             for row in cells]  # fmt: skip
    return "\n".join(lines) + "\n"


TABLE_COLUMNS = ("start", "table", "game", "players", "result", "score", "racks", "innings")
TABLE_COLUMNS += ("high runs", "fouls", "balls")


def _pair(v) -> str:
    a, b = _two(v)
    return f"{'' if a is None else a}-{'' if b is None else b}"


def match_line(m: dict) -> dict:
    a, b = _two(m.get("players"))
    result = m.get("result") or ""
    if m.get("winner"):
        result += f" ({m['winner']})"
    return {
        "start": clock(m.get("start")),
        "table": m.get("table"),
        "game": m.get("game"),
        "players": f"{a} v {b}",
        "result": result,
        "score": _pair(m.get("scores")),
        "racks": m.get("racks"),
        "innings": m.get("innings"),
        "high runs": _pair(m.get("high_runs")),
        "fouls": _pair(m.get("fouls")),
        "balls": _pair(m.get("balls")),
    }


def render_matches(matches: list[dict], fmt: str, meta: dict | None = None) -> str:
    if fmt == "csv":
        return to_csv(MATCH_COLUMNS, [match_row(m) for m in matches])
    if fmt == "json":
        doc = dict(meta or {}, matches=[match_json(m) for m in matches])
        return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    if not matches:
        return "no matches\n"
    return to_table(TABLE_COLUMNS, [match_line(m) for m in matches])


def render_counts(rows: list[dict], by: str, fmt: str, meta: dict | None = None) -> str:
    if fmt == "json":
        doc = dict(meta or {}, counts=by, rows=rows)
        return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    cols = counts_columns(by, rows)
    flat = [_flat(r) for r in rows]
    if fmt == "csv":
        return to_csv(cols, flat)
    if not rows:
        return "no balls dropped\n"
    return to_table(cols, flat)
