"""Sensor health from activity (issue 26, item 4; docs/shots.md "Sensor health").

A channel that has not fired through its kind's number of shots while the table played is
suspect, and every shot says so in its warnings while it lasts; a channel that fires again
is well; a table too new to tell is unknown; a strike sensor the table never had is not
judged. Hand-made shots, and the pipeline on a scripted stream.
"""

from railbird.core import health
from railbird.core.health import Health
from railbird.core.pipeline import Pipeline

from . import scripts as S
from .test_strike import cfg, of

ALL_RAILS = ("H", "F", "LH", "LF", "RH", "RF")


def shot(strike=True, rails=ALL_RAILS, pockets=()):
    return {
        "strike": {"t": 0, "amp": 900, "source": "sensed"} if strike else None,
        "clicks": 0,
        "rails": [{"rail": r, "t": 0, "amp": 500, "source": "sensed"} for r in rails],
        "pocketed": [{"ball": None, "pocket": p, "t": 0, "source": "sensed"} for p in pockets],
    }


def of_kind(hs, kind, item=""):
    (h,) = [h for h in hs if h.kind == kind and h.item == item]
    return h


def test_a_strike_sensor_silent_for_twelve_shots_is_suspect_and_well_again_when_it_fires():
    shots = [shot() for _ in range(20)] + [shot(strike=False) for _ in range(11)]
    kinds = health.present(shots, ())
    assert "strike" in kinds  # it fired in the kept shots: the table has one
    assert of_kind(health.channel_health(shots, kinds), "strike").health is Health.OK
    shots.append(shot(strike=False))  # the 12th shot without it
    h = of_kind(health.channel_health(shots, kinds), "strike")
    assert (h.health, h.silent_shots) == (Health.SUSPECT, 12)
    (said,) = health.warnings(health.channel_health(shots, kinds))
    assert said.startswith("sensor: strike sensor silent for 12+ shots")
    assert "shots open at their first rail or drop" in said
    shots.append(shot())
    assert of_kind(health.channel_health(shots, kinds), "strike").health is Health.OK


def test_a_table_that_never_had_a_strike_sensor_is_not_judged_on_it():
    shots = [shot(strike=False) for _ in range(50)]
    kinds = health.present(shots, ())
    assert "strike" not in kinds and health.warnings(health.channel_health(shots, kinds)) == []
    # a node that announced the sensor (birth caps) is judged on it, fired or not
    assert "strike" in health.present(shots, ("strike",))
    h = of_kind(health.channel_health(shots, ["strike"]), "strike")
    assert h.health is Health.SUSPECT


def test_one_dead_rail_among_five_that_play():
    shots = [shot(rails=("H", "F", "LH", "LF", "RH")) for _ in range(40)]
    hs = health.channel_health(shots, ["rail"])
    assert of_kind(hs, "rail", "RF").health is Health.SUSPECT
    assert all(of_kind(hs, "rail", r).health is Health.OK for r in ALL_RAILS[:5])
    assert health.summary(hs)["rail piezo RF"] == "suspect"
    # 39 shots are not enough to tell
    assert of_kind(health.channel_health(shots[:39], ["rail"]), "rail", "RF").health is (
        Health.UNKNOWN
    )


def test_pocket_beams_are_judged_over_many_more_shots():
    shots = [shot(pockets=("HL",)) for _ in range(149)]
    assert of_kind(health.channel_health(shots, ["drop"]), "drop", "FR").health is Health.UNKNOWN
    shots.append(shot(pockets=("SL",)))
    hs = health.channel_health(shots, ["drop"])
    assert of_kind(hs, "drop", "FR").health is Health.SUSPECT
    assert of_kind(hs, "drop", "SL").health is Health.OK


def test_adding_a_channel_kind_is_one_registration():
    ch = health.register(
        health.Channel(
            "glow", "glow sensor", (), lambda s: ("",) if s.get("glow") else (), 3, cap="glow"
        )
    )
    try:
        shots = [{"glow": True}, {}, {}, {}]
        assert of_kind(health.channel_health(shots, ["glow"]), "glow").health is Health.SUSPECT
        assert "glow" not in health.present([{}], ())
    finally:
        del health.CHANNELS[ch.kind]


def test_the_pipeline_says_a_dead_strike_sensor_in_every_shot_while_it_lasts():
    """14 pots heard by the strike sensor, then its piezo comes loose: 13 more shots that
    open at their rail. From the 12th silent shot on each carries the warning."""
    events = []
    t = 10_000
    for i in range(27):
        if i < 14:
            events.append(S.ev(t, "strike", amp=900))
        events += [
            S.ev(t + 300, "rail", rail="H", amp=600),
            S.ev(t + 900, "rail", rail="F", amp=500),
        ]
        t += 12_000
    p = Pipeline(cfg())
    recs = p.on_message(*S.sync_result(0), None)[2]
    for topic, payload in S.batches(S.number(events)):
        recs += p.on_message(topic, payload, None)[2]
    recs += p.flush()
    shots = [r.shot for r in of(recs, "shot")]
    assert len(shots) == 27
    warned = [
        i for i, s in enumerate(shots) if any("strike sensor silent" in w for w in s["warnings"])
    ]
    assert warned == list(range(25, 27))


def test_a_strike_sensor_the_config_names_is_judged_before_it_ever_fires():
    """`[tables.t1] sensors = ["strike"]` (what setup asks): a sensor that never fired is
    suspect after 12 shots; without the key the same table is not judged on it."""
    events = []
    for i in range(13):
        t = 10_000 + 12_000 * i
        events += [S.ev(t, "rail", rail="H", amp=600), S.ev(t + 500, "rail", rail="F", amp=500)]

    def warned(config):
        p = Pipeline(config)
        recs = p.on_message(*S.sync_result(0), None)[2]
        for topic, payload in S.batches(S.number(events)):
            recs += p.on_message(topic, payload, None)[2]
        recs += p.flush()
        shots = [r.shot for r in of(recs, "shot")]
        return [i for i, s in enumerate(shots) if any("strike sensor" in w for w in s["warnings"])]

    base = cfg().table_config(S.TABLE)
    assert warned(cfg()) == [] and base.sensors == []
    tables = {S.TABLE: {"game": "10-ball", "players": ["A", "B"], "race_to": 3, "nodes": [S.NODE]}}
    tables[S.TABLE]["sensors"] = ["strike"]
    assert warned(cfg(tables=tables)) == [11, 12]
