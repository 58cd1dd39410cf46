"""Hypothesis strategies for the ingest fuzz: a venue's good node traffic and bad messages of
every kind the attack-and-fault probe used (issue 13), each with the outcome the host owes it.

Good traffic (`plans`): three synced nodes on two tables, each a birth, a `sync_result`, event
batches (events of every kind, even seqs, delivered within the reorder window), fresh
statuses and re-sent copies of earlier batches. A fourth configured node, `t2-f`, has a broken
clock: every event it sends is stamped far ahead of its arrival, with a boot and times past
2^63 (valid per SPEC.md, beyond SQLite's INTEGER).

Bad messages (`bads`): malformed and truncated JSON, non-UTF-8, wrong versions (payload and
topic), unknown nodes, venues and tables, a node on another table, out-of-range and
non-integer numbers, oversized payloads, deep nesting, NaN, schema breaks, a node field that
contradicts the topic, impossible syncs, kinds that are no host input, referee garbage and
random referee inputs, and far-future events of the good nodes (odd seqs, so they never
collide with a good event). A bad message's own content never depends on host state, only
on the arrival time it is given (`Bad.build`), so the same plan can be fed in process (with
simulated arrival times) and through a broker (with real ones).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from hypothesis import strategies as st

from rbproto import codec
from tests.host import scripts as S

VENUE = "club"
TABLES = {"t1": ["t1-a", "t1-b"], "t2": ["t2-a", "t2-f"]}
GOOD_NODES = {"t1-a": "t1", "t1-b": "t1", "t2-a": "t2"}
BROKEN = "t2-f"  # its clock is broken: every event far in the future
BROKEN_BOOT = 2**63 + 5  # valid per SPEC.md (uint64), beyond SQLite's INTEGER
HOST0 = 1_000_000_000  # host µs at which a plan starts (in process)
FUTURE_MIN_US = 10_000_000  # "far ahead": well past any clock model's plausibility bound

# what the host owes a message, by label: allowed statuses and, for "rejected", codes
CODES_SCHEMA = ("missing field", "bad type", "bad value")
ANY = ("ok", "duplicate", "rejected", "ignored", "refused", "pending", "quarantined", "conflict")


def config_dict(**extra) -> dict:
    """The daemon config the fuzz targets share (a TOML document as a dict)."""
    d = {
        "venue": VENUE,
        "reorder_window_ms": 500,
        "tables": {
            "t1": {
                "game": "10-ball",
                "players": ["Ann", "Bob"],
                "race_to": 5,
                "nodes": TABLES["t1"],
            },
            "t2": {"game": "14.1", "players": ["Cy", "Di"], "target": 50, "nodes": TABLES["t2"]},
        },
    }
    d.update(extra)
    return d


@dataclass
class Msg:
    rx: int  # host µs (in process: simulated; end to end: when to publish, plus a shift)
    topic: str
    payload: bytes
    label: str  # good | dup | the bad kind
    expect: tuple  # statuses the host may answer
    codes: tuple = ()  # rejection codes allowed, when rejected
    keys: tuple = ()  # good: (node, boot, seq) of the events it carries
    node: str | None = None  # the publishing node (end to end: whose login)
    retain: bool = False  # end to end: published retained


@dataclass
class NodePlan:
    node: str
    table: str
    boot: int
    offset: int  # host - node, µs
    sync_at: int  # host µs of its sync exchange (its first message)
    msgs: list = field(default_factory=list)  # good Msgs, in the node's own order

    def sync(self, shift: int = 0) -> Msg:
        """Its `sync_result`, for a host clock `shift` µs ahead of the plan's (end to end:
        real time); the only payload that depends on it."""
        node_t = self.sync_at - self.offset - 5_000
        topic, payload = S.sync_result(
            self.offset + shift, node=self.node, boot=self.boot, t1=node_t, table=self.table
        )
        return Msg(self.sync_at, topic, payload, "good", ("ok",), node=self.node)

    def node_time(self, rx: int) -> int:
        return rx - self.offset

    def with_boot(self, boot: int) -> NodePlan:
        """The same traffic from another boot (end to end: each example its own boots)."""
        p = NodePlan(self.node, self.table, boot, self.offset, self.sync_at)
        for m in self.msgs:
            body = json.loads(m.payload)
            body["boot"] = boot
            payload = json.dumps(body, separators=(",", ":")).encode()
            keys = tuple((n, boot, seq) for n, _, seq in m.keys)
            p.msgs.append(replace(m, payload=payload, keys=keys))
        return p


@dataclass
class Plan:
    nodes: list  # [NodePlan] of the good nodes
    broken: NodePlan  # t2-f

    def good(self, shift: int = 0) -> list:
        """Every good message, all nodes merged by arrival (each node's sync first)."""
        rows = [(m.rx, i, j, m) for i, n in enumerate(self.nodes) for j, m in enumerate(n.msgs)]
        rows += [(n.sync_at, i, -1, n.sync(shift)) for i, n in enumerate(self.nodes)]
        return [m for *_, m in sorted(rows, key=lambda r: r[:3])]

    def synced_at(self) -> int:
        """Index in `good()` from which on every good node is synced."""
        return max(i for i, m in enumerate(self.good()) if m.topic.endswith("/sync/result"))

    def good_keys(self) -> set:
        return {k for n in self.nodes for m in n.msgs if m.label == "good" for k in m.keys}

    def with_boots(self, base: int) -> Plan:
        nodes = [n.with_boot(base + i) for i, n in enumerate(self.nodes)]
        return Plan(nodes, self.broken.with_boot(BROKEN_BOOT + base))


# -- good traffic ---------------------------------------------------------------------------
def _event(draw, seq: int, t: int) -> dict:
    kind = draw(st.sampled_from(("drop", "drop", "rail", "rail", "rail", "cue", "jam", "lost")))
    e = {"seq": seq, "t": t, "kind": kind}
    if kind == "drop":
        e["pocket"] = draw(st.sampled_from(codec.POCKETS))
        if draw(st.booleans()):
            e["dur"] = draw(st.integers(5_000, 200_000))
    elif kind == "rail":
        e["rail"] = draw(st.sampled_from(codec.RAILS))
        e["amp"] = draw(st.integers(0, 4095))
    elif kind == "jam":
        e["pocket"] = draw(st.sampled_from(codec.POCKETS))
        e["dur"] = draw(st.integers(2_000_000, 9_000_000))
    elif kind == "lost":
        e["n"] = draw(st.integers(1, 50))
        if draw(st.booleans()):
            e["pocket"] = draw(st.sampled_from(codec.POCKETS))
        else:
            e["rail"] = draw(st.sampled_from(codec.RAILS))
    return e


def _events_msg(node: str, boot: int, events: list) -> bytes:
    return codec.encode("events", {"v": 1, "node": node, "boot": boot, "events": events})


@st.composite
def node_plan(draw, node: str, table: str, max_batches: int, max_pause_us: int) -> NodePlan:
    boot = draw(st.integers(0, 2**32))
    offset = draw(st.integers(-HOST0 // 2, HOST0 // 2))
    p = NodePlan(node, table, boot, offset, sync_at=HOST0 + draw(st.integers(0, 200_000)))
    topic_ev = codec.topic(VENUE, table, "events", node)
    birth = {
        "v": 1,
        "node": node,
        "boot": boot,
        "fw": "fuzz",
        "reset": draw(st.sampled_from(codec.RESETS)),
        "config_hash": "0badc0de",
        "pinmap": "esp32-devkitc",
    }
    rx = p.sync_at + 1_000
    p.msgs.append(
        Msg(
            rx,
            codec.topic(VENUE, table, "birth", node),
            codec.encode("birth", birth),
            "good",
            ("ok",),
            node=node,
        )
    )
    seq = 2 * draw(st.integers(0, 100))
    t = rx + draw(st.integers(1_000, 300_000))  # table time of the next event
    sent = []
    for _ in range(draw(st.integers(1, max_batches))):
        evs = []
        for _ in range(draw(st.integers(1, 8))):
            evs.append(_event(draw, seq, t - offset))
            keys_t = t
            seq += 2
            t += draw(st.integers(1_000, 12_000))
        # arrives within the reorder window of its events: linger and network latency
        rx = max(rx, keys_t + draw(st.integers(0, 50_000)))
        keys = tuple((node, boot, e["seq"]) for e in evs)
        m = Msg(rx, topic_ev, _events_msg(node, boot, evs), "good", ("ok",), keys=keys, node=node)
        p.msgs.append(m)
        sent.append(m)
        if draw(st.integers(0, 5)) == 0:  # a re-sent copy (a lost PUBACK)
            old = draw(st.sampled_from(sent))
            p.msgs.append(Msg(rx, old.topic, old.payload, "dup", ("duplicate",), node=node))
        if draw(st.integers(0, 4)) == 0:  # a fresh status, nothing buffered
            status = {
                "v": 1,
                "node": node,
                "boot": boot,
                "state": "online",
                "uptime_us": p.node_time(rx),
                "queue": 0,
                "spill": 0,
                "counters": {"events": seq // 2},
            }
            p.msgs.append(
                Msg(
                    rx,
                    codec.topic(VENUE, table, "status", node),
                    codec.encode("status", status),
                    "good",
                    ("ok",),
                    node=node,
                )
            )
        t = max(t, rx) + draw(st.integers(1_000, max_pause_us))
    return p


@st.composite
def plans(draw, max_batches: int = 6, max_pause_us: int = 3_000_000) -> Plan:
    nodes = [draw(node_plan(n, tb, max_batches, max_pause_us)) for n, tb in GOOD_NODES.items()]
    broken = NodePlan(BROKEN, "t2", BROKEN_BOOT, draw(st.integers(0, HOST0 // 2)), HOST0)
    return Plan(nodes, broken)


# -- bad messages ---------------------------------------------------------------------------
SLUGS = st.from_regex(r"[a-z0-9][a-z0-9-]{0,12}", fullmatch=True)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4)
    ),
    max_leaves=12,
)
HUGE = st.sampled_from(
    [
        "18446744073709551616",  # U64_MAX + 1
        "-1",
        str(2**70),
        "1.5",
        "1e400",  # parses as inf
        "true",
        '"7"',
        "null",
        "9" * 400,
    ]
)


@dataclass
class Bad:
    kind: str
    p: dict  # what was drawn

    def build(self, plan: Plan, rx: int, fresh_seq) -> Msg:
        """The message, arriving at host time `rx`; `fresh_seq(node)` gives an unused odd seq."""
        return BUILD[self.kind](self.p, plan, rx, fresh_seq)


def _good_payload(plan: Plan, i: int) -> tuple[str, bytes, NodePlan]:
    msgs = [(n, m) for n in plan.nodes for m in n.msgs if m.label == "good" and m.keys]
    n, m = msgs[i % len(msgs)]
    return m.topic, m.payload, n


def _node(plan: Plan, i: int) -> NodePlan:
    return plan.nodes[i % len(plan.nodes)]


def _one_event(n: NodePlan, rx: int) -> dict:
    return {"seq": 1, "t": n.node_time(rx), "kind": "cue"}


def _rej(kind, topic, payload, codes=(), node=None, retain=False, rx=0) -> Msg:
    return Msg(rx, topic, payload, kind, ("rejected",), codes, node=node, retain=retain)


def _b_json(p, plan, rx, fs):
    n = _node(plan, p["i"])
    topic = codec.topic(VENUE, n.table, p["leaf"], n.node)
    return _rej("bad json", topic, p["payload"], (), n.node, p["retain"], rx)


def _b_truncated(p, plan, rx, fs):
    topic, payload, n = _good_payload(plan, p["i"])
    cut = payload[: p["at"] % len(payload)]
    return _rej("truncated", topic, cut, ("bad json",), n.node, p["retain"], rx)


def _b_utf8(p, plan, rx, fs):
    topic, payload, n = _good_payload(plan, p["i"])
    at = p["at"] % (len(payload) + 1)
    return _rej(
        "not utf-8",
        topic,
        payload[:at] + p["junk"] + payload[at:],
        ("bad json",),
        n.node,
        False,
        rx,
    )


def _b_version(p, plan, rx, fs):
    n = _node(plan, p["i"])
    topic = codec.topic(VENUE, n.table, "events", n.node)
    ev = json.dumps([_one_event(n, rx)])
    if p["where"] == "topic":
        topic = topic.replace("/v1/", f"/v{p['v']}/", 1)
        body = f'{{"v":{p["v"]},"node":"{n.node}","boot":{n.boot},"events":{ev}}}'
        return _rej("version", topic, body.encode(), ("unsupported version",), n.node, False, rx)
    body = f'{{"v":{p["raw"]},"node":"{n.node}","boot":{n.boot},"events":{ev}}}'
    codes = ("unsupported version", "bad type", "bad json")
    return _rej("version", topic, body.encode(), codes, n.node, False, rx)


def _b_unknown_node(p, plan, rx, fs):
    name = p["name"]
    table = "t1" if p["t1"] else "t2"
    body = {"v": 1, "node": name, "boot": 1, "events": [{"seq": 0, "t": 5, "kind": "cue"}]}
    topic = codec.topic(VENUE, table, "events", name)
    return _rej(
        "unknown node", topic, codec.encode("events", body), ("unknown node",), name, False, rx
    )


def _b_wrong_table(p, plan, rx, fs):
    topic, payload, n = _good_payload(plan, p["i"])
    other = "t2" if n.table == "t1" else "t1"
    topic = codec.topic(VENUE, other, "events", n.node)
    return _rej("wrong table", topic, payload, ("wrong table",), n.node, False, rx)


def _b_unknown_table(p, plan, rx, fs):
    topic, payload, n = _good_payload(plan, p["i"])
    topic = codec.topic(VENUE, p["table"], "events", n.node)
    return _rej("unknown table", topic, payload, ("unknown table",), n.node, False, rx)


def _b_unknown_venue(p, plan, rx, fs):
    topic, payload, n = _good_payload(plan, p["i"])
    topic = codec.topic(p["venue"], n.table, "events", n.node)
    return _rej("unknown venue", topic, payload, ("unknown venue",), n.node, False, rx)


def _b_huge(p, plan, rx, fs):
    n = _node(plan, p["i"])
    fields = {"boot": n.boot, "seq": 1, "t": n.node_time(rx), "amp": 100}
    fields[p["field"]] = p["value"]
    body = (
        f'{{"v":1,"node":"{n.node}","boot":{fields["boot"]},"events":[{{"seq":{fields["seq"]},'
        f'"t":{fields["t"]},"kind":"rail","rail":"F","amp":{fields["amp"]}}}]}}'
    )
    topic = codec.topic(VENUE, n.table, "events", n.node)
    return _rej(
        "huge number",
        topic,
        body.encode(),
        ("bad value", "bad type", "bad json"),
        n.node,
        False,
        rx,
    )


def _b_too_large(p, plan, rx, fs):
    n = _node(plan, p["i"])
    body = {
        "v": 1,
        "node": n.node,
        "boot": n.boot,
        "events": [_one_event(n, rx)],
        "pad": "x" * p["n"],
    }
    topic = codec.topic(VENUE, n.table, "events", n.node)
    return _rej("too large", topic, json.dumps(body).encode(), ("too large",), n.node, False, rx)


def _b_nesting(p, plan, rx, fs):
    n = _node(plan, p["i"])
    payload = (p["open"] * p["depth"]).encode()[: codec.MAX_PAYLOAD]
    topic = codec.topic(VENUE, n.table, "status", n.node)
    return _rej("nesting", topic, payload, ("bad json",), n.node, False, rx)


def _b_nan(p, plan, rx, fs):
    n = _node(plan, p["i"])
    ev = f'{{"seq":1,"t":{p["c"]},"kind":"cue"}}'
    body = f'{{"v":1,"node":"{n.node}","boot":{n.boot},"events":[{ev}]}}'
    topic = codec.topic(VENUE, n.table, "events", n.node)
    return _rej("nan", topic, body.encode(), ("bad json",), n.node, False, rx)


SCHEMA_BREAKS = (
    "no node",
    "no boot",
    "no events",
    "no seq",
    "no t",
    "no kind",
    "seq string",
    "t float",
    "boot bool",
    # (an unknown kind is not a break: it is counted and skipped, protocol/SPEC.md
    # "Additive changes"; tests/host/test_unknown_kind.py)
    "pocket unknown",
    "drop without pocket",
    "rail without amp",
    "lost with both",
    "no events listed",
    "65 events",
    "seq not increasing",
    "events not a list",
    "event not an object",
    "node not a slug",
    "message a list",
    "status without uptime",
    "status state unknown",
    "birth hash not hex",
)


def _b_schema(p, plan, rx, fs):
    n = _node(plan, p["i"])
    e = {"seq": 1, "t": n.node_time(rx), "kind": "rail", "rail": "F", "amp": 1}
    body: object = {"v": 1, "node": n.node, "boot": n.boot, "events": [e]}
    leaf = "events"
    how = p["how"]
    if how.startswith("no ") and how != "no events listed":
        name = how[3:]
        (body if name in ("node", "boot", "events") else e).pop(name)
    elif how == "seq string":
        e["seq"] = "1"
    elif how == "t float":
        e["t"] = float(e["t"]) + 0.5
    elif how == "boot bool":
        body["boot"] = True
    elif how == "pocket unknown":
        e.update(kind="drop", pocket="XX")
    elif how == "drop without pocket":
        e["kind"] = "drop"
    elif how == "rail without amp":
        e.pop("amp")
    elif how == "lost with both":
        e.update(kind="lost", n=1, pocket="SL")
    elif how == "no events listed":
        body["events"] = []
    elif how == "65 events":
        body["events"] = [dict(e, seq=i) for i in range(65)]
    elif how == "seq not increasing":
        body["events"] = [dict(e, seq=3), dict(e, seq=3)]
    elif how == "events not a list":
        body["events"] = {"0": e}
    elif how == "event not an object":
        body["events"] = [1]
    elif how == "node not a slug":
        body["node"] = n.node.upper()
    elif how == "message a list":
        body = [body]
    elif how.startswith("status"):
        leaf = "status"
        body = {"v": 1, "node": n.node, "boot": n.boot, "state": "online"}
        if how == "status state unknown":
            body.update(state="asleep", uptime_us=5)
    elif how == "birth hash not hex":
        leaf = "birth"
        body = {
            "v": 1,
            "node": n.node,
            "boot": n.boot,
            "fw": "x",
            "reset": "power",
            "config_hash": "XYZ",
            "pinmap": "p",
        }
    topic = codec.topic(VENUE, n.table, leaf, n.node)
    return _rej("schema", topic, json.dumps(body).encode(), CODES_SCHEMA, n.node, p["retain"], rx)


def _b_mismatch(p, plan, rx, fs):
    topic, payload, n = _good_payload(plan, p["i"])
    other = _node(plan, p["i"] + 1)
    if other.node == n.node:
        other = _node(plan, p["i"] + 2)
    topic = codec.topic(VENUE, n.table, "events", other.node)
    return _rej("node mismatch", topic, payload, ("bad value",), other.node, False, rx)


def _b_topic(p, plan, rx, fs):
    n = _node(plan, p["i"])
    topics = {
        "leaf": f"railbird/v1/{VENUE}/{n.table}/node/{n.node}/garbage",
        "deep": f"railbird/v1/{VENUE}/{n.table}/node/{n.node}/sync/result/x",
        "caps": f"railbird/v1/{VENUE}/T1/node/{n.node}/events",
        "short": "railbird/v1",
        "empty": "",
        "root": "railbird/x1/club/t1",
        "text": p["text"],
    }
    payload = codec.encode(
        "events", {"v": 1, "node": n.node, "boot": n.boot, "events": [_one_event(n, rx)]}
    )
    return _rej(
        "bad topic",
        topics[p["which"]],
        payload,
        ("bad topic", "unsupported version"),
        n.node,
        False,
        rx,
    )


def _b_sync(p, plan, rx, fs):
    n = _node(plan, p["i"])
    t1 = n.node_time(rx) - 10_000
    body = {"v": 1, "node": n.node, "boot": n.boot, "id": 9, "t1": t1, "t2": rx, "t3": rx + 5}
    if t1 - p["back"] >= 0:
        body["t4"] = t1 - p["back"]  # the node's clock ran backwards: impossible
    else:
        body.update(t3=rx - 1, t4=t1 + 20_000)  # the host's clock ran backwards
    topic = codec.topic(VENUE, n.table, "sync_result", n.node)
    return _rej(
        "impossible sync",
        topic,
        codec.encode("sync_result", body),
        ("bad sync",),
        n.node,
        False,
        rx,
    )


def _b_not_input(p, plan, rx, fs):
    n = _node(plan, p["i"])
    which = p["which"]
    if which == "sync_req":
        body = {"v": 1, "node": n.node, "boot": n.boot, "id": 3, "t1": n.node_time(rx)}
        topic = codec.topic(VENUE, n.table, "sync_req", n.node)
    elif which == "shot":
        body = {"table": n.table, "n": 1, "start": 0, "end": 1, "pocketed": [], "rails": []}
        topic = codec.topic(VENUE, n.table, "shot")
    elif which == "announce":
        body = {"table": n.table, "text": "nine on the break"}
        topic = codec.topic(VENUE, n.table, "announce")
    else:
        body = {"venue": VENUE, "state": "online", "period_s": 1}
        topic = codec.topic(VENUE, None, "host")
        which = "host"
    payload = codec.encode(which, {"v": 1, **body})
    return Msg(rx, topic, payload, "not host input", ("ignored",), (), n.node)


def _b_referee_garbage(p, plan, rx, fs):
    topic = codec.topic(VENUE, p["table"], "referee")
    return _rej("referee garbage", topic, p["payload"], (), None, False, rx)


def _b_referee_input(p, plan, rx, fs):
    topic = codec.topic(VENUE, p["table"], "referee")
    msg = {"v": 1, "input": p["input"], "by": "fuzz"}
    if p["id"] is not None:
        msg["id"] = p["id"]
    payload = json.dumps(msg).encode()
    expect = ("ok", "refused", "rejected", "duplicate", "pending")
    return Msg(rx, topic, payload, "referee input", expect)


def _b_future(p, plan, rx, fs):
    """A good node's clock glitches once: an event stamped far ahead of its arrival."""
    n = _node(plan, p["i"])
    t = min(codec.U64_MAX, n.node_time(rx) + p["ahead"])
    e = {"seq": fs(n.node), "t": t, "kind": "drop", "pocket": "SL"}
    topic = codec.topic(VENUE, n.table, "events", n.node)
    return Msg(rx, topic, _events_msg(n.node, n.boot, [e]), "future", ("quarantined",), node=n.node)


def _b_broken(p, plan, rx, fs):
    """The broken node: every event far ahead, times past 2^63 included."""
    n = plan.broken
    base = min(codec.U64_MAX - 200_000, n.node_time(rx) + p["ahead"])
    evs = [{"seq": fs(n.node), "t": base + 10_000 * i, "kind": "cue"} for i in range(p["count"])]
    topic = codec.topic(VENUE, n.table, "events", n.node)
    return Msg(
        rx, topic, _events_msg(n.node, n.boot, evs), "broken clock", ("quarantined",), node=n.node
    )


BUILD = {
    "bad json": _b_json,
    "truncated": _b_truncated,
    "not utf-8": _b_utf8,
    "version": _b_version,
    "unknown node": _b_unknown_node,
    "wrong table": _b_wrong_table,
    "unknown table": _b_unknown_table,
    "unknown venue": _b_unknown_venue,
    "huge number": _b_huge,
    "too large": _b_too_large,
    "nesting": _b_nesting,
    "nan": _b_nan,
    "schema": _b_schema,
    "node mismatch": _b_mismatch,
    "bad topic": _b_topic,
    "impossible sync": _b_sync,
    "not host input": _b_not_input,
    "referee garbage": _b_referee_garbage,
    "referee input": _b_referee_input,
    "future": _b_future,
    "broken clock": _b_broken,
}
# what a node login may publish through the project ACL (its own subtree, any table and
# version), and what needs the referee login; the rest are in-process only
REFEREE_KINDS = ("referee garbage", "referee input")
IN_PROCESS_ONLY = ("unknown venue", "bad topic", "not host input")

PICK = st.integers(0, 1000)  # which node or good message
AHEAD = st.one_of(
    st.integers(FUTURE_MIN_US, 10**12), st.integers(2**63, codec.U64_MAX), st.just(codec.U64_MAX)
)
OTHER_SLUGS = SLUGS.filter(lambda s: s not in {"t1", "t2"} and s not in set(GOOD_NODES) | {BROKEN})
_RULE_VALUE = st.one_of(
    JSON,
    st.integers(-2, 16),
    st.sampled_from(codec.POCKETS + codec.RAILS + ("Ann", "Bob", "Cy", "shoot", "pass")),
    st.lists(st.integers(0, 15), max_size=4),
    st.lists(
        st.dictionaries(
            st.sampled_from(["ball", "pocket"]),
            st.integers(0, 15) | st.sampled_from(codec.POCKETS),
            max_size=2,
        ),
        max_size=3,
    ),
)


# referee inputs the rules may well accept (REFEREE.md), so that some are applied in between
PLAUSIBLE = [
    {"type": "lag", "winner": 0},
    {"type": "lag", "winner": "Bob"},
    {"type": "undo"},
    {"type": "confirm"},
    {"type": "call", "safety": True},
    {"type": "call", "ball": 1, "pocket": "SL"},
    {"type": "push_out"},
    {"type": "option", "choice": "shoot"},
    {"type": "shot", "pocketed": [{"ball": 1, "pocket": "FR"}]},
    {"type": "shot", "pocketed": [], "fouls": ["no_rail"]},
    {"type": "confirm", "pocketed": []},
    {"type": "concede", "player": 1},
    {"type": "abandon"},
    {"type": "match"},
    {"type": "stalemate"},
]


def _params(kind: str):
    from railbird.rules.inputs import INPUT_FIELDS

    retain = st.booleans()
    p = {
        "bad json": st.fixed_dictionaries(
            {
                "i": PICK,
                "leaf": st.sampled_from(["events", "status", "birth", "sync_result"]),
                "payload": st.one_of(
                    st.binary(max_size=64),
                    st.sampled_from([b"", b"{", b"{}", b"[]", b"null", b"1", b'"x"', b"{not json"]),
                    JSON.map(lambda v: json.dumps(v).encode()),
                ),
                "retain": retain,
            }
        ),
        "truncated": st.fixed_dictionaries(
            {"i": PICK, "at": st.integers(0, 10**6), "retain": retain}
        ),
        "not utf-8": st.fixed_dictionaries(
            {
                "i": PICK,
                "at": st.integers(0, 10**6),
                "junk": st.sampled_from(
                    [b"\xff", b"\xfe", b"\xc0\xaf", b"\xed\xa0\x80", b"\x80", b"\xe2\x82"]
                ),
            }
        ),
        "version": st.fixed_dictionaries(
            {
                "i": PICK,
                "where": st.sampled_from(["topic", "payload"]),
                "v": st.integers(0, 99).filter(lambda v: v != 1),
                "raw": st.sampled_from(
                    ["0", "2", "-1", "1.0", '"1"', "true", "null", str(2**64), "[1]"]
                ),
            }
        ),
        "unknown node": st.fixed_dictionaries({"name": OTHER_SLUGS, "t1": st.booleans()}),
        "wrong table": st.fixed_dictionaries({"i": PICK}),
        "unknown table": st.fixed_dictionaries({"i": PICK, "table": OTHER_SLUGS}),
        "unknown venue": st.fixed_dictionaries(
            {"i": PICK, "venue": OTHER_SLUGS.filter(lambda s: s != VENUE)}
        ),
        "huge number": st.fixed_dictionaries(
            {"i": PICK, "field": st.sampled_from(["boot", "seq", "t", "amp"]), "value": HUGE}
        ),
        "too large": st.fixed_dictionaries(
            {"i": PICK, "n": st.integers(codec.MAX_PAYLOAD, 3 * codec.MAX_PAYLOAD)}
        ),
        "nesting": st.fixed_dictionaries(
            {
                "i": PICK,
                "open": st.sampled_from(["[", '{"a":', "[{}", '{"v":[']),
                "depth": st.integers(500, 20000),
            }
        ),
        "nan": st.fixed_dictionaries(
            {"i": PICK, "c": st.sampled_from(["NaN", "Infinity", "-Infinity"])}
        ),
        "schema": st.fixed_dictionaries(
            {"i": PICK, "how": st.sampled_from(SCHEMA_BREAKS), "retain": retain}
        ),
        "node mismatch": st.fixed_dictionaries({"i": PICK}),
        "bad topic": st.fixed_dictionaries(
            {
                "i": PICK,
                "which": st.sampled_from(
                    ["leaf", "deep", "caps", "short", "empty", "root", "text"]
                ),
                "text": st.text(max_size=40).filter(lambda s: not s.startswith("railbird/")),
            }
        ),
        "impossible sync": st.fixed_dictionaries({"i": PICK, "back": st.integers(1, 10**9)}),
        "not host input": st.fixed_dictionaries(
            {"i": PICK, "which": st.sampled_from(["sync_req", "shot", "announce", "host"])}
        ),
        "referee garbage": st.fixed_dictionaries(
            {
                "table": st.sampled_from(["t1", "t2"]),
                "payload": st.one_of(
                    st.binary(max_size=64),
                    JSON.map(lambda v: json.dumps(v).encode()),
                    st.sampled_from(
                        [
                            b'{"v":1}',
                            b'{"v":1,"input":"undo"}',
                            b'{"v":1,"input":{}}',
                            b'{"v":1,"input":{"type":""}}',
                        ]
                    ),
                ),
            }
        ),
        "referee input": st.fixed_dictionaries(
            {
                "table": st.sampled_from(["t1", "t2"]),
                "input": st.one_of(
                    st.sampled_from(PLAUSIBLE),
                    st.builds(
                        lambda t, f: dict(f, type=t),
                        st.sampled_from(sorted(INPUT_FIELDS)) | st.text(min_size=1, max_size=32),
                        st.sampled_from(sorted(INPUT_FIELDS)).flatmap(
                            lambda t: st.dictionaries(
                                st.sampled_from(sorted(INPUT_FIELDS[t] | {"bogus"})),
                                _RULE_VALUE,
                                max_size=3,
                            )
                        ),
                    ),
                ),
                "id": st.none() | st.text(min_size=1, max_size=8),
            }
        ),
        "future": st.fixed_dictionaries({"i": PICK, "ahead": AHEAD}),
        "broken clock": st.fixed_dictionaries({"ahead": AHEAD, "count": st.integers(1, 5)}),
    }
    return p[kind]


def bad(kinds=tuple(BUILD)):
    return st.sampled_from(kinds).flatmap(lambda k: _params(k).map(lambda p: Bad(k, p)))


@st.composite
def interleaving(draw, n_good: int, max_bad: int, kinds=tuple(BUILD)) -> list:
    """[(position among the good messages, Bad)]: the bad message goes right after good
    message `position` (-1: before the first)."""
    out = draw(st.lists(st.tuples(st.integers(-1, n_good - 1), bad(kinds)), max_size=max_bad))
    return sorted(out, key=lambda pb: pb[0])


def odd_seqs():
    """fresh_seq(node): odd seqs, never used by a good event (those are even)."""
    nxt: dict = {}

    def fresh(node: str) -> int:
        nxt[node] = nxt.get(node, 1) + 2
        return nxt[node] - 2

    return fresh


def noisy(plan: Plan, bads: list, shift: int = 0) -> list:
    """The good messages with the bad ones interleaved, each arriving with the good message
    before it, none before every node is synced (an unsynced node's stamps cannot be judged:
    the host caps them at their arrival, by design); the broken node's sync comes first."""
    good = plan.good(shift)
    first = plan.synced_at()
    fresh = odd_seqs()
    after: dict = {}
    for pos, b in bads:
        after.setdefault(max(pos, first), []).append(b)
    out = [plan.broken.sync(shift)]
    for i, g in enumerate(good):
        out.append(g)
        out += [b.build(plan, g.rx, fresh) for b in after.get(i, ())]
    return out
