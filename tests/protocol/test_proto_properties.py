"""Hypothesis: encode -> decode is the identity for valid messages of every kind; decode
raises nothing but ProtocolError on arbitrary input; codec and JSON schemas agree."""

import json
import os
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings, strategies as st
from jsonschema import Draft202012Validator

from rbproto import codec

SCHEMAS = Path(__file__).resolve().parents[2] / "protocol" / "schemas"
VALIDATORS = {
    k: Draft202012Validator(json.loads((SCHEMAS / f"{k}.schema.json").read_text()))
    for k in codec.KINDS
}
U64 = 2**64 - 1

u64 = st.integers(0, U64)
i64 = st.integers(-(2**63), 2**63 - 1)
small = st.integers(0, 10**9)
slug = st.from_regex(r"\A[a-z0-9][a-z0-9-]{0,31}\Z", fullmatch=True)
pocket = st.sampled_from(codec.POCKETS)
rail = st.sampled_from(codec.RAILS)
amp = st.integers(0, 4095)


def outcome(fn, *args):
    """fn(*args) -> (result, None), or (None, the ProtocolError) when the codec refuses."""
    try:
        return fn(*args), None
    except codec.ProtocolError as e:
        return None, e


def text(lo, hi):
    return st.text(min_size=lo, max_size=hi)


json_scalar = (
    st.none() | st.booleans() | i64 | st.floats(allow_nan=False, allow_infinity=False) | text(0, 20)
)
json_value = st.recursive(
    json_scalar,
    lambda c: st.lists(c, max_size=4) | st.dictionaries(text(0, 8), c, max_size=4),
    max_leaves=12,
)


@st.composite
def obj(draw, required, optional, extra=True):
    """A dict of every `required` field and some `optional` ones (+ maybe unknown fields)."""
    d = {k: draw(s) for k, s in required.items()}
    for k, s in optional.items():
        if draw(st.booleans()):
            d[k] = draw(s)
    if extra and draw(st.integers(0, 4)) == 0:
        d["x_" + draw(st.text("abc", max_size=5))] = draw(json_value)
    return d


# event kinds no v1 codec knows (a later additive change): receivers count and skip them
unknown_kind = st.text("abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=32).filter(
    lambda k: k not in codec.EVENT_KINDS
)


@st.composite
def unknown_event(draw, seq):
    """An event of a kind this codec does not know, with fields of any shape: even fields
    named like a known kind's (pocket, amp) with values that kind would refuse."""
    e = {"seq": seq, "t": draw(u64), "kind": draw(unknown_kind)}
    for name in draw(
        st.lists(st.sampled_from(["pocket", "rail", "amp", "dur", "n", "x"]), max_size=3)
    ):
        e[name] = draw(json_scalar)
    return e


@st.composite
def event(draw, seq):
    kind = draw(st.sampled_from(codec.EVENT_KINDS))
    e = draw(
        obj(
            {"seq": st.just(seq), "t": u64, "kind": st.just(kind)},
            {"dur": u64} if kind in ("drop", "cue") else {"amp": amp} if kind == "strike" else {},
        )
    )
    if kind == "drop":
        e["pocket"] = draw(pocket)
    elif kind == "rail":
        e.update(rail=draw(rail), amp=draw(amp))
    elif kind == "jam":
        e.update(pocket=draw(pocket), dur=draw(u64))
    elif kind == "ball":
        e.update(ball=draw(st.integers(0, 15)), conf=draw(st.integers(0, 100)))
    elif kind == "lost":
        e["n"] = draw(st.integers(1, U64))
        if draw(st.booleans()):
            e["pocket"] = draw(pocket)
        else:
            e["rail"] = draw(rail)
    return e


@st.composite
def events_msg(draw):
    seqs = sorted(draw(st.lists(u64, min_size=1, max_size=codec.MAX_EVENTS, unique=True)))
    m = draw(obj({"v": st.just(1), "node": slug, "boot": u64}, {"wm": u64}))
    m["events"] = [draw(event(s)) for s in seqs]
    return m


@st.composite
def config_msg(draw):
    def chans(n, make):
        chs = draw(st.lists(st.integers(0, 64), max_size=n, unique=True))
        return [make(c) for c in chs]

    m = draw(
        obj(
            {"v": st.just(1), "rev": u64},
            {
                "cue_ch": st.none() | u64,
                "debounce_us": u64,
                "jam_us": u64,
                "status_period_s": st.integers(1, 3600),
                "batch_max": st.integers(1, 64),
                "batch_linger_ms": u64,
            },
        )
    )
    m["pockets"] = chans(6, lambda c: {"ch": c, "pocket": draw(pocket)})
    m["rails"] = chans(
        6,
        lambda c: {"ch": c, "rail": draw(rail), "threshold": draw(amp), "refractory_us": draw(u64)},
    )
    if draw(st.booleans()):
        used = [r["ch"] for r in m["rails"]]
        ch = draw(st.integers(0, 64).filter(lambda c: c not in used))
        m["strike"] = draw(
            st.none() | obj({"ch": st.just(ch)}, {"threshold": amp, "refractory_us": u64})
        )
    return m


@st.composite
def status_msg(draw):
    state = draw(st.sampled_from(codec.NODE_STATES))
    req = {"v": st.just(1), "node": slug, "boot": u64, "state": st.just(state)}
    if state == "online":
        req["uptime_us"] = u64
    return draw(
        obj(
            req,
            {
                "uptime_us": u64,
                "heap_free": u64,
                "rssi": st.integers(-120, 10),
                "queue": small,
                "spill": small,
                "counters": st.dictionaries(text(1, 32), u64, max_size=10),
                "config_rev": u64,
                "config_error": st.none() | text(0, 200),
                "sync": st.none()
                | st.fixed_dictionaries(
                    {"offset_us": i64, "delay_us": u64, "uncertainty_us": u64, "samples": u64}
                ),
                "fw": text(1, 32),
                "update": st.none()
                | obj(
                    {"state": text(1, 32)},
                    {
                        "id": text(1, 64),
                        "version": text(1, 32),
                        "bytes": u64,
                        "total": u64,
                        "error": st.none() | text(0, 200),
                    },
                ),
            },
        )
    )


@st.composite
def shot_msg(draw):
    start = draw(i64)
    end = draw(st.integers(start, 2**63 - 1))
    m = draw(
        obj(
            {
                "v": st.just(1),
                "table": slug,
                "n": u64,
                "start": st.just(start),
                "end": st.just(end),
                "pocketed": st.lists(
                    st.fixed_dictionaries(
                        {
                            "ball": st.none() | st.integers(0, 15),
                            "pocket": pocket,
                            "t": i64,
                            "source": st.sampled_from(codec.SOURCES),
                        }
                    ),
                    max_size=16,
                ),
                "rails": st.lists(
                    st.fixed_dictionaries({"rail": rail, "t": i64, "amp": amp}), max_size=40
                ),
            },
            {
                "distinct_rails": st.integers(0, 6),
                "object_balls_to_rail": st.integers(0, 15),
                "warnings": st.lists(text(1, 60), max_size=4),
            },
        )
    )
    return m


GAME = st.sampled_from(codec.GAMES)
# a table's entry of the venue summary, and the fields of `table_summary`
TABLE_ENTRY = {
    "game": st.none() | GAME,
    "scores": st.lists(i64, max_size=8),
    "at_table": st.none() | st.integers(0, 7),
    "online": st.booleans(),
    "pocketed_today": small,
}
MESSAGES = {
    "events": events_msg(),
    "birth": obj(
        {
            "v": st.just(1),
            "node": slug,
            "boot": u64,
            "fw": text(1, 32),
            "reset": st.sampled_from(codec.RESETS),
            "config_hash": st.from_regex(r"\A[0-9a-f]{8}\Z", fullmatch=True),
            "pinmap": slug,
        },
        {"caps": st.lists(text(1, 32), max_size=8)},
    ),
    "status": status_msg(),
    "config": config_msg(),
    "update": obj(
        {
            "v": st.just(1),
            "id": text(1, 64),
            "version": text(1, 32),
            "url": st.from_regex(r"\Ahttp://[a-z0-9.:]{1,40}/([a-z0-9+.-]{1,20}/){0,3}\Z"),
            "manifest_sha256": st.from_regex(r"\A[0-9a-f]{64}\Z", fullmatch=True),
        },
        {"trial_s": st.integers(10, 3600), "trial_boots": st.integers(1, 10)},
    ),
    "net": obj(
        {
            "v": st.just(1),
            "id": text(1, 64),
            "wifi": obj({"ssid": text(1, 32), "password": text(0, 64)}, {}),
        },
        {
            "broker": obj({"host": text(1, 64)}, {"port": st.integers(1, 65535)}),
            "trial_s": st.integers(10, 600),
        },
    ),
    "sync_req": obj({"v": st.just(1), "node": slug, "boot": u64, "id": u64, "t1": u64}, {}),
    "sync_resp": obj({"v": st.just(1), "id": u64, "t1": u64, "t2": u64, "t3": u64}, {}),
    "sync_result": obj(
        {
            "v": st.just(1),
            "node": slug,
            "boot": u64,
            "id": u64,
            "t1": u64,
            "t2": u64,
            "t3": u64,
            "t4": u64,
        },
        {},
    ),
    "referee": obj(
        {
            "v": st.just(1),
            "input": obj(
                {"type": text(1, 32)}, {"player": st.integers(0, 1), "ball": st.integers(0, 15)}
            ),
        },
        {"id": text(1, 64), "by": text(1, 32), "token": text(1, 128)},
    ),
    "shot": shot_msg(),
    "state": obj(
        {
            "v": st.just(1),
            "table": slug,
            "game": GAME,
            "state": st.dictionaries(text(0, 8), json_value, max_size=5),
        },
        {"fen": text(1, 120), "t": i64},
    ),
    "announce": obj(
        {"v": st.just(1), "table": slug, "text": text(1, 120)},
        {"rule": st.none() | text(1, 32), "level": st.sampled_from(codec.LEVELS)},
    ),
    "summary": obj(
        {
            "v": st.just(1),
            "venue": slug,
            "tables": st.dictionaries(slug, obj({}, TABLE_ENTRY), max_size=6),
        },
        {"complete": st.booleans(), "count": u64, "online_count": u64, "pocketed_today": u64},
    ),
    "inplay": obj(
        {
            "v": st.just(1),
            "table": slug,
            "shot": u64,
            "start": i64,
            "pocketed": st.lists(
                obj(
                    {"pocket": st.sampled_from(codec.POCKETS), "t": i64},
                    {"ball": st.integers(0, 15)},
                ),
                max_size=64,
            ),
        },
        {"provisional": st.booleans()},
    ),
    "table_summary": obj(
        {"v": st.just(1), "table": slug},
        dict(
            TABLE_ENTRY,
            pockets=st.dictionaries(text(0, 8), json_value, max_size=5),
            sensors=obj(
                {},
                {
                    "health": st.sampled_from(["ok", "suspect", "unknown"]),
                    "suspect": st.lists(
                        obj(
                            {},
                            {
                                "kind": text(0, 8),
                                "item": text(0, 4),
                                "name": text(0, 20),
                                "silent_shots": st.integers(0, 200),
                                "effect": text(0, 40),
                            },
                        ),
                        max_size=6,
                    ),
                },
            ),
        ),
    ),
    "host": st.one_of(
        obj(
            {
                "v": st.just(1),
                "venue": slug,
                "state": st.just("online"),
                "period_s": st.integers(1, 3600),
            },
            {"seq": u64, "version": text(1, 32)},
        ),
        obj({"v": st.just(1), "venue": slug, "state": st.just("offline")}, {"seq": u64}),
    ),
    "referee_result": obj(
        {
            "v": st.just(1),
            "table": slug,
            "id": st.none() | text(1, 64),
            "status": st.sampled_from(codec.REFEREE_STATUSES),
        },
        {
            "input": text(1, 32),
            "error": text(1, 200),
            "facts": st.lists(text(1, 32), max_size=16),
            "rulings": st.lists(
                obj({"text": text(1, 300), "rule": st.none() | text(1, 32)}, {}), max_size=32
            ),
            "fen": text(1, 512),
        },
    ),
}
any_message = st.sampled_from(codec.KINDS).flatmap(lambda k: st.tuples(st.just(k), MESSAGES[k]))

# RB_HYPOTHESIS_EXAMPLES=5000 for a longer run
SETTINGS = settings(
    max_examples=int(os.environ.get("RB_HYPOTHESIS_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@SETTINGS
@given(any_message)
def test_encode_decode_round_trip(km):
    kind, msg = km
    data, err = outcome(codec.encode, kind, msg)
    assert err is None or err.code == "too large", err.reason  # only over MAX_PAYLOAD
    assume(err is None)
    assert isinstance(data, bytes) and len(data) <= codec.MAX_PAYLOAD
    assert codec.decode(kind, data) == msg
    assert codec.decode(kind, data.decode("utf-8")) == msg
    assert VALIDATORS[kind].is_valid(msg), list(VALIDATORS[kind].iter_errors(msg))[:1]


@SETTINGS
@given(any_message, slug, slug)
def test_decode_message_round_trip(km, venue, table):
    kind, msg = km
    node = msg.get("node", "n1")
    if kind in codec.VENUE_KINDS:
        msg["venue"], table, node = venue, None, None
    elif kind in codec.TABLE_KINDS or kind in ("referee_result", "table_summary"):
        node = None
        if "table" in msg:
            msg["table"] = table
    try:
        data = codec.encode(kind, msg)
    except codec.ProtocolError:
        assume(False)
    t = codec.topic(venue, table, kind, node)
    assert codec.parse_topic(t) == (venue, table, kind, node)
    assert codec.decode_message(t, data) == (kind, venue, table, node, msg)


@SETTINGS
@given(st.sampled_from(codec.KINDS), st.binary(max_size=300))
def test_decode_arbitrary_bytes_raises_only_protocol_error(kind, data):
    _, err = outcome(codec.decode, kind, data)
    assert err is None or err.code in codec.ERROR_CODES


@SETTINGS
@given(st.sampled_from(codec.KINDS), json_value)
def test_decode_arbitrary_json_raises_only_protocol_error(kind, value):
    _, err = outcome(codec.decode, kind, json.dumps(value))
    assert err is None or err.code in codec.ERROR_CODES


@SETTINGS
@given(st.text(max_size=80), st.binary(max_size=40))
def test_decode_message_arbitrary_topic(topic, data):
    _, err = outcome(codec.decode_message, topic, data)
    assert err is None or err.code in codec.ERROR_CODES


# values that both the codec and JSON Schema judge alike (no integral floats: JSON Schema
# counts 1.0 as an integer, the codec does not)
mutation_value = st.recursive(
    st.none()
    | st.booleans()
    | i64
    | st.integers(-2, 70)
    | u64
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer())
    | text(0, 40)
    | slug
    | st.sampled_from(codec.POCKETS + codec.RAILS + codec.EVENT_KINDS),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(text(0, 8), c, max_size=3),
    max_leaves=8,
)
BEYOND_SCHEMA = ("not above", "used twice", "is also rail", "before start")


@SETTINGS
@given(any_message, st.data())
def test_codec_and_schema_agree_on_mutations(km, data):
    kind, msg = km
    target = msg
    if kind == "events" and data.draw(st.booleans()):
        target = data.draw(st.sampled_from(msg["events"]))
    key = data.draw(st.sampled_from(sorted(target)))
    if data.draw(st.integers(0, 3)) == 0:
        del target[key]
    else:
        target[key] = data.draw(mutation_value)
    try:
        codec.validate(kind, msg)
        codec_ok = True
    except codec.ProtocolError as e:
        if any(s in e.reason for s in BEYOND_SCHEMA):
            return
        codec_ok = False
    assert codec_ok == VALIDATORS[kind].is_valid(msg), (kind, key, msg)


@SETTINGS
@given(events_msg(), st.data())
def test_unknown_kinds_never_change_validation_of_the_rest(msg, data):
    """Additive change (protocol/SPEC.md): events of kinds the codec does not know, inserted
    anywhere in a batch, neither refuse a good batch nor excuse a bad one; only seq, t and the
    kind name of the new events are checked."""
    known = msg["events"]
    del known[codec.MAX_EVENTS - 8 :]  # room for the inserted events
    if data.draw(st.booleans()):  # maybe break one known event in a way only its kind checks
        bad = data.draw(st.sampled_from(known))
        bad["kind"] = data.draw(st.sampled_from(["drop", "rail", "jam", "lost"]))
        for name in ("pocket", "rail", "amp", "n"):
            bad.pop(name, None)
    _, err = outcome(codec.validate, "events", msg)
    # insert unknown-kind events at random places, then renumber seq to stay increasing
    events = list(known)
    for _ in range(data.draw(st.integers(1, 8))):
        at = data.draw(st.integers(0, len(events)))
        events.insert(at, data.draw(unknown_event(0)))
    for i, e in enumerate(events):
        e["seq"] = i
    mixed = dict(msg, events=events)
    _, err2 = outcome(codec.validate, "events", mixed)
    assert (err is None) == (err2 is None), (err, err2)
    if err is not None:
        assert err.code == err2.code
        # the same event is blamed, under its new index
        culprit = int(err.reason.split("events[")[1].split("]")[0])
        assert f"events[{events.index(known[culprit])}]" in err2.reason
    else:
        assert [e for e in mixed["events"] if e["kind"] in codec.EVENT_KINDS] == known
