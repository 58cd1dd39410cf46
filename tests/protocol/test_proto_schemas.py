"""JSON schemas (draft 2020-12) agree with the vectors and the codec."""

import importlib.util
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from rbproto import codec

SCHEMAS = Path(__file__).resolve().parents[2] / "protocol" / "schemas"
VECTORS = SCHEMAS.parent / "vectors"
VALID = json.loads((VECTORS / "valid.json").read_text("utf-8"))
INVALID = json.loads((VECTORS / "invalid.json").read_text("utf-8"))


def validator(kind):
    schema = json.loads((SCHEMAS / f"{kind}.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


VALIDATORS = {k: validator(k) for k in codec.KINDS}


def test_one_schema_per_kind():
    assert sorted(p.name for p in SCHEMAS.glob("*.schema.json")) == sorted(
        f"{k}.schema.json" for k in codec.KINDS
    )


@pytest.mark.parametrize("v", VALID, ids=[v["name"] for v in VALID])
def test_valid_vector_matches_schema(v):
    errors = [e.message for e in VALIDATORS[v["kind"]].iter_errors(v["expect"])]
    assert not errors


NOT_JSON = object()


def _no_constant(c):
    raise ValueError(c)


def _parse(v):
    if "payload_hex" in v:
        return NOT_JSON
    try:
        return json.loads(v["payload"], parse_constant=_no_constant)
    except ValueError:
        return NOT_JSON


@pytest.mark.parametrize(
    "v", [v for v in INVALID if v["kind"]], ids=[v["name"] for v in INVALID if v["kind"]]
)
def test_invalid_vector_against_schema(v):
    inst = _parse(v)
    if v["schema"]:
        assert inst is not NOT_JSON
        assert not VALIDATORS[v["kind"]].is_valid(inst), "schema should reject this too"
    elif inst is not NOT_JSON:
        # marked as beyond a schema (size, int-vs-float, ordering, topics ...): the schema
        # indeed accepts it, so the flag is accurate
        assert VALIDATORS[v["kind"]].is_valid(inst)


def test_schema_files_are_generator_output():
    spec = importlib.util.spec_from_file_location("make_schemas", SCHEMAS / "make_schemas.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name, text in mod.render().items():
        assert (SCHEMAS / name).read_text() == text, (
            f"run protocol/schemas/make_schemas.py ({name})"
        )
