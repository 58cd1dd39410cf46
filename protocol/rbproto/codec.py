"""Railbird protocol v1: the one codec (encode, decode, validate, topics).

Shared by the host (CPython) and the ESP32 firmware (MicroPython, copied by the firmware
build), so it stays in the common subset and imports `json` only. Field specs are small
constant tuples; nothing is built per message except error text. See protocol/SPEC.md.

Spec tuple of a field: (name, type, flags, arg); flags bit 1 = required, bit 2 = may be
null. Types: 'u' uint (arg (lo, hi) or None = 0..U64_MAX), 'i' int (arg or None =
I64_MIN..I64_MAX), 'b' bool, 's' string (arg (min, max) characters), 'g' slug, 'e' enum
(arg tuple), 'k' name of 1..32 [a-z0-9_] (an event kind), 'h' 8 lowercase hex digits,
'o' any object, 'O' object (arg sub-spec), 'L' list of objects (arg (min, max, sub-spec)),
'l' list of strings (arg (max items, (min, max))), 'n' list of ints (arg max items), 'M'
object name -> uint (arg max entries), 'T' object slug -> object (arg (max entries,
sub-spec)).
"""

import json

VERSION = 1
ROOT = "railbird/v1"
MAX_PAYLOAD = 16384
# The longest `fen` (state, referee_result): a sender with a longer line leaves it out
# (the field is optional) rather than send a cut one, which no rules engine could read.
FEN_MAX = 512
MAX_EVENTS = 64
U64_MAX = 18446744073709551615
I64_MIN = -9223372036854775808
I64_MAX = 9223372036854775807

POCKETS = ("HL", "HR", "SL", "SR", "FL", "FR")
RAILS = ("H", "F", "LH", "LF", "RH", "RF")
KINDS = (
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
# node-level kinds (topic node/<node>/<leaf>), in the order of _LEAVES
NODE_KINDS = (
    "events",
    "birth",
    "status",
    "config",
    "sync_req",
    "sync_resp",
    "sync_result",
    "update",
    "net",
)
TABLE_KINDS = ("referee", "shot", "state", "announce", "inplay")
# the host's answer to a referee console, on the table's referee/result
REFEREE_RESULT_LEAF = "referee/result"
# one table's part of the venue summary, on the table's own summary topic
TABLE_SUMMARY_LEAF = "summary"
REFEREE_STATUSES = ("ok", "pending", "duplicate", "refused", "stale", "rejected")
# the event kinds this codec knows and checks; a batch may carry others (protocol/SPEC.md,
# "Additive changes"): they are checked only for seq, t and a well-formed kind name
EVENT_KINDS = ("drop", "cue", "rail", "jam", "lost", "strike", "ball")
RESETS = ("power", "hard", "wdt", "deepsleep", "soft", "unknown")
NODE_STATES = ("online", "offline")
GAMES = ("10-ball", "14.1", "9-ball", "8-ball")
SOURCES = ("sensed", "inferred", "referee")
LEVELS = ("info", "foul", "win")
ERROR_CODES = (
    "missing field",
    "bad type",
    "bad value",
    "too large",
    "bad json",
    "unsupported version",
    "bad topic",
)
# defaults of a config's `strike` object when it leaves them out
STRIKE_DEFAULTS = {"threshold": 0, "refractory_us": 30000}
# config.colour.rgb: the colour station's table (hardware/colour.md "Calibration"): the
# reflectance x COLOUR_SCALE of white, the seven colours and black, R G B each
COLOUR_SCALE = 1000
COLOUR_RGB_LEN = 27
COLOUR_RGB_MAX = 2000
CONFIG_DEFAULTS = {
    "cue_ch": None,
    "strike": None,
    "colour": None,
    "debounce_us": 2000,
    "jam_us": 2000000,
    "status_period_s": 30,
    "batch_max": 32,
    "batch_linger_ms": 20,
}

# topic leaf below node/<node>/, in the order of NODE_KINDS
_LEAVES = (
    "events",
    "birth",
    "status",
    "config",
    "sync/req",
    "sync/resp",
    "sync/result",
    "update",
    "net",
)
_HAS_NODE = ("events", "birth", "status", "sync_req", "sync_result")  # node-level with a node field
# What a node publishes (protocol/SPEC.md, topic table): the only leaves its login may write.
# The others below node/<node>/ (config, sync/resp, update, net) are the host's commands to
# it. `net` carries Wi-Fi credentials: only the host and the node itself may read it.
NODE_WRITES = tuple(_LEAVES[NODE_KINDS.index(k)] for k in _HAS_NODE)
NODE_READS = ("config", "sync/resp", "update", "net")
NODE_PRIVATE = ("net",)
_HAS_TABLE = ("shot", "state", "announce", "referee_result", "table_summary", "inplay")
_SLUG0 = "abcdefghijklmnopqrstuvwxyz0123456789"
_SLUG = _SLUG0 + "-"
_HEX = "0123456789abcdef"
_KIND = "abcdefghijklmnopqrstuvwxyz0123456789_"


class ProtocolError(ValueError):
    """A message or topic that breaks the protocol. `.code` is one of ERROR_CODES (what
    receivers count by), `.reason` the full text "code: details"; str(e) == e.reason.
    ProtocolError('bad value: x') and ProtocolError('bad value', 'x') are the same."""

    def __init__(self, code, details=None):
        if details is None:
            reason = code
            i = code.find(": ")
            if i > 0:
                code = code[:i]
        else:
            reason = code + ": " + details
        super().__init__(reason)
        self.code = code
        self.reason = reason

    def __str__(self):
        return self.reason


# --- field specs --------------------------------------------------------------------
# every event, whatever its kind
_EVENT = (("seq", "u", 1, None), ("t", "u", 1, None), ("kind", "k", 1, None))
# the optional fields of the known kinds; an unknown kind's fields are its own business
_EVENT_KNOWN = (
    ("pocket", "e", 0, POCKETS),
    ("rail", "e", 0, RAILS),
    ("amp", "u", 0, (0, 4095)),
    ("dur", "u", 0, None),
    ("n", "u", 0, (1, U64_MAX)),
    ("ball", "u", 0, (0, 15)),
    ("conf", "u", 0, (0, 100)),
    ("rgb", "n", 0, 3),  # `ball`: the pass's median reflectances x COLOUR_SCALE, R G B
)
# fields each event kind requires ('lost' also needs exactly one of pocket, rail)
_EVENT_NEEDS = {
    "drop": ("pocket",),
    "cue": (),
    "rail": ("rail", "amp"),
    "jam": ("pocket", "dur"),
    "lost": ("n",),
    "strike": (),
    "ball": ("ball", "conf"),
}
_NODE = ("node", "g", 1, None)
_BOOT = ("boot", "u", 1, None)
_SYNC = (
    ("offset_us", "i", 1, None),
    ("delay_us", "u", 1, None),
    ("uncertainty_us", "u", 1, None),
    ("samples", "u", 1, None),
)
_PCH = (("ch", "u", 1, None), ("pocket", "e", 1, POCKETS))
_RCH = (
    ("ch", "u", 1, None),
    ("rail", "e", 1, RAILS),
    ("threshold", "u", 1, (0, 4095)),
    ("refractory_us", "u", 1, None),
)
_SCH = (
    ("ch", "u", 1, None),
    ("threshold", "u", 0, (0, 4095)),
    ("refractory_us", "u", 0, None),
)
_CCOL = (("rgb", "n", 1, COLOUR_RGB_LEN),)
_POCKETED = (
    ("ball", "u", 3, (0, 15)),
    ("pocket", "e", 1, POCKETS),
    ("t", "i", 1, None),
    ("source", "e", 1, SOURCES),
    ("conf", "u", 0, (0, 100)),
)
# a ball of the shot in play (provisional); `ball` when known (0: the cue ball, paired so far)
_INPLAY_BALL = (("pocket", "e", 1, POCKETS), ("t", "i", 1, None), ("ball", "u", 0, (0, 15)))
_RAILHIT = (("rail", "e", 1, RAILS), ("t", "i", 1, None), ("amp", "u", 1, (0, 4095)))
_INPUT = (("type", "s", 1, (1, 32)),)
_RULING = (("text", "s", 1, (1, 300)), ("rule", "s", 3, (1, 32)))
_TABLE = (
    ("game", "e", 2, GAMES),
    ("scores", "n", 0, 8),
    ("at_table", "u", 2, None),
    ("online", "b", 0, None),
    ("pocketed_today", "u", 0, None),
)
_T1 = ("t1", "u", 1, None)
# status.update: where the node's latest over-the-air update stands
_UPDATE_STATE = (
    ("state", "s", 1, (1, 32)),
    ("id", "s", 0, (1, 64)),
    ("version", "s", 0, (1, 32)),
    ("bytes", "u", 0, None),
    ("total", "u", 0, None),
    ("error", "s", 2, (0, 200)),
)
# status.net: where the node's latest network change (a `net` command, Improv) stands
_NET_STATE = (
    ("state", "s", 1, (1, 32)),
    ("id", "s", 0, (1, 64)),
    ("host", "s", 0, (1, 64)),
    ("port", "u", 0, (1, 65535)),
    ("ssid", "s", 0, (0, 32)),
    ("error", "s", 2, (0, 200)),
)
# net.broker / net.wifi: the settings a `net` command asks the node to try
_NET_BROKER = (
    ("host", "s", 1, (1, 64)),
    ("port", "u", 0, (1, 65535)),
    ("addr", "s", 0, (1, 64)),
)
_NET_WIFI = (("ssid", "s", 1, (1, 32)), ("password", "s", 1, (0, 64)))
NET_TRIAL_S = 60  # default trial_s of a `net` command
_ID = ("id", "u", 1, None)
# update.downgrade: a downgrade the owner forced, bound to one boot of the node (SPEC.md)
_DOWNGRADE = (("boot", "u", 1, None), ("from", "s", 1, (1, 32)))

_SPECS = {
    "events": (
        _NODE,
        _BOOT,
        ("events", "L", 1, (1, MAX_EVENTS, _EVENT)),
        ("wm", "u", 0, None),
    ),
    "birth": (
        _NODE,
        _BOOT,
        ("fw", "s", 1, (1, 32)),
        ("reset", "e", 1, RESETS),
        ("config_hash", "h", 1, None),
        ("pinmap", "g", 1, None),
        ("caps", "l", 0, (32, (1, 32))),
    ),
    "status": (
        _NODE,
        _BOOT,
        ("state", "e", 1, NODE_STATES),
        ("uptime_us", "u", 0, None),
        ("heap_free", "u", 0, None),
        ("rssi", "i", 0, None),
        ("queue", "u", 0, None),
        ("spill", "u", 0, None),
        ("counters", "M", 0, 64),
        ("config_rev", "u", 0, None),
        ("config_error", "s", 2, (0, 200)),
        ("sync", "O", 2, _SYNC),
        ("fw", "s", 0, (1, 32)),
        ("update", "O", 2, _UPDATE_STATE),
        ("callback_error", "s", 2, (0, 200)),
        ("net", "O", 2, _NET_STATE),
    ),
    "config": (
        ("rev", "u", 1, None),
        ("pockets", "L", 1, (0, 16, _PCH)),
        ("rails", "L", 1, (0, 16, _RCH)),
        ("cue_ch", "u", 2, None),
        ("strike", "O", 2, _SCH),
        ("colour", "O", 2, _CCOL),
        ("debounce_us", "u", 0, None),
        ("jam_us", "u", 0, None),
        ("status_period_s", "u", 0, (1, 3600)),
        ("batch_max", "u", 0, (1, MAX_EVENTS)),
        ("batch_linger_ms", "u", 0, None),
        ("sig", "s", 0, (768, 768)),
    ),
    "update": (
        ("id", "s", 1, (1, 64)),
        ("version", "s", 1, (1, 32)),
        ("url", "s", 1, (8, 200)),
        ("manifest_sha256", "s", 1, (64, 64)),
        ("trial_s", "u", 0, (10, 3600)),
        ("trial_boots", "u", 0, (1, 10)),
        ("sig", "s", 0, (768, 768)),
        ("downgrade", "O", 0, _DOWNGRADE),
    ),
    "net": (
        ("id", "s", 1, (1, 64)),
        ("broker", "O", 0, _NET_BROKER),
        ("wifi", "O", 0, _NET_WIFI),
        ("trial_s", "u", 0, (10, 600)),
    ),
    "sync_req": (_NODE, _BOOT, _ID, _T1),
    "sync_resp": (_ID, _T1, ("t2", "u", 1, None), ("t3", "u", 1, None)),
    "sync_result": (
        _NODE,
        _BOOT,
        _ID,
        _T1,
        ("t2", "u", 1, None),
        ("t3", "u", 1, None),
        ("t4", "u", 1, None),
    ),
    "referee": (
        ("input", "O", 1, _INPUT),
        ("id", "s", 0, (1, 64)),
        ("by", "s", 0, (1, 32)),
        ("token", "s", 0, (1, 128)),
        ("rev", "s", 0, (1, 32)),
    ),
    "shot": (
        ("table", "g", 1, None),
        ("n", "u", 1, None),
        ("start", "i", 1, None),
        ("end", "i", 1, None),
        ("pocketed", "L", 1, (0, 64, _POCKETED)),
        ("rails", "L", 1, (0, 1024, _RAILHIT)),
        ("distinct_rails", "u", 0, (0, 6)),
        ("object_balls_to_rail", "u", 0, (0, 15)),
        ("rails_total", "u", 0, None),
        ("warnings", "l", 0, (32, (1, 200))),
    ),
    "state": (
        ("table", "g", 1, None),
        ("game", "e", 1, GAMES),
        ("state", "o", 1, None),
        ("fen", "s", 0, (1, FEN_MAX)),
        ("rev", "s", 0, (1, 32)),
        ("t", "i", 0, None),
    ),
    "inplay": (
        ("table", "g", 1, None),
        ("shot", "u", 1, None),
        ("start", "i", 1, None),
        ("pocketed", "L", 1, (0, 64, _INPLAY_BALL)),
        ("provisional", "b", 0, None),
    ),
    "announce": (
        ("table", "g", 1, None),
        ("text", "s", 1, (1, 120)),
        ("rule", "s", 2, (1, 32)),
        ("level", "e", 0, LEVELS),
    ),
    "summary": (
        ("venue", "g", 1, None),
        ("tables", "T", 1, (256, _TABLE)),
        ("complete", "b", 0, None),
        ("count", "u", 0, None),
        ("online_count", "u", 0, None),
        ("pocketed_today", "u", 0, None),
    ),
    "table_summary": (
        ("table", "g", 1, None),
        ("game", "e", 2, GAMES),
        ("scores", "n", 0, 8),
        ("at_table", "u", 2, None),
        ("online", "b", 0, None),
        ("pocketed_today", "u", 0, None),
        ("pockets", "o", 0, None),
        ("sensors", "o", 0, None),
    ),
    "referee_result": (
        ("table", "g", 1, None),
        ("id", "s", 3, (1, 64)),
        ("status", "e", 1, REFEREE_STATUSES),
        ("input", "s", 0, (1, 32)),
        ("error", "s", 0, (1, 200)),
        ("facts", "l", 0, (16, (1, 32))),
        ("rulings", "L", 0, (0, 32, _RULING)),
        ("fen", "s", 0, (1, FEN_MAX)),
        ("rev", "s", 0, (1, 32)),
    ),
    "host": (
        ("venue", "g", 1, None),
        ("state", "e", 1, NODE_STATES),
        ("period_s", "u", 0, (1, 3600)),
        ("seq", "u", 0, None),
        ("version", "s", 0, (1, 32)),
    ),
}
VENUE_KINDS = ("summary", "host")  # topic railbird/v1/<venue>/<kind>


# --- validation -----------------------------------------------------------------------
def _is_slug(s):
    if type(s) is not str or not 0 < len(s) <= 32 or s[0] not in _SLUG0:
        return False
    for c in s:
        if c not in _SLUG:
            return False
    return True


def _short(x):
    r = repr(x)
    return r if len(r) <= 40 else r[:37] + "..."


def _bad_type(path, what):
    return ProtocolError("bad type", path + ": expected " + what)


def _fields(obj, spec, where):
    for f in spec:
        name = f[0]
        if name in obj:
            val = obj[name]
            if val is None and f[2] & 2:
                continue
            _value(val, f[1], f[3], where + name)
        elif f[2] & 1:
            raise ProtocolError("missing field", where + name)


def _int(val, arg, path, what, lo, hi):
    if type(val) is not int:  # bool is not int (CPython: type(True) is bool)
        raise _bad_type(path, what)
    if arg is not None:
        lo = arg[0]
        hi = arg[1]
    if val < lo or val > hi:
        raise ProtocolError("bad value", "%s: %d not in %d..%d" % (path, val, lo, hi))


def _str(val, arg, path):
    if type(val) is not str:
        raise _bad_type(path, "string")
    n = len(val)
    if n < arg[0] or n > arg[1]:
        raise ProtocolError("bad value", "%s: length %d not in %d..%d" % (path, n, arg[0], arg[1]))


def _word(val, path, chars, lo, hi, what):
    # a string of lo..hi characters, each one of `chars`
    if type(val) is not str:
        raise _bad_type(path, "string")
    ok = lo <= len(val) <= hi
    for c in val:
        if c not in chars:
            ok = False
            break
    if not ok:
        raise ProtocolError("bad value", path + ": " + _short(val) + " is not " + what)


def _value(val, t, arg, path):
    if t == "u":
        _int(val, arg, path, "uint", 0, U64_MAX)
    elif t == "e":
        if type(val) is not str:
            raise _bad_type(path, "string")
        if val not in arg:
            raise ProtocolError(
                "bad value", "%s: %s not in %s" % (path, _short(val), " ".join(arg))
            )
    elif t == "i":
        _int(val, arg, path, "int", I64_MIN, I64_MAX)
    elif t == "k":
        _word(val, path, _KIND, 1, 32, "a kind name (1..32 of a-z 0-9 _)")
    elif t == "g":
        if type(val) is not str:
            raise _bad_type(path, "slug")
        if not _is_slug(val):
            raise ProtocolError("bad value", path + ": " + _short(val) + " is not a slug")
    elif t == "s":
        _str(val, arg, path)
    elif t == "L":
        if not isinstance(val, (list, tuple)):
            raise _bad_type(path, "list")
        n = len(val)
        if n < arg[0] or n > arg[1]:
            raise ProtocolError(
                "bad value", "%s: %d items, expected %d..%d" % (path, n, arg[0], arg[1])
            )
        sub = arg[2]
        i = 0
        for item in val:
            p = "%s[%d]" % (path, i)
            if not isinstance(item, dict):
                raise _bad_type(p, "object")
            _fields(item, sub, p + ".")
            i += 1
    elif t == "O":
        if not isinstance(val, dict):
            raise _bad_type(path, "object")
        _fields(val, arg, path + ".")
    elif t == "o":
        if not isinstance(val, dict):
            raise _bad_type(path, "object")
    elif t == "b":
        if val is not True and val is not False:
            raise _bad_type(path, "bool")
    elif t == "h":
        _word(val, path, _HEX, 8, 8, "8 lowercase hex digits")
    elif t == "l" or t == "n":
        if not isinstance(val, (list, tuple)):
            raise _bad_type(path, "list")
        mx = arg if t == "n" else arg[0]
        if len(val) > mx:
            raise ProtocolError("bad value", "%s: %d items, at most %d" % (path, len(val), mx))
        i = 0
        for item in val:
            if t == "n":
                _int(item, None, "%s[%d]" % (path, i), "int", I64_MIN, I64_MAX)
            else:
                _str(item, arg[1], "%s[%d]" % (path, i))
            i += 1
    elif t == "M" or t == "T":
        if not isinstance(val, dict):
            raise _bad_type(path, "object")
        mx = arg if t == "M" else arg[0]
        if len(val) > mx:
            raise ProtocolError("bad value", "%s: %d entries, at most %d" % (path, len(val), mx))
        for k in val:
            if t == "M":
                if type(k) is not str or not 0 < len(k) <= 32:
                    raise ProtocolError(
                        "bad value",
                        path + ": key " + _short(k) + " is not a name of 1..32 characters",
                    )
                _int(val[k], None, path + "." + k, "uint", 0, U64_MAX)
            else:
                if not _is_slug(k):
                    raise ProtocolError("bad value", path + ": key " + _short(k) + " is not a slug")
                p = path + "." + k
                if not isinstance(val[k], dict):
                    raise _bad_type(p, "object")
                _fields(val[k], arg[1], p + ".")
    else:  # a mistake in a spec table
        raise ProtocolError("bad value", path + ": unknown field type " + t)


def _check_events(msg):
    last = -1
    i = 0
    for ev in msg["events"]:
        p = "events[%d]." % i
        seq = ev["seq"]
        if seq <= last:
            raise ProtocolError(
                "bad value", "%sseq: %d not above %d (seq must strictly increase)" % (p, seq, last)
            )
        last = seq
        kind = ev["kind"]
        needs = _EVENT_NEEDS.get(kind)
        if needs is None:  # a kind added after this codec: the receiver counts and skips it
            i += 1
            continue
        _fields(ev, _EVENT_KNOWN, p)
        for name in needs:
            if name not in ev:
                raise ProtocolError(
                    "missing field", "%s%s (required for kind %s)" % (p, name, kind)
                )
        if kind == "lost" and ("pocket" in ev) == ("rail" in ev):
            raise ProtocolError("bad value", p + "kind: lost needs exactly one of pocket, rail")
        if "rgb" in ev:
            _check_rgb(ev["rgb"], p + "rgb", 3, "R G B")
        i += 1


def _check_rgb(rgb, path, n, what):
    # reflectances x COLOUR_SCALE: a `ball` event's R G B, a config's colour table
    if len(rgb) != n:
        raise ProtocolError(
            "bad value", "%s: %d items, expected %d (%s)" % (path, len(rgb), n, what)
        )
    i = 0
    for x in rgb:
        if x < 0 or x > COLOUR_RGB_MAX:
            raise ProtocolError(
                "bad value", "%s[%d]: %d not in 0..%d" % (path, i, x, COLOUR_RGB_MAX)
            )
        i += 1


def _check_status(msg):
    if msg["state"] == "online" and "uptime_us" not in msg:
        raise ProtocolError("missing field", "uptime_us (required when state is online)")


def _check_host(msg):
    if msg["state"] == "online" and "period_s" not in msg:
        raise ProtocolError("missing field", "period_s (required when state is online)")


def _check_config(msg):
    _check_sig(msg)
    for name in ("pockets", "rails"):
        seen = []
        i = 0
        for c in msg[name]:
            if c["ch"] in seen:
                raise ProtocolError(
                    "bad value", "%s[%d].ch: channel %d used twice" % (name, i, c["ch"])
                )
            seen.append(c["ch"])
            i += 1
    st = msg.get("strike")
    if st is not None:
        # the strike input is a rail-type input (comparator + ADC): one sensor per channel
        for c in msg["rails"]:
            if c["ch"] == st["ch"]:
                raise ProtocolError(
                    "bad value", "strike.ch: channel %d is also rail %s" % (st["ch"], c["rail"])
                )
    col = msg.get("colour")
    if col is not None:
        _check_rgb(col["rgb"], "colour.rgb", COLOUR_RGB_LEN, "9 colours x R G B")


def _check_shot(msg):
    if msg["end"] < msg["start"]:
        raise ProtocolError("bad value", "end: %d before start %d" % (msg["end"], msg["start"]))


def _check_sig(msg):
    s = msg.get("sig")
    if s is not None:
        for c in s:
            if c not in _HEX:
                raise ProtocolError("bad value", "sig: " + _short(s) + " is not lowercase hex")


def _check_update(msg):
    _check_sig(msg)
    h = msg["manifest_sha256"]
    for c in h:
        if c not in _HEX:
            raise ProtocolError(
                "bad value", "manifest_sha256: " + _short(h) + " is not 64 lowercase hex digits"
            )
    u = msg["url"]
    if not u.startswith("http://") or not u.endswith("/"):
        raise ProtocolError("bad value", "url: " + _short(u) + " is not http://.../")


def _check_net(msg):
    if "broker" not in msg and "wifi" not in msg:
        raise ProtocolError("missing field", "broker or wifi (a net command changes one)")


_CHECKS = {
    "events": _check_events,
    "status": _check_status,
    "host": _check_host,
    "config": _check_config,
    "shot": _check_shot,
    "update": _check_update,
    "net": _check_net,
}


def _spec(kind):
    spec = _SPECS.get(kind) if type(kind) is str else None
    if spec is None:
        raise ProtocolError("bad value", "kind: " + _short(kind) + " is not a message kind")
    return spec


def validate(kind, msg):
    """Check `msg` (a decoded dict) against message `kind`; return it unchanged or raise
    ProtocolError. Unknown fields are ignored."""
    spec = _spec(kind)
    if not isinstance(msg, dict):
        raise _bad_type("message", "object")
    if "v" not in msg:
        raise ProtocolError("missing field", "v")
    v = msg["v"]
    if type(v) is not int:
        raise _bad_type("v", "int")
    if v != VERSION:
        raise ProtocolError("unsupported version", str(v))
    _fields(msg, spec, "")
    check = _CHECKS.get(kind)
    if check is not None:
        check(msg)
    return msg


# --- encode / decode ------------------------------------------------------------------
def _no_constant(name):
    raise ValueError(name + " is not JSON")


try:  # CPython: refuse NaN/Infinity like MicroPython does; MicroPython: no keywords
    json.loads("0", parse_constant=_no_constant)
    _STRICT = True
except TypeError:
    _STRICT = False


def encode(kind: str, msg: dict) -> bytes:
    """Validate and serialise `msg` as compact UTF-8 JSON bytes (at most MAX_PAYLOAD)."""
    validate(kind, msg)
    try:
        if _STRICT:
            s = json.dumps(msg, separators=(",", ":"), allow_nan=False)
        else:
            s = json.dumps(msg, separators=(",", ":"))
    except (TypeError, ValueError, RuntimeError) as e:
        raise ProtocolError("bad value", "not serialisable as JSON: " + str(e))
    b = s.encode("utf-8")
    if len(b) > MAX_PAYLOAD:
        raise ProtocolError("too large", "%d > %d bytes" % (len(b), MAX_PAYLOAD))
    return b


def decode(kind, payload):
    """Parse and validate one payload (bytes or str) of message `kind`; return the dict."""
    _spec(kind)
    if isinstance(payload, str):
        try:
            n = len(payload.encode("utf-8"))
        except UnicodeError:
            raise ProtocolError("bad json", "payload is not UTF-8")
        s = payload
    elif isinstance(payload, (bytes, bytearray, memoryview)):
        n = len(payload)
        s = None
    else:
        raise _bad_type("payload", "bytes or str")
    if n > MAX_PAYLOAD:
        raise ProtocolError("too large", "%d > %d bytes" % (n, MAX_PAYLOAD))
    if n == 0:
        raise ProtocolError("bad json", "empty payload")
    if s is None:
        try:
            s = str(payload, "utf-8")
        except UnicodeError:
            raise ProtocolError("bad json", "payload is not UTF-8")
    try:
        msg = json.loads(s, parse_constant=_no_constant) if _STRICT else json.loads(s)
    except ValueError as e:
        raise ProtocolError("bad json", str(e) or "syntax error")
    except RuntimeError:  # CPython RecursionError on very deep nesting
        raise ProtocolError("bad json", "nested too deeply")
    return validate(kind, msg)


# --- topics ---------------------------------------------------------------------------
def _topic_slug(what, s):
    if not _is_slug(s):
        raise ProtocolError("bad topic", what + ": " + _short(s) + " is not a slug")


def topic(venue: str, table: str | None, kind: str, node: str | None = None) -> str:
    """The topic of message `kind`: node kinds need `node`; 'summary' and 'host' are
    venue-level (table and node None)."""
    _spec(kind)
    _topic_slug("venue", venue)
    if kind in VENUE_KINDS:
        if table is not None or node is not None:
            raise ProtocolError("bad topic", kind + " is venue-level: table and node must be None")
        return ROOT + "/" + venue + "/" + kind
    _topic_slug("table", table)
    assert table is not None  # for the type checker: _topic_slug refused None
    if kind in TABLE_KINDS or kind in _HAS_TABLE:
        if node is not None:
            raise ProtocolError("bad topic", kind + " is table-level: node must be None")
        leaf = kind
        if kind == "referee_result":
            leaf = REFEREE_RESULT_LEAF
        elif kind == "table_summary":
            leaf = TABLE_SUMMARY_LEAF
        return ROOT + "/" + venue + "/" + table + "/" + leaf
    _topic_slug("node", node)
    assert node is not None  # for the type checker: _topic_slug refused None
    return (
        ROOT + "/" + venue + "/" + table + "/node/" + node + "/" + _LEAVES[NODE_KINDS.index(kind)]
    )


def parse_topic(topic):
    """-> (venue, table, kind, node); table is None for 'summary' and 'host', node None
    unless a node topic. Raises ProtocolError 'bad topic' or 'unsupported version'."""
    if type(topic) is not str:
        raise ProtocolError("bad topic", "expected str, got " + type(topic).__name__)
    p = topic.split("/")
    n = len(p)
    if n < 4 or p[0] != "railbird":
        raise ProtocolError("bad topic", _short(topic) + " is not railbird/v1/...")
    if p[1] != "v1":
        ver = p[1]
        if len(ver) > 1 and ver[0] == "v" and ver[1:].isdigit():
            raise ProtocolError("unsupported version", ver[1:] + " (topic " + _short(topic) + ")")
        raise ProtocolError("bad topic", _short(topic) + ": no version after railbird/")
    _topic_slug("venue", p[2])
    if n == 4:
        if p[3] in VENUE_KINDS:
            return (p[2], None, p[3], None)
        raise ProtocolError("bad topic", _short(topic) + ": unknown venue topic")
    _topic_slug("table", p[3])
    if n == 5:
        if p[4] in TABLE_KINDS:
            return (p[2], p[3], p[4], None)
        if p[4] == TABLE_SUMMARY_LEAF:
            return (p[2], p[3], "table_summary", None)
    elif n == 6 and p[4] + "/" + p[5] == REFEREE_RESULT_LEAF:
        return (p[2], p[3], "referee_result", None)
    elif n >= 7 and p[4] == "node" and n <= 8:
        _topic_slug("node", p[5])
        leaf = p[6] if n == 7 else p[6] + "/" + p[7]
        if leaf in _LEAVES:
            return (p[2], p[3], NODE_KINDS[_LEAVES.index(leaf)], p[5])
    raise ProtocolError("bad topic", _short(topic) + ": unknown topic")


def decode_message(topic, payload):
    """Parse the topic, decode and validate the payload -> (kind, venue, table, node, msg).
    A message's own node/table/venue field must match its topic ('bad value')."""
    venue, table, kind, node = parse_topic(topic)
    msg = decode(kind, payload)
    if node is not None:
        if kind in _HAS_NODE and msg["node"] != node:
            raise ProtocolError(
                "bad value",
                "node: %s does not match topic node %s" % (_short(msg["node"]), _short(node)),
            )
    elif kind in VENUE_KINDS:
        if msg["venue"] != venue:
            raise ProtocolError(
                "bad value",
                "venue: %s does not match topic venue %s" % (_short(msg["venue"]), _short(venue)),
            )
    elif kind in _HAS_TABLE and msg["table"] != table:
        raise ProtocolError(
            "bad value",
            "table: %s does not match topic table %s" % (_short(msg["table"]), _short(table)),
        )
    return (kind, venue, table, node, msg)
