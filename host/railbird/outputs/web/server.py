"""Web scoreboard and referee input, served by aiohttp on an event loop of its own.

    web = WebOutput(host="0.0.0.0", port=8080, pins={"club": "471108"})
    daemon = Daemon(cfg, outputs=[web, ...]); web.referee = daemon.referee_input
    web.health = daemon.health   # the heartbeat says whether the daemon's worker is alive
    web.keep_sessions(sessions_path(journal))  # sign-ins survive a restart (sessions.py)

Routes: the pages, static files and JSON snapshots are `pages.py`; the referee app's API is
`desk.py`; the event director's controls and the event's view are `director.py`; the history
pages are `history.py` (run off the loop: they read the journal); the
live streams /events/v/<venue> and /events/v/<venue>/t/<table> (text/event-stream: one
`table` event with the table's snapshot after every change, of every table of the venue or
of the one table, and a `host` heartbeat every HEARTBEAT_S, docs/displays.md "Stale
scores") are here, with their subscribers in `hub.py`.

Threads. The server is one thread ("railbird-web") running its own asyncio loop; it never
runs on the daemon's worker and the worker never waits for it: the Output methods update
the tables (`Venues`, locked) and hand the stream's events to the loop with
`call_soon_threadsafe`. Referee input, which waits for the daemon's answer, runs in a small
thread pool. If the server cannot start (the port is taken) or its loop dies, `start` raises
or the loop's thread ends, the error is logged and counted (`server_errors`), and scoring goes
on: nothing of the daemon depends on the web server.

Limits (docs/host.md "Web server limits"): at most `max_connections` connections, and never
more than half the process's descriptor limit (limits.py); a connection without a complete
request within `idle_timeout_s` is closed (an idle keep-alive, or a slowloris trickling its
headers); request lines and headers at most 8 KiB each, a body at most MAX_BODY bytes and
BODY_TIMEOUT_S to arrive; a stream that cannot take its events for `stream_stall_s`
(WRITE_TIMEOUT_S), or falls `stream_queue` (SSE_QUEUE) events behind, is ended (its browser
reconnects and gets a snapshot).

Replies. Every other reply is written here (`_send`), not by aiohttp after the handler: a
client that has not taken all of it within `write_timeout_s` (WRITE_TIMEOUT_S) is reset and
what its buffers held is freed (`write_timeouts`). Without that a client that sent a request
and never read held its reply, and its connection, for as long as it liked (issue 23, 5: 24
of them took the daemon from 47 to 641 MB). A reply larger than REPLY_SNDBUF gets a send
buffer of that size, so the kernel too holds a bounded part of it per connection.

The history (history.py) reads the journal, and a year of it takes seconds: it runs in
HISTORY_WORKERS processes of its own at a lower CPU priority (historypool.py), so sign-in
and referee input (the desk's threads) never queue behind it, neither for a thread nor for
Python's interpreter lock nor for the CPU. It takes at most HISTORY_MAX_BUSY requests at
once, running or waiting, and HISTORY_UNSENT bytes of its replies written and not yet taken
by their clients; beyond either, a request is answered 503 with `Retry-After` at once
(`history_busy`). Its pages are at most 1 MiB (railbird.history.paging), so stalled readers
of the history hold some 20 MB at most together, however many (issue 23, 4 and 5).

Ending a stream. A dropped stream's writer stops waiting at once, even in the middle of a
write. If that write had finished (the client reads, only too slowly for the burst), it ends
the response properly (the last chunk), given GOODBYE_S to leave; otherwise the client is
not reading and a goodbye would wait on the same full socket, so the connection is reset:
what still sits in its buffers is stale anyway. Either way the browser's
EventSource reconnects, and a stream's first events are the whole state. A stream's socket
has a small send buffer (STREAM_SNDBUF) so that a client that stops reading is noticed
after some ten kilobytes, not after the megabytes a kernel would otherwise buffer, which it
would then read, seconds or minutes stale, before anything current.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import struct
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import unquote

from aiohttp import web as aioweb
from aiohttp.http_exceptions import HttpProcessingError

from railbird.outputs.base import Output
from railbird.outputs.tables import Venues
from railbird.outputs.web import history, pages, playerpage
from railbird.outputs.web.desk import MAX_BODY, RefereeDesk
from railbird.outputs.web.director import DirectorDesk
from railbird.outputs.web.historypool import HistoryPool, HistoryUnavailable
from railbird.outputs.web.hostcheck import HostAllowList
from railbird.outputs.web.hub import SSE_QUEUE, Hub, Sub, sse
from railbird.outputs.web.limits import MAX_CONNECTIONS, Listener, connection_cap
from railbird.outputs.web.sessions import Sessions
from railbird.outputs.web.wire import Reply, Req, json_reply
from railbird.tableorder import natural_sorted

log = logging.getLogger("railbird.outputs.web")
server_log = logging.getLogger("railbird.outputs.web.aiohttp")  # aiohttp's own lines

HEARTBEAT_S = 1.0  # the pages call the host gone after 3.5 s without any event
WORKER_STUCK_S = 3.0  # a daemon worker this long without a loop is not scoring
IDLE_TIMEOUT_S = 10.0  # a connection without a complete request this long is closed
BODY_TIMEOUT_S = 10.0
WRITE_TIMEOUT_S = 10.0  # the default `stream_stall_s` and `write_timeout_s`
GOODBYE_S = 2.0  # a dropped stream's last chunk; not taken by then: reset
STREAM_SNDBUF = 32 * 1024  # the kernel doubles it
REPLY_SNDBUF = 128 * 1024  # a large reply's; on a phone's Wi-Fi a few MB/s still
MAX_LINE = 8190  # request line and each header, bytes
START_TIMEOUT_S = 10.0
DESK_THREADS = 4
# The history: workers of its own, at most so many requests running or waiting, and so
# many bytes of replies its clients have not taken yet; beyond either, 503 at once.
HISTORY_WORKERS = 1  # a core for the history at most: the others stay the daemon's
HISTORY_MAX_BUSY = 4
HISTORY_UNSENT = 16 << 20
HISTORY_RETRY_S = 5
MAX_PENDING = 4096  # events handed to a loop that is not taking them: dropped beyond this
REFUSED_LOG_S = 60.0
COMMON_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Server": "railbird-web",
}


class _ServerLog(logging.LoggerAdapter):
    """aiohttp's logger: it logs a traceback for every request it cannot parse (a 400), so
    any client could fill the log with them. They are the client's fault: counted in
    `bad_requests`, not logged."""

    def __init__(self, stats: dict):
        super().__init__(server_log, {})
        self.stats = stats

    def log(self, level, msg, *args, **kwargs):
        exc = kwargs.get("exc_info")
        if isinstance(exc, HttpProcessingError) and (exc.code or 400) < 500:
            self.stats["bad_requests"] += 1
            return
        super().log(level, msg, *args, **kwargs)


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
        max_connections: int = MAX_CONNECTIONS,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        stream_queue: int = SSE_QUEUE,
        stream_stall_s: float = WRITE_TIMEOUT_S,
        allowed_hosts: tuple[str, ...] = (),
        write_timeout_s: float = WRITE_TIMEOUT_S,
        history_processes: bool = True,
        director_pins: dict | None = None,
    ):
        self.host = host
        # DNS rebinding: a request must name this server (hostcheck.py)
        self.hosts = HostAllowList(allowed_hosts)
        self.port = port
        self.pins = {k: str(v) for k, v in (pins or {}).items() if v}
        # Daemon.referee_input: callable(venue, table, input, by=, id=, rev=) -> {"ok", ...}
        self.referee = referee
        self.venues = venues or Venues()
        self.title = title
        self.max_connections = max_connections
        self.idle_timeout_s = idle_timeout_s
        self.stream_stall_s = stream_stall_s
        self.write_timeout_s = write_timeout_s
        self.health = None  # callable -> {"worker_age_s", "broker"} (Daemon.health)
        self.history_journal = None  # the daemon's journal: the history pages read it
        self.hub = Hub(stream_queue)  # the event loop's: use close_streams() from other threads
        self.referee_lock = threading.Lock()
        self.desk = RefereeDesk(self)  # the referee app's sessions and input
        self.director = DirectorDesk(self, director_pins)  # the event director's page
        self.events = None  # railbird.events.desk.EventDesk: the venue's event (attach_events)
        self.stats = {
            "requests": 0,
            "forbidden": 0,
            "bad_host": 0,
            "history_busy": 0,
            "write_timeouts": 0,
            "history_unsent_bytes": 0,
            "locked_out": 0,
            "applied": 0,
            "refused": 0,
            "stale": 0,
            "connections": 0,
            "max_connections": 0,
            "refused_connections": 0,
            "accept_out_of_fds": 0,
            "streams": 0,
            "dropped_streams": 0,
            "reset_streams": 0,
            "dropped_events": 0,
            "bad_requests": 0,
            "server_errors": 0,
        }
        self.running = False
        self.error: str | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._runner: aioweb.AppRunner | None = None
        self._listener: Listener | None = None
        self._pool: ThreadPoolExecutor | None = None
        # the history's workers (historypool.py; threads of this process when False)
        self._history_pool = HistoryPool(HISTORY_WORKERS, processes=history_processes)
        self._history_busy = 0  # history requests running or waiting (the loop's own)
        self._history_unsent = 0  # bytes of history replies being written (the loop's own)
        self._tick: asyncio.Task | None = None
        self._pending = 0
        self._pending_lock = threading.Lock()
        # the snapshots waiting for the loop, newest per table (`_changed`): one wake-up of
        # the loop per burst, not one per record
        self._dirty: dict = {}
        self._woken = False  # `_publish_changed` is posted and has not run yet
        # between `begin_batch` and `end_batch`: the tables changed, encoded once at the end
        # (a table's snapshot per record was most of this output's cost in a busy batch)
        self._batch: dict | None = None
        self._refused_logged = 0.0

    def keep_sessions(self, path) -> None:
        """Keep the referee sessions in `path` (0600), so that a restart of the host does not
        sign the phones out; before `start`. A venue whose PIN changed since loses them."""
        self.desk.sessions = Sessions(path=path, pins=self.pins, write_behind=True)

    def attach_events(self, events) -> None:
        """The venue's event service (railbird.events.desk.EventDesk): its calls are shown
        on the tables' screens (each snapshot's `call`), and it is given every table
        state; before `start`."""
        self.events = events
        events.notify = self._event_changed
        self._event_changed()

    def _event_changed(self) -> None:
        """Any thread: each table's call, pushed to its screens where it changed."""
        ev = self.events
        if ev is None:
            return
        for table in self.tables_of(ev.venue):
            if self.venues.set_call(ev.venue, table, ev.call_for(table)):
                self._changed(ev.venue, table)

    # -- life cycle ----------------------------------------------------------------------
    def start(self) -> None:
        self._ready.clear()
        self._thread = threading.Thread(target=self._main, name="railbird-web", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S):
            self._fail("did not start in time")
        if not self.running:
            raise RuntimeError(f"web server on {self.host}:{self.port} not started: {self.error}")
        log.info(
            "web scoreboard on http://%s:%d/ (at most %d connections, idle timeout %g s)",
            self.host,
            self.port,
            self.stats["max_connections"],
            self.idle_timeout_s,
        )

    def stop(self) -> None:
        loop, thread = self.loop, self._thread
        if loop is not None and thread is not None and thread.is_alive():
            with contextlib.suppress(RuntimeError):  # closed meanwhile
                loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)

    def close_streams(self) -> None:
        """Close every open event stream (their browsers reconnect); from any thread."""
        self._post(self.hub.close_all)

    @property
    def url(self) -> str:
        host = self.host
        if host in ("0.0.0.0", ""):
            host = "127.0.0.1"
        elif host == "::":
            host = "[::1]"
        elif ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    def _fail(self, why: str) -> None:
        self.error = why
        self.stats["server_errors"] += 1
        self.running = False

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        self.loop = loop
        try:
            loop.run_until_complete(self._serve())
        except Exception as e:  # noqa: BLE001 - reported by start(); scoring goes on
            self._fail(str(e) or type(e).__name__)
            with contextlib.suppress(Exception):
                loop.run_until_complete(self._shutdown())
            self._ready.set()
            loop.close()
            return
        self.running = True
        self._ready.set()
        try:
            loop.run_forever()
        except Exception as e:  # the web server dies alone, logged and counted
            log.exception("web server failed; scoring goes on without it")
            self._fail(str(e) or type(e).__name__)
        finally:
            self.running = False
            try:
                loop.run_until_complete(self._shutdown())
            except Exception:  # shutting down anyway
                log.exception("web server shutdown")
            loop.close()

    async def _serve(self) -> None:
        app = aioweb.Application(client_max_size=MAX_BODY)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = aioweb.AppRunner(
            app,
            access_log=None,
            logger=_ServerLog(self.stats),
            keepalive_timeout=self.idle_timeout_s,
            max_line_size=MAX_LINE,
            max_field_size=MAX_LINE,
            handler_cancellation=True,  # a stream whose client left ends at once
            shutdown_timeout=2.0,
        )
        await self._runner.setup()
        cap = connection_cap(self.max_connections)
        self.stats["max_connections"] = cap
        self._listener = Listener(self._runner.server, cap, on_refuse=self._on_refuse)
        self._listener.start(self.host, self.port)
        self.port = self._listener.port
        loop = asyncio.get_running_loop()
        self._pool = ThreadPoolExecutor(DESK_THREADS, thread_name_prefix="railbird-web-desk")
        self._tick = loop.create_task(self._heartbeats())

    async def _shutdown(self) -> None:
        self.hub.close_all()
        if self._tick is not None:
            self._tick.cancel()
        if self._listener is not None:
            self._listener.close()
        if self._runner is not None:
            await self._runner.cleanup()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self._history_pool.shutdown()
        self.desk.sessions.close()  # the sign-ins not yet written (write_behind)

    def _on_refuse(self) -> None:
        self.stats["refused_connections"] = self._listener.refused
        now = time.monotonic()
        if now - self._refused_logged >= REFUSED_LOG_S:
            self._refused_logged = now
            log.warning(
                "web server at its cap of %d connections: refusing more (%d refused so far)",
                self._listener.cap,
                self._listener.refused,
            )

    # -- the daemon's side: never waits for the loop -----------------------------------------
    def _post(self, fn, *args) -> bool:
        """-> whether `fn(*args)` will run on the loop."""
        loop = self.loop
        if loop is None or not self.running:
            return False
        with self._pending_lock:
            if self._pending >= MAX_PENDING:  # the loop is not taking events: drop, count
                self.stats["dropped_events"] += 1
                return False
            self._pending += 1
        try:
            loop.call_soon_threadsafe(self._run_posted, fn, args)
        except RuntimeError:  # the loop closed meanwhile: the web server is gone
            with self._pending_lock:
                self._pending -= 1
            return False
        return True

    def _run_posted(self, fn, args) -> None:
        with self._pending_lock:
            self._pending -= 1
        fn(*args)

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
        return natural_sorted(set(self.venues.venues()) | set(self.pins))

    # -- Output ----------------------------------------------------------------------------
    def _changed(self, venue, table):
        """Daemon thread: the table's snapshot, encoded here (the worker owns the tables and
        never waits for the loop), waits for the loop, replacing that table's older one;
        the loop is woken once for all that wait (`_publish_changed`), not per record: a
        write to its self-pipe per record cost about 7 % of the daemon's CPU at 1,000
        tables (docs/performance.md "Scale")."""
        if not self.running:
            return
        if self._batch is not None:
            self._batch[(venue, table)] = None
            return
        snap = self.venues.snapshot(venue, table)
        if snap is None:
            return
        msg = sse("table", snap)
        with self._pending_lock:
            self._dirty[(venue, table)] = msg
            if self._woken:
                return
            self._woken = True
        if not self._post(self._publish_changed):
            with self._pending_lock:  # not posted: the next change tries again, kept
                self._woken = False

    def _publish_changed(self) -> None:
        """Loop thread: the waiting snapshots to their streams."""
        with self._pending_lock:
            dirty, self._dirty, self._woken = self._dirty, {}, False
        for (venue, table), msg in dirty.items():
            self.hub.publish(venue, msg, f"table {table}", table)

    def begin_batch(self):
        self._batch = {}

    def end_batch(self):
        changed, self._batch = self._batch or {}, None
        for venue, table in changed:  # in the order they first changed, as before
            self._changed(venue, table)

    def on_shot(self, venue, table, shot):
        self.venues.on_shot(venue, table, shot)
        self._changed(venue, table)

    def on_state(self, venue, table, game, state, fen, announcements):
        self.venues.on_state(venue, table, game, state, fen, announcements)
        self.desk.on_state(venue, table, announcements)
        self._changed(venue, table)
        self._event_state(venue, table, state)

    def _event_state(self, venue, table, state) -> None:
        if self.events is None:
            return
        try:
            self.events.on_state(venue, table, state)
        except Exception:  # the event must not stop the scoreboard
            log.exception("event service: the state of %s/%s not taken", venue, table)

    def on_node(self, venue, table, node, status):
        self.venues.on_node(venue, table, node, status)
        self._changed(venue, table)

    def on_inplay(self, venue, table, inplay):
        self.venues.on_inplay(venue, table, inplay)
        self._changed(venue, table)

    def on_sensors(self, venue, table, report):
        self.venues.on_sensors(venue, table, report)
        self._changed(venue, table)

    def restore(self, venue, table, history, nodes):
        self.venues.restore(venue, table, history, nodes)
        self.desk.restore(venue, table, history)
        self._changed(venue, table)
        snap = self.venues.snapshot(venue, table)  # a match that ended while the host was down
        if snap is not None and snap.get("state"):
            self._event_state(venue, table, snap["state"])

    # -- the loop's side ---------------------------------------------------------------------
    async def _heartbeats(self) -> None:
        """The pages' proof that the host is alive: without it for 3.5 s they show "scores
        may be stale" (the daemon is gone, or its worker hangs)."""
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            self.stats["connections"] = self._listener.count
            self.stats["accept_out_of_fds"] = self._listener.out_of_fds
            self.stats["streams"] = self.hub.count()
            self.stats["dropped_streams"] = self.hub.dropped
            if self.hub.subs:
                self.hub.publish(None, sse("host", self.heartbeat()), "host")

    async def _history(self, request: aioweb.Request, req: Req) -> aioweb.StreamResponse:
        """A history route in its own bounded workers, its reply written within the write
        timeout; 503 when they or its share of unsent bytes are all taken."""
        busy = self._history_busy >= HISTORY_MAX_BUSY
        if busy or self._history_unsent >= HISTORY_UNSENT:
            self.stats["history_busy"] += 1
            what = "the history is busy: try again in a few seconds"
            retry = [("Retry-After", str(HISTORY_RETRY_S))]
            return await self._send(request, json_reply(503, {"error": what}, retry))
        self._history_busy += 1
        view = history.View(
            tuple(self.known_venues()), self.venues.day_start_hour, self.title,
            None if self.history_journal is None else str(self.history_journal),
        )  # fmt: skip
        plain = Req(req.method, req.parts, {}, req.addr, query=dict(req.query))
        try:
            reply = await self._history_pool.run(view, plain)
        except HistoryUnavailable:
            what = "the history is not available now: try again in a few seconds"
            reply = json_reply(503, {"error": what}, [("Retry-After", str(HISTORY_RETRY_S))])
        finally:
            self._history_busy -= 1
        reply = reply or json_reply(404, {"error": "not found"})
        size = len(reply.body)
        self._history_unsent += size
        self.stats["history_unsent_bytes"] = self._history_unsent
        try:
            return await self._send(request, reply)
        finally:
            self._history_unsent -= size
            self.stats["history_unsent_bytes"] = self._history_unsent

    async def _send(self, request: aioweb.Request, reply: Reply) -> aioweb.StreamResponse:
        """Write `reply` here, not after the handler: a client that has not taken all of it
        within `write_timeout_s` is reset, so its buffers are freed now (a stalled reader
        kept them, and its connection, for good). aiohttp then finds the response written,
        or its connection closed, and does nothing more."""
        resp = _response(reply)
        if len(reply.body) > REPLY_SNDBUF:
            _small_send_buffer(request.transport, REPLY_SNDBUF)
        try:
            await asyncio.wait_for(_write_all(request, resp), self.write_timeout_s)
        except TimeoutError:
            self.stats["write_timeouts"] += 1
            _reset(request.transport)
        except ConnectionError:  # gone meanwhile
            if request.transport is not None:
                request.transport.abort()
        return resp

    async def _handle(self, request: aioweb.Request) -> aioweb.StreamResponse:
        self.stats["requests"] += 1
        if not self.hosts.allows(request.headers.get("Host")):
            self.stats["bad_host"] += 1
            what = "this server does not answer to that Host (outputs.web.allowed_hosts)"
            return await self._send(request, json_reply(400, {"error": what}))
        method = request.method
        parts = [unquote(p) for p in request.rel_url.raw_path.split("/") if p]
        if method in ("GET", "HEAD"):
            if len(parts) == 3 and parts[:2] == ["events", "v"]:
                return await self._events(request, parts[2])
            if len(parts) == 5 and parts[:2] == ["events", "v"] and parts[3] == "t":
                return await self._events(request, parts[2], parts[4])
            req = Req(method, parts, request.headers, request.remote or "", query=request.query)
            if history.wants(req) or playerpage.wants(req):  # reads the journal: not on the loop
                return await self._history(request, req)
            reply = self.desk.route(req) or self.director.route(req) or pages.route(self, req)
        elif method in ("POST", "DELETE"):
            body, too_large = b"", False
            if method == "POST":
                body, too_large = await self._body(request)
            req = Req(method, parts, request.headers, request.remote or "", body, too_large)
            loop = asyncio.get_running_loop()
            # referee input waits for the daemon's answer: not on the loop
            reply = await loop.run_in_executor(self._pool, self._post_route, req)
        else:
            reply = json_reply(405, {"error": "method not allowed"}, [("Allow", "GET, POST")])
        return await self._send(request, reply or json_reply(404, {"error": "not found"}))

    def _post_route(self, req: Req) -> Reply | None:
        return self.desk.route(req) or self.director.route(req)

    async def _body(self, request: aioweb.Request) -> tuple[bytes, bool]:
        if (request.content_length or 0) > MAX_BODY:
            return b"", True
        try:
            return await asyncio.wait_for(request.read(), BODY_TIMEOUT_S), False
        except aioweb.HTTPRequestEntityTooLarge:
            return b"", True
        except TimeoutError:
            raise aioweb.HTTPRequestTimeout(text="the request body did not arrive") from None

    async def _events(
        self, request: aioweb.Request, venue: str, table: str | None = None
    ) -> aioweb.StreamResponse:
        headers = dict(COMMON_HEADERS, **{"Content-Type": "text/event-stream"})
        if request.method == "HEAD":
            return aioweb.Response(status=200, headers=headers)
        resp = aioweb.StreamResponse(status=200, headers=headers)
        resp.force_close()  # a stream's connection is never reused
        _small_send_buffer(request.transport, STREAM_SNDBUF)
        sub = self.hub.add(venue, table)
        try:
            await resp.prepare(request)
            first = [b"retry: 1000\n\n"]
            for t in self.venues.venue_tables(venue):
                if table is None or t.table == table:
                    first.append(sse("table", self.venues.snapshot(t.venue, t.table)))
            first.append(sse("host", self.heartbeat()))
            data = b"".join(first)
            while not sub.closed:
                if not await self._write(resp, sub, data):
                    break  # not taking its events
                await sub.wake.wait()
                sub.wake.clear()
                data = sub.take()
            else:  # dropped (or shutting down): end it properly if the client takes that
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(resp.write_eof(), GOODBYE_S)
                    return resp
            self.stats["reset_streams"] += 1
            _reset(request.transport)
        except ConnectionError:  # gone
            if request.transport is not None:
                request.transport.abort()
        finally:
            self.hub.remove(sub)
        return resp

    async def _write(self, resp: aioweb.StreamResponse, sub: Sub, data: bytes) -> bool:
        """Write `data`; False when it was not taken within `stream_stall_s` (counted as a
        dropped stream) or the stream was dropped meanwhile: the caller resets it."""
        write = asyncio.ensure_future(resp.write(data))
        gone = asyncio.ensure_future(sub.gone.wait())
        try:
            await asyncio.wait(
                (write, gone), timeout=self.stream_stall_s, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            gone.cancel()
        if write.done():
            write.result()  # ConnectionError: the client has gone
            return True
        write.cancel()
        if not sub.closed:  # stalled, not dropped by the hub (which counts its own)
            self.hub.drop(sub)
        return False


def _small_send_buffer(transport, size: int) -> None:
    sock = transport.get_extra_info("socket") if transport is not None else None
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)


async def _write_all(request: aioweb.Request, resp: aioweb.StreamResponse) -> None:
    await resp.prepare(request)
    await resp.write_eof()


def _reset(transport) -> None:
    """Hang up now and throw away what the client has not taken (a reset, not a close that
    would first deliver stale events)."""
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


def _response(reply: Reply) -> aioweb.Response:
    resp = aioweb.Response(
        status=reply.status,
        body=reply.body,
        headers=dict(COMMON_HEADERS, **{"Content-Type": reply.ctype}),
    )
    for k, v in reply.headers:
        resp.headers.add(k, v)
    return resp
