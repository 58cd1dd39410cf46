"""The state line's first form, read (never written) so that the lines journals, snapshots
and displays already hold still give their state (protocol/REFEREE.md §6, "Older lines").

Every field in a fixed order, defaults included (`breaking=0 ... rw=- mw=-`), options by
their full names (`opt=referee,hanging_ball_us:6000000`), balls comma-separated, names
percent-encoded byte for byte; the trailing `unc end optrule check prov` left out when
empty and nothing after them is set. The line is canonical when this form's writer gives
it back exactly; anything else is refused, as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import fields
from typing import Any
from urllib.parse import quote, unquote

from . import fendoubt
from .errors import FenError
from .fenvalues import (
    BOOL,
    CALL,
    INT,
    INT_PAIR,
    OPT_INT,
    Codec,
    check_options,
    dec_balls,
    dec_int,
    enum,
    optional,
    pair,
)
from .frozen import replace
from .match import BREAK_ORDERS
from .options import OPTIONS
from .state import AWAITING, BALL_IN_HAND, ENDED, GROUPS, State

# A token only this form has: the line is read here when it holds one.
MARK = "breaking="


def _enc_str(s: str) -> str:
    return quote(s, safe="")


def _dec_str(t: str) -> str:
    if not t or any(c in t for c in " =/"):
        raise FenError(f"bad text {t!r}")
    return unquote(t)


def _enc_balls(balls: Iterable[int]) -> str:
    return ",".join(map(str, balls)) if balls else "-"


def _dec_balls(t: str) -> tuple[int, ...]:
    return () if t == "-" else dec_balls(t)


def _enc_opts(opts: Iterable[tuple[str, object]]) -> str:
    return ",".join(k if v is True else f"{k}:{v}" for k, v in opts) or "-"


def _dec_opts(t: str) -> tuple[tuple[str, object], ...]:
    if t == "-":
        return ()
    out: list[tuple[str, object]] = []
    for item in t.split(","):
        name, _, value = item.partition(":")
        if name not in OPTIONS:
            raise FenError(f"unknown option {name!r}")
        out.append((name, dec_int(value) if value else True))
    return check_options(tuple(out), t)


def _enc_facts(facts: Iterable[str]) -> str:
    return ",".join(facts) if facts else "-"


def _dec_facts(t: str) -> tuple[str, ...]:
    from .inputs import UNCERTAIN_FACTS

    if t == "-":
        return ()
    facts = tuple(t.split(","))
    if any(f not in UNCERTAIN_FACTS for f in facts) or list(facts) != sorted(set(facts)):
        raise FenError(f"bad fact list {t!r}")
    return facts


_S = (_enc_str, _dec_str)
_BALLS = (_enc_balls, _dec_balls)

# (field, key, codec) in the canonical order; None: fendoubt's compact form.
_FIELDS = (
    ("game", "g", _S),
    ("players", "p", pair(*_S)),
    ("goal", "goal", INT),
    ("break_order", "order", enum(BREAK_ORDERS)),
    ("options", "opt", (_enc_opts, _dec_opts)),
    ("awaiting", "aw", enum(AWAITING)),
    ("rack", "rack", INT),
    ("breaker", "brk", OPT_INT),
    ("at_table", "at", OPT_INT),
    ("breaking", "breaking", BOOL),
    ("ball_in_hand", "bih", enum(BALL_IN_HAND)),
    ("on_table", "table", _BALLS),
    ("pocketed", "out", _BALLS),
    ("to_spot", "spot", _BALLS),
    ("call", "call", CALL),
    ("safety", "safety", BOOL),
    ("push_out", "push", BOOL),
    ("push_out_allowed", "pushok", BOOL),
    ("fresh_rack", "fresh", BOOL),
    ("groups", "groups", pair(*enum(GROUPS))),
    ("fouls", "fouls", INT_PAIR),
    ("intent_warned", "warned", pair(*BOOL)),
    ("scores", "score", INT_PAIR),
    ("credited", "pts", INT_PAIR),
    ("penalties", "pen", INT_PAIR),
    ("run", "run", INT_PAIR),
    ("high_run", "high", INT_PAIR),
    ("inning", "inn", INT),
    ("rack_winner", "rw", OPT_INT),
    ("match_winner", "mw", OPT_INT),
    ("unconfirmed", "unc", (_enc_facts, _dec_facts)),
    ("ended", "end", enum(ENDED)),
    ("option_rule", "optrule", optional(*_S)),
    ("check", "check", None),
    ("provisional", "prov", None),
)
# `unc end optrule check prov`: left out when empty and nothing after them is set
_OPTIONAL_TAIL = 5
# State fields added after this form was replaced: at their defaults in every line of it
LATER = ("races",)
assert [f[0] for f in _FIELDS] == [f.name for f in fields(State) if f.name not in LATER]


def _enc(state: State, name: str, codec: Codec[Any] | None) -> str:
    return fendoubt.encode(state, name) if codec is None else codec[0](getattr(state, name))


def write(state: State) -> str:
    """The line this form gives `state` (only to tell a canonical line from another)."""
    tokens = [f"{key}={_enc(state, name, codec)}" for name, key, codec in _FIELDS]
    while len(tokens) > len(_FIELDS) - _OPTIONAL_TAIL and tokens[-1].endswith("=-"):
        tokens.pop()
    return " ".join(tokens)


def read(text: str, games: Mapping[str, object]) -> State:
    """The state of a line of this form; FenError unless `write` gives the line back."""
    tokens = text.split(" ")
    if not len(_FIELDS) - _OPTIONAL_TAIL <= len(tokens) <= len(_FIELDS):
        raise FenError(f"expected {len(_FIELDS)} fields, got {len(tokens)}")
    values: dict[str, Any] = {}  # decoded field values, of State's field types
    doubtful = {}
    # strict=False: the optional tail of _FIELDS may be missing from a line
    for token, (name, key, codec) in zip(tokens, _FIELDS, strict=False):
        k, sep, v = token.partition("=")
        if k != key or not sep:
            raise FenError(f"expected field {key}=, got {token!r}")
        if codec is None:
            doubtful[name] = v  # decoded with the game and options known
        else:
            values[name] = codec[1](v)
    if values["game"] not in games:
        raise FenError(f"unknown game {values['game']!r}")
    state = State(**values)
    if doubtful:
        decoded: dict[str, Any] = {n: fendoubt.decode(state, n, v) for n, v in doubtful.items()}
        state = replace(state, **decoded)
    if write(state) != text:
        raise FenError("not a canonical state line")
    return state
