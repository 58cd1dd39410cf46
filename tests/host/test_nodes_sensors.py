"""`railbird nodes` shows each table's sensor health (issue 26, item 4): read from the shots
the daemon journalled, judged as the daemon judges them (core/health.py, the config's
`sensors`). A real journal file; no broker (the health part alone)."""

import json
import sqlite3
from types import SimpleNamespace

from railbird.commands.nodes import _sensor_health
from railbird.daemon.journal import SCHEMA
from railbird.fleet.view import table_text


def shot(n, strike):
    return {
        "n": n,
        "strike": {"t": n, "amp": 900, "source": "sensed"} if strike else None,
        "clicks": 0,
        "rails": [{"rail": "H", "t": n, "amp": 500, "source": "sensed"}],
        "pocketed": [],
    }


def test_nodes_lists_a_silent_strike_sensor_as_suspect(tmp_path):
    journal = tmp_path / "j.sqlite"
    db = sqlite3.connect(journal)
    db.executescript(SCHEMA)
    shots = [("club", "t1", n, json.dumps(shot(n, n < 5))) for n in range(20)]
    shots += [("club", "t2", n, json.dumps(shot(n, True))) for n in range(3)]
    db.executemany("INSERT INTO shots (venue, tbl, n, shot) VALUES (?, ?, ?, ?)", shots)
    db.commit()
    db.close()
    cfg = tmp_path / "host.toml"
    cfg.write_text(
        f'venue = "club"\njournal = "{journal}"\n'
        '[tables.t1]\nnodes = ["t1-node"]\n[tables.t2]\nnodes = ["t2-node"]\n'
        'sensors = ["strike"]\n'
    )
    got = _sensor_health(SimpleNamespace(config=str(cfg)), "club", {"t1", "t2", "t3"})
    assert got["t1"] == "suspect: strike sensor"  # 15 shots without it since the 5th
    assert got["t2"] == "ok"  # 3 shots, each struck: the rails are not judged yet
    assert got["t3"] == "?"  # no shot at all
    row = {
        "table": "t1",
        "node": "t1-node",
        "state": "online",
        "fw": "1.0",
        "pinmap": "esp32-devkitc",
        "last_seen_s": 1.0,
        "rssi": -60,
        "counters": {},
        "update": None,
        "sensors": got["t1"],
    }
    head, line = table_text([row]).splitlines()
    assert head.split()[-1] == "SENSORS" and line.endswith("suspect: strike sensor")
    # without a config there is no journal to read: nothing claimed
    assert _sensor_health(SimpleNamespace(config=None), "club", {"t1"}) == {}
