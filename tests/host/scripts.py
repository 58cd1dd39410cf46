"""Scripted sensor streams for the host tests: a table's events as the node sends them."""

from __future__ import annotations

import json

from rbproto import codec

VENUE = "club"
TABLE = "t1"
NODE = "t1-node"
# A receive time after `sync_result(0)`'s exchange and every event of `game()`: a message
# cannot arrive before its events happened (the host quarantines an event that would).
RX = 100_000_300


def ev(t_ms: float, kind: str, **fields) -> dict:
    """One event at t_ms milliseconds (node time)."""
    d = {"t": round(t_ms * 1000), "kind": kind}
    d.update(fields)
    return d


def number(events: list, first_seq: int = 0) -> list:
    out = []
    for i, e in enumerate(sorted(events, key=lambda e: e["t"])):
        e = dict(e)
        e["seq"] = first_seq + i
        out.append(e)
    return out


def batches(
    events: list,
    node: str = NODE,
    boot: int = 1,
    size: int = 4,
    table: str = TABLE,
    venue: str = VENUE,
) -> list:
    """Split numbered events into `events` messages -> [(topic, payload_bytes)]."""
    topic = codec.topic(venue, table, "events", node)
    out = []
    for i in range(0, len(events), size):
        msg = {
            "v": 1,
            "node": node,
            "boot": boot,
            "events": [
                {
                    k: e[k]
                    for k in ("seq", "t", "kind", "pocket", "rail", "amp", "dur", "n")
                    if k in e
                }
                for e in events[i : i + size]
            ],
        }
        out.append((topic, codec.encode("events", msg)))
    return out


def sync_result(
    offset_us: int,
    node: str = NODE,
    boot: int = 1,
    t1: int = 100_000_000,
    delay_us: int = 200,
    table: str = TABLE,
    venue: str = VENUE,
    id: int = 1,
):
    """A sync_result whose exchange says host = node + offset_us exactly."""
    t2 = t1 + offset_us + delay_us // 2
    t3 = t2 + 10
    t4 = t3 - offset_us + delay_us // 2
    msg = {"v": 1, "node": node, "boot": boot, "id": id, "t1": t1, "t2": t2, "t3": t3, "t4": t4}
    return codec.topic(venue, table, "sync_result", node), codec.encode("sync_result", msg)


def jsonl(messages: list) -> str:
    return "".join(json.dumps({"topic": t, "payload": json.loads(p)}) + "\n" for t, p in messages)


# -- scripted shots (node times in ms) ---------------------------------------------------
def break_shot(t0):
    """A break: cue ball into the rack, balls to many rails, one ball pocketed."""
    return [
        ev(t0 + 0, "rail", rail="F", amp=2500),
        ev(t0 + 180, "rail", rail="LF", amp=1800),
        ev(t0 + 210, "rail", rail="RF", amp=1700),
        ev(t0 + 400, "rail", rail="LH", amp=900),
        ev(t0 + 420, "rail", rail="LH", amp=600),  # same ball bouncing: merged
        ev(t0 + 650, "rail", rail="RH", amp=800),
        ev(t0 + 900, "drop", pocket="FR", dur=40000),
        ev(t0 + 1500, "rail", rail="H", amp=500),
        ev(t0 + 3200, "rail", rail="LF", amp=300),
    ]


def single_pot(t0, pocket="SL"):
    return [ev(t0, "drop", pocket=pocket, dur=30000), ev(t0 + 800, "rail", rail="H", amp=400)]


def multi_pot(t0):
    return [
        ev(t0, "rail", rail="RH", amp=700),
        ev(t0 + 500, "drop", pocket="HL", dur=30000),
        ev(t0 + 1200, "drop", pocket="FR", dur=30000),
        ev(t0 + 1900, "rail", rail="F", amp=300),
    ]


def scratch(t0):
    return [
        ev(t0, "drop", pocket="SR", dur=30000),
        ev(t0 + 300, "rail", rail="LH", amp=600),
        ev(t0 + 600, "drop", pocket="HR", dur=25000),
        ev(t0 + 600 + 2800, "cue"),  # a head pocket's return on a 9 ft table
    ]


# Cue-ball returns on a 9 ft table (docs/shots.md "Cue-ball pairing"): the cue detector sees
# the cue ball about 1 s after a foot-pocket drop, 2 s after a side and 2.6-3.1 s after a
# head pocket, so an object ball that drops after the cue ball can reach the return first.
def late_head_scratch(t0):
    """The cue ball drops in HL; an object ball drops in FR 1.1 s later; the cue ball reaches
    the detector 2.9 s after its drop (the FR ball is long through by then)."""
    return [
        ev(t0, "rail", rail="F", amp=800),
        ev(t0 + 400, "drop", pocket="HL", dur=30000),
        ev(t0 + 1500, "drop", pocket="FR", dur=30000),
        ev(t0 + 400 + 2900, "cue"),
    ]


def side_scratch(t0):
    """The cue ball drops in SL, an object ball in HR 0.8 s later; the cue ball is seen 2.05 s
    after its drop."""
    return [
        ev(t0, "rail", rail="LH", amp=700),
        ev(t0 + 300, "drop", pocket="SL", dur=30000),
        ev(t0 + 1100, "drop", pocket="HR", dur=30000),
        ev(t0 + 300 + 2050, "cue"),
    ]


def head_corner_scratch(t0, delay_ms=3130):
    """The cue ball alone into HR, seen in the return 3.13 s later (the slowest return
    measured from a head corner)."""
    return [
        ev(t0, "rail", rail="RH", amp=600),
        ev(t0 + 200, "drop", pocket="HR", dur=30000),
        ev(t0 + 200 + delay_ms, "cue"),
    ]


def miss(t0):
    return [ev(t0, "rail", rail="LF", amp=900), ev(t0 + 700, "rail", rail="RF", amp=400)]


def rolling(t0):
    """A slow ball: one rail hit, then a drop 4.5 s later with nothing in between."""
    return [ev(t0, "rail", rail="H", amp=300), ev(t0 + 4500, "drop", pocket="FL", dur=60000)]


def lip(t0):
    """A ball hanging on the lip falls in on its own: a lone drop after a long rest."""
    return [ev(t0, "drop", pocket="SL", dur=30000)]


def game(t0=10_000, gap=12_000):
    """A scripted rack: every shot kind in turn, `gap` ms apart."""
    out = []
    for i, f in enumerate((break_shot, single_pot, multi_pot, scratch, miss, rolling, lip)):
        out += f(t0 + i * gap)
    return number(out)


def rail_play(
    n: int,
    rails: tuple[str, ...],
    now: int,
    table: str = TABLE,
    node: str = NODE,
    gap_ms: float = 12_000,
) -> list[tuple[int, str, bytes]]:
    """A node playing `n` shots live, each a hit on every one of `rails` and nothing else,
    `gap_ms` apart (past the quiet period): a table whose other rails never fire, for the
    sensor health (docs/shots.md "Sensor health"). -> [(rx, topic, payload)]: its clock sync
    at host time `now` (µs), then one `events` message per shot, each received just after
    its last hit (the host time a test's clock should be at when it is delivered)."""
    t0 = 10_000_000  # node µs
    offset = now + 1_000_000 - t0  # host = node + offset: the first hit a second after `now`
    out = [(now, *sync_result(offset, node=node, table=table, t1=t0 - 1_000_000))]
    seq = 0
    for i in range(n):
        t = t0 / 1000 + gap_ms * i
        shot = number([ev(t + 200 * k, "rail", rail=r, amp=600) for k, r in enumerate(rails)], seq)
        seq += len(shot)
        ((topic, payload),) = batches(shot, node=node, table=table, size=len(shot))
        out.append((shot[-1]["t"] + offset + 1_000, topic, payload))
    return out


def play(d, clock: list, n: int, rails: tuple[str, ...], table: str = TABLE, node: str = NODE):
    """`rail_play` into a running Daemon (connect=False, `d.now = lambda: clock[0]`) as it
    is played: `n` shots closed, each delivered once the one before it is closed, the
    daemon's clock (the test's) moved to each message's arrival once it is in. One shot
    more is played and left open: the n-th closes at its first hit, as every other does,
    not at a tick (a tick moved by the test's clock while the worker is inside a batch
    once left the last shot open for 30 s on a loaded machine)."""
    import time

    def kept() -> int:
        return len(d.pipeline.tables[(VENUE, table)].shots)

    before = kept()

    def wait(k: int) -> None:
        deadline = time.monotonic() + 30  # generous: a loaded machine
        while kept() < before + k:
            assert time.monotonic() < deadline, f"{table}: shot {k} not closed"
            time.sleep(0.005)

    for k, (rx, topic, payload) in enumerate(rail_play(n + 1, rails, clock[0], table, node)):
        d.inbox.put(("mqtt", rx, topic, payload, 0, 0))
        wait(k - 1)  # it is in: shot k - 1 closed at its first hit
        # only now the clock moves on: a tick at `rx` before the message is in would have
        # released the table past its first hits, and they would be late
        clock[0] = rx
    wait(n)
    assert d.pipeline.counters["late"] == 0, "hits came late: shots without some of them"
