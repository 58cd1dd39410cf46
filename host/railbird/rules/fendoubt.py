"""The compact FEN form of a held shot (`check=`) and a provisional ruling (`prov=`).

The state keeps both as canonical JSON (doubt.canon), which holds the referee's choices as
full labels and the doubt as a sentence: percent-encoded on the state line that is 700-1000
characters, past the 512 the protocol allows a `fen` (protocol/SPEC.md `state`,
`referee_result`). Everything in them but a handful of numbers is derived: the labels are
the game's own foul names (or "legal break" / "no foul"), the sentence is doubt.describe
of the range, the estimate and the sensed yes/no values, the entry's rule is its first foul
choice's. So the line carries only those numbers and short codes, and the decoder rebuilds
the JSON byte for byte (protocol/REFEREE.md §6):

    check=<shot>|<facts>|<choices>     prov=<facts>|<sensed>|<choices>

- `<shot>`: `;`-separated items, each one letter and a value, in this order: `p` pocketed
  (`ball@pocket`, `?` for a ball not identified, `~us` rested on the lip, `!` jammed;
  comma-separated), `f` first contact (`-`: nothing hit), `a` rail after contact, `o`
  object balls to a rail, `r` its range `lo-hi`, `c` cue ball to a rail, `x` off the
  table, `F` declared fouls (percent-encoded), `R` replay, `u` uncertain facts.
  Yes/no as 1/0; facts by their one-letter codes (`FACT_CODES`).
- `<facts>`: the deciding facts, comma-separated codes.
- `<sensed>` (prov only): per deciding fact, the range and estimate (`lo-hi~est`) or the
  sensed yes/no (`1`, `0`, `n`: not sensed): what the sentence says.
- `<choices>`: comma-separated `values:label`, the values of the deciding facts joined by
  `.`; the label a code of the game's outcome (`L` legal break, `N` no foul, `6.1`,
  `6.11.2`, `g21` general 21, `b3` the break foul of a break with 3 balls to a rail). In
  `prov` the fair default's choice is marked `*`.

Whatever the compact form cannot rebuild exactly (a label outside the catalogue) is
written as before, percent-encoded JSON (a value starting with `%`), so the line stays
exact; the tests hold the longest reachable line to the protocol's limit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any
from urllib.parse import quote, unquote

from . import doubt
from .errors import FenError
from .fouls import GENERAL_FOULS, declarable, declared_foul
from .frozen import replace
from .inputs import INPUT_FIELDS, JsonObject, Shot
from .state import POCKETS, State

# One letter per fact (also the state line's `unc=`, rules/fen.py).
FACT_CODES = {
    "pocketed": "p",
    "first_contact": "f",
    "rail_after_contact": "a",
    "object_balls_to_rail": "o",
    "cue_ball_to_rail": "c",
    "off_table": "x",
}
FACT_NAMES = {v: k for k, v in FACT_CODES.items()}
_SAFE = ".~"  # what a code or declared foul keeps unescaped
# outcome code -> (label, rule) of every outcome a choice of a game may name
Catalogue = dict[str, tuple[str, str | None]]


class _Raw(Exception):
    """The value has no compact form: keep it as percent-encoded JSON."""


# -- labels -------------------------------------------------------------------------------
@lru_cache(maxsize=64)
def _catalogue(game: str, options: tuple[tuple[str, object], ...]) -> Catalogue:
    """code -> (label, rule) of every outcome a choice of `game` may name."""
    from .engine import GAMES

    g = GAMES[game]
    st = State(game=game, players=("a", "b"), goal=1, break_order="alternate", options=options)
    st = replace(st, breaking=True, on_table=g.full_rack())
    thai = st.opt_flag("thai_foul_names")
    out: Catalogue = {"L": ("legal break", None), "N": ("no foul", None)}
    for d in declarable(g, thai, every_code=True):
        foul = declared_foul(g, d["declare"], thai)
        assert foul is not None, d  # declarable() lists only fouls the game declares
        code = d["declare"].replace("general ", "g")
        out[code] = (f"foul: {foul.name}", foul.rule)
    out["g26"] = (f"foul: {GENERAL_FOULS[26][0]}", "general 26")  # bca_jump_miscue_foul
    for n in range(16):
        foul = g.break_foul(st, Shot(object_balls_to_rail=n, cue_ball_to_rail=False))
        if foul is not None and all(v != (f"foul: {foul.name}", foul.rule) for v in out.values()):
            out[f"b{n}"] = (f"foul: {foul.name}", foul.rule)
    return out


def _label_code(cat: Catalogue, label: str, rule: str | None) -> str:
    for code, v in cat.items():
        if v == (label, rule):
            return code
    raise _Raw


# -- values -------------------------------------------------------------------------------
def _int(t: str) -> int:
    if not re.fullmatch(r"-?\d+", t):
        raise FenError(f"bad number {t!r}")
    return int(t)


def _bool(t: str) -> bool:
    if t not in ("0", "1"):
        raise FenError(f"bad flag {t!r}")
    return t == "1"


def _ints(t: str) -> list[int]:
    return [_int(x) for x in t.split(",")] if t else []


def _facts(names: Iterable[str]) -> str:
    try:
        return ",".join(FACT_CODES[n] for n in names)
    except KeyError:
        raise _Raw from None


def _dec_facts(t: str) -> list[str]:
    try:
        return [FACT_NAMES[c] for c in t.split(",")] if t else []
    except KeyError:
        raise FenError(f"bad fact list {t!r}") from None


def _value(fact: str, v: object) -> str:
    if fact == doubt.RANGE:
        if type(v) is not int:
            raise _Raw
        return str(v)
    if type(v) is not bool:
        raise _Raw
    return "1" if v else "0"


def _dec_value(fact: str, t: str) -> int | bool:
    return _int(t) if fact == doubt.RANGE else _bool(t)


# -- the held shot (shot_dict's form) -------------------------------------------------------
def _enc_shot(d: JsonObject) -> str:
    if d.get("type") != "shot" or not isinstance(d.get("pocketed"), list):
        raise _Raw
    items = []
    pots = []
    for p in d["pocketed"]:
        ball = p.get("ball")
        if set(p) - {"ball", "pocket", "rested_us", "jammed"} or p.get("jammed") is False:
            raise _Raw
        s = ("?" if ball is None else str(ball)) + "@" + p["pocket"]
        if "rested_us" in p:
            s += f"~{p['rested_us']}"
        if p.get("jammed"):
            s += "!"
        pots.append(s)
    items.append("p" + ",".join(pots))
    if "first_contact" in d:
        fc = d["first_contact"]
        items.append("f" + ("-" if fc is None else str(fc)))
    for key, tag in (("rail_after_contact", "a"),):
        if key in d:
            items.append(tag + _value(key, d[key]))
    if "object_balls_to_rail" in d:
        items.append("o" + str(d["object_balls_to_rail"]))
    if "object_balls_to_rail_range" in d:
        lo, hi = d["object_balls_to_rail_range"]
        items.append(f"r{lo}-{hi}")
    if "cue_ball_to_rail" in d:
        items.append("c" + _value("cue_ball_to_rail", d["cue_ball_to_rail"]))
    if "off_table" in d:
        items.append("x" + ",".join(map(str, d["off_table"])))
    if "fouls" in d:
        items.append("F" + ",".join(quote(f, safe=_SAFE) for f in d["fouls"]))
    if "replay" in d:
        if not isinstance(d["replay"], str):
            raise _Raw
        items.append("R" + quote(d["replay"], safe=_SAFE))
    if "uncertain" in d:
        items.append("u" + _facts(d["uncertain"]))
    known = INPUT_FIELDS["shot"] | {"type"}
    if set(d) - known:
        raise _Raw
    return ";".join(items)


def _dec_shot(t: str) -> JsonObject:
    out: JsonObject = {"type": "shot"}
    for item in t.split(";"):
        tag, v = item[:1], item[1:]
        if tag == "p":
            pots = []
            for s in v.split(",") if v else []:
                m = re.fullmatch(r"(\?|\d+)@([A-Z]{2})(?:~(\d+))?(!?)", s)
                if m is None or m.group(2) not in POCKETS:
                    raise FenError(f"bad pocketed ball {s!r}")
                p: JsonObject = {"pocket": m.group(2)}
                if m.group(1) != "?":
                    p["ball"] = int(m.group(1))
                if m.group(3) is not None:
                    p["rested_us"] = int(m.group(3))
                if m.group(4):
                    p["jammed"] = True
                pots.append(p)
            out["pocketed"] = pots
        elif tag == "f":
            out["first_contact"] = None if v == "-" else _int(v)
        elif tag == "a":
            out["rail_after_contact"] = _bool(v)
        elif tag == "o":
            out["object_balls_to_rail"] = _int(v)
        elif tag == "r":
            lo, sep, hi = v.partition("-")
            if not sep:
                raise FenError(f"bad range {v!r}")
            out["object_balls_to_rail_range"] = [_int(lo), _int(hi)]
        elif tag == "c":
            out["cue_ball_to_rail"] = _bool(v)
        elif tag == "x":
            out["off_table"] = _ints(v)
        elif tag == "F":
            out["fouls"] = [unquote(f) for f in v.split(",")]
        elif tag == "R":
            out["replay"] = unquote(v)
        elif tag == "u":
            out["uncertain"] = _dec_facts(v)
        else:
            raise FenError(f"bad shot item {item!r}")
    if "pocketed" not in out:
        raise FenError("a held shot lists its pocketed balls")
    return out


# -- choices ------------------------------------------------------------------------------
def _enc_choices(
    cat: Catalogue, names: list[str], choices: list[doubt.Choice], fair: int | None = None
) -> str:
    out = []
    base = _untold(choices, names)
    for i, c in enumerate(choices):
        if set(c) != {"label", "facts", "rule"} or sorted(c["facts"]) != sorted(names):
            raise _Raw
        vals = ".".join(_value(f, c["facts"][f]) for f in names)
        code = _label_code(cat, base[i], c["rule"])
        out.append(("*" if i == fair else "") + vals + ":" + quote(code, safe=_SAFE))
    return ",".join(out)


def _untold(choices: list[doubt.Choice], names: list[str]) -> list[str]:
    """The labels without the facts general.decide appends to tell two alike apart."""
    out = []
    for c in choices:
        facts = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in c["facts"].items())
        suffix = f" ({facts})"
        label = c["label"]
        out.append(label[: -len(suffix)] if label.endswith(suffix) else label)
    return out


def _dec_choices(cat: Catalogue, names: list[str], t: str) -> tuple[list[doubt.Choice], int | None]:
    choices: list[doubt.Choice] = []
    fair: int | None = None
    for i, s in enumerate(t.split(",") if t else []):
        if s.startswith("*"):
            fair, s = i, s[1:]
        vals, sep, code = s.partition(":")
        parts = vals.split(".") if names else []
        if not sep or len(parts) != len(names) or unquote(code) not in cat:
            raise FenError(f"bad choice {s!r}")
        label, rule = cat[unquote(code)]
        facts = {f: _dec_value(f, v) for f, v in zip(names, parts, strict=True)}
        choices.append({"label": label, "facts": facts, "rule": rule})
    doubt.tell_apart(choices)
    return choices, fair


# -- the sentence ---------------------------------------------------------------------------
def _sensed_shot(names: list[str], t: str) -> tuple[Shot, list[doubt.Axis]]:
    """A shot with the doubtful values `t` says, and the axes of `names` in it."""
    parts = t.split(",") if t else []
    if len(parts) != len(names):
        raise FenError(f"bad sensed values {t!r}")
    kw: dict[str, Any] = {"uncertain": tuple(sorted(n for n in names if n != doubt.RANGE))}
    for name, v in zip(names, parts, strict=True):
        if name == doubt.RANGE:
            m = re.fullmatch(r"(\d+)-(\d+)(?:~(\d+))?", v)
            if m is None:
                raise FenError(f"bad range {v!r}")
            kw["object_balls_to_rail_range"] = (int(m.group(1)), int(m.group(2)))
            kw["object_balls_to_rail"] = None if m.group(3) is None else int(m.group(3))
        elif v in ("0", "1", "n"):
            kw[name] = None if v == "n" else v == "1"
        else:
            raise FenError(f"bad sensed value {v!r}")
    shot = Shot(**kw)
    return shot, [a for a in doubt.axes(shot) if a[0] in names]


_RANGE_TEXT = re.compile(
    r"object balls to a rail (\d+)-(\d+) by the rail sensors(?: \(estimate (\d+)\))?"
)
_SAID = {"not sensed, not certain": "n", "sensed yes, not certain": "1"}


def _enc_sensed(names: list[str], text: str) -> str:
    """The doubtful values doubt.describe put in `text` (checked by the round trip)."""
    out = []
    for part, name in zip(text.split("; "), names, strict=False):
        if name == doubt.RANGE:
            m = _RANGE_TEXT.fullmatch(part)
            if m is None:
                raise _Raw
            out.append(f"{m.group(1)}-{m.group(2)}" + (f"~{m.group(3)}" if m.group(3) else ""))
        else:
            said = part.rpartition(": ")[2]
            out.append(_SAID.get(said, "0"))
    return ",".join(out)


# -- the two fields -------------------------------------------------------------------------
def _check(st: State, held: JsonObject) -> str:
    cat = _catalogue(st.game, st.options)
    names = held["facts"]
    return "|".join(
        (_enc_shot(held["shot"]), _facts(names), _enc_choices(cat, names, held["choices"]))
    )


def _dec_check(st: State, t: str) -> JsonObject:
    parts = t.split("|")
    if len(parts) != 3:
        raise FenError(f"bad held shot {t!r}")
    names = _dec_facts(parts[1])
    shot = _dec_shot(parts[0])
    choices, _ = _dec_choices(_catalogue(st.game, st.options), names, parts[2])
    from .inputs import parse_shot

    try:
        parsed = parse_shot(dict(shot))
    except Exception as e:  # noqa: BLE001 - any refusal of the held shot is a bad line
        raise FenError(f"bad held shot: {e}") from None
    ax = [a for a in doubt.axes(parsed) if a[0] in names]
    return {"shot": shot, "facts": names, "choices": choices, "text": doubt.describe(parsed, ax)}


def _prov(st: State, entry: JsonObject) -> str:
    cat = _catalogue(st.game, st.options)
    names = entry["facts"]
    labels = [c["label"] for c in entry["choices"]]
    if entry["ruling"] not in labels:
        raise _Raw
    fair = labels.index(entry["ruling"])
    return "|".join(
        (
            _facts(names),
            _enc_sensed(names, entry["text"]),
            _enc_choices(cat, names, entry["choices"], fair),
        )
    )


def _dec_prov(st: State, t: str) -> JsonObject:
    parts = t.split("|")
    if len(parts) != 3:
        raise FenError(f"bad provisional ruling {t!r}")
    names = _dec_facts(parts[0])
    if not names:
        raise FenError("a provisional ruling names the facts it depends on")
    shot, ax = _sensed_shot(names, parts[1])
    choices, fair = _dec_choices(_catalogue(st.game, st.options), names, parts[2])
    if fair is None:
        raise FenError("a provisional ruling marks its fair default")
    fouled = [c["rule"] for c in choices if c["rule"] is not None]
    return {
        "fact": names[0],
        "facts": names,
        "ruling": choices[fair]["label"],
        "rule": fouled[0] if fouled else "1.10",
        "text": doubt.describe(shot, ax),
        "choices": choices,
    }


def encode(st: State, field: str) -> str:
    """The FEN value of `st.check` / `st.provisional` (field "check" / "provisional")."""
    text = getattr(st, field)
    if text is None:
        return "-"
    try:
        obj = json.loads(text)
        if field == "check":
            out = _check(st, obj)
        elif isinstance(obj, list) and len(obj) == 1:
            out = _prov(st, obj[0])
        else:
            raise _Raw
        if decode(st, field, out) == text:
            return out
    except (_Raw, FenError, KeyError, TypeError, ValueError, AttributeError):
        pass
    return quote(text, safe="")


def decode(st: State, field: str, t: str) -> str | None:
    """`st.check` / `st.provisional` from its FEN value; `st` gives the game and options."""
    if t == "-":
        return None
    if t.startswith("%"):  # percent-encoded JSON: what the compact form cannot say
        text = unquote(t)
        try:
            json.loads(text)
        except ValueError:
            raise FenError(f"bad {field} {t!r}") from None
        return text
    if field == "check":
        return doubt.canon(_dec_check(st, t))
    return doubt.canon([_dec_prov(st, t)])
