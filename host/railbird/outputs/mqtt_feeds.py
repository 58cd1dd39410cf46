"""Output: MQTT feeds for displays and Home Assistant discovery (docs/displays.md).

Publishes, with the codec of protocol/SPEC.md:
  railbird/v1/<venue>/<table>/state      retained, QoS 1, on every state
  railbird/v1/<venue>/<table>/shot       QoS 1, every assembled shot
  railbird/v1/<venue>/<table>/inplay     retained, QoS 1, the shot in play (provisional), as
                                         soon as a pocketed ball is released; cleared (an
                                         empty retained message) when the shot closes
  railbird/v1/<venue>/<table>/announce   QoS 1, one per announcement
  railbird/v1/<venue>/<table>/summary    retained, QoS 1, at most every 0.25 s after a change
  railbird/v1/<venue>/summary            retained, QoS 1, the venue index, at most every 1 s
(the summaries from a thread of their own, railbird.outputs.summaries) and, per table,
Home Assistant discovery configs (retained) under
  <discovery_prefix>/sensor/railbird_<venue>_<table>_<key>/config            (score, player,
  <discovery_prefix>/binary_sensor/railbird_<venue>_<table>_online/config     pocketed today)
re-sent whenever Home Assistant announces itself on <discovery_prefix>/status "online".
Every entity is available while the host's `railbird/v1/<venue>/host` says online.

    MqttFeedsOutput(host="127.0.0.1", port=1883, username="railbird-host", password="...")

Pass `client=` an already connected paho client to share the daemon's connection instead.
Publishing never blocks the daemon: paho queues while disconnected (bounded by
`max_queued`), and after every connection the newest payload of each retained topic is
published once more (`RESEND_AFTER_S`): paho 2.2 sends what is published during the
handshake ahead of what it queued before it, so the broker could otherwise keep an older
state as the retained one, shown as live to every display that connects.
"""

from __future__ import annotations

import json
import logging
import threading
import time

import paho.mqtt.client as mqtt

import railbird
from railbird.core.revision import state_rev
from railbird.mqttclient import BrokerLogin, Link, new_client
from railbird.outputs.base import Output
from railbird.outputs.summaries import TABLE_PERIOD_S, SummaryFeed
from railbird.outputs.tables import Venues
from rbproto import codec

log = logging.getLogger("railbird.feeds")

HA_PREFIX = "homeassistant"
# After a CONNACK paho sends the messages it queued while disconnected, in its network
# thread right after on_connect, and any message published between the socket coming up
# and the CONNACK has gone out before them (eclipse-paho/paho.mqtt.python#910). The
# retained topics' newest payloads are published again by the flush thread this long after
# the connection, behind that flush: paho's queue is ordered from then on, so the last
# retained message the broker gets on each topic is the newest.
RESEND_AFTER_S = 0.5


def ha_unique(venue: str, table: str, key: str | None = None) -> str:
    base = f"railbird_{venue}_{table}".replace("-", "_")
    return base if key is None else f"{base}_{key}"


def ha_discovery(venue: str, table: str, prefix: str = HA_PREFIX) -> list[tuple[str, dict]]:
    """(topic, config) of every Home Assistant entity of one table."""
    state_t = codec.topic(venue, table, "state")
    summary_t = codec.topic(venue, table, "table_summary")  # the table's own summary
    # the host's last will makes every entity "unavailable" in Home Assistant rather than
    # showing the last score as current (SPEC.md `host`)
    availability = [
        {
            "topic": codec.topic(venue, None, "host"),
            "value_template": "{{ value_json.state }}",
            "payload_available": "online",
            "payload_not_available": "offline",
        }
    ]
    device = {
        "identifiers": [ha_unique(venue, table)],
        "name": f"Pool table {table} ({venue})",
        "manufacturer": "Railbird",
        "model": "Railbird table sensors",
        "sw_version": railbird.__version__,
    }
    origin = {"name": "railbird", "sw_version": railbird.__version__}
    ents: list[tuple[str, str, dict[str, object]]] = [
        (
            "sensor",
            "score",
            {
                "name": "Score",
                "state_topic": state_t,
                "value_template": "{% set s = value_json.state %}"
                "{{ s.scores[s.players[0]] }} - {{ s.scores[s.players[1]] }}",
                "json_attributes_topic": state_t,
                "json_attributes_template": "{{ {'game': value_json.game, 'players': "
                "value_json.state.players, 'rack': "
                "value_json.state.rack} | tojson }}",
                "icon": "mdi:scoreboard",
            },
        ),
        (
            "sensor",
            "at_table",
            {
                "name": "Player at the table",
                "state_topic": state_t,
                "value_template": "{{ value_json.state.at_table if value_json.state.at_table "
                "is not none else 'none' }}",
                "icon": "mdi:account",
            },
        ),
        (
            "sensor",
            "pocketed_today",
            {
                "name": "Balls pocketed today",
                "state_topic": summary_t,
                "value_template": "{{ value_json.pocketed_today }}",
                "json_attributes_topic": summary_t,
                "json_attributes_template": "{{ value_json.pockets.by_pocket | tojson }}",
                "unit_of_measurement": "balls",
                "state_class": "total_increasing",
                "icon": "mdi:billiards",
            },
        ),
        (
            "binary_sensor",
            "online",
            {
                "name": "Sensor node online",
                "state_topic": summary_t,
                "value_template": "{{ 'ON' if value_json.online else 'OFF' }}",
                "payload_on": "ON",
                "payload_off": "OFF",
                "device_class": "connectivity",
                "entity_category": "diagnostic",
            },
        ),
    ]
    out = []
    for component, key, cfg in ents:
        uid = ha_unique(venue, table, key)
        cfg = dict(
            cfg, unique_id=uid, device=device, origin=origin, availability=availability, qos=1
        )
        out.append((f"{prefix}/{component}/{uid}/config", cfg))
    return out


RAILS_MAX = 1024  # protocol/SPEC.md `shot`: rail hits in one message


def fitted_shot(msg: dict) -> dict:
    """The `shot` message as it fits one MQTT message (protocol/SPEC.md `shot`): as it is,
    or with its rail hits thinned evenly (the first and the last kept) and `rails_total`
    saying how many there were. A rail sensor chattering for a second and a half gives a
    shot past MAX_PAYLOAD that displays and Home Assistant would otherwise never see."""
    rails = msg.get("rails") or []
    keep = min(len(rails), RAILS_MAX)
    while True:
        out = msg if keep == len(rails) else dict(msg, rails=_spread(rails, keep),
                                                  rails_total=len(rails))  # fmt: skip
        try:
            codec.encode("shot", out)
            return out
        except codec.ProtocolError as e:
            if e.code != "too large" or keep == 0:
                return out  # another fault: _send counts and logs it
            keep = keep * 3 // 4


def _spread(items: list, keep: int) -> list:
    """`keep` of `items`, evenly spaced, the first and the last among them."""
    n = len(items)
    if keep >= n:
        return list(items)
    if keep <= 1:
        return list(items[:keep])
    return [items[round(i * (n - 1) / (keep - 1))] for i in range(keep)]


class MqttFeedsOutput(Output):
    name = "mqtt-feeds"

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 1883,
        username: str = "railbird-host",
        password: str = "",
        *,
        tls: bool = False,
        cafile: str | None = None,
        client_id: str = "",
        discovery: bool = True,
        discovery_prefix: str = HA_PREFIX,
        client: mqtt.Client | None = None,
        venues: Venues | None = None,
        max_queued: int = 10000,
        mqtt311: bool = False,
    ):
        """`mqtt311`: MQTT 3.1.1 instead of 5, for a broker that speaks only that (the NATS
        MQTT gateway of cluster mode, docs/scaling.md)."""
        self.venues = venues or Venues()
        self.discovery = discovery
        self.prefix = discovery_prefix
        self._own = client is None
        self._announced: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._long_fen: set = set()  # (venue, table) whose too-long state line was logged
        # the feeds' own counters; `stats` adds the broker link's (one count of each thing)
        self.counts = {"published": 0, "rejected": 0, "errors": 0, "discovery": 0, "resent": 0}
        # the newest payload of every retained topic (b"": cleared), for `_resend`; one lock
        # orders the publishes of the daemon's thread and the flush thread with it
        self._retained: dict[str, bytes] = {}
        self._publish_lock = threading.Lock()
        self._resend_at: float | None = None  # monotonic time the resend is due
        self.summaries = SummaryFeed(self.venues)
        self._stopping = threading.Event()
        self._flusher: threading.Thread | None = None
        # the connection's outages, of a client of our own (not `link`: outputs.factory
        # reads an output's `link` as a serial scoreboard's)
        self.broker_link: Link | None = None
        if client is None:
            client, self.broker_link = new_client(
                "feeds",
                BrokerLogin(host, port, username, password, tls, cafile),
                client_id=client_id,
                mqtt311=mqtt311,
                max_queued=max_queued,
                on_connect=self._on_connect,
            )
            self._host, self._port = host, port
        self.client = client
        client.message_callback_add(f"{self.prefix}/status", self._on_ha_status)

    # -- life cycle ----------------------------------------------------------------------
    def start(self) -> None:
        if self._own:
            self.client.connect_async(self._host, self._port, keepalive=30)
            self.client.loop_start()
        elif self.discovery:
            self.client.subscribe(f"{self.prefix}/status", qos=1)
        self._flusher = threading.Thread(
            target=self._flush_loop, name="railbird-feeds", daemon=True
        )
        self._flusher.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._flusher is not None:
            self._flusher.join(5)
        if self._flusher is None or not self._flusher.is_alive():  # one publisher at a time
            self.flush()  # what is still owed
        if self._own:
            try:
                self.client.loop_stop()
                self.client.disconnect()
            except Exception:  # stopping anyway: note why, go on
                log.debug("feeds: disconnect failed", exc_info=True)

    @property
    def stats(self) -> dict[str, int]:
        """The feeds' counters with their own client's `connect_failures` and
        `connections_lost` (counted by self.broker_link, which logs each outage once)."""
        link = self.broker_link.stats() if self.broker_link is not None else {}
        return {**self.counts, **link}

    def _on_connect(self, client, userdata, flags, reason_code, properties=None):
        if reason_code.is_failure:  # logged by self.broker_link
            return
        with self._lock:
            self._resend_at = time.monotonic() + RESEND_AFTER_S
        if self.discovery:
            client.subscribe(f"{self.prefix}/status", qos=1)
            self._republish_discovery()

    def _on_ha_status(self, client, userdata, msg):
        if msg.payload == b"online":  # Home Assistant (re)started: it wants discovery again
            self._republish_discovery()

    def _republish_discovery(self):
        with self._lock:
            tables = list(self._announced)
        for venue, table in tables:
            self._discover(venue, table)

    # -- publishing ------------------------------------------------------------------------
    def _publish(self, topic: str, payload: bytes, retain: bool = False) -> None:
        with self._publish_lock:
            if retain:
                self._retained[topic] = payload
            self._put(topic, payload, retain, "published")

    def _resend(self) -> None:
        """Every retained topic's newest payload once more, in one go: nothing published
        meanwhile comes between the copy and its sending."""
        with self._publish_lock:
            for topic, payload in self._retained.items():
                self._put(topic, payload, True, "resent")

    def _put(self, topic: str, payload: bytes, retain: bool, counter: str) -> None:
        """One message into paho's queue, counted in `counter` or, the queue full, as an
        error (the caller holds `_publish_lock`)."""
        if self.client.publish(topic, payload, qos=1, retain=retain).rc == (
            mqtt.MQTT_ERR_QUEUE_SIZE
        ):
            self.counts["errors"] += 1
            log.warning("feeds: paho queue full, %s dropped", topic)
        else:
            self.counts[counter] += 1

    def _send(self, venue, table, kind, msg, retain=False) -> None:
        try:
            payload = codec.encode(kind, msg)
        except codec.ProtocolError as e:
            self.counts["rejected"] += 1
            log.warning("feeds: %s for %s/%s not sent: %s", kind, venue, table, e)
            return
        self._publish(codec.topic(venue, table, kind), payload, retain)

    def _discover(self, venue, table) -> None:
        if not self.discovery:
            return
        for topic, cfg in ha_discovery(venue, table, self.prefix):
            self._publish(topic, json.dumps(cfg, separators=(",", ":")).encode(), retain=True)
            self.counts["discovery"] += 1

    def _seen(self, venue, table) -> None:
        with self._lock:
            new = (venue, table) not in self._announced
            self._announced.add((venue, table))
        if new:
            self._discover(venue, table)

    def _flush_loop(self) -> None:
        while not self._stopping.wait(TABLE_PERIOD_S):
            self.flush()

    def flush(self) -> None:
        """Publish the summaries that are due (railbird.outputs.summaries), and once after
        a connection the retained topics again (`_resend`)."""
        with self._lock:  # a connection that comes meanwhile keeps its own resend
            due = self._resend_at
            if due is not None and time.monotonic() >= due:
                self._resend_at = None
            else:
                due = None
        if due is not None:
            self._resend()
        try:
            for topic, payload in self.summaries.due(time.monotonic()):
                self._publish(topic, payload, retain=True)
        except Exception:  # the feed thread must not die: logged, tried again next round
            self.counts["errors"] += 1
            log.exception("feeds: summaries not published")

    # -- Output ------------------------------------------------------------------------------
    def on_shot(self, venue, table, shot) -> None:
        had_inplay = self.venues.table(venue, table).inplay is not None
        self.venues.on_shot(venue, table, shot)
        self._seen(venue, table)
        msg = dict(shot, v=1, table=table)
        self._send(venue, table, "shot", fitted_shot(msg))
        if had_inplay:  # the shot's ruling replaces the provisional view
            self._clear_inplay(venue, table)
        self.summaries.changed(venue, table)

    def on_inplay(self, venue, table, inplay) -> None:
        self.venues.on_inplay(venue, table, inplay)
        self._seen(venue, table)
        msg = {
            "v": 1,
            "table": table,
            "shot": inplay.get("shot"),
            "start": inplay.get("start"),
            "pocketed": [
                {k: p[k] for k in ("pocket", "t", "ball") if k in p}
                for p in inplay.get("pocketed") or ()
            ],
            "provisional": True,
        }
        self._send(venue, table, "inplay", msg, retain=True)

    def _clear_inplay(self, venue, table) -> None:
        self._publish(codec.topic(venue, table, "inplay"), b"", retain=True)

    def _put_fen(self, msg: dict, venue, table, fen) -> None:
        """The state's revision, and its line unless it is longer than the protocol allows:
        then the line is left out (the field is optional) and logged once per table. A cut
        line is no state: a display or simulator that read one back got a state that no
        longer parses."""
        if not fen:
            return
        msg["rev"] = state_rev(fen)  # what a console's input names (core/revision.py)
        if len(fen) <= codec.FEN_MAX:
            msg["fen"] = fen
        elif (venue, table) not in self._long_fen:
            self._long_fen.add((venue, table))
            log.warning(
                "%s/%s: state line of %d characters, past the protocol's %d: sent without it",
                venue,
                table,
                len(fen),
                codec.FEN_MAX,
            )

    def on_state(self, venue, table, game, state, fen, announcements) -> None:
        self.venues.on_state(venue, table, game, state, fen, announcements)
        self._seen(venue, table)
        msg = {"v": 1, "table": table, "game": game, "state": state}
        self._put_fen(msg, venue, table, fen)
        self._send(venue, table, "state", msg, retain=True)
        for a in announcements or ():
            am = {
                "v": 1,
                "table": table,
                "text": str(a.get("text", ""))[:120] or "-",
                "rule": (str(a["rule"])[:32] or None) if a.get("rule") else None,
            }
            if a.get("level") in codec.LEVELS:
                am["level"] = a["level"]
            self._send(venue, table, "announce", am)
        self.summaries.changed(venue, table)

    def on_node(self, venue, table, node, status) -> None:
        self.venues.on_node(venue, table, node, status)
        self._seen(venue, table)
        self.summaries.changed(venue, table)

    def on_sensors(self, venue, table, report) -> None:
        """The table's summary carries it (`sensors`): republished only because it changed."""
        self.venues.on_sensors(venue, table, report)
        self._seen(venue, table)
        self.summaries.changed(venue, table)

    def restore(self, venue, table, history, nodes) -> None:
        """Start-up: today's counts from the journal's shots; the retained state and summary
        topics rewritten (nothing on the shot and announce topics)."""
        t = self.venues.restore(venue, table, history, nodes)
        self._seen(venue, table)
        self._clear_inplay(venue, table)  # one left from before the restart is not in play
        if t.state is not None:
            msg = {"v": 1, "table": table, "game": t.game, "state": t.state}
            self._put_fen(msg, venue, table, t.fen)
            self._send(venue, table, "state", msg, retain=True)
        self.summaries.changed(venue, table)
