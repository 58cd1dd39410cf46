"""The sensor health as the owner is shown it (issue 26, item 4; docs/shots.md "Sensor
health"): the daemon gives each output a table's health when it changes, never with every
shot, and after a restart the same as before it; the table's retained summary carries it
(protocol/SPEC.md `table_summary.sensors`). And the pipeline's kept-up activity judges
exactly as a scan of the kept shots does (core/health.py `Activity`), shot after shot.
"""

from __future__ import annotations

import json
import time

from hypothesis import given, settings, strategies as st

from harness.mqttsub import Capture
from railbird.config import from_dict
from railbird.core import health
from railbird.core.health import CHANNELS, ONE, Health
from railbird.daemon.ingest import now_us
from railbird.daemon.worker import Daemon
from railbird.outputs.base import Output
from railbird.outputs.mqtt_feeds import MqttFeedsOutput
from rbproto import codec

from . import scripts as S

FIVE = ("H", "F", "LH", "LF", "RH")  # RF's piezo is dead
SHOTS = 44  # 40 for a rail to be judged suspect, and a few more


class Recorder(Output):
    name = "recorder"

    def __init__(self):
        self.sensors: list = []
        self.shots = 0

    def on_shot(self, venue, table, shot):
        self.shots += 1

    def on_sensors(self, venue, table, report):
        self.sensors.append((table, report))


def _cfg(tmp_path):
    table = {"game": "10-ball", "players": ["Ann", "Bob"], "race_to": 5, "nodes": [S.NODE]}
    return from_dict(
        {"venue": S.VENUE, "journal": str(tmp_path / "j.sqlite"), "tables": {S.TABLE: table}}
    )


def _wait(pred, what, timeout=30.0):
    deadline = time.monotonic() + timeout  # generous: a loaded machine
    while not pred():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_the_owner_is_given_the_health_when_it_changes_and_the_same_after_a_restart(tmp_path):
    cfg = _cfg(tmp_path)
    rec, cap = Recorder(), Capture()
    feeds = MqttFeedsOutput(client=cap, discovery=False)
    d = Daemon(cfg, outputs=[rec, feeds], connect=False)
    clock = [now_us()]  # the daemon's host clock, held by the test
    d.now = lambda: clock[0]
    d.start()
    try:
        S.play(d, clock, SHOTS, FIVE)
        _wait(lambda: rec.shots == SHOTS, "the shots given to the outputs")
        feeds.flush()
    finally:
        d.stop()
    # before a shot: unknown; the first shot's rails fired: ok; the 40th without RF: suspect.
    # Nothing in between, though every shot closed in the daemon one by one.
    got = [(r.health, [h.name for h in r.suspect]) for _, r in rec.sensors]
    assert got == [
        (Health.UNKNOWN, []),
        (Health.OK, []),
        (Health.SUSPECT, ["rail piezo RF"]),
    ], got
    (last,) = [p for t, p, _ in cap.sent if t == codec.topic(S.VENUE, S.TABLE, "table_summary")][
        -1:
    ]
    summary = codec.decode("table_summary", last)
    assert summary["sensors"] == {
        "health": "suspect",
        "suspect": [
            {
                "kind": "rail",
                "item": "RF",
                "name": "rail piezo RF",
                "silent_shots": 40,
                "effect": CHANNELS["rail"].effect,
            }
        ],
    }

    # a restart rebuilds the table from its journal and gives the outputs the same health
    rec2 = Recorder()
    d2 = Daemon(cfg, outputs=[rec2], connect=False).start()
    d2.stop()
    assert [r for _, r in rec2.sensors] == [rec.sensors[-1][1]]
    assert rec2.sensors[0][1].text == "suspect: rail piezo RF"


# -- Activity: kept up shot by shot, the same as judging the kept shots again ----------------
def _scan_present(shots, caps):
    """The scan `health.present` was (the reference)."""
    return [
        k
        for k, ch in CHANNELS.items()
        if ch.cap is None
        or ch.cap in caps
        or any(next(iter(ch.fired(s)), None) is not None for s in shots)
    ]


def _scan_health(shots, kinds):
    """The scan `health.channel_health` was (the reference)."""
    out = []
    n = len(shots)
    for kind in kinds:
        ch = CHANNELS[kind]
        items = ch.items or (ONE,)
        since: dict = {}
        for back, shot in enumerate(reversed(shots[-ch.quiet_shots :])):
            for item in ch.fired(shot):
                since.setdefault(item, back)
            if len(since) == len(items):
                break
        for item in items:
            silent = since.get(item)
            if silent is not None:
                h = Health.OK
            elif n >= ch.quiet_shots:
                h, silent = Health.SUSPECT, min(n, ch.quiet_shots)
            else:
                h, silent = Health.UNKNOWN, n
            out.append(health.ChannelHealth(kind, item, h, silent))
    return out


_shot = st.fixed_dictionaries(
    {
        "strike": st.sampled_from([None, {"t": 0}]),
        "clicks": st.sampled_from([0, 0, 1]),
        "rails": st.lists(st.sampled_from(codec.RAILS), max_size=3).map(
            lambda rs: [{"rail": r} for r in rs]
        ),
        "pocketed": st.lists(
            st.tuples(st.sampled_from(codec.POCKETS), st.booleans()), max_size=2
        ).map(lambda ps: [dict({"pocket": p}, **({"conf": 90} if c else {})) for p, c in ps]),
    }
)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(_shot, max_size=90),
    st.integers(5, 60),
    st.sampled_from([(), ("strike",), ("colour",)]),
)
def test_activity_judges_as_a_scan_of_the_last_shots_after_every_shot(shots, window, caps):
    act = health.Activity(window)
    for i, shot in enumerate(shots):
        act.add(shot)
        recent = shots[max(0, i + 1 - window) : i + 1]
        kinds = _scan_present(recent, caps)
        assert act.kinds(caps) == kinds
        judged = _scan_health(recent, kinds)
        assert act.judge(caps) == judged
        # what every shot's warnings are made of: the suspect ones, in the same order
        assert act.suspects(caps) == [h for h in judged if h.health is Health.SUSPECT]
    # and one built at once from the kept shots (a snapshot's) judges alike
    assert health.Activity(window, shots[-window:]).judge(caps) == act.judge(caps)


def test_the_report_says_ok_suspect_or_unknown_in_one_line():
    unknown = health.report(health.channel_health([], ["rail"]))
    assert (unknown.health, unknown.text, unknown.as_dict()) == (
        Health.UNKNOWN,
        "?",
        {"health": "unknown", "suspect": []},
    )
    shots = [{"rails": [{"rail": r} for r in FIVE]}] * 40
    rep = health.report(health.channel_health(shots, ["rail"]))
    assert rep.text == "suspect: rail piezo RF"
    assert json.loads(json.dumps(rep.as_dict()))["suspect"][0]["silent_shots"] == 40
    # one more such shot changes nothing the owner is shown
    assert health.report(health.channel_health([*shots, shots[0]], ["rail"])) == rep
    ok = health.report(health.channel_health(shots[:5], ["rail"]))
    assert (ok.health, ok.text) == (Health.OK, "ok")


def test_a_channel_turns_suspect_exactly_quiet_shots_after_it_last_fired():
    """The boundary the random shots above rarely reach: the strike sensor heard once, then
    silent. It is ok for quiet_shots - 1 shots after, suspect from the quiet_shots-th on,
    and `suspects` says so exactly when the scan does."""
    q = CHANNELS["strike"].quiet_shots
    heard = {"strike": {"t": 0}, "clicks": 0, "rails": [{"rail": "H"}], "pocketed": []}
    silent = dict(heard, strike=None)
    shots = [silent] * q + [heard] + [silent] * (q + 2)
    act = health.Activity(3 * q)
    turned = []
    for i, shot in enumerate(shots):
        act.add(shot)
        judged = _scan_health(shots[: i + 1], _scan_present(shots[: i + 1], ("strike",)))
        want = [h for h in judged if h.health is Health.SUSPECT]
        assert act.suspects(("strike",)) == want, i
        turned.append(any(h.kind == "strike" for h in want))
    heard_at = q
    assert turned[heard_at : heard_at + q] == [False] * q  # within quiet_shots of the strike
    assert turned[heard_at + q :] == [True] * 3
