"""`railbird sim --strike`: the simulated table's node has a strike sensor and sends a
`strike` at the start of every shot; against a real `railbird run` through a private
mosquitto the host journals one strike per shot and its game state agrees with the
simulator's after every turn."""

import json
import sqlite3
from pathlib import Path

import pytest

from harness.hostproc import RailbirdRun
from railbird.commands.demo import _cue_return_line
from railbird.sim import physics, scenario
from railbird.sim.table import LiveTable, make_source

pytestmark = [pytest.mark.broker]

NODE, PW = "t1-node", "node-pw"
QUIET_MS = 1200
MATCH = {"type": "match", "game": "10-ball", "players": ["Ann", "Bob"], "race_to": 2}
SCENARIO = Path(__file__).with_name("scenarios") / "tenball_quick.json"


def first_rack():
    """The scripted 10-ball rack: break, pot, scratch; every ruling is decided by what the
    sensors see (no break whose legality rests on a rail-count estimate)."""
    d = json.loads(SCENARIO.read_text())
    d["steps"] = d["steps"][:9]
    return scenario.parse(d)


CONFIG = """
venue = "club"
reorder_window_ms = 150
stats_period_s = 0
[broker]
port = {port}
password = "host-secret"
client_id = "railbird-host-strike"
[shots]
quiet_ms = {quiet}
lip_rest_ms = {quiet}
strike_quiet_ms = {quiet}
[outputs.feeds]
enabled = true
[tables.t1]
game = "10-ball"
players = ["Ann", "Bob"]
race_to = 2
nodes = ["{node}"]
{cue}
"""


def test_sim_with_a_strike_sensor_agrees_with_the_host(broker, tmp_path):
    broker.add_user(NODE, PW)
    host = RailbirdRun(
        tmp_path / "host",
        CONFIG.format(port=broker.port, quiet=QUIET_MS, node=NODE, cue=_cue_return_line()),
    ).start()
    table = LiveTable(
        host="127.0.0.1",
        port=broker.port,
        venue="club",
        table="t1",
        node=NODE,
        node_password=PW,
        match=MATCH,
        source=make_source(MATCH, 4, scenario=first_rack(), then_random=False),
        seed=4,
        state_dir=tmp_path / "node",
        quiet_us=QUIET_MS * 1000,
        window_us=150_000,
        strike_sensor=True,
        shot_params=physics.shot_params(
            quiet_us=QUIET_MS * 1000, lip_rest_us=QUIET_MS * 1000, strike_quiet_us=QUIET_MS * 1000
        ),
        pace=0.0,
    )
    try:
        table.start()
        table.run()
        stats = table.stats()
    finally:
        table.stop()
        host.stop()
    assert stats["shots"] == 3, stats
    assert stats["disagreed"] == 0 and not table.checks_failed, stats
    db = sqlite3.connect(host.journal)
    strikes = db.execute("SELECT COUNT(*) FROM events WHERE kind = 'strike'").fetchone()[0]
    assert strikes == stats["shots"]
