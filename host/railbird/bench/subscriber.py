"""The host's bare MQTT subscriber, shared by the benchmarks: the baseline of `make bench`
(railbird.bench.suite), its end-to-end floor, and the broker's own publish -> subscribe
latency beside the in-play figure (railbird.bench.inplay). A module of its own so the
in-play benchmark need not import the suite that runs it (an import circle)."""

from __future__ import annotations

import threading


def host_subscriber(port: int, topic: str, client_id: str, on_message, manual_ack=False):
    """A paho client of the host's login (the private broker's `railbird-host`) on the
    broker at 127.0.0.1:`port`, subscribed to `topic` at QoS 1 and running its network
    thread; `on_message(client, userdata, message)`. The caller disconnects it and stops its
    loop."""
    from railbird.mqttclient import BrokerLogin, new_client

    login = BrokerLogin(port=port, user="railbird-host", password="host-secret")
    c, _ = new_client("bench", login, client_id=client_id, manual_ack=manual_ack)
    c.max_inflight_messages_set(100)  # as the daemon's ingest
    c.on_message = on_message
    subbed = threading.Event()
    c.on_subscribe = lambda *a: subbed.set()
    c.connect("127.0.0.1", port)
    c.loop_start()
    c.subscribe(topic, qos=1)
    subbed.wait(10)
    return c
