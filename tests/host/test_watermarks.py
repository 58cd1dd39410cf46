"""Per-node watermarks (docs/host.md "Per-node watermarks"): a node that may still have events
for the past — its broker connection was lost (the host reconnected after a broker outage),
its last will says offline, or it reconnected with a backlog — holds its table's release point
at its last known time, up to `max_hold_ms`. Found by the soak: balls pocketed during a
broker outage arrived after the table had moved on and never reached the score.

In-process, no broker: the Pipeline driven as the daemon drives it, with realistic arrival
times (host µs): idle ticks every 50 ms while the host is connected, none while it is not,
a `reconnect` input when it gets the broker back, the node's reconnect status (with its
queue), its sync result, its backlog in batches of 32 and then live play 20 ms after it
happens. Every test is well under a second.
"""

import json
from concurrent.futures import Future

from railbird.config import from_dict
from railbird.core.pipeline import Pipeline, shot_json
from railbird.core.records import EventRecord, ShotRecord
from railbird.daemon.offline import assemble, export_inputs
from railbird.daemon.replay import rebuild
from railbird.daemon.worker import Daemon
from rbproto import codec

from . import scripts as S

OFF = 5_000_000_000  # host µs = node µs + OFF (every node synced at the start)
TICK = 50_000
LINK = 20_000  # live event -> host: the node's linger + network


def cfg(nodes, **top):
    d = {
        "venue": S.VENUE,
        "reorder_window_ms": 500,
        "tables": {
            S.TABLE: {"game": "14.1", "players": ["A", "B"], "target": 100, "nodes": list(nodes)}
        },
    }
    d.update(top)
    return from_dict(d)


def ms(x):
    return int(x * 1000)


def status(node, boot, uptime_ms, queue=0, spill=0, reconnects=0):
    msg = {
        "v": 1,
        "node": node,
        "boot": boot,
        "state": "online",
        "uptime_us": ms(uptime_ms),
        "queue": queue,
        "spill": spill,
        "counters": {"reconnects": reconnects},
    }
    return codec.topic(S.VENUE, S.TABLE, "status", node), codec.encode("status", msg)


def will(node, boot):
    msg = {"v": 1, "node": node, "boot": boot, "state": "offline"}
    return codec.topic(S.VENUE, S.TABLE, "status", node), codec.encode("status", msg)


class Run:
    """Inputs in host-time order -> the records, as the daemon would produce them."""

    def __init__(self, config):
        self.pipe = Pipeline(config)
        self.inputs = []  # (host µs, order, kind, data)
        self.records = []
        self.lines = []  # the same inputs as `railbird assemble` lines

    def at(self, host_us, kind, *data):
        self.inputs.append((host_us, len(self.inputs), kind, data))

    def msg(self, host_us, topic_payload):
        self.at(host_us, "mqtt", *topic_payload)

    def live(self, events, node, boot=1):
        """Events sent live: one batch per event, arriving LINK after it."""
        for topic, payload in S.batches(events, node=node, boot=boot, size=1):
            t = json.loads(payload)["events"][-1]["t"]
            self.msg(OFF + t + LINK, (topic, payload))

    def backlog(self, events, node, rx0, boot=1):
        """A stored backlog sent at once from host time rx0 (batches of 32, 2 ms apart)."""
        for i, m in enumerate(S.batches(events, node=node, boot=boot, size=32)):
            self.msg(rx0 + 2000 * i, m)

    def ticks(self, frm, to):
        for t in range(frm, to, TICK):
            self.at(t, "tick")

    def go(self):
        for t, _, kind, data in sorted(self.inputs, key=lambda x: (x[0], x[1])):
            if kind == "mqtt":
                recs = self.pipe.on_message(data[0], data[1], t)[2]
                self.lines.append(
                    json.dumps({"topic": data[0], "payload": json.loads(data[1]), "rx": t})
                )
            elif kind == "tick":
                recs = self.pipe.tick(t)
                if recs:
                    self.lines.append(json.dumps({"tick": t}))
            elif kind == "referee":
                recs = self.pipe.on_referee(S.VENUE, S.TABLE, {"input": data[0]}, "local")[2]
            else:
                recs = self.pipe.on_reconnect(t)
                self.lines.append(json.dumps({"reconnect": t}))
            self.records += recs
        self.flushed = self.pipe.flush()
        self.records += self.flushed
        return self

    def of(self, typ):
        return [r for r in self.records if r.kind == typ]

    @property
    def shots(self):
        return [r.shot for r in self.of("shot")]


def numbered(events_by_node):
    """{node: [events]} -> {node: numbered events} (seq per node, in time order)."""
    return {n: S.number(evs) for n, evs in events_by_node.items()}


# -- one node, broker lost for 20 s in the middle of a shot ------------------------------------
NODE = S.NODE
BROKER_DOWN, BROKER_UP = 2_000, 22_000  # node ms
HOST_BACK, NODE_BACK = 22_400, 37_000  # host reconnects at once, node after backoff


def single_node_outage(max_hold_ms=60_000):
    before = [S.ev(1000, "rail", rail="F", amp=900), S.ev(1500, "drop", pocket="SL", dur=30000)]
    during = [
        S.ev(3000, "drop", pocket="FR", dur=30000),  # same shot: 1.5 s later
        S.ev(3400, "rail", rail="H", amp=500),
        S.ev(10_000, "rail", rail="LF", amp=800),  # next shot
        S.ev(10_500, "drop", pocket="HL", dur=30000),
        S.ev(11_000, "drop", pocket="FL", dur=30000),
        S.ev(11_600, "rail", rail="RH", amp=400),
        S.ev(17_000, "drop", pocket="SR", dur=30000),  # a third, lone pot
        S.ev(17_300, "rail", rail="F", amp=300),
    ]
    after = [S.ev(40_000, "rail", rail="H", amp=700), S.ev(40_400, "drop", pocket="HR", dur=30000)]
    evs = S.number(before + during + after)
    nb, nd = len(before), len(during)
    run = Run(cfg([NODE], max_hold_ms=max_hold_ms))
    run.at(OFF - 1, "referee", {"type": "lag", "winner": 0})
    run.msg(OFF, S.sync_result(OFF, node=NODE, t1=100))
    run.msg(OFF + 200_000, status(NODE, 1, 200))
    run.live(evs[:nb], NODE)
    run.ticks(OFF + 300_000, OFF + ms(BROKER_DOWN))  # host connected
    run.at(OFF + ms(HOST_BACK), "reconnect")
    run.msg(OFF + ms(HOST_BACK) + 5000, status(NODE, 1, 200))  # retained copy re-delivered
    run.ticks(OFF + ms(HOST_BACK) + 100_000, OFF + ms(60_000))
    up = NODE_BACK  # the node is back
    run.msg(OFF + ms(up) + 3000, status(NODE, 1, up, queue=nd, reconnects=1))
    run.msg(OFF + ms(up) + 200_000, S.sync_result(OFF, node=NODE, t1=ms(up) + 150_000, id=2))
    run.backlog(evs[nb : nb + nd], NODE, OFF + ms(up) + 210_000)
    run.live(evs[nb + nd :], NODE)
    return run.go(), evs


def test_single_node_broker_outage_every_pot_reaches_its_shot_and_the_score():
    run, evs = single_node_outage()
    assert not run.of("late") and run.pipe.counters["late"] == 0
    drops = [e for e in evs if e["kind"] == "drop"]
    # every pot in a shot, in order, at its node time
    pots = [(p["pocket"], p["t"] - OFF) for s in run.shots for p in s["pocketed"]]
    assert pots == [(e["pocket"], e["t"]) for e in drops]
    # the shot in play when the broker went down was not closed early: the drop 1.5 s
    # after the first one is in it (not a shot of its own, nor a lip ball)
    assert [len(s["pocketed"]) for s in run.shots] == [2, 2, 1, 1]
    assert not any(w.startswith("lip:") for s in run.shots for w in s["warnings"])
    # every shot went to the rules: one state per shot, each of its pots ruled, in order
    states = [r for r in run.of("state") if r.cause == "shot"]
    assert len(states) == len(run.shots) == 4
    ruled = [
        x["text"].split()[2]
        for r in states
        for x in r.state["rulings"]
        if x["text"].startswith("Ball in ")
    ]
    assert ruled == [e["pocket"] for e in drops]
    assert states[-1].state["scores"]["A"] == 2
    # the hold: taken at the host's reconnect, released by the node's live play
    holds = [(r.node, r.state) for r in run.of("hold")]
    assert holds == [(NODE, "held"), (NODE, "live")]
    assert run.pipe.stats()["held"] == []


def test_without_holds_the_outage_splits_the_shot_as_before():
    """max_hold_ms = 0 is the old behaviour: the daemon's ticks closed the shot in play while
    the node was cut off, and its next pot became a shot of its own."""
    run, _ = single_node_outage(max_hold_ms=0)
    assert [len(s["pocketed"]) for s in run.shots] == [1, 1, 2, 1, 1]
    assert run.shots[1]["start"] - OFF == 3_000_000 and run.shots[1]["rest_before"] == 1_500_000


def test_the_hold_keeps_the_shot_open_while_the_node_is_away():
    run, _ = single_node_outage()
    first = run.shots[0]
    closed_at = next(i for i, r in enumerate(run.records) if isinstance(r, ShotRecord))
    # the first shot is closed only after the node's backlog arrived (it ends with it)
    assert first["end"] - OFF == 3_400_000
    assert any(isinstance(r, EventRecord) and r.event.seq == 2 for r in run.records[:closed_at])


def test_offline_assemble_and_replay_agree():
    run, _ = single_node_outage()
    out = list(assemble(run.lines, cfg([NODE])))
    assert out == [shot_json(s) for s in run.shots]


# -- two nodes, one of them away beyond max_hold -------------------------------------------------
POCKETS, RAILS = "t1-pockets", "t1-rails"


def two_node_outage(rails_back_ms, max_hold_ms=60_000):
    """Both boards lose the broker at 2 s (node time) for 20 s; the pockets board is back at
    37 s, the rails board at `rails_back_ms`. Play goes on all the time: a shot every 8 s."""
    shots = []
    for t0 in range(1000, 120_000, 8000):
        shots += [
            S.ev(t0, "rail", rail="F", amp=900),
            S.ev(t0 + 400, "drop", pocket="SL", dur=30000),
            S.ev(t0 + 900, "rail", rail="H", amp=400),
        ]
    ev = numbered(
        {
            POCKETS: [e for e in shots if e["kind"] == "drop"],
            RAILS: [e for e in shots if e["kind"] == "rail"],
        }
    )
    run = Run(cfg([POCKETS, RAILS], max_hold_ms=max_hold_ms))
    for node in (POCKETS, RAILS):
        run.msg(OFF, S.sync_result(OFF, node=node, t1=100))
        run.msg(OFF + 200_000, status(node, 1, 200))
    run.ticks(OFF + 300_000, OFF + ms(BROKER_DOWN))
    run.at(OFF + ms(HOST_BACK), "reconnect")
    run.ticks(OFF + ms(HOST_BACK) + 100_000, OFF + ms(130_000))
    for node, back in ((POCKETS, NODE_BACK), (RAILS, rails_back_ms)):
        mine = ev[node]
        run.live([e for e in mine if e["t"] < ms(BROKER_DOWN)], node)
        stored = [e for e in mine if ms(BROKER_DOWN) <= e["t"] < ms(back)]
        run.msg(OFF + ms(back) + 3000, status(node, 1, back, queue=len(stored), reconnects=1))
        run.msg(
            OFF + ms(back) + 200_000, S.sync_result(OFF, node=node, t1=ms(back) + 150_000, id=2)
        )
        run.backlog(stored, node, OFF + ms(back) + 210_000)
        run.live([e for e in mine if e["t"] >= ms(back)], node)
    return run.go(), ev


def test_two_nodes_the_later_one_back_within_max_hold_nothing_is_late():
    """The soak's case: the second board reconnects 15 s after the first."""
    run, ev = two_node_outage(rails_back_ms=52_000)
    assert run.pipe.counters["late"] == 0
    n = len(ev[POCKETS]) + len(ev[RAILS])
    assert len(run.of("event")) == n
    assert sum(len(s["pocketed"]) + len(s["rails"]) for s in run.shots) == n
    assert all(len(s["pocketed"]) == 1 and len(s["rails"]) == 2 for s in run.shots)
    assert not any(r.state == "gone" for r in run.of("hold"))


def test_two_nodes_one_away_beyond_max_hold_the_table_moves_on_and_flags_late():
    run, ev = two_node_outage(rails_back_ms=100_000)
    gone = [r for r in run.of("hold") if r.state == "gone"]
    assert [(r.node, r.at - OFF) for r in gone] == [(RAILS, ms(HOST_BACK) + 60_000_000)]
    assert run.pipe.counters["holds_expired"] == 1
    late = run.of("late")
    assert late and all(r.event.node == RAILS for r in late)
    # the late ones are the rails board's backlog from before the table moved on; its live
    # play after its return is in time again, and so is every pocket
    assert max(r.event.t for r in late) - OFF < ms(100_000)
    pockets = [p["t"] - OFF for s in run.shots for p in s["pocketed"]]
    assert pockets == [e["t"] for e in ev[POCKETS]]
    assert any(w.startswith("gone: node t1-rails") for s in run.shots for w in s["warnings"])
    assert any(w.startswith("late:") for s in run.shots for w in s["warnings"])
    after = [s for s in run.shots if s["start"] - OFF > ms(100_000)]
    assert after and all(len(s["rails"]) == 2 for s in after)
    # the shots were not held beyond max_hold: the first ones after the outage closed
    # around HOST_BACK + max_hold, long before the rails board came back
    held_at = {r.node: r.state for r in run.of("hold")}
    assert held_at[RAILS] == "live"


def test_a_drop_sent_after_a_later_rail_hit_in_a_held_backlog_is_not_late():
    """Found by the soak: a board with beams and piezos sends a drop when its beam clears,
    after rail hits stamped up to `dur` later, so its stream is in time order only within
    the window. A batch boundary between them must not make the drop late while the other
    board's events are released up to the held board's newest time."""
    a, b = "t1-a", "t1-b"
    t0 = 5000
    a_evs = S.number(
        [
            S.ev(t0, "rail", rail="F", amp=900),
            S.ev(t0 + 12, "rail", rail="LF", amp=700),
            S.ev(t0 + 40, "rail", rail="H", amp=300),
        ]
    )
    drop = dict(S.ev(t0 - 20, "drop", pocket="SL", dur=36000), seq=len(a_evs))
    b_evs = S.number(
        [S.ev(t0 + 5, "rail", rail="RH", amp=500), S.ev(t0 + 30, "rail", rail="LH", amp=400)]
    )
    run = Run(cfg([a, b]))
    for node in (a, b):
        run.msg(OFF, S.sync_result(OFF, node=node, t1=100))
        run.msg(OFF + 200_000, status(node, 1, 200))
    run.ticks(OFF + 300_000, OFF + ms(2000))
    run.at(OFF + ms(2400), "reconnect")
    run.ticks(OFF + ms(2500), OFF + ms(40_000))
    # b is back first and goes live; a later, its backlog in two batches: the rails, then
    # the drop (stamped 20 ms before them, emitted when its beam cleared)
    run.msg(OFF + ms(15_000), status(b, 1, 15_000, queue=2, reconnects=1))
    run.backlog(b_evs, b, OFF + ms(15_200))
    run.live(S.number([S.ev(16_000, "rail", rail="F", amp=100)], first_seq=2), b)
    run.msg(OFF + ms(20_000), status(a, 1, 20_000, queue=4, reconnects=1))
    ((ta, pa),) = S.batches(a_evs, node=a, size=8)
    ((td, pd),) = S.batches([drop], node=a, size=8)
    run.msg(OFF + ms(20_200), (ta, pa))
    run.msg(OFF + ms(20_202), (td, pd))
    run.live(S.number([S.ev(21_000, "rail", rail="H", amp=100)], first_seq=4), a)
    run.go()
    assert run.pipe.counters["late"] == 0
    assert run.shots[0]["pocketed"][0]["t"] - OFF == ms(t0 - 20)


# -- last will ----------------------------------------------------------------------------------
def test_last_will_holds_the_table_until_the_node_is_back():
    """The rails board drops off (its last will arrives at once: a reset, a dead access point)
    while the host and the pockets board stay connected; it is back 20 s later with its
    backlog. Nothing is late; the shots have their rail contacts."""
    shots = []
    for t0 in range(1000, 60_000, 8000):
        shots += [
            S.ev(t0, "rail", rail="F", amp=900),
            S.ev(t0 + 400, "drop", pocket="SL", dur=30000),
            S.ev(t0 + 900, "rail", rail="H", amp=400),
        ]
    ev = numbered(
        {
            POCKETS: [e for e in shots if e["kind"] == "drop"],
            RAILS: [e for e in shots if e["kind"] == "rail"],
        }
    )
    run = Run(cfg([POCKETS, RAILS]))
    for node in (POCKETS, RAILS):
        run.msg(OFF, S.sync_result(OFF, node=node, t1=100))
        run.msg(OFF + 200_000, status(node, 1, 200))
    run.ticks(OFF + 300_000, OFF + ms(70_000))
    run.live(ev[POCKETS], POCKETS)
    gone_at, back = 9_500, 30_000
    run.live([e for e in ev[RAILS] if e["t"] < ms(gone_at)], RAILS)
    run.msg(OFF + ms(gone_at) + 100_000, will(RAILS, 1))
    stored = [e for e in ev[RAILS] if ms(gone_at) <= e["t"] < ms(back)]
    run.msg(OFF + ms(back) + 3000, status(RAILS, 1, back, queue=len(stored), reconnects=1))
    run.backlog(stored, RAILS, OFF + ms(back) + 210_000)
    run.live([e for e in ev[RAILS] if e["t"] >= ms(back)], RAILS)
    run.go()
    assert run.pipe.counters["late"] == 0
    assert [(r.node, r.state, r.reason) for r in run.of("hold")] == [
        (RAILS, "held", "offline"),
        (RAILS, "live", None),
    ]
    assert all(len(s["pocketed"]) == 1 and len(s["rails"]) == 2 for s in run.shots)
    assert len(run.shots) == len(ev[POCKETS])


def test_a_node_back_with_nothing_buffered_releases_at_once():
    """A quiet node whose reconnect status says queue 0, spill 0 holds nothing back."""
    run = Run(cfg([NODE]))
    evs = S.number(
        [S.ev(1000, "rail", rail="F", amp=900), S.ev(1500, "drop", pocket="SL", dur=30000)]
    )
    run.msg(OFF, S.sync_result(OFF, node=NODE, t1=100))
    run.live(evs, NODE)
    run.ticks(OFF + 300_000, OFF + ms(1800))
    run.at(OFF + ms(1900), "reconnect")
    run.ticks(OFF + ms(2000), OFF + ms(12_000))
    run.msg(OFF + ms(2500), status(NODE, 1, 2490, reconnects=1))
    run.go()
    assert [r.state for r in run.of("hold")] == ["held", "live"]
    assert run.pipe.counters["late"] == 0
    # closed by an idle tick (last activity + quiet + window), not left for the flush
    assert len(run.shots) == 1 and run.shots[0]["end"] - OFF == 1_500_000
    assert not any(isinstance(r, ShotRecord) for r in run.flushed)


# -- the daemon journals the reconnect; a restart rebuilds the same state ---------------------
def test_daemon_journals_reconnects_and_rebuild_is_exact(tmp_path):
    run, _ = single_node_outage()
    c = cfg([NODE])
    d = Daemon(c, journal_path=tmp_path / "j.sqlite", connect=False)
    d._process([("connected", OFF - 1000)])  # the first connect of the process: no hold
    for t, _, kind, data in sorted(run.inputs, key=lambda x: (x[0], x[1])):
        if kind == "mqtt":
            d._process([("mqtt", t, data[0], data[1], 0, 1)])
        elif kind == "tick":
            d.tick(t)
        elif kind == "referee":
            d._process([("local", t, S.VENUE, S.TABLE, {"input": data[0]}, Future())])
        else:
            d._process([("disconnected", t - 1), ("connected", t)])
    j = d.journal
    assert j.count("inputs", "WHERE source = 'reconnect'") == 1
    assert j.count("events", "WHERE late = 1") == 0
    live = j.shots()
    assert [len(s["pocketed"]) for s in live] == [2, 2, 1, 1]
    # a fresh pipeline rebuilt from the journal is in the same state
    p2 = Pipeline(c)
    rebuild(p2, j)
    t1, t2 = d.pipeline.tables[(S.VENUE, S.TABLE)], p2.tables[(S.VENUE, S.TABLE)]
    assert t2.assembler.n == t1.assembler.n and t2.timeline.pending == t1.timeline.pending
    assert {n: (m.known, m.since, m.gone) for n, m in t2.marks.items()} == {
        n: (m.known, m.since, m.gone) for n, m in t1.marks.items()
    }
    assert d.pipeline.stats() == p2.stats()
    # and `replay --export-inputs | assemble` gives the journal's shots
    assert list(assemble(export_inputs(j), c)) == [shot_json(s) for s in live]
    j.close()
