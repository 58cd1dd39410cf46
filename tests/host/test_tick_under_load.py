"""Issue 16, item 2: time advances under load. A shot closes `quiet_ms` after its last
activity (plus the reorder window, which must pass before the host knows nothing more came)
however busy the daemon's inbox is: ticks run on each table's own deadline, not only after
the inbox has been empty for a while (with N tables sending, such a gap becomes rare and a
table's last shot waited for its next one). And a backlog queued at the broker for the host
is still never declared late: after a (re)connect, ticks wait for the broker to hand over
what it held (docs/host.md "Timeline and reorder window"), also when live traffic never
stops."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from harness.mqttsub import client
from harness.waiting import wait_for
from railbird.config import from_dict
from railbird.core.pipeline import Pipeline, shot_json
from railbird.daemon.ingest import now_us
from railbird.daemon.journal import Journal
from railbird.daemon.offline import assemble, export_inputs
from railbird.daemon.replay import rebuild
from railbird.daemon.worker import CATCHUP_IDLE_S, Daemon
from railbird.outputs.base import Output
from rbproto import codec

from . import scripts as S

QUIET_MS = 300
WINDOW_MS = 20
# The bound is quiet_ms + 100 ms, but this test shares the CPU with whatever else
# runs (two `yes` beside `make test` must not fail it): a bound on wall time belongs in a
# benchmark. What it guards here, ticks waiting for a gap in the inbox that never comes,
# shows as a shot that closes only after seconds or never, so 1 s past quiet_ms still fails
# it; the measured latencies are printed.
BOUND_US = (QUIET_MS + 1000) * 1000
LOAD = ["t2", "t3", "t4", "t5", "t6", "t7"]
SHOT = [(0, "rail", "H"), (100, "drop", "FL"), (150, "rail", "F")]  # ms, kind, where
# held at the broker while the host is away: spread over more than the 100 messages the
# broker has in flight to the host at a time (max_inflight_messages), so that the host gets
# it in several rounds, between which a tick would come too early
LONG_SHOT = [(0, "rail", "H"), (250, "rail", "LF"), (500, "drop", "FL"), (750, "rail", "F")]


def node_of(table: str) -> str:
    return f"{table}-node"


def make_config(tmp_path, port=None):
    d = {
        "venue": "club",
        "journal": str(tmp_path / "j.sqlite"),
        "reorder_window_ms": WINDOW_MS,
        "stats_period_s": 0,
        "shots": {"quiet_ms": QUIET_MS, "lip_rest_ms": QUIET_MS},
        "tables": {t: {"nodes": [node_of(t)]} for t in ["t1", *LOAD]},
    }
    if port is not None:
        d["broker"] = {"port": port, "password": "host-secret", "client_id": "h-load"}
    return from_dict(d)


class Shots(Output):
    """Records when each shot of t1 reached the outputs (host µs)."""

    name = "shots"

    def __init__(self):
        self.t1: list = []
        self.lock = threading.Lock()

    def on_shot(self, venue, table, shot):
        if table == "t1":
            with self.lock:
                self.t1.append((now_us(), shot))

    def on_state(self, *a):
        pass

    def on_node(self, *a):
        pass


class Traffic(threading.Thread):
    """Rail hits on the load tables, without pause, plus t1's scripted shots at their times
    (events are sent 5 ms after they happen, one per message). `send(topic, payload)`;
    `wanted()`: how many load messages to send in this period."""

    def __init__(self, send, wanted=lambda: 1, period_s=0.0005):
        super().__init__(daemon=True)
        self.send, self.wanted, self.period_s = send, wanted, period_s
        self.seq = dict.fromkeys([node_of(t) for t in ["t1", *LOAD]], 0)
        self.script: list = []  # (send at µs, table, [event])
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.load_sent = 0

    def batch(self, table: str, evs: list) -> tuple:
        node = node_of(table)
        out = []
        for e in evs:
            out.append(dict(e, seq=self.seq[node]))
            self.seq[node] += 1
        return codec.topic("club", table, "events", node), codec.encode(
            "events", {"v": 1, "node": node, "boot": 1, "events": out}
        )

    def shot(self, t0_us: int, table: str = "t1", script=SHOT) -> int:
        """Schedule one shot starting at host time t0_us; -> its last event's time."""
        with self.lock:
            for ms, kind, where in script:
                t = t0_us + ms * 1000
                e = {"t": t, "kind": kind}
                if kind == "drop":
                    e.update(pocket=where, dur=20_000)
                else:
                    e.update(rail=where, amp=800)
                self.script.append((t + 5000, table, e))
            self.script.sort(key=lambda s: s[0])
        return t0_us + script[-1][0] * 1000

    def run(self):
        i = 0
        while not self.stopped.is_set():
            now = now_us()
            with self.lock:
                due = [s for s in self.script if s[0] <= now]
                self.script = [s for s in self.script if s[0] > now]
            for _at, table, e in due:
                self.send(*self.batch(table, [e]))
            for _ in range(self.wanted()):
                self.send(*self.load(i, now))
                i += 1
                self.load_sent += 1
            time.sleep(self.period_s)

    def load(self, i: int, now: int) -> tuple:
        """Message `i` of the load: mostly node status, every 10th a rail hit on a load
        table that is playing (each plays half a second, then rests half a second, so
        its shots close too and the host has many tables' deadlines to keep)."""
        table = LOAD[i % len(LOAD)]
        playing = (now // 500_000 + LOAD.index(table)) % 2 == 0
        if i % 10 == 0 and playing:
            e = {"t": now - 1000, "kind": "rail", "rail": "LH", "amp": 700}
            return self.batch(table, [e])
        node = node_of(table)
        msg = {"v": 1, "node": node, "boot": 1, "state": "online", "uptime_us": now - 1000}
        msg.update(queue=0, spill=0)
        return codec.topic("club", table, "status", node), codec.encode("status", msg)

    def script_sent(self) -> bool:
        with self.lock:
            return not self.script

    def stop(self):
        self.stopped.set()
        self.join(5)


def sync_all(send):
    """Every node's clock is the host's (a sync sample with offset 0)."""
    for t in ["t1", *LOAD]:
        send(*S.sync_result(0, node=node_of(t), table=t, t1=now_us()))


def closes_on_time(traffic: Traffic, rec: Shots, shots: int = 3) -> list:
    """Play `shots` shots on t1 under the traffic; -> the latency of each (µs from the
    shot's last event to its arrival at the outputs)."""
    out = []
    with rec.lock:
        first = len(rec.t1)
    for k in range(first, first + shots):
        last = traffic.shot(now_us() + 50_000)
        deadline = time.monotonic() + (QUIET_MS + 10_000) / 1000
        while time.monotonic() < deadline:
            with rec.lock:
                if len(rec.t1) > k:
                    break
            time.sleep(0.005)
        with rec.lock:
            assert len(rec.t1) > k, (
                f"shot {k + 1 - first} of t1 never closed under load: its last event was "
                f"{(now_us() - last) / 1000:.0f} ms ago (quiet_ms {QUIET_MS})"
            )
            closed_at, shot = rec.t1[k]
        assert shot["end"] == last and [p["pocket"] for p in shot["pocketed"]] == ["FL"]
        out.append(closed_at - shot["end"])
    return out


def test_a_shot_closes_on_time_while_the_inbox_never_empties(tmp_path):
    cfg = make_config(tmp_path)
    rec = Shots()
    d = Daemon(cfg, outputs=[rec], connect=False)
    empty = [0, None]  # the longest the inbox can have been empty (µs), the last look

    def send(topic, payload):
        d.inbox.put(("mqtt", now_us(), topic, payload, 0, 1))

    def wanted():
        """The inbox is topped up to 20 waiting messages every 0.5 ms: the daemon keeps up
        but is never without input for long (what 1,000 tables do to it)."""
        now, waiting = now_us(), d.inbox.qsize()
        if waiting == 0 and empty[1] is not None:  # empty at most since the last look
            empty[0] = max(empty[0], now - empty[1])
        empty[1] = now
        return max(0, 20 - waiting)

    traffic = Traffic(send, wanted=wanted)
    sync_all(send)
    d.start()
    traffic.start()
    try:
        latencies = closes_on_time(traffic, rec)
    finally:
        traffic.stop()
        d.stop()
    print(f"latency ms {[round(x / 1000) for x in latencies]}; load {traffic.load_sent} msgs")
    # the old rule ticked only once the inbox had been empty for CATCHUP_IDLE_S after the
    # start, and then after TICK_S without input: that never came
    assert empty[0] < CATCHUP_IDLE_S * 1e6, f"the inbox was empty for {empty[0] / 1000:.0f} ms"
    assert all(x <= BOUND_US for x in latencies), latencies
    replays_exactly(cfg, d.pipeline)


def replays_exactly(cfg, live: Pipeline) -> None:
    """Each table's tick is journalled with its table: a replay of the journal, and
    `railbird assemble` of its export, give what the daemon gave."""
    j = Journal(cfg.journal)
    try:
        ticks = j.db.execute("SELECT tbl FROM inputs WHERE source = 'tick'").fetchall()
        assert ticks and all(t[0] is not None for t in ticks)
        p = Pipeline(cfg)
        rebuild(p, j)
        assert p.stats() == live.stats()
        assert {k: t.assembler.n for k, t in p.tables.items()} == {
            k: t.assembler.n for k, t in live.tables.items()
        }
        # (assemble also flushes the shots still open at the end of its input)
        shots = Counter(shot_json(s) for s in j.shots())
        assert not shots - Counter(assemble(export_inputs(j), cfg))
    finally:
        j.close()


@pytest.mark.broker
def test_through_the_broker_a_backlog_is_not_late_and_shots_close_on_time(broker, tmp_path):
    """Traffic never pauses, also while the host is away. On its return the broker hands
    over what it queued (t1's shot in one-event messages among the load); no tick may
    release t1 before that is in (else its later events are late), and from then on shots
    close on time again."""
    for t in ["t1", *LOAD]:
        broker.add_user(node_of(t), "pw")
    pubs = {t: client(broker.port, node_of(t), "pw") for t in ["t1", *LOAD]}

    def send(topic, payload):
        pubs[codec.parse_topic(topic)[1]].publish(topic, payload, qos=1)

    cfg = make_config(tmp_path, broker.port)
    rec = Shots()
    d = Daemon(cfg, outputs=[rec]).start()
    traffic = Traffic(send, period_s=0.003)  # ~300 messages/s, never 50 ms apart
    try:
        assert d.ingest.connected.wait(10)
        sync_all(send)
        traffic.start()
        latencies = closes_on_time(traffic, rec, shots=2)

        d.stop()  # the broker queues for the host's session meanwhile
        time.sleep(0.5)
        last = traffic.shot(now_us(), script=LONG_SHOT)
        # all of it sent while the host is away (waited for: the traffic thread may run
        # late), and half a second more of load after it
        wait_for(lambda: traffic.script_sent(), "the long shot sent", 30)
        time.sleep(0.5)
        rec2 = Shots()
        d = Daemon(cfg, outputs=[rec2]).start()
        deadline = time.monotonic() + 30
        while not rec2.t1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert rec2.t1, "the shot held at the broker never closed after the host came back"
        _, shot = rec2.t1[0]
        assert shot["end"] == last and [p["pocket"] for p in shot["pocketed"]] == ["FL"]
        assert [r["rail"] for r in shot["rails"]] == ["H", "LF", "F"]
        assert d.stats()["late"] == 0
        latencies += closes_on_time(traffic, rec2, shots=1)
    finally:
        traffic.stop()
        d.stop()
        for c in pubs.values():
            c.loop_stop()
            c.disconnect()
    print(f"latency ms {[round(x / 1000) for x in latencies]}; load {traffic.load_sent} msgs")
    assert all(x <= BOUND_US for x in latencies), latencies
