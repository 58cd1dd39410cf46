"""Issue 13, item 11: state that grew without bound. What the host keeps per (node, boot) — a
clock model, a dedup set, the warnings given — was never freed (20,000 boots of one node:
+37 MB); every rejected message logged a line (10,000 bad messages: 10,000 lines); the web
server's event-stream hub kept an entry for every venue name a client ever asked for. Now a
node's BOOTS_KEPT most recently active boots keep their state, lines a sender controls go
through a rate limit (railbird.daemon.ratelog: 10 per kind per 10 s, then one "suppressed
K" summary) while the stats and the journal still count every message, and the hub holds
an entry per live stream only. (The failed-PIN table's bound, MAX_ADDRESSES, is measured in
test_pin_guessing.py.)"""

from __future__ import annotations

import gc
import json
import re
import socket
import time
import tracemalloc

import pytest

from harness.hostproc import RailbirdRun
from harness.mqttsub import client
from railbird.config import from_dict
from railbird.core import pipeline as P
from railbird.core.shots import WARNINGS_MAX, ShotAssembler
from railbird.core.timeline import Event
from railbird.daemon import ratelog
from railbird.outputs.web.server import WebOutput
from rbproto import codec

from .test_future_timestamp import CONFIG

NODE, PW = "t1-node", "node-pw"
BOOTS = 20_000


def _boot(node: str, boot: int, host_at: int) -> list:
    """One boot of `node` as the host gets it: a sync sample (node time 0 = `host_at`; none
    for odd boots, whose times are then estimated from arrival, with an `unsynced` warning)
    and one shot's events, 20 ms after they happened. -> [(topic, payload, rx)]"""
    sync = {"v": 1, "node": node, "boot": boot, "id": 1, "t1": 500_000}
    sync.update(t2=host_at + 500_100, t3=host_at + 500_110, t4=500_210)
    events = [
        {"seq": 0, "t": 1_000_000, "kind": "rail", "rail": "H", "amp": 800},
        {"seq": 1, "t": 1_200_000, "kind": "drop", "pocket": "FL", "dur": 20_000},
    ]
    msgs = [
        (codec.topic("club", "t1", "sync_result", node), json.dumps(sync).encode(), 0),
        (
            codec.topic("club", "t1", "events", node),
            json.dumps({"v": 1, "node": node, "boot": boot, "events": events}).encode(),
            host_at + 1_220_000,
        ),
    ]
    return msgs if boot % 2 == 0 else msgs[1:]


def test_state_per_node_boot_stays_bounded_over_20k_boots():
    pipe = P.Pipeline(from_dict({"venue": "club", "tables": {"t1": {"nodes": [NODE, "t1-other"]}}}))
    t = pipe.tables[("club", "t1")]
    h0 = 1_000_000_000
    steady = None
    # another node's boot, active before the flood and quiet during it: not evicted by it
    for topic, payload, rx in _boot("t1-other", 2, h0):
        pipe.on_message(topic, payload, rx)
    for b in range(BOOTS):
        if b == 1_000:
            tracemalloc.start()
        if b == 3_000:  # shots kept (1,000) and the like are full, and all traced, by now
            gc.collect()
            steady = tracemalloc.get_traced_memory()[0]
        for topic, payload, rx in _boot(NODE, b, h0 + (b + 1) * 10_000_000):
            pipe.on_message(topic, payload, rx)
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - steady
    tracemalloc.stop()
    assert pipe.counters["shots"] >= BOOTS - 1  # all closed but the last (no tick closes it)
    boots = [k for k in pipe.clocks._clocks if k[0] == NODE]
    assert sorted(boots) == [(NODE, b) for b in range(BOOTS - P.BOOTS_KEPT, BOOTS)]
    assert len(t.timeline._seen) == P.BOOTS_KEPT + 1  # and t1-other's
    assert len(t.unsynced_warned) <= P.BOOTS_KEPT // 2 + 1  # the odd boots kept
    print(f"{BOOTS - 3_000} boots: {grown / 1e6:.2f} MB kept")
    assert grown < 1_000_000, grown  # before: 37 MB
    # t1-other's boot kept its dedup state: a re-sent copy is a duplicate
    topic, payload, _ = _boot("t1-other", 2, h0)[1]
    status, _, _ = pipe.on_message(topic, payload, h0 + 2_000_000_000_000)
    assert status == "duplicate"


def test_a_rate_limit_bounds_the_lines_and_counts_the_rest():
    now = [0.0]
    lines = []

    class Sink:
        def log(self, level, msg, *args):
            lines.append(msg % args)

    r = ratelog.RateLog(Sink(), burst=3, period_s=10.0, clock=lambda: now[0])
    for i in range(100):
        now[0] = i * 0.15  # 100 lines in 15 s: two periods
        r.log("rejected", 30, "rejected %d", i)
    r.flush()
    r.close()
    assert lines[:3] == ["rejected 0", "rejected 1", "rejected 2"]
    summaries = [int(re.search(r"suppressed (\d+)", x).group(1)) for x in lines if "supp" in x]
    assert len(lines) - len(summaries) == 6  # 3 per period
    assert sum(summaries) + 6 == 100


@pytest.mark.broker
@pytest.mark.slow
def test_10k_rejected_messages_give_rate_limited_log_lines(broker, tmp_path):
    n = 10_000
    broker.add_user(NODE, PW)
    host = RailbirdRun(tmp_path / "host", CONFIG.format(port=broker.port, node=NODE))
    host.start()
    c = client(broker.port, NODE, PW)
    topic = codec.topic("club", "t1", "events", NODE)
    t0 = time.monotonic()
    try:
        for i in range(n):
            info = c.publish(topic, b"{broken %d" % i, qos=1)
        info.wait_for_publish(60)
        s = host.wait(lambda s: s["rejected"] == n, "every message rejected", timeout=120)
    finally:
        c.disconnect()
        c.loop_stop()
        host.stop()  # the summary still owed is written at stop
    took = time.monotonic() - t0
    assert s["rejected_by_reason"] == {"bad json": n}, s
    log = host.log(10_000_000)
    shown = re.findall(r"WARNING rejected railbird/v1/club/t1/node/t1-node/events: bad json", log)
    suppressed = [int(k) for k in re.findall(r"suppressed (\d+) more 'rejected' line", log)]
    periods = int(took // ratelog.PERIOD_S) + 1
    print(f"{n} rejected in {took:.1f} s: {len(shown)} lines, suppressed {suppressed}")
    assert len(shown) + sum(suppressed) == n  # nothing dropped silently
    assert len(shown) <= ratelog.BURST * periods, len(shown)  # before: 10,000
    assert len(suppressed) <= periods, suppressed


def _streams(web) -> tuple[int, int]:
    """(venue entries, live streams) of the web server's event-stream hub."""
    subs = dict(web.hub.subs)
    return len(subs), sum(len(s) for s in subs.values())


def test_the_event_stream_hub_keeps_no_entry_per_venue_name_asked_for():
    web = WebOutput(host="127.0.0.1", port=0)
    web.start()
    try:
        for rnd in range(3):  # 600 venue names, 200 streams at a time
            socks = []
            for i in range(200):
                s = socket.create_connection(("127.0.0.1", web.port), timeout=5)
                s.sendall(f"GET /events/v/v{rnd}-{i} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
                socks.append(s)
            for s in socks:
                assert b"200" in s.recv(200)  # the stream is open
            deadline = time.monotonic() + 5
            while _streams(web) != (200, 200):
                assert time.monotonic() < deadline, _streams(web)
                time.sleep(0.05)
            for s in socks:
                s.close()
            deadline = time.monotonic() + 10  # the heartbeat finds them gone
            while _streams(web)[1]:
                assert time.monotonic() < deadline, _streams(web)
                time.sleep(0.1)
            assert _streams(web) == (0, 0)  # before: 200, 400, 600 empty entries
    finally:
        web.stop()


def test_warnings_waiting_for_the_next_shot_stay_bounded():
    """A jammed beam at rest (or a flood of late events): 10,000 warnings before the next
    shot. Before: all 10,000 kept, and then in that shot."""
    a = ShotAssembler("t1")
    for i in range(10_000):
        a.feed(
            Event(
                t=1_000 + i, node="t1-node", boot=1, seq=i, kind="jam", pocket="FL", dur=2_000_000
            )
        )
    assert len(a.pending_warnings) == WARNINGS_MAX + 1
    assert a.pending_warnings[-1] == f"more warnings not listed: {10_000 - WARNINGS_MAX}"
    a.feed(Event(t=20_000_000, node="t1-node", boot=1, seq=10_000, kind="rail", rail="H", amp=800))
    (shot,) = a.flush()
    assert len(shot["warnings"]) <= WARNINGS_MAX + 1 + 4, len(shot["warnings"])
