"""A host-only fast path for the one message the host takes in bulk: node `events` batches.

`decode_message(topic, payload)` is `rbproto.codec.decode_message` with the same result for
every input: it only ever ACCEPTS here, and only a batch it can prove the shared codec
accepts, returning the very dict that codec would (the same JSON decoder, the same payload);
anything else, including every message of another kind, every unknown event kind and every
refusal, goes to the shared codec, which decides and words the error. So the protocol keeps
one codec (the firmware's), and this file is a shortcut through it, proven against it by
every protocol vector and a differential property test (tests/host/test_fastcodec.py).

Why it is faster (issue 16, item 5): the shared codec interprets its field-spec tables
field by field, builds a new JSON decoder per call (`json.loads` with `parse_constant`) and
parses the topic every time; here the decoder is made once, parsed topics are cached, and
an event of a known kind with the usual fields is checked by a few direct type and range
tests.
"""

from __future__ import annotations

import json
from typing import Any

from rbproto import codec

U64_MAX = codec.U64_MAX
MAX_PAYLOAD = codec.MAX_PAYLOAD
MAX_EVENTS = codec.MAX_EVENTS
POCKETS = frozenset(codec.POCKETS)
RAILS = frozenset(codec.RAILS)
# the optional fields every known event kind may carry, and the fields each known kind
# requires: the shared codec's own tables, so a kind added there is checked the same here
KNOWN_FIELDS = tuple(spec[0] for spec in codec._EVENT_KNOWN)
NEEDS = dict(codec._EVENT_NEEDS)
# (venue, table, kind, node) of a topic, as `codec.parse_topic` gives it
ParsedTopic = tuple[str, str | None, str, str | None]
# (kind, venue, table, node, msg), as `codec.decode_message` gives it; msg is decoded JSON
Decoded = tuple[str, str, str | None, str | None, dict[str, Any]]
TOPICS_KEPT = 4096  # parsed topics cached (a venue's node topics; cleared when full)
# the batch fields the shared codec knows (a `wm` before it knew one is its to judge)
BATCH_FIELDS = frozenset(f[0] for f in codec._SPECS["events"])


def _no_constant(name: str) -> None:
    raise ValueError(name + " is not JSON")  # NaN, Infinity: the codec refuses them too


_decoder = json.JSONDecoder(parse_constant=_no_constant)  # what codec.decode's json.loads makes
_raw_decode = _decoder.raw_decode
_topics: dict[str, ParsedTopic] = {}


def decode_message(topic: str, payload: bytes | str) -> Decoded:
    """-> (kind, venue, table, node, msg), exactly as `codec.decode_message`."""
    parsed: ParsedTopic | None = _topics.get(topic) if type(topic) is str else None
    if parsed is None:
        # raises as the codec would (rbproto.codec, shared with the firmware, is unannotated)
        parsed = codec.parse_topic(topic)  # type: ignore[no-untyped-call]  # unannotated codec
        if len(_topics) >= TOPICS_KEPT:
            _topics.clear()
        _topics[topic] = parsed
    venue, table, kind, node = parsed
    if kind == "events" and type(payload) is bytes:
        msg = _events(payload, node)
        if msg is not None:
            return (kind, venue, table, node, msg)
    decoded: Decoded = codec.decode_message(topic, payload)  # type: ignore[no-untyped-call]  # unannotated codec
    return decoded


def _events(payload: bytes, node: str | None) -> dict[str, Any] | None:
    """The decoded batch if it is certainly valid, else None (the codec decides)."""
    n = len(payload)
    if n == 0 or n > MAX_PAYLOAD:
        return None
    try:
        text = payload.decode("utf-8")
        # what `_decoder.decode` does, less its two whitespace scans: a payload with
        # whitespace around its object is left to the codec
        msg, end = _raw_decode(text)
    except (ValueError, RecursionError):  # bad UTF-8 or JSON: the codec words it
        return None
    if end != len(text):
        return None
    if type(msg) is not dict:
        return None
    v = msg.get("v")
    boot = msg.get("boot")
    evs = msg.get("events")
    # the topic's node is a slug (parse_topic), so an equal field is one too
    if type(v) is not int or v != codec.VERSION or msg.get("node") != node:
        return None
    if type(boot) is not int or boot < 0 or boot > U64_MAX:
        return None
    if type(evs) is not list or not 0 < len(evs) <= MAX_EVENTS:
        return None
    if "wm" in msg:
        wm = msg["wm"]
        if type(wm) is not int or wm < 0 or wm > U64_MAX or "wm" not in BATCH_FIELDS:
            return None
    last = -1
    for e in evs:
        if type(e) is not dict:
            return None
        seq = e.get("seq")
        t = e.get("t")
        kind = e.get("kind")
        if type(seq) is not int or type(t) is not int or type(kind) is not str:
            return None
        if seq <= last or seq > U64_MAX or t < 0 or t > U64_MAX:
            return None
        last = seq
        # the two kinds nearly every batch is made of, with their usual fields, checked
        # inline (what `_ok` checks); any other shape takes the general checks below
        n = len(e)
        if kind == "rail" and n == 5:
            val = e.get("rail")
            if type(val) is not str or val not in RAILS:
                return None
            val = e.get("amp")
            if type(val) is not int or val < 0 or val > 4095:
                return None
            continue
        if kind == "drop" and (n == 4 or (n == 5 and "dur" in e)):
            val = e.get("pocket")
            if type(val) is not str or val not in POCKETS:
                return None
            if n == 5:
                val = e["dur"]
                if type(val) is not int or val < 0 or val > U64_MAX:
                    return None
            continue
        needs = NEEDS.get(kind)
        if needs is None:
            return None
        if n == 3 + len(needs):
            # exactly the fields the kind needs (a missing one leaves a key we do not know,
            # which the checks below catch: it is then not one of them)
            for name in needs:
                if not _ok(name, e.get(name)):
                    return None
        else:
            for name in KNOWN_FIELDS:
                if name in e and not _ok(name, e[name]):
                    return None
            for name in needs:
                if name not in e:
                    return None
        if kind == "lost" and ("pocket" in e) == ("rail" in e):
            return None
    return msg


def _ok(name: str, val: object) -> bool:
    """Whether `val` is a valid value of the known event field `name` (None: absent or
    null, neither of which these fields allow)."""
    if name == "pocket":
        return type(val) is str and val in POCKETS
    if name == "rail":
        return type(val) is str and val in RAILS
    if name == "rgb":  # the one list-valued field: exactly R G B, each in range
        return (
            type(val) is list
            and len(val) == 3
            and all(type(x) is int and 0 <= x <= codec.COLOUR_RGB_MAX for x in val)
        )
    if type(val) is not int:
        return False
    if name == "amp":
        return 0 <= val <= 4095
    if name == "dur":
        return 0 <= val <= U64_MAX
    if name == "ball":
        return 0 <= val <= 15
    if name == "conf":
        return 0 <= val <= 100
    return 1 <= val <= U64_MAX  # n
