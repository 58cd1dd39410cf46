"""Done-when: the calibration flow runs end to end against a simulated node (the real node
firmware on simulated hardware) through a private mosquitto and leaves the node running
the new config."""

from __future__ import annotations

import io
import json
import random
import sys
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from railbird.cli import main
from railbird.config import load
from railbird.core.pipeline import Pipeline
from railbird.hardware import calibrate as cal
from rbnode.colour import NOMINAL_RGB, config_rgb, reference, table_rgb
from rbnode.hw import simcolour
from rbnode.simnode import SimNode
from rbproto import codec

sys.path.insert(0, str(Path(__file__).resolve().parent))  # installer.py, beside this file
from installer import SimInstaller

pytestmark = [pytest.mark.broker]

VENUE, TABLE, NODE = "club", "t7", "t7-node"

# How the installer actually wired the table (not the identity the firmware assumes).
WIRING_POCKETS = {"HL": 3, "HR": 0, "SL": 5, "SR": 1, "FL": 4, "FR": 2}
WIRING_RAILS = {"H": 2, "F": 5, "LH": 0, "LF": 4, "RH": 1, "RF": 3}


def start_node(broker, tmp_path, **kw):
    broker.add_user(NODE, "node-pw")
    sn = SimNode(
        "127.0.0.1",
        broker.port,
        VENUE,
        TABLE,
        NODE,
        "node-pw",
        tmp_path / "node",
        seed=3,
        dev={"status_period_s": 1},
        **kw,
    )
    sn.start()
    sn.wait_connected()
    return sn


@pytest.fixture
def simnode(broker, tmp_path):
    sn = start_node(broker, tmp_path)
    yield sn
    sn.stop()


@pytest.fixture
def colour_node(broker, tmp_path):
    """A node with the colour station of hardware/colour.md (three sensors and a gate)."""
    sn = start_node(broker, tmp_path, colour=3)
    yield sn
    sn.stop()


@pytest.fixture
def hooks():
    saved = list(cal.STEP_HOOKS)
    yield cal.STEP_HOOKS
    cal.STEP_HOOKS[:] = saved


class Listener:
    """A host-side subscriber recording the node's events."""

    def __init__(self, broker):
        self.events = []
        self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="cal-listener")
        self.c.username_pw_set("railbird-host", "host-secret")
        self.c.on_message = lambda c, u, m: self.events.extend(
            codec.decode("events", m.payload)["events"]
        )
        subscribed = threading.Event()
        self.c.on_subscribe = lambda *a: subscribed.set()
        self.c.connect("127.0.0.1", broker.port)
        self.c.subscribe(codec.topic(VENUE, TABLE, "events", NODE), 1)
        self.c.loop_start()
        assert subscribed.wait(5), "listener never subscribed"

    def close(self):
        self.c.disconnect()
        self.c.loop_stop()


def link_for(broker):
    return cal.NodeLink(
        "127.0.0.1", broker.port, VENUE, TABLE, NODE, user="railbird-host", password="host-secret"
    ).connect()


def fast(**kw):
    d = {
        "drops": 2,
        "knocks": 3,
        "quiet_s": 0.8,
        "step_timeout": 8.0,
        "settle_s": 0.3,
        "apply_timeout": 10.0,
    }
    d.update(kw)
    return d


def test_calibration_end_to_end_through_the_cli(broker, simnode, hooks, tmp_path, capsys):
    robot = SimInstaller(simnode, WIRING_POCKETS, WIRING_RAILS)
    hooks.append(robot)
    out = tmp_path / "result.json"
    host_cfg = tmp_path / "railbird.toml"
    host_cfg.write_text(
        f'venue = "{VENUE}"\n\n[tables.{TABLE}]\ntable_size = "7ft"\nnodes = ["{NODE}"]\n'
    )
    rc = main(
        [
            "calibrate",
            "--table",
            TABLE,
            "--venue",
            VENUE,
            "--broker",
            "127.0.0.1",
            "--port",
            str(broker.port),
            "--user",
            "railbird-host",
            "--password",
            "host-secret",
            "--non-interactive",
            "--quiet-seconds",
            "0.8",
            "--step-timeout",
            "8",
            "--json",
            str(out),
            "--cue-drops",
            "1",
            "--host-config",
            str(host_cfg),
        ]
    )
    text = capsys.readouterr()
    assert rc == 0, text.out + text.err
    res = json.loads(out.read_text())
    cfg = res["config"]

    # It learned the real wiring ...
    assert {p["pocket"]: p["ch"] for p in cfg["pockets"]} == WIRING_POCKETS
    assert {r["rail"]: r["ch"] for r in cfg["rails"]} == WIRING_RAILS
    # ... proposed thresholds between noise (<=55) and the knocks (1500..1800), above the
    # cross-talk of neighbouring rails (12 %, ~216) ...
    for r in cfg["rails"]:
        assert 216 < r["threshold"] < 1500, r
    # ... and beam timing from the 28-36 ms drops.
    assert 1000 <= cfg["debounce_us"] <= 7000 and cfg["jam_us"] >= 2_000_000
    assert cfg["cue_ch"] == 6 and res["cue_seen"] is True
    # Steps: quiet, 6 pockets, 6 rails, the cue ball into each pocket.
    assert robot.steps == (
        [("quiet", None)]
        + [("pocket", p) for p in codec.POCKETS]
        + [("rail", r) for r in codec.RAILS]
        + [("cue", p) for p in codec.POCKETS]
    )
    # The cue ball's return delay from each pocket, as the robot played it (to 10 ms) ...
    played = {p: d[0] / 1000 for p, d in robot.cue_delays.items()}
    assert set(res["cue_return_ms"]) == set(codec.POCKETS)
    for p, ms in res["cue_return_ms"].items():
        assert abs(ms - played[p]) <= 10, (p, ms, played[p])
    # ... printed as the host's config line and written into the table's section, which the
    # host now pairs scratches with.
    line = cal.cue_return_line(res["cue_return_ms"])
    assert f"railbird.toml: [tables.{TABLE}] {line}" in text.out
    host = load(host_cfg)
    assert host.table[TABLE].cue_return_ms == res["cue_return_ms"]
    expected = dict(Pipeline(host).tables[(VENUE, TABLE)].assembler.p.cue_return_us)
    assert expected == {p: ms * 1000 for p, ms in res["cue_return_ms"].items()}

    # The node runs the new config (applied, persisted) ...
    assert simnode.node.cfg["rev"] == cfg["rev"]
    assert simnode.status()["config_rev"] == cfg["rev"]
    assert simnode.status()["config_error"] is None
    # ... and now reports the physical HL beam as HL and the H rail as H, with the
    # calibrated threshold filtering cross-talk.
    hooks.clear()
    listen = Listener(broker)
    try:
        hw = simnode.hw

        def stim():
            t = hw.now_us + 2000
            hw.schedule_drop(WIRING_POCKETS["HL"], t, 30000)
            hw.schedule_rail(WIRING_RAILS["H"], t + 100000, 1600)
            hw.schedule_rail(WIRING_RAILS["F"], t + 100300, 150)  # below threshold
            hw.schedule_drop(WIRING_POCKETS["FR"], t + 300000, 30000)  # end marker

        simnode.call(stim)
        # events arrive in order: once the marker is in, so is any (wrong) F event
        deadline = time.monotonic() + 30  # generous: a loaded machine
        while ("drop", "FR") not in [(e["kind"], e.get("pocket")) for e in listen.events]:
            assert time.monotonic() < deadline, listen.events
            time.sleep(0.05)
        got = [(e["kind"], e.get("pocket") or e.get("rail")) for e in listen.events]
        assert got == [("drop", "HL"), ("rail", "H"), ("drop", "FR")]
    finally:
        listen.close()
    # The config is retained on the broker for the next boot.
    simnode.restart()
    simnode.wait_connected()
    deadline = time.monotonic() + 30  # generous: a loaded machine
    while simnode.node.cfg["rev"] != cfg["rev"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert simnode.node.cfg["rev"] == cfg["rev"]


def test_abandoned_calibration_restores_previous_config(broker, simnode, hooks):
    # A previous calibration is retained; then an installer leaves after the first pocket.
    link = link_for(broker)
    try:
        prev = cal.default_config(threshold=321)
        prev["rev"] = 5
        c = cal.Calibrator(
            link,
            cal.ConsoleUI(interactive=False, out=io.StringIO()),
            **fast(step_timeout=1.5),
        )
        c._apply(prev, "previous")
        robot = SimInstaller(simnode, WIRING_POCKETS, WIRING_RAILS, skip={"HR"})
        hooks.append(robot)
        c2 = cal.Calibrator(
            link,
            cal.ConsoleUI(interactive=False, out=io.StringIO()),
            **fast(step_timeout=1.5),
        )
        res = c2.run()
    finally:
        link.close()
    assert not res.ok and "HR" in res.message
    cfg = simnode.node.cfg
    assert cfg["rev"] == 7  # 6 was the probe, 7 the restored one
    assert [r["threshold"] for r in cfg["rails"]] == [321] * 6
    assert {p["pocket"]: p["ch"] for p in cfg["pockets"]} == {
        p: i for i, p in enumerate(codec.POCKETS)
    }


def test_partial_calibration_and_dead_cue_detector(broker, simnode, hooks):
    robot = SimInstaller(simnode, WIRING_POCKETS, WIRING_RAILS, skip={"FR"}, cue_ok=False)
    hooks.append(robot)
    link = link_for(broker)
    try:
        res = cal.Calibrator(
            link,
            cal.ConsoleUI(interactive=False, out=io.StringIO()),
            allow_partial=True,
            **fast(step_timeout=1.5, drops=1, knocks=2),
        ).run()
    finally:
        link.close()
    assert res.ok, res.message
    assert "FR" not in res.pockets and len(res.pockets) == 5
    assert res.config["cue_ch"] is None and res.cue_seen is False
    assert any("cue detector" in w for w in res.warnings)
    assert simnode.node.cfg["rev"] == res.config["rev"]


def test_declined_by_script_restores(broker, simnode, hooks, tmp_path):
    hooks.append(SimInstaller(simnode, WIRING_POCKETS, WIRING_RAILS))
    script = tmp_path / "answers.txt"
    script.write_text("# installer answers\nn\n")
    rc = main(
        [
            "calibrate",
            "--table",
            TABLE,
            "--venue",
            VENUE,
            "--node",
            NODE,
            "--host",
            "127.0.0.1",
            "--port",
            str(broker.port),
            "--password",
            "host-secret",
            "--script",
            str(script),
            "--quiet-seconds",
            "0.5",
            "--step-timeout",
            "8",
            "--drops",
            "1",
            "--knocks",
            "2",
            "--cue-drops",
            "1",
        ]
    )
    assert rc == 1
    # probe was rev 1, the restore rev 2: the node is back on the identity default map
    assert simnode.node.cfg["rev"] == 2
    assert [r["threshold"] for r in simnode.node.cfg["rails"]] == [200] * 6


def calibrate_cli(broker, tmp_path, *extra):
    """`railbird calibrate` against the node, non-interactive, its result as JSON ->
    (exit status, the result or None)."""
    out = tmp_path / "result.json"
    args = ["calibrate", "--table", TABLE, "--venue", VENUE, "--broker", "127.0.0.1"]
    args += ["--port", str(broker.port), "--user", "railbird-host", "--password", "host-secret"]
    args += ["--non-interactive", "--quiet-seconds", "0.5", "--step-timeout", "8"]
    args += ["--drops", "1", "--knocks", "2", "--cue-drops", "1", "--json", str(out), *extra]
    rc = main(args)
    return rc, json.loads(out.read_text()) if out.exists() else None


# A table's balls off the nominal colours by up to 15 % a channel (dyes, wear, the LED's
# tint; hardware/colour.md), what the colour step is to learn.
TABLE_RGB = simcolour.table_colours(random.Random(26).random, 0.15)


def near(got, want):
    """Each of the 27 values (reflectance x 1000) within 5 % of the true one plus 30. The
    station takes the far wall's reflection (0.02 of white, simcolour's felt) off with the
    ambient light, so its medians sit about 20 below a ball's own reflectance; a median
    is the middle of a bin 10 wide; the brightest channels lose a few % more to the spot's
    edge. Measured on this table with the node's driver polled every 1 ms (as SimNode
    does), 40 seeds of three rolls a ball: every error within -38..+1, at most 74 % of
    this tolerance; the nominal colours are 36 % outside it (the 1's green, 550 against
    477)."""
    return all(abs(g - w) <= 0.05 * w + 30 for g, w in zip(got, want, strict=True))


def reads_with(sn):
    """The colour table the node's station classifies with (counts per colour)."""
    return sn.call(lambda: sn.node._colour.ref)


def test_calibration_learns_the_colour_stations_table(broker, colour_node, hooks, tmp_path, capsys):
    truth = config_rgb(TABLE_RGB)
    # the table is far enough off the nominal colours that keeping those would fail here
    assert not near(config_rgb(NOMINAL_RGB), truth)
    robot = SimInstaller(colour_node, WIRING_POCKETS, WIRING_RAILS, colour_rgb=TABLE_RGB)
    hooks.append(robot)
    rc, res = calibrate_cli(broker, tmp_path)
    text = capsys.readouterr()
    assert rc == 0, text.out + text.err
    # the station was asked for the cue ball, the solids and the 8, after the cue step
    assert robot.steps[-9:] == [("colour", str(b)) for b in range(9)]
    learned = res["colour_rgb"]
    assert len(learned) == codec.COLOUR_RGB_LEN and all(isinstance(v, int) for v in learned)
    assert near(learned, truth), list(zip(learned, truth, strict=True))
    # the node's station reads with it: applied, and again after a reboot (persisted)
    assert res["config"]["colour"] == {"rgb": learned}
    assert colour_node.node.cfg["rev"] == res["config"]["rev"]
    assert reads_with(colour_node) == reference(table_rgb(learned, codec.COLOUR_SCALE))
    hooks.clear()
    colour_node.restart()
    assert reads_with(colour_node) == reference(table_rgb(learned, codec.COLOUR_SCALE))
    # the cue ball past the station after the detector left the return delays as played
    played = {p: d[0] / 1000 for p, d in robot.cue_delays.items()}
    for p, ms in res["cue_return_ms"].items():
        assert abs(ms - played[p]) <= 10, (p, ms, played[p])


def test_skip_colour_leaves_the_node_without_a_learned_table(broker, colour_node, hooks, tmp_path):
    robot = SimInstaller(colour_node, WIRING_POCKETS, WIRING_RAILS, colour_rgb=TABLE_RGB)
    hooks.append(robot)
    rc, res = calibrate_cli(broker, tmp_path, "--skip-colour")
    assert rc == 0, res
    assert not any(kind == "colour" for kind, _ in robot.steps)  # never asked for a ball
    assert res["colour_rgb"] is None and res["config"].get("colour") is None
    assert colour_node.node.cfg["rev"] == res["config"]["rev"]
    assert colour_node.node.cfg.get("colour") is None
    assert reads_with(colour_node) == reference(NOMINAL_RGB)
