"""Write protocol/schemas/<kind>.schema.json (JSON Schema draft 2020-12) for protocol v1.

    .venv/bin/python protocol/schemas/make_schemas.py

Written from SPEC.md independently of the codec's tables; tests/protocol/test_proto_schemas.py
checks both against the same vectors and that the files are this script's current output.
What a schema cannot say (and only the codec checks): a payload's byte size, JSON syntax,
that an integer has no fraction or exponent (JSON Schema accepts 1.0 as an integer),
strictly increasing `seq`, distinct config channels (and a strike channel that is no
rail's), `end >= start`, topics.
Patterns end in `(?!\n)$` because Python's `re` (used by the jsonschema package) lets `$`
match before a trailing newline; in ECMA-262 regexes the lookahead is a no-op.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = "https://railbird.invalid/protocol/v1/"

U64 = {"type": "integer", "minimum": 0, "maximum": 2**64 - 1}
I64 = {"type": "integer", "minimum": -(2**63), "maximum": 2**63 - 1}
SLUG = {"type": "string", "pattern": r"^[a-z0-9][a-z0-9-]{0,31}(?!\n)$"}
POCKET = {"enum": ["HL", "HR", "SL", "SR", "FL", "FR"]}
RAIL = {"enum": ["H", "F", "LH", "LF", "RH", "RF"]}
# the rules engine's games (railbird.rules GAMES); tests/codebase/test_vocabulary.py checks
GAME = {"enum": ["10-ball", "14.1", "9-ball", "8-ball"]}
AMP = {"type": "integer", "minimum": 0, "maximum": 4095}
V = {"const": 1, "description": "protocol major version"}
# an RSA-3072 signature: 384 bytes as lowercase hex (SPEC.md "Signed commands")
SIG = {"type": "string", "pattern": r"^[0-9a-f]{768}(?!\n)$"}


def uint(lo=0, hi=2**64 - 1, **kw):
    d = {"type": "integer", "minimum": lo, "maximum": hi}
    d.update(kw)
    return d


def string(lo, hi, **kw):
    d = {"type": "string", "minLength": lo, "maxLength": hi}
    d.update(kw)
    return d


def nullable(schema):
    return {"anyOf": [schema, {"type": "null"}]}


def obj(required, properties, **kw):
    d = {"type": "object", "required": required, "properties": properties}
    d.update(kw)
    return d


# `table_summary.sensors`: the table's sensor health (docs/shots.md "Sensor health"); the
# codec checks only that it is an object, as `pockets`
SENSORS = {
    "type": "object",
    "description": "the table's sensor health from its last shots: ok, suspect (the silent "
    "channels, each with what it changes in the shots) or unknown (too few shots yet)",
    "properties": {
        "health": {"enum": ["ok", "suspect", "unknown"]},
        "suspect": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "kind": {"type": "string"},
                    "item": {"type": "string"},
                    "name": {"type": "string"},
                    "silent_shots": {"type": "integer", "minimum": 0},
                    "effect": {"type": "string"},
                },
            },
        },
    },
}
# a table's entry of the venue summary; also the fields of `table_summary`
TABLE_ENTRY = {
    "game": nullable(GAME),
    "scores": {"type": "array", "maxItems": 8, "items": I64},
    "at_table": nullable(U64),
    "online": {"type": "boolean"},
    "pocketed_today": U64,
}


def when(field, value, then):
    return {"if": {"properties": {field: {"const": value}}, "required": [field]}, "then": then}


KNOWN_KINDS = ["drop", "cue", "rail", "jam", "lost", "strike", "ball"]
EVENT = obj(
    ["seq", "t", "kind"],
    {
        "seq": dict(
            U64, description="sequence number within the boot, strictly increasing in a batch"
        ),
        "t": dict(U64, description="node time of the event, microseconds since boot"),
        "kind": {
            "type": "string",
            "pattern": r"^[a-z0-9_]{1,32}(?!\n)$",
            "description": "an event kind; receivers count and skip kinds they do not know "
            "(known in v1: " + " ".join(KNOWN_KINDS) + ")",
        },
    },
    allOf=[
        # the optional fields are checked for the known kinds only: a kind added later
        # defines its own
        {
            "if": {"properties": {"kind": {"enum": KNOWN_KINDS}}, "required": ["kind"]},
            "then": {
                "properties": {
                    "pocket": POCKET,
                    "rail": RAIL,
                    "amp": AMP,
                    "dur": U64,
                    "n": uint(1),
                    "ball": uint(0, 15),
                    "conf": uint(0, 100),
                    "rgb": {
                        "type": "array",
                        "minItems": 3,
                        "maxItems": 3,
                        "items": uint(0, 2000),
                        "description": "ball: the pass's median reflectance x 1000, R G B "
                        "(hardware/colour.md)",
                    },
                }
            },
        },
        when("kind", "drop", {"required": ["pocket"]}),
        when("kind", "rail", {"required": ["rail", "amp"]}),
        when("kind", "jam", {"required": ["pocket", "dur"]}),
        when("kind", "ball", {"required": ["ball", "conf"]}),
        when(
            "kind",
            "lost",
            {
                "required": ["n"],
                "oneOf": [
                    {"required": ["pocket"], "not": {"required": ["rail"]}},
                    {"required": ["rail"], "not": {"required": ["pocket"]}},
                ],
            },
        ),
    ],
)

SCHEMAS = {
    "events": (
        "A batch of sensor events (node -> host)",
        obj(
            ["v", "node", "boot", "events"],
            {
                "v": V,
                "node": SLUG,
                "boot": U64,
                "events": {"type": "array", "minItems": 1, "maxItems": 64, "items": EVENT},
                "wm": dict(
                    U64,
                    description="watermark, node time: every event of this boot with t < wm "
                    "is in this batch or an earlier one",
                ),
            },
        ),
    ),
    "birth": (
        "Node birth, retained, once per boot",
        obj(
            ["v", "node", "boot", "fw", "reset", "config_hash", "pinmap"],
            {
                "v": V,
                "node": SLUG,
                "boot": U64,
                "fw": string(1, 32),
                "reset": {"enum": ["power", "hard", "wdt", "deepsleep", "soft", "unknown"]},
                "config_hash": {"type": "string", "pattern": r"^[0-9a-f]{8}(?!\n)$"},
                "pinmap": SLUG,
                "caps": {"type": "array", "maxItems": 32, "items": string(1, 32)},
            },
        ),
    ),
    "status": (
        "Node status, retained; also the last will (state offline)",
        obj(
            ["v", "node", "boot", "state"],
            {
                "v": V,
                "node": SLUG,
                "boot": U64,
                "state": {"enum": ["online", "offline"]},
                "uptime_us": U64,
                "heap_free": U64,
                "rssi": I64,
                "queue": U64,
                "spill": U64,
                "counters": {
                    "type": "object",
                    "maxProperties": 64,
                    "propertyNames": {"minLength": 1, "maxLength": 32},
                    "additionalProperties": U64,
                },
                "config_rev": U64,
                "config_error": nullable(string(0, 200)),
                "callback_error": nullable(
                    string(
                        0,
                        200,
                        description="the last handler error counted in counters.callback_errors",
                    )
                ),
                "sync": nullable(
                    obj(
                        ["offset_us", "delay_us", "uncertainty_us", "samples"],
                        {"offset_us": I64, "delay_us": U64, "uncertainty_us": U64, "samples": U64},
                    )
                ),
                "fw": string(1, 32, description="firmware version the node runs"),
                "net": nullable(
                    obj(
                        ["state"],
                        {
                            "state": string(1, 32, description="trial done reverted failed"),
                            "id": string(1, 64),
                            "host": string(1, 64),
                            "port": uint(1, 65535),
                            "ssid": string(0, 32),
                            "error": nullable(string(0, 200)),
                        },
                    )
                ),
                "update": nullable(
                    obj(
                        ["state"],
                        {
                            "state": string(
                                1,
                                32,
                                description="downloading verifying installing rebooting trial "
                                "done failed rolled_back (receivers treat others as in progress)",
                            ),
                            "id": string(1, 64),
                            "version": string(1, 32),
                            "bytes": U64,
                            "total": U64,
                            "error": nullable(string(0, 200)),
                        },
                    )
                ),
            },
            allOf=[when("state", "online", {"required": ["uptime_us"]})],
        ),
    ),
    "config": (
        "Node configuration, retained (host/installer -> node)",
        obj(
            ["v", "rev", "pockets", "rails"],
            {
                "v": V,
                "rev": U64,
                "pockets": {
                    "type": "array",
                    "maxItems": 16,
                    "items": obj(["ch", "pocket"], {"ch": U64, "pocket": POCKET}),
                },
                "rails": {
                    "type": "array",
                    "maxItems": 16,
                    "items": obj(
                        ["ch", "rail", "threshold", "refractory_us"],
                        {"ch": U64, "rail": RAIL, "threshold": AMP, "refractory_us": U64},
                    ),
                },
                "cue_ch": nullable(U64),
                "strike": nullable(
                    obj(
                        ["ch"],
                        {
                            "ch": U64,
                            "threshold": dict(AMP, default=0),
                            "refractory_us": dict(U64, default=30000),
                        },
                    )
                ),
                "colour": nullable(
                    obj(
                        ["rgb"],
                        {
                            "rgb": {
                                "type": "array",
                                "minItems": 27,
                                "maxItems": 27,
                                "items": uint(0, 2000),
                                "description": "reflectance x 1000 of white, 1..7 and "
                                "black, R G B each (hardware/colour.md)",
                            }
                        },
                    )
                ),
                "debounce_us": dict(U64, default=2000),
                "jam_us": dict(U64, default=2000000),
                "status_period_s": uint(1, 3600, default=30),
                "batch_max": uint(1, 64, default=32),
                "batch_linger_ms": dict(U64, default=20),
                "sig": dict(SIG, description="the venue key's signature (Signed commands)"),
            },
        ),
    ),
    "update": (
        "Over-the-air update command (host -> node)",
        obj(
            ["v", "id", "version", "url", "manifest_sha256"],
            {
                "v": V,
                "id": string(1, 64),
                "version": string(1, 32),
                "url": string(
                    8,
                    200,
                    pattern=r"^http://.*/(?!\n)$",
                    description="base URL of the firmware set; files are at url + path",
                ),
                "manifest_sha256": {"type": "string", "pattern": r"^[0-9a-f]{64}(?!\n)$"},
                "trial_s": uint(10, 3600, default=300),
                "trial_boots": uint(1, 10, default=3),
                "sig": dict(SIG, description="the venue key's signature (Signed commands)"),
                "downgrade": obj(
                    ["boot", "from"],
                    {"boot": U64, "from": string(1, 32)},
                    description="a downgrade the owner forced: the node's boot and the "
                    "version it runs, signed with the rest",
                ),
            },
        ),
    ),
    "net": (
        "Network change command (host -> node): broker address and Wi-Fi, tried and "
        "reverted when the broker is not reached within trial_s",
        obj(
            ["v", "id"],
            {
                "v": V,
                "id": string(1, 64),
                "broker": obj(
                    ["host"],
                    {
                        "host": string(1, 64, description="a name (mDNS, DHCP) or address"),
                        "port": uint(1, 65535, default=1883),
                        "addr": string(1, 64, description="fallback address for the name"),
                    },
                ),
                "wifi": obj(
                    ["ssid", "password"], {"ssid": string(1, 32), "password": string(0, 64)}
                ),
                "trial_s": uint(10, 600, default=60),
            },
            anyOf=[{"required": ["broker"]}, {"required": ["wifi"]}],
        ),
    ),
    "sync_req": (
        "Time sync request (node -> host)",
        obj(
            ["v", "node", "boot", "id", "t1"],
            {"v": V, "node": SLUG, "boot": U64, "id": U64, "t1": U64},
        ),
    ),
    "sync_resp": (
        "Time sync response (host -> node)",
        obj(["v", "id", "t1", "t2", "t3"], {"v": V, "id": U64, "t1": U64, "t2": U64, "t3": U64}),
    ),
    "sync_result": (
        "Time sync result, all four timestamps (node -> host)",
        obj(
            ["v", "node", "boot", "id", "t1", "t2", "t3", "t4"],
            {
                "v": V,
                "node": SLUG,
                "boot": U64,
                "id": U64,
                "t1": U64,
                "t2": U64,
                "t3": U64,
                "t4": U64,
            },
        ),
    ),
    "referee": (
        "Referee input (console -> host)",
        obj(
            ["v", "input"],
            {
                "v": V,
                "input": obj(["type"], {"type": string(1, 32)}),
                "id": string(1, 64),
                "by": string(1, 32),
                "token": string(1, 128),
                "rev": string(1, 32),
            },
        ),
    ),
    "shot": (
        "A finished shot (host -> displays)",
        obj(
            ["v", "table", "n", "start", "end", "pocketed", "rails"],
            {
                "v": V,
                "table": SLUG,
                "n": U64,
                "start": I64,
                "end": I64,
                "pocketed": {
                    "type": "array",
                    "maxItems": 64,
                    "items": obj(
                        ["ball", "pocket", "t", "source"],
                        {
                            "ball": nullable(uint(0, 15)),
                            "pocket": POCKET,
                            "t": I64,
                            "source": {"enum": ["sensed", "inferred", "referee"]},
                            "conf": uint(0, 100),
                        },
                    ),
                },
                "rails": {
                    "type": "array",
                    "maxItems": 1024,
                    "items": obj(["rail", "t", "amp"], {"rail": RAIL, "t": I64, "amp": AMP}),
                },
                "distinct_rails": uint(0, 6),
                "object_balls_to_rail": uint(0, 15),
                "rails_total": U64,
                "warnings": {"type": "array", "maxItems": 32, "items": string(1, 200)},
            },
        ),
    ),
    "state": (
        "Game state of a table, retained (host -> displays)",
        obj(
            ["v", "table", "game", "state"],
            {
                "v": V,
                "table": SLUG,
                "game": GAME,
                "state": {"type": "object"},
                "fen": string(1, 512),
                "rev": string(1, 32),
                "t": I64,
            },
        ),
    ),
    "inplay": (
        "The shot still in play, provisional, retained; cleared (an empty retained message) "
        "when the shot closes (host -> displays)",
        obj(
            ["v", "table", "shot", "start", "pocketed"],
            {
                "v": V,
                "table": SLUG,
                "shot": U64,
                "start": I64,
                "pocketed": {
                    "type": "array",
                    "maxItems": 64,
                    "items": obj(
                        ["pocket", "t"], {"pocket": POCKET, "t": I64, "ball": uint(0, 15)}
                    ),
                },
                "provisional": {"type": "boolean"},
            },
        ),
    ),
    "announce": (
        "Announcement (host -> displays)",
        obj(
            ["v", "table", "text"],
            {
                "v": V,
                "table": SLUG,
                "text": string(1, 120),
                "rule": nullable(string(1, 32)),
                "level": {"enum": ["info", "foul", "win"]},
            },
        ),
    ),
    "summary": (
        "Venue summary (the venue index), retained (host -> displays)",
        obj(
            ["v", "venue", "tables"],
            {
                "v": V,
                "venue": SLUG,
                "tables": {
                    "type": "object",
                    "maxProperties": 256,
                    "propertyNames": SLUG,
                    "additionalProperties": obj([], TABLE_ENTRY),
                },
                "complete": {"type": "boolean"},
                "count": U64,
                "online_count": U64,
                "pocketed_today": U64,
            },
        ),
    ),
    "table_summary": (
        "One table's summary, retained (host -> displays)",
        obj(
            ["v", "table"],
            dict(
                {"v": V, "table": SLUG},
                **TABLE_ENTRY,
                pockets={"type": "object"},
                sensors=SENSORS,
            ),
        ),
    ),
    "host": (
        "Host liveness, retained; a heartbeat every period_s, and the host's last will "
        "(state offline)",
        obj(
            ["v", "venue", "state"],
            {
                "v": V,
                "venue": SLUG,
                "state": {"enum": ["online", "offline"]},
                "period_s": uint(1, 3600),
                "seq": U64,
                "version": string(1, 32),
            },
            allOf=[when("state", "online", {"required": ["period_s"]})],
        ),
    ),
    "referee_result": (
        "The host's answer to one referee message (host -> referee consoles)",
        obj(
            ["v", "table", "id", "status"],
            {
                "v": V,
                "table": SLUG,
                "id": nullable(string(1, 64)),
                "status": {"enum": ["ok", "pending", "duplicate", "refused", "stale", "rejected"]},
                "input": string(1, 32),
                "error": string(1, 200),
                "facts": {"type": "array", "maxItems": 16, "items": string(1, 32)},
                "rulings": {
                    "type": "array",
                    "maxItems": 32,
                    "items": obj(
                        ["text", "rule"],
                        {"text": string(1, 300), "rule": nullable(string(1, 32))},
                    ),
                },
                "fen": string(1, 512),
                "rev": string(1, 32),
            },
        ),
    ),
}


def render():
    out = {}
    for kind, (title, body) in SCHEMAS.items():
        doc = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": BASE + kind + ".schema.json",
            "title": "railbird v1 " + kind,
            "description": title
            + ". Unknown fields are allowed and ignored. See protocol/SPEC.md.",
        }
        doc.update(body)
        out[kind + ".schema.json"] = json.dumps(doc, indent=2) + "\n"
    return out


if __name__ == "__main__":
    for name, text in render().items():
        with open(os.path.join(HERE, name), "w") as f:
            f.write(text)
    print(f"wrote {len(SCHEMAS)} schemas")
