"""The read-only routes: the pages, the static files and the JSON snapshots.

Pages: /v/<venue>/ (venue board), /v/<venue>/director (the event director's page),
/v/<venue>/<table>/ or /v/<venue>/t/<table>/ (table page), /v/<venue>/t/<table>/overlay
(streaming overlay), /v/<venue>/t/<table>/referee (the referee app); an unknown venue or
table is a 404 page. JSON: /api/v/<venue>, /api/v/<venue>/<table>. The live streams
(/events/v/<venue>, /events/v/<venue>/t/<table>) are server.py's.
"""

from __future__ import annotations

import functools
import html
import mimetypes
from importlib import resources

from railbird.outputs.web.wire import HTML, Reply, Req, json_reply

# /v/<venue>/t/<table>/<view> -> the page's file
VIEWS = {"": "table.html", "overlay": "overlay.html", "referee": "referee.html"}


@functools.lru_cache(maxsize=128)  # package data: fixed while the process runs
def static(name: str) -> bytes | None:
    if "/" in name or "\0" in name or name.startswith("."):  # a NUL: not found, no traceback
        return None
    try:
        return resources.files("railbird.outputs.web").joinpath("static", name).read_bytes()
    except (FileNotFoundError, IsADirectoryError, OSError, ValueError):
        return None


def page(name: str, title: str) -> bytes | None:
    """A page with the configured title (`[outputs.web] title`) in place of {{title}}."""
    data = static(name)
    return None if data is None else data.replace(b"{{title}}", html.escape(title).encode())


def not_found(title: str, what: str, links: list[tuple[str, str]]) -> Reply:
    items = "".join(
        f'<li><a href="{html.escape(href)}">{html.escape(text)}</a></li>' for href, text in links
    )
    body = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
        'content="width=device-width, initial-scale=1"><title>Not found · '
        f'{html.escape(title)}</title><link rel="stylesheet" href="/static/style.css"></head>'
        f'<body class="notfound"><h1>Not found</h1><p id="notfound">{html.escape(what)}</p>'
        f"<ul>{items}</ul></body></html>"
    ).encode()
    return Reply(404, body, HTML)


def route(web, req: Req) -> Reply | None:
    """The reply to a GET (or HEAD) of one of these routes; None: not one of them."""
    p = req.parts
    if not p:
        vs = web.known_venues()
        if len(vs) == 1:
            return Reply(302, b"", headers=[("Location", f"/v/{vs[0]}/")])
        links = "".join(f'<li><a href="/v/{html.escape(v)}/">{html.escape(v)}</a></li>' for v in vs)
        body = f"<!doctype html><title>{html.escape(web.title)}</title><ul>{links}</ul>"
        return Reply(200, body.encode(), HTML)
    if p[0] == "static" and len(p) == 2:
        data = static(p[1])
        if data is None:
            return json_reply(404, {"error": "not found"})
        ctype = mimetypes.guess_type(p[1])[0] or "application/octet-stream"
        if ctype.startswith("text/") or ctype.endswith("javascript"):
            ctype += "; charset=utf-8"
        return Reply(200, data, ctype)
    if p[0] == "v" and len(p) >= 2:
        return _view(web, p[1], p[2:])
    if p[0] == "api" and len(p) in (3, 4) and p[1] == "v":
        return _api(web, p[2], p[3] if len(p) == 4 else None)
    return None


def _api(web, venue: str, table: str | None) -> Reply:
    if venue not in web.known_venues():
        return json_reply(404, {"error": "unknown venue"})
    referee = venue in web.pins
    if table is None:
        tables = [web.venues.snapshot(t.venue, t.table) for t in web.venues.venue_tables(venue)]
        return json_reply(
            200, {"venue": venue, "title": web.title, "tables": tables, "referee": referee}
        )
    snap = web.venues.snapshot(venue, table)
    if snap is None:
        return json_reply(404, {"error": "unknown table"})
    return json_reply(200, dict(snap, title=web.title, referee=referee))


def _view(web, venue: str, rest: list[str]) -> Reply:
    """/v/<venue>/ -> venue board; /v/<venue>/<table>/ and /v/<venue>/t/<table>/[view]
    -> the table's pages. A venue or table the host does not know is a 404 page that
    lists what it knows, not an empty board (a mistyped URL on a bar TV)."""
    table, name = None, "venue.html"
    if rest == ["director"]:  # the event director's page (director.py)
        name = "director.html"
    elif len(rest) == 1:
        table, name = rest[0], "table.html"
    elif len(rest) in (2, 3) and rest[0] == "t":
        table, name = rest[1], VIEWS.get(rest[2] if len(rest) == 3 else "")
    elif rest:
        name = None
    if name is None:
        return not_found(web.title, "no such page", [])
    if venue not in web.known_venues():
        links = [(f"/v/{v}/", v) for v in web.known_venues()]
        return not_found(web.title, f"There is no venue {venue!r} on this host.", links)
    if table is not None and table not in web.tables_of(venue):
        links = [(f"/v/{venue}/t/{t}/", t) for t in web.tables_of(venue)]
        return not_found(web.title, f"There is no table {table!r} at {venue}.", links)
    return Reply(200, page(name, web.title), HTML)
