"""Issue 13, item 5: idle web connections must not starve the daemon. The probe held 250
idle TCP connections to the web port of a `railbird run` limited to 256 file descriptors:
the web server gave each a thread and a descriptor and never closed one, so after a broker
restart the daemon could not open a socket to reconnect, spun at 100 % CPU with 0 events
ingested, and with `--stats-file` exited.

Here, the same: `railbird run` under RLIMIT_NOFILE 256 with the web scoreboard, 250 idle
connections, a broker restart, then a node's events. The daemon must reconnect and ingest
them while the connections are open, the web server must hold no more connections than its
cap (at most half the fd limit: docs/host.md "Web server limits") and refuse the rest at
once, close the idle ones after its idle timeout, still serve pages afterwards, and listen
on the configured address only. Real parts: a private mosquitto, `railbird run` as a
subprocess, the node's messages over MQTT."""

from __future__ import annotations

import contextlib
import json
import resource
import socket
import time
import urllib.request

import pytest

from harness.hostproc import RailbirdRun
from harness.waiting import poll

from .nodepub import NodePub, shot_events

pytestmark = [pytest.mark.broker, pytest.mark.slow]

NODE, PW, BOOT = "t1-node", "node-pw", 3
FD_LIMIT = 256  # the probe's limit
IDLE = 250  # the probe's idle connections
IDLE_TIMEOUT_S = 4  # configured below; the default is docs/host.md's
SHOTS = 5

CONFIG = """
venue = "club"
subscribe = ["t1"]
reorder_window_ms = 150
stats_period_s = 0
[broker]
host = "127.0.0.1"
port = {port}
password = "host-secret"
client_id = "railbird-host-idle"
[shots]
quiet_ms = 400
lip_rest_ms = 400
cue_before_ms = 500
break_window_ms = 500
[tables.t1]
game = "10-ball"
players = ["Ann", "Bob"]
race_to = 3
nodes = ["{node}"]
[outputs.web]
host = "127.0.0.1"
port = 0
idle_timeout_s = {idle}
"""


def _low_fd_limit():
    resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))


def _open_fds(pid: int) -> int:
    import os

    return len(os.listdir(f"/proc/{pid}/fd"))


def _closed_by_server(s: socket.socket) -> bool:
    """True when the server has closed `s` (EOF or reset); False while it is held open."""
    timeout = s.gettimeout()
    s.setblocking(False)  # a socket with a timeout would wait for data first
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        s.settimeout(timeout)


def _get(url: str) -> tuple[int, dict]:
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.status, json.loads(r.read())


def test_idle_connections_cannot_starve_the_daemon(broker, tmp_path):
    broker.add_user(NODE, PW)
    host = RailbirdRun(
        tmp_path / "host", CONFIG.format(port=broker.port, node=NODE, idle=IDLE_TIMEOUT_S)
    )
    host.popen_kw = {"preexec_fn": _low_fd_limit}
    url = host.start_with_web()
    port = int(url.rsplit(":", 1)[1])
    # bound to the configured address only: another loopback address is not served
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.2", port), timeout=2).close()
    socks: list[socket.socket] = []
    try:
        for _ in range(IDLE):
            s = socket.socket()
            s.settimeout(2)
            try:
                s.connect(("127.0.0.1", port))
            except OSError:
                s.close()
                continue
            socks.append(s)
        # the server accepts (or refuses) them all: waited for (its count of refusals),
        # not a fixed 1 s that a loaded machine may not cover
        web = host.wait(
            lambda s: (
                s["outputs"]["web"]["refused_connections"]
                >= IDLE - s["outputs"]["web"]["max_connections"]
            ),
            "the connections over the cap refused",
            timeout=30,
        )["outputs"]["web"]
        cap = web["max_connections"]

        def open_ones() -> list:
            return [s for s in socks if not _closed_by_server(s)]

        poll(lambda: len(open_ones()) <= cap, 10)
        held = open_ones()
        assert cap < FD_LIMIT, web  # the cap leaves the daemon its descriptors
        assert len(held) <= cap, (len(held), web)
        assert len(socks) - len(held) >= IDLE - cap, (len(socks), len(held), web)
        assert web["refused_connections"] >= IDLE - cap, web
        fds = _open_fds(host.proc.pid)
        assert fds < FD_LIMIT - 16, fds  # room to reconnect, to write the stats file

        # the broker restarts while the idle connections are held: the host reconnects
        connects = host.stats()["connects"]
        t0 = time.monotonic()
        broker.restart()
        host.wait(lambda s: s["connected"] and s["connects"] > connects, "reconnected", timeout=20)
        reconnect_s = time.monotonic() - t0
        node = NodePub(broker.port, NODE, PW)
        try:
            node.events(BOOT, shot_events(0, 5_000_000, SHOTS))
            done = host.wait(
                lambda s: s["events"] >= 2 * SHOTS, "the node's events ingested", timeout=15
            )
        finally:
            node.close()
        assert done["events"] == 2 * SHOTS, done

        # the idle connections are closed by the server after its idle timeout
        deadline = time.monotonic() + IDLE_TIMEOUT_S + 5
        while time.monotonic() < deadline and not all(_closed_by_server(s) for s in held):
            time.sleep(0.2)
        still = sum(not _closed_by_server(s) for s in held)
        assert still == 0, f"{still} idle connections still open after the idle timeout"
        code, venue = _get(f"{url}/api/v/club")
        assert code == 200 and venue["venue"] == "club"
        assert host.alive
        print(
            f"\nheld {len(held)} of {IDLE} idle connections (cap {cap}), {fds} fds open "
            f"under a limit of {FD_LIMIT}, reconnected {reconnect_s:.1f} s after the broker "
            f"restart, {done['events']} events ingested"
        )
    finally:
        for s in socks:
            s.close()
        if host.alive:
            host.stop()


def test_a_slow_request_is_closed_after_the_idle_timeout(broker, tmp_path):
    """Slowloris: a client that sends a request's headers a byte at a time never finishes
    them; it is closed after the idle timeout like a silent one, not held for ever."""
    host = RailbirdRun(
        tmp_path / "host", CONFIG.format(port=broker.port, node=NODE, idle=IDLE_TIMEOUT_S)
    )
    port = int(host.start_with_web().rsplit(":", 1)[1])
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    try:
        t0 = time.monotonic()
        closed = False
        for ch in b"GET /api/v/club HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200:
            try:
                s.send(bytes([ch]))
            except OSError:
                closed = True
                break
            if _closed_by_server(s):
                closed = True
                break
            time.sleep(0.1)
            # the trickle would last ~24 s: held open that long is the bug. The margin past
            # the idle timeout is generous (the server's idle sweep runs late on a loaded
            # machine); a wall-clock bound tighter than that is a benchmark's business
            if time.monotonic() - t0 > IDLE_TIMEOUT_S + 12:
                break
        assert closed, "a request trickling in was held open past the idle timeout"
    finally:
        s.close()
        host.stop()


def test_scoring_goes_on_when_the_web_server_cannot_start(broker, tmp_path):
    """The web port is taken: the web server does not start, says why, is counted, and the
    daemon connects and ingests as if it had no web server at all."""
    broker.add_user(NODE, PW)
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    config = CONFIG.format(port=broker.port, node=NODE, idle=IDLE_TIMEOUT_S)
    host = RailbirdRun(tmp_path / "host", config.replace("port = 0", f"port = {port}"))
    try:
        host.start(lambda s: s.get("connected") and "web" in s.get("outputs", {}))
        s = host.stats()
        web = s["outputs"]["web"]
        assert web["url"] is None and web["server_errors"] == 1 and "in use" in web["error"], web
        assert s["output_errors"] >= 1
        node = NodePub(broker.port, NODE, PW)
        try:
            node.events(BOOT, shot_events(0, 5_000_000, SHOTS))
            done = host.wait(lambda s: s["events"] >= 2 * SHOTS, "events ingested", timeout=15)
        finally:
            node.close()
        assert done["events"] == 2 * SHOTS
        assert "web server" in host.log(20000) and "ERROR" in host.log(20000)
    finally:
        taken.close()
        host.stop()


def test_a_stream_that_stops_reading_is_dropped_and_never_blocks_the_worker():
    """A phone that stops reading its event stream (asleep, out of range): the daemon's
    worker keeps handing events over without waiting, the stalled stream is closed once it
    falls SSE_QUEUE events behind or cannot be written for WRITE_TIMEOUT_S, and a reading
    client still gets every change."""
    from railbird.outputs.web.hub import SSE_QUEUE
    from railbird.outputs.web.server import WRITE_TIMEOUT_S, WebOutput

    web = WebOutput(host="127.0.0.1", port=0)
    web.start()
    stalled = socket.socket()
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.connect(("127.0.0.1", web.port))
    stalled.sendall(b"GET /events/v/club HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    reader = urllib.request.urlopen(f"{web.url}/events/v/club", timeout=10)
    try:
        deadline = time.monotonic() + 5
        while web.stats["streams"] < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        slowest = 0.0
        n = SSE_QUEUE * 4
        for i in range(n):  # the worker's calls: each returns at once
            said = [{"text": f"{i} " + "x" * 20_000, "rule": None, "level": "info"}]
            t0 = time.perf_counter()
            # 128 tables: changes of one table waiting together are sent as its newest, so
            # the stalled stream is megabytes behind, the reader's queue never full
            web.on_state("club", f"t{i % 128}", "10-ball", {"rack": 1}, "", said)
            slowest = max(slowest, time.perf_counter() - t0)
        # blocked on the stalled stream, a call would take WRITE_TIMEOUT_S (10 s); 1 s
        # leaves a loaded machine room to deschedule the thread now and then
        assert slowest < 1.0, slowest
        deadline = time.monotonic() + WRITE_TIMEOUT_S + 5
        while web.stats["dropped_streams"] < 1 and time.monotonic() < deadline:
            reader.fp.read1(65536)  # the reading client keeps up
            time.sleep(0.01)
        assert web.stats["dropped_streams"] >= 1, web.stats
        # the stalled connection is closed by the server
        stalled.settimeout(WRITE_TIMEOUT_S + 5)
        with contextlib.suppress(ConnectionResetError):
            while stalled.recv(65536):
                pass
        # the reading client got the last change
        web.on_state("club", "t1", "10-ball", {"rack": 1}, "", [{"text": "the last"}])
        seen = b""
        deadline = time.monotonic() + 5
        while b'"the last"' not in seen and time.monotonic() < deadline:
            seen = seen[-100_000:] + reader.fp.read1(65536)
        assert b'"the last"' in seen
    finally:
        reader.close()
        stalled.close()
        web.stop()
