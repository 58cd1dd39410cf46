"""History requests never hold up the referee (issue 23, 4): they read the journal, and a
year of it takes seconds, so they run apart from sign-in and referee input (in a worker
process, outputs/web/historypool.py), at most `HISTORY_MAX_BUSY` at once (running or
waiting); the next one is answered 503 at once with `Retry-After`. In the first test the
history route is held on a gate the test opens, so it runs on the pool's threads in this
process (`history_processes=False`; the server's limits are the same) and nothing here
depends on how fast the machine is: a sign-in must be answered while every history worker
is still taken."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

from railbird.outputs.web import history
from railbird.outputs.web.server import HISTORY_MAX_BUSY, HISTORY_WORKERS, WebOutput
from railbird.outputs.web.wire import json_reply

PIN = "582914"


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_sign_in_is_answered_while_the_history_is_busy(monkeypatch):
    gate, started = threading.Event(), threading.Semaphore(0)

    def held(web, req):
        started.release()
        gate.wait(60)
        return json_reply(200, {"held": True})

    monkeypatch.setattr(history, "route", held)
    web = WebOutput(host="127.0.0.1", port=0, pins={"club": PIN}, history_processes=False)
    web.venues.table("club", "t1")
    web.start()
    codes: list[int] = []
    lock = threading.Lock()

    def ask():
        code = _get(web.url + "/api/v/club/history")
        with lock:
            codes.append(code)

    askers = [threading.Thread(target=ask) for _ in range(HISTORY_MAX_BUSY + 2)]
    try:
        for t in askers:
            t.start()
        for _ in range(HISTORY_WORKERS):  # both history threads are held
            assert started.acquire(timeout=30)
        # the two beyond the limit are refused at once, while the others wait
        deadline = threading.Event()
        for _ in range(300):
            with lock:
                if len(codes) >= 2:
                    break
            deadline.wait(0.1)
        with lock:
            assert sorted(codes) == [503, 503], codes
        # sign-in (the desk's threads) is answered with the history still held
        req = urllib.request.Request(
            web.url + "/api/session/club",
            data=json.dumps({"pin": PIN}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status == 200 and json.loads(r.read())["signed_in"]
        assert not gate.is_set()
    finally:
        gate.set()
        for t in askers:
            t.join(60)
        web.stop()
    assert sorted(codes) == [200] * HISTORY_MAX_BUSY + [503, 503]
    assert web.stats["history_busy"] == 2


def test_a_history_worker_that_dies_costs_one_request(tmp_path):
    """The history runs in a worker process (outputs/web/historypool.py): killed (out of
    memory, say), the request it was to answer gets 503, the next a new worker; the web
    server and sign-in never notice."""
    from railbird.bench import year

    path = tmp_path / "journal.sqlite"
    year.write(path, year.Year(tables=1, days=3))
    web = WebOutput(host="127.0.0.1", port=0, pins={year.VENUE: PIN})
    web.venues.table(year.VENUE, "t1")
    web.history_journal = str(path)
    web.start()
    url = web.url + f"/api/v/{year.VENUE}/history?from=2026-11-28&to=2026-11-30"
    try:
        assert _get(url) == 200
        (worker,) = web._history_pool._all
        worker.proc.kill()
        worker.proc.wait(30)
        assert _get(url) == 503
        assert _get(url) == 200
        assert web._history_pool.failures == 1
        (again,) = web._history_pool._all
        assert again.proc.pid != worker.proc.pid
    finally:
        web.stop()
    assert again.proc.wait(30) is not None  # ended with the server
