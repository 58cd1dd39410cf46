"""Ball identity from the colour station (docs/shots.md "Ball identity"; protocol/SPEC.md
event kind `ball`): reads paired with drops by the pocket's expected return delay, named
`sensed` with their confidence; a weak read or none leaves the ball presumed by the rules,
with a warning that says so; a host from before the kind counts and skips the reads."""

import json

from railbird.config import from_dict
from railbird.core.game import shot_input
from railbird.core.pipeline import Pipeline
from railbird.core.records import ShotRecord
from railbird.core.shots import ShotParams, assemble, cue_return_us
from railbird.core.timeline import Event
from railbird.rules import Referee
from rbproto import codec

from . import scripts as S

P = ShotParams(cue_return_us=cue_return_us("9ft"))


def ev(t, kind, seq, **kw):
    return Event(t=t, node="n", boot=1, seq=seq, kind=kind, **kw)


def shot(events, p=P):
    return assemble("t1", 1, events, 10_000_000, [], p)


def test_reads_name_the_drops_by_return_delay():
    # the 3 into HL (return ~2.85 s), then the 9 into FL (~1 s): the 9 reaches the station first
    s = shot(
        [
            ev(1_000_000, "rail", 0, rail="H", amp=900),
            ev(1_500_000, "drop", 1, pocket="HL", dur=40_000),
            ev(1_700_000, "drop", 2, pocket="FL", dur=40_000),
            ev(2_700_000, "ball", 3, ball=9, conf=95),
            ev(4_350_000, "ball", 4, ball=3, conf=88),
        ]
    )
    got = [(x["pocket"], x["ball"], x["source"], x.get("conf")) for x in s["pocketed"]]
    assert got == [("HL", 3, "sensed", 88), ("FL", 9, "sensed", 95)]
    assert not [w for w in s["warnings"] if w.startswith("ball:")]


def test_a_weak_read_or_none_leaves_the_ball_presumed_and_says_so():
    events = [
        ev(1_000_000, "rail", 0, rail="H", amp=900),
        ev(1_500_000, "drop", 1, pocket="FR", dur=40_000),
        ev(2_500_000, "ball", 2, ball=7, conf=30),
    ]
    s = shot(events)
    assert s["pocketed"][0]["ball"] is None
    assert any("read as the 7 at 30 %" in w for w in s["warnings"])
    # the station unplugged: no read at all, on a table that has one
    s = shot(events[:2], ShotParams(cue_return_us=P.cue_return_us, colour_station=True))
    assert s["pocketed"][0]["ball"] is None
    assert any("colour station unplugged" in w for w in s["warnings"])
    # a table without a station says nothing about it
    assert not [w for w in shot(events[:2])["warnings"] if w.startswith("ball:")]


def test_a_cue_ball_read_agrees_with_the_cue_detector():
    s = shot(
        [
            ev(1_000_000, "rail", 0, rail="H", amp=900),
            ev(1_500_000, "drop", 1, pocket="SL", dur=40_000),
            ev(1_600_000, "drop", 2, pocket="SR", dur=40_000),
            ev(3_500_000, "cue", 3, dur=40_000),
            ev(3_510_000, "ball", 4, ball=0, conf=99),
            ev(3_700_000, "ball", 5, ball=5, conf=99),
        ]
    )
    balls = sorted((x["pocket"], x["ball"]) for x in s["pocketed"])
    assert balls in ([("SL", 0), ("SR", 5)], [("SL", 5), ("SR", 0)])
    assert s["object_balls_to_rail_range"] is not None


def _ten_ball_after_break():
    ref = Referee({"type": "match", "game": "10-ball", "players": ["Ann", "Bob"], "race_to": 3})
    ref.feed({"type": "lag", "winner": "Ann"})
    ref.feed({"type": "shot", "pocketed": [], "rail_after_contact": True,
              "object_balls_to_rail": 4})  # fmt: skip
    return ref


def test_the_rules_use_a_sensed_number_and_presume_only_without_one():
    events = [
        ev(1_000_000, "rail", 0, rail="H", amp=900),
        ev(1_500_000, "drop", 1, pocket="FL", dur=40_000),
        ev(2_500_000, "ball", 2, ball=4, conf=97),
    ]
    ref = _ten_ball_after_break()
    state = ref.state_json()
    ref.feed(shot_input(shot(events), state=state))
    after = ref.state_json()
    assert 4 not in after["balls_on_table"] and 1 in after["balls_on_table"]
    assert not any("presumed to be" in r["text"] for r in after.get("rulings") or [])
    ref = _ten_ball_after_break()
    ref.feed(shot_input(shot(events[:2]), state=state))
    after = ref.state_json()
    assert 1 not in after["balls_on_table"]  # presumed the lowest
    assert any("presumed to be the 1" in r["text"] for r in after.get("rulings") or [])


CFG = {"venue": "club", "reorder_window_ms": 100, "tables": {"t1": {"nodes": [S.NODE]}}}
TOPIC = codec.topic(S.VENUE, S.TABLE, "events", S.NODE)
BATCH = json.dumps(
    {
        "v": 1,
        "node": S.NODE,
        "boot": 1,
        "events": [
            {"seq": 0, "t": 10_000_000, "kind": "drop", "pocket": "FL", "dur": 40000},
            {"seq": 1, "t": 11_000_000, "kind": "ball", "ball": 12, "conf": 96},
        ],
    }
).encode()


def _pocketed(pipe):
    pipe.on_message(*S.sync_result(0), None)
    status, reason, _ = pipe.on_message(TOPIC, BATCH, S.RX)
    assert status == "ok", reason
    shots = [r.shot for r in pipe.flush() if isinstance(r, ShotRecord)]
    assert len(shots) == 1
    return [(p["pocket"], p["ball"]) for p in shots[0]["pocketed"]], pipe.stats()


def test_this_host_pairs_the_read(monkeypatch):
    got, stats = _pocketed(Pipeline(from_dict(CFG)))
    assert got == [("FL", 12)] and stats["unknown_kind_events"] == 0


def test_a_host_that_does_not_know_the_kind_skips_it_cleanly(monkeypatch):
    # the host as it was before `ball`: its codec's and pipeline's known kinds without it
    import railbird.core.fastcodec as fast
    import railbird.core.pipeline as pipeline

    needs = {k: v for k, v in codec._EVENT_NEEDS.items() if k != "ball"}
    monkeypatch.setattr(codec, "_EVENT_NEEDS", needs)
    monkeypatch.setattr(fast, "NEEDS", dict(needs))
    monkeypatch.setattr(pipeline, "EVENT_KINDS", frozenset(needs))
    got, stats = _pocketed(Pipeline(from_dict(CFG)))
    assert got == [("FL", None)]  # presumed, as before
    assert stats["unknown_kind_events"] == 1 and stats["rejected"] == 0
