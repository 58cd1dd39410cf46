"""The daemon in-process with a private mosquitto: bad input around good data, outputs,
referee input from MQTT and from the same process."""

import time

import pytest

from harness.mqttsub import client
from harness.waiting import wait_for
from railbird.config import ConfigError, from_dict
from railbird.daemon.worker import Daemon
from railbird.outputs.base import Output
from rbproto import codec

from . import scripts as S

pytestmark = pytest.mark.broker


class Recorder(Output):
    name = "recorder"

    def __init__(self):
        self.shots, self.states, self.nodes = [], [], []

    def on_shot(self, venue, table, shot):
        self.shots.append(shot)

    def on_state(self, venue, table, game, state, fen, announcements):
        self.states.append((fen, announcements))

    def on_node(self, venue, table, node, status):
        self.nodes.append(node)


class Broken(Output):
    name = "broken"

    def on_shot(self, *a):
        raise RuntimeError("scoreboard on fire")

    on_state = on_node = on_shot


def test_daemon_end_to_end_with_bad_input(broker, tmp_path):
    broker.add_user(S.NODE, "pw")
    broker.add_user("t2-node", "pw2")
    cfg = from_dict(
        {
            "venue": "club",
            "journal": str(tmp_path / "j.sqlite"),
            "reorder_window_ms": 100,
            "referee_token": "735194",
            "broker": {"port": broker.port, "password": "host-secret", "client_id": "h1"},
            "shots": {"quiet_ms": 300, "lip_rest_ms": 300},
            "tables": {
                "t1": {"game": "10-ball", "players": ["A", "B"], "race_to": 2, "nodes": [S.NODE]}
            },
        }
    )
    rec = Recorder()
    d = Daemon(cfg, outputs=[Broken(), rec]).start()
    try:
        assert d.ingest.connected.wait(10)
        node = client(broker.port, S.NODE, "pw")
        other = client(broker.port, "t2-node", "pw2")
        now = int(time.monotonic() * 1e6)
        # node time == host time: a sync sample with offset 0
        node.publish(*S.sync_result(0, t1=now), qos=1).wait_for_publish(5)
        evs = S.number(  # the shot just played (events are sent after they happen)
            [
                S.ev(now / 1000 - 300, "rail", rail="H", amp=900),
                S.ev(now / 1000 - 200, "drop", pocket="FL", dur=20000),
                S.ev(now / 1000 - 150, "rail", rail="F", amp=900),
            ]
        )
        good = S.batches(evs, size=1)
        t = codec.topic("club", "t1", "events", S.NODE)
        # a node speaking another major version reaches the host and is refused, counted
        v9 = f"railbird/v9/club/t1/node/{S.NODE}/events"
        node.publish(v9, b'{"v":9,"node":"t1-node","boot":1}', qos=1).wait_for_publish(5)
        bad = [
            (t, b"{broken"),
            (t, b'{"v":7,"node":"t1-node","boot":1,"events":[]}'),
            (t, b'{"v":1,"node":"t1-node","boot":1,"events":[{"seq":9,"t":-1,"kind":"cue"}]}'),
        ]
        for (gt, gp), (bt, bp) in zip(good, bad, strict=True):
            node.publish(bt, bp, qos=1).wait_for_publish(5)
            node.publish(gt, gp, qos=1).wait_for_publish(5)
        # a node of another table writing under t1 (the ACL allows its own node subtree)
        other.publish(
            codec.topic("club", "t1", "events", "t2-node"),
            codec.encode(
                "events",
                {
                    "v": 1,
                    "node": "t2-node",
                    "boot": 1,
                    "events": [{"seq": 0, "t": 1, "kind": "cue"}],
                },
            ),
            qos=1,
        ).wait_for_publish(5)
        # referee input over MQTT without / with the token
        ref = client(broker.port, "railbird-referee", "referee-secret")
        rt = codec.topic("club", "t1", "referee")
        lag = {"type": "lag", "winner": 1}
        ref.publish(rt, codec.encode("referee", {"v": 1, "input": lag, "id": "r1"}), qos=1)
        ref.publish(
            rt,
            codec.encode("referee", {"v": 1, "input": lag, "id": "r2", "token": "735194"}),
            qos=1,
        )
        wait_for(  # and handed to the outputs, which happens after the batch's commit
            lambda: (
                d.pipeline.counters["shots"] >= 1
                and d.pipeline.counters["referee"] >= 1
                and rec.shots
                and any("wins the lag" in a["text"] for _, anns in rec.states for a in anns)
            ),
            "a shot and a referee input",
        )
        for c in (node, other, ref):
            c.disconnect()
            c.loop_stop()
        s = d.stats()
        assert s["events"] == 3 and s["shots"] == 1
        assert s["rejected_by_reason"] == {
            "bad json": 1,
            "unsupported version": 2,
            "bad value": 1,
            "unknown node": 1,
            "unauthorized": 1,
        }
        assert s["output_errors"] > 0  # the broken output was called and contained
        assert len(rec.shots) == 1 and rec.shots[0]["pocketed"][0]["pocket"] == "FL"
        assert any("wins the lag" in a["text"] for _, anns in rec.states for a in anns)
        # in-process referee input (web panel)
        r = d.referee_input("club", "t1", {"type": "undo"})
        assert r["ok"] is True and r["fen"]
        r = d.referee_input("club", "t1", {"type": "option", "choice": "nonsense"})
        assert r["ok"] is False and r["error"]
        r = d.referee_input("club", "t9", {"type": "undo"})
        assert r["ok"] is False and "unknown table" in r["error"]
    finally:
        d.stop()


def test_config_errors():
    with pytest.raises(ConfigError):
        from_dict({"venue": "Bad Venue"})
    with pytest.raises(ConfigError):
        from_dict({"venue": "v", "reorder_window": 3})
    with pytest.raises(ConfigError):
        from_dict({"venue": "v", "shots": {"quiet_ms": "5"}})
    with pytest.raises(ConfigError):
        from_dict({"venue": "v", "tables": {"t1": {"game": "10-ball", "colour": "red"}}})
    c = from_dict(
        {
            "venue": "v",
            "shots": {"quiet_ms": 3000},
            "tables": {"t1": {"game": "14.1", "target": 100, "nodes": ["t1-node"]}},
        }
    )
    assert c.shots.quiet_us == 3_000_000 and c.window_us == 500_000
    assert c.table_config("t1").match() == {
        "type": "match",
        "game": "14.1",
        "players": ["Player 1", "Player 2"],
        "target": 100,
    }
    assert c.table_config("t2") is None


def test_config_without_venue_is_refused_with_the_reason():
    with pytest.raises(ConfigError, match="venue: required"):
        from_dict({"tables": {"t1": {"game": "10-ball"}}})
