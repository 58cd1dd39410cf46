"""Write the golden corpus, tests/golden/corpus/ (run after an intended change of output).

    PYTHONPATH=host:protocol .venv/bin/python -m tests.golden.make_golden

For every stream built below it writes `<name>.in.jsonl` (the raw inputs: MQTT topics and
payloads as the node or console sent them, with receive times; local referee input; ticks;
host reconnects), `<name>.out.tsv` (what the pipeline gives for each input) and
`<name>.journal.tsv` (the journal a broker-less Daemon writes for them). tests/golden/README.md
says when to run it; tests/golden/test_golden.py replays the files.

The streams are built with the project's helpers where that is easiest (the codec encodes
every node payload, `railbird.sim.physics` times the shots from a seeded RNG,
`railbird.sim.player` plays whole matches with a fixed seed), but only the raw inputs are
kept: the test never calls them, so a change of the simulator does not change the corpus.
Everything here is a function of the code and the fixed seeds; no wall clock.
"""

from __future__ import annotations

import copy
import json
import logging
import random
import sys
import tempfile
from pathlib import Path

from railbird.config import from_dict
from railbird.core.pipeline import Pipeline
from railbird.core.records import StateRecord
from railbird.daemon.ticks import deadline
from railbird.sim import physics
from railbird.sim.player import Player
from rbproto import codec

from . import replay

VENUE = "club"
TOKEN = "582046"
LINK = 20_000  # event emitted -> host receives it (linger + network)
LINGER = 20_000  # a node's batch collects events this long
# a shot closes quiet_ms after its last activity once the release point (at most the
# reorder window behind a tick's time) has passed it: a tick this long after it closes it
WINDOW = 500_000
TICK_AFTER = WINDOW + 1_000


def base_config(tables: dict, **top) -> dict:
    d = {"venue": VENUE, "stats_period_s": 0, "referee_token": TOKEN, "tables": tables}
    d.update(top)
    return d


class Stream:
    """Inputs in host-time order. `at` may be called in any order up to the last `commit`
    (which sorts what is pending and feeds it to a live pipeline, for the sim's players)."""

    def __init__(self, name: str, about: str, config: dict):
        self.name, self.about, self.config = name, about, config
        self.cfg = from_dict(json.loads(json.dumps(config)))
        self.pipe = Pipeline(self.cfg)
        self.done: list = []  # committed inputs
        self.pending: list = []  # (t, n, input)
        self.floor = None  # time of the last committed input
        self.state: dict = {}  # (venue, table) -> last rules state given
        for key, t in self.pipe.tables.items():
            snap = t.game.snapshot()
            if snap:
                self.state[key] = snap["state"]

    def at(self, t: int, inp: dict) -> None:
        if self.floor is not None and t < self.floor:
            raise ValueError(f"{self.name}: input at {t} before the committed {self.floor}")
        self.pending.append((t, len(self.pending), inp))

    def commit(self) -> None:
        for t, _, inp in sorted(self.pending, key=lambda x: (x[0], x[1])):
            self.done.append(inp)
            self.floor = t
            for r in replay.feed(self.pipe, self.cfg, inp)[2]:
                if isinstance(r, StateRecord):
                    self.state[(r.venue, r.table)] = r.state
        self.pending = []

    # inputs of the host itself
    def tick(self, now: int, table: str | None = None) -> None:
        self.at(
            now, {"op": "tick", "now": now, "tables": None if table is None else [[VENUE, table]]}
        )

    def ticks(self, frm: int, to: int, step: int, table: str | None = None) -> None:
        for t in range(frm, to, step):
            self.tick(t, table)

    def reconnect(self, rx: int) -> None:
        self.at(rx, {"op": "reconnect", "rx": rx})

    def raw(self, rx, topic: str, payload: bytes) -> None:
        inp = {"op": "mqtt", "rx": rx, "topic": topic}
        try:
            inp["payload"] = payload.decode("utf-8")
        except UnicodeDecodeError:
            import base64

            inp["payload_b64"] = base64.b64encode(payload).decode("ascii")
        self.at(rx if rx is not None else (self.floor or 0), inp)

    def referee(self, rx: int, table: str, inp: dict, rid: str | None = None, by=None) -> None:
        """Local referee input (the web panel, `daemon.referee_input`)."""
        msg: dict = {"input": inp}
        if rid is not None:
            msg["id"] = rid
        if by is not None:
            msg["by"] = by
        self.at(rx, {"op": "referee", "rx": rx, "venue": VENUE, "table": table, "msg": msg})

    def referee_mqtt(self, rx: int, table: str, inp: dict, rid=None, token=TOKEN, by=None):
        msg: dict = {"v": 1, "input": inp}
        if rid is not None:
            msg["id"] = rid
        if by is not None:
            msg["by"] = by
        if token is not None:
            msg["token"] = token
        self.raw(rx, codec.topic(VENUE, table, "referee"), json.dumps(msg).encode())

    def write(self) -> dict:
        self.commit()
        self.done.append({"op": "flush"})
        header = {"stream": self.name, "about": self.about, "config": self.config}
        body = [json.dumps(header, sort_keys=True)] + [
            json.dumps(i, sort_keys=True) for i in self.done
        ]
        replay.CORPUS.mkdir(exist_ok=True)
        (replay.CORPUS / f"{self.name}.in.jsonl").write_text(
            "\n".join(body) + "\n", encoding="utf-8"
        )
        # the expected output: what the code gives now (read back as the test reads it)
        header, inputs = replay.read_stream(self.name)
        out = replay.pipeline_lines(header, inputs)
        (replay.CORPUS / f"{self.name}.out.tsv").write_text("\n".join(out) + "\n", encoding="utf-8")
        with tempfile.TemporaryDirectory() as tmp:
            jl = replay.daemon_journal(header, inputs, str(Path(tmp) / "journal.sqlite"))
        (replay.CORPUS / f"{self.name}.journal.tsv").write_text(
            "\n".join(jl) + "\n", encoding="utf-8"
        )
        return {"inputs": len(inputs), "lines": len(out), "journal_rows": len(jl)}


class Node:
    """One sensor node: node time = host time - offset (+ drift), its seqs, its messages."""

    def __init__(
        self, s: Stream, table: str, name: str, offset: int, boot: int = 1, wm=True, ppm=0
    ):
        self.s, self.table, self.name, self.offset, self.boot = s, table, name, offset, boot
        self.wm, self.ppm = wm, ppm
        self.seq = 0
        self.sync_id = 0

    def host(self, t_node: int) -> int:
        return t_node + self.offset + t_node * self.ppm // 1_000_000

    def node(self, t_host: int) -> int:
        return (t_host - self.offset) * 1_000_000 // (1_000_000 + self.ppm)

    def topic(self, kind: str) -> str:
        return codec.topic(VENUE, self.table, kind, self.name)

    def send(self, kind: str, msg: dict, rx: int) -> None:
        self.s.raw(rx, self.topic(kind), codec.encode(kind, msg))

    def sync(self, host_t: int, delay: int = 400) -> None:
        """A time-sync exchange started at host time host_t, with round trip `delay`."""
        self.sync_id += 1
        t1 = self.node(host_t)
        t2 = host_t + delay // 2
        t3 = t2 + 10
        t4 = self.node(t3 + delay // 2)
        msg = {
            "v": 1,
            "node": self.name,
            "boot": self.boot,
            "id": self.sync_id,
            "t1": t1,
            "t2": t2,
            "t3": t3,
            "t4": t4,
        }
        self.send("sync_result", msg, t3 + delay // 2 + LINK)

    def birth(self, host_t: int, caps=("pcnt", "cue", "wm")) -> None:
        msg = {
            "v": 1,
            "node": self.name,
            "boot": self.boot,
            "fw": "0.1.0+g1a2b3c",
            "reset": "power",
            "config_hash": "0badf00d",
            "pinmap": "devkit-v1",
            "caps": list(caps),
        }
        self.send("birth", msg, host_t)

    def status(self, host_t: int, queue=0, spill=0, reconnects=0, uptime=None) -> None:
        msg = {
            "v": 1,
            "node": self.name,
            "boot": self.boot,
            "state": "online",
            "uptime_us": self.node(host_t - LINK) if uptime is None else uptime,
            "heap_free": 81234,
            "rssi": -61,
            "queue": queue,
            "spill": spill,
            "counters": {"reconnects": reconnects},
        }
        self.send("status", msg, host_t)

    def will(self, host_t: int) -> None:
        self.send(
            "status", {"v": 1, "node": self.name, "boot": self.boot, "state": "offline"}, host_t
        )

    def number(self, events: list) -> list:
        """Events (node time `t`) -> numbered in emission order (a drop is emitted when its
        beam clears), each with its emission time `_e`."""
        out = []
        for e in sorted(
            events, key=lambda e: (e["t"] + (e.get("dur") or 0) * (e["kind"] == "drop"), e["t"])
        ):
            e = dict(e, seq=self.seq)
            e["_e"] = e["t"] + (e.get("dur") or 0) * (e["kind"] == "drop")
            self.seq += 1
            out.append(e)
        return out

    def batch(self, numbered: list, rx: int, wm=None) -> None:
        evs = [{k: v for k, v in e.items() if not k.startswith("_")} for e in numbered]
        msg = {"v": 1, "node": self.name, "boot": self.boot, "events": evs}
        if self.wm and wm is not None:
            msg["wm"] = wm
        self.send("events", msg, rx)

    def play(self, events: list, link: int = LINK) -> int:
        """Events sent live: batched by the linger, each batch `link` after it is sent,
        with the node's watermark (all events before it have been sent). -> the host time
        of the last arrival."""
        numbered = self.number(events)
        last = 0
        i = 0
        while i < len(numbered):
            first = numbered[i]["_e"]
            j = i
            while j < len(numbered) and numbered[j]["_e"] <= first + LINGER:
                j += 1
            sent_at = numbered[j - 1]["_e"]
            later = [e["t"] for e in numbered[j:] if e["t"] < sent_at]
            wm = min([sent_at, *later])
            rx = self.host(sent_at) + link
            self.batch(numbered[i:j], rx, wm)
            last = max(last, rx)
            i = j
        return last

    def backlog(self, events: list, rx0: int, size: int = 32, gap: int = 2_000) -> int:
        """Stored events sent at once from host time rx0 (batches of `size`)."""
        numbered = self.number(events)
        rx = rx0
        for k in range(0, len(numbered), size):
            part = numbered[k : k + size]
            self.batch(part, rx, part[-1]["_e"] + 1 if k + size >= len(numbered) else part[-1]["t"])
            rx += gap
        return rx


def shot_events(plan: physics.ShotPlan, rng: random.Random, t0: int, strike: bool = False) -> list:
    """A shot plan's sensor events from the simulator's physics, node time from t0 (the
    strike)."""
    out = []
    if strike:
        out.append({"t": t0, "kind": "strike", "amp": rng.randint(600, 3000)})
    for e in physics.edges(plan, rng):
        t = t0 + e.t_us
        if e.kind == "rail":
            out.append({"t": t, "kind": "rail", "rail": e.where, "amp": e.value})
        elif e.kind == "drop":
            out.append({"t": t, "kind": "drop", "pocket": e.where, "dur": e.value})
        else:
            out.append({"t": t, "kind": "cue"})
    return out


def split(events: list, kinds: tuple) -> tuple[list, list]:
    return [e for e in events if e["kind"] in kinds], [e for e in events if e["kind"] not in kinds]


SIM_CUE = dict(physics.SIM_CUE_RETURN_MS)
SHOTS = {"quiet_ms": 1500, "lip_rest_ms": 1500, "strike_quiet_ms": 3000, "strike_gap_ms": 1200}


# -- streams ---------------------------------------------------------------------------------
def one_node(wm: bool) -> Stream:
    name = "one_node" if wm else "one_node_nowm"
    s = Stream(
        name,
        "one node on a 9-ball table: birth, status, sync, scripted shots (break, pots, miss,"
        " scratch with cue pairing) sent live "
        + ("with the node's watermark" if wm else "by old firmware without `wm` (reorder window)")
        + ", ticks",
        base_config(
            {
                "t1": {
                    "game": "9-ball",
                    "players": ["Ann", "Bob"],
                    "race_to": 3,
                    "nodes": ["t1-node"],
                    "cue_return_ms": SIM_CUE,
                }
            },
            shots=SHOTS,
        ),
    )
    rng = random.Random(11)
    n = Node(s, "t1", "t1-node", offset=7_000_000_000, wm=wm)
    host = 7_100_000_000
    n.birth(host, caps=("pcnt", "cue", "wm") if wm else ("pcnt", "cue"))
    n.status(host + 5_000)
    n.sync(host + 10_000)
    n.sync(host + 1_010_000, delay=900)
    s.referee(host + 2_000_000, "t1", {"type": "lag", "winner": "Ann", "breaker": "Ann"})
    plans = [
        physics.ShotPlan("break", [(3, "FR"), (5, "SL")], None, 6, 1.0),
        physics.ShotPlan("pot", [(1, "HL")], None, 2, 0.6),
        physics.ShotPlan("miss", [], None, 2, 0.5),
        physics.ShotPlan("pot", [(1, "SR")], "FL", 1, 0.7),
        physics.ShotPlan("safety", [], None, 1, 0.2),
        physics.ShotPlan("pot", [(2, "FR"), (4, "FR")], None, 3, 0.8),
    ]
    t = host + 3_000_000
    for i, plan in enumerate(plans):
        evs = shot_events(plan, rng, n.node(t))
        last = n.play(evs)
        end = n.host(max(e["t"] for e in evs))
        s.tick(end + 600_000, "t1")  # mid-quiet: nothing to close yet
        close = end + 1_500_000 + TICK_AFTER
        s.tick(max(close, last + 1), "t1" if i % 2 else None)
        if i == 2:
            n.status(close + 100_000)
            n.sync(close + 200_000)
        t = close + 2_000_000
    return s


def multi_node() -> Stream:
    s = Stream(
        "multi_node",
        "two boards on one 10-ball table (pockets: drops and cue; rails: rail hits) with other"
        " clock offsets, one 150 ppm fast, synced late, arrivals interleaved across nodes and"
        " out of order; a second table in the venue with its own node; ticks of one table"
        " and of all",
        base_config(
            {
                "t1": {
                    "game": "10-ball",
                    "players": ["Ann", "Bob"],
                    "race_to": 2,
                    "nodes": ["t1-pockets", "t1-rails"],
                    "cue_return_ms": SIM_CUE,
                },
                "t2": {"game": "14.1", "players": ["Cy", "Di"], "target": 5, "nodes": ["t2-node"]},
            },
            shots=SHOTS,
        ),
    )
    rng = random.Random(22)
    p = Node(s, "t1", "t1-pockets", offset=3_000_000_000)
    r = Node(s, "t1", "t1-rails", offset=4_500_000_123, ppm=150)
    q = Node(s, "t2", "t2-node", offset=4_000_000_000, wm=False)
    host = 5_000_000_000
    for k, node in enumerate((p, r, q)):
        node.birth(host + k * 1000)
    p.sync(host + 10_000)
    q.sync(host + 20_000)
    s.referee(host + 1_000_000, "t1", {"type": "lag", "winner": "Bob", "breaker": "Bob"})
    s.referee(host + 1_100_000, "t2", {"type": "lag", "winner": "Cy", "breaker": "Di"})
    plans = [
        physics.ShotPlan("break", [(2, "FL")], None, 6, 1.0),
        physics.ShotPlan("pot", [(1, "SL")], None, 2, 0.6),
        physics.ShotPlan("pot", [(3, "HR"), (4, "FR")], None, 2, 0.7),
        physics.ShotPlan("miss", [], "SR", 2, 0.5),
        physics.ShotPlan("pot", [(5, "HL")], None, 3, 0.5),
    ]
    t = host + 2_000_000
    for i, plan in enumerate(plans):
        evs = shot_events(plan, rng, 0)
        pockets, rails = split(evs, ("drop", "cue"))
        if i == 1:
            r.sync(t - 500_000)  # the rails board syncs only now: unsynced until here
        if i == 3:
            r.sync(t - 400_000, delay=2_500)
            p.sync(t - 300_000)
        last = p.play([dict(e, t=p.node(t) + e["t"]) for e in pockets])
        # the rails board's link is slower on some shots: its batches overtake nothing,
        # the pockets' ones arrive first
        last = max(
            last,
            r.play(
                [dict(e, t=r.node(t) + e["t"]) for e in rails],
                link=LINK + (90_000 if i % 2 else 5_000),
            ),
        )
        # the other table plays at the same time
        qe = shot_events(
            physics.ShotPlan("pot", [(i + 1, "FR")], None, 1, 0.5), rng, q.node(t + 300_000)
        )
        last = max(last, q.play(qe))
        end = max(last, t + 4_500_000)
        s.tick(end - 1_000_000, "t1")
        s.tick(end - 1_000_000, "t2")
        s.tick(end + 1_500_000 + TICK_AFTER)  # every table
        t = end + 3_000_000
    r.status(t)
    p.status(t + 1000)
    return s


def strikes() -> Stream:
    s = Stream(
        "strikes",
        "a node with a strike sensor on a 9-ball table: shots opened by the strike, clicks,"
        " a strike alone (soft safety), the next stroke's strike closing the shot in play,"
        " strike_quiet_ms closing a shot",
        base_config(
            {
                "t1": {
                    "game": "9-ball",
                    "players": ["Ann", "Bob"],
                    "race_to": 3,
                    "nodes": ["t1-node"],
                    "cue_return_ms": SIM_CUE,
                }
            },
            shots=SHOTS,
        ),
    )
    rng = random.Random(33)
    n = Node(s, "t1", "t1-node", offset=2_000_000_000)
    host = 2_500_000_000
    n.birth(host, caps=("pcnt", "cue", "wm", "strike"))
    n.sync(host + 10_000)
    s.referee(host + 500_000, "t1", {"type": "lag", "winner": "Bob", "breaker": "Bob"})
    t = host + 1_000_000
    plans = [
        physics.ShotPlan("break", [(4, "FR")], None, 6, 1.0),
        physics.ShotPlan("pot", [(1, "HL")], None, 2, 0.6),
        physics.ShotPlan("miss", [], None, 1, 0.4),
    ]
    for i, plan in enumerate(plans):
        evs = shot_events(plan, rng, n.node(t), strike=True)
        evs.append({"t": n.node(t) + 180_000, "kind": "strike", "amp": 300})  # ball-on-ball click
        last = n.play(evs)
        end = n.host(max(e["t"] for e in evs))
        s.tick(end + 1_600_000, "t1")  # past quiet_ms, not strike_quiet_ms: still open
        if i == 1:
            t = end + 1_300_000  # the next stroke comes after strike_gap: closes at once
        else:
            s.tick(max(end + 3_000_000 + TICK_AFTER, last + 1), "t1")
            t = end + 4_000_000
    # a soft safety: the strike alone, nothing else sensed
    last = n.play([{"t": n.node(t), "kind": "strike", "amp": 450}])
    s.tick(t + 1_000_000, "t1")
    s.tick(t + 3_000_000 + TICK_AFTER, "t1")
    t += 4_000_000
    # a strike with no amplitude, then the next strike long after
    n.play(
        [
            {"t": n.node(t), "kind": "strike"},
            {"t": n.node(t) + 600_000, "kind": "rail", "rail": "F", "amp": 700},
        ]
    )
    t += 2_000_000
    evs = shot_events(
        physics.ShotPlan("pot", [(1, "FL")], None, 2, 0.5), rng, n.node(t), strike=True
    )
    last = n.play(evs)
    s.tick(last + 3_000_000 + TICK_AFTER, "t1")
    return s


def holds() -> Stream:
    s = Stream(
        "holds",
        "per-node watermarks on a two-board 14.1 table (max_hold_ms 3000): a last will holds"
        " the table, the node's reconnect status with a backlog, its backlog in batches, a"
        " status with nothing buffered ends the hold; a host reconnect holds every node; a"
        " hold that expires (gone), the gone node's older events late, its return",
        base_config(
            {
                "t1": {
                    "game": "14.1",
                    "players": ["Ann", "Bob"],
                    "target": 10,
                    "nodes": ["t1-pockets", "t1-rails"],
                    "cue_return_ms": SIM_CUE,
                }
            },
            shots=SHOTS,
            max_hold_ms=3000,
        ),
    )
    rng = random.Random(44)
    p = Node(s, "t1", "t1-pockets", offset=1_000_000_000)
    r = Node(s, "t1", "t1-rails", offset=1_200_000_000)
    host = 1_300_000_000
    p.birth(host)
    r.birth(host + 1000)
    p.status(host + 2000)
    r.status(host + 3000)
    p.sync(host + 10_000)
    r.sync(host + 20_000)
    s.referee(host + 100_000, "t1", {"type": "lag", "winner": "Ann", "breaker": "Bob"})
    t = host + 1_000_000

    def shot(t, plan, pockets_backlog_at=None, rails_link=LINK):
        evs = shot_events(plan, rng, 0)
        pk, rl = split(evs, ("drop", "cue"))
        pk = [dict(e, t=p.node(t) + e["t"]) for e in pk]
        rl = [dict(e, t=r.node(t) + e["t"]) for e in rl]
        last = r.play(rl, link=rails_link)
        if pockets_backlog_at is None:
            last = max(last, p.play(pk))
        else:
            last = max(last, p.backlog(pk, pockets_backlog_at, size=2))
        return max(last, t + max(e["t"] - p.node(t) for e in pk) if pk else last)

    # 1. the pockets board's last will mid-shot; it comes back with a backlog
    # a safety called on the break: refused (the state stays)
    s.referee(t - 50_000, "t1", {"type": "call", "safety": True})
    p.will(t + 300_000)
    end = shot(
        t, physics.ShotPlan("safe_break", [], None, 1, 0.4), pockets_backlog_at=t + 2_400_000
    )
    p.status(t + 2_300_000, queue=3, reconnects=1)
    s.ticks(t + 500_000, t + 2_300_000, 400_000, "t1")  # held: nothing closes
    p.status(end + 200_000, queue=0, reconnects=1)
    s.tick(end + 2_500_000, "t1")
    t = end + 3_000_000
    # 2. the host reconnects: both boards hold until each shows it is caught up
    s.reconnect(t)
    end = shot(t + 200_000, physics.ShotPlan("pot", [(3, "SL")], None, 2, 0.6))
    s.tick(end + 2_100_000, "t1")
    r.status(end + 2_200_000, reconnects=1)
    p.status(end + 2_300_000, reconnects=2)
    s.tick(end + 2_500_000, "t1")
    t = end + 3_000_000
    # 3. the rails board's will; it stays away while the pockets board plays on: the hold
    # expires after 3 s (gone), the shot closes, and the rails board's hits of that shot
    # arrive after it: late
    r.will(t)
    evs = shot_events(physics.ShotPlan("pot", [(5, "FR")], None, 2, 0.6), rng, 0)
    pk, rl = split(evs, ("drop", "cue"))
    last = p.play([dict(e, t=p.node(t + 100_000) + e["t"]) for e in pk])
    end = max(last, t + 100_000 + max(e["t"] for e in evs))
    s.ticks(t + 500_000, end + 3_000_000, 500_000, "t1")
    s.tick(end + 3_100_000, "t1")
    early = {"t": r.node(t + 150_000), "kind": "rail", "rail": "LH", "amp": 900}  # before the drop
    r.backlog([early] + [dict(e, t=r.node(t + 100_000) + e["t"]) for e in rl], end + 3_200_000)
    r.status(end + 3_300_000, queue=0, reconnects=1, uptime=r.node(end + 3_280_000))
    s.tick(end + 3_400_000, "t1")
    end += 1_000_000
    t = end + 3_000_000
    end = shot(t, physics.ShotPlan("pot", [(7, "HL")], None, 1, 0.6))
    s.tick(end + 2_100_000, "t1")
    # 4. a reconnect status with a backlog from a new boot of the rails board
    r.boot, r.seq, r.offset = 2, 0, end + 2_000_000  # its clock restarts at 0
    r.birth(end + 2_200_000)
    r.sync(end + 2_250_000)
    r.status(end + 2_300_000, queue=5, spill=2)
    t = end + 2_400_000
    end = shot(t, physics.ShotPlan("miss", [], None, 2, 0.5), rails_link=300_000)
    r.status(end + 400_000, queue=0)
    s.tick(end + 2_100_000, "t1")
    return s


def late_dup_conflict() -> Stream:
    s = Stream(
        "late_dup_conflict",
        "duplicates (a batch re-sent whole and overlapping), late events (a board without `wm`"
        " behind the window), a reused seq with other content (conflict), a stamp far ahead"
        " of its arrival (quarantined), an unsynced boot's suspect stamp, an unknown event"
        " kind, jam and lost events, reboots past BOOTS_KEPT",
        base_config(
            {
                "t1": {
                    "game": "10-ball",
                    "players": ["Ann", "Bob"],
                    "race_to": 2,
                    "nodes": ["t1-pockets", "t1-rails"],
                    "cue_return_ms": SIM_CUE,
                }
            },
            shots=SHOTS,
            reorder_window_ms=300,
        ),
    )
    rng = random.Random(55)
    p = Node(s, "t1", "t1-pockets", offset=6_000_000_000)
    r = Node(s, "t1", "t1-rails", offset=6_100_000_000, wm=False)
    host = 6_200_000_000
    p.sync(host)
    r.sync(host + 1000)
    s.referee(host + 100_000, "t1", {"type": "lag", "winner": "Ann", "breaker": "Ann"})
    t = host + 500_000
    evs = shot_events(physics.ShotPlan("break", [(2, "SL")], None, 6, 1.0), rng, 0)
    pk, rl = split(evs, ("drop", "cue"))
    p.play([dict(e, t=p.node(t) + e["t"]) for e in pk])
    rl = r.number([dict(e, t=r.node(t) + e["t"]) for e in rl])
    half = len(rl) // 2
    r.batch(rl[:half], r.host(rl[half - 1]["_e"]) + LINK)
    r.batch(rl[:half], r.host(rl[half - 1]["_e"]) + LINK + 5_000)  # re-sent whole
    r.batch(rl[half - 2 :], r.host(rl[-1]["_e"]) + LINK)  # overlapping re-send
    # a rail hit delivered 1.5 s after it happened (the window is 300 ms): late
    lt = {"t": r.node(t) + 700_000, "kind": "rail", "rail": "LH", "amp": 555}
    r.batch(r.number([lt]), r.host(lt["t"]) + 1_500_000)
    # a reused seq with other content
    r.batch([dict(rl[0], amp=rl[0]["amp"] + 1)], r.host(rl[-1]["_e"]) + 40_000)
    # jam and lost, a kind this host does not know, and a stamp 30 s ahead of arrival
    at = t + 3_600_000
    p.batch(
        p.number([{"t": p.node(at), "kind": "jam", "pocket": "FR", "dur": 2_000_000}]),
        at + 2_100_000,
    )
    p.batch(
        p.number([{"t": p.node(at) + 10_000, "kind": "lost", "pocket": "SL", "n": 2}]),
        at + 2_120_000,
    )
    raw = {
        "v": 1,
        "node": r.name,
        "boot": r.boot,
        "events": [
            {"seq": r.seq, "t": r.node(at), "kind": "laser", "x": 1},
            {"seq": r.seq + 1, "t": r.node(at) + 1000, "kind": "rail", "rail": "H", "amp": 400},
        ],
    }
    r.seq += 2
    s.raw(at + 2_200_000, r.topic("events"), json.dumps(raw).encode())
    p.batch(
        p.number([{"t": p.node(at) + 30_000_000, "kind": "rail", "rail": "F", "amp": 800}]),
        at + 2_300_000,
    )
    p.batch(
        p.number([{"t": p.node(at) + 60_000, "kind": "rail", "rail": "F", "amp": 810}]),
        at + 2_400_000,
    )
    s.tick(at + 4_500_000, "t1")
    t = at + 5_000_000
    # reboots: boots 2..6 of the rails board, unsynced (times from arrival), one with a
    # stamp 5 s ahead of the others (a suspect), then a re-send of boot 1 (forgotten)
    for b in range(2, 7):
        r.boot, r.seq = b, 0
        r.offset = t - 1_000_000
        evs = [
            {"t": r.node(t) + k * 200_000, "kind": "rail", "rail": "RF", "amp": 500 + b}
            for k in range(2)
        ]
        if b == 4:
            evs.append({"t": r.node(t) + 5_400_000, "kind": "rail", "rail": "RH", "amp": 777})
        r.batch(r.number(evs), t + 420_000)
        s.tick(t + 2_500_000, "t1")
        t += 3_000_000
    r.boot = 1
    r.batch(rl[:2], t)
    s.tick(t + 2_000_000, "t1")
    return s


def rejects() -> Stream:
    s = Stream(
        "rejects",
        "malformed and refused input between good input: bad JSON, bytes not UTF-8, bad"
        " topics, another major version, unknown venue/table/node, a node on another table,"
        " missing fields, bad types and values, too large, impossible sync, referee input"
        " without or with a wrong token or a forged verdict, a referee input that is not an"
        " object, a kind that is no host input",
        base_config(
            {
                "t1": {
                    "game": "10-ball",
                    "players": ["Ann", "Bob"],
                    "race_to": 2,
                    "nodes": ["t1-node"],
                },
                "t2": {"game": "14.1", "players": ["Cy", "Di"], "target": 5, "nodes": ["t2-node"]},
            },
            shots=SHOTS,
        ),
    )
    n = Node(s, "t1", "t1-node", offset=1_000_000_000)
    host = 1_500_000_000
    n.sync(host)
    ev = {
        "v": 1,
        "node": "t1-node",
        "boot": 1,
        "events": [
            {"seq": 0, "t": n.node(host + 100_000), "kind": "rail", "rail": "F", "amp": 900}
        ],
    }
    good = json.dumps(ev).encode()
    top = n.topic("events")
    rx = host + 200_000
    bad = [
        (top, b"{"),
        (top, b"\xff\xfe\x00junk"),
        (top, b"[1,2]"),
        (top, json.dumps({**ev, "v": 2}).encode()),
        (top, json.dumps({k: v for k, v in ev.items() if k != "boot"}).encode()),
        (top, json.dumps({**ev, "boot": "one"}).encode()),
        (
            top,
            json.dumps(
                {**ev, "events": [{"seq": 0, "t": 5, "kind": "drop", "pocket": "XX"}]}
            ).encode(),
        ),
        (
            top,
            json.dumps(
                {**ev, "events": [{"seq": 0, "t": 5.5, "kind": "rail", "rail": "F", "amp": 1}]}
            ).encode(),
        ),
        (top, json.dumps({**ev, "pad": "x" * 17000}).encode()),
        ("railbird/v2/club/t1/node/t1-node/events", good),
        ("railbird/v1/club/t1/node/t1-node/bogus", good),
        ("railbird/v1/club/t1", good),
        ("nonsense", good),
        ("railbird/v1/elsewhere/t1/node/t1-node/events", good),
        ("railbird/v1/club/t9/node/t1-node/events", good),
        (
            "railbird/v1/club/t1/node/stranger/events",
            json.dumps({**ev, "node": "stranger"}).encode(),
        ),
        ("railbird/v1/club/t2/node/t1-node/events", good),
        (top, json.dumps({**ev, "node": "t2-node"}).encode()),
        (
            n.topic("sync_result"),
            json.dumps(
                {
                    "v": 1,
                    "node": "t1-node",
                    "boot": 1,
                    "id": 9,
                    "t1": 100,
                    "t2": 5000,
                    "t3": 4000,
                    "t4": 200,
                }
            ).encode(),
        ),
        (
            n.topic("sync_result"),
            json.dumps(
                {
                    "v": 1,
                    "node": "t1-node",
                    "boot": 1,
                    "id": 9,
                    "t1": 500,
                    "t2": 5000,
                    "t3": 5010,
                    "t4": 200,
                }
            ).encode(),
        ),
        (codec.topic(VENUE, "t1", "state"), json.dumps({"v": 1}).encode()),
    ]
    for k, (topic, payload) in enumerate(bad):
        s.raw(rx + k * 1000, topic, payload)
        if k == 3:
            s.raw(rx + k * 1000 + 500, top, good)  # the good message among them
    s.raw(rx + 100_000, top, good)  # a duplicate of it
    s.raw(
        None,
        top,
        json.dumps(
            {
                **ev,
                "events": [
                    {"seq": 1, "t": n.node(host + 150_000), "kind": "rail", "rail": "H", "amp": 500}
                ],
            }
        ).encode(),
    )
    rx += 200_000
    s.referee_mqtt(
        rx, "t1", {"type": "lag", "winner": "Ann", "breaker": "Ann"}, rid="m1", token=None
    )
    s.referee_mqtt(
        rx + 1000,
        "t1",
        {"type": "lag", "winner": "Ann", "breaker": "Ann"},
        rid="m2",
        token="000000",
    )
    forged = {"v": 1, "input": {"type": "lag", "winner": "Ann", "breaker": "Ann"}, "token_ok": True}
    s.raw(rx + 2000, codec.topic(VENUE, "t1", "referee"), json.dumps(forged).encode())
    s.raw(
        rx + 3000,
        codec.topic(VENUE, "t1", "referee"),
        json.dumps({"v": 1, "input": "lag", "token": TOKEN}).encode(),
    )
    s.raw(
        rx + 4000,
        codec.topic(VENUE, "t1", "referee"),
        b'{"v":1,"input":{"type":"lag"},"token":"' + TOKEN.encode() + b'"',
    )
    s.referee_mqtt(
        rx + 5000,
        "t1",
        {"type": "lag", "winner": "Ann", "breaker": "Ann"},
        rid="m3",
        by="console-1",
    )
    s.referee_mqtt(
        rx + 6000,
        "t1",
        {"type": "lag", "winner": "Ann", "breaker": "Ann"},
        rid="m3",
        by="console-1",
    )
    s.referee_mqtt(rx + 7000, "t9", {"type": "undo"}, rid="m4")
    s.at(
        rx + 8000,
        {"op": "referee", "rx": rx + 8000, "venue": VENUE, "table": "t1", "msg": {"input": "undo"}},
    )
    s.at(
        rx + 9000,
        {
            "op": "referee",
            "rx": rx + 9000,
            "venue": VENUE,
            "table": "t1",
            "msg": {"input": {"type": "bogus"}},
        },
    )
    s.at(
        rx + 10000,
        {
            "op": "referee",
            "rx": rx + 10000,
            "venue": VENUE,
            "table": "t7",
            "msg": {"input": {"type": "undo"}},
        },
    )
    s.referee(rx + 11000, "t1", {"type": "call", "ball": 99, "pocket": "SL"})
    s.tick(rx + 3_000_000, "t1")
    return s


# -- whole matches played by the simulator's player ------------------------------------------
def accepts(s: Stream, table: str, inp: dict) -> bool:
    """Would the table's game take this referee input now (on a copy of it)?"""
    game = copy.deepcopy(s.pipe.tables[(VENUE, table)].game)
    return game.feed(inp)[0]


def sim_match(
    name: str, about: str, match: dict, seed: int, turns: int, epilogue=None, strike=False
) -> Stream:
    table = "t1"
    game_cfg = {k: v for k, v in match.items() if k != "type"}
    s = Stream(
        name,
        about,
        base_config(
            {table: {**game_cfg, "nodes": ["t1-node"], "cue_return_ms": SIM_CUE}}, shots=SHOTS
        ),
    )
    rng = random.Random(seed * 7919 + 17)
    player = Player(match, seed=seed)
    n = Node(s, table, "t1-node", offset=4_000_000_000)
    t = 4_100_000_000
    n.birth(t)
    n.sync(t + 10_000)
    t += 500_000
    rid = refused = 0
    for k in range(turns):
        s.commit()
        st = s.state.get((VENUE, table)) or {}
        turn = player.next_turn(st)
        t += int(turn.think_s * 1_000_000)
        for inp in turn.inputs:
            refused += not accepts(s, table, inp)
            if not accepts(s, table, inp) and refused % 5:
                continue  # as the simulator's runner: not sent (every fifth is, refused)
            rid += 1
            if rid % 3 == 0:
                s.referee_mqtt(t, table, inp, rid=f"r{rid}", by="console-1")
            else:
                s.referee(t, table, inp, rid=f"r{rid}", by="panel")
            t += 50_000
        if turn.plan is None:
            continue
        evs = shot_events(turn.plan, rng, n.node(t), strike=strike)
        last = n.play(evs)
        end = n.host(max(e["t"] for e in evs))
        facts = physics.referee_facts(turn.plan)
        if facts:
            # keyed in while the shot is in play: held for it
            s.referee(end + 200_000, table, {"type": "confirm", **facts}, rid=f"f{k}", by="panel")
        # ticked as the daemon ticks it: at each deadline (railbird.daemon.ticks) until the
        # shot is closed and ruled
        s.commit()
        t = max(s.floor, last)
        for _ in range(40):
            due = deadline(s.pipe, (VENUE, table), t)
            if due is None:
                break
            t = max(due, t + 1)
            s.tick(t, table)
            s.commit()
            if not s.pipe.tables[(VENUE, table)].shot_in_play():
                break
        if k % 7 == 3:
            n.status(t + 10_000)
            n.sync(t + 20_000)
        t += 100_000
    s.commit()
    if epilogue is not None:
        epilogue(s, table, t + 1_000_000)
    return s


def corrections(s: Stream, table: str, t: int) -> None:
    """After play: corrections at rest, undo, a declared foul, concede, a new match, abandon
    and its undo, a duplicate id, options the state does not offer (refused)."""
    step = 500_000
    seq = [
        {"type": "confirm", "fouls": ["6.3"]},
        {"type": "undo"},
        {"type": "confirm", "first_contact": 9, "rail_after_contact": False},
        {"type": "undo"},
        {"type": "undo"},
        {"type": "option", "choice": "pass"},
        {"type": "concede", "player": "Bob"},
        {"type": "undo"},
        {"type": "match"},
        {"type": "concede", "player": "Ann"},
        {"type": "match", "players": ["Eve", "Fay"]},
        {"type": "abandon"},
        {"type": "undo"},
        {"type": "lag", "winner": "Eve", "breaker": "Fay"},
    ]
    for i, inp in enumerate(seq):
        s.referee(t, table, inp, rid=f"c{i}", by="panel")
        t += step
    s.referee(t, table, {"type": "undo"}, rid="c0", by="panel")  # a re-sent id: duplicate
    s.referee_mqtt(t + step, table, {"type": "undo"}, rid="c1")  # ids are per table, any source


def corrections_141(s: Stream, table: str, t: int) -> None:
    step = 500_000
    seq = [
        {"type": "confirm", "fouls": ["4.13"]},
        {"type": "undo"},
        {"type": "rerack"},
        {"type": "call", "ball": 3, "pocket": "FR"},
        {"type": "confirm", "pocketed": [{"ball": 3, "pocket": "FR"}]},
        {"type": "undo"},
        {"type": "stalemate"},
        {"type": "undo"},
        {"type": "concede", "player": "Cy"},
        {"type": "undo"},
        {"type": "abandon"},
        {"type": "match", "target": 20},
    ]
    for i, inp in enumerate(seq):
        s.referee(t, table, inp, rid=f"c{i}", by="panel")
        t += step


def build() -> list:
    return [
        one_node(True),
        one_node(False),
        multi_node(),
        strikes(),
        holds(),
        late_dup_conflict(),
        rejects(),
        sim_match(
            "referee_10ball",
            "a 10-ball match played by the simulator's player (seed 3): lag, breaks, calls,"
            " push-outs and options, shot facts keyed in while the shot is in play, MQTT and"
            " local referee input; then corrections at rest, undo, a declared foul, concede,"
            " new matches, abandon and its undo, a duplicate id",
            {"type": "match", "game": "10-ball", "players": ["Ann", "Bob"], "race_to": 2},
            seed=3,
            turns=30,
            epilogue=corrections,
        ),
        sim_match(
            "referee_14_1",
            "a 14.1 match played by the simulator's player (seed 4): safe breaks, calls,"
            " re-racks, fouls, facts while in play; then corrections, stalemate, concede,"
            " abandon and a new match",
            {"type": "match", "game": "14.1", "players": ["Cy", "Di"], "target": 12},
            seed=4,
            turns=30,
            epilogue=corrections_141,
        ),
        sim_match(
            "sim_9ball",
            "a 9-ball match played by the simulator's player (seed 5), strike sensor on",
            {"type": "match", "game": "9-ball", "players": ["Ann", "Bob"], "race_to": 2},
            seed=5,
            turns=22,
            strike=True,
        ),
        sim_match(
            "sim_8ball",
            "an 8-ball match played by the simulator's player (seed 6)",
            {"type": "match", "game": "8-ball", "players": ["Ann", "Bob"], "race_to": 2},
            seed=6,
            turns=22,
        ),
    ]


def main(argv: list[str]) -> int:
    logging.getLogger("railbird").setLevel(logging.CRITICAL)  # rejections are the point here
    only = set(argv)
    for old in replay.CORPUS.glob("*.*") if not only else []:
        if old.name != "README.md":
            old.unlink()
    total = {"inputs": 0, "lines": 0, "journal_rows": 0}
    for s in build():
        if only and s.name not in only:
            continue
        n = s.write()
        for k in total:
            total[k] += n[k]
        print(
            f"{s.name}: {n['inputs']} inputs, {n['lines']} lines, {n['journal_rows']} journal rows"
        )
    counts = f"{total['inputs']} inputs, {total['lines']} lines"
    print(f"total: {counts}, {total['journal_rows']} journal rows")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
