"""The referee token is checked once and then forgotten (issue 13, item 6).

MQTT referee input carries the venue's referee token (protocol/SPEC.md `referee`), which is
also the web referee app's PIN. The daemon checks it once, as the message arrives, and from
then on keeps only the message's *sealed* form: the `token` field replaced by `token_ok`,
the check's outcome (`seal`). The pipeline is fed the sealed form live and from the journal
alike, so a replay reaches the same verdict without the token, whatever token the replaying
config has, and the journal never holds it.

A console cannot forge a verdict: `seal` overwrites any `token_ok` a message brings, and the
pipeline honours `token_ok` only in input it is told was sealed (`authorized(sealed=True)`).
Seal the payload as received, once: a sealed payload sealed again loses its verdict.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Mapping

from rbproto import codec

TOKEN_OK = "token_ok"
TOKEN_MAX = 128  # protocol/SPEC.md `referee`: token 1…128

# A payload as it arrives (MQTT: bytes) or is read back (a journal's BLOB; bytearray,
# memoryview): anything `bytes()` copies
Payload = bytes | bytearray | memoryview
# What `_stand_in` puts where a refused token was: an empty value of its JSON type
StandIn = bool | int | float | str | list[object] | dict[str, object] | None


def is_referee_topic(topic: object) -> bool:
    return isinstance(topic, str) and topic.endswith("/referee")


def _same(given: str, token: str) -> bool:
    # compare_digest: a wrong guess takes as long whatever prefix of the token it shares
    return hmac.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8", "replace"))


def _stand_in(value: object) -> StandIn:
    """A value of the same JSON type that the codec refuses as a token just as it refused
    `value` (not a string, or a string of the wrong length), without the value itself."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return type(value)(0)
    if isinstance(value, list):
        return []
    if isinstance(value, dict):
        return {}
    return ""  # a string outside 1…TOKEN_MAX: "" is outside too


def _scrub(payload: bytes, token: str) -> bytes:
    """A payload that is not a JSON object within the size limit: refused by the codec
    whatever it says; the token's bytes, should they be in it, are overwritten in place
    (same length, so the codec refuses it for the same reason)."""
    if not token:
        return payload
    raw = token.encode("utf-8", "replace")
    return payload.replace(raw, b"*" * len(raw))


_ABSENT = object()


def seal(payload: Payload, token: str) -> bytes:
    """The form of one MQTT `referee` payload that the daemon feeds to the pipeline and
    journals: no `token`, and `token_ok` true when no token is configured or the message
    carries the configured one, false otherwise."""
    return _seal(payload, token, None)


def reseal(payload: Payload, ok: bool, token: str = "") -> bytes:
    """`payload` sealed with a verdict already reached (a journal written before sealing,
    whose status says whether the token was accepted); `token`, the one it was checked
    against, is overwritten also where the payload is not a JSON object."""
    return _seal(payload, token, bool(ok))


def _seal(payload: Payload, token: str, verdict: bool | None) -> bytes:
    raw = bytes(payload)
    if not 0 < len(raw) <= codec.MAX_PAYLOAD:
        return _scrub(raw, token)
    try:
        msg = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return _scrub(raw, token)
    if not isinstance(msg, dict):
        return _scrub(raw, token)
    given = msg.pop("token", _ABSENT)
    msg.pop(TOKEN_OK, None)
    if given is _ABSENT:
        ok = not token
    elif isinstance(given, str) and 0 < len(given) <= TOKEN_MAX:
        ok = not token or _same(given, token)
    else:  # the codec refuses the message for its token: keep the refusal, not the value
        msg["token"] = _stand_in(given)
        ok = False
    msg[TOKEN_OK] = ok if verdict is None else verdict and "token" not in msg
    try:
        return json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a \ud800 escape: keep it escaped
        return json.dumps(msg, separators=(",", ":")).encode("ascii")


def authorized(msg: Mapping[str, object], token: str, sealed: bool) -> bool:
    """Whether a decoded MQTT referee message may act: by its seal when `sealed` (and it has
    one), else by comparing its token with the configured one (no token configured: yes)."""
    if sealed and TOKEN_OK in msg:
        return msg[TOKEN_OK] is True
    if not token:
        return True
    given = msg.get("token")
    return isinstance(given, str) and _same(given, token)
