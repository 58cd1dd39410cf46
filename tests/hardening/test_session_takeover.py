"""Issue 13, item 1: no session takeover. The host's persistent session (its QoS 1 queue while
it is away) is keyed by its MQTT client id; any login that can name that id can connect with
it, kick the host off and, connecting with a clean session, destroy the queue. A node's login
sits in `config.json` on every board, so the host's id must not be nameable by one, and a host
that loses its session anyway (a second client with its id) must say so: an error line and a
counter in the stats (protocol/SPEC.md "Security", docs/architecture.md decisions).

Real parts: a private mosquitto with the project config, `railbird run` as a subprocess, a
node login as an attacker with paho."""

from __future__ import annotations

import subprocess
import threading
import time

import paho.mqtt.client as paho
import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.reasoncodes import ReasonCode

from harness.hostproc import RailbirdRun
from harness.mqttsub import subscriber
from railbird.broker import PrivateBroker, free_port
from railbird.config import BrokerConfig, host_client_id
from railbird.daemon.ingest import Ingest

from .nodepub import NodePub, shot_events

pytestmark = [pytest.mark.broker, pytest.mark.slow]

NODE, PW, BOOT = "t1-node", "node-pw", 7
N = 10  # events published while the host is stopped (the probe lost 10 of 10)

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
{client_id}
[shots]
quiet_ms = 400
lip_rest_ms = 400
cue_before_ms = 500
break_window_ms = 500
[tables.t1]
game = "10-ball"
players = ["Ann", "Bob"]
race_to = 3
nodes = ["{node}"]
"""

GUESSABLE = "railbird-host-club"  # the default id before the fix: railbird-host-<venue>


def attacker(port: int, client_id: str, user: str, password: str) -> dict:
    """Connect with `client_id` and a clean session (what destroys a persistent session),
    stay half a second, leave; -> the CONNACK's reason code and whether it was accepted."""
    c = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=client_id)
    c.username_pw_set(user, password)
    out, done = {}, threading.Event()

    def on_connect(client, userdata, flags, rc, props):
        out["rc"] = rc
        done.set()

    c.on_connect = on_connect
    c.connect("127.0.0.1", port)
    c.loop_start()
    try:
        assert done.wait(5), "no CONNACK"
        time.sleep(0.5)
    finally:
        c.disconnect()
        c.loop_stop()
    return out


def test_default_host_id_is_not_nameable_without_the_host_password():
    """The default session id is derived from the host's password: stable across restarts,
    different per venue and per password, and never the guessable railbird-host-<venue>."""
    a = host_client_id(BrokerConfig(password="host-secret"), "club")
    assert a == host_client_id(BrokerConfig(password="host-secret"), "club")
    assert a.startswith("railbird-host-club-") and a != GUESSABLE
    assert a != host_client_id(BrokerConfig(password="other"), "club")
    assert a != host_client_id(BrokerConfig(password="host-secret"), "bar")
    assert "host-secret" not in a
    # an explicit id is the installer's choice and is used as it is
    assert host_client_id(BrokerConfig(password="x", client_id="mine"), "club") == "mine"


def test_a_node_login_cannot_kick_the_host_or_destroy_its_queue(broker, tmp_path):
    broker.add_user(NODE, PW)
    host = RailbirdRun(tmp_path / "host", CONFIG.format(port=broker.port, node=NODE, client_id=""))
    evs = shot_events(0, 5_000_000, N // 2)
    host.start()
    node = NodePub(broker.port, NODE, PW)
    try:
        # live: the attacker takes the id it can guess; the host stays connected
        attacker(broker.port, GUESSABLE, NODE, PW)
        # nothing to wait for when nothing happens: a kicked host shows at the next stats
        # rewrite (every 0.2 s) as disconnected or as a second connect; a slow machine can
        # only make this pass falsely (not shown yet), never fail falsely
        time.sleep(0.5)
        s = host.stats()
        assert s["connected"] and s["connects"] == 1, s

        # away: the host stops (its session keeps a queue), the node scores, the attacker
        # connects with the host's guessable id and a clean session, the host comes back
        host.proc.terminate()
        host.proc.wait(10)
        for e in evs:
            node.events(BOOT, [e])
        attacker(broker.port, GUESSABLE, NODE, PW)
        host.start()
        done = host.wait(lambda s: s["events"] >= N, f"the {N} queued events", timeout=15)
        assert done["events"] == N
        assert done["sessions_lost"] == 0, done
    finally:
        node.close()
        if host.alive:
            host.proc.terminate()
            host.proc.wait(10)


def test_a_host_that_loses_its_session_says_so(broker, tmp_path):
    """A second client with the host's own id (a copied config, a second host): mosquitto
    2.0 closes the host's connection and, the intruder having a clean session, the host
    comes back to no session: whatever was queued for it meanwhile is lost. The host logs
    an error naming the cause and counts it; the stats are not left saying all is well."""
    cid = "railbird-host-twin"
    host = RailbirdRun(
        tmp_path / "host",
        CONFIG.format(port=broker.port, node=NODE, client_id=f'client_id = "{cid}"'),
    )
    host.start()
    try:
        assert host.stats()["sessions_lost"] == 0
        attacker(broker.port, cid, "railbird-host", "host-secret")
        s = host.wait(lambda s: s["sessions_lost"] >= 1, "the lost session counted", timeout=10)
        host.wait(lambda s: s["connected"], "reconnected")
        log = host.log(20000)
        assert "ERROR" in log and "session" in log and cid in log, log
        assert s["connects"] >= 2
    finally:
        host.proc.terminate()
        host.proc.wait(10)


def test_session_taken_over_reason_is_an_error_and_a_counter(caplog):
    """Brokers that follow MQTT v5 §4.13 send DISCONNECT 0x8E "Session taken over" to the
    client they throw out (mosquitto 2.0.11 only closes the socket, the case above). The
    ingest's disconnect callback, given paho's own reason code: an ERROR line, a counter,
    and `connected` cleared."""
    import queue

    ing = Ingest(BrokerConfig(password="host-secret"), "club", ["t1"], queue.Queue())
    ing.connected.set()
    rc = ReasonCode(PacketTypes.DISCONNECT, identifier=0x8E)
    assert rc.getName() == "Session taken over"
    with caplog.at_level("ERROR", logger="railbird.daemon.ingest"):
        ing._on_disconnect(ing.client, None, None, rc, None)
    assert ing.session_takeovers == 1
    assert not ing.connected.is_set()
    errors = [r.getMessage().lower() for r in caplog.records if r.levelname == "ERROR"]
    assert any("taken over" in m for m in errors), errors


class NodeListenerBroker(PrivateBroker):
    """The project config with nodes on a listener of their own, as protocol/SPEC.md
    "Security" describes for a venue that wants the broker itself to bind node ids:
    `per_listener_settings true`; on the nodes' listener `use_username_as_clientid true` and a
    password file of node logins only; the host, referee consoles and displays keep `port`."""

    def __init__(self, workdir, nodes: dict):
        super().__init__(workdir)
        self.nodes = dict(nodes)
        self.node_port = free_port()

    def _write_config(self):
        path = super()._write_config()
        conf = path.read_text().replace("per_listener_settings false", "per_listener_settings true")
        conf += (
            f"\nlistener {self.node_port} {self.host}\n"
            "use_username_as_clientid true\n"
            "allow_anonymous false\n"
            f"password_file {self.workdir}/passwd-nodes\n"
            f"acl_file {self.workdir}/acl\n"
        )
        path.write_text(conf)
        passwd = self.workdir / "passwd-nodes"
        passwd.write_text("")
        for name, pw in self.nodes.items():
            subprocess.run(
                ["mosquitto_passwd", "-b", str(passwd), name, pw], check=True, capture_output=True
            )
        passwd.chmod(0o600)
        return path


def test_a_node_listener_binds_node_ids_at_the_broker(tmp_path):
    """Even a node login that knows the host's id cannot take its session when nodes have
    their own listener: there its id is replaced by its user name, and the host's listener
    does not know node logins."""
    cid = "railbird-host-club-known"
    got, lock = [], threading.Lock()

    def on_message(client, userdata, msg):
        with lock:
            got.append(msg.payload)

    with NodeListenerBroker(tmp_path / "broker", {NODE: PW}) as b:
        host = subscriber(
            b.port, on_message, cid, topic="railbird/+/club/+/node/+/events", persistent=True
        )
        host.disconnect()  # stopped: the broker keeps its session and queues for it
        host.loop_stop()
        node = NodePub(b.node_port, NODE, PW)
        for e in shot_events(0, 5_000_000, N // 2):
            node.events(BOOT, [e])
        assert attacker(b.port, cid, NODE, PW)["rc"].is_failure  # not a login here
        assert not attacker(b.node_port, cid, NODE, PW)["rc"].is_failure  # becomes t1-node
        node.close()
        host = subscriber(
            b.port, on_message, cid, topic="railbird/+/club/+/node/+/events", persistent=True
        )
        deadline = time.monotonic() + 5
        while len(got) < N and time.monotonic() < deadline:
            time.sleep(0.05)
        host.disconnect()
        host.loop_stop()
        log = b.log_tail(200)
    assert len(got) == N, (len(got), log)
    assert f"as {NODE} " in log, log  # the attacker's id was replaced by its user name
