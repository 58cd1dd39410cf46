"""Where the history routes run (history.py, and playerpage.py's): worker processes of
their own, at a lower CPU priority than the daemon (issue 23, 4).

Threads were not enough. A year's history takes a page's worth of JSON decoding and
encoding per request, and a thread doing that holds Python's one interpreter lock: with 8
clients walking a year on two history threads, the web server's own thread and the desk's
waited for it at every step of a sign-in (p50 34 ms against 7 ms alone, p99 210 ms, on the
2-core development machine), and so would the daemon's scoring. A process has its own
lock, and at `nice` NICE the kernel gives the daemon's threads the CPU first whenever both
want it.

Each worker is `python -m railbird.outputs.web.historypool`: it imports only the history
(some 12 MB), reads requests on its standard input and writes the replies on its standard
output, one at a time, and is replaced after MAX_TASKS requests, so what its heap grew to
is given back. A worker belongs to one thread of the pool, which waits for it on the pipe
(without the interpreter lock). A worker that dies (killed, out of memory) or answers
nonsense is killed and replaced; that request is answered 503. When the daemon ends, even
by SIGKILL, its workers read the end of their input and exit.

The wire, both ways: a 4-byte big-endian length and that many bytes of JSON; a reply's
body follows its JSON as one more length and the bytes.

`processes=False` runs the routes on the pool's threads in this process instead: a test
that holds a route on a gate in this process uses it; the server's limits are the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import struct
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import BinaryIO

from railbird.childenv import child_env
from railbird.outputs.web import history, playerpage
from railbird.outputs.web.wire import Reply, Req

log = logging.getLogger("railbird.outputs.web")

NICE = 10  # the workers' niceness: the daemon's threads first
MAX_TASKS = 200  # requests a worker serves before a fresh one takes its place
MAX_MESSAGE = 8 << 20  # bytes of one message at most (a page is at most 1 MiB)
EXIT_S = 2.0  # a worker told to end (its input closed) is killed after this


class HistoryUnavailable(Exception):
    """The history's worker failed; the request is answered 503."""


def _write(out: BinaryIO, data: bytes) -> None:
    out.write(struct.pack(">I", len(data)))
    out.write(data)


def _read(inp: BinaryIO) -> bytes | None:
    head = inp.read(4)
    if len(head) < 4:
        return None  # the end: the other side has gone
    (n,) = struct.unpack(">I", head)
    if n > MAX_MESSAGE:
        raise ValueError(f"a message of {n} bytes")
    data = inp.read(n)
    if len(data) < n:
        return None
    return data


def _set_tz(tz: str | None) -> None:
    """The history's days and hours are local: the daemon's zone (`TZ`) of the moment."""
    if os.environ.get("TZ") != tz:
        if tz is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = tz
        time.tzset()


def route(view: history.View, req: Req) -> Reply | None:
    """The routes that run here: a registered player's (playerpage.py), then the
    history's."""
    return playerpage.route(view, req) or history.route(view, req)


def _request(view: history.View, req: Req) -> bytes:
    return json.dumps(
        {
            "tz": os.environ.get("TZ"),
            "view": [list(view.venues), view.day_start_hour, view.title, view.journal],
            "req": [req.method, req.parts, req.addr, dict(req.query)],
        }
    ).encode()


def _answer(msg: bytes) -> Reply:
    """In a worker: a request -> the route's reply."""
    d = json.loads(msg)
    _set_tz(d["tz"])
    venues, day_start_hour, title, journal = d["view"]
    method, parts, addr, query = d["req"]
    view = history.View(tuple(venues), int(day_start_hour), title, journal)
    reply = route(view, Req(method, parts, {}, addr, query=query))
    return reply or Reply(404, b'{"error": "not found"}')


def serve(inp: BinaryIO, out: BinaryIO) -> None:
    """A worker's life: requests from `inp`, replies to `out`, until `inp` ends."""
    while (msg := _read(inp)) is not None:
        reply = _answer(msg)
        _write(out, json.dumps([reply.status, reply.ctype, reply.headers]).encode())
        _write(out, reply.body)
        out.flush()


class _Worker:
    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "railbird.outputs.web.historypool"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=child_env(),
        )
        self.tasks = 0

    def call(self, msg: bytes) -> Reply:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        _write(self.proc.stdin, msg)
        self.proc.stdin.flush()
        head = _read(self.proc.stdout)
        body = _read(self.proc.stdout) if head is not None else None
        if head is None or body is None:
            raise HistoryUnavailable(f"the history's worker ended ({self.proc.poll()})")
        status, ctype, headers = json.loads(head)
        self.tasks += 1
        return Reply(int(status), body, str(ctype), [(str(k), str(v)) for k, v in headers])

    def end(self) -> None:
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        try:
            self.proc.wait(EXIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        with contextlib.suppress(OSError):
            if self.proc.stdout is not None:
                self.proc.stdout.close()


class HistoryPool:
    def __init__(self, workers: int, processes: bool = True):
        self.workers = workers
        self.processes = processes
        self.failures = 0
        self._threads = ThreadPoolExecutor(workers, thread_name_prefix="railbird-web-history")
        self._local = threading.local()  # a thread's worker process
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()
        self._closed = False

    async def run(self, view: history.View, req: Req) -> Reply | None:
        """`route(view, req)` in a worker."""
        loop = asyncio.get_running_loop()
        if not self.processes:
            return await loop.run_in_executor(self._threads, route, view, req)
        return await loop.run_in_executor(self._threads, self._call, _request(view, req))

    def _call(self, msg: bytes) -> Reply:
        """On a pool thread: the thread's worker answers (a new one when it has none)."""
        w: _Worker | None = getattr(self._local, "worker", None)
        if w is None or w.tasks >= MAX_TASKS:
            if w is not None:
                self._retire(w)
            w = self._local.worker = self._start()
        try:
            return w.call(msg)
        except (OSError, ValueError, HistoryUnavailable) as e:
            self.failures += 1
            log.error("web server: a history worker failed (%s); starting a new one", e)
            self._local.worker = None
            w.proc.kill()
            self._retire(w)
            raise HistoryUnavailable(str(e)) from None

    def _start(self) -> _Worker:
        with self._lock:
            if self._closed:
                raise HistoryUnavailable("the web server is stopping")
            w = _Worker()
            self._all.add(w)
            return w

    def _retire(self, w: _Worker) -> None:
        with self._lock:
            self._all.discard(w)
        w.end()

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
            workers, self._all = list(self._all), set()
        self._threads.shutdown(wait=False, cancel_futures=True)
        for w in workers:
            w.end()


if __name__ == "__main__":  # a worker
    with contextlib.suppress(OSError):
        os.nice(NICE)
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        serve(sys.stdin.buffer, sys.stdout.buffer)
