"""Issue 16, item 3: a web client that cannot keep up is disconnected cleanly, and its
browser reconnects and catches up from a snapshot.

The scale probe's start-up burst left such clients on a stream that stayed open but
carried nothing they could use: a client that stops reading was not noticed while the
kernel buffered megabytes for it (which it would read, minutes stale, on waking), and a
stream the hub had dropped could hang in its goodbye on the same full socket. Here a
stream that stops reading must END within a bound (docs/host.md "Web server limits"), and a
real Chromium table page whose renderer is frozen long enough to be dropped must reconnect
on its own and show the score reached while it was gone. Real parts: a private mosquitto,
`railbird run`, a node's messages over MQTT, raw sockets, Chromium."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request

import pytest

from hardening.nodepub import NodePub, shot_events
from harness import browser as hb
from harness.hostproc import RailbirdRun

NODE, PW, BOOT = "t1-node", "node-pw", 7
STALL_S = 2  # stream_stall_s below; the default is 10 s

CONFIG = """
venue = "club"
subscribe = ["t1"]
reorder_window_ms = 100
stats_period_s = 0
[broker]
host = "127.0.0.1"
port = {port}
password = "host-secret"
client_id = "railbird-host-slow-web"
[shots]
quiet_ms = 200
lip_rest_ms = 200
cue_before_ms = 300
break_window_ms = 300
[tables.t1]
game = "14.1"
players = ["Ann", "Bob"]
target = 500
nodes = ["{node}"]
[outputs.web]
host = "127.0.0.1"
port = 0
stream_stall_s = {stall}
"""


def _ended(s: socket.socket, timeout: float) -> tuple[bool, int]:
    """Read `s` (which had stopped reading) until the server ends the stream: (ended, bytes
    read). The end is EOF after the last chunk, or a reset."""
    s.settimeout(0.5)
    got = 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            d = s.recv(65536)
        except TimeoutError:
            continue
        except OSError:  # reset: the server threw away what the client had not taken
            return True, got
        if not d:
            return True, got
        got += len(d)
    return False, got


def _last_version(stream: bytes):
    i = stream.rfind(b"event: table\ndata: ")
    if i < 0:
        return None
    line = stream[i:].split(b"\n")[1]
    try:
        return json.loads(line[len(b"data: ") :])["version"]
    except ValueError:  # not all of it read yet
        return None


@pytest.mark.broker
def test_a_stream_that_stops_reading_ends_and_a_reading_one_gets_everything(broker, tmp_path):
    broker.add_user(NODE, PW)
    host = RailbirdRun(tmp_path / "host", CONFIG.format(port=broker.port, node=NODE, stall=STALL_S))
    url = host.start_with_web()
    port = int(url.rsplit(":", 1)[1])
    stalled = socket.socket()
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.connect(("127.0.0.1", port))
    stalled.sendall(b"GET /events/v/club HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    reader = urllib.request.urlopen(f"{url}/events/v/club/t/t1", timeout=10)
    node = NodePub(broker.port, NODE, PW)
    seen = b""
    try:
        host.wait(lambda s: s["outputs"]["web"]["streams"] >= 2, "both streams open", timeout=10)
        shots = 3
        node.events(BOOT, shot_events(0, 5_000_000, shots, spacing_us=500_000))
        host.wait(lambda s: s["shots"] >= shots, "shots closed", timeout=20)
        # a busy table (each status is a new snapshot on both streams): far more than the
        # stalled client's buffers hold. The next status goes once the reading client has
        # this one's snapshot: statuses that wait together would be sent as the newest only
        last = _last_version(seen)
        deadline = time.monotonic() + 60  # for all of them: a regression fails, never hangs
        for k in range(300):
            status = {"v": 1, "node": NODE, "boot": BOOT, "state": "online"}
            node.raw("status", dict(status, uptime_us=(k + 1) * 1_000_000, queue=k))
            while _last_version(seen) == last and time.monotonic() < deadline:
                seen = seen[-400_000:] + reader.fp.read1(1 << 20)  # it keeps up
            last = _last_version(seen)
        t_sent = time.monotonic()
        # the server notices that the stalled client takes nothing, while it still does not
        # read (reading now would make it a client that keeps up)
        host.wait(
            lambda s: s["outputs"]["web"]["dropped_streams"] >= 1,
            f"the stalled stream dropped ({len(seen)} bytes sent to each stream)",
            timeout=STALL_S + 10,
        )
        took = time.monotonic() - t_sent
        # ... and its response has ended: EOF or reset once the client looks again
        ended, _ = _ended(stalled, 5)
        assert ended, "the dropped stream is still open"
        stats = host.stats()["outputs"]["web"]
        # the reading client was never dropped and saw the table's last change
        with urllib.request.urlopen(f"{url}/api/v/club/t1", timeout=5) as r:
            version = json.loads(r.read())["version"]
        deadline = time.monotonic() + 10
        while _last_version(seen) != version and time.monotonic() < deadline:
            seen = seen[-400_000:] + reader.fp.read1(1 << 20)
        assert _last_version(seen) == version, seen[-400:]
        assert host.stats()["outputs"]["web"]["streams"] >= 1
        print(f"\nthe stalled stream ended {took:.1f} s after the last event ({stats})")
    finally:
        node.close()
        reader.close()
        stalled.close()
        host.stop()


def _state(a: int, b: int, note: str = "") -> tuple:
    st = {"players": ["Ann", "Bob"], "scores": [a, b], "at_table": "Ann", "rack": 1}
    return "10-ball", st, "10-ball", [{"text": note, "rule": None, "level": "info"}] if note else []


@pytest.mark.browser
def test_a_frozen_table_page_is_dropped_reconnects_and_shows_the_current_score(tmp_path):
    """A phone's page that stops taking its stream (its renderer frozen: the tab asleep)
    while the table plays on: the server drops it, and once the page runs again it
    reconnects by itself on the table's own stream and shows the score reached meanwhile,
    which the old stream never carried."""
    from railbird.outputs.web.server import WebOutput

    web = WebOutput(host="127.0.0.1", port=0, stream_stall_s=1)
    web.start()
    drv = hb.chrome(tmp_path / "chrome")
    try:
        web.on_state("club", "t1", *_state(0, 0))
        web.on_state("club", "t2", *_state(5, 5))  # another table: not on this page's stream
        drv.get(f"{web.url}/v/club/t/t1/")
        hb.wait_text(drv, "#score-a", "0")
        hb.wait_until(lambda: drv.execute_script("return document.body.dataset.live") == "1")
        assert drv.execute_script("return RB._live.connects") == 1
        # the page's thread stops (a tab put to sleep): it takes no events until the test
        # sets up table "wake" (its own synchronous requests see that; nothing else runs)
        drv.execute_script(
            "setTimeout(() => { for (;;) { const x = new XMLHttpRequest();"
            " x.open('GET', '/api/v/club/wake', false); x.send();"
            " if (x.status === 200) break; } }, 300)"  # once the driver has its answer
        )
        # frozen once the server is asked for "wake" (its loop's first request), rather
        # than after 0.8 s: a page not yet frozen takes the flood and is never dropped
        wake_asked = threading.Event()
        snapshot = web.venues.snapshot

        def watched(venue, table):
            if table == "wake":
                wake_asked.set()
            return snapshot(venue, table)

        web.venues.snapshot = watched
        assert wake_asked.wait(30), "the page never froze"
        big = "x" * 100_000
        for i in range(300):  # megabytes the frozen page cannot take
            web.on_state("club", "t1", *_state(1, i % 7, f"{i} {big}"))
            if web.hub.dropped:
                break
            time.sleep(0.01)
        hb.wait_until(lambda: web.hub.dropped >= 1, 30, "the frozen page's stream dropped")
        web.on_state("club", "t1", *_state(7, 3))  # after the drop: only a new stream has it
        web.on_state("club", "wake", *_state(0, 0))  # the page runs again
        hb.wait_text(drv, "#score-a", "7", timeout=15)
        hb.wait_text(drv, "#score-b", "3")
        assert drv.execute_script("return RB._live.connects") >= 2  # it reconnected
        assert web.stats["dropped_streams"] + web.hub.dropped >= 1
    finally:
        drv.quit()
        web.stop()
