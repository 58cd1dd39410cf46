"""The history pages (docs/history.md): server-rendered HTML with SVG charts, read from the
history tables of the daemon's journal (railbird.history.store) over a read-only connection.

Routes (GET):
- /v/<venue>/history             the venue: matches, balls pocketed per day and per hour
- /v/<venue>/history/<player>    one player: the player's matches and balls
- /api/v/<venue>/history         the same as JSON (`?player=NAME` for one player)
- /api/v/<venue>/players         the venue's players, most recently seen first (a match
                                 form's known players: picked, not typed)
Each takes `from` and `to` (business days, YYYY-MM-DD; default the last 30 days) and
`table`. The queries read the journal, so server.py runs these routes off the event loop.
"""

from __future__ import annotations

import sqlite3
import time
from datetime import date, timedelta
from html import escape
from urllib.parse import quote, urlencode

from railbird.history import chart, export, period, store
from railbird.outputs.web.wire import HTML, Reply, Req, json_reply

DEFAULT_DAYS = 30
MAX_DAYS = 366  # a page of bars per day; longer periods: `railbird history`
MAX_LISTED = 200  # matches listed on a page, newest first


def wants(req: Req) -> bool:
    p = req.parts
    if len(p) in (3, 4) and p[0] == "v" and p[2] == "history":
        return True
    return len(p) == 4 and p[:2] == ["api", "v"] and p[3] in ("history", "players")


def route(web, req: Req) -> Reply | None:
    if not wants(req):
        return None
    if req.parts[0] == "api" and req.parts[3] == "players":
        return _players(web, req.parts[2])
    api = req.parts[0] == "api"
    venue = req.parts[2] if api else req.parts[1]
    player = req.query.get("player") if api else (req.parts[3] if len(req.parts) == 4 else None)
    if venue not in web.known_venues():
        return _error(web, api, 404, f"There is no venue {venue!r} on this host.")
    try:
        first, last = _period(req.query, web.venues.day_start_hour)
    except period.PeriodError as e:
        return _error(web, api, 400, str(e))
    table = req.query.get("table") or None
    path = getattr(web, "history_journal", None)
    if path is None:
        return _error(web, api, 404, "This server keeps no history (no journal).")
    try:
        data = _load(path, venue, table, player, first, last, web.venues.day_start_hour)
    except sqlite3.Error as e:
        return _error(web, api, 503, f"The history cannot be read now: {e}")
    if player is not None and not data["known_player"]:
        return _error(web, api, 404, f"No match of {player!r} at {venue}.")
    if api:
        return json_reply(200, _as_json(data))
    return Reply(200, _page(web, data).encode(), HTML)


def _players(web, venue: str) -> Reply:
    if venue not in web.known_venues():
        return json_reply(404, {"error": f"There is no venue {venue!r} on this host."})
    path = getattr(web, "history_journal", None)
    if path is None:  # no journal, no one known: the form just asks for names
        return json_reply(200, {"venue": venue, "players": []})
    try:
        db = store.open_readonly(path)
        try:
            names = store.players(db, venue)
        finally:
            db.close()
    except sqlite3.Error as e:
        return json_reply(503, {"error": f"The history cannot be read now: {e}"})
    return json_reply(200, {"venue": venue, "players": names})


def _period(query, day_start_hour: int) -> tuple[date, date]:
    today = date.fromisoformat(period.business_day(time.time(), day_start_hour))
    last = period.parse_day(query["to"], "to") if query.get("to") else today
    if query.get("from"):
        first = period.parse_day(query["from"], "from")
    else:
        first = last - timedelta(days=DEFAULT_DAYS - 1)
    if last < first:
        raise period.PeriodError(f"to {last} is before from {first}")
    if (last - first).days + 1 > MAX_DAYS:
        raise period.PeriodError(
            f"at most {MAX_DAYS} days on a page (use railbird history for longer periods)"
        )
    return first, last


def _load(path, venue, table, player, first, last, day_start_hour) -> dict:
    since, until = period.bounds(first, last, day_start_hour)
    db = store.open_readonly(path)
    try:
        filters = {"venue": venue, "table": table, "player": player, "since": since, "until": until}
        matches = store.matches(db, **filters)
        by_day = store.drop_counts(db, "day", day_start_hour, **filters)
        by_hour = store.drop_counts(db, "hour", day_start_hour, **filters)
        by_pocket = store.drop_counts(db, "pocket", day_start_hour, **filters)
        known = player is None or bool(store.matches(db, venue=venue, player=player))
        tables = store.tables(db, venue)
    finally:
        db.close()
    return {
        "venue": venue,
        "table": table,
        "player": player,
        "first": first,
        "last": last,
        "day_start_hour": day_start_hour,
        "matches": matches,
        "day": _sum(by_day),
        "hour": _sum(by_hour),
        "pocket": _sum_pockets(by_pocket),
        "known_player": known,
        "tables": tables,
    }


def _sum(rows) -> dict[str, int]:
    """Counts per key, every table together."""
    out: dict[str, int] = {}
    for _tbl, key, _pocket, n, _cue in rows:
        out[key] = out.get(key, 0) + n
    return out


def _sum_pockets(rows) -> dict[str, int]:
    out = dict.fromkeys(export.POCKETS, 0)
    for _tbl, _key, pocket, n, _cue in rows:
        out[pocket] = out.get(pocket, 0) + n
    return out


def _as_json(d: dict) -> dict:
    return {
        "venue": d["venue"],
        "player": d["player"],
        "table": d["table"],
        "from": d["first"].isoformat(),
        "to": d["last"].isoformat(),
        "day_start_hour": d["day_start_hour"],
        "matches": [export.match_json(m) for m in d["matches"]],
        "balls_per_day": {k: d["day"].get(k, 0) for k in period.days(d["first"], d["last"])},
        "balls_per_hour": {h: d["hour"].get(h, 0) for h in period.hours(d["day_start_hour"])},
        "balls_per_pocket": d["pocket"],
    }


# -- the page ------------------------------------------------------------------------------
def _error(web, api: bool, status: int, what: str) -> Reply:
    if api:
        return json_reply(status, {"error": what})
    body = _doc(
        web.title, "History", f'<main class="history"><p id="notfound">{escape(what)}</p></main>'
    )
    return Reply(status, body.encode(), HTML)


def _doc(title: str, what: str, body: str) -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(what)} · {escape(title)}</title>"
        '<link rel="stylesheet" href="/static/history.css"></head>'
        f'<body class="historypage">{body}</body></html>'
    )


def _href(venue: str, player: str | None = None, **query) -> str:
    path = f"/v/{quote(venue, safe='')}/history"
    if player is not None:
        path += "/" + quote(player, safe="")
    q = {k: v for k, v in query.items() if v}
    return path + ("?" + urlencode(q) if q else "")


def _page(web, d: dict) -> str:
    venue, player, table = d["venue"], d["player"], d["table"]
    first, last = d["first"], d["last"]
    who = player if player is not None else venue
    heading = f"{who}: history" if player is None else f"{player} at {venue}"
    q = {"table": table}
    nav = [
        f'<a href="/v/{quote(venue, safe="")}/">board</a>',
        f'<a href="{escape(_href(venue))}">venue history</a>' if player is not None else "",
    ]
    for days, label in ((1, "today"), (7, "7 days"), (30, "30 days"), (365, "year")):
        lo = (last - timedelta(days=days - 1)).isoformat()
        href = _href(venue, player, **{"from": lo, "to": last.isoformat()}, **q)
        nav.append(f'<a href="{escape(href)}">{label}</a>')
    days = period.days(first, last)
    per_day = [(k, k[8:] if len(days) > 1 else k, d["day"].get(k, 0)) for k in days]
    per_hour = [(h, h, d["hour"].get(h, 0)) for h in period.hours(d["day_start_hour"])]
    per_pocket = [(p, p, n) for p, n in d["pocket"].items()]
    total = sum(d["day"].values())
    span = first.isoformat() if first == last else f"{first.isoformat()} to {last.isoformat()}"
    whose = "" if player is None else f" ({player} at the table)"
    charts = "".join(
        f'<figure class="panel"><figcaption>{escape(cap)}</figcaption>'
        f"{chart.bars(items, cap, cid)}</figure>"
        for cid, cap, items in (
            ("chart-day", f"Pocket count per day{whose}", per_day),
            ("chart-hour", f"Pocket count per hour of the day{whose}", per_hour),
            ("chart-pocket", f"Pocket count per pocket{whose}", per_pocket),
        )
    )
    body = (
        f'<header><h1 id="heading">{escape(heading)}</h1>'
        f"<nav>{' '.join(n for n in nav if n)}</nav></header>"
        f'<main class="history">{_form(d)}'
        f'<p class="summary" id="summary">{escape(span)}{_table_note(table)}: '
        f'<b id="n-matches">{len(d["matches"])}</b> match{"es" if len(d["matches"]) != 1 else ""}'
        f', <b id="n-balls">{total}</b> ball{"s" if total != 1 else ""} in the pockets'
        f"{escape(whose)}"
        f"{_player_summary(d)}</p>"
        f'<div class="charts">{charts}</div>'
        f"<h2>Matches</h2>{_matches(d)}</main>"
    )
    return _doc(web.title, heading, body)


def _table_note(table) -> str:
    return "" if not table else f", table {escape(table)}"


def _form(d: dict) -> str:
    opts = ['<option value="">every table</option>'] + [
        f'<option value="{escape(t)}"{" selected" if t == d["table"] else ""}>{escape(t)}</option>'
        for t in d["tables"]
    ]
    return (
        '<form class="period" method="get">'
        f'<label>from <input type="date" name="from" value="{d["first"].isoformat()}"></label>'
        f'<label>to <input type="date" name="to" value="{d["last"].isoformat()}"></label>'
        f'<label>table <select name="table">{"".join(opts)}</select></label>'
        '<button type="submit">show</button></form>'
    )


def _player_summary(d: dict) -> str:
    player = d["player"]
    if player is None or not d["matches"]:
        return ""
    won = sum(1 for m in d["matches"] if m.get("winner") == player)
    high = 0
    for m in d["matches"]:
        if player in m["players"]:
            high = max(high, m["high_runs"][m["players"].index(player)])
    return f', won <b id="n-won">{won}</b>, best run <b id="best-run">{high}</b>'


def _matches(d: dict) -> str:
    ms = list(reversed(d["matches"]))  # newest first
    if not ms:
        return '<p class="dim" id="no-matches">No match in this period.</p>'
    items = [_match(d["venue"], m) for m in ms[:MAX_LISTED]]
    more = ""
    if len(ms) > MAX_LISTED:
        more = (
            f'<p class="dim">and {len(ms) - MAX_LISTED} earlier: railbird history '
            "prints them all.</p>"
        )
    return f'<ol class="matches" id="matches">{"".join(items)}</ol>{more}'


def _name(venue: str, m: dict, i: int) -> str:
    p = m["players"][i]
    cls = "p win" if m.get("winner") == p else "p"
    href = escape(_href(venue, p))
    return f'<a class="{cls}" href="{href}">{escape(p)}</a>'


def _match(venue: str, m: dict) -> str:
    row = export.match_row(m)
    result = m["result"]
    if result == "won":
        outcome = f"{escape(m['winner'])} wins"
    elif result == "conceded":
        outcome = f"conceded: {escape(m['winner'] or '')} wins"
    else:
        outcome = escape(result)
    goal = ""
    if m.get("goal"):
        goal = f" to {m['goal']}" if m.get("game") == "14.1" else f" race to {m['goal']}"
    stats = (
        f"racks {row['racks']} · innings {row['innings']} · high run "
        f"{row['high_run_a']}/{row['high_run_b']} · fouls {row['fouls_a']}/{row['fouls_b']}"
        f" · balls {row['balls_a']}/{row['balls_b']}"
    )
    return (
        f'<li class="match" data-table="{escape(m["table"])}" data-result="{escape(result)}">'
        f'<div class="when">{escape(period.clock(m.get("start")))} · table '
        f"{escape(m['table'])} · {escape(m.get('game') or '')}{escape(goal)}</div>"
        f'<div class="line">{_name(venue, m, 0)} <span class="sc">{row["score_a"]}</span>'
        f' &ndash; <span class="sc">{row["score_b"]}</span> {_name(venue, m, 1)}'
        f' <span class="outcome">{outcome}</span></div>'
        f'<div class="stats dim">{stats}</div></li>'
    )
