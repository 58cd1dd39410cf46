"""A strike with nothing after it, held or provisional as the likely foul (issue 26,
item 4; protocol/REFEREE.md §3b, docs/shots.md "Strike").

Through the real pipeline: A breaks and pockets a ball (A continues), then a soft safety
heard only by the strike sensor. With a referee at the table the shot waits for his check,
the no-rail foul (WPA 6.3) proposed; his one tap on the proposal rules the foul, on the
other choice the fair shot. Without a referee the fair default is ruled, provisional, with
the foul proposed, and the proposal's facts correct it to the foul. A strike followed by a
rail is ruled as sensed, nothing held, nothing proposed.
"""

from railbird.config import from_dict
from railbird.core.pipeline import Pipeline

from . import scripts as S
from .test_strike import of, strike


def table_cfg(referee):
    table = {"game": "10-ball", "players": ["A", "B"], "race_to": 3, "nodes": [S.NODE]}
    return from_dict({"venue": S.VENUE, "tables": {S.TABLE: dict(table, referee=referee)}})


def run(events, referee):
    p = Pipeline(table_cfg(referee))
    recs = p.on_referee(S.VENUE, S.TABLE, {"input": {"type": "lag", "winner": 0}})[2]
    recs += p.on_message(*S.sync_result(0), None)[2]
    for topic, payload in S.batches(S.number(events)):
        status, reason, out = p.on_message(topic, payload, None)
        assert status == "ok", reason
        recs += out
    return p, recs + p.flush()


SOFT_SAFETY = [strike(1000, 3000), *S.break_shot(1200), strike(20000, 350)]


def last_state(recs):
    return [r.state for r in of(recs, "state")][-1]


def held_after_safety():
    p, recs = run(SOFT_SAFETY, referee=True)
    st = last_state(recs)
    assert st["awaiting"] == "referee_check"
    assert st["at_table"] == "A"  # nothing ruled yet: the turn has not passed
    check = st["check"]
    assert check["facts"] == ["rail_after_contact"]
    assert check["proposed"].startswith("foul")
    assert "likely foul" in st["rulings"][-1]["text"]
    (entry,) = [x for x in st["valid_inputs"] if x["type"] == "confirm"]
    labels = [c["label"] for c in entry["choices"]]
    assert check["proposed"] in labels and "no foul" in labels
    return p, entry["choices"], check["proposed"]


def answer(p, choice):
    inp = {"type": "confirm", **choice["facts"]}
    status, reason, recs = p.on_referee(S.VENUE, S.TABLE, {"input": inp})
    assert status == "ok", reason
    return last_state(recs)


def test_strike_only_shot_is_held_with_the_no_rail_foul_proposed_and_accepted():
    p, choices, proposal = held_after_safety()
    st = answer(p, next(c for c in choices if c["label"] == proposal))
    assert st["awaiting"] is None and st["check"] is None
    assert st["at_table"] == "B" and st["ball_in_hand"] == "anywhere"  # the foul: B in hand
    assert st["consecutive_fouls"]["A"] == 1


def test_strike_only_shot_dismissed_by_the_referee_is_fair():
    p, choices, proposal = held_after_safety()
    st = answer(p, next(c for c in choices if c["label"] != proposal))
    assert st["awaiting"] is None and st["check"] is None
    assert st["at_table"] == "B" and st["ball_in_hand"] is None  # a fair safety: B to shoot
    assert st["consecutive_fouls"]["A"] == 0


def test_without_a_referee_the_fair_default_is_provisional_with_the_foul_proposed():
    _, recs = run(SOFT_SAFETY, referee=False)
    st = last_state(recs)
    assert st["awaiting"] is None and st["ball_in_hand"] is None and st["at_table"] == "B"
    (prov,) = st["provisional"]
    assert prov["ruling"] == "no foul" and prov["proposed"].startswith("foul")
    assert any("likely foul" in r["text"] for r in st["rulings"])
    shot = of(recs, "shot")[-1].shot
    assert any(w.startswith("strike: nothing sensed after") for w in shot["warnings"])


def test_without_a_referee_the_proposal_corrects_the_provisional_ruling_to_the_foul():
    p, recs = run(SOFT_SAFETY, referee=False)
    (prov,) = last_state(recs)["provisional"]
    st = answer(p, next(c for c in prov["choices"] if c["label"] == prov["proposed"]))
    assert st["provisional"] == [] and st["ball_in_hand"] == "anywhere"
    assert st["at_table"] == "B" and st["consecutive_fouls"]["A"] == 1


def test_a_strike_followed_by_a_rail_is_ruled_as_before():
    events = [*SOFT_SAFETY[:-1], strike(20000, 900), S.ev(20400, "rail", rail="H", amp=500)]
    _, recs = run(events, referee=True)
    st = last_state(recs)
    assert st["awaiting"] is None and st["check"] is None and st["provisional"] == []
    assert st["at_table"] == "B" and st["ball_in_hand"] is None
    shot = of(recs, "shot")[-1].shot
    assert not any(w.startswith("strike: nothing sensed after") for w in shot["warnings"])
