"""Cluster mode as closed as one host (issue 23, 1-3), on a real three-server NATS cluster
with the project's logins (railbird.cluster.natsconf):

- referee input carries the venue PIN: a display and a second referee console subscribed
  to the whole venue get the feeds but never another console's `referee` message, as with
  mosquitto's ACL;
- node, display and console logins are MQTT only: on core NATS (where `$MQTT.sub.>` is
  every client's QoS 1 deliveries) they are refused;
- the route port takes no server without the cluster's route credentials: a stranger's
  nats-server pointed at it never joins."""

from __future__ import annotations

import asyncio
import json
import subprocess
import urllib.request

import paho.mqtt.client as paho
import pytest

from harness.mqttsub import Collector, client
from harness.nats import connect, nats_cluster
from harness.waiting import poll
from railbird.cluster.local import find_nats_server, free_port
from railbird.cluster.natsconf import acl_users

pytestmark = [pytest.mark.slow]

USERS = acl_users("club", "host-secret", {"n1": "pw1"}, "display-secret", "referee-secret")
REFEREE = "railbird/v1/club/t1/referee"
STATE = "railbird/v1/club/t1/state"
PIN_INPUT = json.dumps({"v": 1, "id": "a1", "token": "4711", "input": {"type": "undo"}})


@pytest.fixture
def cluster(tmp_path):
    with nats_cluster(tmp_path / "nats", users=USERS) as c:
        yield c


def test_displays_and_other_consoles_never_read_referee_input(cluster):
    display = Collector(
        cluster.mqtt_ports[0],
        "display",
        "railbird/v1/club/#",
        user="railbird-display",
        password="display-secret",
        timeout=10,
    )
    other = Collector(
        cluster.mqtt_ports[2],
        "console-2",
        "railbird/v1/club/#",
        user="railbird-referee",
        password="referee-secret",
        timeout=10,
    )
    # the gateway speaks MQTT 3.1.1
    ref = client(
        cluster.mqtt_ports[1], "railbird-referee", "referee-secret", "console-1", paho.MQTTv311
    )
    host = client(cluster.mqtt_ports[1], "railbird-host", "host-secret", "host", paho.MQTTv311)
    try:
        for qos in (0, 1):
            ref.publish(REFEREE, PIN_INPUT.encode(), qos=qos).wait_for_publish(5)
        # the feed published after the input: once it is in, the input would have been too
        host.publish(STATE, b'{"v":1}', qos=1).wait_for_publish(5)
        for c in (display, other):
            assert c.wait(lambda m: any(t == STATE for t, _p, _r in m), timeout=15)
            with c.lock:
                seen = list(c.msgs)
            assert not [t for t, _p, _r in seen if t == REFEREE], seen
            assert not [p for _t, p, _r in seen if b"4711" in p]
    finally:
        for c in (display, other):
            c.close()
        for c in (ref, host):
            c.loop_stop()
            c.disconnect()


@pytest.mark.parametrize(
    ("user", "password"),
    [("railbird-display", "display-secret"), ("railbird-referee", "referee-secret"), ("n1", "pw1")],
)
def test_mqtt_logins_are_refused_on_core_nats(cluster, user, password):
    async def attempt():
        try:
            nc = await connect(
                cluster.nats_urls, user=user, password=password, allow_reconnect=False
            )
        except Exception as e:  # noqa: BLE001 - nats-py raises several kinds for a refusal
            return e
        await nc.close()
        return None

    err = asyncio.run(attempt())
    assert err is not None, f"{user} connected on core NATS"
    # the workers' login still may
    assert asyncio.run(_host_connects(cluster))


async def _host_connects(cluster) -> bool:
    nc = await connect(cluster.nats_urls, user="railbird-host", password="host-secret")
    ok = nc.is_connected
    await nc.close()
    return ok


def test_a_server_without_route_credentials_never_joins(cluster, tmp_path):
    binary = find_nats_server()
    port, cport, mport = free_port("127.0.0.1"), free_port("127.0.0.1"), free_port("127.0.0.1")
    conf = tmp_path / "stranger.conf"
    conf.write_text(
        f'server_name: "stranger"\nlisten: "127.0.0.1:{port}"\nhttp: "127.0.0.1:{mport}"\n'
        f'cluster {{ name: "railbird", listen: "127.0.0.1:{cport}",\n'
        f'  routes: ["nats-route://127.0.0.1:{cluster.cluster_ports[0]}"] }}\n'
    )
    log = tmp_path / "stranger.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([binary, "-c", str(conf)], stdout=out, stderr=out)
    try:
        # the stranger tries (its log says the route was refused), and is never counted
        refused = poll(lambda: "uthorization" in log.read_text(errors="replace"), 20)
        assert refused, log.read_text(errors="replace")
        for i in range(cluster.size):
            url = f"http://127.0.0.1:{cluster.monitor_ports[i]}/routez"
            with urllib.request.urlopen(url, timeout=5) as r:
                routes = json.loads(r.read())["routes"]
            names = {r.get("remote_name") or r.get("remote_id") for r in routes}
            assert "stranger" not in names and len(routes) == cluster.size - 1, routes
    finally:
        proc.terminate()
        proc.wait(10)
