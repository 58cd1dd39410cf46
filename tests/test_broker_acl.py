"""The project's broker config: authentication, the ACL, and a round trip through it."""

import subprocess
import sys
import threading
import time

import paho.mqtt.client as mqtt
import pytest

from railbird.broker import confined_acl
from rbproto import codec

VENUE, TABLE = "demo-bar", "t1"


def connect(broker, user, password, client_id=""):
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id)
    c.username_pw_set(user, password)
    result = {}
    connected = threading.Event()

    def on_connect(client, userdata, flags, rc, props):
        result["rc"] = rc
        connected.set()

    c.on_connect = on_connect
    c.connect("127.0.0.1", broker.port)
    c.loop_start()
    assert connected.wait(5), "no CONNACK"
    return c, result["rc"]


class Collector:
    def __init__(self, client, topic):
        self.messages = []
        self.lock = threading.Lock()
        subscribed = threading.Event()
        client.on_message = self._on_message
        client.on_subscribe = lambda *a: subscribed.set()
        client.subscribe(topic, qos=1)
        assert subscribed.wait(5)

    def _on_message(self, client, userdata, msg):
        with self.lock:
            self.messages.append((msg.topic, msg.payload))

    def wait_for(self, n, timeout=5.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.messages) >= n:
                    return list(self.messages)
            time.sleep(0.02)
        return list(self.messages)


def events_payload(node, boot=1, seq=0):
    return codec.encode(
        "events",
        {
            "v": 1,
            "node": node,
            "boot": boot,
            "events": [
                {"seq": seq, "t": 1_000_000, "kind": "drop", "pocket": "HL", "dur": 30_000},
                {"seq": seq + 1, "t": 1_250_000, "kind": "rail", "rail": "F", "amp": 1800},
            ],
        },
    )


@pytest.mark.broker
def test_wrong_password_and_anonymous_are_refused(broker):
    broker.add_user("n1", "node-pw")
    c, rc = connect(broker, "n1", "wrong")
    assert rc.is_failure
    c.loop_stop()
    c2 = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    codes = []
    answered = threading.Event()
    c2.on_connect = lambda *a: (codes.append(a[3]), answered.set())
    c2.connect("127.0.0.1", broker.port)
    c2.loop_start()
    assert answered.wait(5), "no CONNACK"
    c2.loop_stop()
    assert codes and codes[0].is_failure


@pytest.mark.broker
def test_round_trip_and_node_confined_to_its_subtree(broker):
    broker.add_user("n1", "node-pw")
    host, rc = connect(broker, "railbird-host", "host-secret")
    assert not rc.is_failure
    seen = Collector(host, "railbird/v1/#")
    own = codec.topic(VENUE, TABLE, "events", "n1")
    foreign = codec.topic(VENUE, TABLE, "events", "n2")
    feed = codec.topic(VENUE, TABLE, "state")
    for topic, payload in ((foreign, events_payload("n2")), (feed, b'{"v":1}')):
        # mosquitto 2.0 answers a publish the ACL forbids by dropping the message and
        # closing the connection (measured); either way nothing may reach the host.
        node, rc = connect(broker, "n1", "node-pw")
        assert not rc.is_failure
        info = node.publish(topic, payload, qos=1)
        # the broker has handled it: acknowledged (and dropped) or the connection closed
        deadline = time.monotonic() + 5
        while not info.is_published() and node.is_connected():
            assert time.monotonic() < deadline, "the broker never answered the publish"
            time.sleep(0.02)
        node.loop_stop()
        node.disconnect()
    node, rc = connect(broker, "n1", "node-pw")
    node.publish(own, events_payload("n1"), qos=1).wait_for_publish(5)
    # mosquitto handles packets in order: anything the ACL had let through before would
    # have reached the host before this message
    got = seen.wait_for(1)
    assert [t for t, _ in got] == [own], "the ACL let a node write outside its subtree"
    kind, venue, table, node_id, msg = codec.decode_message(*got[0])
    assert (kind, venue, table, node_id) == ("events", VENUE, TABLE, "n1")
    assert [e["seq"] for e in msg["events"]] == [0, 1]
    assert msg["events"][0]["t"] == 1_000_000


def _refused_publish(broker, user, password, topic, payload) -> None:
    """Publish as `user` and wait until the broker has handled it (acknowledged and dropped,
    or the connection closed: mosquitto 2.0 does either for a publish its ACL forbids)."""
    c, rc = connect(broker, user, password)
    assert not rc.is_failure
    info = c.publish(topic, payload, qos=1, retain=True)
    deadline = time.monotonic() + 5
    while not info.is_published() and c.is_connected():
        assert time.monotonic() < deadline, "the broker never answered the publish"
        time.sleep(0.02)
    c.loop_stop()
    c.disconnect()


@pytest.mark.broker
@pytest.mark.parametrize("acl", ["project", "confined"])
def test_a_nodes_login_cannot_command_its_own_node(acl, broker):
    """Issue 23, item 6: the ACLs let a node write its whole subtree, so with a board's own
    login a retained `update` (another firmware set) or `config` (every pocket removed) was
    obeyed for good. A node's login writes only what a node publishes (rbproto.codec
    NODE_WRITES: birth, status, events, sync/req, sync/result); the host's commands to it
    are the host's alone. Both the project ACL and setup's confined one."""
    if acl == "confined":
        broker.acl = confined_acl(VENUE, {TABLE: ["n1"]})
        broker.restart()
    broker.add_user("n1", "node-pw")
    host, _ = connect(broker, "railbird-host", "host-secret")
    seen = Collector(host, f"railbird/v1/{VENUE}/{TABLE}/node/n1/#")
    for kind in ("update", "config"):
        _refused_publish(broker, "n1", "node-pw", codec.topic(VENUE, TABLE, kind, "n1"),
                         b'{"v":1}')  # fmt: skip
    # what a node publishes still goes through, in order after the refused ones
    node, _ = connect(broker, "n1", "node-pw")
    allowed = [codec.topic(VENUE, TABLE, k, "n1") for k in
               ("birth", "status", "events", "sync_req", "sync_result")]  # fmt: skip
    for topic in allowed:
        node.publish(topic, b'{"v":1}', qos=1).wait_for_publish(5)
    got = seen.wait_for(len(allowed))
    assert [t for t, _ in got] == allowed, "a node's login wrote a command to itself"
    for c in (node, host):
        c.loop_stop()
        c.disconnect()
    # nothing retained on the command topics either: a later subscriber gets nothing
    late, _ = connect(broker, "railbird-host", "host-secret")
    marker = Collector(late, f"railbird/v1/{VENUE}/{TABLE}/node/n1/+")
    late.publish(f"railbird/v1/{VENUE}/{TABLE}/node/n1/config", b"", qos=1).wait_for_publish(5)
    assert all(not t.endswith(("/update", "/config")) or not p for t, p in marker.wait_for(1))
    late.loop_stop()
    late.disconnect()


def test_the_acl_file_gives_a_node_exactly_the_protocols_leaves():
    from railbird.access import mosquitto_acl

    text = mosquitto_acl()
    writes = {ln.split("/%u/")[1] for ln in text.splitlines() if ln.startswith("pattern write")}
    reads = {ln.split("/%u/")[1] for ln in text.splitlines() if ln.startswith("pattern read")}
    assert writes == set(codec.NODE_WRITES) and reads == set(codec.NODE_READS)
    confined = confined_acl(VENUE, {TABLE: ["n1"]})
    base = f"railbird/+/{VENUE}/{TABLE}/node/n1/"
    assert {
        ln.split(base)[1] for ln in confined.splitlines() if ln.startswith("topic write " + base)
    } == set(codec.NODE_WRITES)


@pytest.mark.broker
@pytest.mark.parametrize("acl", ["project", "confined"])
def test_a_node_reads_its_own_update_commands_only(acl, broker, tmp_path):
    """Over-the-air update commands (SPEC.md `update`): the host writes them, a node reads
    its own and never another node's, even through a wildcard; with the project ACL and
    with the one that confines each node to its table (railbird.broker.confined_acl)."""
    if acl == "confined":
        broker.acl = confined_acl(VENUE, {TABLE: ["n1", "n2"]})
        broker.restart()
    broker.add_user("n1", "node-pw")
    node, rc = connect(broker, "n1", "node-pw")
    assert not rc.is_failure
    got = Collector(node, f"railbird/v1/{VENUE}/{TABLE}/node/+/update")
    host, _ = connect(broker, "railbird-host", "host-secret")
    own = codec.topic(VENUE, TABLE, "update", "n1")
    # the other node's first: the broker delivers in order, so it would have come first
    for topic in (codec.topic(VENUE, TABLE, "update", "n2"), own):
        host.publish(topic, b'{"v":1}', qos=1).wait_for_publish(5)
    assert [t for t, _ in got.wait_for(1)] == [own]
    # the order above is the proof; this pause can only make a slow broker pass falsely
    # (the other node's command not delivered yet), never fail falsely
    time.sleep(0.3)
    assert [t for t, _ in got.messages] == [own]
    for c in (node, host):
        c.loop_stop()
        c.disconnect()


@pytest.mark.broker
@pytest.mark.parametrize("acl", ["project", "confined"])
def test_net_commands_reach_their_node_and_never_a_display_or_referee(acl, broker):
    """`net` carries the Wi-Fi password (SPEC.md `net`): the host writes it, its node reads
    it, the display and referee logins, which read the rest of the node subtree, never."""
    if acl == "confined":
        broker.acl = confined_acl(VENUE, {TABLE: ["n1"]})
        broker.restart()
    broker.add_user("n1", "node-pw")
    node, _ = connect(broker, "n1", "node-pw")
    display, _ = connect(broker, "railbird-display", "display-secret")
    referee, _ = connect(broker, "railbird-referee", "referee-secret")
    at_node = Collector(node, f"railbird/v1/{VENUE}/{TABLE}/node/n1/#")
    at_display = Collector(display, "railbird/#")
    at_referee = Collector(referee, f"railbird/v1/{VENUE}/{TABLE}/node/#")
    host, _ = connect(broker, "railbird-host", "host-secret")
    net = codec.topic(VENUE, TABLE, "net", "n1")
    config = codec.topic(VENUE, TABLE, "config", "n1")
    # the net command first, then a config the others may read: order proves the denial
    host.publish(net, b'{"v":1}', qos=1).wait_for_publish(5)
    host.publish(config, b'{"v":1}', qos=1).wait_for_publish(5)
    assert [t for t, _ in at_node.wait_for(2)] == [net, config]
    assert [t for t, _ in at_display.wait_for(1)] == [config]
    assert [t for t, _ in at_referee.wait_for(1)] == [config]
    for c in (node, display, referee, host):
        c.loop_stop()
        c.disconnect()


@pytest.mark.broker
def test_tail_prints_decoded_events_and_flags_bad_messages(broker):
    broker.add_user("n1", "node-pw")
    tail = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "railbird",
            "tail",
            "--port",
            str(broker.port),
            "--venue",
            VENUE,
            "--password",
            "display-secret",
            "--count",
            "3",
            "--seconds",
            "20",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # it says so once it has subscribed (or exits with an error: EOF)
    while "# tailing" not in (line := tail.stderr.readline()):
        assert line, tail.communicate(timeout=30)
    node, _ = connect(broker, "n1", "node-pw")
    topic = codec.topic(VENUE, TABLE, "events", "n1")
    node.publish(topic, events_payload("n1"), qos=1).wait_for_publish(5)
    node.publish(topic, b"{not json", qos=1).wait_for_publish(5)
    node.publish(
        topic,
        b'{"v":1,"node":"n1","boot":1,"events":[{"seq":0,"t":1.5,"kind":"drop","pocket":"HL"}]}',
        qos=1,
    ).wait_for_publish(5)
    out, err = tail.communicate(timeout=30)
    lines = out.strip().splitlines()
    assert tail.returncode == 0, err
    assert len(lines) == 3, out
    assert (
        "demo-bar/t1/n1 events" in lines[0]
        and "drop HL" in lines[0]
        and "rail F amp=1800" in lines[0]
    )
    assert "REJECTED" in lines[1] and "bad json" in lines[1]
    assert "REJECTED" in lines[2] and "t" in lines[2]
