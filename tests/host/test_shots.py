"""Shot assembly on scripted sensor streams (docs/shots.md)."""

from railbird.core.pipeline import Pipeline
from railbird.core.records import ShotRecord
from railbird.core.shots import ShotAssembler, ShotParams
from railbird.core.timeline import Event
from railbird.daemon.offline import offline_config

from . import scripts as S


def run(events, offset_us=0):
    pipe = Pipeline(offline_config())
    records = []
    records += pipe.on_message(*S.sync_result(offset_us), None)[2]
    for topic, payload in S.batches(S.number(events)):
        status, reason, recs = pipe.on_message(topic, payload, None)
        assert status == "ok", reason
        records += recs
    records += pipe.flush()
    return [r.shot for r in records if isinstance(r, ShotRecord)], pipe


def test_break_counts_rails_and_object_balls():
    (shot,), _ = run(S.break_shot(1000))
    assert shot["start"] == 1_000_000 and shot["end"] == 4_200_000
    assert [p["pocket"] for p in shot["pocketed"]] == ["FR"]
    assert shot["pocketed"][0] == {"ball": None, "pocket": "FR", "t": 1_900_000, "source": "sensed"}
    assert shot["distinct_rails"] == 6
    # rails F, LF, RF, LH (two hits 20 ms apart = one ball), RH, H inside 2 s; LF at 3.2 s is out
    assert shot["object_balls_to_rail"] == 6
    assert shot["sources"]["object_balls_to_rail"] == "inferred"
    assert all(r["source"] == "sensed" for r in shot["rails"])
    assert len(shot["rails"]) == 9 - 1


def test_single_pot():
    (shot,), _ = run(S.single_pot(0))
    assert [(p["pocket"], p["ball"]) for p in shot["pocketed"]] == [("SL", None)]
    assert shot["warnings"] == []  # a rail follows the drop: a shot, not a lip ball
    assert shot["distinct_rails"] == 1


def test_multi_ball_pot():
    (shot,), _ = run(S.multi_pot(0))
    assert [p["pocket"] for p in shot["pocketed"]] == ["HL", "FR"]
    assert [p["t"] for p in shot["pocketed"]] == [500_000, 1_200_000]


def test_scratch_pairs_cue_with_its_drop():
    (shot,), _ = run(S.scratch(0))
    assert [(p["pocket"], p["ball"], p["source"]) for p in shot["pocketed"]] == [
        ("SR", None, "sensed"),
        ("HR", 0, "inferred"),
    ]


def test_cue_without_drop_is_a_warned_scratch():
    (shot,), _ = run([S.ev(0, "rail", rail="H", amp=500), S.ev(900, "cue")])
    assert shot["pocketed"] == [] and shot["cue_unpaired"] == [900_000]
    assert any(w.startswith("cue:") for w in shot["warnings"])


def test_miss_has_rails_and_nothing_pocketed():
    (shot,), _ = run(S.miss(0))
    assert shot["pocketed"] == [] and shot["distinct_rails"] == 2


def test_ball_still_rolling_without_rail_contact_stays_in_its_shot():
    (shot,), _ = run(S.rolling(0))
    assert [p["pocket"] for p in shot["pocketed"]] == ["FL"]
    assert shot["end"] - shot["start"] == 4_500_000
    assert not any(w.startswith("lip") for w in shot["warnings"])


def test_lip_ball_after_five_seconds_rest_is_flagged():
    shots, _ = run(S.miss(0) + S.lip(700 + 5000 + 100))
    assert len(shots) == 2
    lip = shots[1]
    assert lip["pocketed"][0]["lip"] is True
    assert any(w.startswith("lip:") and "5.1 s" in w for w in lip["warnings"])
    assert lip["rest_before"] == 5_100_000


def test_quiet_period_splits_shots():
    shots, _ = run(S.single_pot(0) + S.miss(800 + 5000))
    assert [s["n"] for s in shots] == [1, 2]


def test_drop_just_under_rest_threshold_is_same_shot():
    shots, _ = run(S.miss(0) + S.lip(700 + 4999))
    assert len(shots) == 1 and not shots[0]["pocketed"][0].get("lip")


def test_jam_and_lost_are_warnings_not_activity():
    events = [
        S.ev(0, "jam", pocket="FL", dur=2_000_000),
        S.ev(10, "lost", pocket="FL", n=2),
        S.ev(20_000, "rail", rail="H", amp=400),
        S.ev(20_500, "lost", rail="H", n=1),
    ]
    (shot,), _ = run(events)
    assert shot["start"] == 20_000_000 and shot["end"] == 20_000_000
    w = shot["warnings"]
    assert w[0].startswith("jam: pocket FL") and w[1].startswith("lost: pocket FL missed 2")
    assert w[2].startswith("lost: rail H missed 1")


def test_whole_game_script():
    shots, pipe = run(S.game())
    assert len(shots) == 7
    assert [len(s["pocketed"]) for s in shots] == [1, 1, 2, 2, 0, 1, 1]
    assert pipe.counters["events"] == len(S.game())


def test_advance_closes_after_quiet():
    a = ShotAssembler("t1", ShotParams(quiet_us=1000))
    assert a.feed(Event(t=0, node="n", boot=1, seq=0, kind="rail", rail="H", amp=1)) == []
    assert a.advance(999) == []
    (shot,) = a.advance(1000)
    assert shot["n"] == 1 and not a.open


def test_shot_message_is_valid_protocol():
    from rbproto import codec

    shots, _ = run(S.game())
    assert len(shots) == 7
    for s in shots:
        msg = dict(s.items())
        msg["v"] = 1
        codec.validate("shot", msg)


def test_from_dict_types_every_field_it_sets():
    """`ShotParams.from_dict` casts its ints to `_IntParams` (mypy cannot follow its key
    check): the TypedDict names exactly the fields a `[shots]` key may set."""
    from dataclasses import fields

    from railbird.core.shots import _IntParams

    settable = {f.name for f in fields(ShotParams)} - {
        "cue_return_us",
        "table_mm",
        "colour_station",
    }
    assert set(_IntParams.__annotations__) == settable
    assert all(f.type == "int" for f in fields(ShotParams) if f.name in settable)
    assert ShotParams.from_dict({"quiet_us": 4_000_000.0}).quiet_us == 4_000_000
