"""Cluster mode as closed as one host (issue 23, Build 1 and defects 1-3, 6), on one real
three-server NATS cluster with the project's logins (railbird.cluster.natsconf.acl_users,
made from railbird.access.RULES like the mosquitto ACL):

- the ACL matrix: every login against every topic kind, read (at QoS 0 and 1) and write,
  through the MQTT gateway, checked against the description and, on their own, against
  cases stated from protocol/SPEC.md (tests/test_acl_matrix.py does the same on mosquitto);
- referee input carries the venue PIN: a display and a second referee console get the feeds
  but never another console's `referee` message; a display's `#` subscription is refused;
- node, display and console logins are MQTT only: on core NATS (where `$MQTT.sub.>` is
  every client's QoS 1 deliveries) they are refused, and the gateway refuses their MQTT
  subscription to `$MQTT/sub/#`;
- the route port takes no server without the cluster's route credentials: a stranger's
  nats-server pointed at it never joins.

One cluster for the module (about 3 s to start); the matrix probes each login in parallel."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import urllib.request

import paho.mqtt.client as paho
import pytest

from harness.aclprobe import (
    Who,
    check_spec_cases,
    read_matrix,
    targets,
    topic,
    write_matrix,
    wrong_writes,
)
from harness.mqttsub import Collector, client
from harness.nats import connect, nats_cluster
from harness.waiting import poll
from railbird.access import Access, Login, allows
from railbird.cluster import subjects
from railbird.cluster.local import find_nats_server, free_port
from railbird.cluster.natsconf import acl_users, member_conf

pytestmark = [pytest.mark.slow]

VENUE, TABLE, ME, OTHER = "club", "t1", "n1", "n2"
USERS = acl_users(
    VENUE, "host-secret", {ME: "pw1", OTHER: "pw2"}, "display-secret", "referee-secret"
)
REFEREE = "railbird/v1/club/t1/referee"
STATE = "railbird/v1/club/t1/state"
PIN_INPUT = json.dumps({"v": 1, "id": "a1", "token": "4711", "input": {"type": "undo"}})
HOST = Who(Login.HOST, "railbird-host", "host-secret")
LOGINS = [
    HOST,
    Who(Login.REFEREE, "railbird-referee", "referee-secret"),
    Who(Login.DISPLAY, "railbird-display", "display-secret"),
    Who(Login.NODE, ME, "pw1"),
]
TARGETS = targets(VENUE, TABLE, ME, OTHER)
SENTINELS = {
    "railbird-host": f"railbird/v1/{VENUE}/{TABLE}/announce",
    "railbird-referee": f"railbird/v1/{VENUE}/{TABLE}/announce",
    "railbird-display": f"railbird/v1/{VENUE}/{TABLE}/announce",
    ME: f"railbird/v1/{VENUE}/{TABLE}/node/{ME}/config",
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with nats_cluster(tmp_path_factory.mktemp("nats"), users=USERS) as c:
        yield c


def _read_at(topic: str) -> str:
    """Where a message on `topic` is delivered: referee input is kept under railbird/cluster/
    (subjects.REFEREE_MAPPING), where only the workers' login may read it."""
    return subjects.subject(topic).replace(".", "/")


def _denied(w: Who) -> list:
    return [t for t in TARGETS if not allows(w.login, t.rule.kind, Access.READ, own=t.own)]


@pytest.fixture(scope="module")
def matrix(cluster):
    """Reads (subscribers on server 2, the host publishing on server 3: over the routes) and
    writes (on server 1, the host watching on server 3), probed once. Reads at QoS 0 for
    every kind; at QoS 1, where the gateway makes a replicated JetStream consumer for each
    granted subscription (about 0.1-0.3 s each here), what each login may not read."""
    sub, pub = cluster.mqtt_ports[1], cluster.mqtt_ports[2]
    kw = {"publish_port": pub, "filtered": False, "read_at": _read_at}
    reads = read_matrix(sub, LOGINS, TARGETS, HOST, SENTINELS, qos=0, **kw)
    denied_qos1 = {
        w.user: read_matrix(sub, [w], _denied(w), HOST, SENTINELS, qos=1, **kw)
        for w in LOGINS
        if _denied(w)
    }
    writes = write_matrix(cluster.mqtt_ports[0], LOGINS, TARGETS, HOST, observer_port=pub)
    return reads, writes, denied_qos1


def test_every_login_reads_exactly_what_the_description_grants(matrix):
    """nats-server refuses a subscription it would not deliver (SUBACK failure) rather than
    filter it: both must agree with the description."""
    reads = matrix[0]
    wrong = []
    for w in LOGINS:
        for t in TARGETS:
            want = allows(w.login, t.rule.kind, Access.READ, own=t.own)
            key = (w.user, t.topic)
            if (reads.granted[key], reads.received[key]) != (want, want):
                wrong.append((w.user, t.topic, reads.granted[key], reads.received[key]))
    assert not wrong, wrong


def test_at_qos_1_too_every_login_is_refused_what_it_may_not_read(matrix):
    """The QoS 1 path is the one a NATS `deny` did not close (defect 2)."""
    denied = matrix[2]
    assert set(denied) == {"railbird-referee", "railbird-display", ME}
    for user, reads in denied.items():
        assert not any(reads.granted.values()), (user, reads.granted)
        assert not any(reads.received.values()), (user, reads.received)
    # stated on their own: the PIN and the Wi-Fi password among them
    for user in ("railbird-referee", "railbird-display"):
        assert (user, _t("referee")) in denied[user].granted
        assert (user, _t("net", ME)) in denied[user].granted
    assert (ME, _t("update", OTHER)) in denied[ME].granted


def test_every_login_writes_exactly_what_the_description_grants(matrix):
    writes = matrix[1]
    wrong = wrong_writes(LOGINS, TARGETS, writes)
    assert not wrong, wrong


def _t(leaf: str, node: str | None = None) -> str:
    return topic(VENUE, TABLE, leaf, node)


def test_the_rules_texts_own_cases(matrix):
    """Stated from SPEC.md, not from railbird.access (the same cases as on mosquitto)."""
    reads, writes, _q1 = matrix
    check_spec_cases(reads.received, writes, VENUE, TABLE, ME, OTHER)


def test_displays_and_other_consoles_never_read_referee_input(cluster):
    """A `#` subscription to the venue is refused outright; kind by kind, the feeds come
    and referee input (QoS 0 and 1, with a PIN) never does."""
    kinds = ("railbird/v1/club/+/state", "railbird/v1/club/+/referee", "railbird/v1/club/#")
    display = Collector(
        cluster.mqtt_ports[0],
        "display",
        kinds,
        user="railbird-display",
        password="display-secret",
        timeout=10,
    )
    other = Collector(
        cluster.mqtt_ports[2],
        "console-2",
        kinds,
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
        # disconnect before the loops stop: they then end at once, not after their 1 s
        for c in (display.c, other.c, ref, host):
            c.disconnect()
            c.loop_stop()


@pytest.mark.parametrize("who", LOGINS[1:], ids=lambda w: w.user)
def test_the_gateway_refuses_mqtt_subscriptions_to_everyones_deliveries(cluster, who):
    """`$MQTT/sub/#` over MQTT is the gateway's delivery subjects of every client; MQTT
    logins hold `$MQTT.sub.>` for their own, so the gateway itself must refuse this."""
    c = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=f"peek-{who.user}",
                    protocol=paho.MQTTv311)  # fmt: skip
    c.username_pw_set(who.user, who.password)
    codes = []
    c.on_subscribe = lambda cl, u, mid, rcs, p: codes.extend(rcs)
    c.on_connect = lambda cl, u, f, rc, p: cl.subscribe([("$MQTT/sub/#", 1), ("#", 1)])
    c.connect("127.0.0.1", cluster.mqtt_ports[0])
    c.loop_start()
    try:
        assert poll(lambda: len(codes) == 2, 15), "no SUBACK"
        assert all(rc.is_failure for rc in codes), codes
    finally:
        c.disconnect()
        c.loop_stop()


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


def test_the_route_port_listens_on_the_servers_own_link_only(tmp_path):
    """`member_conf(route_host=...)`: the route port on the servers' link (here 127.0.0.2,
    another loopback address) and nowhere else; every interface, or a link without route
    credentials, is refused when the configuration is written."""
    binary = find_nats_server()
    client_port, cport, mport = (free_port("127.0.0.1") for _ in range(3))
    args = ("m1", "127.0.0.1", client_port, cport, mport, [("127.0.0.3", 1)], str(tmp_path))
    for bad in ("0.0.0.0", "::"):
        with pytest.raises(ValueError, match="own link"):
            member_conf(*args, route_host=bad, route_user="r", route_password="s")
    with pytest.raises(ValueError, match="route_user"):
        member_conf(*args, route_host="10.0.0.1")
    conf = tmp_path / "m1.conf"
    conf.write_text(member_conf(*args, route_host="127.0.0.2", route_user="r", route_password="s"))
    assert '"nats-route://r:s@127.0.0.3:1"' in conf.read_text()
    with open(tmp_path / "m1.log", "wb") as out:
        proc = subprocess.Popen([binary, "-c", str(conf)], stdout=out, stderr=out)
    try:

        def listening(host: str) -> bool:
            try:
                with socket.create_connection((host, cport), timeout=0.5):
                    return True
            except OSError:
                return False

        assert poll(lambda: listening("127.0.0.2"), 20), (tmp_path / "m1.log").read_text()
        assert not listening("127.0.0.1")
    finally:
        proc.terminate()
        proc.wait(10)
