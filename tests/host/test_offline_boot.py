"""A node that boots while the broker is unreachable (found by the soak, docs/performance.md):
its first `events` message is the OLDEST batch of its stored backlog. Before the fix the clock
model froze offset = rx - t from that message, too large by the backlog's age: those events
got table times in the future, pushed the table's watermark ahead, and once the sync sample
arrived the correctly timed live play fell behind it and was declared late (356 live events,
about 20 s of play, kept out of the shots).

Now (railbird/core/clockmodel.py): the arrival offset is the tightest upper bound seen (the newest
event of every batch, `status.uptime_us`), and a provisional mapping is capped at the
message's arrival time. The node (rbnode/node.py) sends status and its first sync result
before a backlog (`SYNC_FIRST_MS`). In-process, no broker: the Pipeline as the daemon runs it.
"""

import json

from railbird.config import from_dict
from railbird.core.clockmodel import BootClock
from railbird.core.pipeline import Pipeline
from railbird.core.records import EventRecord, LateRecord, ShotRecord
from railbird.daemon.offline import assemble
from rbproto import codec

from . import scripts as S

H0 = 1_000_000_000  # host µs at which the node's boot 2 started (node t = 0)
OFFLINE_S = 20  # broker unreachable for the first 20 s of the boot
RECONNECT = H0 + (OFFLINE_S + 1) * 1_000_000
CFG = {
    "venue": S.VENUE,
    "reorder_window_ms": 500,
    "tables": {
        S.TABLE: {"game": "10-ball", "players": ["A", "B"], "race_to": 9, "nodes": [S.NODE]}
    },
}


def rails(t0_ms, t1_ms, step_ms):
    return [S.ev(t, "rail", rail="H", amp=800) for t in range(t0_ms, t1_ms, step_ms)]


def status(uptime_us, boot=2):
    msg = {"v": 1, "node": S.NODE, "boot": boot, "state": "online", "uptime_us": uptime_us}
    return codec.topic(S.VENUE, S.TABLE, "status", S.NODE), codec.encode("status", msg)


def offline_boot_inputs(order):
    """[(topic, payload, rx)] of one offline boot: 76 events of play while offline (spilled),
    the reconnect at node time 21 s, then live play (one batch per event, 20 ms after it).
    order: "events-first" (the backlog races ahead of status and sync; the sync sample lands
    after two batches), "sync-first" (the node holds events until its first sync result is
    out), "status-only" (status first, the sync exchange lost)."""
    backlog = rails(1000, OFFLINE_S * 1000, 250)
    live = rails(OFFLINE_S * 1000 + 1500, OFFLINE_S * 1000 + 30_000, 500)
    evs = S.number(backlog + live)
    nb = len(backlog)
    back_msgs = S.batches(evs[:nb], boot=2, size=32)  # batch_max 32, as on the node
    live_msgs = S.batches(evs[nb:], boot=2, size=1)
    up = (OFFLINE_S + 1) * 1_000_000
    st = (*status(up + 100_000), RECONNECT + 103_000)  # 3 ms on the way
    sync = (*S.sync_result(H0, boot=2, t1=up + 200_000), RECONNECT + 205_000)
    out = []
    if order == "events-first":
        for i, (topic, payload) in enumerate(back_msgs):
            if i == 2:
                out.append(sync)
            out.append((topic, payload, RECONNECT + 1000 * i))
        out.append(st)
    else:
        out.append(st)
        if order == "sync-first":
            out.append(sync)
        for i, (topic, payload) in enumerate(back_msgs):
            out.append((topic, payload, RECONNECT + 210_000 + 1000 * i))
    for topic, payload in live_msgs:
        last = json.loads(payload)["events"][-1]["t"]
        out.append((topic, payload, H0 + last + 20_000))
    return out, nb, len(evs)


def run(inputs):
    """-> (timeline records: (type, event, rx of the message that produced it), shots)."""
    pipe = Pipeline(from_dict(CFG))
    seen, shots = [], []
    arrived = {}
    for topic, payload, rx in inputs:
        msg = json.loads(payload)
        for e in msg.get("events", ()):
            arrived.setdefault(e["seq"], rx)
        for r in pipe.on_message(topic, payload, rx)[2]:
            if isinstance(r, (EventRecord, LateRecord)):
                seen.append((r.kind, r.event, arrived[r.event.seq]))
            elif isinstance(r, ShotRecord):
                shots.append(r.shot)
    for r in pipe.tick(H0 + (OFFLINE_S + 40) * 1_000_000) + pipe.flush():
        if isinstance(r, EventRecord):
            seen.append((r.kind, r.event, arrived[r.event.seq]))
        elif isinstance(r, ShotRecord):
            shots.append(r.shot)
    return seen, shots


def test_live_play_after_an_offline_boot_is_not_late_even_if_the_backlog_races_ahead():
    """The soak's case (old node ordering): no event is mapped after it arrived, and live
    play (arrived 20 ms after it happened) is never late. Part of the backlog may be late
    (its provisional times tighten batch by batch), which the node's ordering prevents."""
    inputs, nb, n = offline_boot_inputs("events-first")
    seen, _ = run(inputs)
    assert len(seen) == n
    future = [(e.seq, e.t - rx) for _, e, rx in seen if e.t > rx]
    assert not future, f"events mapped after their arrival: {future[:5]}"
    late_live = [e.seq for typ, e, _ in seen if typ == "late" and e.seq >= nb]
    assert not late_live, f"{len(late_live)} live events late: {late_live[:5]}"
    # live play is mapped with the sync sample: exact
    assert all(e.t == H0 + e.t_node for _, e, _ in seen if e.seq >= nb)


def test_sync_first_maps_the_backlog_exactly_and_nothing_is_late():
    inputs, _nb, n = offline_boot_inputs("sync-first")
    seen, shots = run(inputs)
    assert [typ for typ, _, _ in seen] == ["event"] * n
    assert all(e.t == H0 + e.t_node and e.synced for _, e, _ in seen)
    assert sum(len(s["rails"]) for s in shots) == n  # every event is in a shot


def test_status_uptime_bounds_the_offset_when_the_sync_exchange_is_lost():
    """Without any sync sample, status.uptime_us (node time at publish) arrived 3 ms later:
    the backlog is mapped within those 3 ms, in order, none late."""
    inputs, _nb, n = offline_boot_inputs("status-only")
    seen, shots = run(inputs)
    assert [typ for typ, _, _ in seen] == ["event"] * n
    for _, e, rx in seen:
        assert not e.synced and 0 <= e.t - (H0 + e.t_node) <= 3_000 and e.t <= rx
    assert sum(len(s["rails"]) for s in shots) == n


def test_offline_assemble_gives_the_daemons_shots():
    """The provisional mapping depends only on the inputs (payloads and their journalled
    receive times): `railbird assemble` of the same lines gives the same shots."""
    for order in ("events-first", "sync-first", "status-only"):
        inputs, _, _ = offline_boot_inputs(order)
        _, shots = run(inputs)
        lines = [
            json.dumps({"topic": t, "payload": json.loads(p), "rx": rx}) for t, p, rx in inputs
        ]
        lines.append(json.dumps({"tick": H0 + (OFFLINE_S + 40) * 1_000_000}))
        out = list(assemble(lines, from_dict(CFG)))
        assert out == [json.dumps(s, sort_keys=True, separators=(",", ":")) for s in shots]
        assert out == list(assemble(lines, from_dict(CFG)))


def test_arrival_offset_is_the_tightest_bound_and_capped_at_arrival():
    c = BootClock()
    c.observe_arrival(8_000_000, 30_000_000)  # oldest backlog batch: bound 22 s
    assert c.to_table(7_000_000) == 29_000_000
    assert c.to_table(9_000_000, rx=30_000_000) == 30_000_000  # never after its arrival
    c.observe_arrival(20_000_000, 30_001_000)  # newer batch: bound 10.001 s
    c.observe_arrival(21_000_000, 40_000_000)  # a looser bound changes nothing
    assert c.to_table(7_000_000) == 17_001_000 and not c.synced
    c.observe_arrival(5_000, None)  # no arrival time: no information
    assert c.fallback == 10_001_000
