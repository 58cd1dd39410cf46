"""`make bench`, the history under load (issue 23, 4 and 5): a referee's sign-in while phones
read a year of history and others ask for it and never read the answer.

A private mosquitto and `railbird run` as a subprocess (railbird.bench.inplay.start_host) on
a journal holding a busy venue's year (railbird.bench.year: 8 tables, 17,520 matches,
350,400 drops, written once and cached under build/). First, alone: `SIGNINS` sign-ins
(POST /api/session/<venue> with the PIN, a new connection each) and one walk of the year's
history pages (GET /api/v/<venue>/history?from=..&to=.. and every `next`). Then, for
`seconds`, the load:

- `clients` (8) threads, each walking the 365-day history page by page and starting again
  at the end; a 503 (the history busy) is tried again after BUSY_PAUSE_S;
- `stalled` (24) connections that each send the 365-day request and never read a byte
  (a receive buffer of STALLED_RCVBUF); when the server drops one, another takes its place,
  so 24 are stalled at any time;
- the sign-ins again, one every SIGNIN_EVERY_S, each timed;
- the daemon's resident memory (VmRSS, /proc) sampled every RSS_EVERY_S.

Printed: the sign-in's p50/p99/max alone and under the load (target p99 <= 100 ms), the
daemon's RSS when idle and its peak under the load (target growth <= 50 MB), the pages the
clients got and the 503s, and how many stalled connections the server dropped and after how
long. `--quick`: a smaller history and a shorter load.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import select
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

from railbird.bench import inplay, year

PIN = "582914"
SIGNINS = 100
SIGNIN_EVERY_S = 0.05
BUSY_PAUSE_S = 0.1
STALLED_RCVBUF = 4096
RSS_EVERY_S = 0.1
TARGET_SIGNIN_P99_MS = 100.0
TARGET_RSS_MB = 50.0
CACHE = Path(__file__).resolve().parents[3] / "build" / "bench"

CONFIG = """
venue = "{venue}"
stats_period_s = 0
referee_token = "{pin}"
[broker]
host = "127.0.0.1"
port = {port}
password = "host-secret"
client_id = "railbird-host-bench-history"
{tables}
[outputs.web]
host = "127.0.0.1"
port = 0
"""


def _kb(path: str, field: str) -> int:
    with open(path) as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in {path}")


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants (the history's fork server and workers)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:  # gone meanwhile
            continue
    return out


def memory_mb(pid: int) -> float:
    """The daemon's memory: its proportional set size (PSS) and its children's, so pages
    the history's workers share with their fork server count once."""
    total = 0
    for p in _tree(pid):
        try:
            total += _kb(f"/proc/{p}/smaps_rollup", "Pss:")
        except OSError:  # a worker replaced meanwhile
            continue
    return total / 1024


def rss_mb(pid: int) -> float:
    """The daemon process's own resident set (VmRSS), without its children."""
    return _kb(f"/proc/{pid}/status", "VmRSS:") / 1024


def _conn(port: int) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", port, timeout=120)


def sign_in(port: int) -> float:
    """One referee sign-in on a new connection -> seconds to the whole answer."""
    body = json.dumps({"pin": PIN})
    t0 = time.perf_counter()
    c = _conn(port)
    try:
        c.request(
            "POST",
            f"/api/session/{year.VENUE}",
            body,
            {"Content-Type": "application/json", "Host": f"127.0.0.1:{port}"},
        )
        r = c.getresponse()
        data = r.read()
    finally:
        c.close()
    took = time.perf_counter() - t0
    if r.status != 200 or not json.loads(data).get("signed_in"):
        raise RuntimeError(f"sign-in answered {r.status}: {data[:200]!r}")
    return took


def history_path(y: year.Year, cursor: str | None = None) -> str:
    q = {"from": y.first_day.isoformat(), "to": y.last_day.isoformat()}
    if cursor:
        q["cursor"] = cursor
    return f"/api/v/{year.VENUE}/history?{urlencode(q)}"


class Walker:
    """A client reading the whole period page by page, again and again (`walk_once`: one
    walk, timed, with the number of pages and matches and the largest page)."""

    def __init__(self, port: int, y: year.Year):
        self.port, self.y = port, y
        self.pages = self.busy = self.walks = self.matches = self.largest = 0
        self.errors: list[str] = []

    def _get(self, c: http.client.HTTPConnection, path: str) -> tuple[int, bytes]:
        c.request("GET", path, headers={"Host": f"127.0.0.1:{self.port}"})
        r = c.getresponse()
        return r.status, r.read()

    def walk_once(self, stop: threading.Event | None = None) -> float:
        t0 = time.perf_counter()
        c, cursor, seen = _conn(self.port), None, 0
        try:
            while stop is None or not stop.is_set():
                try:
                    status, body = self._get(c, history_path(self.y, cursor))
                except (OSError, http.client.HTTPException) as e:
                    self.errors.append(f"{type(e).__name__}: {e}")
                    c.close()
                    c = _conn(self.port)
                    continue
                if status == 503:
                    self.busy += 1
                    time.sleep(BUSY_PAUSE_S)
                    continue
                if status != 200:
                    self.errors.append(f"{status}: {body[:200]!r}")
                    return time.perf_counter() - t0
                self.pages += 1
                self.largest = max(self.largest, len(body))
                doc = json.loads(body)
                seen += len(doc["matches"])
                cursor = doc.get("next")  # none before pages existed
                if cursor is None:
                    self.walks += 1
                    self.matches = seen
                    break
        finally:
            c.close()
        return time.perf_counter() - t0

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self.walk_once(stop)


class Stalled:
    """`n` connections that sent the history request and never read; a dropped one (reset
    or closed by the server: POLLHUP, POLLERR, POLLRDHUP) is replaced at once."""

    def __init__(self, port: int, n: int, y: year.Year):
        self.port, self.n, self.y = port, n, y
        self.poll = select.poll()
        self.socks: dict[int, tuple[socket.socket, float]] = {}
        self.dropped: list[float] = []  # how long each was held before the server let go

    def _open(self) -> None:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, STALLED_RCVBUF)
        s.connect(("127.0.0.1", self.port))
        path = history_path(self.y)
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n\r\n".encode())
        self.socks[s.fileno()] = (s, time.monotonic())
        self.poll.register(s.fileno(), select.POLLRDHUP | select.POLLHUP | select.POLLERR)

    def run(self, stop: threading.Event) -> None:
        for _ in range(self.n):
            self._open()
        while not stop.is_set():
            for fd, _ev in self.poll.poll(100):
                s, since = self.socks.pop(fd)
                self.poll.unregister(fd)
                self.dropped.append(time.monotonic() - since)
                s.close()
                self._open()
        for s, _ in self.socks.values():
            s.close()


def percentiles(xs: list[float]) -> dict:
    return inplay.percentiles(xs) if xs else {"n": 0, "p50": 0.0, "p99": 0.0, "max": 0.0}


def bench_history(
    y: year.Year, seconds: float, clients: int = 8, stalled: int = 24, cache: Path = CACHE
) -> dict:
    from railbird.broker import PrivateBroker

    def note(s):
        print(f"  writing the year's history ({y.matches:,} matches): {s:.0f} s", flush=True)

    src, figures = year.cached(y, cache, progress=note)
    with tempfile.TemporaryDirectory(prefix="railbird-bench-history-") as tmp:
        wd = Path(tmp)
        shutil.copy(src, wd / "journal.sqlite")
        broker = PrivateBroker(wd / "broker").start()
        host = None
        try:
            tables = "".join(
                f'[tables.t{i}]\nnodes = ["t{i}-node"]\n' for i in range(1, y.tables + 1)
            )
            (wd / "host.toml").write_text(
                CONFIG.format(venue=year.VENUE, pin=PIN, port=broker.port, tables=tables)
            )
            host, _stats, url = inplay.start_host(wd)
            port = int(url.rsplit(":", 1)[1])
            idle, idle_rss = memory_mb(host.pid), rss_mb(host.pid)
            alone = []
            for _ in range(SIGNINS):
                alone.append(sign_in(port))
                time.sleep(SIGNIN_EVERY_S)
            w = Walker(port, y)
            walk_s = w.walk_once()
            one = {"seconds": walk_s, "pages": w.pages, "matches": w.matches, "largest": w.largest}
            after_one = memory_mb(host.pid)

            # the load from a process of its own: its threads' GIL is not the sign-ins'
            ctx = multiprocessing.get_context("spawn")
            results = ctx.Queue()
            load = ctx.Process(target=_load, args=(port, y, clients, stalled, seconds, results))
            load.start()
            if results.get(timeout=60) != "started":
                raise RuntimeError("the load did not start")
            stop, peak, peak_rss = threading.Event(), [idle], [idle_rss]

            def sample():
                while not stop.is_set():
                    peak[0] = max(peak[0], memory_mb(host.pid))
                    peak_rss[0] = max(peak_rss[0], rss_mb(host.pid))
                    time.sleep(RSS_EVERY_S)

            sampler = threading.Thread(target=sample)
            sampler.start()
            loaded = []
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                loaded.append(sign_in(port))
                time.sleep(SIGNIN_EVERY_S)
            got = results.get(timeout=120)
            stop.set()
            sampler.join(10)
            load.join(30)
            after = memory_mb(host.pid)
        finally:
            if host is not None:
                inplay.stop_host(host)
            broker.stop()
    return {
        "year": dict(figures, tables=y.tables, days=y.days),
        "one": one,
        "alone": percentiles(alone),
        "loaded": percentiles(loaded),
        "rss": {"idle": idle, "after_one": after_one, "peak": peak[0], "after": after},
        "own_rss": {"idle": idle_rss, "peak": peak_rss[0]},
        **got,
        "clients": clients,
        "stalled": stalled,
        "seconds": seconds,
    }


def _load(port: int, y: year.Year, clients: int, stalled: int, seconds: float, out) -> None:
    """In a process of its own: `clients` walkers and `stalled` stalled readers for
    `seconds`; "started" then the figures to `out`."""
    stop = threading.Event()
    walkers = [Walker(port, y) for _ in range(clients)]
    stall = Stalled(port, stalled, y)
    runs = [w.run for w in walkers] + [stall.run]
    threads = [threading.Thread(target=run, args=(stop,)) for run in runs]
    for t in threads:
        t.start()
    out.put("started")
    stop.wait(seconds)
    stop.set()
    for t in threads:
        t.join(60)
    out.put(
        {
            "pages": sum(x.pages for x in walkers),
            "walks": sum(x.walks for x in walkers),
            "busy": sum(x.busy for x in walkers),
            "errors": [e for x in walkers for e in x.errors],
            "dropped": stall.dropped,
        }
    )


def held(r: dict) -> bool:
    growth = r["rss"]["peak"] - r["rss"]["idle"]
    return r["loaded"]["p99"] * 1e3 <= TARGET_SIGNIN_P99_MS and growth <= TARGET_RSS_MB


def lines(r: dict) -> list[str]:
    def ms(p):
        return (
            f"p50 {p['p50'] * 1e3:.1f} / p99 {p['p99'] * 1e3:.1f} / max {p['max'] * 1e3:.1f} ms"
            f" ({p['n']} sign-ins)"
        )

    y, one, rss = r["year"], r["one"], r["rss"]
    growth = rss["peak"] - rss["idle"]
    ok_p99 = r["loaded"]["p99"] * 1e3 <= TARGET_SIGNIN_P99_MS
    held_s = statistics.median(r["dropped"]) if r["dropped"] else float("nan")
    out = [
        f"history     {y['days']} days of {y['tables']} tables: {y['matches']:,} matches, "
        f"{y['drops']:,} drops "
        f"({y['mb']:.0f} MiB journal); the whole period alone: {one['pages']} pages "
        f"(the largest {one['largest'] / 1024:.0f} KiB), {one['matches']:,} matches, "
        f"{one['seconds']:.2f} s",
        f"            sign-in alone: {ms(r['alone'])}",
        f"            sign-in with {r['clients']} clients walking the year and "
        f"{r['stalled']} stalled readers, {r['seconds']:.0f} s: {ms(r['loaded'])}, target p99 "
        f"{TARGET_SIGNIN_P99_MS:.0f} ms: {'OK' if ok_p99 else 'TOO SLOW'}",
        f"            daemon memory (PSS, with the history's workers): idle {rss['idle']:.0f} MB,"
        f" after one walk {rss['after_one']:.0f} MB, peak under the load {rss['peak']:.0f} MB"
        f" (+{growth:.0f} MB, target {TARGET_RSS_MB:.0f} MB: "
        f"{'OK' if growth <= TARGET_RSS_MB else 'TOO MUCH'}), after it {rss['after']:.0f} MB;"
        f" the daemon process's own RSS: idle {r['own_rss']['idle']:.0f} MB, peak"
        f" {r['own_rss']['peak']:.0f} MB",
        f"            the clients: {r['pages']:,} pages, {r['walks']} whole walks, {r['busy']:,} "
        f"503 (busy; tried again after {BUSY_PAUSE_S:g} s), {len(r['errors'])} errors; the "
        f"stalled readers: {len(r['dropped'])} dropped by the server, median after "
        f"{held_s:.1f} s",
    ]
    if r["errors"]:
        out.append(f"            first error: {r['errors'][0]}")
    return out


QUICK = year.Year(tables=2, days=90)


def add_options(ap: argparse.ArgumentParser, prefix: str = "") -> None:
    """`--seconds` and `--quick` (`make bench`: `--history-seconds`, `--history-quick`)."""
    ap.add_argument(
        f"--{prefix}seconds",
        type=float,
        default=30.0,
        help="seconds of load in the history benchmark (default %(default)s; 0: skip it)",
    )
    ap.add_argument(
        f"--{prefix}quick",
        action="store_true",
        help=f"the history benchmark on a smaller history ({QUICK.tables} tables, "
        f"{QUICK.days} days) with at most 10 s of load",
    )


def run(seconds: float, quick: bool) -> tuple[list[str], bool]:
    y = QUICK if quick else year.Year()
    r = bench_history(y, min(seconds, 10.0) if quick else seconds)
    return lines(r), held(r)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m railbird.bench.history", description=__doc__.split("\n\n")[0]
    )
    add_options(ap)
    args = ap.parse_args(argv)
    out, ok = run(args.seconds, args.quick)
    print("\n".join(out), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
