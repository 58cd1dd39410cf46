"""The pieces of `railbird run`'s outputs without a broker: the [outputs] config, the
factory, the restore at start-up (pocket counts by the journal's wall time, no stale
announcements) and the forwarding of shot facts' sources to the rules."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest

from railbird.config import ConfigError, from_dict
from railbird.core.game import Game, shot_input
from railbird.core.records import ShotRecord, StateRecord
from railbird.daemon.worker import Daemon
from railbird.outputs.base import Output
from railbird.outputs.factory import from_config
from railbird.outputs.mqtt_feeds import MqttFeedsOutput
from railbird.outputs.serial_scoreboard import SerialScoreboardOutput
from railbird.outputs.tables import Venues
from railbird.outputs.web.server import WebOutput

BASE = {
    "venue": "club",
    "tables": {
        "t1": {"game": "10-ball", "players": ["A", "B"], "race_to": 3, "nodes": ["t1-node"]}
    },
}


def cfg(**kw):
    d = json.loads(json.dumps(BASE))
    d.update(kw)
    return from_dict(d)


# -- config and factory --------------------------------------------------------------------
def test_default_outputs_are_the_feeds_only():
    c = cfg(broker={"client_id": "h"})
    outs = from_config(c)
    assert [type(o) for o in outs] == [MqttFeedsOutput]
    assert outs[0].discovery and outs[0].prefix == "homeassistant"
    assert outs[0].client._client_id == b"h-feeds"


def test_outputs_sections():
    c = cfg(
        referee_token="561234",
        outputs={
            "day_start_hour": 5,
            "feeds": {"discovery": False, "discovery_prefix": "ha", "client_id": "f"},
            "web": {"host": "127.0.0.1", "port": 0, "title": "Bar"},
            "serial": [
                {
                    "table": "t1",
                    "port": "/dev/ttyUSB0",
                    "baudrate": 57600,
                    "ack_timeout_ms": 100,
                    "retries": 2,
                }
            ],
        },
    )
    feeds, web, board = from_config(c)
    assert not feeds.discovery and feeds.prefix == "ha" and feeds.venues.day_start_hour == 5
    assert isinstance(web, WebOutput) and web.pins == {"club": "561234"} and web.title == "Bar"
    assert isinstance(board, SerialScoreboardOutput) and board.table == "t1"
    assert board.link.baudrate == 57600 and board.link.ack_timeout == 0.1
    assert from_config(cfg(outputs={"feeds": {"enabled": False}, "web": {"enabled": False}})) == []


@pytest.mark.parametrize(
    "outputs",
    [
        {"colour": 1},
        {"day_start_hour": 24},
        {"feeds": {"enabled": "yes"}},
        {"feeds": {"discovery_prefix": "ha/#"}},
        {"web": {"port": 70000}},
        {"web": {"pin": "1"}},
        {"serial": [{"port": "/dev/x"}]},
        {"serial": [{"table": "t1"}]},
        {"serial": [{"table": "t1", "port": "/dev/x"}, {"table": "t2", "port": "/dev/x"}]},
        {"serial": {"table": "t1"}},
    ],
)
def test_outputs_config_errors(outputs):
    with pytest.raises(ConfigError):
        cfg(outputs=outputs)


def test_web_without_referee_token_runs_read_only():
    (web,) = from_config(
        cfg(outputs={"feeds": {"enabled": False}, "web": {"host": "127.0.0.1", "port": 0}})
    )
    web.start()
    try:
        req = urllib.request.Request(
            f"{web.url}/api/v/club/t1/referee",
            json.dumps({"pin": "", "input": {"type": "undo"}}).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=5)
        assert e.value.code == 403 and b"referee input is off" in e.value.read()
    finally:
        web.stop()


# -- restore ---------------------------------------------------------------------------------
class Recorder(Output):
    name = "recorder"

    def __init__(self):
        self.calls = []

    def on_shot(self, venue, table, shot):
        self.calls.append(("shot", shot["n"]))

    def on_state(self, venue, table, game, state, fen, announcements):
        self.calls.append(("state", fen, announcements))


class Plain:
    """An output that is not an `Output` (no restore): it gets the last state only."""

    name = "plain"

    def __init__(self):
        self.states = []

    def on_state(self, venue, table, game, state, fen, announcements):
        self.states.append((fen, announcements))


def test_restart_shows_the_last_state_without_its_announcements(tmp_path):
    c = cfg(journal=str(tmp_path / "j.sqlite"), stats_period_s=0)
    rec = Recorder()
    d = Daemon(c, outputs=[rec], connect=False).start()
    try:
        # the configured match is shown from the start (no input yet)
        assert rec.calls and rec.calls[0][0] == "state" and rec.calls[0][2] == []
        res = d.referee_input("club", "t1", {"type": "lag", "winner": 0})
        assert res["ok"] and res["announcements"]
    finally:
        d.stop()
    rec2, plain = Recorder(), Plain()
    d = Daemon(c, outputs=[rec2, plain], connect=False).start()
    d.stop()
    assert rec2.calls == [("state", res["fen"], [])]
    assert plain.states == [(res["fen"], [])]


def test_venues_restore_counts_todays_shots_by_their_wall_time():
    now = time.time()
    v = Venues(clock=lambda: now)
    shot = {"n": 1, "pocketed": [{"ball": None, "pocket": "FL"}, {"ball": 0, "pocket": "SR"}]}
    st = {"players": ["A", "B"], "rack": 1, "scores": {"A": 0, "B": 0}}

    def state(fen, announcements, wall):
        return StateRecord(
            venue="club",
            table="t1",
            game="10-ball",
            state=st,
            fen=fen,
            announcements=announcements,
            cause=None,
            source=None,
            wall=wall,
        )

    hist = [
        state("f0", [], None),
        ShotRecord(venue="club", table="t1", shot=dict(shot, n=1), wall=now - 30 * 3600),  # old
        ShotRecord(venue="club", table="t1", shot=dict(shot, n=2), wall=now - 60),
        state("f1", [{"text": "Foul"}], now - 60),
    ]
    t = v.restore("club", "t1", hist, {"n1": {"state": "online"}})
    snap = v.snapshot("club", "t1")
    assert snap["pockets"]["total"] == 2 and snap["pockets"]["cue"] == 1
    assert snap["pockets"]["by_game"] == [{"match": 1, "game": "10-ball", "rack": 1, "balls": 2}]
    assert snap["announcements"] == [] and snap["fen"] == "f1" and snap["online"]
    assert t.last_shot["n"] == 2


# -- shot facts into the rules ---------------------------------------------------------------
def _shot(**kw):
    s = {
        "n": 1,
        "start": 10,
        "end": 20,
        "pocketed": [],
        "rails": [{"rail": "H"}],
        "object_balls_to_rail": 1,
        "warnings": [],
        "cue_unpaired": [],
    }
    s.update(kw)
    return s


PLAYING = {"breaking": False, "balls_on_table": [3, 4, 5], "to_spot": []}


def test_shot_input_forwards_sources_and_uncertain_facts():
    inp = shot_input(
        _shot(
            pocketed=[
                {"ball": None, "pocket": "FL", "t": 12, "source": "sensed"},
                {"ball": 0, "pocket": "SR", "t": 15, "source": "inferred"},
            ]
        ),
        state=PLAYING,
    )
    assert inp["pocketed"] == [
        {"pocket": "FL", "t": 12, "source": "sensed"},
        {"pocket": "SR", "ball": 0, "t": 15, "source": "inferred"},
    ]
    assert "uncertain" not in inp and "object_balls_to_rail" not in inp
    inp = shot_input(_shot(cue_unpaired=[14]), state=PLAYING)
    assert inp["off_table"] == [0] and inp["uncertain"] == ["off_table"]
    inp = shot_input(
        _shot(warnings=["lost: pocket HL missed 1 edge(s); a ball may be missing"]), state=PLAYING
    )
    assert inp["uncertain"] == ["pocketed"]
    # no game state: whether it is a break is unknown; the estimate goes, flagged
    inp = shot_input(_shot())
    assert inp["object_balls_to_rail"] == 1 and inp["uncertain"] == ["object_balls_to_rail"]


def test_an_inferred_scratch_is_unconfirmed_until_the_referee_confirms():
    g = Game({"type": "match", "game": "14.1", "players": ["A", "B"], "target": 50})
    assert g.feed({"type": "lag", "winner": 0})[0]
    ok, res = g.feed(
        shot_input(
            _shot(
                pocketed=[
                    {"ball": None, "pocket": "HL", "t": 12, "source": "sensed"},
                    {"ball": 0, "pocket": "SL", "t": 15, "source": "inferred"},
                ]
            ),
            state=g.state(),
        )
    )
    # the opening break: the rail estimate is an uncertain fact too
    assert ok and res["state"]["unconfirmed"] == ["object_balls_to_rail", "pocketed"]
    ok, res = g.feed({"type": "confirm"})
    assert ok and res["state"]["unconfirmed"] == []
    ok, _ = g.feed(shot_input(_shot(cue_unpaired=[14]), state=g.state()))
    assert ok and g.state()["unconfirmed"] == ["off_table"]
