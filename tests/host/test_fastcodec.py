"""The host's fast path for event batches (railbird.core.fastcodec) against the shared codec:
every protocol vector, and a differential property test: for any topic and payload both
accept with the same decoded message or both refuse with the same error."""

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings, strategies as st

from railbird.core import fastcodec
from rbproto import codec

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors"
VALID = json.loads((VECTORS / "valid.json").read_text("utf-8"))
INVALID = json.loads((VECTORS / "invalid.json").read_text("utf-8"))
# a topic of each kind (from the valid vectors), for the invalid vectors given by kind only
TOPIC_OF = {v["kind"]: v["topic"] for v in VALID}
TOPIC = "railbird/v1/hall-1/t1/node/t1-node/events"
U64 = 2**64 - 1


def payload_of(v):
    return bytes.fromhex(v["payload_hex"]) if "payload_hex" in v else v["payload"].encode("utf-8")


def outcome(fn, topic, payload):
    """(result, None) or (None, (code, reason)) when the codec refuses."""
    try:
        return fn(topic, payload), None
    except codec.ProtocolError as e:
        return None, (e.code, e.reason)


def same(topic, payload):
    shared = outcome(codec.decode_message, topic, payload)
    fast = outcome(fastcodec.decode_message, topic, payload)
    assert fast == shared, (topic, payload)
    return shared


@pytest.mark.parametrize("v", VALID, ids=[v["name"] for v in VALID])
def test_every_valid_vector(v):
    got, err = same(v["topic"], payload_of(v))
    assert err is None and got[4] == v["expect"]


@pytest.mark.parametrize("v", INVALID, ids=[v["name"] for v in INVALID])
def test_every_invalid_vector(v):
    topic = v.get("topic") or TOPIC_OF[v["kind"]]
    _, err = same(topic, payload_of(v))
    assert err is not None and err[0] == v["error"]


def test_ordinary_batches_take_the_fast_path():
    """Not a shortcut that never runs: the batches nodes send are decided here, without the
    shared codec (the other tests show the decision is the codec's)."""
    node_events = [
        {"seq": 1, "t": 10, "kind": "rail", "rail": "LF", "amp": 900},
        {"seq": 2, "t": 20, "kind": "drop", "pocket": "HL", "dur": 30000},
        {"seq": 3, "t": 30, "kind": "cue"},
        {"seq": 4, "t": 40, "kind": "strike", "amp": 3000},
        {"seq": 5, "t": 50, "kind": "drop", "pocket": "SR"},
        {"seq": 6, "t": 60, "kind": "jam", "pocket": "FL", "dur": 2_000_000},
        {"seq": 7, "t": 70, "kind": "lost", "rail": "H", "n": 2},
    ]
    for ev in node_events:
        if ev["kind"] not in codec.EVENT_KINDS:
            continue
        msg = {"v": 1, "node": "t1-node", "boot": 3, "events": [ev]}
        assert fastcodec._events(json.dumps(msg).encode(), "t1-node") == msg
    msg = {"v": 1, "node": "t1-node", "boot": 3, "events": node_events[:3], "wm": 25}
    if "wm" in fastcodec.BATCH_FIELDS:
        assert fastcodec._events(json.dumps(msg).encode(), "t1-node") == msg


# --- differential property test -------------------------------------------------------------
u64 = st.integers(0, U64)
kind_name = st.text("abcxyz019_", min_size=1, max_size=33)
json_scalar = (
    st.none()
    | st.booleans()
    | st.integers(-(2**65), 2**65)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | st.sampled_from(codec.POCKETS + codec.RAILS + codec.EVENT_KINDS)
)
json_value = st.recursive(
    json_scalar,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
    max_leaves=6,
)
ONE = {"v": 1, "node": "t1-node", "boot": 1, "events": [{"seq": 0, "t": 1, "kind": "cue"}]}
FIELDS = ("seq", "t", "kind", "pocket", "rail", "amp", "dur", "n")
# built once: a strategy made inside a composite is validated again on every draw
KIND = st.sampled_from(codec.EVENT_KINDS) | kind_name
POCKET = st.sampled_from(codec.POCKETS)
RAIL = st.sampled_from(codec.RAILS)
AMP = st.integers(0, 4095)
N = st.integers(1, U64)
SIDE = st.sampled_from(("pocket", "rail"))
EXTRA = (("dur", u64), ("amp", AMP), ("pocket", POCKET), ("x", json_value))
FIELD = st.sampled_from(FIELDS)
ODD = json_value | u64 | kind_name
SOME = st.integers(0, 5)
BATCH_FIELD = st.sampled_from(("v", "node", "boot", "events", "wm", "y"))
BATCH_REQUIRED = st.sampled_from(("v", "node", "boot", "events"))


@st.composite
def event(draw, seq):
    """A valid event of a known kind (with the optional fields it may carry), of an unknown
    kind, or a valid one then broken in one place."""
    kind = draw(KIND)
    e = {"seq": seq, "t": draw(u64), "kind": kind}
    if kind in ("drop", "jam"):
        e["pocket"] = draw(POCKET)
    if kind == "rail":
        e.update(rail=draw(RAIL), amp=draw(AMP))
    if kind == "jam":
        e["dur"] = draw(u64)
    if kind == "lost":
        e["n"] = draw(N)
        side = draw(SIDE)
        e[side] = draw(POCKET if side == "pocket" else RAIL)
    for name, s in EXTRA:
        if draw(SOME) == 0:
            e[name] = draw(s)
    broken = draw(SOME)
    if broken == 0:
        e[draw(FIELD)] = draw(ODD)
    elif broken == 1:
        e.pop(draw(FIELD), None)
    return e


@st.composite
def batch(draw):
    seqs = sorted(draw(st.lists(u64, min_size=1, max_size=6, unique=True)))
    if draw(SOME) == 0:
        seqs.reverse()
    m = {"v": 1, "node": "t1-node", "boot": draw(u64), "events": [draw(event(s)) for s in seqs]}
    if draw(st.booleans()):
        m["wm"] = draw(ODD)
    broken = draw(SOME)
    if broken == 0:
        m[draw(BATCH_FIELD)] = draw(json_value)
    elif broken == 1:
        m.pop(draw(BATCH_REQUIRED), None)
    elif broken == 2:
        m["events"] = m["events"] * draw(st.integers(0, 70))
    return m


@settings(max_examples=200)
@given(batch(), st.integers(0, 3))
@example(dict(ONE, v=True), 0)
@example(dict(ONE, events=[{"seq": 0, "t": 1, "kind": "X"}]), 0)
@example(ONE, 2)
def test_fast_path_agrees_with_the_shared_codec(msg, form):
    """Same accept/reject, same decoded message, same error, whatever the batch; `form`:
    compact, spaced, a NaN appended, or a prefix of the payload."""
    payload = json.dumps(msg, separators=(",", ":")).encode()
    if form == 1:
        payload = json.dumps(msg, indent=1).encode()
    elif form == 2:
        payload = payload[:-1] + b',"z":NaN}'
    elif form == 3:
        payload = payload[: len(payload) // 2]
    same(TOPIC, payload)
    same("railbird/v1/hall-1/t1/node/other-node/events", payload)  # topic node differs
    same("railbird/v1/hall-1/t1/node/t1-node/status", payload)  # another kind


@given(st.binary(max_size=40) | st.text(max_size=40), st.sampled_from(sorted(TOPIC_OF.values())))
def test_any_bytes_on_any_topic(payload, topic):
    same(topic, payload)
    same(topic, b'{"v":1,"node":"t1-node","boot":1,"events":[' + bytes(str(payload), "utf-8"))


def test_oversized_and_odd_payloads():
    big = {"v": 1, "node": "t1-node", "boot": 1, "events": [{"seq": 0, "t": 1, "kind": "cue"}]}
    big["pad"] = "x" * codec.MAX_PAYLOAD
    for payload in (
        json.dumps(big).encode(),
        b"",
        bytearray(b'{"v":1,"node":"t1-node","boot":1,"events":[{"seq":0,"t":1,"kind":"cue"}]}'),
        '{"v":1,"node":"t1-node","boot":1,"events":[{"seq":0,"t":1,"kind":"cue"}]}',
        b"\xef\xbb\xbf" + b'{"v":1,"node":"t1-node","boot":1,"events":[]}',
        b"[" * 100_000,
    ):
        same(TOPIC, payload)
    for topic in ("railbird/v2/hall-1/t1/node/t1-node/events", "nope", None, 5):
        same(topic, b"{}")
