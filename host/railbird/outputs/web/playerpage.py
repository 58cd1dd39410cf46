"""A registered player's page (docs/events.md, "The player page"): who they are, their
rating and its course, their totals (matches, racks, high run, fouls, balls pocketed, per
pocket) and their matches, newest first, read-only from the daemon's journal like the
history pages (history.py), and in the same worker processes.

Routes (GET):
- /v/<venue>/player/<id>       the page (a merged duplicate's id: the player who stays)
- /api/v/<venue>/player/<id>   the same as JSON
- /api/v/<venue>/players?q=an  the registry's players whose name, a word of it or nickname
                               begins with `q` (the New match form's search as one types),
                               and the history's names that do (without `q`: history.py)
historypool.py asks these routes before the history's.
A page lists at most `MAX_LISTED` matches and fits in `paging.PAGE_BYTES`; its "Earlier
matches" link (JSON: `next`) carries the cursor of the following page, which reads only
its matches. The player's matches are those played under their name, a merged duplicate's
name, or the same name in another case or without accents (as the ratings count them).
"""

from __future__ import annotations

import json
import sqlite3
from html import escape
from urllib.parse import quote, urlencode

from railbird.competition.errors import CompetitionError
from railbird.competition.players import Player, folded
from railbird.history import chart, export, paging, period, store
from railbird.outputs.web.history import View, _doc, _match
from railbird.outputs.web.wire import HTML, Reply, Req, json_reply
from railbird.registry import ratings
from railbird.registry.players import PlayerRegistry

MAX_LISTED = 50  # matches on a page (HTML and JSON), newest first
SEARCH_MAX = 12  # players offered as one types: a phone shows about that many
RATING_POINTS = 200  # the rating's course: its last this many rated matches


def wants(req: Req) -> bool:
    p = req.parts
    if len(p) == 4 and p[0] == "v" and p[2] == "player":
        return True
    if len(p) == 4 and p[:2] == ["api", "v"] and p[3] == "players":
        return bool((req.query.get("q") or "").strip())
    return len(p) == 5 and p[:2] == ["api", "v"] and p[3] == "player"


def route(view: View, req: Req) -> Reply | None:
    if not wants(req):
        return None
    if req.parts[3] == "players":
        return _search(view, req.parts[2], req.query["q"])
    api = req.parts[0] == "api"
    venue, raw = (req.parts[2], req.parts[4]) if api else (req.parts[1], req.parts[3])
    if venue not in view.venues:
        return _error(view, api, 404, f"There is no venue {venue!r} on this host.")
    if not raw.isdigit() or len(raw) > 12:
        return _error(view, api, 404, f"There is no player {raw!r}.")
    try:
        after = paging.decode(req.query["cursor"]) if req.query.get("cursor") else None
    except paging.CursorError as e:
        return _error(view, api, 400, str(e))
    if view.journal is None:
        return _error(view, api, 404, "This server keeps no players (no journal).")
    try:
        db = store.open_readonly(view.journal)
        try:
            d = _load(db, venue, int(raw), after)
        finally:
            db.close()
    except CompetitionError:
        return _error(view, api, 404, f"There is no player {raw}.")
    except sqlite3.Error as e:
        return _error(view, api, 503, f"The players cannot be read now: {e}")
    if api:
        return _json(d)
    return Reply(200, _page(view, d).encode(), HTML)


def _search(view: View, venue: str, q: str) -> Reply:
    """The registered players `q` finds, each with the rating kept for them, and the
    venue's names from its history that `q` begins (or a word of them)."""
    if venue not in view.venues:
        return json_reply(404, {"error": f"There is no venue {venue!r} on this host."})
    if view.journal is None:
        return json_reply(200, {"venue": venue, "players": [], "registered": []})
    q = q.strip()[:64]
    f = folded(q)
    try:
        db = store.open_readonly(view.journal)
        try:
            found = PlayerRegistry(db).search(q, limit=SEARCH_MAX)
            registered = [_who(p) | _rating(ratings.rating_of(db, p.id)) for p in found]
            names = [
                n
                for n in store.players(db, venue)
                if any(w.startswith(f) for w in [folded(n), *folded(n).split()])
            ]
        finally:
            db.close()
    except sqlite3.Error as e:
        return json_reply(503, {"error": f"The players cannot be read now: {e}"})
    return json_reply(200, {"venue": venue, "players": names, "registered": registered})


def _who(p: Player) -> dict:
    return {"id": p.id, "name": p.name, "nickname": p.nickname, "external": dict(p.external)}


def _rating(r) -> dict:
    if r is None:
        return {"rating": None, "established": False}
    return {"rating": r.rating, "established": r.established}


def names_played(db: sqlite3.Connection, reg: PlayerRegistry, player: Player) -> list[str]:
    """The names in the history that stand for `player`: theirs and their merged
    duplicates', compared folded (case and accents ignored)."""
    mine = {folded(n) for n in [player.name, *reg.aliases(player.id)]}
    index = ratings.name_index(db)
    if not store.has_history(db):
        return []
    rows = db.execute(
        "SELECT player_a FROM history_matches UNION SELECT player_b FROM history_matches"
    )
    out = []
    for (name,) in rows:
        f = folded(name) if isinstance(name, str) else None
        # a name another listed player has is theirs, whatever an alias says
        if f in mine and index.get(f) == player.id:
            out.append(name)
    return sorted(out)


def _load(db: sqlite3.Connection, venue: str, pid: int, after) -> dict:
    reg = PlayerRegistry(db)
    p = reg.resolve(pid)
    names = names_played(db, reg, p)
    rows, totals, pockets = [], _no_totals(), dict.fromkeys(export.POCKETS, 0)
    if names:
        marks = ",".join("?" * len(names))
        mine = f"(player_a IN ({marks}) OR player_b IN ({marks}))"
        args: list = [venue, *names, *names]
        cond = ""
        if after is not None:
            cond = " AND (start, tbl, id) < (?, ?, ?)"
            args += list(after)
        q = (
            "SELECT start, tbl, id, record FROM history_matches WHERE begun = 1 AND"
            f" start IS NOT NULL AND venue = ? AND {mine}{cond}"
            " ORDER BY start DESC, tbl DESC, id DESC LIMIT ?"
        )
        rows = [((r[0], r[1], r[2]), r[3]) for r in db.execute(q, [*args, MAX_LISTED + 1])]
        if after is None:
            totals = _totals(db, venue, names)
            drops = db.execute(
                f"SELECT pocket, COUNT(*) FROM history_drops WHERE venue = ?"
                f" AND player IN ({marks}) AND (ball IS NOT 0) GROUP BY pocket",
                [venue, *names],
            )
            for pocket, n in drops:
                pockets[pocket if pocket in pockets else "other"] = n
    return {
        "venue": venue,
        "player": p,
        "names": names,
        "rating": ratings.rating_of(db, p.id),
        "course": ratings.over_time(db, p.id, RATING_POINTS) if after is None else [],
        "rows": rows,
        "first_page": after is None,
        "totals": totals,
        "pockets": pockets,
    }


def _no_totals() -> dict:
    keys = ("matches", "won", "racks_won", "racks_played", "high_run", "fouls", "balls")
    return dict.fromkeys(keys, 0)


def _totals(db: sqlite3.Connection, venue: str, names: list[str]) -> dict:
    """Over every match at the venue: matches, won, racks won and played (the rack
    games), best high run (14.1: points in an inning; rack games: racks in a row), fouls
    and balls pocketed."""
    marks = ",".join("?" * len(names))
    side = f"(CASE WHEN player_a IN ({marks}) THEN 0 ELSE 1 END)"

    def mine(key: str) -> str:
        return f"json_extract(record, '$.{key}[' || {side} || ']')"

    racks = "game != '14.1'"
    q = (
        f"SELECT COUNT(*), COALESCE(SUM(json_extract(record, '$.winner') IN ({marks})), 0),"
        f" COALESCE(SUM(CASE WHEN {racks} THEN {mine('scores')} END), 0),"
        f" COALESCE(SUM(CASE WHEN {racks} THEN json_extract(record, '$.scores[0]')"
        f" + json_extract(record, '$.scores[1]') END), 0),"
        f" COALESCE(MAX({mine('high_runs')}), 0), COALESCE(SUM({mine('fouls')}), 0),"
        f" COALESCE(SUM({mine('balls')}), 0)"
        f" FROM history_matches WHERE begun = 1 AND venue = ?"
        f" AND (player_a IN ({marks}) OR player_b IN ({marks}))"
    )
    per_side = 4  # `side` is in the racks won, high run, fouls and balls
    args = [*names, *(names * per_side), venue, *names, *names]
    row = db.execute(q, args).fetchone()
    keys = ("matches", "won", "racks_won", "racks_played", "high_run", "fouls", "balls")
    return {k: int(v or 0) for k, v in zip(keys, row, strict=True)}


# -- JSON ------------------------------------------------------------------------------------
def _json(d: dict) -> Reply:
    p = d["player"]
    doc: dict = {"venue": d["venue"], "player": _who(p) | {"starter": p.rating},
                 "names": d["names"]}  # fmt: skip
    doc["player"] |= _rating(d["rating"])
    if d["rating"] is not None:
        doc["player"] |= {"racks_rated": d["rating"].racks}
    if d["first_page"]:
        doc["totals"] = d["totals"]
        doc["balls_per_pocket"] = d["pockets"]
        doc["rating_over_time"] = [{"end": period.iso(e), "rating": r} for e, r in d["course"]]
    shown = [export.match_json(json.loads(t)) for _k, t in d["rows"][:MAX_LISTED]]
    budget = paging.PAGE_BYTES - len(json.dumps(doc)) - paging.MAX_CURSOR - 64
    n = paging.fit((len(json.dumps(m)) + 2 for m in shown), budget)
    doc["matches"] = shown[:n]
    doc["next"] = paging.encode(d["rows"][n - 1][0]) if n < len(d["rows"]) else None
    return Reply(200, json.dumps(doc).encode(), "application/json")


# -- the page --------------------------------------------------------------------------------
def _href(venue: str, pid: int, **query) -> str:
    q = {k: v for k, v in query.items() if v}
    path = f"/v/{quote(venue, safe='')}/player/{pid}"
    return path + ("?" + urlencode(q) if q else "")


def _error(view: View, api: bool, status: int, what: str) -> Reply:
    if api:
        return json_reply(status, {"error": what})
    body = f'<main class="history"><p id="notfound">{escape(what)}</p></main>'
    return Reply(status, _doc(view.title, "Player", body).encode(), HTML)


def _page(view: View, d: dict) -> str:
    p, venue = d["player"], d["venue"]
    heading = p.name + (f" \u201c{p.nickname}\u201d" if p.nickname else "")
    nav = (
        f'<a href="/v/{quote(venue, safe="")}/">board</a> '
        f'<a href="/v/{quote(venue, safe="")}/history">venue history</a>'
    )
    top = _first_page(d) if d["first_page"] else (
        f'<p class="dim"><a id="newest" href="{escape(_href(venue, p.id))}">the newest '
        "matches</a></p>"
    )  # fmt: skip
    items = [_match(venue, json.loads(t)) for _k, t in d["rows"][:MAX_LISTED]]
    head = (
        f'<header><h1 id="heading">{escape(heading)}</h1><nav>{nav}</nav></header>'
        f'<main class="history">{top}<h2>{"Matches" if d["first_page"] else "Earlier matches"}'
        "</h2>"
    )
    budget = paging.PAGE_BYTES - len(head.encode()) - paging.MAX_CURSOR - 1000
    n = paging.fit((len(i.encode()) for i in items), budget)
    more = ""
    if n < len(d["rows"]):
        href = _href(venue, p.id, cursor=paging.encode(d["rows"][n - 1][0]))
        more = f'<p class="dim"><a id="earlier" href="{escape(href)}">Earlier matches</a></p>'
    listed = (
        f'<ol class="matches" id="matches">{"".join(items[:n])}</ol>'
        if n
        else '<p class="dim" id="no-matches">No match yet.</p>'
    )
    return _doc(view.title, p.name, f"{head}{listed}{more}</main>")


def _first_page(d: dict) -> str:
    p, r, t = d["player"], d["rating"], d["totals"]
    if r is None:
        rated = '<span id="rating">not rated yet</span>'
    else:
        state = "established" if r.established else "provisional"
        rated = (
            f'<b id="rating">{r.rating:.0f}</b> <span id="rating-state" class="{state}">'
            f"{state}</span>, {r.racks} rack{'s' if r.racks != 1 else ''} rated"
        )
    starter = "" if p.rating is None else f" (starter {p.rating})"
    ids = "".join(
        f'<dt>{escape(s)} id</dt><dd class="ext" data-system="{escape(s)}">{escape(v)}</dd>'
        for s, v in p.external
    )
    facts = [
        ("matches", t["matches"]),
        ("won", t["won"]),
        ("racks won", f"{t['racks_won']} of {t['racks_played']}"),
        ("best run", t["high_run"]),
        ("fouls", t["fouls"]),
        ("balls pocketed", t["balls"]),
    ]
    totals = "".join(
        f'<dt>{escape(k)}</dt><dd id="t-{k.replace(" ", "-")}">{escape(str(v))}</dd>'
        for k, v in facts
    )
    course = d["course"]
    charts = ""
    if course:
        items = [(period.iso(e), period.clock(e), v) for e, v in course]
        charts += (
            '<figure class="panel"><figcaption>Rating after each rated match</figcaption>'
            f"{chart.line(items, 'Rating after each rated match', 'chart-rating')}</figure>"
        )
    per_pocket = [(k, k, n) for k, n in d["pockets"].items()]
    charts += (
        '<figure class="panel"><figcaption>Balls pocketed per pocket</figcaption>'
        f"{chart.bars(per_pocket, 'Balls pocketed per pocket', 'chart-pocket')}</figure>"
    )
    return (
        f'<dl class="player" id="facts"><dt>rating</dt><dd>{rated}{escape(starter)}</dd>'
        f"{ids}{totals}</dl>"
        f'<div class="charts">{charts}</div>'
    )
