"""Stalled readers cannot pin the daemon's memory (issue 23, 5): 24 clients that sent a
365-day history request and never read took the daemon from 47 to 641 MB and held every
connection 25 s later; nothing timed out a plain reply.

Now every reply is written within `write_timeout_s`, else its connection is reset and its
buffers freed; and history replies written but not yet taken are held to HISTORY_UNSENT
bytes together: past that, the next history request is answered 503 at once (a sign-in
still is answered). The client here connects with a 4 KiB receive buffer, asks for a page of
about 1 MiB (a journal of 3,000-character names: the server's 128 KiB send buffer and the
client's cannot hold it) and never reads. Nothing waits on the clock: each step waits for
the server's state with a generous deadline."""

from __future__ import annotations

import json
import select
import socket
import time
import urllib.error
import urllib.request
from urllib.parse import urlencode

import pytest

from railbird.bench import year
from railbird.outputs.web import server
from railbird.outputs.web.server import WebOutput

PIN = "582914"
Y = year.Year(tables=1, days=20, name_len=3000)  # 120 matches of some 40 KB each
DEADLINE_S = 30.0


def serve(tmp_path, **kw) -> WebOutput:
    path = tmp_path / "journal.sqlite"
    year.write(path, Y)
    web = WebOutput(host="127.0.0.1", port=0, pins={year.VENUE: PIN}, **kw)
    web.venues.table(year.VENUE, "t1")
    web.history_journal = str(path)
    web.start()
    return web


def history_path() -> str:
    q = {"from": Y.first_day.isoformat(), "to": Y.last_day.isoformat()}
    return f"/api/v/{year.VENUE}/history?{urlencode(q)}"


def stalled_reader(web) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", web.port))
    s.sendall(f"GET {history_path()} HTTP/1.1\r\nHost: 127.0.0.1:{web.port}\r\n\r\n".encode())
    return s


def wait_for(cond, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not cond():
        assert time.monotonic() < deadline, f"not within {DEADLINE_S:g} s: {what}"
        time.sleep(0.02)


def hung_up(s: socket.socket) -> bool:
    """Whether the server has closed or reset the connection (without reading from it)."""
    p = select.poll()
    p.register(s.fileno(), select.POLLRDHUP | select.POLLHUP | select.POLLERR)
    return bool(p.poll(0))


def test_a_reader_that_never_reads_is_dropped_after_the_write_timeout(tmp_path):
    web = serve(tmp_path, write_timeout_s=0.5)
    s = stalled_reader(web)
    try:
        wait_for(lambda: hung_up(s), "the stalled reader's connection closed by the server")
        assert web.stats["write_timeouts"] == 1
        wait_for(lambda: web._listener.count == 0, "its connection gone from the server")
        assert web.stats["history_unsent_bytes"] == 0  # its reply freed
        # what it got was cut short: less than the reply, then a reset
        got = b""
        try:
            while chunk := s.recv(1 << 16):
                got += chunk
        except ConnectionResetError:
            pass
        head, _, body = got.partition(b"\r\n\r\n")
        if head:
            length = int(head.lower().split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0])
            assert len(body) < length
    finally:
        s.close()
        web.stop()


def test_stalled_history_replies_are_bounded_and_sign_in_still_answers(tmp_path, monkeypatch):
    monkeypatch.setattr(server, "HISTORY_UNSENT", 1)  # one stalled reply fills it
    web = serve(tmp_path, write_timeout_s=60)
    s = stalled_reader(web)
    try:
        wait_for(lambda: web.stats["history_unsent_bytes"] > 0, "the stalled reply held")
        with pytest.raises(urllib.error.HTTPError) as refused:  # not taken: 503 at once
            urllib.request.urlopen(web.url + history_path(), timeout=30)
        assert refused.value.code == 503 and refused.value.headers["Retry-After"]
        req = urllib.request.Request(
            web.url + f"/api/session/{year.VENUE}",
            data=json.dumps({"pin": PIN}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status == 200 and json.loads(r.read())["signed_in"]
        assert web.stats["history_busy"] == 1
        s.close()  # the stalled reader goes: its reply is freed, the history answers again
        wait_for(lambda: web.stats["history_unsent_bytes"] == 0, "the stalled reply freed")
        with urllib.request.urlopen(web.url + history_path(), timeout=30) as r:
            assert r.status == 200 and json.loads(r.read())["matches"]
    finally:
        s.close()
        web.stop()
