"""The strike channel in shot assembly (issue 15, items 1 and 4; docs/shots.md "Strike").

Scripted streams: a soft safety heard only by the strike sensor is a shot (the turn passes,
the missing rail is a flagged no-rail foul candidate); a strike after `strike_gap_ms` of
silence closes the shot in play at once; the shot opens at its strike and counts later
strikes as clicks; the provisional `inplay` record. In-process, no broker.
"""

from railbird.config import from_dict
from railbird.core.game import shot_input
from railbird.core.pipeline import Pipeline
from railbird.core.records import InplayRecord, ShotRecord
from railbird.core.shots import ShotAssembler, ShotParams
from railbird.core.timeline import Event

from . import scripts as S


def cfg(**top):
    d = {
        "venue": S.VENUE,
        "tables": {
            S.TABLE: {"game": "10-ball", "players": ["A", "B"], "race_to": 3, "nodes": [S.NODE]}
        },
    }
    d.update(top)
    return from_dict(d)


def play(events, config=None):
    """Lag (A breaks), sync, the events in batches of 4, end of input -> records."""
    p = Pipeline(config or cfg())
    recs = p.on_referee(S.VENUE, S.TABLE, {"input": {"type": "lag", "winner": 0}})[2]
    recs += p.on_message(*S.sync_result(0), None)[2]
    for topic, payload in S.batches(S.number(events)):
        status, reason, out = p.on_message(topic, payload, None)
        assert status == "ok", reason
        recs += out
    return recs + p.flush()


def of(records, typ):
    return [r for r in records if r.kind == typ]


def strike(t_ms, amp=None):
    return S.ev(t_ms, "strike") if amp is None else S.ev(t_ms, "strike", amp=amp)


def test_soft_safety_heard_only_by_the_strike_sensor_is_a_shot_and_passes_the_turn():
    """A break that pockets a ball (A continues), then A's soft safety: the strike and
    nothing else, no rail, no pocket. Before the strike channel that shot did not exist, A
    stayed at the table and B's next balls would have been A's."""
    recs = play([strike(1000, 3000), *S.break_shot(1200), strike(20000, 350)])
    shots = [r.shot for r in of(recs, "shot")]
    assert len(shots) == 2
    safety = shots[1]
    assert (safety["start"], safety["end"]) == (20_000_000, 20_000_000)
    assert safety["strike"] == {"t": 20_000_000, "amp": 350, "source": "sensed"}
    assert safety["pocketed"] == [] and safety["rails"] == []
    states = [r.state for r in of(recs, "state") if r.cause == "shot"]
    assert states[0]["at_table"] == "A"  # a legal break with a ball down: A continues
    assert states[1]["at_table"] == "B"  # the soft safety was A's turn
    assert "rail_after_contact" in states[1]["unconfirmed"]


def test_shot_input_flags_the_missing_rail_of_a_strike_only_shot():
    a = ShotAssembler("t1")
    a.feed(Event(t=5_000_000, node="n", boot=1, seq=0, kind="strike", amp=200))
    (shot,) = a.flush()
    inp = shot_input(shot, state={"breaking": False, "balls_on_table": [1, 2, 3]})
    assert inp["rail_after_contact"] is False
    assert "rail_after_contact" in inp["uncertain"]
    assert inp["pocketed"] == [] and inp["t_us"] == 5_000_000


def test_a_rail_or_a_pocket_makes_the_missing_rail_no_question():
    """Only a shot with nothing sensed after its strike is a no-rail candidate: with a rail
    the fact is sensed; with a pocketed ball 6.3 does not apply."""
    for follow in ("rail", "drop"):
        a = ShotAssembler("t1")
        a.feed(Event(t=0, node="n", boot=1, seq=0, kind="strike", amp=2000))
        extra = {"rail": "H", "amp": 500} if follow == "rail" else {"pocket": "SL", "dur": 30000}
        a.feed(Event(t=400_000, node="n", boot=1, seq=1, kind=follow, **extra))
        (shot,) = a.flush()
        inp = shot_input(shot, state={"breaking": False, "balls_on_table": [1, 2, 3]})
        assert "rail_after_contact" not in inp.get("uncertain", [])


def test_the_shot_opens_at_its_strike_and_later_strikes_are_clicks():
    recs = play([strike(1000, 3000), S.ev(1250, "strike", amp=900), *S.break_shot(1300)])
    (shot,) = [r.shot for r in of(recs, "shot")]
    assert shot["start"] == 1_000_000  # the strike, not the first rail hit 300 ms later
    assert shot["strike"]["t"] == 1_000_000 and shot["clicks"] == 1
    assert shot["sources"]["start"] == "sensed"


def test_a_shot_without_a_strike_has_none():
    recs = play(S.single_pot(1000))
    (shot,) = [r.shot for r in of(recs, "shot")]
    assert shot["strike"] is None and shot["clicks"] == 0 and shot["start"] == 1_000_000


def test_the_next_strike_closes_the_shot_in_play_at_once():
    """Fast play: the next stroke 2.6 s after the last ball of the shot. The shot closes
    when that strike is fed, with its own last activity as end, not quiet_ms later; the
    strike opens the next shot."""
    a = ShotAssembler("t1")
    evs = [
        Event(t=0, node="n", boot=1, seq=0, kind="strike", amp=2500),
        Event(t=300_000, node="n", boot=1, seq=1, kind="rail", rail="F", amp=700),
        Event(t=900_000, node="n", boot=1, seq=2, kind="drop", pocket="FR", dur=30000),
    ]
    for e in evs:
        assert a.feed(e) == []
    nxt = Event(t=900_000 + 2_600_000, node="n", boot=1, seq=3, kind="strike", amp=2400)
    (closed,) = a.feed(nxt)
    assert (closed["n"], closed["start"], closed["end"]) == (1, 0, 900_000)
    assert [p["pocket"] for p in closed["pocketed"]] == ["FR"]
    assert a.open and a.cur.start == nxt.t and a.n == 2


def test_a_click_after_a_shorter_silence_stays_in_its_shot():
    """A slow ball meets another 2 s after the last sensed activity: a click, same shot."""
    a = ShotAssembler("t1")
    a.feed(Event(t=0, node="n", boot=1, seq=0, kind="strike", amp=800))
    assert a.feed(Event(t=2_000_000, node="n", boot=1, seq=1, kind="strike", amp=300)) == []
    (shot,) = a.flush()
    assert shot["clicks"] == 1 and shot["end"] == 2_000_000


def test_strike_gap_is_a_shots_parameter():
    config = cfg(shots={"strike_gap_ms": 1000})
    assert config.shots.strike_gap_us == 1_000_000
    assert ShotParams().strike_gap_us == 2_500_000
    evs = [strike(0, 900), S.ev(200, "rail", rail="H", amp=400), strike(1300, 800)]
    recs = play(evs, config)
    assert [(r.shot["start"], r.shot["end"]) for r in of(recs, "shot")] == [
        (0, 200_000),
        (1_300_000, 1_300_000),
    ]


def test_inplay_records_follow_the_open_shots_pocketed_list():
    """One record when the shot opens at its strike (nothing pocketed yet), one per drop,
    one when the cue detector labels a drop the cue ball; none for rails or clicks. The
    shot record follows when the shot closes."""
    evs = [
        strike(1000, 2000),
        S.ev(1200, "rail", rail="F", amp=800),
        S.ev(1400, "drop", pocket="HL", dur=30000),  # the cue ball (head pocket)
        S.ev(1450, "strike", amp=500),  # a click
        S.ev(2500, "drop", pocket="FR", dur=30000),  # an object ball, after it
        S.ev(1400 + 2900, "cue"),
    ]
    recs = play(evs)
    kinds = [r.kind for r in recs if isinstance(r, (InplayRecord, ShotRecord))]
    assert kinds == ["inplay"] * 4 + ["shot"]
    bodies = [r.inplay for r in of(recs, "inplay")]
    assert all(b["shot"] == 1 and b["start"] == 1_000_000 and b["provisional"] for b in bodies)
    assert [b["pocketed"] for b in bodies] == [
        [],
        [{"pocket": "HL", "t": 1_400_000}],
        [{"pocket": "HL", "t": 1_400_000}, {"pocket": "FR", "t": 2_500_000}],
        [{"pocket": "HL", "t": 1_400_000, "ball": 0}, {"pocket": "FR", "t": 2_500_000}],
    ]
    r = bodies[-1]
    assert set(r) == {"shot", "start", "pocketed", "provisional"}
