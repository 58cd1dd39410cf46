"""Calibration analysis (pure functions) on recorded event streams, and the session's
handling of a node that refuses the config (a plain paho client plays the node)."""

from __future__ import annotations

import io
import threading

import paho.mqtt.client as mqtt
import pytest

from railbird.hardware import calibrate as cal
from rbproto import codec

# A recorded rail step (probe config: identity, threshold 0): three knocks on channel 2
# ("LH" in the probe), with cross-talk on 1 and 3, and a late ringing edge.
KNOCKS_LH = [
    {"seq": 10, "t": 5_000_000, "kind": "rail", "rail": "LH", "amp": 1480},
    {"seq": 11, "t": 5_000_300, "kind": "rail", "rail": "F", "amp": 190},
    {"seq": 12, "t": 5_000_350, "kind": "rail", "rail": "LF", "amp": 150},
    {"seq": 13, "t": 5_600_000, "kind": "rail", "rail": "LH", "amp": 1720},
    {"seq": 14, "t": 5_600_200, "kind": "rail", "rail": "LF", "amp": 210},
    {"seq": 15, "t": 6_300_000, "kind": "rail", "rail": "LH", "amp": 1600},
    {"seq": 16, "t": 6_310_000, "kind": "rail", "rail": "F", "amp": 120},
]
PROBE_RAILS = {r: i for i, r in enumerate(codec.RAILS)}


def test_group_knocks_by_node_time():
    knocks = cal.group_knocks(list(reversed(KNOCKS_LH)), window_us=20000)
    assert [len(k) for k in knocks] == [3, 2, 2]
    assert [k[0]["amp"] for k in knocks] == [1480, 1720, 1600]


def test_analyse_rail_picks_loudest_channel_and_crosstalk():
    ch, hits, cross, warns = cal.analyse_rail(cal.group_knocks(KNOCKS_LH), PROBE_RAILS, {})
    assert ch == 2 and hits == [1480, 1720, 1600] and warns == []
    assert sorted(cross) == [120, 150, 190, 210]


def test_analyse_rail_warns_on_disagreeing_knocks():
    evs = [*KNOCKS_LH, {"seq": 20, "t": 9_000_000, "kind": "rail", "rail": "H", "amp": 900}]
    ch, hits, _, warns = cal.analyse_rail(cal.group_knocks(evs), PROBE_RAILS, {})
    assert ch == 2 and len(hits) == 3 and "1 of 4 knocks" in warns[0]
    assert cal.analyse_rail([], PROBE_RAILS, {})[0] is None


@pytest.mark.parametrize(
    ("hits", "noise", "expect"),
    [
        ([1480, 1720, 1600], [], 480),  # 0.3 x median 1600
        ([1480, 1720, 1600], [40, 55], 480),  # quiet noise far below
        ([1480, 1720, 1600], [400], 601),  # noise 400 x 1.5 margin + 1
        ([30, 40, 35], [], 16),  # floor
    ],
)
def test_propose_threshold(hits, noise, expect):
    thr, warns = cal.propose_threshold(hits, noise)
    assert thr == expect and warns == []


def test_propose_threshold_noise_overlapping_hits():
    thr, warns = cal.propose_threshold([300, 900, 1000], [350])
    assert thr == 351 and "reaches the softest knock" in warns[0]
    thr, warns = cal.propose_threshold([500, 2000, 2100], [300])
    assert 300 < thr <= 500 and warns  # squeezed between noise and softest
    assert cal.propose_threshold([], [10]) == (None, ["no knocks measured"])


def test_propose_beam_timing():
    assert cal.propose_beam_timing([28000, 36000, 41000]) == (5000, 2_000_000, [])
    deb, jam, _ = cal.propose_beam_timing([8000, 600000])  # a slow ball in a gully
    assert deb == 2000 and jam == 3_000_000
    deb, _, warns = cal.propose_beam_timing([1500])
    assert deb == 1000 and "beam height" in warns[0]
    assert cal.propose_beam_timing([], 2500, 3_000_000)[:2] == (2500, 3_000_000)


# A recorded cue step for HL (probe name "SR": the HL beam is on channel 3): three drops of the
# cue ball, each seen in the ball return; the second run was slow (the ball stopped on the
# way), and an object ball dropped into another pocket in between is not the cue ball's.
CUE_STEP_HL = [
    {"t": 1_000_000, "kind": "drop", "pocket": "SR", "dur": 30000},
    {"t": 3_840_000, "kind": "cue", "dur": 40000},
    {"t": 5_000_000, "kind": "drop", "pocket": "SR", "dur": 31000},
    {"t": 5_500_000, "kind": "drop", "pocket": "FL", "dur": 30000},
    {"t": 9_100_000, "kind": "cue", "dur": 40000},
    {"t": 10_000_000, "kind": "drop", "pocket": "SR", "dur": 29000},
    {"t": 12_870_000, "kind": "cue", "dur": 40000},
    {"t": 13_000_000, "kind": "cue", "dur": 40000},  # a bounce: no drop left to pair
]


def test_cue_return_delays_pair_each_return_with_its_drop():
    assert cal.cue_return_delays(CUE_STEP_HL, "SR") == [2_840_000, 4_100_000, 2_870_000]
    assert cal.cue_return_delays(CUE_STEP_HL, "HL") == []


def test_a_colour_station_read_measures_the_return_of_any_ball():
    # hardware/colour.md: the station is on the same return, so an object ball rolled into
    # the pocket measures its delay; the cue ball's read after its cue event adds nothing
    events = [
        {"t": 1_000_000, "kind": "drop", "pocket": "SR"},
        {"t": 3_000_000, "kind": "ball", "ball": 5, "conf": 97},
        {"t": 10_000_000, "kind": "drop", "pocket": "SR"},
        {"t": 12_050_000, "kind": "cue"},
        {"t": 12_090_000, "kind": "ball", "ball": 0, "conf": 99},
    ]
    assert cal.cue_return_delays(events, "SR") == [2_000_000, 2_050_000]


def test_cue_return_is_the_median_per_pocket():
    ms, warns = cal.propose_cue_returns(
        {"HL": [2_840_000, 4_100_000, 2_870_000], "FR": [1_004_000], "SL": []}
    )
    assert ms == {"HL": 2870, "FR": 1000}  # one slow run does not move it; to 10 ms
    assert len(warns) == 1 and "HL" in warns[0] and "vary" in warns[0]
    assert cal.cue_return_line(ms) == "cue_return_ms = {HL = 2870, FR = 1000}"


HOST_CONFIG = """venue = "club"
[broker]
password = "pw"  # [tables.t7] is below

[tables.t7]
game = "10-ball"
race_to = 5
nodes = ["t7-node"]
# calibrated 2024
"""


def test_cue_return_line_goes_into_the_tables_section():
    line = "cue_return_ms = {HL = 2870, FR = 1000}"
    out = cal.with_table_line(HOST_CONFIG, "t7", line)
    assert out == HOST_CONFIG.replace('nodes = ["t7-node"]\n', f'nodes = ["t7-node"]\n{line}\n')
    again = cal.with_table_line(out, "t7", "cue_return_ms = {HL = 2900}")
    assert again == out.replace(line, "cue_return_ms = {HL = 2900}")
    with pytest.raises(ValueError, match=r"no \[tables.t8\]"):
        cal.with_table_line(HOST_CONFIG, "t8", line)


def test_configs_are_valid_protocol_messages():
    base = cal.default_config()
    base.update(rev=4, status_period_s=10, batch_max=16)
    probe = cal.probe_config(base, 5, 6, 6, 6)
    codec.encode("config", probe)
    assert [r["threshold"] for r in probe["rails"]] == [0] * 6
    assert probe["status_period_s"] == 10 and probe["cue_ch"] == 6
    final = cal.final_config(base, 6, {"HL": 3, "HR": 0}, {"H": (2, 480)}, None, 5000, 2_000_000)
    codec.encode("config", final)
    assert final["pockets"] == [{"ch": 0, "pocket": "HR"}, {"ch": 3, "pocket": "HL"}]
    assert final["rails"] == [{"ch": 2, "rail": "H", "threshold": 480, "refractory_us": 50000}]
    assert final["batch_max"] == 16 and final["cue_ch"] is None


def test_calibration_keeps_the_strike_sensor_unless_a_rail_takes_its_channel():
    base = cal.default_config()
    base["strike"] = {"ch": 6, "threshold": 300, "refractory_us": 30000}  # dedicated input
    probe = cal.probe_config(base, 5, 6, 6, 6)
    final = cal.final_config(base, 6, {"HL": 0}, {"H": (2, 480)}, 6, 5000, 2_000_000)
    assert probe["strike"] == final["strike"] == base["strike"]
    on_rail = dict(base, rails=base["rails"][:5], strike={"ch": 5})  # piezo on rail input 5
    assert "strike" not in cal.probe_config(on_rail, 5, 6, 6, 6)  # every rail input probed
    final = cal.final_config(on_rail, 6, {"HL": 0}, {"H": (2, 480)}, 6, 5000, 2_000_000)
    assert final["strike"] == {"ch": 5}
    codec.encode("config", final)


# -- a node that refuses: plain paho client as the node --------------------------------


class PahoNode:
    """Publishes retained birth/status; answers each config with a status: applies it, or
    refuses with `refuse` as config_error (keeping its rev)."""

    def __init__(self, broker, venue, table, node, refuse=None):
        broker.add_user(node, "pw")  # mosquitto reloads its passwords on SIGHUP, async
        self.venue, self.table, self.node, self.refuse = venue, table, node, refuse
        self.rev, self.error, self.configs = 0, None, []
        self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=node)
        self.c.username_pw_set(node, "pw")
        self.c.on_message = self._on_message
        # refused until the reload is done: paho retries; subscribed means logged in
        self.c.reconnect_delay_set(0.05, 0.2)
        subscribed = threading.Event()
        self.c.on_connect = lambda c, u, f, rc, p: (
            None if rc.is_failure else c.subscribe(codec.topic(venue, table, "config", node), 1)
        )
        self.c.on_subscribe = lambda *a: subscribed.set()
        self.c.connect("127.0.0.1", broker.port)
        self.c.loop_start()
        assert subscribed.wait(10), "paho node never logged in and subscribed"
        self.c.publish(
            codec.topic(venue, table, "birth", node),
            codec.encode(
                "birth",
                {
                    "v": 1,
                    "node": node,
                    "boot": 1,
                    "fw": "paho-node",
                    "reset": "power",
                    "config_hash": "00000000",
                    "pinmap": "esp32-devkitc",
                    "caps": ["pcnt", "cue"],
                },
            ),
            qos=1,
            retain=True,
        ).wait_for_publish(5)
        self._status()

    def _status(self):
        self.c.publish(
            codec.topic(self.venue, self.table, "status", self.node),
            codec.encode(
                "status",
                {
                    "v": 1,
                    "node": self.node,
                    "boot": 1,
                    "state": "online",
                    "uptime_us": 1,
                    "config_rev": self.rev,
                    "config_error": self.error,
                },
            ),
            qos=1,
            retain=True,
        )

    def _on_message(self, c, u, m):
        cfg = codec.decode("config", m.payload)
        self.configs.append(cfg)
        if self.refuse:
            self.error = self.refuse
        else:
            self.rev, self.error = cfg["rev"], None
        self._status()

    def close(self):
        self.c.disconnect()
        self.c.loop_stop()


@pytest.mark.broker
def test_refused_probe_is_reported(broker):
    node = PahoNode(
        broker, "club", "t2", "t2-node", refuse="bad value: rails[0].ch: channel 0 not in pin map"
    )
    link = cal.NodeLink(
        "127.0.0.1",
        broker.port,
        "club",
        "t2",
        "t2-node",
        user="railbird-host",
        password="host-secret",
    ).connect()
    out = io.StringIO()
    try:
        res = cal.Calibrator(link, cal.ConsoleUI(interactive=False, out=out), apply_timeout=5).run()
    finally:
        link.close()
        node.close()
    assert not res.ok
    assert "refused the probe config" in res.message and "not in pin map" in res.message
    # it read the pin map named in the birth: 6 beams, 6 rails, cue channel 6
    assert "6 beams, 6 rails, cue detector channel 6" in out.getvalue()
    # and tried to restore (rev 2) after the refused probe (rev 1)
    assert [c["rev"] for c in node.configs] == [1, 2]


@pytest.mark.broker
def test_offline_node_and_wrong_password(broker, capsys):
    from railbird.cli import main

    rc = main(
        [
            "calibrate",
            "--table",
            "t3",
            "--venue",
            "club",
            "--host",
            "127.0.0.1",
            "--port",
            str(broker.port),
            "--password",
            "host-secret",
            "--non-interactive",
        ]
    )
    assert rc == 2 and "no node online at club/t3" in capsys.readouterr().err
    rc = main(
        [
            "calibrate",
            "--table",
            "t3",
            "--venue",
            "club",
            "--node",
            "x",
            "--host",
            "127.0.0.1",
            "--port",
            str(broker.port),
            "--password",
            "wrong",
        ]
    )
    assert rc == 2 and "refused" in capsys.readouterr().err
    link = cal.NodeLink(
        "127.0.0.1",
        broker.port,
        "club",
        "t3",
        "ghost",
        user="railbird-host",
        password="host-secret",
    ).connect()
    try:
        res = cal.Calibrator(
            link, cal.ConsoleUI(interactive=False, out=io.StringIO()), apply_timeout=1
        ).run()
    finally:
        link.close()
    assert not res.ok and "not online" in res.message


def test_the_learned_colour_table_survives_a_recalibration():
    # SPEC.md config `colour`: recalibrating the wiring keeps the balls' table
    table = {"rgb": [500] * codec.COLOUR_RGB_LEN}
    base = dict(cal.default_config(), colour=table)
    assert cal.probe_config(base, 5, 6, 6, 6)["colour"] == table
    final = cal.final_config(base, 6, {"HL": 0}, {"H": (0, 100)}, 6, 2000, 2_000_000)
    assert final["colour"] == table
    none = cal.final_config(cal.default_config(), 6, {}, {}, 6, 2000, 2_000_000)
    assert none.get("colour") is None


def test_the_colour_table_is_each_balls_median_read():
    # hardware/colour.md "Calibration": each of the nine colours is the per-channel median
    # of its ball's reads; one read that caught the number circle (whiter) is outvoted
    reads = {k: [[100 + k, 200 + k, 300 + k]] * 2 + [[900, 900, 900]] for k in range(9)}
    table, warnings = cal.learn_colour_table(reads, None)
    assert warnings == []
    assert table == [v for k in range(9) for v in (100 + k, 200 + k, 300 + k)]
    cfg = cal.final_config(cal.default_config(), 2, {}, {}, 6, 2000, 2_000_000, colour=table)
    assert cfg["colour"] == {"rgb": table}  # a valid config (SPEC.md config `colour`)


def test_a_ball_never_read_keeps_the_nodes_colour_or_learns_nothing():
    reads = {k: [[400, 400, 400]] for k in range(9) if k != 4}
    base = list(range(27))
    table, warnings = cal.learn_colour_table(reads, base)
    assert table[12:15] == [12, 13, 14] and table[:3] == [400, 400, 400] and not warnings
    # no table on the node to take the 4's colour from: no table is proposed, and it says so
    table, warnings = cal.learn_colour_table(reads, None)
    assert table is None
    assert len(warnings) == 1 and "the 4 (purple)" in warnings[0]
