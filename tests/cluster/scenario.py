"""The cluster failover scenario, short in `make test` and long in `make soak-cluster`.

Three nats-server processes (JetStream, R3, MQTT gateway) and two `railbird run` workers on
loopback; simulated nodes running the real firmware (rbnode.simnode) publish random play
through the MQTT gateway of the servers that stay up. Mid-play the stream's leader server is
SIGKILLed, then the worker that owns the most tables. Afterwards: every event in the
journals exactly once, each table's events in the single-host order, its shots and its
last state equal to the single-host run of the stream (railbird.cluster.reference), and the
time until the dead worker's tables are served again.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import time
from pathlib import Path

import paho.mqtt.client as paho

from harness.hostproc import RailbirdRun
from harness.nats import connect, nats_cluster, stream_messages, worker_config
from harness.waiting import wait_for
from railbird.cluster import subjects
from railbird.cluster.ingest import META_PREFIX
from railbird.cluster.reference import journalled, reference_run, run_stream
from railbird.config import load
from railbird.core.pipeline import Pipeline
from rbnode.simnode import SimNode
from rbproto import codec

FREEZE_S = 0.3  # the longest a worker is frozen before its kill (lease_s is 4 s) ...
RUN_S = 0.7  # ... and how long it runs between two freezes (it renews every lease_s / 4)


def stream_leader(urls) -> str:
    async def run():
        nc = await connect(urls)
        try:
            for _ in range(100):
                try:
                    info = await nc.jetstream(timeout=2).stream_info(subjects.STREAM)
                    if info.cluster and info.cluster.leader:
                        return info.cluster.leader
                except Exception:  # noqa: BLE001 - not created yet
                    pass
                await asyncio.sleep(0.2)
            raise AssertionError("the stream has no leader")
        finally:
            await nc.close()

    return asyncio.run(run())


def drained(urls, tables) -> bool:
    """Every table's consumer has nothing left to deliver and nothing unacknowledged."""

    async def run():
        nc = await connect(urls)
        try:
            js = nc.jetstream(timeout=2)
            for t in tables:
                ci = await js.consumer_info(subjects.STREAM, subjects.consumer_name("club", t))
                if ci.num_pending or ci.num_ack_pending:
                    return False
            return True
        finally:
            await nc.close()

    try:
        return asyncio.run(run())
    except Exception:  # noqa: BLE001 - a consumer being re-created: not yet
        return False


def settled(cfg, urls) -> bool:
    """The stream, run as one host would (railbird.cluster.reference), leaves nothing in
    play: no table with a shot open or an event held in its window."""
    pipe = run_stream(Pipeline(cfg), cfg, stream_messages(urls))
    if pipe.stats()["pending"]:
        return False
    return not any(t.shot_in_play() for t in pipe.tables.values())


def referee_lags(port: int, tables) -> None:
    """The lag of every table, as a referee console sends it (MQTT QoS 1 to the gateway):
    the rules rule nothing before it, so without it every table's state would stay put."""
    c = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id="referee", protocol=paho.MQTTv311)
    c.connect("127.0.0.1", port)
    c.loop_start()
    try:
        for i, t in enumerate(sorted(tables)):
            msg = {"v": 1, "input": {"type": "lag", "winner": i % 2}, "id": f"lag-{t}"}
            info = c.publish(codec.topic("club", t, "referee"), codec.encode("referee", msg), qos=1)
            info.wait_for_publish(10)
    finally:
        c.loop_stop()
        c.disconnect()


def kill_quiesced(w: RailbirdRun, urls, tables, timeout: float = 60.0) -> int:
    """SIGKILL `w` at an instant when the server holds nothing of `tables` delivered and
    unacknowledged -> how many tries it took. The worker is frozen (SIGSTOP) while its
    tables' consumers are asked, so nothing is journalled between the answer and the
    kill: with no acknowledgement pending, everything it journalled is below the floor a
    survivor takes over from, and whatever reaches it afterwards (into a frozen process)
    the survivor journals instead. Its stats file cannot tell this: it is a snapshot, and
    a delivery journalled after it, its acknowledgement not yet confirmed, is the window
    docs/scaling.md's failure table documents (journalled by both workers), which this
    test does not exercise. Not yet: the worker runs on a moment, and is asked again.
    A freeze lasts at most FREEZE_S and the worker runs RUN_S between two: an answer
    slower than that counts as not yet, since a worker frozen (or starved) past its lease
    and let go on is the other window that table documents (both may journal until it
    notices)."""
    pid = w.proc.pid

    async def run() -> int:
        nc = await connect(urls)
        try:
            js = nc.jetstream(timeout=FREEZE_S)
            names = [subjects.consumer_name("club", t) for t in sorted(tables)]
            deadline = time.monotonic() + timeout
            tries = 0
            while True:
                if tries:
                    await asyncio.sleep(RUN_S)  # its leases renewed, its deliveries taken
                tries += 1
                os.kill(pid, signal.SIGSTOP)
                try:
                    infos = await asyncio.wait_for(
                        asyncio.gather(*(js.consumer_info(subjects.STREAM, n) for n in names)),
                        FREEZE_S,
                    )
                    pending = sum(ci.num_ack_pending for ci in infos)
                    floors = {
                        t: ci.ack_floor.stream_seq
                        for t, ci in zip(sorted(tables), infos, strict=True)
                    }
                except Exception:  # noqa: BLE001 - slow, or a consumer leader moving: again
                    pending = -1
                # and the floor covers its journal: a consumer whose leader moved (the test
                # kills the stream leader first) can count nothing pending while the
                # acknowledgements of what the worker journalled were lost with the old
                # leader, which is the documented window again (seen on a loaded machine:
                # a table's first five events journalled by both workers)
                if pending == 0 and covered(floors, w.journal, tables):
                    w.kill()  # SIGKILL ends a stopped process too
                    return tries
                os.kill(pid, signal.SIGCONT)
                if time.monotonic() > deadline:
                    raise AssertionError(f"{tables}: never nothing unacknowledged")
        finally:
            await nc.close()

    return asyncio.run(run())


def journal_positions(path, tables) -> dict:
    """table -> the newest stream sequence the worker journalled of it (the `meta` row
    railbird.cluster.ingest commits with its inputs); read-only, so a frozen worker's
    journal can be read: only committed transactions are seen."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        out = {}
        for t in tables:
            row = db.execute(
                "SELECT value FROM meta WHERE key = ?", (f"{META_PREFIX}club/{t}",)
            ).fetchone()
            out[t] = int(row[0]) if row else 0
        return out
    finally:
        db.close()


def covered(floors: dict, journal, tables) -> bool:
    try:
        return all(floors[t] >= pos for t, pos in journal_positions(journal, tables).items())
    except sqlite3.OperationalError:  # the journal busy (a frozen checkpoint): not yet
        return False


def owned(w: RailbirdRun) -> set:
    s = w.stats()
    if s.get("cluster_takeovers_pending"):
        return set()
    return set(s.get("cluster_tables") or ())


def run(tmp: Path, n_tables: int, play_s: float, drops: int, rails: int) -> dict:
    """The scenario; whatever fails, no worker or node outlives it."""
    workers: dict = {}
    nodes: list = []
    try:
        return _run(tmp, n_tables, play_s, drops, rails, workers, nodes)
    finally:
        _stop(workers, nodes)


def _stop(workers: dict, nodes: list) -> None:
    for sn in nodes:
        sn.stop()
    for w in workers.values():
        if w.alive:
            w.kill()


def _run(tmp, n_tables, play_s, drops, rails, workers: dict, nodes: list) -> dict:
    tables = {f"t{i}": f"t{i}-node" for i in range(1, n_tables + 1)}
    figures: dict = {}
    with nats_cluster(tmp / "nats") as c:
        for name in ("w1", "w2"):  # started together, as a hall's hosts boot
            workers[name] = RailbirdRun(tmp / name, worker_config(c, name, tables))
            workers[name].start(lambda s: True, "started")
        for w in workers.values():
            w.wait(lambda s: s.get("connected"), "worker connected", timeout=60)

        def shared() -> bool:
            """Both workers serve, between them, every table."""
            w1, w2 = owned(workers["w1"]), owned(workers["w2"])
            return bool(w1 and w2 and w1 | w2 == set(tables))

        wait_for(shared, "the tables shared by both workers", 60)
        referee_lags(c.mqtt_ports[0], tables)  # the referee starts each match, over MQTT
        leader = stream_leader(c.nats_urls)
        victim = next(i for i in range(c.size) if c.name(i) == leader)
        gateways = [c.mqtt_ports[i] for i in range(c.size) if i != victim]
        for i, (t, n) in enumerate(sorted(tables.items())):
            sn = SimNode("127.0.0.1", gateways[i % 2], "club", t, n, "pw", str(tmp / n), seed=i + 1)
            sn.start()
            nodes.append(sn)
        try:
            for sn in nodes:
                sn.wait_connected(20)
            for sn in nodes:
                sn.random(play_s, drops=drops, rails=rails, min_gap_us=150_000)
            t_play = time.monotonic()
            time.sleep(play_s * 0.25)
            c.kill(victim)  # the stream's leader: R3 keeps every message
            figures["nats_killed"] = leader
            time.sleep(play_s * 0.25)
            # a worker whose renewals the leader election held past 3/4 of lease_s fenced its
            # leases (docs/scaling.md: tables unserved for seconds, scores intact); the
            # failover below starts from a cluster that serves every table again
            wait_for(shared, "every table served again after the leader's loss", 60)
            # the worker holding the most tables dies, with nothing in flight unacknowledged
            name = max(workers, key=lambda w: len(owned(workers[w])))
            dead, survivor = workers[name], workers["w2" if name == "w1" else "w1"]
            orphans = owned(dead)
            assert orphans, f"{name} serves no table: {dead.stats()}"
            figures["kill_tries"] = kill_quiesced(dead, c.nats_urls, orphans)
            t_kill = time.monotonic()
            # tables the survivor already served at the kill: a lease lost earlier (with the
            # stream's leader); then "served again" measures nothing, and both may have
            # journalled (docs/scaling.md); 0 in a run that exercised the failover
            figures["taken_before_kill"] = sorted(orphans & owned(survivor))
            wait_for(
                lambda: orphans <= owned(survivor), "the orphaned tables served again", 60, 0.02
            )
            figures["failover_s"] = round(time.monotonic() - t_kill, 2)
            figures["worker_killed"] = name
            figures["orphaned_tables"] = len(orphans)
            wait_for(lambda: time.monotonic() - t_play > play_s + 1, "the end of play", play_s)
            wait_for(
                lambda: all(sn.idle() for sn in nodes),
                lambda: (
                    "the nodes idle: "
                    + "; ".join(f"{sn.node_id}: {sn.connected()} {sn.counters()}" for sn in nodes)
                ),
                60,
            )
            wait_for(lambda: drained(c.nats_urls, tables), "every message journalled", 60)
            # the last shots close on ticks quiet_ms (0.4 s) and the window after their last
            # events: waited for until the stream holds them (not a fixed 1.5 s, which a
            # loaded worker may not keep; a tick journalled after the stream is read would
            # be a shot the single-host run lacks)
            cfg = load(workers["w1"].conf)
            # (every 2 s: each read is a consumer, and churning them slows the cluster)
            wait_for(lambda: settled(cfg, c.nats_urls), "the last shots closed", 60, 2.0)
            wait_for(lambda: drained(c.nats_urls, tables), "the last ticks journalled", 60)
            messages = stream_messages(c.nats_urls)
            survivor.stop()
        finally:
            _stop(workers, nodes)
    figures["reference"] = reference_run(cfg, messages)
    figures["journals"] = journalled([w.journal for w in workers.values()])
    figures["journal_paths"] = {name: w.journal for name, w in workers.items()}
    figures["messages"] = len(messages)
    figures["inputs"] = sum(1 for m in messages if subjects.host_input(m[2]))
    return figures


def event_diff(got: list, ref: list) -> str:
    """Where a table's journalled events part from the single-host run's, to read in CI."""
    missing = [e for e in ref if e not in set(got)]
    extra = [e for e in got if e not in set(ref)]
    i = next(
        (k for k, (a, b) in enumerate(zip(got, ref, strict=False)) if a != b),
        min(len(got), len(ref)),
    )
    return (
        f"events differ: {len(got)} journalled, {len(ref)} in the single-host run; "
        f"missing {missing[:5]}, extra {extra[:5]}; first difference at {i}: "
        f"journalled {got[max(0, i - 2) : i + 3]}, single host {ref[max(0, i - 2) : i + 3]}"
    )


def where_journalled(paths: dict, keys) -> list:
    """(worker, table, node, seq, wall time) of every copy of the (node, boot, seq) `keys`,
    by wall time: which worker journalled an event twice-over, and when (compare with the
    workers' host.log: a lease lost or a takeover)."""
    out = []
    for name, path in sorted(paths.items()):
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            for node, boot, seq in keys:
                rows = db.execute(
                    "SELECT e.tbl, i.wall FROM events e JOIN inputs i ON i.id = e.input_id "
                    "WHERE e.node = ? AND e.boot = ? AND e.seq = ?",
                    (node, boot, seq),
                ).fetchall()
                out += [(name, tbl, node, seq, round(wall, 2)) for tbl, wall in rows]
        finally:
            db.close()
    return sorted(out, key=lambda r: r[4])


def check(fig: dict) -> None:
    ref, got = fig["reference"], fig["journals"]
    assert got["duplicates"] == [], (
        f"events journalled twice: {got['duplicates'][:5]}; copies: "
        f"{where_journalled(fig['journal_paths'], got['duplicates'][:5])}"
    )
    assert sum(map(len, ref["events"].values())) > 0, "no event reached the stream"
    assert set(got["events"]) == set(ref["events"])
    for t in sorted(ref["events"]):
        assert got["events"][t] == ref["events"][t], (
            f"{t}: {event_diff(got['events'][t], ref['events'][t])}"
        )
        assert got["shots"].get(t, []) == ref["shots"].get(t, []), f"{t}: shots differ"
    assert set(ref["states"]) == set(ref["events"]), "a table's match never started"
    assert got["states"] == ref["states"], "last states differ"
