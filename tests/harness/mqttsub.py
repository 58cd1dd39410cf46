"""A paho subscriber for tests, connected and subscribed (SUBACK received) on return."""

from __future__ import annotations

import threading

import paho.mqtt.client as paho


def subscriber(
    port: int,
    on_message,
    client_id: str,
    topic: str = "railbird/v1/#",
    user: str = "railbird-host",
    password: str = "host-secret",
    persistent: bool = False,
    timeout: float = 5,
) -> paho.Client:
    """`persistent`: a session that outlives the connection (clean_session False), so the
    broker queues QoS 1 messages while it is away and it resubscribes on every reconnect."""
    c = paho.Client(
        paho.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=not persistent
    )
    c.reconnect_delay_set(0.05, 0.5)  # tests restart brokers: come back quickly
    c.username_pw_set(user, password)
    c.on_message = on_message
    ready = threading.Event()
    c.on_subscribe = lambda *a: ready.set()
    c.on_connect = lambda cl, u, f, rc, p: cl.subscribe(topic, 1)
    c.connect("127.0.0.1", port)
    c.loop_start()
    if not ready.wait(timeout):
        c.loop_stop()
        raise TimeoutError(f"no SUBACK for {topic} within {timeout} s")
    return c
