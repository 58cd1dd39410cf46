"""MQTT display feeds and Home Assistant discovery, against a real private mosquitto."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import jsonschema
import pytest

from harness.mqttsub import client, subscriber
from harness.waiting import poll
from railbird.broker import PrivateBroker
from railbird.mqttclient import RECONNECT_MAX_S
from railbird.outputs.mqtt_feeds import MqttFeedsOutput, ha_discovery
from railbird.outputs.tables import Venues
from railbird.rules import Referee
from rbproto import codec

SCHEMA = json.loads(Path(__file__).with_name("ha_discovery_schema.json").read_text())
DISCOVERY_TOPIC = re.compile(r"^homeassistant/(sensor|binary_sensor)/[a-zA-Z0-9_-]+/config$")

# The host must be allowed to write the discovery prefix (docs/displays.md, "Broker ACL").
ACL_EXTRA = "\nuser railbird-host\ntopic write homeassistant/#\ntopic read homeassistant/status\n"


class HABroker(PrivateBroker):
    def _write_config(self):
        path = super()._write_config()
        with open(self.workdir / "acl", "a") as f:
            f.write(ACL_EXTRA)
        return path


@pytest.fixture
def habroker(tmp_path):
    b = HABroker(tmp_path / "broker")
    b.start()
    yield b
    b.stop()


class Sink:
    """A display client (railbird-display) recording the latest payload per topic."""

    def __init__(self, port, topics=("railbird/v1/#", "homeassistant/#")):
        self.msgs: dict[str, list] = {}
        self.lock = threading.Lock()
        # subscribed on return: non-retained feeds (shot, announce) are only seen after that
        self.c = subscriber(port, self._on, "ha-sink", topics, "railbird-display", "display-secret")

    def _on(self, c, u, m):
        with self.lock:
            self.msgs.setdefault(m.topic, []).append((m.payload, m.retain))

    def last(self, topic):
        with self.lock:
            v = self.msgs.get(topic)
            return None if not v else json.loads(v[-1][0])

    def close(self):
        self.c.loop_stop()
        self.c.disconnect()


def test_discovery_payloads_validate_against_documented_schema():
    seen = set()
    for venue, table in [("club", "t1"), ("the-bar", "table-12")]:
        for topic, cfg in ha_discovery(venue, table):
            assert DISCOVERY_TOPIC.match(topic), topic
            jsonschema.validate(cfg, SCHEMA)
            assert topic.split("/")[2] == cfg["unique_id"]
            assert cfg["unique_id"] not in seen
            seen.add(cfg["unique_id"])
            assert cfg["device"]["identifiers"] == [f"railbird_{venue}_{table}".replace("-", "_")]
    kinds = {t.split("/")[1] + ":" + c["name"] for t, c in ha_discovery("club", "t1")}
    assert kinds == {
        "sensor:Score",
        "sensor:Player at the table",
        "sensor:Balls pocketed today",
        "binary_sensor:Sensor node online",
    }


def test_schema_rejects_what_home_assistant_would_refuse():
    _topic, cfg = ha_discovery("club", "t1")[0]
    for broken in (
        {k: v for k, v in cfg.items() if k != "unique_id"},
        dict(cfg, device={"name": "x"}),
        dict(cfg, device=dict(cfg["device"], identifiers=[])),
        {k: v for k, v in cfg.items() if k != "state_topic"},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, SCHEMA)


def _render(template, value_json):
    """Render a value template with Jinja2 as Home Assistant does (jinja2 is a dev
    dependency: a missing jinja2 must fail here, not pass the template check silently)."""
    import jinja2

    env = jinja2.Environment()
    env.filters["tojson"] = json.dumps
    return env.from_string(template).render(value_json=value_json)


@pytest.mark.broker
def test_feeds_and_discovery_over_real_broker(habroker):
    sink = Sink(habroker.port)
    clock = [time.mktime((2025, 6, 6, 21, 15, 0, 0, 0, -1))]
    out = MqttFeedsOutput(
        "127.0.0.1",
        habroker.port,
        "railbird-host",
        "host-secret",
        venues=Venues(clock=lambda: clock[0]),
    )
    out.start()
    try:
        ref = Referee({"type": "match", "game": "10-ball", "players": ["Ann", "Bob"], "race_to": 3})
        st = ref.feed({"type": "lag", "winner": "Ann"})
        out.on_node(
            "club", "t1", "n1", {"v": 1, "node": "n1", "boot": 1, "state": "online", "uptime_us": 5}
        )
        out.on_state("club", "t1", "10-ball", st, st["fen"], ref.announcements)
        shot = {
            "table": "t1",
            "n": 1,
            "start": 0,
            "end": 10,
            "pocketed": [
                {"ball": 3, "pocket": "FL", "t": 5, "source": "sensed"},
                {"ball": None, "pocket": "SR", "t": 6, "source": "sensed"},
            ],
            "rails": [],
        }
        out.on_shot("club", "t1", shot)
        st = ref.feed({"type": "shot", "pocketed": [{"ball": 0, "pocket": "FL"}]})
        anns = [
            dict(a, level="foul" if a["text"].startswith("Foul") else "info")
            for a in ref.announcements
        ]
        out.on_state("club", "t1", "10-ball", st, st["fen"], anns)

        base = "railbird/v1/club/t1/"
        assert poll(
            lambda: (
                sink.last(base + "state")
                and sink.last(base + "state")["state"]["at_table"] == "Bob"
            )
        ), (sink.msgs.get(base + "state"), out.stats)  # what arrived, to tell a race apart
        state_msg = sink.last(base + "state")
        codec.validate("state", state_msg)
        assert poll(lambda: sink.last(base + "shot"))
        codec.validate("shot", sink.last(base + "shot"))
        assert poll(
            lambda: any(
                json.loads(p).get("level") == "foul"
                for p, _ in sink.msgs.get(base + "announce", [])
            )
        )
        # the table's summary on its own topic, the venue index with its entry and totals
        # Summaries are published on a timer (at most every 0.25 s, the index every 1 s): a
        # busy machine can publish one between on_node and on_shot, so wait for the one
        # that counts the shot rather than take the first that arrives
        summary = poll(
            lambda: (s := sink.last(base + "summary")) and s["pocketed_today"] == 2 and s
        )
        assert summary, sink.msgs.get(base + "summary")
        codec.decode_message(base + "summary", json.dumps(summary))
        assert summary["online"] is True and summary["pocketed_today"] == 2
        pockets = summary["pockets"]
        assert pockets["by_pocket"]["FL"] == 1 and pockets["by_pocket"]["SR"] == 1
        assert pockets["by_hour"] == {"21": 2}
        assert pockets["by_game"][0]["balls"] == 2
        index = poll(
            lambda: (
                (i := sink.last("railbird/v1/club/summary")) and i.get("pocketed_today") == 2 and i
            )
        )
        assert index, sink.msgs.get("railbird/v1/club/summary")
        codec.validate("summary", index)
        assert index["tables"]["t1"] == {
            "game": "10-ball",
            "scores": [0, 0],
            "at_table": 1,
            "online": True,
            "pocketed_today": 2,
        }
        assert (index["complete"], index["count"], index["online_count"]) == (True, 1, 1)
        assert index["pocketed_today"] == 2

        # discovery: retained, valid, and its templates give the right values
        disc = {t: sink.last(t) for t in list(sink.msgs) if t.startswith("homeassistant/")}
        assert len(disc) == 4
        for cfg in disc.values():
            jsonschema.validate(cfg, SCHEMA)
            src = state_msg if cfg["state_topic"].endswith("/state") else summary
            value = _render(cfg["value_template"], src)
            assert (
                value
                == {
                    "Score": "0 - 0",
                    "Player at the table": "Bob",
                    "Balls pocketed today": "2",
                    "Sensor node online": "ON",
                }[cfg["name"]]
            )

        # availability: the host's heartbeat makes the entities available, its last will
        # unavailable (the template as Home Assistant renders it)
        for cfg in disc.values():
            (av,) = cfg["availability"]
            assert av["topic"] == "railbird/v1/club/host"
            for state in ("online", "offline"):
                msg = {"v": 1, "venue": "club", "state": state, "period_s": 1}
                want = av["payload_available" if state == "online" else "payload_not_available"]
                assert _render(av["value_template"], msg) == want

        # retained: a display that connects later gets state, summary and discovery at once
        late = Sink(habroker.port)
        try:
            assert poll(
                lambda: (
                    late.last(base + "state")
                    and late.last("railbird/v1/club/summary")
                    and late.last(base + "summary")
                    and len([t for t in late.msgs if t.startswith("homeassistant/")]) == 4
                )
            )
        finally:
            late.close()

        # Home Assistant restarts and says so: discovery is sent again
        n = out.stats["discovery"]
        ha = client(habroker.port, "railbird-host", "host-secret")  # stands in for HA's own user
        ha.publish("homeassistant/status", b"online", qos=1).wait_for_publish(5)
        assert poll(lambda: out.stats["discovery"] >= n + 4)
        ha.loop_stop()
        ha.disconnect()
        assert out.stats["rejected"] == 0
    finally:
        out.stop()
        sink.close()


def test_pocket_counts_roll_over_at_business_day_start():
    clock = [time.mktime((2025, 6, 7, 1, 30, 0, 0, 0, -1))]  # 01:30: still Friday's night
    v = Venues(day_start_hour=6, clock=lambda: clock[0])
    v.on_shot("club", "t1", {"pocketed": [{"ball": 1, "pocket": "HL"}]})
    assert v.table_summary("club", "t1")["pockets"]["day"] == "2025-06-06"
    clock[0] += 5 * 3600  # 06:30
    assert v.table_summary("club", "t1")["pocketed_today"] == 0
    v.on_shot(
        "club", "t1", {"pocketed": [{"ball": 2, "pocket": "HR"}, {"ball": 0, "pocket": "HR"}]}
    )
    p = v.table_summary("club", "t1")["pockets"]
    assert (p["day"], p["total"], p["cue"], p["by_pocket"]["HR"]) == ("2025-06-07", 2, 1, 2)


@pytest.mark.broker
def test_feeds_started_before_the_broker_reach_it_within_seconds(tmp_path):
    """A host that starts while the broker is still down (a venue's machine booting): the
    feeds keep what they are given, retry within at most 5 s (as the ingest), say so once,
    and the displays get the retained state soon after the broker comes up. At paho's
    backoff of 1-30 s the retry after four refusals came 16 s later."""
    broker = HABroker(tmp_path / "broker")  # its port chosen, nothing listening yet
    out = MqttFeedsOutput("127.0.0.1", broker.port, "railbird-host", "host-secret")
    out.start()
    sink = None
    try:
        ref = Referee({"type": "match", "game": "10-ball", "players": ["Ann", "Bob"], "race_to": 3})
        st = ref.feed({"type": "lag", "winner": "Ann"})
        out.on_state("club", "t1", "10-ball", st, st["fen"], ref.announcements)
        assert poll(lambda: out.stats["connect_failures"] >= 4, 15), out.stats
        # the retry policy is the factory's (tests/host/test_mqttclient.py): at most 5 s
        # between attempts, so the feeds are back soon after the broker; how soon is the
        # machine's to say, so the wait is generous rather than a bound on the wall clock
        assert out.client._reconnect_max_delay == RECONNECT_MAX_S == 5.0
        link = out.broker_link  # one count of the failures: the feeds report the link's
        assert link is not None and out.stats["connect_failures"] == link.failures >= 4
        broker.start()
        sink = Sink(broker.port)
        state = "railbird/v1/club/t1/state"
        assert poll(lambda: sink.last(state) is not None, 60), out.stats
        assert sink.last(state)["state"]["at_table"] == "Ann"
    finally:
        out.stop()
        if sink is not None:
            sink.close()
        broker.stop()
