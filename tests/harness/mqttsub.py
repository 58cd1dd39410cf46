"""paho clients for tests against a broker on 127.0.0.1: one logged in and connecting
(`client`, to publish), one connected and subscribed (SUBACK received) on return
(`subscriber`), `Collector`, a subscriber that keeps what it receives, and `Capture`, a
stand-in client an output shares (`client=`) that keeps what it publishes."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import paho.mqtt.client as paho

from harness.waiting import poll


def client(
    port: int, user: str, password: str, client_id: str = "", protocol=paho.MQTTv5
) -> paho.Client:
    """A client logged in as `user`, its network loop running; it may still be connecting
    on return (a publish waits in its queue until it is connected)."""
    c = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=protocol)
    c.username_pw_set(user, password)
    c.connect("127.0.0.1", port)
    c.loop_start()
    return c


def subscriber(
    port: int,
    on_message,
    client_id: str,
    topic: str | tuple = "railbird/v1/#",
    user: str = "railbird-host",
    password: str = "host-secret",
    persistent: bool = False,
    timeout: float = 5,
) -> paho.Client:
    """`topic`: a filter or a tuple of them, subscribed at QoS 1. `persistent`: a session
    that outlives the connection (clean_session False), so the broker queues QoS 1 messages
    while it is away and it resubscribes on every reconnect."""
    topics = [(topic, 1)] if isinstance(topic, str) else [(t, 1) for t in topic]
    c = paho.Client(
        paho.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=not persistent
    )
    c.reconnect_delay_set(0.05, 0.5)  # tests restart brokers: come back quickly
    c.username_pw_set(user, password)
    c.on_message = on_message
    ready = threading.Event()
    c.on_subscribe = lambda *a: ready.set()
    c.on_connect = lambda cl, u, f, rc, p: cl.subscribe(topics)
    c.connect("127.0.0.1", port)
    c.loop_start()
    if not ready.wait(timeout):
        c.loop_stop()
        raise TimeoutError(f"no SUBACK for {topic} within {timeout} s")
    return c


class Collector:
    """A `subscriber` (same arguments but `on_message`) keeping every message it receives
    as (topic, payload, retain) in `msgs`."""

    def __init__(self, port: int, client_id: str, topic: str = "railbird/v1/#", **kw):
        self.msgs: list = []
        self.lock = threading.Lock()
        self.c = subscriber(port, self._on, client_id, topic, **kw)

    def _on(self, c, u, m):
        with self.lock:
            self.msgs.append((m.topic, bytes(m.payload), m.retain))

    def wait(self, pred, timeout: float = 10.0) -> bool:
        """Whether `pred(messages so far)` came true within `timeout` s."""

        def holds():
            with self.lock:
                return pred(list(self.msgs))

        return bool(poll(holds, timeout))

    def close(self):
        self.c.loop_stop()
        self.c.disconnect()


class Capture:
    """The paho client the feeds can share (`client=`, railbird.outputs.mqtt_feeds),
    keeping what is published: what an output sends, without a broker."""

    def __init__(self):
        self.sent: list = []

    def publish(self, topic, payload, qos=0, retain=False):
        self.sent.append((topic, payload, retain))
        return SimpleNamespace(rc=paho.MQTT_ERR_SUCCESS)

    def message_callback_add(self, *a):
        pass

    def subscribe(self, *a, **kw):
        pass

    def take(self) -> list:
        out, self.sent = self.sent, []
        return out
