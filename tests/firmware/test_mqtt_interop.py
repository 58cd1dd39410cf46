"""Our MQTT client against the private mosquitto (auth + ACL + persistence)."""

import asyncio

import paho.mqtt.client as paho
import pytest

from harness import mqttsub
from harness.mqttsub import Collector
from harness.waiting import until
from rbnode import mqtt

pytestmark = pytest.mark.broker
ROOT = "railbird/v1/v1/t1/node/n1/"


def host_sub(broker):
    """Everything the host's login receives; a persistent session: messages published
    while it is away are queued for it."""
    return Collector(broker.port, "interop-sub", persistent=True)


def client(broker, **kw):
    args = {
        "client_id": "n1",
        "server": "127.0.0.1",
        "port": broker.port,
        "user": "n1",
        "password": "pw1",
        "keepalive": 30,
        "backoff_min_ms": 50,
        "backoff_max_ms": 500,
    }
    args.update(kw)
    return mqtt.MQTTClient(**args)


def test_bad_password_refused(broker):
    broker.add_user("n1", "pw1")

    async def main():
        c = client(broker, password="wrong")
        with pytest.raises(mqtt.MQTTError) as ei:
            await c.connect()
        assert "refused" in str(ei.value)

    asyncio.run(main())


def test_publish_qos1_subscribe_and_will(broker):
    broker.add_user("n1", "pw1")
    sub = host_sub(broker)
    got = []
    try:
        # a retained config for the node, published before it connects
        pub = mqttsub.client(broker.port, "railbird-host", "host-secret", "cfg", paho.MQTTv311)
        pub.publish(ROOT + "config", b'{"v":1}', qos=1, retain=True).wait_for_publish(5)

        async def main():
            will = (ROOT + "status", b'{"state":"offline"}', 1, True)
            c = client(
                broker,
                will=will,
                subs=[(ROOT + "config", 1), (ROOT + "sync/resp", 0)],
                on_message=lambda t, p, r: got.append((t, p, r)),
            )
            task = asyncio.create_task(c.run())
            await c.wait_connected()
            await until(lambda: got)
            assert got[0] == (ROOT + "config", b'{"v":1}', True)
            for i in range(200):
                await c.publish(ROOT + "events", b"%d" % i, qos=1)
            await c.publish(ROOT + "status", b"online", qos=1, retain=True)
            await c.publish(ROOT + "sync/req", b"q0", qos=0)
            await until(lambda: c.inflight_count() == 0)
            # live config change arrives
            pub.publish(ROOT + "config", b'{"v":1,"rev":2}', qos=1, retain=True)
            await until(lambda: len(got) == 2)
            assert got[1][1] == b'{"v":1,"rev":2}' and got[1][2] is False
            c.stop()  # no DISCONNECT: the broker publishes the will
            await task
            return c

        c = asyncio.run(main())
        assert c.counters["connects"] == 1, c.last_error
        assert sub.wait(lambda m: (ROOT + "status", b'{"state":"offline"}', False) in m)
        ev = [p for t, p, r in sub.msgs if t == ROOT + "events"]
        assert ev == [b"%d" % i for i in range(200)]
        assert (ROOT + "sync/req", b"q0", False) in sub.msgs
        pub.loop_stop()
        pub.disconnect()
    finally:
        sub.close()


def test_keepalive_pings(broker):
    broker.add_user("n1", "pw1")

    async def main():
        c = client(broker, keepalive=1)
        task = asyncio.create_task(c.run())
        await c.wait_connected()
        # a PINGREQ after keepalive/2 of silence: 5 pings span > 2 s, beyond the broker's
        # 1.5 x keepalive limit, so the pings are what keeps the connection up
        await until(lambda: c.counters["pings"] >= 5, 15)
        assert c.isconnected() and c.counters["connects"] == 1, c.last_error
        await c.disconnect()
        await task

    asyncio.run(main())


def test_reconnect_and_resend_after_broker_restart(broker):
    broker.add_user("n1", "pw1")
    sub = host_sub(broker)
    try:

        async def main():
            c = client(broker, keepalive=2)
            task = asyncio.create_task(c.run())
            await c.wait_connected()
            await c.publish(ROOT + "events", b"before", qos=1)
            await until(lambda: c.inflight_count() == 0)
            await asyncio.get_running_loop().run_in_executor(None, broker.stop)
            await until(lambda: not c.isconnected(), 5)
            # published while offline: kept in flight, sent after the reconnect
            for i in range(3):
                await c.publish(ROOT + "events", b"off%d" % i, qos=1)
            assert c.inflight_count() == 3
            await asyncio.get_running_loop().run_in_executor(None, broker.start)
            await until(lambda: c.isconnected() and c.inflight_count() == 0, 15)
            assert c.counters["reconnects"] >= 1 and c.counters["retransmits"] >= 3
            await c.disconnect()
            await task

        asyncio.run(main())
        assert sub.wait(
            lambda m: [p for t, p, r in m if p.startswith(b"off")] == [b"off0", b"off1", b"off2"],
            10,
        ), sub.msgs
    finally:
        sub.close()
