"""Write protocol/vectors/valid.json and invalid.json (CPython; run after editing).

    .venv/bin/python protocol/vectors/make_vectors.py

Every vector is written here by hand (expected results are literals, never codec output);
tests/protocol/test_proto_vectors.py checks that the JSON files are this script's current output.

valid.json:   {"name", "kind", "topic", "payload" (exact text, UTF-8), "expect" (decoded
               dict), "canonical" (payload is byte-exact what CPython `encode(kind, expect)`
               gives)}
invalid.json: {"name", "kind" (null for a topic that names no kind), "topic" (optional:
               decode with decode_message), "payload" or "payload_hex" (non-UTF-8 bytes),
               "error" (reason code), "reason_contains", "schema" (true when the JSON schema
               alone also rejects the payload; false for byte size, JSON syntax, int-vs-float,
               ordering, cross-field checks and topics), "cpython_only" (optional: MicroPython's
               json is lenient about this malformed JSON)}
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
U64 = 2**64 - 1
VENUE, TABLE, NODE = "hall-1", "t1", "t1-node"


def compact(msg):
    return json.dumps(msg, separators=(",", ":"))


def topic_of(kind, node=NODE):
    root = "railbird/v1/" + VENUE
    if kind in ("summary", "host"):
        return root + "/" + kind
    if kind in ("referee", "shot", "state", "announce", "inplay"):
        return root + "/" + TABLE + "/" + kind
    if kind == "referee_result":
        return root + "/" + TABLE + "/referee/result"
    if kind == "table_summary":
        return root + "/" + TABLE + "/summary"
    leaf = {"sync_req": "sync/req", "sync_resp": "sync/resp", "sync_result": "sync/result"}
    return root + "/" + TABLE + "/node/" + node + "/" + leaf.get(kind, kind)


INPLAY = {
    "v": 1,
    "table": TABLE,
    "shot": 7,
    "start": 41_000_000,
    "pocketed": [{"pocket": "FR", "t": 41_400_000}, {"pocket": "HL", "t": 42_100_000, "ball": 0}],
    "provisional": True,
}

VALID = []
INVALID = []


def ok(name, kind, msg, payload=None):
    canonical = payload is None
    if payload is None:
        payload = compact(msg)
    VALID.append(
        {
            "name": name,
            "kind": kind,
            "topic": topic_of(kind, msg.get("node", NODE)),
            "payload": payload,
            "expect": msg,
            "canonical": canonical,
        }
    )


def bad(
    name, kind, payload, error, contains, schema=True, topic=None, hexa=False, cpython_only=False
):
    v = {"name": name, "kind": kind}
    if topic is not None:
        v["topic"] = topic
    if not isinstance(payload, str) and not hexa:
        payload = compact(payload)
    v["payload_hex" if hexa else "payload"] = payload
    v.update({"error": error, "reason_contains": contains, "schema": schema})
    if cpython_only:
        v["cpython_only"] = True
    INVALID.append(v)


# a colour station's table (SPEC.md config `colour`): the nominal reflectances x 1000 of
# white, 1..7 and black, R G B each (firmware/rbnode/colour.py NOMINAL_RGB)
COLOUR_RGB = [800, 800, 780, 850, 550, 30, 30, 100, 400, 600, 40, 50, 140, 50, 220, 850, 220, 20]
COLOUR_RGB += [30, 250, 100, 200, 30, 30, 40, 40, 40]


def with_(msg, **kw):
    m = dict(msg)
    m.update(kw)
    return m


def without(msg, *names):
    return {k: v for k, v in msg.items() if k not in names}


def ev(**kw):
    return kw


# --- base messages ------------------------------------------------------------------
UPDATE = {
    "v": 1,
    "id": "u-20260101-1",
    "version": "rbnode-0.1.0+9f86d081",
    "url": "http://192.168.1.10:8270/fw/rbnode-0.1.0+9f86d081/",
    "manifest_sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "trial_s": 300,
    "trial_boots": 3,
}
NET = {
    "v": 1,
    "id": "n-20260101-1",
    "broker": {"host": "railbird.local", "port": 1883, "addr": "192.168.1.10"},
    "wifi": {"ssid": "club-wifi", "password": "new secret"},
    "trial_s": 60,
}
EVENTS = {
    "v": 1,
    "node": NODE,
    "boot": 7,
    "events": [
        ev(seq=0, t=1500, kind="drop", pocket="HL", dur=8200),
        ev(seq=1, t=2100, kind="cue"),
        ev(seq=2, t=3000, kind="rail", rail="LF", amp=2048),
        ev(seq=3, t=4000, kind="jam", pocket="FR", dur=2000000),
        ev(seq=5, t=5000, kind="lost", pocket="SL", n=2),
        ev(seq=6, t=5000, kind="lost", rail="H", n=1),
    ],
}
BIRTH = {
    "v": 1,
    "node": NODE,
    "boot": 7,
    "fw": "0.1.0+g1a2b3c",
    "reset": "power",
    "config_hash": "0badf00d",
    "pinmap": "devkit-v1",
    "caps": ["pcnt", "cue"],
}
STATUS = {
    "v": 1,
    "node": NODE,
    "boot": 7,
    "state": "online",
    "uptime_us": 93000000,
    "heap_free": 81234,
    "rssi": -61,
    "queue": 3,
    "spill": 0,
    "counters": {
        "events": 120,
        "dropped_ram": 0,
        "dropped_spill": 0,
        "spilled": 0,
        "resent": 4,
        "lost_edges": 1,
        "jams": 0,
        "reconnects": 2,
        "irq_overflow": 0,
        "config_rejected": 0,
    },
    "config_rev": 3,
    "config_error": None,
    "sync": {"offset_us": -1234567, "delay_us": 850, "uncertainty_us": 425, "samples": 16},
}
OFFLINE = {"v": 1, "node": NODE, "boot": 7, "state": "offline"}
CONFIG = {
    "v": 1,
    "rev": 3,
    "pockets": [
        {"ch": 0, "pocket": "HL"},
        {"ch": 1, "pocket": "HR"},
        {"ch": 2, "pocket": "SL"},
        {"ch": 3, "pocket": "SR"},
        {"ch": 4, "pocket": "FL"},
        {"ch": 5, "pocket": "FR"},
    ],
    "rails": [
        {"ch": 0, "rail": "H", "threshold": 300, "refractory_us": 15000},
        {"ch": 1, "rail": "F", "threshold": 4095, "refractory_us": 0},
    ],
    "cue_ch": 6,
    "debounce_us": 2000,
    "jam_us": 2000000,
    "status_period_s": 30,
    "batch_max": 32,
    "batch_linger_ms": 20,
}
SYNC_REQ = {"v": 1, "node": NODE, "boot": 7, "id": 41, "t1": 5000000}
SYNC_RESP = {"v": 1, "id": 41, "t1": 5000000, "t2": 7100000200, "t3": 7100000260}
SYNC_RESULT = {
    "v": 1,
    "node": NODE,
    "boot": 7,
    "id": 41,
    "t1": 5000000,
    "t2": 7100000200,
    "t3": 7100000260,
    "t4": 5000900,
}
REFEREE = {
    "v": 1,
    "input": {"type": "call", "ball": 1, "pocket": "FR"},
    "id": "c1-0042",
    "by": "console-1",
    "token": "s3cret-token",
}
SHOT = {
    "v": 1,
    "table": TABLE,
    "n": 12,
    "start": 61000000,
    "end": 64250000,
    "pocketed": [
        {"ball": 3, "pocket": "SL", "t": 61900000, "source": "sensed"},
        {"ball": None, "pocket": "FR", "t": 62000000, "source": "sensed"},
        {"ball": 0, "pocket": "HL", "t": 62100000, "source": "inferred"},
    ],
    "rails": [{"rail": "H", "t": 61200000, "amp": 1500}, {"rail": "RF", "t": 61400000, "amp": 0}],
    "distinct_rails": 2,
    "object_balls_to_rail": 1,
    "warnings": ["cue ball paired late"],
}
STATE = {
    "v": 1,
    "table": TABLE,
    "game": "9-ball",
    "state": {"players": ["A", "B"], "turn": 0, "on_table": [1, 2, 9]},
    "fen": "9-ball 1,2,9 A:0 B:0 turn=A",
    "t": 64250000,
}
ANNOUNCE = {
    "v": 1,
    "table": TABLE,
    "text": "Foul: scratch - ball in hand",
    "rule": "6.3",
    "level": "foul",
}
SUMMARY = {
    "v": 1,
    "venue": VENUE,
    "tables": {
        "t1": {
            "game": "9-ball",
            "scores": [3, 5],
            "at_table": 1,
            "online": True,
            "pocketed_today": 212,
        },
        "t2": {"game": None, "scores": [], "at_table": None, "online": False, "pocketed_today": 0},
    },
}
# the venue index of a venue too big to list its tables: totals only, tables on their topics
INDEX = {
    "v": 1,
    "venue": VENUE,
    "tables": {},
    "complete": False,
    "count": 1000,
    "online_count": 987,
    "pocketed_today": 51234,
}
TABLE_SUMMARY = {
    "v": 1,
    "table": TABLE,
    "game": "14.1",
    "scores": [-1, 87],
    "at_table": 0,
    "online": True,
    "pocketed_today": 3,
    "pockets": {
        "day": "2025-06-06",
        "total": 3,
        "cue": 1,
        "by_pocket": {"HL": 0, "HR": 1, "SL": 0, "SR": 0, "FL": 2, "FR": 0},
        "by_hour": {"21": 3},
        "by_game": [{"match": 1, "game": "14.1", "rack": 1, "balls": 3}],
    },
}
HOST = {"v": 1, "venue": VENUE, "state": "online", "period_s": 2, "seq": 41, "version": "0.9.0"}
RESULT = {
    "v": 1,
    "table": TABLE,
    "id": "cli-5f2a",
    "status": "ok",
    "input": "concede",
    "rulings": [
        {
            "text": "Bob concedes: Ann wins the match 2-1 (a concession loses the match)",
            "rule": "1.11",
        },
        {"text": "Ann wins the match", "rule": None},
    ],
    "fen": "g=10-ball p=Ann/Bob",
}


def build():
    # --- valid ------------------------------------------------------------------------
    ok("events: every event kind", "events", EVENTS)
    ok(
        "events: strike with and without amp, watermark",
        "events",
        {
            "v": 1,
            "node": NODE,
            "boot": 7,
            "events": [
                ev(seq=10, t=1000000, kind="strike", amp=3100),
                ev(seq=11, t=1180000, kind="strike"),
                ev(seq=12, t=1400000, kind="drop", pocket="FR", dur=40000),
            ],
            "wm": 1390000,
        },
    )
    ok(
        "events: ball reads from the colour station, paired by the host with drops",
        "events",
        {
            "v": 1,
            "node": NODE,
            "boot": 7,
            "events": [
                ev(seq=20, t=2000000, kind="drop", pocket="FL", dur=38000),
                ev(seq=21, t=2950000, kind="ball", ball=9, conf=97),
                ev(seq=22, t=3100000, kind="ball", ball=0, conf=40),
            ],
            "wm": 3100000,
        },
    )
    ok(
        "events: a ball read with the pass's median colour (caps colour_rgb)",
        "events",
        {
            "v": 1,
            "node": NODE,
            "boot": 7,
            "events": [
                ev(seq=30, t=5000000, kind="ball", ball=1, conf=95, rgb=[845, 545, 35]),
                ev(seq=31, t=5200000, kind="ball", ball=0, conf=88, rgb=[0, 2000, 795]),
            ],
        },
    )
    ok(
        "events: watermark u64 max",
        "events",
        {"v": 1, "node": NODE, "boot": 7, "events": [ev(seq=0, t=5, kind="cue")], "wm": U64},
    )
    ok(
        "events: unknown kind between drops is kept, its fields unchecked",
        "events",
        {
            "v": 1,
            "node": NODE,
            "boot": 7,
            "events": [
                ev(seq=0, t=100, kind="drop", pocket="HL"),
                ev(seq=1, t=200, kind="laser", pocket="XX", amp=-3, beam=[1, 2]),
                ev(seq=2, t=300, kind="drop", pocket="SR"),
            ],
        },
    )
    ok(
        "events: unknown kind names of 1 and 32 characters",
        "events",
        {
            "v": 1,
            "node": NODE,
            "boot": 7,
            "events": [
                ev(seq=0, t=1, kind="x"),
                ev(seq=1, t=2, kind="ball_spin_v2_" + "a" * 19),
            ],
        },
    )
    ok(
        "events: one drop, minimal",
        "events",
        {"v": 1, "node": NODE, "boot": 0, "events": [ev(seq=0, t=0, kind="drop", pocket="SR")]},
    )
    ok(
        "events: u64 max boot, seq and t",
        "events",
        {
            "v": 1,
            "node": NODE,
            "boot": U64,
            "events": [ev(seq=U64 - 1, t=U64 - 1, kind="cue"), ev(seq=U64, t=U64, kind="cue")],
        },
    )
    ok(
        "events: amp 0 and 4095, seq gaps",
        "events",
        {
            "v": 1,
            "node": NODE,
            "boot": 1,
            "events": [
                ev(seq=10, t=1, kind="rail", rail="RH", amp=0),
                ev(seq=20, t=2, kind="rail", rail="RF", amp=4095),
            ],
        },
    )
    ok(
        "events: full batch of 64 rail events",
        "events",
        {
            "v": 1,
            "node": NODE,
            "boot": 2,
            "events": [
                ev(
                    seq=i,
                    t=1000000 + 137 * i,
                    kind="rail",
                    rail=("H", "F", "LH", "LF", "RH", "RF")[i % 6],
                    amp=(i * 61) % 4096,
                )
                for i in range(64)
            ],
        },
    )
    ok(
        "events: unknown fields are kept and ignored",
        "events",
        {
            "v": 1,
            "node": NODE,
            "boot": 3,
            "x_future": {"a": [1.5, None]},
            "events": [ev(seq=0, t=9, kind="drop", pocket="FL", speed=1.25)],
        },
    )
    ok(
        "events: whitespace and key order do not matter",
        "events",
        {"v": 1, "node": NODE, "boot": 4, "events": [ev(seq=0, t=9, kind="cue")]},
        payload='{ "events" : [ { "kind": "cue", "t": 9, "seq": 0 } ],\n  "boot": 4, "node": "'
        + NODE
        + '", "v": 1 }\n',
    )
    ok(
        "events: node slug of 32 characters",
        "events",
        {
            "v": 1,
            "node": "n" + "0123456789-" * 2 + "abcdefghi",
            "boot": 1,
            "events": [ev(seq=0, t=1, kind="cue")],
        },
    )
    big = {"v": 1, "node": NODE, "boot": 1, "events": [ev(seq=0, t=1, kind="cue")], "pad": ""}
    big["pad"] = "x" * (16384 - len(compact(big)))
    assert len(compact(big)) == 16384
    ok("events: exactly MAX_PAYLOAD bytes", "events", big)

    ok("birth: full", "birth", BIRTH)
    ok(
        "birth: without caps, every reset cause",
        "birth",
        without(with_(BIRTH, reset="wdt"), "caps"),
    )
    ok("status: online, every field", "status", STATUS)
    ok(
        "status: online, minimal",
        "status",
        {"v": 1, "node": NODE, "boot": 7, "state": "online", "uptime_us": 0},
    )
    ok(
        "status: config refused, no sync yet",
        "status",
        with_(
            STATUS,
            config_error="pockets[2].ch: channel 9 not in pin map devkit-v1",
            sync=None,
            counters={},
        ),
    )
    ok("status: last will (offline)", "status", OFFLINE)
    ok(
        "status: firmware version, an update downloading",
        "status",
        with_(
            STATUS,
            fw="rbnode-0.1.0+9f86d081",
            update={
                "id": "u-20260101-1",
                "version": "rbnode-0.1.0+9f86d081",
                "state": "downloading",
                "bytes": 40960,
                "total": 151234,
                "error": None,
            },
        ),
    )
    ok(
        "status: an update rolled back",
        "status",
        with_(
            STATUS,
            fw="rbnode-0.1.0+1a2b3c4d",
            update={"state": "rolled_back", "error": "no healthy status within 300 s"},
        ),
    )
    ok("status: no update", "status", with_(STATUS, update=None))
    ok(
        "status: a message handler raised",
        "status",
        with_(
            STATUS,
            counters=dict(STATUS["counters"], callback_errors=1),
            callback_error="railbird/v1/hall-1/t1/node/t1-node/config: KeyError('ch')",
        ),
    )
    ok("update: full", "update", UPDATE)
    ok(
        "update: signed, a forced downgrade",
        "update",
        with_(UPDATE, sig="0f" * 384, downgrade={"boot": 12, "from": "rbnode-0.2.0"}),
    )
    ok(
        "update: minimal",
        "update",
        without(UPDATE, "trial_s", "trial_boots"),
    )
    ok("net: broker and wifi", "net", NET)
    ok("net: broker host only", "net", {"v": 1, "id": "n1", "broker": {"host": "railbird.local"}})
    ok(
        "net: wifi only, open network",
        "net",
        {"v": 1, "id": "n2", "wifi": {"ssid": "guest", "password": ""}},
    )
    ok(
        "status: a network change on trial",
        "status",
        with_(
            STATUS,
            net={
                "id": "n1",
                "state": "trial",
                "host": "railbird.local",
                "port": 1883,
                "ssid": "club-wifi",
                "error": None,
            },
        ),
    )
    ok("config: full", "config", CONFIG)
    ok("config: signed", "config", with_(CONFIG, sig="ab" * 384))
    ok("config: minimal, empty lists", "config", {"v": 1, "rev": 0, "pockets": [], "rails": []})
    ok(
        "config: limits",
        "config",
        with_(CONFIG, cue_ch=None, status_period_s=3600, batch_max=64, debounce_us=0),
    )
    ok(
        "config: strike sensor",
        "config",
        with_(CONFIG, strike={"ch": 2, "threshold": 1200, "refractory_us": 40000}),
    )
    ok("config: strike channel only", "config", with_(CONFIG, strike={"ch": 5}))
    ok("config: strike null", "config", with_(CONFIG, strike=None))
    ok("config: colour table", "config", with_(CONFIG, colour={"rgb": COLOUR_RGB}))
    ok("config: colour null", "config", with_(CONFIG, colour=None))
    ok("sync_req", "sync_req", SYNC_REQ)
    ok("sync_resp", "sync_resp", SYNC_RESP)
    ok("sync_resp: u64 max", "sync_resp", {"v": 1, "id": U64, "t1": U64, "t2": U64, "t3": U64})
    ok("sync_result", "sync_result", SYNC_RESULT)
    ok("referee: full", "referee", REFEREE)
    ok("referee: minimal", "referee", {"v": 1, "input": {"type": "push_out"}})
    ok("shot: full", "shot", SHOT)
    ok(
        "shot: minimal, start == end, negative table time",
        "shot",
        {"v": 1, "table": TABLE, "n": 0, "start": -5, "end": -5, "pocketed": [], "rails": []},
    )
    ok("state", "state", STATE)
    ok("state: minimal", "state", {"v": 1, "table": TABLE, "game": "14.1", "state": {}})
    ok("announce", "announce", ANNOUNCE)
    ok(
        "announce: non-ASCII text as raw UTF-8",
        "announce",
        {
            "v": 1,
            "table": TABLE,
            "text": "Faul: Weiße in der Tasche — Ball in der Hand",
            "rule": None,
            "level": "info",
        },
        payload='{"v":1,"table":"'
        + TABLE
        + '","text":"Faul: Weiße in der Tasche — Ball in der Hand","rule":null,"level":"info"}',
    )
    ok(
        "announce: \\u escapes",
        "announce",
        {"v": 1, "table": TABLE, "text": 'Spot the 10 \u2014 "ok"\n'},
        payload='{"v":1,"table":"' + TABLE + '","text":"Spot the 10 \\u2014 \\"ok\\"\\n"}',
    )
    ok("summary", "summary", SUMMARY)
    ok("summary: no tables", "summary", {"v": 1, "venue": VENUE, "tables": {}})
    ok("summary: with totals", "summary", with_(SUMMARY, complete=True, count=2, online_count=1))
    ok("summary: index of a venue too big to list its tables", "summary", INDEX)
    ok("table_summary", "table_summary", TABLE_SUMMARY)
    ok("inplay", "inplay", INPLAY)
    ok(
        "inplay: a shot just opened at its strike, nothing down yet",
        "inplay",
        {"v": 1, "table": TABLE, "shot": 7, "start": 0, "pocketed": []},
    )
    ok("table_summary: nothing known yet", "table_summary", {"v": 1, "table": TABLE})
    ok(
        "table_summary: sensors ok",
        "table_summary",
        with_(TABLE_SUMMARY, sensors={"health": "ok", "suspect": []}),
    )
    ok(
        "table_summary: a rail piezo suspect (additive sensors field)",
        "table_summary",
        with_(
            TABLE_SUMMARY,
            sensors={
                "health": "suspect",
                "suspect": [
                    {
                        "kind": "rail",
                        "item": "RF",
                        "name": "rail piezo RF",
                        "silent_shots": 40,
                        "effect": "its hits are missing from the rail facts",
                    }
                ],
            },
        ),
    )
    bad(
        "table_summary: sensors not an object",
        "table_summary",
        with_(TABLE_SUMMARY, sensors="ok"),
        "bad type",
        "sensors: expected object",
    )
    ok(
        "table_summary: no game set up",
        "table_summary",
        {"v": 1, "table": TABLE, "game": None, "scores": [], "at_table": None, "online": False},
    )
    ok("host: heartbeat", "host", HOST)
    ok("host: last will", "host", {"v": 1, "venue": VENUE, "state": "offline"})
    ok("referee_result: applied", "referee_result", RESULT)
    ok(
        "referee_result: refused, no id",
        "referee_result",
        {
            "v": 1,
            "table": TABLE,
            "id": None,
            "status": "refused",
            "error": "a match is in progress: finish, concede or abandon it first",
        },
    )
    ok(
        "referee_result: pending facts",
        "referee_result",
        {"v": 1, "table": TABLE, "id": "a", "status": "pending", "facts": ["first_contact"]},
    )
    ok(
        "referee_result: stale, with the revision now",
        "referee_result",
        {
            "v": 1,
            "table": TABLE,
            "id": "b",
            "status": "stale",
            "input": "confirm",
            "error": "stale: the table has changed since this was entered: look again",
            "rev": "9f86d081884c7d65",
        },
    )
    ok(
        "referee: made against a revision",
        "referee",
        {"v": 1, "input": {"type": "confirm"}, "id": "b", "rev": "9f86d081884c7d65"},
    )

    # --- invalid: payload level ---------------------------------------------------------
    ev1 = {"v": 1, "node": NODE, "boot": 1, "events": [ev(seq=0, t=1, kind="cue")]}
    bad("empty payload", "events", "", "bad json", "empty payload", schema=False)
    bad("whitespace only", "events", "  \n", "bad json", "bad json", schema=False)
    bad("truncated JSON", "events", compact(ev1)[:-3], "bad json", "bad json", schema=False)
    bad("trailing garbage", "events", compact(ev1) + " x", "bad json", "bad json", schema=False)
    bad(
        "NaN in an unknown field",
        "events",
        compact(ev1)[:-1] + ',"x":NaN}',
        "bad json",
        "bad json",
        schema=False,
    )
    bad(
        "not UTF-8",
        "events",
        "7b2276223a317d" + "ff",
        "bad json",
        "not UTF-8",
        schema=False,
        hexa=True,
    )
    bad(
        "trailing comma (strict JSON only)",
        "events",
        compact(ev1)[:-1] + ",}",
        "bad json",
        "bad json",
        schema=False,
        cpython_only=True,
    )
    pad = with_(ev1, pad="")
    pad["pad"] = "x" * (16385 - len(compact(pad)))
    bad(
        "one byte over MAX_PAYLOAD", "events", pad, "too large", "16385 > 16384 bytes", schema=False
    )
    bad("top level is a list", "events", "[1,2]", "bad type", "message: expected object")
    bad("top level is null", "status", "null", "bad type", "message: expected object")
    bad("missing v", "events", without(ev1, "v"), "missing field", "missing field: v")
    bad("v 2", "events", with_(ev1, v=2), "unsupported version", "unsupported version: 2")
    bad("v 0", "sync_resp", with_(SYNC_RESP, v=0), "unsupported version", "unsupported version: 0")
    bad("v as string", "events", with_(ev1, v="1"), "bad type", "v: expected int")
    bad("v true (bool is not int)", "events", with_(ev1, v=True), "bad type", "v: expected int")
    bad(
        "v 1.0 (float)",
        "events",
        compact(ev1).replace('"v":1', '"v":1.0'),
        "bad type",
        "v: expected int",
        schema=False,
    )

    # --- events -------------------------------------------------------------------------
    def evs(*events, **top):
        m = {"v": 1, "node": NODE, "boot": 1, "events": list(events)}
        m.update(top)
        return m

    cue = ev(seq=0, t=1, kind="cue")
    bad(
        "events: missing node",
        "events",
        without(ev1, "node"),
        "missing field",
        "missing field: node",
    )
    bad(
        "events: node not a slug (uppercase, underscore)",
        "events",
        with_(ev1, node="Pocket_1"),
        "bad value",
        "node: 'Pocket_1' is not a slug",
    )
    bad(
        "events: node starts with a hyphen",
        "events",
        with_(ev1, node="-n1"),
        "bad value",
        "is not a slug",
    )
    bad(
        "events: node slug of 33 characters",
        "events",
        with_(ev1, node="n" * 33),
        "bad value",
        "is not a slug",
    )
    bad("events: node empty", "events", with_(ev1, node=""), "bad value", "is not a slug")
    bad("events: node is a number", "events", with_(ev1, node=7), "bad type", "node: expected slug")
    bad(
        "events: boot -1",
        "events",
        with_(ev1, boot=-1),
        "bad value",
        "boot: -1 not in 0..18446744073709551615",
    )
    bad(
        "events: boot 2^64",
        "events",
        with_(ev1, boot=U64 + 1),
        "bad value",
        "boot: 18446744073709551616 not in",
    )
    bad("events: boot true", "events", with_(ev1, boot=True), "bad type", "boot: expected uint")
    bad("events: boot 1.5", "events", with_(ev1, boot=1.5), "bad type", "boot: expected uint")
    bad('events: boot "7"', "events", with_(ev1, boot="7"), "bad type", "boot: expected uint")
    bad("events: empty batch", "events", evs(), "bad value", "events: 0 items, expected 1..64")
    bad(
        "events: 65 events",
        "events",
        evs(*[ev(seq=i, t=i, kind="cue") for i in range(65)]),
        "bad value",
        "events: 65 items, expected 1..64",
    )
    bad(
        "events: not a list",
        "events",
        with_(ev1, events={"seq": 0}),
        "bad type",
        "events: expected list",
    )
    bad(
        "events: event not an object",
        "events",
        evs(cue, 5),
        "bad type",
        "events[1]: expected object",
    )
    bad(
        "events: missing t",
        "events",
        evs(cue, ev(seq=1, kind="cue")),
        "missing field",
        "missing field: events[1].t",
    )
    bad(
        "events: t as float",
        "events",
        compact(ev1).replace('"t":1', '"t":1.0'),
        "bad type",
        "events[0].t: expected uint",
        schema=False,
    )
    bad(
        "events: t with exponent",
        "events",
        compact(ev1).replace('"t":1', '"t":1e3'),
        "bad type",
        "events[0].t: expected uint",
        schema=False,
    )
    bad(
        "events: t fractional",
        "events",
        compact(ev1).replace('"t":1', '"t":1.5'),
        "bad type",
        "events[0].t: expected uint",
    )
    bad(
        "events: t negative",
        "events",
        evs(ev(seq=0, t=-1, kind="cue")),
        "bad value",
        "events[0].t: -1 not in",
    )
    bad(
        "events: t above u64",
        "events",
        evs(ev(seq=0, t=U64 + 1, kind="cue")),
        "bad value",
        "events[0].t: 18446744073709551616 not in",
    )
    bad(
        "events: duplicate seq",
        "events",
        evs(cue, ev(seq=0, t=2, kind="cue")),
        "bad value",
        "events[1].seq: 0 not above 0",
        schema=False,
    )
    bad(
        "events: seq decreasing",
        "events",
        evs(ev(seq=5, t=1, kind="cue"), ev(seq=4, t=2, kind="cue")),
        "bad value",
        "events[1].seq: 4 not above 5",
        schema=False,
    )
    bad(
        "events: kind name with uppercase",
        "events",
        evs(cue, ev(seq=1, t=1, kind="Spin")),
        "bad value",
        "events[1].kind: 'Spin' is not a kind name",
    )
    bad(
        "events: kind name empty",
        "events",
        evs(ev(seq=0, t=1, kind="")),
        "bad value",
        "events[0].kind: '' is not a kind name",
    )
    bad(
        "events: kind name of 33 characters",
        "events",
        evs(ev(seq=0, t=1, kind="a" * 33)),
        "bad value",
        "is not a kind name",
    )
    bad(
        "events: kind name with a hyphen",
        "events",
        evs(ev(seq=0, t=1, kind="ball-spin")),
        "bad value",
        "events[0].kind: 'ball-spin' is not a kind name",
    )
    bad(
        "events: kind a number",
        "events",
        evs(ev(seq=0, t=1, kind=3)),
        "bad type",
        "events[0].kind: expected string",
    )
    bad(
        "events: unknown kind without t",
        "events",
        evs(cue, ev(seq=1, kind="laser")),
        "missing field",
        "missing field: events[1].t",
    )
    bad(
        "events: unknown kind out of seq order",
        "events",
        evs(ev(seq=4, t=1, kind="cue"), ev(seq=4, t=2, kind="laser")),
        "bad value",
        "events[1].seq: 4 not above 4",
        schema=False,
    )
    bad(
        "events: good events around a bad known one",
        "events",
        evs(cue, ev(seq=1, t=2, kind="laser"), ev(seq=2, t=3, kind="drop", pocket="XX")),
        "bad value",
        "events[2].pocket: 'XX' not in HL HR SL SR FL FR",
    )
    bad(
        "events: strike amp 4096",
        "events",
        evs(ev(seq=0, t=1, kind="strike", amp=4096)),
        "bad value",
        "events[0].amp: 4096 not in 0..4095",
    )
    bad(
        "events: ball read without conf",
        "events",
        evs(ev(seq=0, t=1, kind="ball", ball=3)),
        "missing field",
        "events[0].conf (required for kind ball)",
    )
    bad(
        "events: ball rgb of two channels",
        "events",
        evs(ev(seq=0, t=1, kind="ball", ball=3, conf=90, rgb=[600, 40])),
        "bad value",
        "events[0].rgb: 2 items, expected 3 (R G B)",
    )
    bad(
        "events: ball rgb above 2000",
        "events",
        evs(ev(seq=0, t=1, kind="ball", ball=3, conf=90, rgb=[600, 40, 2001])),
        "bad value",
        "events[0].rgb[2]: 2001 not in 0..2000",
    )
    bad(
        "events: ball rgb not a list",
        "events",
        evs(ev(seq=0, t=1, kind="ball", ball=3, conf=90, rgb=600)),
        "bad type",
        "events[0].rgb",
    )
    bad(
        "events: ball 16",
        "events",
        evs(ev(seq=0, t=1, kind="ball", ball=16, conf=90)),
        "bad value",
        "events[0].ball: 16 not in 0..15",
    )
    bad(
        "events: ball conf 101",
        "events",
        evs(ev(seq=0, t=1, kind="ball", ball=1, conf=101)),
        "bad value",
        "events[0].conf: 101 not in 0..100",
    )
    bad(
        "events: wm negative",
        "events",
        with_(ev1, wm=-1),
        "bad value",
        "wm: -1 not in",
    )
    bad(
        "events: wm above u64",
        "events",
        with_(ev1, wm=U64 + 1),
        "bad value",
        "wm: 18446744073709551616 not in",
    )
    bad("events: wm as string", "events", with_(ev1, wm="5"), "bad type", "wm: expected uint")
    bad("events: wm null", "events", with_(ev1, wm=None), "bad type", "wm: expected uint")
    bad(
        "events: kind missing",
        "events",
        evs(ev(seq=0, t=1)),
        "missing field",
        "missing field: events[0].kind",
    )
    bad(
        "events: drop without pocket",
        "events",
        evs(ev(seq=0, t=1, kind="drop")),
        "missing field",
        "events[0].pocket (required for kind drop)",
    )
    bad(
        "events: bad pocket",
        "events",
        evs(ev(seq=0, t=1, kind="drop", pocket="XX")),
        "bad value",
        "events[0].pocket: 'XX' not in HL HR SL SR FL FR",
    )
    bad(
        "events: pocket lowercase",
        "events",
        evs(ev(seq=0, t=1, kind="drop", pocket="hl")),
        "bad value",
        "events[0].pocket: 'hl' not in",
    )
    bad(
        "events: rail without amp",
        "events",
        evs(ev(seq=0, t=1, kind="rail", rail="H")),
        "missing field",
        "events[0].amp (required for kind rail)",
    )
    bad(
        "events: rail without rail",
        "events",
        evs(ev(seq=0, t=1, kind="rail", amp=5)),
        "missing field",
        "events[0].rail (required for kind rail)",
    )
    bad(
        "events: bad rail",
        "events",
        evs(ev(seq=0, t=1, kind="rail", rail="L", amp=5)),
        "bad value",
        "events[0].rail: 'L' not in H F LH LF RH RF",
    )
    bad(
        "events: amp 4096",
        "events",
        evs(ev(seq=0, t=1, kind="rail", rail="H", amp=4096)),
        "bad value",
        "events[0].amp: 4096 not in 0..4095",
    )
    bad(
        "events: amp false",
        "events",
        evs(ev(seq=0, t=1, kind="rail", rail="H", amp=False)),
        "bad type",
        "events[0].amp: expected uint",
    )
    bad(
        "events: jam without dur",
        "events",
        evs(ev(seq=0, t=1, kind="jam", pocket="HL")),
        "missing field",
        "events[0].dur (required for kind jam)",
    )
    bad(
        "events: lost without n",
        "events",
        evs(ev(seq=0, t=1, kind="lost", pocket="HL")),
        "missing field",
        "events[0].n (required for kind lost)",
    )
    bad(
        "events: lost n 0",
        "events",
        evs(ev(seq=0, t=1, kind="lost", pocket="HL", n=0)),
        "bad value",
        "events[0].n: 0 not in 1..",
    )
    bad(
        "events: lost with pocket and rail",
        "events",
        evs(ev(seq=0, t=1, kind="lost", pocket="HL", rail="H", n=1)),
        "bad value",
        "lost needs exactly one of pocket, rail",
    )
    bad(
        "events: lost with neither pocket nor rail",
        "events",
        evs(ev(seq=0, t=1, kind="lost", n=1)),
        "bad value",
        "lost needs exactly one of pocket, rail",
    )
    bad(
        "events: pocket null",
        "events",
        evs(ev(seq=0, t=1, kind="drop", pocket=None)),
        "bad type",
        "events[0].pocket: expected string",
    )

    # --- birth / status / config --------------------------------------------------------
    bad(
        "birth: config_hash uppercase",
        "birth",
        with_(BIRTH, config_hash="0BADF00D"),
        "bad value",
        "config_hash: '0BADF00D' is not 8 lowercase hex digits",
    )
    bad(
        "birth: config_hash 7 digits",
        "birth",
        with_(BIRTH, config_hash="badf00d"),
        "bad value",
        "is not 8 lowercase hex digits",
    )
    bad(
        "birth: fw too long",
        "birth",
        with_(BIRTH, fw="v" * 33),
        "bad value",
        "fw: length 33 not in 1..32",
    )
    bad(
        "birth: unknown reset cause",
        "birth",
        with_(BIRTH, reset="brownout"),
        "bad value",
        "reset: 'brownout' not in power hard wdt deepsleep soft unknown",
    )
    bad(
        "birth: missing pinmap",
        "birth",
        without(BIRTH, "pinmap"),
        "missing field",
        "missing field: pinmap",
    )
    bad(
        "birth: caps not a list",
        "birth",
        with_(BIRTH, caps="pcnt"),
        "bad type",
        "caps: expected list",
    )
    bad(
        "birth: caps item not a string",
        "birth",
        with_(BIRTH, caps=["pcnt", 3]),
        "bad type",
        "caps[1]: expected string",
    )
    bad(
        "status: unknown state",
        "status",
        with_(OFFLINE, state="sleeping"),
        "bad value",
        "state: 'sleeping' not in online offline",
    )
    bad(
        "status: online without uptime_us",
        "status",
        with_(OFFLINE, state="online"),
        "missing field",
        "uptime_us (required when state is online)",
    )
    bad(
        "status: negative counter",
        "status",
        with_(STATUS, counters={"events": -1}),
        "bad value",
        "counters.events: -1 not in",
    )
    bad(
        "status: counter as string",
        "status",
        with_(STATUS, counters={"events": "5"}),
        "bad type",
        "counters.events: expected uint",
    )
    bad(
        "status: sync without samples",
        "status",
        with_(STATUS, sync={"offset_us": 1, "delay_us": 2, "uncertainty_us": 1}),
        "missing field",
        "missing field: sync.samples",
    )
    bad("status: rssi float", "status", with_(STATUS, rssi=-61.5), "bad type", "rssi: expected int")
    bad(
        "status: config_error not a string",
        "status",
        with_(STATUS, config_error=5),
        "bad type",
        "config_error: expected string",
    )
    bad(
        "status: callback_error over 200 characters",
        "status",
        with_(STATUS, callback_error="x" * 201),
        "bad value",
        "callback_error",
    )
    bad(
        "config: status_period_s 0",
        "config",
        with_(CONFIG, status_period_s=0),
        "bad value",
        "status_period_s: 0 not in 1..3600",
    )
    bad(
        "config: status_period_s 3601",
        "config",
        with_(CONFIG, status_period_s=3601),
        "bad value",
        "status_period_s: 3601 not in 1..3600",
    )
    bad(
        "config: batch_max 65",
        "config",
        with_(CONFIG, batch_max=65),
        "bad value",
        "batch_max: 65 not in 1..64",
    )
    bad(
        "config: two pockets on one channel",
        "config",
        with_(CONFIG, pockets=[{"ch": 0, "pocket": "HL"}, {"ch": 0, "pocket": "HR"}]),
        "bad value",
        "pockets[1].ch: channel 0 used twice",
        schema=False,
    )
    bad(
        "config: rail threshold 5000",
        "config",
        with_(CONFIG, rails=[{"ch": 0, "rail": "H", "threshold": 5000, "refractory_us": 0}]),
        "bad value",
        "rails[0].threshold: 5000 not in 0..4095",
    )
    bad(
        "config: rail without refractory_us",
        "config",
        with_(CONFIG, rails=[{"ch": 0, "rail": "H", "threshold": 50}]),
        "missing field",
        "missing field: rails[0].refractory_us",
    )
    bad(
        "config: colour table too short",
        "config",
        with_(CONFIG, colour={"rgb": COLOUR_RGB[:26]}),
        "bad value",
        "colour.rgb: 26 items, expected 27",
    )
    bad(
        "config: colour table too long",
        "config",
        with_(CONFIG, colour={"rgb": [*COLOUR_RGB, 5]}),
        "bad value",
        "colour.rgb: 28 items, at most 27",
    )
    bad(
        "config: colour reflectance out of range",
        "config",
        with_(CONFIG, colour={"rgb": [2001, *COLOUR_RGB[1:]]}),
        "bad value",
        "colour.rgb[0]: 2001 not in 0..2000",
    )
    bad(
        "config: colour without rgb",
        "config",
        with_(CONFIG, colour={}),
        "missing field",
        "missing field: colour.rgb",
    )
    bad(
        "config: strike on a rail's channel",
        "config",
        with_(CONFIG, strike={"ch": 1, "threshold": 900, "refractory_us": 30000}),
        "bad value",
        "strike.ch: channel 1 is also rail F",
        schema=False,
    )
    bad(
        "config: strike without ch",
        "config",
        with_(CONFIG, strike={"threshold": 900}),
        "missing field",
        "missing field: strike.ch",
    )
    bad(
        "config: strike threshold 4096",
        "config",
        with_(CONFIG, strike={"ch": 3, "threshold": 4096}),
        "bad value",
        "strike.threshold: 4096 not in 0..4095",
    )
    bad(
        "config: strike not an object",
        "config",
        with_(CONFIG, strike=3),
        "bad type",
        "strike: expected object",
    )
    bad(
        "config: missing pockets",
        "config",
        without(CONFIG, "pockets"),
        "missing field",
        "missing field: pockets",
    )

    # --- net ----------------------------------------------------------------------------
    bad(
        "net: neither broker nor wifi",
        "net",
        {"v": 1, "id": "n1", "trial_s": 60},
        "missing field",
        "broker or wifi",
    )
    bad(
        "net: wifi without password",
        "net",
        {"v": 1, "id": "n1", "wifi": {"ssid": "x"}},
        "missing field",
        "wifi.password",
    )
    bad(
        "net: port 0",
        "net",
        {"v": 1, "id": "n1", "broker": {"host": "h", "port": 0}},
        "bad value",
        "broker.port: 0 not in 1..65535",
    )
    bad("net: trial_s 5", "net", with_(NET, trial_s=5), "bad value", "trial_s: 5 not in 10..600")
    bad(
        "net: ssid too long",
        "net",
        with_(NET, wifi={"ssid": "s" * 33, "password": ""}),
        "bad value",
        "wifi.ssid: length 33",
    )

    # --- update -------------------------------------------------------------------------
    bad("update: missing url", "update", without(UPDATE, "url"), "missing field", "url")
    bad(
        "update: manifest_sha256 upper case",
        "update",
        with_(UPDATE, manifest_sha256=UPDATE["manifest_sha256"].upper()),
        "bad value",
        "manifest_sha256",
    )
    bad(
        "update: manifest_sha256 too short",
        "update",
        with_(UPDATE, manifest_sha256="ab" * 16),
        "bad value",
        "manifest_sha256: length 32 not in 64..64",
    )
    bad(
        "update: url not http",
        "update",
        with_(UPDATE, url="https://host/fw/x/"),
        "bad value",
        "url",
    )
    bad(
        "update: url without a final slash",
        "update",
        with_(UPDATE, url="http://host/fw/x"),
        "bad value",
        "url",
    )
    bad("update: trial_s 5", "update", with_(UPDATE, trial_s=5), "bad value", "trial_s: 5 not in")
    bad(
        "update: sig too short",
        "update",
        with_(UPDATE, sig="0f" * 383),
        "bad value",
        "sig: length 766",
    )
    bad(
        "update: sig in capitals",
        "update",
        with_(UPDATE, sig="0F" * 384),
        "bad value",
        "is not lowercase hex",
    )
    bad(
        "update: downgrade without its boot",
        "update",
        with_(UPDATE, downgrade={"from": "rbnode-0.2.0"}),
        "missing field",
        "downgrade.boot",
    )
    bad(
        "update: trial_boots 0",
        "update",
        with_(UPDATE, trial_boots=0),
        "bad value",
        "trial_boots: 0 not in",
    )
    bad(
        "update: version too long",
        "update",
        with_(UPDATE, version="v" * 33),
        "bad value",
        "version: length 33",
    )
    bad(
        "status: update without state",
        "status",
        with_(STATUS, update={"id": "u1"}),
        "missing field",
        "update.state",
    )
    bad("status: fw empty", "status", with_(STATUS, fw=""), "bad value", "fw: length 0")

    # --- sync, referee, feeds -----------------------------------------------------------
    bad("sync_req: t1 negative", "sync_req", with_(SYNC_REQ, t1=-1), "bad value", "t1: -1 not in")
    bad(
        "sync_resp: missing t3",
        "sync_resp",
        without(SYNC_RESP, "t3"),
        "missing field",
        "missing field: t3",
    )
    bad(
        "sync_result: t4 above u64",
        "sync_result",
        with_(SYNC_RESULT, t4=U64 + 1),
        "bad value",
        "t4: 18446744073709551616 not in",
    )
    bad(
        "referee: input without type",
        "referee",
        with_(REFEREE, input={"player": 1}),
        "missing field",
        "missing field: input.type",
    )
    bad(
        "referee: input not an object",
        "referee",
        with_(REFEREE, input="foul"),
        "bad type",
        "input: expected object",
    )
    bad(
        "referee: token too long",
        "referee",
        with_(REFEREE, token="t" * 129),
        "bad value",
        "token: length 129 not in 1..128",
    )
    bad(
        "shot: ball 16",
        "shot",
        with_(SHOT, pocketed=[{"ball": 16, "pocket": "HL", "t": 1, "source": "sensed"}]),
        "bad value",
        "pocketed[0].ball: 16 not in 0..15",
    )
    bad(
        "shot: unknown source",
        "shot",
        with_(SHOT, pocketed=[{"ball": 1, "pocket": "HL", "t": 1, "source": "guessed"}]),
        "bad value",
        "pocketed[0].source: 'guessed' not in sensed inferred referee",
    )
    bad(
        "shot: end before start",
        "shot",
        with_(SHOT, end=SHOT["start"] - 1),
        "bad value",
        "end: 60999999 before start 61000000",
        schema=False,
    )
    bad(
        "shot: distinct_rails 7",
        "shot",
        with_(SHOT, distinct_rails=7),
        "bad value",
        "distinct_rails: 7 not in 0..6",
    )
    bad(
        "shot: table not a slug",
        "shot",
        with_(SHOT, table="Table 1"),
        "bad value",
        "table: 'Table 1' is not a slug",
    )
    bad(
        "state: unknown game",
        "state",
        with_(STATE, game="straight"),
        "bad value",
        "game: 'straight' not in 10-ball 14.1 9-ball 8-ball",
    )
    bad(
        "state: state not an object",
        "state",
        with_(STATE, state=[1]),
        "bad type",
        "state: expected object",
    )
    bad(
        "announce: text of 121 characters",
        "announce",
        with_(ANNOUNCE, text="x" * 121),
        "bad value",
        "text: length 121 not in 1..120",
    )
    bad(
        "announce: empty text",
        "announce",
        with_(ANNOUNCE, text=""),
        "bad value",
        "text: length 0 not in 1..120",
    )
    bad(
        "announce: unknown level",
        "announce",
        with_(ANNOUNCE, level="warn"),
        "bad value",
        "level: 'warn' not in info foul win",
    )
    bad(
        "summary: table key not a slug",
        "summary",
        with_(SUMMARY, tables={"Table 1": {"online": True}}),
        "bad value",
        "tables: key 'Table 1' is not a slug",
    )
    bad(
        "summary: online as string",
        "summary",
        with_(SUMMARY, tables={"t1": {"online": "yes"}}),
        "bad type",
        "tables.t1.online: expected bool",
    )
    bad(
        "summary: score float",
        "summary",
        with_(SUMMARY, tables={"t1": {"scores": [1, 2.5]}}),
        "bad type",
        "tables.t1.scores[1]: expected int",
    )
    bad(
        "summary: complete as string",
        "summary",
        with_(INDEX, complete="no"),
        "bad type",
        "complete: expected bool",
    )
    bad(
        "summary: negative count",
        "summary",
        with_(INDEX, count=-1),
        "bad value",
        "count: -1 not in 0..18446744073709551615",
    )
    bad(
        "inplay: a ball not 0..15",
        "inplay",
        with_(INPLAY, pocketed=[{"pocket": "FR", "t": 1, "ball": 16}]),
        "bad value",
        "pocketed[0].ball: 16 not in 0..15",
    )
    bad(
        "inplay: no pocket",
        "inplay",
        with_(INPLAY, pocketed=[{"t": 1}]),
        "missing field",
        "pocketed[0].pocket",
    )
    bad("inplay: no shot number", "inplay", without(INPLAY, "shot"), "missing field", "shot")
    bad(
        "table_summary: no table",
        "table_summary",
        without(TABLE_SUMMARY, "table"),
        "missing field",
        "table",
    )
    bad(
        "table_summary: pockets not an object",
        "table_summary",
        with_(TABLE_SUMMARY, pockets=[3]),
        "bad type",
        "pockets: expected object",
    )
    bad(
        "table_summary: unknown game",
        "table_summary",
        with_(TABLE_SUMMARY, game="snooker"),
        "bad value",
        "game: 'snooker' not in 10-ball 14.1 9-ball 8-ball",
    )
    bad(
        "table_summary: at_table negative",
        "table_summary",
        with_(TABLE_SUMMARY, at_table=-1),
        "bad value",
        "at_table: -1 not in 0..18446744073709551615",
    )

    bad(
        "host: online without period_s",
        "host",
        {"v": 1, "venue": VENUE, "state": "online"},
        "missing field",
        "period_s (required when state is online)",
    )
    bad(
        "host: period_s 0",
        "host",
        with_(HOST, period_s=0),
        "bad value",
        "period_s: 0 not in 1..3600",
    )
    bad(
        "host: unknown state",
        "host",
        with_(HOST, state="stale"),
        "bad value",
        "state: 'stale' not in online offline",
    )

    bad(
        "referee_result: without id",
        "referee_result",
        {"v": 1, "table": TABLE, "status": "ok"},
        "missing field",
        "id",
    )
    bad(
        "referee_result: unknown status",
        "referee_result",
        with_(RESULT, status="maybe"),
        "bad value",
        "status: 'maybe' not in ok pending duplicate refused stale rejected",
    )
    bad(
        "referee_result: ruling without rule",
        "referee_result",
        with_(RESULT, rulings=[{"text": "x"}]),
        "missing field",
        "rulings[0].rule",
    )
    bad(
        "referee_result: error of 201 characters",
        "referee_result",
        with_(RESULT, status="refused", error="e" * 201),
        "bad value",
        "error",
    )

    # --- topics (decode_message) --------------------------------------------------------
    good = compact(ev1)
    for name, topic, kind, code, contains in (
        (
            "topic: major version 2",
            "railbird/v2/hall-1/t1/node/t1-node/events",
            None,
            "unsupported version",
            "unsupported version: 2",
        ),
        (
            "topic: unknown node leaf",
            "railbird/v1/hall-1/t1/node/t1-node/bogus",
            None,
            "bad topic",
            "unknown topic",
        ),
        (
            "topic: venue not a slug",
            "railbird/v1/Hall/t1/shot",
            None,
            "bad topic",
            "venue: 'Hall' is not a slug",
        ),
        (
            "topic: node level without leaf",
            "railbird/v1/hall-1/t1/node/t1-node",
            None,
            "bad topic",
            "unknown topic",
        ),
        (
            "topic: wildcard as node",
            "railbird/v1/hall-1/t1/node/+/events",
            None,
            "bad topic",
            "node: '+' is not a slug",
        ),
        (
            "topic: other root",
            "pool/v1/hall-1/t1/node/t1-node/events",
            None,
            "bad topic",
            "is not railbird/v1/",
        ),
        (
            "topic: no version",
            "railbird/hall-1/t1/node/t1-node/events",
            None,
            "bad topic",
            "no version after railbird/",
        ),
        (
            "topic: extra level",
            "railbird/v1/hall-1/t1/shot/extra",
            None,
            "bad topic",
            "unknown topic",
        ),
        (
            "topic: trailing slash",
            "railbird/v1/hall-1/t1/node/t1-node/events/",
            None,
            "bad topic",
            "unknown topic",
        ),
        (
            "topic: sync without leaf",
            "railbird/v1/hall-1/t1/node/t1-node/sync",
            None,
            "bad topic",
            "unknown topic",
        ),
        (
            "topic: a level below a table's summary",
            "railbird/v1/hall-1/t1/summary/x",
            None,
            "bad topic",
            "unknown topic",
        ),
        (
            "topic: host at table level",
            "railbird/v1/hall-1/t1/host",
            None,
            "bad topic",
            "unknown topic",
        ),
    ):
        bad(name, kind, good, code, contains, schema=False, topic=topic)
    bad(
        "topic: node field does not match topic node",
        "events",
        good,
        "bad value",
        "node: 't1-node' does not match topic node 'n2'",
        schema=False,
        topic="railbird/v1/hall-1/t1/node/n2/events",
    )
    bad(
        "topic: table field does not match topic table",
        "shot",
        SHOT,
        "bad value",
        "table: 't1' does not match topic table 't2'",
        schema=False,
        topic="railbird/v1/hall-1/t2/shot",
    )
    bad(
        "topic: venue field does not match topic venue",
        "summary",
        SUMMARY,
        "bad value",
        "venue: 'hall-1' does not match topic venue 'hall-2'",
        schema=False,
        topic="railbird/v1/hall-2/summary",
    )
    bad(
        "topic: table_summary table does not match topic table",
        "table_summary",
        TABLE_SUMMARY,
        "bad value",
        "table: 't1' does not match topic table 't2'",
        schema=False,
        topic="railbird/v1/hall-1/t2/summary",
    )
    bad(
        "topic: referee_result table does not match topic table",
        "referee_result",
        RESULT,
        "bad value",
        "table: 't1' does not match topic table 't2'",
        schema=False,
        topic="railbird/v1/hall-1/t2/referee/result",
    )
    bad(
        "topic: host venue does not match topic venue",
        "host",
        HOST,
        "bad value",
        "venue: 'hall-1' does not match topic venue 'hall-2'",
        schema=False,
        topic="railbird/v1/hall-2/host",
    )
    bad(
        "topic: payload for another kind",
        "status",
        good,
        "missing field",
        "missing field: state",
        topic="railbird/v1/hall-1/t1/node/t1-node/status",
    )


def dump(path, data):
    text = (
        "[\n"
        + ",\n".join(json.dumps(v, ensure_ascii=False, sort_keys=False) for v in data)
        + "\n]\n"
    )
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def render():
    VALID.clear()
    INVALID.clear()
    build()
    return VALID, INVALID


if __name__ == "__main__":
    render()
    dump(os.path.join(HERE, "valid.json"), VALID)
    dump(os.path.join(HERE, "invalid.json"), INVALID)
    print(f"{len(VALID)} valid, {len(INVALID)} invalid vectors")
