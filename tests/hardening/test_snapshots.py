"""Issue 13, item 14: journal snapshots. A restart loads the last snapshot and replays only the
inputs after it, so its time is bounded by the state, not the history; the result must be
exactly what a replay of every input gives.

- For random input streams (events of three nodes on two tables with duplicates, reused
  sequence numbers, sync samples, statuses and last wills, host reconnects, ticks, referee
  input of every kind, bad messages), a pipeline dumped and loaded at random points gives
  the same records and ends in the same state, byte for byte, as one that saw the stream
  without a break.
- The same state gives the same bytes in another process (different string hashes).
- Every attribute of the pipeline's state classes is one `railbird.core.snapshot` knows.
- The daemon writes snapshots in its journal transaction; a restart starts from the newest
  and gives the outputs the same history and the pipeline the same state as a replay of
  every input; `railbird replay --check` compares every kept snapshot with the replay (and
  finds a wrong one), `--from-snapshot --check` starts where a restart does.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
import zlib
from dataclasses import replace

from hypothesis import HealthCheck, example, given, settings, strategies as st

from harness.waiting import poll
from railbird.config import from_dict
from railbird.core import snapshot as snap
from railbird.core.pipeline import Pipeline
from railbird.core.records import StateRecord
from railbird.daemon import snapshots
from railbird.daemon.journal import Journal
from railbird.daemon.replay import rebuild
from railbird.daemon.worker import Daemon
from rbproto import codec

from .snapstate import state_bytes

VENUE = "club"
NODES = {"n1": "t1", "n2": "t1", "n3": "t2"}
CONFIG = {
    "venue": VENUE,
    "reorder_window_ms": 200,
    "max_hold_ms": 3000,
    "stats_period_s": 0,
    "referee_token": "582046",
    "shots": {"quiet_ms": 400, "lip_rest_ms": 400, "cue_before_ms": 500},
    "tables": {
        "t1": {"game": "10-ball", "players": ["Ann", "Bob"], "race_to": 2, "nodes": ["n1", "n2"]},
        "t2": {"game": "14.1", "players": ["Cy", "Di"], "target": 5, "nodes": ["n3"]},
    },
}
REFEREE_INPUTS = [
    {"type": "lag", "winner": 0},
    {"type": "lag", "winner": 1},
    {"type": "undo"},
    {"type": "confirm"},
    {"type": "confirm", "pocketed": [{"ball": 1, "pocket": "FL"}]},
    {"type": "confirm", "first_contact": 1, "rail_after_contact": True},
    {"type": "confirm", "fouls": ["double_hit"]},
    {"type": "call", "ball": 2, "pocket": "SL"},
    {"type": "call", "safety": True},
    {"type": "push_out"},
    {"type": "option", "choice": "shoot"},
    {"type": "option", "choice": "pass"},
    {"type": "match"},
    {"type": "match", "players": ["Eve", "Fay"]},
    {"type": "concede", "player": 0},
    {"type": "abandon"},
    {"type": "shot", "pocketed": [{"ball": 3, "pocket": "HL"}], "rail_after_contact": True},
    {"type": "shot", "pocketed": [], "rail_after_contact": False},
    {"type": "rerack"},
]


def config(journal=None):
    d = json.loads(json.dumps(CONFIG))
    if journal is not None:
        d["journal"] = str(journal)
    return from_dict(d)


# -- random input streams ------------------------------------------------------------------
events_op = st.tuples(
    st.just("events"),
    st.sampled_from(sorted(NODES)),
    st.sampled_from([1, 1, 1, 2, 2, 3, 4, 5, 6]),  # boot: more than BOOTS_KEPT, now and then
    st.lists(
        st.tuples(
            st.integers(0, 12),  # seq: small, so reused numbers happen
            st.one_of(st.integers(-300, 900), st.just(3_600_000)),  # ms around the arrival
            st.sampled_from(["drop", "drop", "rail", "rail", "rail", "cue", "jam", "lost"]),
            st.integers(0, 5),
        ),
        min_size=1,
        max_size=4,
    ),
)
referee_op = st.tuples(
    st.just("referee"),
    st.sampled_from(["t1", "t2"]),
    # the lags and the confirms with facts (held while a shot is in play) more often
    st.sampled_from([*range(len(REFEREE_INPUTS)), 0, 1, 4, 4, 5, 5, 6]),
    st.integers(0, 6),  # id (0: none): re-sent ids happen
    st.booleans(),  # over MQTT (with the token) or local
)
ops = st.one_of(
    events_op,
    events_op,
    events_op,
    st.tuples(st.just("resend"), st.integers(0, 50)),  # an earlier events message again
    st.tuples(st.just("tick")),
    st.tuples(st.just("tick")),
    referee_op,
    referee_op,
    st.tuples(
        st.just("sync"), st.sampled_from(sorted(NODES)), st.integers(1, 2), st.integers(0, 3000)
    ),
    st.tuples(
        st.just("status"),
        st.sampled_from(sorted(NODES)),
        st.integers(1, 2),
        st.sampled_from(["online", "offline"]),
        st.integers(0, 3),  # queue
        st.integers(0, 2),  # reconnects
    ),
    st.tuples(st.just("reconnect")),
    st.tuples(st.just("junk"), st.sampled_from([b"{", b'{"v":1}', b"\xff\xfe"])),
)
stream = st.lists(st.tuples(ops, st.integers(1, 1500)), min_size=30, max_size=150)


def boot_at(boot: int) -> int:
    """Host µs at which the boot's clock read 0."""
    return boot * 1_000_000_000


def run_op(p: Pipeline, op, rx: int, sent: list | None = None):
    """One input (`sent`: the events messages so far, for `resend`); -> its result as a
    comparable string."""
    kind = op[0]
    if kind == "resend":
        if not sent:
            return "nothing to re-send"
        topic, payload = sent[op[1] % len(sent)]
        res = p.on_message(topic, payload, rx)
    elif kind == "events":
        _, node, boot, evs = op
        table, out = NODES[node], []
        for seq, dt_ms, ek, x in evs:
            t = max(0, rx - boot_at(boot) + dt_ms * 1000)
            e = {"seq": seq, "t": t, "kind": ek}
            if ek in ("drop", "jam"):
                e["pocket"] = codec.POCKETS[x]
                e["dur"] = 20_000 + x
            elif ek == "rail":
                e.update(rail=codec.RAILS[x], amp=300 + x)
            elif ek == "lost":
                e.update(n=x + 1, rail=codec.RAILS[x])
            out.append(e)
        payload = json.dumps({"v": 1, "node": node, "boot": boot, "events": out}).encode()
        topic = codec.topic(VENUE, table, "events", node)
        if sent is not None:
            sent.append((topic, payload))
        res = p.on_message(topic, payload, rx)
    elif kind == "sync":
        _, node, boot, delay = op
        t1 = max(0, rx - boot_at(boot) - delay)
        body = {"v": 1, "node": node, "boot": boot, "id": rx % 1000, "t1": t1}
        body.update(t2=t1 + boot_at(boot) + delay // 2, t3=t1 + boot_at(boot) + delay // 2 + 5)
        body["t4"] = t1 + delay + 5
        payload = json.dumps(body).encode()
        res = p.on_message(codec.topic(VENUE, NODES[node], "sync_result", node), payload, rx)
    elif kind == "status":
        _, node, boot, state, queue, reconnects = op
        body = {"v": 1, "node": node, "boot": boot, "state": state}
        if state == "online":
            body.update(
                uptime_us=max(0, rx - boot_at(boot)),
                queue=queue,
                spill=0,
                counters={"reconnects": reconnects},
            )
        payload = json.dumps(body).encode()
        res = p.on_message(codec.topic(VENUE, NODES[node], "status", node), payload, rx)
    elif kind == "referee":
        _, table, which, rid, mqtt = op
        msg = {"input": REFEREE_INPUTS[which]}
        if rid:
            msg["id"] = f"r{rid}"
        if mqtt:
            msg["token"] = "582046"
            payload = json.dumps(msg).encode()
            res = p.on_message(codec.topic(VENUE, table, "referee"), payload, rx)
        else:
            res = p.on_referee(VENUE, table, msg, "local")
    elif kind == "tick":
        res = ("tick", None, p.tick(rx))
    elif kind == "reconnect":
        res = ("reconnect", None, p.on_reconnect(rx))
    else:
        res = p.on_message(codec.topic(VENUE, "t1", "events", "n1"), op[1], rx)
    return json.dumps(res, sort_keys=True, default=_plain)


def _plain(x):
    return [getattr(x, k) for k in type(x).__slots__]


def roundtrip(p: Pipeline, cfg) -> Pipeline:
    """Through bytes, as a journal keeps it."""
    return snap.load(cfg, snap.decode(snap.encode(snap.dump(p))))


@settings(
    max_examples=int(os.environ.get("RAILBIRD_SNAPSHOT_EXAMPLES", "60")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(stream, st.lists(st.floats(0, 1), min_size=1, max_size=3))
@example(  # referee facts held for the shot in play when the snapshot is taken
    [
        (("referee", "t1", 0, 0, False), 1),
        (("events", "n1", 1, [(0, 0, "rail", 1)]), 10),
        (("events", "n1", 1, [(1, 0, "drop", 2)]), 100),
        (("referee", "t1", 4, 0, False), 50),
        (("tick",), 1000),
    ],
    [0.8],
)
def test_snapshot_and_tail_equal_the_whole_stream(inputs, cuts):
    cfg = config()
    rx, timed = 2_000_000_000, []
    for op, dt_ms in inputs:
        rx += dt_ms * 1000
        timed.append((op, rx))
    at = sorted({int(c * len(timed)) for c in cuts})

    whole, sent = Pipeline(cfg), []
    expected = [run_op(whole, op, rx, sent) for op, rx in timed]
    expected.append(json.dumps(whole.flush(), sort_keys=True, default=_plain))

    p, got, sent = Pipeline(cfg), [], []
    for i, (op, rx) in enumerate(timed):
        if i in at:
            p = roundtrip(p, cfg)
        got.append(run_op(p, op, rx, sent))
    if len(timed) in at:
        p = roundtrip(p, cfg)
    final = snap.encode(snap.dump(p))
    got.append(json.dumps(p.flush(), sort_keys=True, default=_plain))
    assert got == expected
    whole_again, sent = Pipeline(cfg), []
    for op, rx in timed:
        run_op(whole_again, op, rx, sent)
    assert final == snap.encode(snap.dump(whole_again))


def fixed_stream_bytes() -> bytes:
    """The snapshot of a fixed stream (called in a subprocess by the test below)."""
    p = Pipeline(config())
    for i in range(40):
        kind = ("drop", "rail", "jam")[i % 3]
        run_op(
            p, ("events", f"n{1 + i % 3}", 1, [(i % 13, 50, kind, i % 6)]), 2 * 10**9 + i * 10**5
        )
    return snap.encode(snap.dump(p))


def test_the_same_state_is_the_same_bytes_in_another_process():
    tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = (
        f"import sys; sys.path.insert(0, {tests!r}); import hardening.test_snapshots as t; "
        "sys.stdout.buffer.write(t.fixed_stream_bytes())"
    )
    outs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, env=env)
        assert run.returncode == 0, run.stderr
        outs.add(run.stdout)
    assert len(outs) == 1 and len(next(iter(outs))) > 1000


def test_snapshot_knows_every_attribute_of_the_state():
    """A new attribute of a state class must be added to railbird.core.snapshot (dump and
    load) and to its FIELDS, or restarts would silently lose it."""
    p = Pipeline(config())
    for i in range(30):
        run_op(p, ("events", "n1", 1, [(i, 0, "rail", 1)]), 2_000_000_000 + i * 100_000)
    run_op(p, ("sync", "n1", 1, 100), 2_100_000_000)
    run_op(p, ("referee", "t1", 13, 0, False), 2_100_000_001)  # replaces the configured match
    run_op(p, ("referee", "t1", 0, 0, False), 2_100_000_002)
    t = p.tables[(VENUE, "t1")]
    assert t.assembler.cur is not None and t.game._earlier
    objects = {
        "Pipeline": p,
        "Table": t,
        "NodeMark": t.marks["n1"],
        "Timeline": t.timeline,
        "SeqSet": t.timeline._seen[("n1", 1)],
        "ShotAssembler": t.assembler,
        "_Open": t.assembler.cur,
        "BootClock": p.clocks.get("n1", 1),
        "ClockModels": p.clocks,
        "Game": t.game,
        "Referee": t.game.referee,
        "Event": t.assembler.cur.events[0],
    }
    for name, obj in objects.items():
        have = set(getattr(obj, "__slots__", ())) | set(getattr(obj, "__dict__", {}))
        assert have == snap.FIELDS[name], (
            f"{name}: attributes {sorted(have ^ snap.FIELDS[name])} are not what "
            "railbird.core.snapshot keeps: add them to dump, load and FIELDS"
        )


# -- through the daemon and its journal ----------------------------------------------------
def _mqtt(d: Daemon, op, rx):
    """Put one op into the daemon's inbox as the ingest would (no broker: the transport is
    not what is tested here); returns when the worker has taken it in."""
    kind = op[0]
    if kind == "referee" and not op[4]:
        _, table, which, rid, _ = op
        msg = {"input": REFEREE_INPUTS[which]}
        if rid:
            msg["id"] = f"r{rid}"
        d.referee_input(VENUE, table, msg)
        return
    probe = Pipeline(config())
    seen = []
    probe.on_message = lambda topic, payload, rx: seen.append((topic, payload)) or ("ok", None, [])
    run_op(probe, op, rx)
    before = d.stats()["received"]
    for topic, payload in seen:
        d.inbox.put(("mqtt", rx, topic, payload, None, 1))
    assert poll(lambda: d.stats()["received"] >= before + len(seen), 10, 0.005), d.stats()


class Recorder:
    name = "recorder"

    def __init__(self):
        self.restored = {}

    def restore(self, venue, table, history, nodes):
        self.restored[(venue, table)] = (
            # referee facts are not journalled: a history read from the journal has none
            [replace(r, referee_facts=None) if isinstance(r, StateRecord) else r for r in history],
            nodes,
        )


class DrivenClock:
    """The daemon's host clock (`Daemon.now`, µs), moved by the test: `_play` sets it to each
    message's receive time, so which ticks close which shot depends on the inputs alone, not
    on how fast this machine runs the play."""

    def __init__(self, t: int):
        self.t = t

    def __call__(self) -> int:
        return self.t


def _daemon(cfg, outputs=()) -> Daemon:
    """A daemon with no broker whose host clock the test drives (DrivenClock), started after
    every input its journal holds (a restart's clock is later than the last run's)."""
    d = Daemon(cfg, outputs=outputs, connect=False)
    (last,) = d.journal.db.execute("SELECT MAX(rx) FROM inputs").fetchone()
    d.now = DrivenClock(max(time.monotonic_ns() // 1000, (last or 0) + 1_000_000))
    return d.start()


def _settle(d: Daemon) -> None:
    """Move the daemon's clock past every quiet period and hold (10 s of table time) and wait
    until its ticks have closed every shot: a generous deadline, no fixed sleep."""
    d.now.t += 10_000_000
    assert poll(
        lambda: not any(t.shot_in_play() for t in list(d.pipeline.tables.values())), 60, 0.01
    ), "a shot still in play 60 s after the clock passed its quiet period"


def _play(d: Daemon, n: int, seed: int):
    import random

    rnd = random.Random(seed)
    rx = d.now.t = d.now.t + 1_000_000
    d.referee_input(VENUE, "t1", {"input": {"type": "lag", "winner": 0}})
    d.referee_input(VENUE, "t2", {"input": {"type": "lag", "winner": 1}})
    seq = {"n1": 0, "n2": 0, "n3": 0}
    for i in range(n):
        rx = d.now.t = rx + rnd.randint(50_000, 400_000)
        node = rnd.choice(sorted(NODES))
        kind = rnd.choice(["drop", "rail", "rail", "rail"])
        _mqtt(d, ("events", node, 1, [(seq[node] % 13, 0, kind, rnd.randint(0, 5))]), rx)
        seq[node] += 1
        if i % 17 == 16:
            d.referee_input(VENUE, "t1", {"input": {"type": "confirm"}, "id": f"c{i}"})
        if i % 29 == 28:
            d.referee_input(VENUE, "t2", {"input": {"type": "undo"}})


def _full_replay(cfg, path) -> bytes:
    j = Journal(path)
    try:
        p = Pipeline(cfg)
        rebuild(p, j)
        return state_bytes(p)
    finally:
        j.close()


def _without_snapshots(path, copy):
    """A copy of the journal at `path` with its snapshots removed (a restart replays every
    input, as before snapshots)."""
    shutil.copy(path, copy)
    db = sqlite3.connect(copy)
    db.execute("DELETE FROM snapshots")
    db.commit()
    db.close()
    return copy


def _replay_cli(path, *args):
    return subprocess.run(
        [sys.executable, "-m", "railbird", "replay", str(path), "--check", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _played(path, n: int, seed: int, settle: bool = False):
    """A journal at `path` of a daemon that played `_play(n, seed)`; `settle`: and then let
    its ticks close the last shot (`_settle`)."""
    d = _daemon(config(path))
    try:
        _play(d, n, seed=seed)
        if settle:
            _settle(d)
    finally:
        d.stop()
    return path


def test_a_restart_starts_from_the_newest_snapshot_and_ends_as_a_full_replay(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshots, "EVERY_INPUTS", 7)
    path = _played(tmp_path / "journal.sqlite", 60, seed=1, settle=True)
    cfg = config(path)
    db = sqlite3.connect(path)
    total = db.execute("SELECT COUNT(*) FROM inputs").fetchone()[0]
    kept = [i for (i,) in db.execute("SELECT input_id FROM snapshots ORDER BY input_id")]
    assert len(kept) == snapshots.KEEP_LATEST and kept[-1] > total - 7, (kept, total)
    assert db.execute("SELECT COUNT(*) FROM shots").fetchone()[0] > 3
    db.close()

    full_before = _full_replay(cfg, path)
    rec = Recorder()
    d2 = _daemon(cfg, outputs=[rec])
    try:
        assert d2.replayed == total - kept[-1] < total
        assert state_bytes(d2.pipeline) == full_before
        _play(d2, 20, seed=2)  # and it goes on from there
    finally:
        d2.stop()

    # the outputs get the history a restart by full replay gives
    copy_path = _without_snapshots(path, tmp_path / "copy.sqlite")
    rec_snap, rec_full = Recorder(), Recorder()
    for p, r in ((path, rec_snap), (copy_path, rec_full)):
        d3 = Daemon(config(p), outputs=[r], connect=False).start()
        d3.stop()
    assert rec_snap.restored == rec_full.restored
    assert any(len(h) > 5 for h, _ in rec_full.restored.values())

    for args in ((), ("--from-snapshot",)):
        r = _replay_cli(path, *args)
        assert r.returncode == 0, r.stderr
        assert "shots identical" in r.stderr
    assert "snapshot(s) identical" in _replay_cli(path).stderr


def test_a_venue_of_more_tables_takes_its_snapshots_less_often(tmp_path, monkeypatch):
    """A snapshot holds every table and blocks the worker while it is made: the inputs
    between two grow with the tables (one step per TABLES_PER_STEP), so its share of the
    worker stays about constant at any venue size (docs/performance.md "Scale")."""
    monkeypatch.setattr(snapshots, "EVERY_INPUTS", 7)
    monkeypatch.setattr(snapshots, "TABLES_PER_STEP", 1)  # this venue's 2 tables: 2 steps
    path = tmp_path / "journal.sqlite"
    d = _daemon(config(path))
    try:
        assert len(d.pipeline.tables) == 2
        _play(d, 60, seed=1)
        _settle(d)
    finally:
        d.stop()
    db = sqlite3.connect(path)
    kept = [i for (i,) in db.execute("SELECT input_id FROM snapshots ORDER BY input_id")]
    db.close()
    assert len(kept) == snapshots.KEEP_LATEST
    assert kept[1] - kept[0] >= 14, kept  # 7 inputs x 2 tables, not 7


def test_replay_check_finds_a_snapshot_that_differs_from_the_replay(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshots, "EVERY_INPUTS", 5)
    path = tmp_path / "journal.sqlite"
    d = _daemon(config(path))
    try:
        _play(d, 25, seed=3)
    finally:
        d.stop()
    db = sqlite3.connect(path)
    iid, blob = db.execute(
        "SELECT input_id, state FROM snapshots ORDER BY input_id LIMIT 1"
    ).fetchone()
    data = json.loads(zlib.decompress(blob))
    data["tables"][0][2]["pos"] += 1  # one event more than the inputs say
    db.execute(
        "UPDATE snapshots SET state = ? WHERE input_id = ?",
        (zlib.compress(json.dumps(data, separators=(",", ":")).encode()), iid),
    )
    db.commit()
    db.close()
    r = _replay_cli(path)
    assert r.returncode == 1
    assert f"MISMATCH: the snapshots after input(s) {iid} differ" in r.stderr


def test_a_snapshot_of_another_config_is_passed_over(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshots, "EVERY_INPUTS", 5)
    path = tmp_path / "journal.sqlite"
    d = _daemon(config(path))
    try:
        _play(d, 20, seed=4)
    finally:
        d.stop()
    changed = json.loads(json.dumps(CONFIG))
    changed["journal"] = str(path)
    changed["reorder_window_ms"] = 300
    cfg = from_dict(changed)
    j = Journal(path)
    try:
        pipeline, rb = snapshots.resume(cfg, j)
        assert rb["snapshot"] == 0  # replayed from the beginning under the new config
        assert rb["inputs"] == j.count("inputs")
    finally:
        j.close()
    assert state_bytes(pipeline) == _full_replay(cfg, path)


def _collections_during(fn) -> int:
    """How many garbage collections (any generation) this thread ran while `fn()` did (a
    collection runs in the thread whose allocation set it off: other tests' threads left
    in this process are not counted)."""
    import gc
    import threading

    runs = []
    me = threading.get_ident()

    def seen(phase, info):
        if phase == "start" and threading.get_ident() == me:
            runs.append(info["generation"])

    gc.callbacks.append(seen)
    try:
        fn()
    finally:
        gc.callbacks.remove(seen)
    return len(runs)


def test_a_restart_from_a_snapshot_runs_no_garbage_collection(tmp_path, monkeypatch):
    """Each collection in the middle of a restart walks everything rebuilt so far (a restart
    on a journal of 1,000,000 events: 6.5 s with them, 2.3-2.9 s without). A restart from a
    snapshot replays few inputs and runs none until it is done; without a snapshot every
    input is replayed and collections run as usual, so its cyclic garbage is freed as it
    goes."""
    import gc

    monkeypatch.setattr(snapshots, "EVERY_INPUTS", 7)
    path = _played(tmp_path / "journal.sqlite", 40, seed=5)
    bare = _without_snapshots(path, tmp_path / "bare.sqlite")

    got, collections = {}, {}
    thresholds = gc.get_threshold()
    for name, p in (("snap", path), ("bare", bare)):
        j, c = Journal(p), config(p)
        gc.collect()
        gc.set_threshold(10, 5, 5)  # a collection for every 10 objects kept: a big journal
        try:
            assert gc.isenabled()
            collections[name] = _collections_during(
                lambda c=c, j=j, name=name: got.setdefault(
                    name, snapshots.resume(c, j, since_wall=0)[1]
                )
            )
            assert gc.isenabled()
        finally:
            gc.set_threshold(*thresholds)
            j.close()
    assert got["snap"]["snapshot"] > 0 and got["bare"]["snapshot"] == 0
    # paused, the objects made still count: the collection they are owed runs as it ends
    assert collections["snap"] <= 2 < 10 <= collections["bare"], collections
    assert got["snap"]["history"] == got["bare"]["history"]  # the same outputs' history
