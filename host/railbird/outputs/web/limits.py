"""How many connections the web server may hold, and the listener that holds it to that.

Every connection costs a file descriptor, and the daemon shares the process's descriptor
limit with the web server: the journal, the broker connections and the stats file need
theirs at any time (a broker restart means a new socket). So the web server never holds
more than half the soft RLIMIT_NOFILE, whatever `max_connections` says.

The listener accepts connections itself rather than through `loop.create_server`: asyncio's
own accept loop takes up to `backlog` connections at once and closes a refused one only a
loop iteration later, so a burst of 128 at the cap briefly held 128 more descriptors and hit
the limit (EMFILE) in the probe's setting. Here a connection over the cap is closed the moment
it is accepted, at most ACCEPT_BATCH are taken per wake-up, and running out of descriptors
pauses accepting instead of spinning. Closing without an answer is deliberate: an
EventSource that gets a 503 gives up for good, one whose connection drops reconnects.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import socket
from collections.abc import Callable

log = logging.getLogger("railbird.outputs.web")

MAX_CONNECTIONS = 512  # a venue's TVs, phones and overlays with room to spare
MIN_CONNECTIONS = 8  # even under a tiny descriptor limit, a page and its stream
ACCEPT_BATCH = 16
BACKLOG = 64
ACCEPT_RETRY_S = 0.5  # out of descriptors: try again after this
OUT_OF_FDS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


def connection_cap(configured: int, soft_limit: int | None = None) -> int:
    """The connections the web server may hold: `configured`, but at most half the
    process's soft descriptor limit (the other half is the daemon's)."""
    if soft_limit is None:
        soft_limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft_limit == resource.RLIM_INFINITY or soft_limit <= 0:
        return max(1, configured)
    return max(1, min(configured, max(MIN_CONNECTIONS, soft_limit // 2)))


class _Counted(asyncio.Protocol):
    """The server's protocol, with the listener's count of open connections kept from the
    moment it is made to its connection's end."""

    def __init__(self, inner: asyncio.Protocol, listener: Listener):
        self._inner = inner
        self._listener = listener
        listener.open += 1

    def connection_made(self, transport) -> None:
        self._inner.connection_made(transport)

    def connection_lost(self, exc) -> None:
        self._listener.open -= 1
        self._inner.connection_lost(exc)

    def data_received(self, data) -> None:
        self._inner.data_received(data)

    def eof_received(self):
        return self._inner.eof_received()

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()


class Listener:
    """Listening sockets on `host`:`port` whose connections go to `factory`'s protocols,
    at most `cap` at a time. Runs on the event loop only."""

    def __init__(self, factory: Callable[[], asyncio.Protocol], cap: int, on_refuse=None):
        self.factory = factory
        self.cap = cap
        self.on_refuse = on_refuse
        self.open = 0  # connections with a protocol
        self.pending = 0  # accepted, protocol not made yet
        self.refused = 0
        self.out_of_fds = 0
        self.port = 0
        self._socks: list[socket.socket] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task] = set()

    @property
    def count(self) -> int:
        return self.open + self.pending

    def start(self, host: str, port: int) -> None:
        self._loop = asyncio.get_running_loop()
        infos = socket.getaddrinfo(
            host or "0.0.0.0", port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
        infos = list(dict.fromkeys(infos))
        for family, type_, proto, _, addr in infos:
            s = socket.socket(family, type_, proto)
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6 and len(infos) > 1:  # one socket per family
                    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                s.bind((addr[0], self.port or addr[1], *addr[2:]))
                s.listen(BACKLOG)
                s.setblocking(False)
            except OSError:
                s.close()
                self.close()
                raise
            self.port = self.port or s.getsockname()[1]
            self._socks.append(s)
            self._loop.add_reader(s.fileno(), self._accept, s)

    def close(self) -> None:
        for s in self._socks:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.remove_reader(s.fileno())
            s.close()
        self._socks.clear()

    def _accept(self, lsock: socket.socket) -> None:
        for _ in range(ACCEPT_BATCH):  # a few at a time: the loop serves the others between
            try:
                conn, _addr = lsock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:
                if e.errno not in OUT_OF_FDS:
                    log.warning("web server: accept failed: %s", e)
                    return
                self.out_of_fds += 1
                if self.out_of_fds == 1 or self.out_of_fds % 100 == 0:
                    log.error(
                        "web server: no file descriptor left to accept a connection (%d "
                        "times); pausing %g s",
                        self.out_of_fds,
                        ACCEPT_RETRY_S,
                    )
                self._pause(lsock)
                return
            if self.count >= self.cap:
                conn.close()  # now: the descriptor is free again before the next accept
                self.refused += 1
                if self.on_refuse is not None:
                    self.on_refuse()
                continue
            self.pending += 1
            task = self._loop.create_task(self._attach(conn))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _pause(self, lsock: socket.socket) -> None:
        self._loop.remove_reader(lsock.fileno())

        def resume():
            if lsock in self._socks:
                self._loop.add_reader(lsock.fileno(), self._accept, lsock)

        self._loop.call_later(ACCEPT_RETRY_S, resume)

    async def _attach(self, conn: socket.socket) -> None:
        made = False

        def protocol():
            nonlocal made
            made = True
            self.pending -= 1
            return _Counted(self.factory(), self)

        try:
            await self._loop.connect_accepted_socket(protocol, conn)
        except BaseException as e:
            if not made:
                self.pending -= 1
                conn.close()
            if not isinstance(e, Exception):
                raise
            log.debug("web server: a connection failed at the start: %s", e)
