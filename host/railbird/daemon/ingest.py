"""MQTT ingest: paho-mqtt 2.x, MQTT v5, persistent session, QoS 1, manual acknowledgement.

The broker keeps the host's session (clean_start False, session expiry from the config) so
messages published while the host is away are queued for it; `manual_ack` means a QoS 1
message counts as delivered only when the daemon calls `ack()` after the journal commit, so a
host crash before the commit gets the message again (protocol/SPEC.md §QoS). paho reconnects
by itself (`reconnect_delay_set`); on every CONNACK the subscriptions are renewed.

The host's liveness for displays (protocol/SPEC.md `host`): the connection's last will is
a retained `offline` on `railbird/v1/<venue>/host`; every subscription publishes a retained
`online`, and `heartbeat()` (called by the daemon's worker every HOST_PERIOD_S) the same
without retain and at QoS 0, so the broker never has to persist it; `stop()` publishes
`offline` before disconnecting, since a clean DISCONNECT discards the will.

Time-sync requests are answered straight from the network thread, to keep t2/t3 close to the
wire; everything else goes to the daemon's bounded queue (a full queue blocks the network
thread, which is TCP back-pressure to the broker rather than a silent drop).
"""

from __future__ import annotations

import logging
import queue
import ssl
import sys
import threading
import time

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

import railbird
from rbproto import codec

log = logging.getLogger("railbird.daemon.ingest")

HOST_PERIOD_S = 1  # displays call the host gone after 2 periods + 1 s of silence: 3 s


def now_us() -> int:
    """Host time, the table time axis: CLOCK_MONOTONIC in µs (same across process restarts
    on one machine, which the journal replay relies on)."""
    return time.monotonic_ns() // 1000


def subscriptions(venue: str, tables: list) -> list:
    """(topic filter, qos) pairs. The version level is a wildcard so that a node speaking
    another major version is received, refused and counted instead of silently ignored."""
    out = []
    for t in tables or ["+"]:
        base = f"railbird/+/{venue}/{t}"
        out += [
            (f"{base}/node/+/events", 1),
            (f"{base}/node/+/sync/result", 1),
            (f"{base}/node/+/birth", 1),
            (f"{base}/node/+/status", 1),
            (f"{base}/node/+/sync/req", 0),
            (f"{base}/referee", 1),
        ]
    return out


class Ingest:
    def __init__(self, bcfg, venue: str, tables: list, inbox: queue.Queue):
        self.bcfg = bcfg
        self.venue = venue
        self.tables = list(tables)
        self.inbox = inbox
        self.connected = threading.Event()
        self.connects = 0
        self.sync_answered = 0
        self.client = mqtt.Client(
            mqtt.CallbackAPIVersion.VERSION2,
            client_id=bcfg.client_id,
            protocol=mqtt.MQTTv5,
            manual_ack=True,
        )
        if bcfg.user:
            self.client.username_pw_set(bcfg.user, bcfg.password or None)
        if bcfg.tls:
            self.client.tls_set(ca_certs=bcfg.cafile or None, cert_reqs=ssl.CERT_REQUIRED)
        self.client.reconnect_delay_set(0.2, 5)
        self.client.max_inflight_messages_set(100)
        self.client.on_connect = self._on_connect
        self.client.on_connect_fail = self._on_connect_fail
        self.connect_error = ""  # why the last connection attempt failed ("" after a CONNACK)
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        self.client.on_subscribe = self._on_subscribe
        self._sub_mid = None
        self.host_topic = codec.topic(venue, None, "host")
        self.host_seq = 0
        self.client.will_set(self.host_topic, self._host_msg("offline"), qos=1, retain=True)

    def start(self) -> None:
        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = int(self.bcfg.session_expiry_s)
        self.client.connect_async(
            self.bcfg.host,
            self.bcfg.port,
            self.bcfg.keepalive_s,
            clean_start=False,
            properties=props,
        )
        self.client.loop_start()

    def stop(self) -> None:
        try:
            if self.connected.is_set():
                info = self.client.publish(
                    self.host_topic, self._host_msg("offline"), qos=1, retain=True
                )
                info.wait_for_publish(1.0)
            self.client.disconnect()
        except (RuntimeError, ValueError) as e:  # not connected after all: the will says it
            log.debug("offline not published: %s", e)
            self.client.disconnect()
        finally:
            self.client.loop_stop()

    def _host_msg(self, state: str) -> bytes:
        msg = {"v": 1, "venue": self.venue, "state": state}
        if state == "online":
            msg.update(period_s=HOST_PERIOD_S, seq=self.host_seq, version=railbird.__version__)
        return codec.encode("host", msg)

    def heartbeat(self, retain: bool = False) -> None:
        """Publish `online` when connected; a no-op otherwise (paho would queue stale
        heartbeats for the reconnect). `retain`: the retained one, after (re)connecting."""
        if self.connected.is_set():
            msg = self._host_msg("online")
            self.client.publish(self.host_topic, msg, qos=1 if retain else 0, retain=retain)
            self.host_seq += 1

    # -- callbacks (network thread) --------------------------------------------------------
    def _on_connect(self, client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            log.error("broker refused the connection: %s", reason_code)
            return
        self.connects += 1
        self.connect_error = ""
        log.info(
            "connected to %s:%s (session present: %s)",
            self.bcfg.host,
            self.bcfg.port,
            flags.session_present,
        )
        result, self._sub_mid = client.subscribe(subscriptions(self.venue, self.tables))
        if result != mqtt.MQTT_ERR_SUCCESS:
            log.error("subscribe failed: %s", result)

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties):
        if mid == self._sub_mid:
            bad = [rc for rc in reason_codes if rc.is_failure]
            if bad:
                log.error("subscription refused: %s", bad)
            self.connected.set()
            self.heartbeat(retain=True)  # replaces the retained will of a previous run
            self.inbox.put(("connected", now_us()))

    def _on_connect_fail(self, client, userdata):
        # paho calls this inside its `except OSError` around the connection attempt, so the
        # reason is the exception being handled: refused, unreachable, or a TLS failure such
        # as "[SSL: CERTIFICATE_VERIFY_FAILED] ...". Logged once per distinct reason, not on
        # every retry.
        e = sys.exc_info()[1]
        why = f"{type(e).__name__}: {e}" if e is not None else "unknown error"
        if why != self.connect_error:
            log.error(
                "cannot connect to %s:%s%s: %s (retrying)",
                self.bcfg.host,
                self.bcfg.port,
                " with TLS" if self.bcfg.tls else "",
                why,
            )
        self.connect_error = why

    def _on_disconnect(self, client, userdata, flags, reason_code, properties):
        self.connected.clear()
        self.inbox.put(("disconnected", now_us()))
        log.warning("disconnected from the broker (%s); reconnecting", reason_code)

    def _on_message(self, client, userdata, msg):
        rx = now_us()
        if msg.topic.endswith("/sync/req") and self._answer_sync(msg, rx):
            return
        self.inbox.put(("mqtt", rx, msg.topic, bytes(msg.payload), msg.mid, msg.qos))

    def _answer_sync(self, msg, rx) -> bool:
        try:
            _kind, venue, table, node, req = codec.decode_message(msg.topic, msg.payload)
        except codec.ProtocolError:
            return False  # the daemon counts the rejection
        resp = {"v": 1, "id": req["id"], "t1": req["t1"], "t2": rx, "t3": now_us()}
        self.client.publish(
            codec.topic(venue, table, "sync_resp", node), codec.encode("sync_resp", resp), qos=0
        )
        self.sync_answered += 1
        return True

    # -- daemon thread -----------------------------------------------------------------------
    def ack(self, mid: int, qos: int) -> None:
        if qos > 0:
            self.client.ack(mid, qos)

    def publish(self, topic: str, payload: bytes, qos: int = 1, retain: bool = False):
        return self.client.publish(topic, payload, qos=qos, retain=retain)
