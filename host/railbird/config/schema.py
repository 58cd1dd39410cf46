"""The daemon configuration's JSON Schema (draft 2020-12): every key, its type, default and
meaning, and how to fix a wrong value.

The schema is the one description of the configuration: `railbird.config.check` validates a
config against it (and adds the rules across keys a schema cannot say), and the key
reference in docs/host.md is generated from it (`python -m railbird.config.schema
--markdown`; tests/host/test_config_strict.py checks the two agree). Games, break orders
and rule options come from the rules engine and shot parameters from `ShotParams`, so a
new game or option is known here without an edit.

Keywords of our own, ignored by JSON Schema validators: `x-fix` (the fix an error message
suggests; `x-fix-missing` when the key is missing, `x-fix-twice` when a list has a value
twice), `x-what` (what an unknown value or key is: "unknown game"), `x-doc` (where a long
list of choices is), `x-item` (what a list holds: "2 names"), `x-doc-rows` (false: one row
in the key reference, not one per key).
"""

from __future__ import annotations

import json
import sys
from dataclasses import fields

from railbird.core.health import optional as optional_sensors
from railbird.core.shots import CUE_RETURN_MS, DEFAULT_TABLE_SIZE, POCKETS, ShotParams
from railbird.rules import GAMES, OPTIONS
from railbird.rules.match import BREAK_ORDERS

# Patterns end in `(?!\n)$`: Python's `re` (used by jsonschema) lets `$` match before a
# trailing newline (protocol/schemas/make_schemas.py does the same).
SLUG_PATTERN = r"^[a-z0-9][a-z0-9-]{0,31}(?!\n)$"
SLUG_FIX = "lower-case letters, digits and '-', at most 32, not starting with '-'"
# Keys whose values are never printed nor journalled: a client id is as good as a password
# for taking the host's MQTT session (protocol/SPEC.md Security).
SECRETS = ("password", "referee_token", "director_pin", "client_id")


def goal_key(game: str) -> str:
    """`race_to` for a game won on racks, `target` for one played to points (14.1)."""
    return "race_to" if GAMES[game].rack_scored else "target"


def _int(default=None, lo=0, hi=None, desc="", **kw):
    d = {"type": "integer", "minimum": lo, "description": desc}
    if hi is not None:
        d["maximum"] = hi
    if default is not None:
        d["default"] = default
    d.update(kw)
    return d


def _str(default=None, desc="", **kw):
    d = {"type": "string", "description": desc}
    if default is not None:
        d["default"] = default
    d.update(kw)
    return d


def _bool(default, desc):
    return {"type": "boolean", "default": default, "description": desc}


def _slug(desc="", **kw):
    return _str(desc=desc, pattern=SLUG_PATTERN, **{"x-fix": f"use {SLUG_FIX}"}, **kw)


def _section(properties, desc, required=(), **kw):
    d = {
        "type": "object",
        "description": desc,
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        d["required"] = list(required)
    d.update(kw)
    return d


def _options() -> dict:
    types = {bool: "boolean", int: "integer", str: "string"}
    by_name = {
        name: {
            "type": types[type(spec.default)],
            "description": spec.doc,
            **({"minimum": 0} if type(spec.default) is int else {}),
        }
        for name, spec in OPTIONS.items()
    }
    fix = "see protocol/REFEREE.md for the options"
    return {
        "description": "rule options: a list of option names (each turned on), or a table "
        "of name = value (protocol/REFEREE.md)",
        "default": {},
        "anyOf": [
            {
                "type": "array",
                "items": {
                    "enum": list(OPTIONS),
                    "x-what": "rule option",
                    "x-doc": "protocol/REFEREE.md",
                },
                "uniqueItems": True,
            },
            {
                "type": "object",
                "properties": by_name,
                "additionalProperties": False,
                "x-what": "rule option",
            },
        ],
        "x-fix": "a list of option names or a table of name = value; " + fix,
    }


def _table(*, template: bool) -> dict:
    games = list(GAMES)
    nodes_fix = 'list the node ids that report for this table, e.g. nodes = ["t1-pockets"]'
    players_fix = 'give exactly two different names, e.g. players = ["Ann", "Bob"]'
    props = {
        "game": _str(
            desc="the game: " + ", ".join(games) + "; none: shots only, no game state",
            enum=games,
            **{"x-what": "game"},
        ),
        "players": {
            "type": "array",
            "description": "the two players",
            "default": ["Player 1", "Player 2"],
            "items": {"type": "string", "pattern": r"\S", "x-fix": players_fix},
            "minItems": 2,
            "maxItems": 2,
            "uniqueItems": True,
            "x-fix": players_fix,
            "x-item": "name",
        },
        "race_to": _int(
            lo=1,
            hi=100_000,
            desc="racks to win the match; required for a game won on racks ("
            + ", ".join(g for g in games if goal_key(g) == "race_to")
            + ")",
        ),
        "target": _int(
            lo=1,
            hi=100_000,
            desc="points to win the match; required for a game played to points ("
            + ", ".join(g for g in games if goal_key(g) == "target")
            + ")",
        ),
        "break_order": _str(
            "alternate",
            "who breaks the next rack (general 35): " + ", ".join(BREAK_ORDERS),
            enum=list(BREAK_ORDERS),
            **{"x-what": "break order"},
        ),
        "options": _options(),
        "referee": _bool(
            False,
            "a referee is at the table: a ruling that depends on what the sensors cannot "
            "decide waits for his check; without one the fair default is ruled, marked "
            "provisional (protocol/REFEREE.md §3b). A referee's `match` may say otherwise",
        ),
        "sensors": {
            "type": "array",
            "description": "the optional sensors the table has: "
            + ", ".join(optional_sensors())
            + "; one that stays silent while the others fire is reported as suspect "
            'in every shot\'s warnings (docs/shots.md "Sensor health"); with "colour" a '
            "drop the colour station did not read is a warning that says its number is "
            "presumed (hardware/colour.md); `railbird setup` asks",
            "default": [],
            "items": {"type": "string", "enum": optional_sensors()},
            "uniqueItems": True,
            "x-item": "sensor",
        },
        "table_size": _str(
            DEFAULT_TABLE_SIZE,
            "the table's size: " + ", ".join(CUE_RETURN_MS) + "; gives the default "
            "`cue_return_ms` (docs/shots.md)",
            enum=list(CUE_RETURN_MS),
            **{"x-what": "table size"},
        ),
        "cue_return_ms": _section(
            {p: _int(lo=1, hi=20_000, desc="") for p in POCKETS},
            "expected cue-ball return delay per pocket (drop to cue detector), e.g. "
            "`{HL = 2850, HR = 2850, SL = 2000, SR = 2000, FL = 1000, FR = 1000}`; "
            "`railbird calibrate` measures it; a pocket left out takes `table_size`'s "
            "default ("
            + "; ".join(
                f"{size}: " + " ".join(f"{p} {v}" for p, v in ms.items())
                for size, ms in CUE_RETURN_MS.items()
            )
            + ")",
            default={},
            **{"x-doc-rows": False},
        ),
        "nodes": {
            "type": "array",
            "description": "the node ids that may report for this table; a node reports for "
            "one table only" + ("; `[]` = any node" if template else ""),
            "items": _slug(),
            "uniqueItems": True,
            "x-fix": nodes_fix if not template else "a list of node ids",
            "x-fix-missing": nodes_fix,
            "x-fix-twice": "list each node once",
            "x-item": "node id",
            **({"default": []} if template else {"minItems": 1}),
        },
    }
    if template:
        return _section(
            props,
            "the keys of `[tables.<id>]` for a table without its own section (used only "
            "with `accept_unknown_tables = true`); `nodes` may be `[]`: any node",
            default={},
            **{"x-doc-rows": False},
        )
    return _section(props, "one section per table, the id a slug", ["nodes"])


def _shots() -> dict:
    meaning = {
        "quiet": "rest that ends a shot; also how long after its last ball a shot is announced",
        "lip_rest": "rest before a lone drop that flags it as a possible lip ball (rule 30)",
        "cue_before": "how long before the cue-detector event its drop may be; 0 = the "
        "slowest pocket's `cue_return_ms` x 1.3 + 250 ms",
        "cue_after": "how long after the cue-detector event its drop may be (clock skew)",
        "break_window": "window from the shot's start in which rail clusters are counted",
        "rail_merge": "hits on one rail closer than this are one ball",
        "strike_gap": "a strike this long after the open shot's last activity is the next "
        "stroke: it closes that shot at once",
        "strike_quiet": "rest that ends a shot that opened at a strike (the next strike "
        "closes it at once)",
        "stroke_silence": "inside a shot that opened at a strike, a rail, drop or click after "
        "this much silence and another within `stroke_confirm_ms` open a new shot (a stroke "
        "whose strike was missed)",
        "stroke_confirm": "how soon after the first event past `stroke_silence_ms` the second "
        "must come",
    }
    props = {}
    for f in fields(ShotParams):
        if f.name.endswith("_us") and isinstance(f.default, int):  # not the per-table delays
            base = f.name[:-3]
            props[base + "_ms"] = _int(
                f.default // 1000, lo=1 if base == "quiet" else 0, desc=meaning.get(base, "")
            )
    return _section(props, "shot assembly (docs/shots.md)", default={})


def _broker() -> dict:
    return _section(
        {
            "host": _str("127.0.0.1", "the broker's name or address", minLength=1),
            "port": _int(1883, 1, 65535, "the broker's port; its TLS listener is usually 8883"),
            "user": _str("railbird-host", "MQTT user name"),
            "password": _str("", '`""` = env `RAILBIRD_MQTT_PASSWORD`; never printed'),
            "tls": _bool(False, "TLS, verifying the broker's certificate chain and name"),
            "cafile": _str(
                "",
                'PEM file of the CA that signed the broker\'s certificate; `""` = the '
                "system's trusted CAs; needs `tls = true`",
            ),
            "client_id": _str(
                "",
                'the persistent session\'s id; `""` = `railbird-host-<venue>-<hmac>`, 16 hex '
                "digits of an HMAC keyed with `password`: no login without the host's password "
                "can name it (protocol/SPEC.md Security)",
            ),
            "session_expiry_s": _int(604800, 0, 2**32 - 1, "7 days (protocol/SPEC.md)"),
            "keepalive_s": _int(30, 0, 65535, "MQTT keepalive"),
            "ingest_process": _bool(
                True,
                "`railbird run` receives and acknowledges MQTT in a process of its own, so "
                "the worker has a core to itself (docs/performance.md); `false`: a thread "
                "of the daemon",
            ),
        },
        "the MQTT broker (the display feeds connect with the same settings)",
        default={},
    )


def _outputs() -> dict:
    serial = _section(
        {
            "table": _slug("the table it shows", **{"x-fix-missing": 'add e.g. table = "t1"'}),
            "port": _str(
                desc='a stable device path: `"/dev/serial/by-id/usb-FTDI_...-if00-port0"`',
                minLength=1,
                **{
                    "x-fix": 'e.g. port = "/dev/serial/by-id/..."',
                    "x-fix-missing": 'add e.g. port = "/dev/serial/by-id/..."',
                },
            ),
            "baudrate": _int(115200, 1, desc="serial speed"),
            "announce": _bool(True, "show FOUL / SPOT / RERACK banners"),
            "ack_timeout_ms": _int(250, 1, desc="wait this long for a frame's acknowledgement"),
            "retries": _int(4, 0, desc="resend an unacknowledged frame this often"),
        },
        "a serial LED scoreboard",
        ["table", "port"],
    )
    return _section(
        {
            "day_start_hour": _int(
                6, 0, 23, "pocket counts are per business day starting at this local hour"
            ),
            "feeds": _section(
                {
                    "enabled": _bool(True, "MQTT display feeds, on the daemon's broker and user"),
                    "discovery": _bool(
                        True,
                        "Home Assistant discovery (the ACL must allow `homeassistant/#`)",
                    ),
                    "discovery_prefix": _str(
                        "homeassistant",
                        "discovery topic prefix",
                        pattern=r"^[^#+/]([^#+]*[^#+/])?(?!\n)$",
                        **{"x-fix": "a topic prefix without +, # or a leading/trailing /"},
                    ),
                    "client_id": _str("", '`""` = `"<broker.client_id>-feeds"`'),
                },
                "MQTT display feeds and Home Assistant discovery (docs/displays.md)",
                default={},
            ),
            "web": _section(
                {
                    "enabled": _bool(True, "the web scoreboard and referee panel"),
                    "host": _str(
                        "0.0.0.0",
                        'listen address (`"127.0.0.1"`: this machine only)',
                        minLength=1,
                    ),
                    "port": _int(
                        8080, 0, 65535, "0 = any free port (logged, and in `--stats-file`)"
                    ),
                    "title": _str("Railbird", "page title"),
                    "max_connections": _int(
                        512,
                        1,
                        100_000,
                        "connections the web server holds at most (TVs, phones, streams); "
                        "never more than half the process's file-descriptor limit, which "
                        "the daemon keeps for itself",
                    ),
                    "idle_timeout_s": _int(
                        10,
                        1,
                        3600,
                        "a connection without a complete request this long is closed (an "
                        "idle keep-alive, or headers trickling in)",
                    ),
                    "stream_queue": _int(
                        256,
                        4,
                        65_536,
                        "events a live stream may fall behind before it is ended (its "
                        "browser reconnects and starts again from a snapshot)",
                    ),
                    "stream_stall_s": _int(
                        10,
                        1,
                        600,
                        "a live stream whose client takes nothing this long is ended",
                    ),
                    "write_timeout_s": _int(
                        10,
                        1,
                        600,
                        "a reply its client has not taken whole this long is dropped, its "
                        "connection reset and its buffers freed (a client that never reads)",
                    ),
                    "allowed_hosts": {
                        "type": "array",
                        "description": "names a browser may reach the pages by, besides an IP "
                        "address, `localhost` and this machine's own names (its host name, "
                        "`<name>.local`); a request naming any other `Host` gets 400 (DNS "
                        "rebinding)",
                        "default": [],
                        "items": {"type": "string", "minLength": 1, "maxLength": 253},
                        "uniqueItems": True,
                        "x-item": "host name",
                    },
                },
                "the web scoreboard + referee panel; runs only when this section exists; the "
                "panel's PIN is `referee_token` (no token: panel disabled)",
            ),
            "serial": {
                "type": "array",
                "description": "one section per serial LED scoreboard (protocol/SCOREBOARD.md)",
                "default": [],
                "items": serial,
                "x-fix": "one [[outputs.serial]] section per board",
            },
        },
        "what people see (docs/displays.md); all optional",
        default={},
    )


def _cluster() -> dict:
    return _section(
        {
            "nats": {
                "type": "array",
                "description": "the NATS servers of the cluster (`nats://host:port`); the "
                "worker connects to any and fails over to the others",
                "items": _str(pattern="^nats://[^\\s]+$", **{"x-fix": "use nats://host:port"}),
                "minItems": 1,
                "x-item": "NATS URL",
            },
            "worker": _slug("this worker's id, unique in the cluster"),
            "user": _str("", "NATS user name"),
            "password": _str("", '`""` = env `RAILBIRD_NATS_PASSWORD`; never printed'),
            "partitions": _int(16, 1, 4096, "the tables are spread over this many partitions"),
            "lease_s": _int(
                5,
                1,
                600,
                "a worker that stops renewing its partitions loses them after this; longer "
                "than the cluster takes to elect a new leader after losing a server (a few s)",
            ),
            "replicas": _int(3, 1, 5, "the stream's and lease bucket's replicas"),
            "max_ack_pending": _int(
                256, 1, 65_536, "a table's messages delivered but not yet journalled, at most"
            ),
        },
        "cluster mode: this daemon is one worker of a NATS JetStream cluster; the nodes and "
        "displays use its MQTT gateway (`[broker]`); docs/scaling.md",
        ["nats", "worker"],
    )


def schema() -> dict:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://railbird.invalid/host/config.schema.json",
        "title": "railbird run configuration (TOML)",
        **_section(
            {
                "venue": _slug(
                    "the venue id",
                    **{"x-fix-missing": 'add e.g. venue = "club" (the venue id, a slug)'},
                ),
                "subscribe": {
                    "type": "array",
                    "description": "follow only these tables; `[]` = every table of the venue",
                    "default": [],
                    "items": _slug(),
                    "uniqueItems": True,
                    "x-item": "table id",
                },
                "accept_unknown_tables": _bool(
                    False,
                    "false: messages of a table without a `[tables.<id>]` are refused "
                    "(counted); true: such a table gets `[default_table]`",
                ),
                "journal": _str(
                    "railbird-journal.sqlite", "SQLite journal (WAL); `--journal` overrides"
                ),
                "reorder_window_ms": _int(
                    500, desc="how long the timeline waits for out-of-order events"
                ),
                "max_hold_ms": _int(
                    60000,
                    desc="how long a node that is offline or still sending its backlog may "
                    "hold its table's timeline (0: never)",
                ),
                "journal_sync": _str(
                    "normal",
                    '`"normal"`: survives a process crash; `"full"`: power loss too (slower)',
                    enum=["normal", "full"],
                    **{"x-what": "journal_sync"},
                ),
                "journal_keep_inputs_days": _int(
                    30,
                    desc="raw inputs older than this many days, and than a snapshot, are "
                    "exported (gzip JSON Lines) and deleted from the journal; shots, states "
                    "and events stay (0: keep every input)",
                ),
                "journal_export_dir": _str(
                    "",
                    'where deleted inputs are exported; `""` = the journal\'s path + `".exports"`',
                ),
                "referee_token": _str(
                    "",
                    "when set, MQTT referee input must carry it; also the web referee "
                    "panel's PIN, so 6 to 12 digits, not one digit repeated nor a run like "
                    '123456 (`""`: referee input off); never printed',
                ),
                "director_pin": _str(
                    "",
                    "the PIN of the event director's page (docs/events.md), 6 to 12 digits, "
                    'not the referee PIN, not one digit repeated nor a run (`""`: no '
                    "director page); never printed",
                ),
                "event_export_dir": _str(
                    "",
                    "where the event's static export (HTML and JSON) is kept up to date; "
                    '`""` = the journal\'s path + `".event"`',
                ),
                "lip_policy": _str(
                    "warn",
                    '`"warn"`: a lone drop after rest is a warning only; `"rule"`: also pass '
                    "the rest time to the rules (general 30)",
                    enum=["warn", "rule"],
                    **{"x-what": "lip_policy"},
                ),
                "stats_period_s": _int(60, desc="log the counters this often (0: never)"),
                "broker": _broker(),
                "shots": _shots(),
                "tables": {
                    "type": "object",
                    "description": "the tables, by id",
                    "default": {},
                    "propertyNames": _slug(),
                    "additionalProperties": _table(template=False),
                },
                "default_table": _table(template=True),
                "outputs": _outputs(),
                "cluster": _cluster(),
            },
            "",
            ["venue"],
        ),
    }


# -- the key reference (docs/host.md) -----------------------------------------------------
REFERENCE_BEGIN = "<!-- config reference: python -m railbird.config.schema --markdown -->"
REFERENCE_END = "<!-- end of config reference -->"


def _default_text(s: dict) -> str:
    if "default" not in s or isinstance(s["default"], dict):
        return ""
    return "`" + json.dumps(s["default"]).replace("|", "\\|") + "`"


def _rows(s: dict, path: str, required=()):
    """(key, default, meaning) per key of schema `s` at `path`; a section first gets a row
    of its own (its TOML header as the key)."""
    if path == "tables":
        yield from _rows(s["additionalProperties"], "tables.<id>")
        return
    if s.get("type") == "object" and "properties" in s:
        if path:
            yield f"[{path}]", "", s["description"]
        if s.get("x-doc-rows", True):
            for k, sub in s["properties"].items():
                yield from _rows(sub, f"{path}.{k}" if path else k, s.get("required", ()))
        return
    items = s.get("items")
    if s.get("type") == "array" and isinstance(items, dict) and "properties" in items:
        yield f"[[{path}]]", "", s["description"]
        for k, sub in items["properties"].items():
            yield from _rows(sub, f"{path}.{k}", items.get("required", ()))
        return
    name = path.rsplit(".", 1)[-1]
    yield path, "required" if name in required else _default_text(s), s["description"]


def reference_markdown() -> str:
    """The key reference of docs/host.md: one row per key, in the schema's order."""
    lines = [REFERENCE_BEGIN, "", "| key | default | meaning |", "|---|---|---|"]
    for key, default, desc in _rows(schema(), ""):
        desc = desc.replace("|", "\\|")
        key = f"**`{key}`**" if key.startswith("[") else f"`{key}`"
        lines.append(f"| {key} | {default} | {desc} |")
    lines += ["", REFERENCE_END]
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--markdown"]:
        print(reference_markdown())
    else:
        print(json.dumps(schema(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
