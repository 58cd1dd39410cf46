"""The state line (`fen`) the host publishes with a table's state and in a referee console's
answer: the whole line when it fits the protocol's limit (a provisional break's included,
rules/fendoubt.py), left out when it does not (players with very long names), never cut:
a cut line is no state, and a simulator that adopted one failed on it (protocol/SPEC.md
`state`). Against a real private mosquitto."""

from __future__ import annotations

import dataclasses
import json

import pytest

from harness.waiting import poll
from railbird.core.records import Origin, RefereeRecord, Source, StateRecord
from railbird.daemon.answer import referee_answer
from railbird.outputs.mqtt_feeds import MqttFeedsOutput
from railbird.rules import Referee, from_fen
from rbproto import codec
from tests.displays.test_feeds_ha import Sink

pytestmark = pytest.mark.broker

SOFT_BREAK = {
    "type": "shot",
    "pocketed": [],
    "object_balls_to_rail": 5,
    "object_balls_to_rail_range": [2, 9],
    "uncertain": ["object_balls_to_rail"],
}


def played(players):
    ref = Referee({"type": "match", "game": "10-ball", "players": ["P1", "P2"], "race_to": 3})
    # The rules now refuse a name over 64 characters (rules/inputs.check_name), but a journal
    # written before that bound may hold one, and its line must still be left out, not cut.
    ref.state = dataclasses.replace(ref.state, players=tuple(players))
    ref.feed({"type": "lag", "winner": players[0]})
    return ref, ref.feed(SOFT_BREAK)


def test_a_provisional_break_goes_out_whole_and_a_line_too_long_is_left_out(broker):
    sink = Sink(broker.port, topics=("railbird/v1/#",))
    out = MqttFeedsOutput("127.0.0.1", broker.port, "railbird-host", "host-secret", discovery=False)
    out.start()
    topic = "railbird/v1/club/t1/state"
    try:
        ref, st = played(["Ann", "Bob"])
        assert st["provisional"] and len(st["fen"]) <= codec.FEN_MAX
        out.on_state("club", "t1", "10-ball", st, st["fen"], ref.announcements)
        assert poll(lambda: sink.last(topic) is not None)
        got = sink.last(topic)
        assert got["fen"] == st["fen"]
        assert from_fen(got["fen"]) == ref.state  # what the simulator adopts

        long_names = ["A" * 300, "B" * 300]  # from a journal older than the bound
        ref, st = played(long_names)
        assert len(st["fen"]) > codec.FEN_MAX
        out.on_state("club", "t1", "10-ball", st, st["fen"], ref.announcements)
        assert poll(lambda: sink.last(topic)["state"]["players"] == long_names)
        got = sink.last(topic)
        assert "fen" not in got and got["state"]["provisional"] == st["provisional"]
        assert out.stats["rejected"] == 0
    finally:
        out.stop()
        sink.close()


def test_the_referee_console_answer_carries_the_line_or_none():
    for players, whole in ((["Ann", "Bob"], True), (["A" * 300, "B" * 300], False)):
        ref, st = played(players)
        records = [
            RefereeRecord(
                venue="club",
                table="t1",
                id="x1",
                by=None,
                input=SOFT_BREAK,
                ok=True,
                error=None,
                source=Source.MQTT,
            ),
            StateRecord(
                venue="club",
                table="t1",
                game="10-ball",
                state=st,
                fen=st["fen"],
                announcements=ref.announcements,
                cause=SOFT_BREAK["type"],
                source=Origin.REFEREE,
            ),
        ]
        topic, payload = referee_answer(
            "railbird/v1/club/t1/referee", b'{"id": "x1"}', "ok", None, records
        )
        msg = json.loads(payload)
        assert topic == "railbird/v1/club/t1/referee/result"
        codec.decode("referee_result", payload)
        assert ("fen" in msg) == whole
        if whole:
            assert msg["fen"] == st["fen"]
