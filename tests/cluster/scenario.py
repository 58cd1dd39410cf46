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
import time
from pathlib import Path

import paho.mqtt.client as paho

from harness.hostproc import RailbirdRun
from harness.nats import connect, nats_cluster, stream_messages, worker_config
from harness.waiting import wait_for
from railbird.cluster import subjects
from railbird.cluster.reference import journalled, reference_run
from railbird.config import load
from rbnode.simnode import SimNode
from rbproto import codec


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
        # both workers serve, between them, every table
        wait_for(
            lambda: (
                owned(workers["w1"]) | owned(workers["w2"]) == set(tables)
                and owned(workers["w1"])
                and owned(workers["w2"])
            ),
            "the tables shared by both workers",
            60,
        )
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
            # the worker holding the most tables dies, with nothing in flight unacknowledged
            name = max(workers, key=lambda w: len(owned(workers[w])))
            dead, survivor = workers[name], workers["w2" if name == "w1" else "w1"]
            orphans = owned(dead)
            dead.wait(lambda s: not s.get("cluster_unacked"), "no delivery in flight", 10)
            t_kill = time.monotonic()
            dead.kill()
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
            time.sleep(1.5)  # quiet_ms (0.4 s) and the window: the last shots close
            wait_for(lambda: drained(c.nats_urls, tables), "the last ticks journalled", 60)
            messages = stream_messages(c.nats_urls)
            survivor.stop()
        finally:
            _stop(workers, nodes)
    cfg = load(workers["w1"].conf)
    figures["reference"] = reference_run(cfg, messages)
    figures["journals"] = journalled([w.journal for w in workers.values()])
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


def check(fig: dict) -> None:
    ref, got = fig["reference"], fig["journals"]
    assert got["duplicates"] == [], f"events journalled twice: {got['duplicates'][:5]}"
    assert sum(map(len, ref["events"].values())) > 0, "no event reached the stream"
    assert set(got["events"]) == set(ref["events"])
    for t in sorted(ref["events"]):
        assert got["events"][t] == ref["events"][t], (
            f"{t}: {event_diff(got['events'][t], ref['events'][t])}"
        )
        assert got["shots"].get(t, []) == ref["shots"].get(t, []), f"{t}: shots differ"
    assert set(ref["states"]) == set(ref["events"]), "a table's match never started"
    assert got["states"] == ref["states"], "last states differ"
