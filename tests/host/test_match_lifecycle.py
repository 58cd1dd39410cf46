"""A whole match lifecycle from a referee console, with no simulator entering anything:
private mosquitto, `railbird run` as a subprocess, the simulated node firmware for the
shots, and `railbird ref` (the CLI console) for every referee input. New match, lag, a
push-out and the shoot-or-pass option it gives, a new match refused mid-match, concede
(WPA 1.11), the next match with the same players, abandon, undo, a new match with new
players; a wrong token is rejected; no host means exit status 3; the journal replays to
the same shots and game state (protocol/REFEREE.md, "Match control through the host")."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from harness.hostproc import RailbirdRun
from rbnode.simnode import SimNode

pytestmark = [pytest.mark.broker, pytest.mark.slow]

NODE, PW, TOKEN = "t1-node", "node-pw", "471108"
CONFIG = """
venue = "club"
subscribe = ["t1"]
reorder_window_ms = 150
stats_period_s = 0
referee_token = "{token}"
[broker]
host = "127.0.0.1"
port = {port}
user = "railbird-host"
password = "host-secret"
[shots]
quiet_ms = 400
lip_rest_ms = 400
cue_before_ms = 500
break_window_ms = 500
[tables.t1]
game = "10-ball"
players = ["Ann", "Bob"]
race_to = 2
break_order = "winner"
nodes = ["{node}"]
"""
BREAK = [(0, "rail", "F", 2500), (60, "rail", "LF", 1800), (80, "rail", "RF", 1700)]
BREAK += [(150, "rail", "LH", 900), (250, "drop", "FR", 30000), (350, "rail", "H", 500)]
PUSH_OUT = [(0, "rail", "LH", 700), (200, "rail", "F", 500)]


def ref(port, *args, token=TOKEN, timeout=5):
    """`railbird ref` as a referee would type it: -> (exit status, stdout, stderr)."""
    env = dict(os.environ, RAILBIRD_REFEREE_TOKEN=token, RAILBIRD_MQTT_PASSWORD="referee-secret")
    cmd = [sys.executable, "-m", "railbird", "ref", "--venue", "club", "--table", "t1"]
    cmd += ["--port", str(port), "--timeout", str(timeout), *args]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    return r.returncode, r.stdout, r.stderr


def ok(port, *args) -> str:
    rc, out, err = ref(port, *args)
    assert rc == 0, f"railbird ref {' '.join(args)}: exit {rc}: {out}{err}"
    return out


def state(port) -> dict:
    return json.loads(ok(port, "--json", "state"))["state"]


def valid(st) -> dict:
    return {v["type"]: v for v in st["valid_inputs"]}


def play(sn, shot):
    base = sn.now_us + 300_000
    for ms, kind, what, v in shot:
        at = base + ms * 1000
        if kind == "drop":
            sn.drop(what, dur_us=v, at_us=at)
        else:
            sn.rail(what, v, at_us=at)


def test_match_lifecycle_from_the_cli_console(broker, tmp_path):
    port = broker.port
    broker.add_user(NODE, PW)
    host = RailbirdRun(tmp_path / "host", CONFIG.format(port=port, token=TOKEN, node=NODE))
    host.start()
    sn = SimNode("127.0.0.1", port, "club", "t1", NODE, PW, tmp_path / "node", seed=3)
    sn.start()
    try:
        sn.wait_connected()
        host.wait(lambda s: s.get("sync_samples", 0) >= 3, "sync samples")

        # A new match over the configured one nobody has started (nothing is lost).
        out = ok(port, "match", "--players", "Ann", "Bob", "--race-to", "2")
        assert "10-ball match: Ann v Bob; lag for the break (1.2)" in out
        st = state(port)
        assert st["awaiting"] == "lag" and set(valid(st)) == {
            "match",
            "lag",
            "undo",
            "concede",
            "abandon",
        }

        assert "Ann wins the lag and chooses Ann to break (9.1)" in ok(port, "lag", "Ann")
        play(sn, BREAK)
        host.wait(lambda s: s["shots"] >= 1 and s["pending"] == 0, "the break ruled")
        st = state(port)
        assert st["at_table"] == "Ann" and st["push_out_allowed"] is True
        assert "push_out" in valid(st)

        assert "Ann plays a push-out (9.4)" in ok(port, "push-out")
        play(sn, PUSH_OUT)
        host.wait(lambda s: s["shots"] >= 2 and s["pending"] == 0, "the push-out ruled")
        st = state(port)
        assert st["awaiting"] == "shoot_or_pass" and st["at_table"] == "Bob"
        assert valid(st)["option"]["choices"] == ["shoot", "pass"]
        assert "call" not in valid(st) and "shot" not in valid(st)
        assert "Bob passes the shot back" in ok(port, "option", "pass")
        assert state(port)["at_table"] == "Ann"

        rc, out, err = ref(port, "match", "--players", "Cy", "Dee")
        assert rc == 1
        assert "a match is in progress: finish, concede or abandon it first" in err

        out = ok(port, "concede", "Bob")
        assert "Bob concedes: Ann wins the match 0-0" in out and "(1.11)" in out
        st = state(port)
        assert st["match_winner"] == "Ann" and st["ended"] == "conceded"
        # a new match, undo of the concession, or a correction of the last shot
        assert set(valid(st)) == {"match", "undo", "confirm"}
        confirm = valid(st)["confirm"]
        assert {k: confirm[k] for k in ("type", "unconfirmed", "correct")} == {
            "type": "confirm",
            "unconfirmed": [],
            "correct": True,
        }
        # what a correction starts from: the push-out's facts as sensed (REFEREE.md §3c)
        assert confirm["facts"]["facts"] == [
            {"fact": "rail_after_contact", "value": True, "origin": "sensed"}
        ]
        rc, out, err = ref(port, "call", "3", "SR")
        assert rc == 1 and "the match is over" in err

        # The next match, same players: everything from the last match.
        assert "10-ball match: Ann v Bob" in ok(port, "match")
        assert "Bob wins the lag" in ok(port, "lag", "1")
        assert "Match abandoned by the referee: no result" in ok(port, "abandon")
        st = state(port)
        assert st["ended"] == "abandoned" and st["match_winner"] is None
        assert st["at_table"] is None
        assert "Undo" in ok(port, "undo")
        st = state(port)
        assert st["ended"] is None and st["at_table"] == "Bob"
        ok(port, "abandon")

        out = ok(port, "match", "--game", "14.1", "--players", "Cy", "Dee", "--target", "25")
        assert "14.1 match: Cy v Dee" in out
        st = state(port)
        assert st["game"] == "14.1" and st["players"] == ["Cy", "Dee"] and st["awaiting"] == "lag"

        rc, out, err = ref(port, "undo", token="wrong")
        assert rc == 1 and "rejected: unauthorized" in err
        assert state(port)["players"] == ["Cy", "Dee"]  # nothing changed
        final = json.loads(ok(port, "--json", "state"))["fen"]
    finally:
        sn.stop()
        host.stop()

    rc, out, err = ref(port, "undo", timeout=1)
    assert rc == 3 and "no answer from the host in 1 s" in err

    r = subprocess.run(
        [sys.executable, "-m", "railbird", "replay", str(host.journal), "--check"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["tables"]["club/t1"]["fen"] == final
