"""End to end through a private mosquitto: the real node firmware with a colour station in
the ball return (hardware/colour.md; SimNode(colour=3)) reads each pocketed ball as it
rolls past, and the daemon's shots name those balls (`sensed`), the cue ball on a scratch
too. With the station's cable pulled the node counts failed reads in its status and the
next shot's ball is presumed, with a warning that says the station may be unplugged.

Every wait is on a condition (a shot record, a status) with a generous deadline: the
assertions are about what was pocketed and read, never about how fast it happened."""

from __future__ import annotations

import pytest

from harness.waiting import wait_for
from railbird.config import from_dict
from railbird.daemon.worker import Daemon
from railbird.outputs.base import Output
from rbnode.simnode import SimNode, default_device_config

pytestmark = [pytest.mark.broker, pytest.mark.slow]
NODE, PW = "t1-node", "node-pw"
# Each pocket's return delay to the station (ms): short, so a shot closes soon, and
# different per pocket, so two balls of one shot pair with their drops by delay alone.
RETURN_MS = {"HL": 900, "HR": 850, "SL": 700, "SR": 500, "FL": 400, "FR": 450}
# How fast the balls roll past the station (mm/s): a read is stamped when the gate closes
# and sent when it opens, 49-55 ms later at this speed. A slow ball's read (147 ms at the
# simulator's slowest, 300 mm/s) is what the colour station's release floor covers
# (core/pipeline.py XWINDOW_COLOUR_FLOOR_US), held to it deterministically by
# tests/host/test_colour_release.py; this test is about pairing and naming live.
ROLL_MM_S = (800.0, 900.0)


class Shots(Output):
    """The shots the daemon hands its outputs, each node's latest status and the caps of
    its latest birth (both come as `on_node`)."""

    name = "shots"

    def __init__(self):
        self.shots, self.status, self.caps = [], {}, {}

    def on_shot(self, venue, table, shot):
        self.shots.append(shot)

    def on_node(self, venue, table, node, status):
        if "caps" in status:
            self.caps[node] = status["caps"]
        else:
            self.status[node] = status


def daemon(broker, tmp_path, out):
    cfg = from_dict(
        {
            "venue": "club",
            "journal": str(tmp_path / "j.sqlite"),
            "broker": {"port": broker.port, "password": "host-secret", "client_id": "h-col"},
            # a shot stays open past the slowest return (900 ms), so its reads are in it
            "shots": {"quiet_ms": 1500, "lip_rest_ms": 1500},
            "tables": {"t1": {"nodes": [NODE], "sensors": ["colour"], "cue_return_ms": RETURN_MS}},
        }
    )
    return Daemon(cfg, outputs=[out]).start()


def node(broker, tmp_path):
    sensing = dict(default_device_config()["sensing"])
    sensing["status_period_s"] = 1  # the unplugged station shows in a status soon
    return SimNode(
        "127.0.0.1",
        broker.port,
        "club",
        "t1",
        NODE,
        PW,
        tmp_path / "node",
        seed=11,
        sensing=sensing,
        colour=3,
    )


def play(sn, rails, pots, scratch=()):
    """One shot, in one call on the node's thread (every time is relative to one instant
    of the simulated clock): `rails` hit 100 ms apart, then each pot (pocket, ball) drops
    200 ms after the one before and rolls past the station its pocket's return delay
    later; a pocket in `scratch` also sends its ball past the cue detector then."""

    def do():
        t = sn.now_us + 300_000
        for i, rail in enumerate(rails):
            sn.rail(rail, 1500, at_us=t + i * 100_000)
        t += len(rails) * 100_000
        for i, (pocket, ball) in enumerate(pots):
            drop = t + i * 200_000
            sn.drop(pocket, 30_000, at_us=drop)
            back = drop + RETURN_MS[pocket] * 1000
            if pocket in scratch:
                sn.cue(30_000, at_us=back)
            sn.balls([ball], at_us=back, speed=ROLL_MM_S)

    sn.call(do)


def next_shot(out, n, what):
    wait_for(lambda: len(out.shots) > n, what)
    return out.shots[n]


def named(shot):
    return [(p["pocket"], p["ball"], p["source"]) for p in shot["pocketed"]]


def facts(shot):
    """What an assertion on a shot shows when it fails: its balls and its warnings."""
    return shot["pocketed"], shot["warnings"]


def test_the_colour_station_names_pocketed_balls_live_and_unplugged_is_presumed(broker, tmp_path):
    broker.add_user(NODE, PW)
    out = Shots()
    d = daemon(broker, tmp_path, out)
    sn = node(broker, tmp_path)
    try:
        assert d.ingest.connected.wait(10)
        sn.start()
        sn.wait_connected(10)
        wait_for(lambda: d.pipeline.clocks.get(NODE, sn.boot).synced, "the node synced")
        caps = wait_for(lambda: out.caps.get(NODE), "the birth")
        assert {"colour", "colour_rgb"} <= set(caps)

        # a stripe into the foot corner
        play(sn, ["LH", "F"], [("FL", 13)])
        shot = next_shot(out, 0, "the 13's shot")
        assert named(shot) == [("FL", 13, "sensed")], facts(shot)
        assert shot["pocketed"][0]["conf"] >= 60
        assert not any("ball:" in w for w in shot["warnings"]), shot["warnings"]

        # two balls in one shot: each read pairs with its own pocket's drop by delay
        play(sn, ["H"], [("HL", 9), ("SR", 3)])
        shot = next_shot(out, 1, "the 9 and 3's shot")
        assert sorted(named(shot)) == [("HL", 9, "sensed"), ("SR", 3, "sensed")], facts(shot)

        # a scratch: the cue detector pairs the drop, the station reads the cue ball
        play(sn, ["RF"], [("FR", 0)], scratch={"FR"})
        shot = next_shot(out, 2, "the scratch")
        assert named(shot) == [("FR", 0, "sensed")], facts(shot)

        # the station's cable pulled: the node's status says its reads fail ...
        errors = wait_for(lambda: out.status.get(NODE), "a status")["counters"]["colour_errors"]
        sn.unplug_colour()
        wait_for(
            lambda: out.status.get(NODE, {}).get("counters", {}).get("colour_errors", 0) > errors,
            "a status with failed colour reads",
        )
        assert "colour" in sn.call(sn.node.sensing_dead)
        # ... and the next ball goes unread: presumed, and the shot says why
        play(sn, ["LF"], [("SL", 5)])
        shot = next_shot(out, 3, "the shot with the station unplugged")
        assert [(p["pocket"], p["ball"]) for p in shot["pocketed"]] == [("SL", None)], facts(shot)
        assert any("colour station unplugged" in w and "presumed" in w for w in shot["warnings"]), (
            shot["warnings"]
        )
        sn.wait_idle(30)
        assert sn.counters()["colour_reads"] == 4  # the four read before the cable came out
        s = d.stats()
        assert s["rejected"] == 0 and s["unknown_kind_events"] == 0
    finally:
        sn.stop()
        d.stop()
