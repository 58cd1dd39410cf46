"""A canonical one-line text form of a game state (like chess's FEN) for logs, diffs,
tests and the displays (protocol/REFEREE.md §6). Space-separated `key=value` tokens in a
fixed order; a field at its default is left out (`g`, `p` and `goal` are always there).
`from_fen(to_fen(s)) == s` and `to_fen(from_fen(t)) == t`.

Example: `g=10-ball p=Ann/Bob goal=3 rack=2 brk=1 at=1 fl=b bih=kitchen
table=1,2,3,4,5,6,7,8,9,10 score=1/0 inn=5`

The protocol carries the line in at most 512 characters (rbproto.codec.FEN_MAX), so the
values are short: options by one letter, the five flags in one field, facts by one
letter, names with only what the line's syntax needs escaped (a Thai name stays Thai
text, not nine characters a letter). The longest lines a real match makes are held to
that in tests/rules/test_fen_worst_case.py. Lines of the first form (every field written,
`breaking=0 ...`) are still read, by rules/fenlegacy.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields
from typing import Any
from urllib.parse import unquote

from . import fendoubt, fenlegacy
from .errors import FenError
from .fenvalues import (
    BOOL,
    CALL,
    INT,
    INT_PAIR,
    PLAYER,
    check_options,
    dec_balls,
    dec_int,
    enum,
    pair,
)
from .frozen import replace
from .match import BREAK_ORDERS
from .options import OPTIONS
from .state import AWAITING, BALL_IN_HAND, ENDED, GROUPS, State

# One letter per option on the line. Stable: a letter once given is never reused.
OPTION_CODES = {
    "bca_34_same_breaker": "B",
    "bca_jump_miscue_foul": "J",
    "hanging_ball_us": "H",
    "referee": "R",
    "thai_4_11_count_from_one": "O",
    "thai_4_11_fifteen": "F",
    "thai_4_3_any_ball": "A",
    "thai_4_8_c_apex": "X",
    "thai_9_3_count_cue_ball": "C",
    "thai_foul_names": "N",
    "wpa2016_ten_last_ball": "L",
    "wpa2025_no_safety_call": "S",
}
assert set(OPTION_CODES) == set(OPTIONS), "every option needs a letter on the state line"
assert len(set(OPTION_CODES.values())) == len(OPTION_CODES)
_OPTION_NAMES = {c: n for n, c in OPTION_CODES.items()}

# The five yes/no fields of a turn, one letter each in `fl=`, in this order.
_FLAGS = (
    ("breaking", "b"),
    ("safety", "s"),
    ("push_out", "p"),
    ("push_out_allowed", "o"),
    ("fresh_rack", "f"),
)
_FLAG_FIELDS = tuple(name for name, _ in _FLAGS)


# -- text ---------------------------------------------------------------------------------
def _enc_str(s: str) -> str:
    """Percent-encoded (UTF-8) only where the line's syntax needs it: `%`, `=`, `/`,
    whitespace and characters that do not print; anything else as it is."""
    out = []
    for c in s:
        if c in "%=/" or c.isspace() or not c.isprintable():
            out.append("".join(f"%{b:02X}" for b in c.encode()))
        else:
            out.append(c)
    return "".join(out)


def _dec_str(t: str) -> str:
    if not t or any(c in t for c in "=/") or any(c.isspace() for c in t):
        raise FenError(f"bad text {t!r}")
    try:
        return unquote(t, errors="strict")
    except UnicodeDecodeError:
        raise FenError(f"bad text {t!r}") from None


# -- values -------------------------------------------------------------------------------
def _enc_opts(opts: Iterable[tuple[str, object]]) -> str:
    return "".join(OPTION_CODES[k] + ("" if v is True else str(v)) for k, v in opts)


def _dec_opts(t: str) -> tuple[tuple[str, object], ...]:
    out: list[tuple[str, object]] = []
    i = 0
    while i < len(t):
        name = _OPTION_NAMES.get(t[i])
        if name is None:
            raise FenError(f"unknown option {t[i]!r} in {t!r}")
        j = i + 1
        while j < len(t) and t[j].isdigit():
            j += 1
        out.append((name, dec_int(t[i + 1 : j]) if j > i + 1 else True))
        i = j
    return check_options(tuple(out), t)


def _enc_flags(state: State) -> str:
    return "".join(code for name, code in _FLAGS if getattr(state, name))


def _dec_flags(t: str) -> dict[str, bool]:
    out = {name: code in t for name, code in _FLAGS}
    if len(set(t)) != len(t) or set(t) - {code for _, code in _FLAGS}:
        raise FenError(f"bad flags {t!r}")
    return out


def _enc_balls(balls: Iterable[int]) -> str:
    return ",".join(map(str, balls))


def _enc_facts(facts: Iterable[str]) -> str:
    return "".join(fendoubt.FACT_CODES[f] for f in facts)


def _dec_facts(t: str) -> tuple[str, ...]:
    try:
        facts = tuple(fendoubt.FACT_NAMES[c] for c in t)
    except KeyError:
        raise FenError(f"bad fact list {t!r}") from None
    if list(facts) != sorted(set(facts)):  # the state keeps them sorted
        raise FenError(f"bad fact list {t!r}")
    return facts


_S = (_enc_str, _dec_str)
_BALLS = (_enc_balls, dec_balls)

# (field, key, codec, default) in the canonical order; a field equal to its default is left
# out (so `aw=-` or `fouls=0/0` is not canonical: the decoder reads it, the line written
# back differs, and it is refused); codec None: fendoubt's compact form; `fl` stands for
# the five fields of _FLAGS.
_FIELDS = (
    ("game", "g", _S, None),
    ("players", "p", pair(*_S), None),
    ("goal", "goal", INT, None),
    ("break_order", "order", enum(BREAK_ORDERS), "alternate"),
    ("options", "opt", (_enc_opts, _dec_opts), ()),
    ("awaiting", "aw", enum(AWAITING), None),
    ("rack", "rack", INT, 1),
    ("breaker", "brk", PLAYER, None),
    ("at_table", "at", PLAYER, None),
    ("flags", "fl", None, ""),
    ("ball_in_hand", "bih", enum(BALL_IN_HAND), None),
    ("on_table", "table", _BALLS, ()),
    ("pocketed", "out", _BALLS, ()),
    ("to_spot", "spot", _BALLS, ()),
    ("call", "call", CALL, None),
    ("groups", "groups", pair(*enum(GROUPS)), (None, None)),
    ("fouls", "fouls", INT_PAIR, (0, 0)),
    ("intent_warned", "warned", pair(*BOOL), (False, False)),
    ("scores", "score", INT_PAIR, (0, 0)),
    ("credited", "pts", INT_PAIR, (0, 0)),
    ("penalties", "pen", INT_PAIR, (0, 0)),
    ("run", "run", INT_PAIR, (0, 0)),
    ("high_run", "high", INT_PAIR, (0, 0)),
    ("inning", "inn", INT, 0),
    ("rack_winner", "rw", PLAYER, None),
    ("match_winner", "mw", PLAYER, None),
    ("unconfirmed", "unc", (_enc_facts, _dec_facts), ()),
    ("ended", "end", enum(ENDED), None),
    ("option_rule", "optrule", _S, None),
    # REFEREE.md §3b, in the compact form of fendoubt (the JSON rebuilt from the game)
    ("check", "check", None, None),
    ("provisional", "prov", None, None),
    ("races", "races", INT_PAIR, None),  # a handicapped match: a race per player
)
_ALWAYS = ("g", "p", "goal")
assert [f[0] for f in _FIELDS if f[0] != "flags"] == [
    f.name for f in fields(State) if f.name not in _FLAG_FIELDS
]


def _value(state: State, name: str) -> Any:  # the field named: its codec takes it
    return _enc_flags(state) if name == "flags" else getattr(state, name)


def to_fen(state: State) -> str:
    tokens = []
    for name, key, codec, default in _FIELDS:
        value = _value(state, name)
        if key in _ALWAYS or value != default:
            if name == "flags":
                text = value
            elif codec is None:
                text = fendoubt.encode(state, name)
            else:
                text = codec[0](value)
            tokens.append(f"{key}={text}")
    return " ".join(tokens)


def from_fen(text: str) -> State:
    if not isinstance(text, str):
        raise FenError("a state line is text")
    from .engine import GAMES

    if any(t.startswith(fenlegacy.MARK) for t in text.split(" ")):
        return fenlegacy.read(text, GAMES)
    values: dict[str, Any] = {}  # decoded field values, of State's field types
    doubtful = {}
    at = 0
    for token in text.split(" "):
        key, sep, v = token.partition("=")
        while at < len(_FIELDS) and _FIELDS[at][1] != key:
            at += 1
        if at == len(_FIELDS) or not sep or not v:
            raise FenError(f"unexpected field {token!r}")
        name, _, codec, _ = _FIELDS[at]
        at += 1
        if name == "flags":
            values.update(_dec_flags(v))
        elif codec is None:
            doubtful[name] = v  # decoded with the game and options known
        else:
            values[name] = codec[1](v)
    if not all(n in values for n in ("game", "players", "goal")):
        raise FenError("a state line starts with g=, p= and goal=")
    if values["game"] not in GAMES:
        raise FenError(f"unknown game {values['game']!r}")
    defaults = {n: d for n, _, _, d in _FIELDS if n not in ("flags", "check", "provisional")}
    state = State(**{**defaults, **values})
    if doubtful:
        decoded: dict[str, Any] = {n: fendoubt.decode(state, n, v) for n, v in doubtful.items()}
        state = replace(state, **decoded)
    if to_fen(state) != text:
        raise FenError("not a canonical state line")
    return state
