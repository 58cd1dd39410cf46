"""A retained feed never ends on an older value after a (re)connection (docs/displays.md
"MQTT feeds"), against a real private mosquitto.

paho 2.2 sends a QoS 1 message published while its socket is up but its CONNACK not yet
in at once, ahead of the ones it queued while it had no connection, which it sends only
at the CONNACK (eclipse-paho/paho.mqtt.python#910). A table's state published just before
the feeds' client reached the broker and the next one published during the handshake then
reached the broker newest first, and the retained state every TV reads on connecting was
the older one, as live, until the table's next change. The link's handshake is made slow
here by a relay between the client and the broker that holds the broker's first bytes
back: the window a loaded machine or a bar's Wi-Fi opens by chance.
"""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from harness.mqttsub import subscriber
from harness.waiting import poll
from railbird.outputs.mqtt_feeds import MqttFeedsOutput
from railbird.rules import Referee

HANDSHAKE_DELAY_S = 0.8  # the CONNACK's wait in the relay


class SlowHandshakeRelay:
    """A TCP relay to the broker that forwards the client's bytes at once and the broker's
    first bytes (its CONNACK) only after `delay` s. `connect_sent` is set once the client's
    first bytes (its CONNECT) have gone through: its socket is up, its CONNACK not in."""

    def __init__(self, broker_port: int, delay: float):
        self.broker_port, self.delay = broker_port, delay
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connect_sent = threading.Event()
        self._socks: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        try:
            cli, _ = self.listener.accept()
        except OSError:  # closed before the client came
            return
        srv = socket.create_connection(("127.0.0.1", self.broker_port))
        self._socks += [cli, srv]
        threading.Thread(target=self._pump, args=(cli, srv, 0.0, True), daemon=True).start()
        threading.Thread(target=self._pump, args=(srv, cli, self.delay, False), daemon=True).start()

    def _pump(self, src, dst, first_delay, upstream):
        first = True
        try:
            while data := src.recv(65536):
                if first and first_delay:
                    time.sleep(first_delay)
                dst.sendall(data)
                if first and upstream:
                    self.connect_sent.set()
                first = False
        except OSError:  # one side closed: the relay's job is done
            pass

    def close(self):
        self.listener.close()
        for s in self._socks:
            s.close()


def _retained_state(port: int, topic: str, tag: str):
    """The broker's retained message on `topic`, as a display connecting now reads it."""
    got: list = []
    c = subscriber(port, lambda _c, _u, m: got.append(m.payload), f"tv-{tag}", topic)
    try:
        poll(lambda: got, timeout=5)
    finally:
        c.loop_stop()
        c.disconnect()
    return json.loads(got[-1]) if got else None


@pytest.mark.broker
def test_the_retained_state_is_the_newest_after_a_slow_handshake(broker):
    relay = SlowHandshakeRelay(broker.port, HANDSHAKE_DELAY_S)
    out = MqttFeedsOutput("127.0.0.1", relay.port, "railbird-host", "host-secret", discovery=False)
    ref = Referee({"type": "match", "game": "10-ball", "players": ["Ann", "Bob"], "race_to": 3})
    try:
        older = ref.feed({"type": "lag", "winner": "Ann"})
        # published with no connection yet: paho queues it for the CONNACK
        out.on_state("club", "t1", "10-ball", older, older["fen"], [])
        out.start()
        assert relay.connect_sent.wait(10), "the feeds' client never reached the relay"
        newer = ref.feed({"type": "shot", "pocketed": [{"ball": 0, "pocket": "FL"}]})
        assert newer["at_table"] == "Bob"
        # published during the handshake: paho 2.2 sends it at once, ahead of the older one
        out.on_state("club", "t1", "10-ball", newer, newer["fen"], [])
        topic = "railbird/v1/club/t1/state"
        # once the CONNACK is in and paho has sent what it held, the newest must be retained
        time.sleep(HANDSHAKE_DELAY_S + 0.2)
        seen = []

        def newest_retained():
            m = _retained_state(broker.port, topic, str(len(seen)))
            seen.append(m and m["state"]["at_table"])
            return seen[-1] == "Bob"

        assert poll(newest_retained, timeout=10), (seen, out.stats)
        assert out.stats["resent"] >= 1, out.stats
    finally:
        out.stop()
        relay.close()
