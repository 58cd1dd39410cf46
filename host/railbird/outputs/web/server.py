"""Web scoreboard and referee input (stdlib http.server, server-sent events).

    web = WebOutput(port=8080, pins={"club": "4711"}, referee=daemon.referee_input)
    daemon = Daemon(cfg, outputs=[web, ...]); web.referee = daemon.referee_input
    web.health = daemon.health   # the heartbeat says whether the daemon's worker is alive

Pages: /v/<venue>/ (venue board), /v/<venue>/<table>/ or /v/<venue>/t/<table>/ (table
page), /v/<venue>/t/<table>/overlay (streaming overlay); an unknown venue or table is a 404
page. JSON: /api/v/<venue>, /api/v/<venue>/<table>. Live: /events/v/<venue>
(text/event-stream: one `table` event with the table's snapshot after every change, and a
`host` heartbeat every HEARTBEAT_S, docs/displays.md "Stale scores"). Referee app:
/v/<venue>/t/<table>/referee; its API (sign-in sessions, referee input with idempotency ids,
the undo preview, the foul catalogue) is `desk.py`.
"""

from __future__ import annotations

import contextlib
import hmac
import html
import json
import logging
import mimetypes
import queue
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from urllib.parse import unquote, urlsplit

from railbird.outputs.base import Output
from railbird.outputs.tables import Venues
from railbird.outputs.web.desk import RefereeDesk

log = logging.getLogger("railbird.outputs.web")

SSE_QUEUE = 256
PIN_TRIES = 5
PIN_WINDOW_S = 60.0
HEARTBEAT_S = 1.0  # the pages call the host gone after 3.5 s without any event
WORKER_STUCK_S = 3.0  # a daemon worker this long without a loop is not scoring
# /v/<venue>/t/<table>/<view> -> the page's file
VIEWS = {"": "table.html", "overlay": "overlay.html", "referee": "referee.html"}


def _static(name: str) -> bytes | None:
    if "/" in name or "\0" in name or name.startswith("."):  # a NUL: not found, no traceback
        return None
    try:
        return resources.files("railbird.outputs.web").joinpath("static", name).read_bytes()
    except (FileNotFoundError, IsADirectoryError, OSError):
        return None


def _page(name: str, title: str) -> bytes | None:
    """A page with the configured title (`[outputs.web] title`) in place of {{title}}."""
    data = _static(name)
    return None if data is None else data.replace(b"{{title}}", html.escape(title).encode())


def _not_found(title: str, what: str, links: list[tuple[str, str]]) -> bytes:
    items = "".join(
        f'<li><a href="{html.escape(href)}">{html.escape(text)}</a></li>' for href, text in links
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
        'content="width=device-width, initial-scale=1"><title>Not found · '
        f'{html.escape(title)}</title><link rel="stylesheet" href="/static/style.css"></head>'
        f'<body class="notfound"><h1>Not found</h1><p id="notfound">{html.escape(what)}</p>'
        f"<ul>{items}</ul></body></html>"
    ).encode()


class _Hub:
    """Server-sent-event subscribers per venue; a slow client is dropped (the browser's
    EventSource reconnects and gets a fresh snapshot)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.subs: dict[str, set[queue.Queue]] = {}
        self.dropped = 0

    def add(self, venue) -> queue.Queue:
        q: queue.Queue = queue.Queue(SSE_QUEUE)
        with self.lock:
            self.subs.setdefault(venue, set()).add(q)
        return q

    def remove(self, venue, q) -> None:
        with self.lock:
            self.subs.get(venue, set()).discard(q)

    def publish(self, venue, event: str, data: dict) -> None:
        msg = f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()
        with self.lock:
            subs = list(self.subs.get(venue, ()))
        for q in subs:
            try:
                q.put_nowait(msg)
            except queue.Full:
                self.dropped += 1
                self.remove(venue, q)
                with contextlib.suppress(queue.Full):
                    q.put_nowait(None)

    def close_all(self) -> None:
        with self.lock:
            subs = [q for s in self.subs.values() for q in s]
            self.subs.clear()
        for q in subs:
            with contextlib.suppress(queue.Full):
                q.put_nowait(None)


class WebOutput(Output):
    name = "web"

    def __init__(
        self,
        host: str = "0.0.0.0",
        port: int = 8080,
        pins: dict | None = None,
        referee=None,
        venues: Venues | None = None,
        title: str = "Railbird",
    ):
        self.host = host
        self.port = port
        self.pins = {k: str(v) for k, v in (pins or {}).items() if v}
        self.referee = referee  # callable(venue, table, input, by=...) -> {"ok", ...}
        self.venues = venues or Venues()
        self.title = title
        self.health = None  # callable -> {"worker_age_s", "broker"} (Daemon.health)
        self.hub = _Hub()
        self.httpd: ThreadingHTTPServer | None = None
        self._thread = None
        self._fails: dict[str, list[float]] = {}
        self._fails_lock = threading.Lock()
        self.referee_lock = threading.Lock()
        self.desk = RefereeDesk(self)  # the referee app's sessions and input
        self.stats = {"requests": 0, "forbidden": 0, "locked_out": 0, "applied": 0, "refused": 0}

    # -- life cycle ----------------------------------------------------------------------
    def start(self) -> None:
        handler = type("Handler", (_Handler,), {"web": self})
        self.httpd = ThreadingHTTPServer((self.host, self.port), handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, name="railbird-web", daemon=True
        )
        self._thread.start()
        log.info("web scoreboard on http://%s:%d/", self.host, self.port)

    def stop(self) -> None:
        self.hub.close_all()
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{host}:{self.port}"

    def heartbeat(self) -> dict:
        """The `host` event: `ok` is false while the daemon's worker is stuck or the host
        has lost the broker (no sensor data reaches it): the scores may be stale."""
        h = {}
        if self.health is not None:
            try:
                h = dict(self.health())
            except Exception as e:  # noqa: BLE001 - a heartbeat must not kill the stream
                h = {"error": str(e)}
        worker_ok = h.get("worker_age_s", 0) < WORKER_STUCK_S and "error" not in h
        broker = h.get("broker")
        h["ok"] = worker_ok and broker is not False
        if not worker_ok:
            h["reason"] = "the host is not responding"
        elif broker is False:
            h["reason"] = "the host has lost the broker"
        return h

    def tables_of(self, venue: str) -> list[str]:
        return [t.table for t in self.venues.venue_tables(venue)]

    def known_venues(self) -> list[str]:
        return sorted(set(self.venues.venues()) | set(self.pins))

    # -- Output ----------------------------------------------------------------------------
    def _changed(self, venue, table):
        snap = self.venues.snapshot(venue, table)
        if snap is not None:
            self.hub.publish(venue, "table", snap)

    def on_shot(self, venue, table, shot):
        self.venues.on_shot(venue, table, shot)
        self._changed(venue, table)

    def on_state(self, venue, table, game, state, fen, announcements):
        self.venues.on_state(venue, table, game, state, fen, announcements)
        self.desk.on_state(venue, table, announcements)
        self._changed(venue, table)

    def on_node(self, venue, table, node, status):
        self.venues.on_node(venue, table, node, status)
        self._changed(venue, table)

    def restore(self, venue, table, history, nodes):
        self.venues.restore(venue, table, history, nodes)
        self.desk.restore(venue, table, history)
        self._changed(venue, table)

    # -- referee ---------------------------------------------------------------------------
    def locked_out(self, addr: str) -> bool:
        now = time.monotonic()
        with self._fails_lock:
            fails = [t for t in self._fails.get(addr, []) if now - t < PIN_WINDOW_S]
            self._fails[addr] = fails
            return len(fails) >= PIN_TRIES

    def check_pin(self, venue: str, pin, addr: str) -> bool:
        want = self.pins.get(venue)
        ok = (
            want is not None
            and isinstance(pin, str)
            and hmac.compare_digest(pin.encode(), want.encode())
        )
        if not ok:
            with self._fails_lock:
                self._fails.setdefault(addr, []).append(time.monotonic())
        return ok


class _Handler(BaseHTTPRequestHandler):
    web: WebOutput
    server_version = "railbird-web"
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        log.debug("%s " + fmt, self.address_string(), *args)

    # -- helpers ---------------------------------------------------------------------------
    def _send(self, code, body: bytes, ctype="application/json", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, code, obj):
        self._send(code, json.dumps(obj).encode())

    def _parts(self):
        path = urlsplit(self.path).path
        return [unquote(p) for p in path.split("/") if p]

    # -- GET -------------------------------------------------------------------------------
    def do_GET(self):
        web = self.web
        web.stats["requests"] += 1
        p = self._parts()
        try:
            if web.desk.route(self, "GET", p):
                return
            if not p:
                vs = web.known_venues()
                if len(vs) == 1:
                    return self._send(302, b"", extra=[("Location", f"/v/{vs[0]}/")])
                links = "".join(
                    f'<li><a href="/v/{html.escape(v)}/">{html.escape(v)}</a></li>' for v in vs
                )
                page = f"<!doctype html><title>{html.escape(web.title)}</title><ul>{links}</ul>"
                return self._send(200, page.encode(), "text/html; charset=utf-8")
            if p[0] == "static" and len(p) == 2:
                data = _static(p[1])
                if data is None:
                    return self._json(404, {"error": "not found"})
                ctype = mimetypes.guess_type(p[1])[0] or "application/octet-stream"
                if ctype.startswith("text/") or ctype.endswith("javascript"):
                    ctype += "; charset=utf-8"
                return self._send(200, data, ctype)
            if p[0] == "v" and len(p) >= 2:
                return self._view(p[1], p[2:])
            if p[0] == "api" and len(p) >= 3 and p[1] == "v":
                if p[2] not in web.known_venues():
                    return self._json(404, {"error": "unknown venue"})
                if len(p) == 3:
                    tables = [
                        web.venues.snapshot(t.venue, t.table) for t in web.venues.venue_tables(p[2])
                    ]
                    return self._json(
                        200,
                        {
                            "venue": p[2],
                            "title": web.title,
                            "tables": tables,
                            "referee": p[2] in web.pins,
                        },
                    )
                if len(p) == 4:
                    snap = web.venues.snapshot(p[2], p[3])
                    if snap is None:
                        return self._json(404, {"error": "unknown table"})
                    return self._json(200, dict(snap, title=web.title, referee=p[2] in web.pins))
            if p[0] == "events" and len(p) == 3 and p[1] == "v":
                return self._events(p[2])
        except (BrokenPipeError, ConnectionResetError):
            return
        self._json(404, {"error": "not found"})

    do_HEAD = do_GET

    def _view(self, venue: str, rest: list[str]):
        """/v/<venue>/ -> venue board; /v/<venue>/<table>/ and /v/<venue>/t/<table>/[view]
        -> the table's pages. A venue or table the host does not know is a 404 page that
        lists what it knows, not an empty board (a mistyped URL on a bar TV)."""
        web = self.web
        table, page = None, "venue.html"
        if len(rest) == 1:
            table, page = rest[0], "table.html"
        elif len(rest) in (2, 3) and rest[0] == "t":
            table, page = rest[1], VIEWS.get(rest[2] if len(rest) == 3 else "")
        elif rest:
            page = None
        if page is None:
            return self._send(
                404, _not_found(web.title, "no such page", []), "text/html; charset=utf-8"
            )
        if venue not in web.known_venues():
            links = [(f"/v/{v}/", v) for v in web.known_venues()]
            return self._send(
                404,
                _not_found(web.title, f"There is no venue {venue!r} on this host.", links),
                "text/html; charset=utf-8",
            )
        if table is not None and table not in web.tables_of(venue):
            links = [(f"/v/{venue}/t/{t}/", t) for t in web.tables_of(venue)]
            return self._send(
                404,
                _not_found(web.title, f"There is no table {table!r} at {venue}.", links),
                "text/html; charset=utf-8",
            )
        return self._send(200, _page(page, web.title), "text/html; charset=utf-8")

    def _events(self, venue):
        web = self.web
        q = web.hub.add(venue)
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Connection", "keep-alive")
            self.end_headers()
            self.wfile.write(b"retry: 1000\n\n")
            for t in web.venues.venue_tables(venue):
                snap = web.venues.snapshot(t.venue, t.table)
                self.wfile.write(f"event: table\ndata: {json.dumps(snap)}\n\n".encode())
            beat_at = 0.0
            while True:
                now = time.monotonic()
                if now - beat_at >= HEARTBEAT_S:
                    # the pages' proof that the host is alive: without it for 3.5 s they
                    # show "scores may be stale" (the daemon is gone, or its worker hangs)
                    beat_at = now
                    beat = json.dumps(web.heartbeat(), separators=(",", ":"))
                    self.wfile.write(f"event: host\ndata: {beat}\n\n".encode())
                self.wfile.flush()
                try:
                    msg = q.get(timeout=max(0.05, beat_at + HEARTBEAT_S - time.monotonic()))
                except queue.Empty:
                    continue
                if msg is None:
                    break
                self.wfile.write(msg)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
        finally:
            web.hub.remove(venue, q)
            self.close_connection = True

    # -- POST, DELETE: the referee app (desk.py) -------------------------------------------
    def do_POST(self):
        self.web.stats["requests"] += 1
        try:
            if not self.web.desk.route(self, "POST", self._parts()):
                self._json(404, {"error": "not found"})
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_DELETE(self):
        self.web.stats["requests"] += 1
        try:
            if not self.web.desk.route(self, "DELETE", self._parts()):
                self._json(404, {"error": "not found"})
        except (BrokenPipeError, ConnectionResetError):
            pass
