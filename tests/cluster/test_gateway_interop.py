"""The node firmware's own MQTT client (firmware/rbnode/mqtt.py, under CPython) against the
MQTT gateway of a three-server NATS cluster with the project's logins and permissions
(railbird.cluster.natsconf.acl_users): connect, a retained config received on subscribe and
a live change after it, QoS 1 publishes each answered by a PUBACK and kept in the stream,
a retained birth a display sees on subscribing later, and the last will when the node
vanishes. A node's login cannot write another node's topics nor read the feeds."""

from __future__ import annotations

import asyncio

import paho.mqtt.client as paho
import pytest

from harness.mqttsub import Collector, client
from harness.nats import nats_cluster, stream_messages
from harness.waiting import until
from railbird.cluster import subjects
from railbird.cluster.natsconf import acl_users
from rbnode import mqtt

ROOT = "railbird/v1/club/t1/node/n1/"
USERS = acl_users(
    "club", "host-secret", {"n1": "pw1", "n2": "pw2"}, "display-secret", "referee-secret"
)
REFEREE = "railbird/v1/club/t1/referee"


def gateway_client(port, user, password, client_id):
    """A paho client speaking MQTT 3.1.1: the gateway refuses 5."""
    return client(port, user, password, client_id, protocol=paho.MQTTv311)


@pytest.fixture
def cluster(tmp_path):
    with nats_cluster(tmp_path / "nats", users=USERS) as c:
        yield c


def test_firmware_client_through_the_nats_mqtt_gateway(cluster):
    port = cluster.mqtt_ports[1]
    host = gateway_client(port, "railbird-host", "host-secret", "cfg")
    stream_add(cluster)
    # the retained config, published before the node connects (by the host's login)
    host.publish(ROOT + "config", b'{"v":1}', qos=1, retain=True).wait_for_publish(5)
    got = []
    acked = []

    async def main():
        c = mqtt.MQTTClient(
            "n1",
            "127.0.0.1",
            port,
            user="n1",
            password="pw1",
            keepalive=30,
            backoff_min_ms=50,
            backoff_max_ms=500,
            will=(ROOT + "status", b'{"state":"offline"}', 1, True),
            subs=[(ROOT + "config", 1), (ROOT + "sync/resp", 0)],
            on_message=lambda t, p, r: got.append((t, p, r)),
            on_puback=lambda pid: acked.append(pid),
        )
        task = asyncio.create_task(c.run())
        await c.wait_connected()
        await until(lambda: got)
        assert got[0] == (ROOT + "config", b'{"v":1}', True)  # retained, on subscribe
        await c.publish(ROOT + "birth", b'{"boot":1}', qos=1, retain=True)
        for i in range(50):
            await c.publish(ROOT + "events", b"%d" % i, qos=1)
        await until(lambda: c.inflight_count() == 0)  # every QoS 1 publish got its PUBACK
        assert len(acked) == 51
        # another node's topic, the host's feed, referee input: refused for this login
        await c.publish("railbird/v1/club/t1/node/n2/events", b"forged", qos=1)
        await c.publish("railbird/v1/club/t1/state", b"forged", qos=1)
        await c.publish(REFEREE, b"forged", qos=1)
        # a live config change after the subscription: not retained on delivery
        host.publish(ROOT + "config", b'{"v":1,"rev":2}', qos=1, retain=True)
        await until(lambda: len(got) == 2)
        assert got[1][1] == b'{"v":1,"rev":2}' and got[1][2] is False
        # the referee console's input reaches the stream (a display's would not)
        ref = gateway_client(cluster.mqtt_ports[0], "railbird-referee", "referee-secret", "ref")
        ref.publish(REFEREE, b'{"v":1}', qos=1).wait_for_publish(5)
        ref.loop_stop()
        ref.disconnect()
        # a display connecting now sees the retained birth (kind by kind: a display's
        # `railbird/v1/club/#` is refused in cluster mode, natsconf.acl_users)
        d = Collector(
            cluster.mqtt_ports[2],
            "display",
            ("railbird/v1/club/+/node/+/birth", "railbird/v1/club/+/node/+/status"),
            user="railbird-display",
            password="display-secret",
            timeout=10,
        )
        d.c.publish(REFEREE, b"display-forged", qos=1)
        try:
            assert d.wait(lambda m: (ROOT + "birth", b'{"boot":1}', True) in m)
            c.stop()  # no DISCONNECT: a power cut; the gateway publishes the will
            await task
            assert d.wait(lambda m: any(t == ROOT + "status" and b"offline" in p for t, p, _ in m))
        finally:
            d.close()
        return c

    try:
        c = asyncio.run(main())
    finally:
        host.loop_stop()
        host.disconnect()
    assert c.counters["connects"] == 1, c.last_error
    msgs = stream_messages(cluster.nats_urls, user="railbird-host", password="host-secret")
    events = [p for _s, _t, topic, p in msgs if topic == ROOT + "events"]
    assert events == [b"%d" % i for i in range(50)]  # each once, in order, in the stream
    topics = {topic for _s, _t, topic, _p in msgs}
    assert "railbird/v1/club/t1/node/n2/events" not in topics
    assert all(p not in (b"forged", b"display-forged") for _s, _t, _topic, p in msgs)
    assert [p for _s, _t, topic, p in msgs if topic == REFEREE] == [b'{"v":1}']


def stream_add(cluster):
    """The stream the workers create (railbird.cluster.ingest), made here without a worker."""

    async def run():
        import nats
        from nats.js.api import StreamConfig

        nc = await nats.connect(
            servers=cluster.nats_urls, user="railbird-host", password="host-secret"
        )
        try:
            js = nc.jetstream(timeout=5)
            for _ in range(60):
                try:
                    await js.add_stream(
                        StreamConfig(
                            name=subjects.STREAM,
                            subjects=subjects.stream_subjects("club"),
                            num_replicas=3,
                        )
                    )
                    return
                except Exception:  # noqa: BLE001 - the cluster still elects its meta leader
                    await asyncio.sleep(0.5)
            raise AssertionError("stream not created")
        finally:
            await nc.close()

    asyncio.run(run())
