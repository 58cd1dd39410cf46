"""The history pages (docs/history.md): server-rendered HTML with SVG charts, read from the
history tables of the daemon's journal (railbird.history.store) over a read-only connection.

Routes (GET):
- /v/<venue>/history             the venue: matches, balls pocketed per day and per hour
- /v/<venue>/history/<player>    one player: the player's matches and balls
- /api/v/<venue>/history         the same as JSON (`?player=NAME` for one player)
- /api/v/<venue>/players         the venue's players, most recently seen first (a match
                                 form's known players: picked, not typed)
Each takes `from` and `to` (business days, YYYY-MM-DD; default the last 30 days), `table`
and `cursor` (the `next` of the page before). A page is at most `paging.PAGE_BYTES` (1 MiB)
and PAGE_MATCHES (JSON, oldest first) or MAX_LISTED (HTML, newest first) matches; its
`next` (JSON) or its "Earlier matches" link (HTML) carries the cursor of the following
page. The pocket counts and the summary come with the first page only: a page found by its
cursor reads only its matches (docs/history.md "History pages"). The queries read the
journal, so server.py runs these routes off the event loop, in processes of their own
(historypool.py): a route gets the server's `View`, plain values, not the server.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from datetime import date, timedelta
from html import escape
from urllib.parse import quote, urlencode

from railbird.history import chart, export, paging, period, store
from railbird.outputs.web.wire import HTML, Reply, Req, json_reply

DEFAULT_DAYS = 30
MAX_DAYS = 366  # a page of bars per day; longer periods: `railbird history`
MAX_LISTED = 200  # matches listed on an HTML page, newest first
PAGE_MATCHES = 500  # matches on a JSON page, oldest first (some 230 KB)
ITEMS = "\0matches\0"  # where a page's list goes, once the rest of the page is measured


@dataclass(frozen=True)
class View:
    """What the history routes need of the web server, as values a worker process can take."""

    venues: tuple[str, ...]  # the venues this host knows
    day_start_hour: int
    title: str
    journal: str | None  # the daemon's journal; None: no history


def wants(req: Req) -> bool:
    p = req.parts
    if len(p) in (3, 4) and p[0] == "v" and p[2] == "history":
        return True
    return len(p) == 4 and p[:2] == ["api", "v"] and p[3] in ("history", "players")


def route(web: View, req: Req) -> Reply | None:
    if not wants(req):
        return None
    if req.parts[0] == "api" and req.parts[3] == "players":
        return _players(web, req.parts[2])
    api = req.parts[0] == "api"
    venue = req.parts[2] if api else req.parts[1]
    player = req.query.get("player") if api else (req.parts[3] if len(req.parts) == 4 else None)
    if venue not in web.venues:
        return _error(web, api, 404, f"There is no venue {venue!r} on this host.")
    try:
        first, last = _period(req.query, web.day_start_hour)
        after = paging.decode(req.query["cursor"]) if req.query.get("cursor") else None
    except (period.PeriodError, paging.CursorError) as e:
        return _error(web, api, 400, str(e))
    table = req.query.get("table") or None
    path = web.journal
    if path is None:
        return _error(web, api, 404, "This server keeps no history (no journal).")
    ask = _Ask(venue, table, player, first, last, web.day_start_hour, after, api)
    try:
        data = _load(path, ask)
    except sqlite3.Error as e:
        return _error(web, api, 503, f"The history cannot be read now: {e}")
    if player is not None and not data["known_player"]:
        return _error(web, api, 404, f"No match of {player!r} at {venue}.")
    if api:
        return _json_page(data)
    return Reply(200, _page(web, data).encode(), HTML)


def _players(web: View, venue: str) -> Reply:
    if venue not in web.venues:
        return json_reply(404, {"error": f"There is no venue {venue!r} on this host."})
    path = web.journal
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


@dataclass(frozen=True)
class _Ask:
    """What a history request asks for: the period's filters and the page."""

    venue: str
    table: str | None
    player: str | None
    first: date
    last: date
    day_start_hour: int
    after: paging.PageKey | None  # the cursor's key: a page after the first
    api: bool  # the JSON (oldest first), else the HTML page (newest first)


def _load(path, ask: _Ask) -> dict:
    since, until = period.bounds(ask.first, ask.last, ask.day_start_hour)
    filters = {
        "venue": ask.venue,
        "table": ask.table,
        "player": ask.player,
        "since": since,
        "until": until,
    }
    limit = PAGE_MATCHES if ask.api else MAX_LISTED
    db = store.open_readonly(path)
    try:
        known = ask.player is None or store.has_player(db, ask.venue, ask.player)
        # one more than a page: whether there is a next one
        rows = store.matches_page(
            db, **filters, after=ask.after, limit=limit + 1, newest_first=not ask.api
        )
        first_page = ask.after is None
        counts = {}
        if first_page:  # the counts and the summary: the first page's, read once a period
            days, hours, pockets = store.by_local_time(
                store.drop_buckets(db, **filters), ask.day_start_hour
            )
            counts = {
                "day": days,
                "hour": hours,
                "pocket": dict(dict.fromkeys(export.POCKETS, 0), **pockets),
                "summary": store.summary(db, **filters),
            }
        tables = store.tables(db, ask.venue) if not ask.api else []
    finally:
        db.close()
    return {
        "venue": ask.venue,
        "table": ask.table,
        "player": ask.player,
        "first": ask.first,
        "last": ask.last,
        "day_start_hour": ask.day_start_hour,
        "rows": rows,
        "limit": limit,
        "first_page": first_page,
        "counts": counts,
        "known_player": known,
        "tables": tables,
    }


def _json_page(d: dict) -> Reply:
    """The JSON page: as many of its matches as `paging.PAGE_BYTES` holds, and `next`."""
    doc: dict = {
        "venue": d["venue"],
        "player": d["player"],
        "table": d["table"],
        "from": d["first"].isoformat(),
        "to": d["last"].isoformat(),
        "day_start_hour": d["day_start_hour"],
    }
    if d["first_page"]:
        c = d["counts"]
        doc["balls_per_day"] = {k: c["day"].get(k, 0) for k in period.days(d["first"], d["last"])}
        doc["balls_per_hour"] = {h: c["hour"].get(h, 0) for h in period.hours(d["day_start_hour"])}
        doc["balls_per_pocket"] = c["pocket"]
        doc["matches_total"] = c["summary"][0]
    doc["matches"] = []
    doc["next"] = None
    # what the rest takes, a cursor at its longest included; each match and its ", "
    budget = paging.PAGE_BYTES - len(json.dumps(doc)) - paging.MAX_CURSOR - 2
    rows = d["rows"][: d["limit"]]
    shown = [export.match_json(json.loads(text)) for _key, text in rows]
    n = paging.fit((len(json.dumps(m)) + 2 for m in shown), budget)
    doc["matches"] = shown[:n]
    if n < len(d["rows"]):
        doc["next"] = paging.encode(d["rows"][n - 1][0])
    return Reply(200, json.dumps(doc).encode(), "application/json")


# -- the page ------------------------------------------------------------------------------
def _error(web: View, api: bool, status: int, what: str) -> Reply:
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


def _page(web: View, d: dict) -> str:
    """The page, its list of matches as long as `paging.PAGE_BYTES` leaves room for."""
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
    span = first.isoformat() if first == last else f"{first.isoformat()} to {last.isoformat()}"
    top = ""
    if d["first_page"]:
        top = _summary_and_charts(d, span)
        title = "Matches"
    else:
        newest = _href(venue, player, **{"from": first.isoformat(), "to": last.isoformat()}, **q)
        title = f"Earlier matches, {escape(span)}{_table_note(table)}"
        top = f'<p class="dim"><a id="newest" href="{escape(newest)}">the newest matches</a></p>'
    body = (
        f'<header><h1 id="heading">{escape(heading)}</h1>'
        f"<nav>{' '.join(n for n in nav if n)}</nav></header>"
        f'<main class="history">{_form(d)}{top}'
        f"<h2>{title}</h2>{ITEMS}</main>"
    )
    page = _doc(web.title, heading, body)
    budget = paging.PAGE_BYTES - len(page.encode()) + len(ITEMS) - paging.MAX_CURSOR * 2 - 200
    return page.replace(ITEMS, _matches(d, budget))


def _summary_and_charts(d: dict, span: str) -> str:
    player, c = d["player"], d["counts"]
    days = period.days(d["first"], d["last"])
    per_day = [(k, k[8:] if len(days) > 1 else k, c["day"].get(k, 0)) for k in days]
    per_hour = [(h, h, c["hour"].get(h, 0)) for h in period.hours(d["day_start_hour"])]
    per_pocket = [(p, p, n) for p, n in c["pocket"].items()]
    total = sum(c["day"].values())
    n_matches, won, best = c["summary"]
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
    mine = ""
    if player is not None and n_matches:
        mine = f', won <b id="n-won">{won}</b>, best run <b id="best-run">{best}</b>'
    return (
        f'<p class="summary" id="summary">{escape(span)}{_table_note(d["table"])}: '
        f'<b id="n-matches">{n_matches}</b> match{"es" if n_matches != 1 else ""}'
        f', <b id="n-balls">{total}</b> ball{"s" if total != 1 else ""} in the pockets'
        f"{escape(whose)}{mine}</p>"
        f'<div class="charts">{charts}</div>'
    )


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


def _matches(d: dict, budget: int) -> str:
    """The page's matches, newest first, as many as `budget` bytes hold, and the link to
    the earlier ones."""
    rows = d["rows"][: d["limit"]]
    if not rows:
        if d["first_page"]:
            return '<p class="dim" id="no-matches">No match in this period.</p>'
        return '<p class="dim" id="no-matches">No earlier match in this period.</p>'
    items = [_match(d["venue"], json.loads(text)) for _key, text in rows]
    n = paging.fit((len(i.encode()) for i in items), budget)
    more = ""
    if n < len(d["rows"]):
        q = {
            "from": d["first"].isoformat(),
            "to": d["last"].isoformat(),
            "table": d["table"],
            "cursor": paging.encode(d["rows"][n - 1][0]),
        }
        href = _href(d["venue"], d["player"], **q)
        more = f'<p class="dim"><a id="earlier" href="{escape(href)}">Earlier matches</a></p>'
    return f'<ol class="matches" id="matches">{"".join(items[:n])}</ol>{more}'


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
