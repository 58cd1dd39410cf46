"""What a display fed over MQTT knows about the host and the sensor nodes, so it can say
"scores may be stale" instead of showing a frozen score as current (protocol/SPEC.md `host`
and `status`).

    watch = HostWatch("club", host="127.0.0.1", port=1883, username="railbird-display",
                      password="...").start()
    watch.stale()          # None, or why the scores may be stale ("the host is offline")
    watch.nodes()          # {(table, node): online}
    watch.stop()

`Liveness` is the judgement alone (no I/O; feed it messages and ask it), `HostWatch` feeds
one from a broker subscription.
"""

from __future__ import annotations

import logging
import threading
import time

from rbproto import codec

log = logging.getLogger("railbird.hostwatch")

NEVER_HEARD_S = 5.0  # subscribed this long without a retained `host` message: say so


class Liveness:
    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.lock = threading.Lock()
        self.host: dict | None = None
        self.heard: float | None = None
        self.since = clock()
        self.connected = True  # the display's own broker connection
        self._nodes: dict[tuple[str, str], bool] = {}
        self._inplay: dict[str, dict | None] = {}  # table -> the shot in play (provisional)

    def on_inplay(self, table: str, msg: dict | None) -> None:
        """The table's `inplay` message; None when it is cleared (the shot closed)."""
        with self.lock:
            self._inplay[table] = msg

    def inplay(self) -> dict[str, dict | None]:
        with self.lock:
            return dict(self._inplay)

    def on_host(self, msg: dict) -> None:
        with self.lock:
            self.host, self.heard = msg, self.clock()

    def on_node(self, table: str, node: str, msg: dict) -> None:
        """A node's `status` or `birth` (a birth has no state: the node is up)."""
        with self.lock:
            self._nodes[(table, node)] = msg.get("state", "online") == "online"

    def on_connection(self, up: bool) -> None:
        with self.lock:
            if up and not self.connected:
                self.since = self.clock()
            self.connected = up

    def nodes(self) -> dict[tuple[str, str], bool]:
        with self.lock:
            return dict(self._nodes)

    def stale(self) -> str | None:
        """None while the host is heard from; otherwise why the scores may be stale."""
        with self.lock:
            now = self.clock()
            if not self.connected:
                return "this display has lost the broker"
            if self.host is None:
                if now - self.since > NEVER_HEARD_S:
                    return "no word from the host"
                return None
            if self.host.get("state") != "online":
                return "the host is offline"
            limit = 2 * self.host.get("period_s", 2) + 1
            if now - self.heard > limit:
                return f"no heartbeat from the host for {now - self.heard:.0f} s"
            return None


class HostWatch(Liveness):
    """A Liveness fed by a read-only MQTT subscription to the venue's `host` topic and its
    nodes' `status` and `birth` topics (the display user of the project ACL is enough)."""

    def __init__(
        self,
        venue: str,
        host: str = "127.0.0.1",
        port: int = 1883,
        username: str = "railbird-display",
        password: str = "",
        *,
        tls: bool = False,
        cafile: str | None = None,
        client_id: str = "",
        clock=time.monotonic,
    ):
        from railbird.mqttclient import BrokerLogin, new_client  # paho: only when used

        super().__init__(clock)
        self.venue = venue
        self.addr = (host, port)
        self.connected = False
        self.client, self.link = new_client(
            "hostwatch",
            BrokerLogin(host, port, username or None, password or None, tls, cafile),
            client_id=client_id,
            on_connect=self._on_connect,
            on_disconnect=self._on_disconnect,
        )
        self.client.on_message = self._on_message
        self.rejected = 0

    def start(self) -> HostWatch:
        self.client.connect_async(*self.addr, keepalive=10)
        self.client.loop_start()
        return self

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def _on_connect(self, client, userdata, flags, reason_code, properties=None):
        if reason_code.is_failure:  # logged by self.link
            return
        root = f"{codec.ROOT}/{self.venue}"
        client.subscribe(
            [
                (f"{root}/host", 1),
                (f"{root}/+/node/+/status", 1),
                (f"{root}/+/node/+/birth", 1),
                (f"{root}/+/inplay", 1),
            ]
        )
        self.on_connection(True)

    def _on_disconnect(self, client, userdata, flags, reason_code, properties=None):
        self.on_connection(False)

    def _on_message(self, client, userdata, msg):
        if not msg.payload and msg.topic.endswith("/inplay"):  # cleared: the shot closed
            try:
                self.on_inplay(codec.parse_topic(msg.topic)[1], None)
            except codec.ProtocolError:
                self.rejected += 1
            return
        try:
            kind, _venue, table, node, m = codec.decode_message(msg.topic, msg.payload)
        except codec.ProtocolError as e:
            self.rejected += 1
            log.debug("hostwatch: %s refused: %s", msg.topic, e)
            return
        if kind == "host":
            self.on_host(m)
        elif kind in ("status", "birth"):
            self.on_node(table, node, m)
        elif kind == "inplay":
            self.on_inplay(table, m)
