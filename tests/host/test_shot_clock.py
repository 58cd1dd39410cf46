"""The shot clock (issue 25, item 3; docs/displays.md "Shot clock"): started and stopped by
sensor events through the real pipeline, with and without a strike sensor, held, extended
per rack, and the time foul proposed to the referee, never applied alone.

In-process, no broker: scripted node streams (tests/host/scripts.py), ticks and referee
inputs at given table times, as the daemon journals them; a snapshot round trip and a
replay give the same clock.
"""

import pytest
from hypothesis import given, strategies as st

from railbird.config import from_dict
from railbird.core import snapshot
from railbird.core.pipeline import Pipeline
from railbird.core.shotclock import (
    SECOND_US,
    ClockAction,
    ClockError,
    ClockStatus,
    ShotClock,
    clock_data,
    load_clock,
)
from railbird.rules import Referee, RulesError
from railbird.rules.shotclock import WPA, parse_shot_clock

from . import scripts as S

S_ = SECOND_US


def cfg():
    table = {"game": "10-ball", "players": ["A", "B"], "race_to": 3, "nodes": [S.NODE]}
    return from_dict({"venue": S.VENUE, "tables": {S.TABLE: table}})


class Table:
    """One table's pipeline, fed at explicit table times (node time = table time here)."""

    def __init__(self, shot_clock=True):
        self.p = Pipeline(cfg())
        self.seq = 0
        self.records = []
        self.inputs = []  # what the daemon would journal, to replay
        match = {"type": "match", "game": "10-ball", "players": ["A", "B"], "race_to": 3}
        if shot_clock is not None:
            match["shot_clock"] = shot_clock
        self.ref(match, 1 * S_)
        self.inputs.append(("message", S.sync_result(0), None))
        self.records += self.p.on_message(*S.sync_result(0), None)[2]

    def replay(self):
        """The same inputs through a fresh pipeline (as `railbird replay` does) -> records."""
        p, out = Pipeline(cfg()), []
        for kind, body, rx in self.inputs:
            if kind == "referee":
                out += p.on_referee(S.VENUE, S.TABLE, {"input": body}, rx=rx)[2]
            elif kind == "message":
                out += p.on_message(*body, rx)[2]
            else:
                out += p.tick(rx)
        return p, out

    def ref(self, inp, rx):
        self.inputs.append(("referee", inp, rx))
        status, reason, recs = self.p.on_referee(S.VENUE, S.TABLE, {"input": inp}, rx=rx)
        self.records += recs
        return status, reason

    def events(self, evs, rx=None):
        evs = S.number(evs, self.seq)
        self.seq += len(evs)
        for topic, payload in S.batches(evs, size=64):
            self.inputs.append(("message", (topic, payload), rx))
            status, reason, recs = self.p.on_message(topic, payload, rx)
            assert status == "ok", reason
            self.records += recs

    def tick(self, now_s):
        self.inputs.append(("tick", None, round(now_s * S_)))
        self.records += self.p.tick(round(now_s * S_))

    @property
    def clock(self):
        return self.p.tables[(S.VENUE, S.TABLE)].clock

    def last_view(self):
        return [r.state["shot_clock"] for r in self.records if r.kind == "state"][-1]


def strike(t_ms):
    return S.ev(t_ms, "strike", amp=3000)


def break_and_rest(tb, strike_sensor):
    """A breaks at 10 s (a ball down: A continues), the table rests; -> the shot's end."""
    tb.ref({"type": "lag", "winner": 0}, 2 * S_)
    evs = S.break_shot(10_200)
    if strike_sensor:
        evs = [strike(10_000), *evs]
    tb.events(evs)
    end = 13_400_000  # the break's last rail hit
    tb.tick(end / S_ + 10)  # past quiet_ms (strike_quiet_ms with a strike) and the window
    return end


@pytest.mark.parametrize("strike_sensor", [True, False])
def test_the_count_starts_backdated_to_the_last_activity_and_stops_at_the_next_shot(
    strike_sensor,
):
    tb = Table()
    end = break_and_rest(tb, strike_sensor)
    c = tb.clock
    # the first shot after a legal break: the long time, no extension (WPA)
    assert c.status == ClockStatus.RUNNING and c.player == 0 and c.long
    assert c.started == end and c.backdated
    assert c.deadline == end + 60 * S_ and not c.can_extend()
    view = tb.last_view()
    assert view["backdated"] and view["deadline"] == end + 60 * S_
    # the display's count: what was left when the host knew the table was at rest
    assert view["remaining_us"] == view["deadline"] - view["at"] and view["at"] > end
    assert view["warning_us"] == 10 * S_
    # the next shot 20 s after the rest: the strike stops the count, else its first rail
    nxt = [S.ev(33_650, "rail", rail="F", amp=900), S.ev(34_000, "drop", pocket="SL", dur=30000)]
    if strike_sensor:
        nxt = [strike(33_400), *nxt]
    tb.events(nxt)
    tb.tick(36)
    c = tb.clock
    assert c.status == ClockStatus.STOPPED
    if strike_sensor:
        assert c.stop == "strike" and c.remaining_us == end + 60 * S_ - 33_400_000
    else:  # late by the cue ball's travel to its first rail
        assert c.stop == "activity" and c.remaining_us == end + 60 * S_ - 33_650_000


def test_running_out_proposes_the_foul_and_the_referee_decides():
    tb = Table()
    end = break_and_rest(tb, True)
    tb.tick((end + 59 * S_) / S_)
    assert tb.clock.status == ClockStatus.RUNNING  # not yet: 1 s left
    tb.tick((end + 61 * S_) / S_ + 1)  # the release point passes the deadline
    c = tb.clock
    assert c.status == ClockStatus.EXPIRED and c.proposal
    timeout = [r for r in tb.records if r.kind == "state"][-1]
    assert timeout.cause == "shot_clock"
    assert timeout.state["shot_clock"]["proposal"] == {"fouls": ["6.15"]}
    assert "time ran out for A" in timeout.announcements[0]["text"]
    # never applied alone: A is still at the table, no foul counted
    assert timeout.state["at_table"] == "A" and timeout.state["consecutive_fouls"]["A"] == 0
    # the referee accepts: the proposed foul as a shot of his; B has cue ball in hand and
    # the count waits until the referee says the cue ball is placed
    t_accept = end + 70 * S_
    assert tb.ref({"type": "shot", "pocketed": [], "fouls": ["6.15"]}, t_accept)[0] == "ok"
    c = tb.clock
    assert tb.last_view()["player"] == 1 and c.status == ClockStatus.WAITING
    assert c.wait == "cue_ball" and c.remaining_us == 35 * S_
    assert tb.ref({"type": "clock", "action": "placed"}, t_accept + 9 * S_)[0] == "ok"
    c = tb.clock
    assert c.status == ClockStatus.RUNNING and c.deadline == t_accept + 44 * S_
    assert not c.backdated and c.can_extend()


def test_a_dismissed_time_foul_stays_unruled():
    tb = Table()
    end = break_and_rest(tb, False)
    tb.tick((end + 62 * S_) / S_)
    assert tb.clock.proposal
    assert tb.ref({"type": "clock", "action": "dismiss"}, end + 63 * S_)[0] == "ok"
    assert not tb.clock.proposal and tb.last_view()["proposal"] is None
    # the referee restarts the count for the shot
    assert tb.ref({"type": "clock", "action": "restart"}, end + 64 * S_)[0] == "ok"
    assert tb.clock.deadline == end + 64 * S_ + 60 * S_


def test_hold_resume_adjust_and_one_extension_per_player_per_rack():
    tb = Table()
    break_and_rest(tb, True)
    # A's first shot (the long one) is played; the next shot has the normal 35 s
    tb.events([strike(20_000), *S.single_pot(20_200)])
    tb.tick(40)  # closes at strike_quiet after 21 s: A continues
    c = tb.clock
    assert c.status == ClockStatus.RUNNING and not c.long and c.limit_us == 35 * S_
    rest = c.started
    assert rest == 21_000_000
    at = 41 * S_
    assert tb.ref({"type": "clock", "action": "hold"}, at)[0] == "ok"
    assert tb.clock.status == ClockStatus.HELD and tb.clock.remaining_us == rest + 35 * S_ - at
    assert tb.ref({"type": "clock", "action": "adjust", "seconds": 20}, at + S_)[0] == "ok"
    assert tb.clock.remaining_us == 20 * S_
    assert tb.ref({"type": "clock", "action": "resume"}, at + 5 * S_)[0] == "ok"
    assert tb.clock.deadline == at + 25 * S_
    assert tb.ref({"type": "clock", "action": "extension"}, at + 6 * S_)[0] == "ok"
    assert tb.clock.deadline == at + 50 * S_ and tb.last_view()["extensions_left"] == [0, 1]
    status, reason = tb.ref({"type": "clock", "action": "extension"}, at + 7 * S_)
    assert status == "refused" and "used" in reason
    status, reason = tb.ref({"type": "clock", "action": "adjust"}, at + 7 * S_)
    assert status == "refused" and "seconds" in reason
    status, reason = tb.ref({"type": "clock", "action": "nap"}, at + 7 * S_)
    assert status == "refused" and "hold" in reason


def test_extensions_come_back_with_a_new_rack():
    c = ShotClock(WPA).turn(0, 1, 0)
    c = c.act(ClockAction.EXTENSION, S_)
    assert not c.can_extend() and c.extensions_used == (1, 0)
    assert not c.turn(0, 1, 50 * S_).can_extend()  # the same rack
    assert c.turn(0, 2, 50 * S_).can_extend()  # the next rack
    assert c.turn(1, 1, 50 * S_).can_extend()  # the other player's own


def test_off_by_default_casual_play_has_no_clock():
    tb = Table(shot_clock=None)
    break_and_rest(tb, True)
    assert tb.clock is None
    assert all("shot_clock" not in r.state for r in tb.records if r.kind == "state")
    status, reason = tb.ref({"type": "clock", "action": "hold"}, 30 * S_)
    assert status == "refused" and "no shot clock" in reason


def test_a_replay_of_the_inputs_makes_the_same_clock():
    tb = Table()
    end = break_and_rest(tb, False)
    tb.ref({"type": "clock", "action": "hold"}, end + 5 * S_)
    tb.ref({"type": "clock", "action": "resume"}, end + 9 * S_)
    tb.tick((end + 70 * S_) / S_)
    assert tb.clock.proposal
    p, records = tb.replay()
    assert p.tables[(S.VENUE, S.TABLE)].clock == tb.clock
    assert [r.as_dict() for r in records] == [r.as_dict() for r in tb.records]


def test_the_clock_survives_a_snapshot_exactly():
    tb = Table()
    break_and_rest(tb, True)
    blob = snapshot.encode(snapshot.dump(tb.p))
    p2 = snapshot.load(cfg(), snapshot.decode(blob))
    assert p2.tables[(S.VENUE, S.TABLE)].clock == tb.clock
    assert snapshot.encode(snapshot.dump(p2)) == blob


def test_every_number_is_the_events_and_bad_settings_are_refused():
    s = parse_shot_clock({"shot_s": 30, "extension_s": 30, "first_shot_s": 30, "warning_s": 5})
    assert (s.shot_s, s.extension_s, s.first_shot_s, s.warning_s) == (30, 30, 30, 5)
    assert parse_shot_clock(True) == WPA and parse_shot_clock(None) is None
    bad = [{"shot_s": 0}, {"warning_s": 40}, {"preset": "bca"}, {"tempo": 3}, "35", {"foul": 6}]
    for clock in bad:
        with pytest.raises(RulesError):
            parse_shot_clock(clock)
    m = {"type": "match", "game": "14.1", "players": ["A", "B"], "target": 50}
    with pytest.raises(RulesError, match="no foul"):
        Referee({**m, "shot_clock": {"foul": "general 26"}})  # a miscue is no foul (WPA)
    Referee({**m, "shot_clock": {"foul": "6.16"}})


@given(st.lists(st.tuples(st.sampled_from(list(ClockAction)), st.integers(0, 120)), max_size=12))
def test_any_referee_sequence_keeps_the_clock_whole(actions):
    """Whatever the referee presses, the clock is refused or stays consistent: a running
    count has a deadline, every other keeps what is left, never below zero, and the
    snapshot form gives it back."""
    c = ShotClock(WPA).turn(0, 1, 0)
    at = 0
    for action, dt in actions:
        at += dt * 100_000
        try:
            c = c.act(action, at, dt if action == ClockAction.ADJUST else None)
        except ClockError:
            continue
        if c.status == ClockStatus.RUNNING:
            assert c.deadline is not None and c.remaining_us is None
        else:
            assert c.deadline is None and (c.left(at) or 0) >= 0
        assert sum(c.extensions_used) <= WPA.extensions
        assert load_clock(clock_data(c)) == c
