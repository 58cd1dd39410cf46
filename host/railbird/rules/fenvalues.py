"""Value codecs shared by the state line's two forms (rules/fen.py writes and reads the
current one, rules/fenlegacy.py reads the first). A codec is an (encode, decode) pair;
decode raises FenError on text its encode cannot have written."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .errors import FenError
from .options import OPTIONS
from .state import POCKETS

T = TypeVar("T")
# (encode, decode) of one value type
Codec = tuple[Callable[[T], str], Callable[[str], T]]


def dec_int(t: str) -> int:
    try:
        return int(t)
    except ValueError:
        raise FenError(f"bad number {t!r}") from None


def enc_bool(b: bool) -> str:
    return "1" if b else "0"


def dec_bool(t: str) -> bool:
    if t not in ("0", "1"):
        raise FenError(f"bad flag {t!r}")
    return t == "1"


def optional(enc: Callable[[T], str], dec: Callable[[str], T]) -> Codec[T | None]:
    """`-` for None."""
    return (lambda v: "-" if v is None else enc(v)), (lambda t: None if t == "-" else dec(t))


def pair(enc: Callable[[T], str], dec: Callable[[str], T]) -> Codec[tuple[T, T]]:
    """A per-player pair as `a/b`."""

    def d(t: str) -> tuple[T, T]:
        parts = t.split("/")
        if len(parts) != 2:
            raise FenError(f"bad pair {t!r}")
        return dec(parts[0]), dec(parts[1])

    return (lambda v: f"{enc(v[0])}/{enc(v[1])}"), d


def enum(values: tuple[str | None, ...]) -> Codec[str | None]:
    """One of `values`, None written `-`."""

    def d(t: str) -> str | None:
        v = None if t == "-" else t
        if v not in values:
            raise FenError(f"bad value {t!r}")
        return v

    return (lambda v: "-" if v is None else v), d


def enc_call(c: tuple[int, str] | None) -> str:
    return "-" if c is None else f"{c[0]}@{c[1]}"


def dec_call(t: str) -> tuple[int, str] | None:
    if t == "-":
        return None
    ball, _, pocket = t.partition("@")
    if pocket not in POCKETS:
        raise FenError(f"bad call {t!r}")
    return dec_int(ball), pocket


def check_balls(balls: tuple[int, ...], t: str) -> tuple[int, ...]:
    """Object balls in increasing order, as the state keeps them (to_spot too: general 31
    spots the lowest first)."""
    if any(not 0 < b <= 15 for b in balls) or list(balls) != sorted(set(balls)):
        raise FenError(f"bad ball list {t!r}")
    return balls


def dec_balls(t: str) -> tuple[int, ...]:
    """A comma-separated ball list (`check_balls`)."""
    return check_balls(tuple(dec_int(x) for x in t.split(",")), t)


def check_options(
    options: tuple[tuple[str, object], ...], t: str
) -> tuple[tuple[str, object], ...]:
    """Options as options.parse_options gives them: sorted by name, each once, each of its
    type and away from its default."""
    names = [n for n, _ in options]
    if names != sorted(set(names)):
        raise FenError(f"bad option list {t!r}")
    for name, value in options:
        default = OPTIONS[name].default
        if type(value) is not type(default) or value == default:
            raise FenError(f"bad option {name} in {t!r}")
    return options


def dec_player(t: str) -> int:
    if t not in ("0", "1"):
        raise FenError(f"bad player {t!r}")
    return int(t)


INT = (str, dec_int)
PLAYER = (str, dec_player)
BOOL = (enc_bool, dec_bool)
OPT_INT = optional(str, dec_int)
INT_PAIR = pair(str, dec_int)
CALL = (enc_call, dec_call)
