"""`railbird run` with its outputs from the config: a private mosquitto, the simulated node
firmware and the daemon as a subprocess. The retained state feed, the summary with the
pocket counts and Home Assistant discovery are published, the web scoreboard serves its
pages, JSON and server-sent events, its referee panel (the venue's referee_token as PIN)
feeds the daemon, and after SIGTERM and a restart the pocket counts and the state are the
same while the last announcements are not shown again."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from harness.hostproc import RailbirdRun
from harness.mqttsub import subscriber
from harness.waiting import wait_for
from rbnode.simnode import SimNode

pytestmark = [pytest.mark.broker]

NODE, PW, PIN = "t1-node", "node-pw", "471108"

CONFIG = """
venue = "club"
referee_token = "{pin}"
reorder_window_ms = 150
stats_period_s = 0
[broker]
port = {port}
password = "host-secret"
client_id = "railbird-host-test"
[shots]
quiet_ms = 400
lip_rest_ms = 400
cue_before_ms = 500
break_window_ms = 500
[tables.t1]
game = "10-ball"
players = ["Ann", "Bob"]
race_to = 3
nodes = ["{node}"]
[outputs.web]
host = "127.0.0.1"
port = 0
"""


class Host(RailbirdRun):
    def __init__(self, workdir: Path, port: int):
        super().__init__(workdir, CONFIG.format(port=port, node=NODE, pin=PIN))

    def wait(self, cond, what, timeout=10):
        return super().wait(cond, what, timeout)


class Sink:
    """A display (railbird-display) recording every message of the venue and of HA."""

    def __init__(self, port):
        self.msgs: dict[str, list] = {}
        self.lock = threading.Lock()
        self.c = subscriber(
            port,
            self._on,
            "outputs-sink",
            ("railbird/v1/#", "homeassistant/#"),
            "railbird-display",
            "display-secret",
        )

    def _on(self, c, u, m):
        # An empty payload clears a retained topic (the host clears `inplay` when a shot
        # closes): recorded as None, as a display would forget the message.
        with self.lock:
            self.msgs.setdefault(m.topic, []).append(json.loads(m.payload) if m.payload else None)

    def all(self, topic):
        with self.lock:
            return list(self.msgs.get(topic, []))

    def topics(self):
        with self.lock:
            return list(self.msgs)

    def close(self):
        self.c.loop_stop()
        self.c.disconnect()


def get(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.status, r.headers.get("Content-Type"), r.read()


def post(url, body):
    req = urllib.request.Request(
        url, json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def first_sse_event(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        assert r.headers.get("Content-Type").startswith("text/event-stream")
        event = None
        for raw in r:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "table":
                return json.loads(line[6:])
    raise AssertionError("no table event")


def test_run_outputs_feeds_web_referee_and_restart(broker, tmp_path):
    broker.add_user(NODE, PW)
    sink = Sink(broker.port)
    host = Host(tmp_path / "host", broker.port)
    host.start_with_web()
    sn = SimNode("127.0.0.1", broker.port, "club", "t1", NODE, PW, tmp_path / "node", seed=3)
    sn.start()
    try:
        sn.wait_connected()
        host.wait(lambda s: s["sync_samples"] >= 1, "time sync")
        ref = f"{host.web_url}/api/v/club/t1/referee"
        # the referee panel: refused without the PIN, applied (journalled) with it
        code, res = post(ref, {"input": {"type": "lag", "winner": 0}})
        assert code == 403 and not res["ok"]
        code, res = post(ref, {"pin": PIN, "inputs": [{"type": "lag", "winner": 0}]})
        assert code == 200 and res["ok"], res
        # a break that pockets the 1 (FR), then a shot pocketing a ball in HL and the cue
        # ball in SL (paired with the cue detector: inferred, so uncertain)
        base = sn.now_us + 200_000
        for ms, kind, what, v in [
            (0, "rail", "F", 2500),
            (40, "rail", "LF", 1800),
            (70, "rail", "RF", 1700),
            (120, "rail", "LH", 900),
            (200, "drop", "FR", 30000),
            (900, "rail", "RH", 700),
            (1000, "drop", "HL", 30000),
            (1150, "drop", "SL", 30000),
            (1300, "cue", None, 30000),
        ]:
            at = base + ms * 1000
            if kind == "drop":
                sn.drop(what, dur_us=v, at_us=at)
            elif kind == "rail":
                sn.rail(what, v, at_us=at)
            else:
                sn.cue(dur_us=v, at_us=at)
        sn.wait_idle(15)
        host.wait(lambda s: s["shots"] >= 2 and s["pending"] == 0, "two shots")

        # MQTT: retained state, the table's summary with the pocket counts, the venue
        # index, HA discovery
        state_t, summary_t = "railbird/v1/club/t1/state", "railbird/v1/club/t1/summary"
        index_t = "railbird/v1/club/summary"
        wait_for(
            lambda: sink.all(summary_t) and sink.all(summary_t)[-1]["pocketed_today"] == 3,
            "summary with 3 balls",
        )
        wait_for(
            lambda: (
                sink.all(index_t)
                and sink.all(index_t)[-1]["tables"]["t1"]["pocketed_today"] == 3
                and sink.all(index_t)[-1]["pocketed_today"] == 3
            ),
            "venue index with 3 balls",
        )
        disc = [t for t in sink.topics() if t.startswith("homeassistant/")]
        assert len(disc) == 4 and all(t.endswith("/config") for t in disc)
        st = sink.all(state_t)[-1]["state"]
        assert st["unconfirmed"] == ["pocketed"]  # the inferred cue ball (REFEREE.md §3a)
        pockets = sink.all(summary_t)[-1]["pockets"]
        assert pockets["by_pocket"] == {"HL": 1, "HR": 0, "SL": 1, "SR": 0, "FL": 0, "FR": 1}
        assert pockets["cue"] == 1
        anns = [a["text"] for a in sink.all("railbird/v1/club/t1/announce")]
        assert any("foul" in a.lower() for a in anns)

        # web: the page, the JSON snapshot and the live event stream
        code, ctype, body = get(f"{host.web_url}/v/club/t1/")
        assert code == 200 and ctype.startswith("text/html") and b'id="score-a"' in body
        snap = json.loads(get(f"{host.web_url}/api/v/club/t1")[2])
        assert snap["pockets"] == pockets and snap["state"] == st
        assert any("foul" in a["text"].lower() for a in snap["announcements"])
        assert first_sse_event(f"{host.web_url}/events/v/club")["pockets"] == pockets
        n_summary, n_ann = len(sink.all(summary_t)), len(anns)

        # the host's heartbeat (SPEC.md `host`): online while it runs
        host_t = "railbird/v1/club/host"
        wait_for(lambda: len(sink.all(host_t)) >= 2, "two host heartbeats")
        assert {m["state"] for m in sink.all(host_t)} == {"online"}

        # SIGTERM and restart: same counts and state, no stale announcements; a clean
        # stop says `offline` itself (a DISCONNECT discards the last will)
        host.stop()
        wait_for(lambda: sink.all(host_t)[-1]["state"] == "offline", "offline on a clean stop")
        host.start_with_web()
        wait_for(lambda: sink.all(host_t)[-1]["state"] == "online", "online again")
        wait_for(lambda: len(sink.all(summary_t)) > n_summary, "summary after the restart")
        assert sink.all(summary_t)[-1]["pockets"] == pockets
        assert sink.all(state_t)[-1]["state"] == st
        snap2 = json.loads(get(f"{host.web_url}/api/v/club/t1")[2])
        assert snap2["pockets"] == pockets and snap2["state"] == st
        assert snap2["announcements"] == []
        assert snap2["last_shot"] == snap["last_shot"]
        assert host.stats()["replayed"] > 0

        # the panel's confirm uses the `confirm` input: the uncertain facts stand
        code, res = post(
            f"{host.web_url}/api/v/club/t1/referee", {"pin": PIN, "inputs": [{"type": "confirm"}]}
        )
        assert code == 200 and res["state"]["unconfirmed"] == [], res
        assert res["state"]["scores"] == st["scores"]
        wait_for(lambda: sink.all(state_t)[-1]["state"]["unconfirmed"] == [], "confirmed state")
        wait_for(
            lambda: len(sink.all("railbird/v1/club/t1/announce")) > n_ann,
            "the confirm's ruling announced",
        )
        # the restart itself re-announced nothing
        texts = [a["text"] for a in sink.all("railbird/v1/club/t1/announce")[n_ann:]]
        assert not any("foul" in t.lower() for t in texts), texts
    finally:
        sn.stop()
        sink.close()
        if host.proc.poll() is None:
            host.stop()
