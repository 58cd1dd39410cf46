"""`railbird run` receives MQTT in a child process (railbird.daemon.ingestproc): a real
mosquitto, the simulated node firmware, `railbird run` as a subprocess. The child lives and
dies with the daemon, a child that dies is started again without a message lost, and the
host's liveness on the `host` topic says what happened."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
from pathlib import Path

import pytest

from harness.hostproc import RailbirdRun
from harness.mqttsub import client
from harness.waiting import wait_for
from rbnode.simnode import SimNode
from rbproto import codec

pytestmark = [pytest.mark.broker]

NODE, PW = "t1-node", "node-pw"
CONFIG = """
venue = "club"
subscribe = ["t1"]
reorder_window_ms = 150
stats_period_s = 0
[broker]
host = "127.0.0.1"
port = {port}
user = "railbird-host"
password = "host-secret"
[shots]
quiet_ms = 400
[tables.t1]
game = "10-ball"
race_to = 3
nodes = ["{node}"]
"""


def hits(sn: SimNode, rail: str, n: int) -> None:
    """`n` cushion hits on `rail`, 200 ms apart (well past a rail's refractory time, so
    each is an event of its own), from 50 ms from now."""
    t0 = sn.now_us + 50_000
    for i in range(n):
        sn.rail(rail, 1000 + i, at_us=t0 + i * 200_000)


def journalled(host: RailbirdRun, sn: SimNode, rail: str, n: int) -> dict:
    """`n` hits on `rail`, played out by the node and counted by the daemon -> its stats."""
    before = host.stats().get("events", 0)
    hits(sn, rail, n)
    sn.wait_idle()
    return host.wait(lambda s: s.get("events", 0) >= before + n, f"{n} more events")


def parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None  # gone
    return int(stat.rsplit(")", 1)[1].split()[1])


def gone(pid: int) -> bool:
    """The process has exited (a zombie not yet reaped counts as gone: it runs nothing)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def journalled_events(journal: Path) -> int:
    db = sqlite3.connect(journal)
    try:
        sql = "SELECT COUNT(DISTINCT node || '/' || boot || '/' || seq) FROM events"
        return db.execute(sql).fetchone()[0]
    finally:
        db.close()


def host_state(port: int) -> str:
    """The retained `host` message's state: what a display joining now is told."""
    got: list[bytes] = []
    c = client(port, "railbird-referee", "referee-secret")
    c.on_message = lambda _c, _u, m: got.append(bytes(m.payload))
    c.subscribe(codec.topic("club", None, "host"), qos=1)
    try:
        wait_for(lambda: got, "the retained host message", 10)
    finally:
        c.disconnect()
        c.loop_stop()
    return json.loads(got[-1])["state"]


@pytest.fixture
def rig(broker, tmp_path):
    broker.add_user(NODE, PW)
    host = RailbirdRun(tmp_path / "host", CONFIG.format(port=broker.port, node=NODE))
    host.start()
    sn = SimNode("127.0.0.1", broker.port, "club", "t1", NODE, PW, tmp_path / "node", seed=5)
    sn.start()
    sn.wait_connected()
    yield host, sn
    sn.stop()
    if host.alive:
        host.stop()


def test_the_ingest_is_a_child_of_the_daemon_and_dies_with_it(rig, broker):
    host, sn = rig
    child = host.stats()["ingest_pid"]
    assert child and parent_of(child) == host.proc.pid
    journalled(host, sn, "F", 5)
    host.wait(lambda s: s.get("sync_answered", 0) >= 1, "a time sync answered by the child")
    assert host_state(broker.port) == "online"

    host.kill()  # SIGKILL: the daemon cannot tell the child anything
    wait_for(lambda: gone(child), "the ingest child to exit after its daemon", 15)
    # it left without a DISCONNECT, as the one-process host did: the broker publishes the
    # will, and every display joining now is told the host is offline
    wait_for(lambda: host_state(broker.port) == "offline", "the host's will", 20)


def test_a_child_that_dies_is_started_again_and_nothing_is_lost(rig):
    host, sn = rig
    first = host.stats()["ingest_pid"]
    journalled(host, sn, "F", 5)

    os.kill(first, signal.SIGKILL)
    # the node plays on while the host has no MQTT client: the broker queues for the host's
    # session, and the new child takes the queue over
    hits(sn, "LH", 20)
    sn.wait_idle()
    stats = host.wait(
        lambda s: s.get("ingest_restarts") == 1 and s.get("events", 0) >= 25,
        "a new child and every event",
        30,
    )
    second = stats["ingest_pid"]
    assert second != first and parent_of(second) == host.proc.pid
    assert stats["connects"] >= 2 and stats["sessions_lost"] == 0
    assert stats["events"] == 25
    assert journalled_events(host.journal) == 25
    host.stop()  # SIGTERM: the daemon stops its child and waits for it
    assert gone(second)


def test_a_sigterm_to_every_process_stops_the_daemon_first(rig):
    """systemd stops a unit with SIGTERM to each of its processes (KillMode=control-group),
    and a terminal's Ctrl-C reaches the whole process group: the child stays, still
    receiving, and leaves only after its daemon stopped it."""
    host, sn = rig
    child = host.stats()["ingest_pid"]
    journalled(host, sn, "F", 3)
    os.kill(child, signal.SIGTERM)
    os.kill(child, signal.SIGINT)
    stats = journalled(host, sn, "LH", 3)  # still received, by the same child
    assert stats["ingest_pid"] == child and stats["ingest_restarts"] == 0
    host.stop()  # SIGTERM to the daemon: exit code 0, asserted by stop()
    wait_for(lambda: gone(child), "the child to leave after its daemon", 15)
    assert host.stats().get("ingest_restarts", 0) == 0
