"""Node watermarks (`wm` in a batch, issue 15 item 4; docs/shots.md "Release"): a table with
one node that sends `wm` releases its events as soon as the node says they are complete,
with no reorder window; across nodes the window is sized from the clock models' measured
uncertainty; old firmware (no `wm`), an unsynced node or a held one keep the window.

In-process, no broker: the Pipeline driven as the daemon drives it, with host receive times.
No assertion here depends on wall-clock time: "at once" means in the records of the very
message that carried the watermark, with no tick in between.
"""

import json

from hypothesis import HealthCheck, given, settings, strategies as st

from railbird.config import from_dict
from railbird.core import snapshot
from railbird.core.pipeline import XWINDOW_FLOOR_US, Pipeline, shot_json
from railbird.core.records import EventRecord, InplayRecord, LateRecord, ShotRecord
from rbproto import codec

from . import scripts as S

OFF = 5_000_000_000  # host µs = node µs + OFF
A, B = "t1-pockets", "t1-rails"


def cfg(nodes=(S.NODE,), **top):
    d = {"venue": S.VENUE, "tables": {S.TABLE: {"nodes": list(nodes)}}}
    d.update(top)
    return from_dict(d)


def batch(events, wm=None, node=S.NODE, boot=1):
    msg = {"v": 1, "node": node, "boot": boot, "events": [dict(e) for e in events]}
    if wm is not None:
        msg["wm"] = wm
    return codec.topic(S.VENUE, S.TABLE, "events", node), codec.encode("events", msg)


def synced(p, node=S.NODE, delay_us=200, boot=1):
    topic, payload = S.sync_result(OFF, node=node, t1=100, delay_us=delay_us, boot=boot)
    assert p.on_message(topic, payload, OFF + 1000)[0] == "ok"


def released(records):
    return [(r.event.kind, r.event.t - OFF) for r in records if isinstance(r, EventRecord)]


def table(p):
    return p.tables[(S.VENUE, S.TABLE)]


# -- one node --------------------------------------------------------------------------------
def single_node_drop(wm=True, sync=True):
    """A synced node: a rail hit, then a drop whose beam cleared 40 ms later (the batch that
    carries it says all is in up to then). -> (pipeline, records of the drop's batch)."""
    p = Pipeline(cfg())
    if sync:
        synced(p)
    rail, drop = S.number([S.ev(1000, "rail", rail="F", amp=900), S.ev(1300, "drop", pocket="SL")])
    p.on_message(*batch([rail], wm=1_020_000 if wm else None), OFF + 1_020_000)
    recs = p.on_message(*batch([drop], wm=1_340_000 if wm else None), OFF + 1_360_000)[2]
    return p, recs


def test_single_node_drop_is_released_by_the_batch_whose_wm_covers_it():
    p, recs = single_node_drop()
    assert released(recs) == [("drop", 1_300_000)]  # the rail came out with its own batch
    (inplay,) = [r.inplay for r in recs if isinstance(r, InplayRecord)]
    assert inplay["pocketed"] == [{"pocket": "SL", "t": OFF + 1_300_000}]
    assert table(p).timeline.pending == 0


def test_old_firmware_without_wm_keeps_the_reorder_window():
    p, recs = single_node_drop(wm=False)
    assert released(recs) == [] and table(p).timeline.pending == 2
    # the window still releases them: 500 ms after the drop, by the tick
    assert released(p.tick(OFF + 1_300_000 + 500_000)) == [("rail", 1_000_000), ("drop", 1_300_000)]


def test_an_unsynced_node_is_not_released_by_its_wm():
    """Before its first time-sync sample a node's times are estimates that may still move
    back: its wm releases nothing."""
    p, recs = single_node_drop(sync=False)
    assert released(recs) == [] and table(p).marks[S.NODE].wm is None


def test_a_held_node_is_not_released_by_its_wm():
    """The host lost the broker: the node holds its table until it shows it is caught up
    (docs/host.md "Per-node watermarks"); a wm in its backlog does not end the hold."""
    p = Pipeline(cfg())
    synced(p)
    evs = S.number([S.ev(1000, "rail", rail="F", amp=900), S.ev(1300, "drop", pocket="SL")])
    p.on_message(*batch(evs[:1], wm=1_020_000), OFF + 1_020_000)
    p.on_reconnect(OFF + 20_000_000)
    recs = p.on_message(*batch(evs[1:], wm=1_340_000), OFF + 21_000_000)[2]
    assert released(recs) == []  # held at known - window; the late batch is not live
    assert table(p).marks[S.NODE].holding


def test_a_lower_wm_is_ignored_and_a_new_boot_starts_afresh():
    p = Pipeline(cfg())
    synced(p)
    e0, e1 = S.number([S.ev(1000, "rail", rail="F", amp=900), S.ev(1100, "rail", rail="H", amp=9)])
    p.on_message(*batch([e0], wm=1_050_000), OFF + 1_060_000)
    m = table(p).marks[S.NODE]
    high = m.wm
    p.on_message(*batch([e1], wm=1_040_000), OFF + 1_120_000)
    assert m.wm == high
    p.on_message(*batch([dict(e0, seq=0)], boot=2), OFF + 2_000_000)  # rebooted: no wm yet
    assert m.wm is None and m.wm_boot == 2


def test_without_receive_times_wm_still_releases():
    """`railbird assemble` lines may carry no `rx`: the watermark is taken as mapped."""
    p = Pipeline(cfg())
    synced(p)
    e0, e1 = S.number([S.ev(1000, "rail", rail="F", amp=900), S.ev(1500, "rail", rail="H", amp=9)])
    assert released(p.on_message(*batch([e0], wm=1_020_000), None)[2]) == [("rail", 1_000_000)]
    assert released(p.on_message(*batch([e1], wm=1_520_000), None)[2]) == [("rail", 1_500_000)]


def test_a_forgotten_boot_takes_its_wm_along():
    """A node that rebooted BOOTS_KEPT times since its last batch: the old boot's clock
    model is forgotten, and its watermark with it (it would be mapped by nothing)."""
    p = Pipeline(cfg())
    synced(p)
    (e0,) = S.number([S.ev(1000, "rail", rail="F", amp=900)])
    p.on_message(*batch([e0], wm=1_020_000), OFF + 1_030_000)
    m = table(p).marks[S.NODE]
    assert m.wm is not None
    for boot in range(2, 7):  # sync samples of later boots only
        synced(p, boot=boot)
    assert m.wm is None and m.wm_boot is None


def test_wm_never_runs_past_the_batchs_arrival():
    """A node cannot have sent what has not happened: a wm stamped beyond the batch's
    arrival (a broken clock) is taken as the arrival, so later events are not late."""
    p = Pipeline(cfg())
    synced(p)
    e0, e1 = S.number([S.ev(1000, "rail", rail="F", amp=900), S.ev(1500, "rail", rail="H", amp=9)])
    p.on_message(*batch([e0], wm=900_000_000), OFF + 1_020_000)
    assert table(p).marks[S.NODE].wm == OFF + 1_020_000
    recs = p.on_message(*batch([e1], wm=1_520_000), OFF + 1_520_000)[2]
    assert not [r for r in recs if isinstance(r, LateRecord)]
    assert released(recs) == [("rail", 1_500_000)]


# -- two nodes ---------------------------------------------------------------------------------
def test_two_nodes_window_from_clock_uncertainty_and_order_kept():
    """Pockets on one board, rails on another, both sending wm. The pocket board's drop
    waits for the rail board, which is silent: for the cross-node window (floor + twice the
    larger measured uncertainty), not the configured 500 ms. A rail hit stamped before the
    drop that arrives in that time is released before it."""
    p = Pipeline(cfg((A, B)))
    synced(p, A, delay_us=200)
    synced(p, B, delay_us=6000)
    t = table(p)
    rail = S.number([S.ev(900, "rail", rail="F", amp=900)])
    assert released(p.on_message(*batch(rail, 920_000, B), OFF + 920_000)[2]) == []  # A unheard
    first = S.number([S.ev(100, "rail", rail="H", amp=9)])
    assert released(p.on_message(*batch(first, 120_000, A), OFF + 930_000)[2]) == [
        ("rail", 100_000)
    ]
    ua = p.clocks.get(A, 1).uncertainty_us()
    ub = p.clocks.get(B, 1).uncertainty_us()
    assert ub > ua > 0
    xw = p.cross_window(t)
    assert xw == XWINDOW_FLOOR_US + 2 * ub < p.cfg.window_us
    drop = S.number([S.ev(1300, "drop", pocket="SL")], first_seq=1)
    recs = p.on_message(*batch(drop, wm=1_340_000, node=A), OFF + 1_360_000)[2]
    assert released(recs) == [("rail", 900_000)]  # B is complete up to its wm only
    # B's rail hit 20 ms before the drop comes after it (its batch left later): put before
    # it, both released as soon as B's wm says B is complete past the drop
    late_rail = S.number([S.ev(1280, "rail", rail="H", amp=400)], first_seq=1)
    recs = p.on_message(*batch(late_rail, 1_340_000, B), OFF + 1_365_000)[2]
    assert released(recs) == [("rail", 1_280_000), ("drop", 1_300_000)]
    # B silent: A's next drop waits the cross-node window, not 500 ms
    drop = S.number([S.ev(2000, "drop", pocket="FR")], first_seq=2)
    assert released(p.on_message(*batch(drop, 2_040_000, A), OFF + 2_060_000)[2]) == []
    assert released(p.tick(OFF + 2_000_000 + xw - 1)) == []
    assert released(p.tick(OFF + 2_000_000 + xw)) == [("drop", 2_000_000)]
    assert p.counters["late"] == 0


def test_cross_window_is_capped_by_the_configured_window():
    p = Pipeline(cfg((A, B), reorder_window_ms=100))
    synced(p, A)
    synced(p, B)
    p.on_message(*batch(S.number([S.ev(900, "rail", rail="F", amp=9)]), 920_000, A), OFF + 920_000)
    assert p.cross_window(table(p)) == 100_000


def test_one_node_without_wm_keeps_the_whole_table_on_the_window():
    p = Pipeline(cfg((A, B)))
    synced(p, A)
    synced(p, B)
    p.on_message(*batch(S.number([S.ev(900, "rail", rail="F", amp=9)]), None, B), OFF + 920_000)
    drop = S.number([S.ev(1300, "drop", pocket="SL")])
    p.on_message(*batch(drop, wm=1_340_000, node=A), OFF + 1_360_000)
    assert p.release_window(table(p)) == 500_000
    assert released(p.tick(OFF + 1_300_000 + 499_999)) == [("rail", 900_000)]
    assert released(p.tick(OFF + 1_300_000 + 500_000)) == [("drop", 1_300_000)]


# -- property: one node, any batching ----------------------------------------------------------
KINDS = st.sampled_from(["rail", "drop", "strike", "cue"])


@st.composite
def node_stream(draw):
    """One node's events (gaps 1 ms-3 s) and the batches it sends them in: a drop goes out
    when its beam clears (30-50 ms after its time), everything else at once; a batch leaves
    at most the linger (20 ms) after its first event is ready, with up to 6 of those ready
    by then, carrying wm = the earliest time not yet sent (the oldest event still held, or
    the batch's send time). Some batches are re-sent (QoS 1)."""
    n = draw(st.integers(1, 40))
    t, evs = 1_000_000, []
    for _ in range(n):
        t += draw(st.integers(1_000, 3_000_000))
        kind = draw(KINDS)
        e = {"t": t, "kind": kind}
        sent = t
        if kind == "rail":
            e.update(rail=draw(st.sampled_from(["F", "H", "LF"])), amp=draw(st.integers(1, 4095)))
        elif kind == "drop":
            e.update(pocket=draw(st.sampled_from(["SL", "FR", "HL"])))
            sent = t + draw(st.integers(30_000, 50_000))
        evs.append((sent, e))
    evs.sort(key=lambda x: x[0])  # the order the node emits them in
    for seq, (_, e) in enumerate(evs):
        e["seq"] = seq
    batches, i = [], 0
    while i < n:
        now = evs[i][0] + draw(st.integers(0, 20_000))
        k = draw(st.integers(1, 6))
        chunk = [e for s, e in evs[i : i + k] if s <= now]
        i += len(chunk)
        held = [e["t"] for s, e in evs[i:] if e["t"] <= now]
        batches.append((now, chunk, min([now, *held])))
        if draw(st.booleans()) and draw(st.booleans()):
            batches.append((now + 5_000, chunk, min([now, *held])))
    return [e for _, e in evs], batches


def run_stream(batches, split=None):
    """The batches through a pipeline (a tick every 100 ms of host time between them);
    `split`: dump and load the pipeline's snapshot before that batch, as a restart does."""
    config = cfg()
    p = Pipeline(config)
    synced(p)
    recs, tick = [], OFF
    for i, (now, evs, wm) in enumerate(batches):
        if i == split:
            p = snapshot.load(config, snapshot.decode(snapshot.encode(snapshot.dump(p))))
        rx = OFF + now + 15_000
        while tick + 100_000 < rx:
            tick += 100_000
            recs += p.tick(tick)
        recs += p.on_message(*batch(sorted(evs, key=lambda e: e["seq"]), wm=wm), rx)[2]
    return recs + p.flush()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(node_stream(), st.integers(0, 60))
def test_any_batching_with_wm_releases_in_time_order_once_and_replays_alike(stream, split):
    evs, batches = stream
    recs = run_stream(batches)
    out = [r.event for r in recs if isinstance(r, EventRecord)]
    assert not [r for r in recs if isinstance(r, LateRecord)]
    assert [e.seq for e in out] == [e["seq"] for e in sorted(evs, key=lambda e: e["t"])]
    assert [e.t for e in out] == sorted(e.t for e in out)
    shots = [shot_json(r.shot) for r in recs if isinstance(r, ShotRecord)]
    # a replay, and a restart from a snapshot anywhere, give the same records
    again = run_stream(batches, split=split % (len(batches) + 1))
    assert [shot_json(r.shot) for r in again if isinstance(r, ShotRecord)] == shots
    assert json.dumps([r.inplay for r in again if isinstance(r, InplayRecord)]) == json.dumps(
        [r.inplay for r in recs if isinstance(r, InplayRecord)]
    )
