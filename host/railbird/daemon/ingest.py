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
import threading
import time
from collections.abc import Callable

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode
from paho.mqtt.subscribeoptions import SubscribeOptions

import railbird
from railbird.config import BrokerConfig, host_client_id
from railbird.mqttclient import BrokerLogin, new_client
from rbproto import codec

log = logging.getLogger("railbird.daemon.ingest")

TAKEN_OVER = 0x8E  # MQTT v5 reason code "Session taken over" (§4.13)

HOST_PERIOD_S = 1  # displays call the host gone after 2 periods + 1 s of silence: 3 s


def now_us() -> int:
    """Host time, the table time axis: CLOCK_MONOTONIC in µs (same across process restarts
    on one machine, which the journal replay relies on)."""
    return time.monotonic_ns() // 1000


def subscriptions(venue: str, tables: list[str]) -> list[tuple[str, int]]:
    """(topic filter, qos) pairs. The version level is a wildcard so that a node speaking
    another major version is received, refused and counted instead of silently ignored."""
    out: list[tuple[str, int]] = []
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


# The counters every ingest keeps for the daemon's stats (Daemon.stats; the child process's
# ingest reports them to its daemon, railbird.daemon.ingestproc)
COUNTERS = (
    "connects",
    "sync_answered",
    "session_takeovers",
    "sessions_lost",
    "retained_ignored",
    "retained_unknown",
)

UNKNOWN_TOPICS_MAX = 100_000  # retained topics of unknown tables remembered (about 10 MB)

RETAINED_LEAVES = ("birth", "status", "config", "state", "summary", "host")


def protocol_retains(topic: str) -> bool:
    """Whether protocol/SPEC.md's topic table has the message of `topic` retained (`birth`,
    `status`, `config`, `state`, `summary`, `host`); `events`, `sync/...`, `referee`, `shot`,
    `announce` are never retained. Judged by the last level, for every version root."""
    return topic.rsplit("/", 1)[-1] in RETAINED_LEAVES


class Ingest:
    def __init__(
        self,
        bcfg: BrokerConfig,
        venue: str,
        tables: list[str],
        inbox: queue.Queue[tuple[object, ...]],  # the daemon's: ("mqtt", rx, ...), ("connected", t)
        knows: Callable[[str, str | None, str | None], bool] | None = None,
    ) -> None:
        self.bcfg = bcfg
        self.venue = venue
        self.tables = list(tables)
        self.inbox = inbox
        self.connected = threading.Event()
        self.connects = 0
        self.sync_answered = 0
        # Session takeover (protocol/SPEC.md "Security"): the broker threw the host out for
        # another client with its id, or the host came back to no session although it had
        # one (`expect_session`: the daemon sets it when its journal shows an earlier run).
        self.session_takeovers = 0
        self.sessions_lost = 0
        self.expect_session = False
        self.retained_ignored = 0  # retained copies on topics the protocol never retains
        # (venue, table, node) -> whether the config knows it (Config.knows); None: all
        self.knows = knows
        # Retained `birth`/`status`/... under a table or node the config does not know: the
        # broker hands them over at every start and reconnect, and each would be journalled
        # as a rejection again (issue 23, item 14: 2,000 junk messages gave 2,000 more
        # journal rows a start). Counted once per topic, never journalled.
        self.retained_unknown = 0
        self._unknown_topics: set[str] = set()
        self.client_id = host_client_id(bcfg, venue)
        # the derived id is as good as a password for the session: logs show its public part
        self.client_id_shown = bcfg.client_id or f"railbird-host-{venue}-..."
        login = BrokerLogin(
            bcfg.host, bcfg.port, bcfg.user, bcfg.password or None, bcfg.tls, bcfg.cafile or None
        )
        self.client, self.link = new_client(
            "ingest",
            login,
            client_id=self.client_id,
            manual_ack=True,
            on_connect=self._on_connect,
            on_disconnect=self._on_disconnect,
        )
        self.client.max_inflight_messages_set(100)
        self.client.on_message = self._on_message
        self.client.on_subscribe = self._on_subscribe
        self._sub_mid: int | None = None
        self.host_topic = codec.topic(venue, None, "host")
        self.host_seq = 0
        # the retained `online` of this connection: its echo says the backlog is in
        self._barrier: bytes | None = None
        self.client.will_set(self.host_topic, self._host_msg("offline"), qos=1, retain=True)

    @property
    def connect_error(self) -> str:
        """Why the current outage began ("" while connected): refused, unreachable, or a
        TLS failure such as "[SSL: CERTIFICATE_VERIFY_FAILED] ..."."""
        return self.link.reason

    def start(self) -> None:
        props = Properties(PacketTypes.CONNECT)  # paho's __init__ is unannotated (pyproject.toml)
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
        msg: dict[str, object] = {"v": 1, "venue": self.venue, "state": state}
        if state == "online":
            msg.update(period_s=HOST_PERIOD_S, seq=self.host_seq, version=railbird.__version__)
        return codec.encode("host", msg)

    def heartbeat(self, retain: bool = False) -> None:
        """Publish `online` when connected; a no-op otherwise (paho would queue stale
        heartbeats for the reconnect). `retain`: the retained one, after (re)connecting."""
        if self.connected.is_set():
            msg = self._host_msg("online")
            if retain:
                self._barrier = msg
            self.client.publish(self.host_topic, msg, qos=1 if retain else 0, retain=retain)
            self.host_seq += 1

    # -- callbacks (network thread) --------------------------------------------------------
    def _on_connect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: mqtt.ConnectFlags,
        reason_code: ReasonCode,
        properties: Properties | None,
    ) -> None:
        if reason_code.is_failure:  # logged and counted by self.link
            return
        self.connects += 1
        log.info(
            "connected to %s:%s (session present: %s)",
            self.bcfg.host,
            self.bcfg.port,
            flags.session_present,
        )
        if not flags.session_present and (self.connects > 1 or self.expect_session):
            # mosquitto 2.0 throws the host out without a reason code when another client
            # takes its id; with a clean session that client also deleted the host's queue
            self.sessions_lost += 1
            log.error(
                "SESSION LOST: the broker had no session for client id %s, so whatever was "
                "queued for the host while it was away is lost. Another client connected with "
                "this id and a clean session (a second host with this config, or a takeover), "
                "or the session expired (broker.session_expiry_s), or the broker lost its "
                "persistence",
                self.client_id_shown,
            )
        # Noted now, not on the SUBACK: the broker hands over what it queued for the host
        # right after the CONNACK, and the reconnect's per-node holds must come before a
        # node's fresh status (nothing buffered) that ends them, or they wait for its next.
        self.inbox.put(("connected", now_us()))
        # no_local: the host's own publishes (the clearing of retained junk) are not input
        subs = [
            (f, SubscribeOptions(qos=q, noLocal=True))
            for f, q in subscriptions(self.venue, self.tables)
        ]
        # the host's own `host` topic, for the echo of its `online` (`_echo`)
        subs.append(
            (
                self.host_topic,
                SubscribeOptions(
                    qos=1, noLocal=False, retainHandling=SubscribeOptions.RETAIN_DO_NOT_SEND
                ),
            )
        )
        result, self._sub_mid = client.subscribe(subs)
        if result != mqtt.MQTT_ERR_SUCCESS:
            log.error("subscribe failed: %s", result)

    def _on_subscribe(
        self,
        client: mqtt.Client,
        userdata: object,
        mid: int,
        reason_codes: list[ReasonCode],
        properties: Properties | None,
    ) -> None:
        if mid == self._sub_mid:
            bad = [rc for rc in reason_codes if rc.is_failure]
            if bad:
                log.error("subscription refused: %s", bad)
            self.connected.set()
            self.heartbeat(retain=True)  # replaces the retained will of a previous run

    def _on_disconnect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: mqtt.DisconnectFlags,
        reason_code: ReasonCode,
        properties: Properties | None,
    ) -> None:
        self.connected.clear()
        self.inbox.put(("disconnected", now_us()))
        if reason_code == TAKEN_OVER:
            self.session_takeovers += 1
            log.error(
                "SESSION TAKEN OVER: another client connected with the host's client id %s "
                "and the broker closed the host's connection; messages for the host now go to "
                "it. Reconnecting (which throws it out in turn); find it: a second host with "
                "this config, or a login used to impersonate the host",
                self.client_id_shown,
            )
            return

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        rx = now_us()
        topic = msg.topic  # paho decodes it at every read
        if topic == self.host_topic:
            self._echo(msg)
            return
        if msg.retain:
            if not protocol_retains(topic):
                self._drop_retained(msg)
                return
            if self.knows is not None and not self._known(topic):
                self._drop_unknown(msg)
                return
        if topic.endswith("/sync/req") and self._answer_sync(msg, rx):
            return
        self.inbox.put(("mqtt", rx, topic, bytes(msg.payload), msg.mid, msg.qos))

    def _echo(self, msg: mqtt.MQTTMessage) -> None:
        """The host's own messages on its `host` topic, back from the broker. The broker
        keeps one queue per session, in order, so the echo of the `online` published on
        subscribing comes after everything it held for the host: the backlog is in the inbox
        and the daemon may tick again (`caught_up`), also when traffic never pauses. Never
        journalled; the QoS 0 heartbeats' echoes (which may overtake the queue) are ignored."""
        if msg.qos > 0:
            self.client.ack(msg.mid, msg.qos)
        if msg.qos > 0 and not msg.retain and bytes(msg.payload) == self._barrier:
            self._barrier = None
            self.inbox.put(("caught_up", now_us()))

    def _drop_retained(self, msg: mqtt.MQTTMessage) -> None:
        """A retained copy on a topic the protocol never retains: junk that the broker would
        hand over again on every subscribe. Not journalled (acknowledged at once, as nothing
        is to be kept); cleared at the broker when it is under the host's v1 tree (an empty
        retained message deletes it; the host may write there)."""
        self.retained_ignored += 1
        if msg.qos > 0:
            self.client.ack(msg.mid, msg.qos)
        if msg.topic.startswith(codec.ROOT + "/"):
            self.client.publish(msg.topic, b"", qos=0, retain=True)
        if self.retained_ignored in (1, 10, 100) or self.retained_ignored % 1000 == 0:
            log.warning(
                "ignored %d retained message(s) on topics the protocol never retains, "
                "latest %s; cleared at the broker",
                self.retained_ignored,
                msg.topic,
            )

    def _known(self, topic: str) -> bool:
        try:
            venue, table, _kind, node = codec.parse_topic(topic)  # type: ignore[no-untyped-call]  # unannotated codec
        except codec.ProtocolError:
            return True  # not for this check: the daemon refuses it and counts why
        assert self.knows is not None
        return self.knows(venue, table, node)

    def _drop_unknown(self, msg: mqtt.MQTTMessage) -> None:
        """A retained copy under a table or node the config does not know. Acknowledged and
        not journalled; counted once per topic (a bounded set), so the count says how many
        such topics the broker holds, not how often the host restarted. Left at the broker:
        the protocol retains these leaves, and the owner may be adding that table."""
        if msg.qos > 0:
            self.client.ack(msg.mid, msg.qos)
        if msg.topic in self._unknown_topics or len(self._unknown_topics) >= UNKNOWN_TOPICS_MAX:
            return
        self._unknown_topics.add(msg.topic)
        self.retained_unknown += 1
        if self.retained_unknown in (1, 10, 100) or self.retained_unknown % 1000 == 0:
            log.warning(
                "ignored retained messages under %d topic(s) of tables or nodes the config "
                "does not know, latest %s (not journalled; add the table to [tables] to use it)",
                self.retained_unknown,
                msg.topic,
            )

    def _answer_sync(self, msg: mqtt.MQTTMessage, rx: int) -> bool:
        try:
            # (core/fastcodec.py ignores the same call, as railbird.daemon.answer does)
            decoded = codec.decode_message(msg.topic, msg.payload)  # type: ignore[no-untyped-call]  # unannotated codec
            _kind, venue, table, node, req = decoded
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

    def ack_all(self, acks: list[tuple[int, int]]) -> None:
        """A committed batch's acknowledgements, (mid, qos) each."""
        ack = self.client.ack
        for mid, qos in acks:
            if qos > 0:
                ack(mid, qos)

    def publish(
        self, topic: str, payload: bytes, qos: int = 1, retain: bool = False
    ) -> mqtt.MQTTMessageInfo:
        return self.client.publish(topic, payload, qos=qos, retain=retain)
