"""The host's answer to a referee console over MQTT (protocol/SPEC.md `referee_result`).

A console that publishes a `referee` message learns what became of it on the table's
`referee/result` topic: applied (with the rulings), held for the shot in play, a
duplicate of an input already applied, refused by the rules, or rejected (a wrong token,
a malformed message). The answer is sent only after the input is in the journal, so an
"ok" is never lost in a crash.
"""

from __future__ import annotations

import json

from railbird.core.records import PendingRecord, Record, RefereeRecord, StateRecord, Status
from railbird.core.revision import state_rev
from rbproto import codec

ERROR_MAX = 200
RULING_MAX = 300
RULINGS_MAX = 32


def _id_of(payload: bytes | str) -> str | None:
    """The message's `id`, also from a payload the codec refused (when it is JSON)."""
    try:
        msg = json.loads(payload)
    except (ValueError, TypeError, RecursionError):
        return None
    rid = msg.get("id") if isinstance(msg, dict) else None
    return rid if isinstance(rid, str) and 0 < len(rid) <= 64 else None


def _cut(value: object, n: int) -> str:
    text = str(value) or "-"
    return text if len(text) <= n else text[: n - 1] + "…"


def referee_answer(
    topic: str,
    payload: bytes | str,
    status: str,
    reason: str | None,
    records: list[Record],
) -> tuple[str, bytes] | None:
    """(topic, payload) of the `referee_result` for one MQTT input, or None when the input
    was not on a `referee` topic of a table."""
    try:
        # (core/fastcodec.py ignores the same call; annotating the codec's parse_topic is a
        # core change too)
        venue, table, kind, _ = codec.parse_topic(topic)  # type: ignore[no-untyped-call]  # unannotated codec
    except codec.ProtocolError:
        return None
    if kind != "referee" or table is None:
        return None
    # str(): the codec takes exact strs only, and the pipeline's status is a Status (StrEnum)
    msg: dict[str, object] = {"v": 1, "table": table, "id": _id_of(payload), "status": str(status)}
    for r in records:
        if isinstance(r, RefereeRecord):
            if r.input:
                msg["input"] = _cut(r.input.get("type"), 32)
            if r.rev is not None:  # stale: the revision to act on now
                msg["rev"] = r.rev
        elif isinstance(r, PendingRecord):
            msg["status"] = str(Status.PENDING)
            msg["facts"] = list(r.facts)[:16]
        elif isinstance(r, StateRecord) and status == Status.OK:
            msg["rulings"] = [
                {"text": _cut(a.get("text"), RULING_MAX), "rule": a.get("rule") or None}
                for a in r.announcements[:RULINGS_MAX]
            ]
            # a line past the protocol's limit is left out, never cut (a cut one is no state)
            if r.fen and len(r.fen) <= codec.FEN_MAX:
                msg["fen"] = r.fen
            rev = state_rev(r.fen)
            if rev is not None:
                msg["rev"] = rev
    if status not in (Status.OK, Status.PENDING):
        msg["error"] = _cut(reason or status, ERROR_MAX)
    try:
        return codec.topic(venue, table, "referee_result"), codec.encode("referee_result", msg)
    except codec.ProtocolError:
        return None
