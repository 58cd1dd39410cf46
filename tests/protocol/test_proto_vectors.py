"""The codec against every vector of protocol/vectors/, under CPython and real MicroPython."""

import json
import re
from pathlib import Path

import pytest

from rbproto import codec

REPO = Path(__file__).resolve().parents[2]
PROTOCOL = REPO / "protocol"
VECTORS = PROTOCOL / "vectors"
VALID = json.loads((VECTORS / "valid.json").read_text("utf-8"))
INVALID = json.loads((VECTORS / "invalid.json").read_text("utf-8"))


def payload_of(v):
    return bytes.fromhex(v["payload_hex"]) if "payload_hex" in v else v["payload"].encode("utf-8")


@pytest.mark.parametrize("v", VALID, ids=[v["name"] for v in VALID])
def test_valid_vector(v):
    kind, payload = v["kind"], payload_of(v)
    assert codec.decode(kind, payload) == v["expect"]
    assert codec.decode(kind, v["payload"]) == v["expect"]  # str payloads too
    assert codec.validate(kind, v["expect"]) is v["expect"]
    encoded = codec.encode(kind, v["expect"])
    assert codec.decode(kind, encoded) == v["expect"]
    if v["canonical"]:
        assert encoded == payload
    got = codec.decode_message(v["topic"], payload)
    venue, table, _k, node = codec.parse_topic(v["topic"])
    assert got == (kind, venue, table, node, v["expect"])
    assert codec.topic(venue, table, kind, node) == v["topic"]


@pytest.mark.parametrize("v", INVALID, ids=[v["name"] for v in INVALID])
def test_invalid_vector(v):
    payload = payload_of(v)
    fn, first = (codec.decode_message, v["topic"]) if "topic" in v else (codec.decode, v["kind"])
    with pytest.raises(codec.ProtocolError) as info:
        fn(first, payload)
    e = info.value
    assert e.code == v["error"], e.reason
    assert v["reason_contains"] in e.reason
    assert str(e) == e.reason and e.reason.startswith(e.code + ":")
    assert isinstance(e, ValueError)


def test_vectors_cover_every_kind_and_error_code():
    assert {v["kind"] for v in VALID} == set(codec.KINDS)
    assert {v["kind"] for v in INVALID if v["kind"]} == set(codec.KINDS)
    assert {v["error"] for v in INVALID} == set(codec.ERROR_CODES)
    names = [v["name"] for v in VALID + INVALID]
    assert len(names) == len(set(names)), "vector names must be unique"


def test_vector_files_are_generator_output():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_vectors", VECTORS / "make_vectors.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    valid, invalid = mod.render()
    assert json.loads(json.dumps(valid)) == VALID, "run protocol/vectors/make_vectors.py"
    assert json.loads(json.dumps(invalid)) == INVALID, "run protocol/vectors/make_vectors.py"


@pytest.mark.micropython
def test_vectors_under_real_micropython(micropython):
    res = micropython(REPO / "tests" / "protocol" / "mp_vectors.py", paths=[PROTOCOL], timeout=120)
    assert res.returncode == 0, res.stderr + res.stdout
    m = re.search(
        r"^VECTORS valid=(\d+)/(\d+) invalid=(\d+)/(\d+) skipped=(\d+) failures=(\d+)$",
        res.stdout,
        re.M,
    )
    assert m, res.stdout + res.stderr
    ok_v, n_v, ok_i, n_i, skipped, failures = map(int, m.groups())
    assert failures == 0, res.stdout
    assert (ok_v, n_v) == (len(VALID), len(VALID))
    assert ok_i == n_i and n_i + skipped == len(INVALID)
    assert skipped == sum(1 for v in INVALID if v.get("cpython_only"))
    # RAM on the node: importing the codec (compiled from source here) stays small
    imp = int(re.search(r"^IMPORT_BYTES (\d+)$", res.stdout, re.M).group(1))
    assert imp < 40_000, imp
