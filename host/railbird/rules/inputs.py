"""Parsing of JSON input dicts into typed values (the contract in protocol/REFEREE.md).

Only the form is checked here (types, ranges, known fields): a wrong form is `BadInput`.
Whether the facts are possible on the current table is checked by the rules
(`ImpossibleInput`), and whether they are legal is the rules' job (fouls).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any, TypeGuard, overload

from .errors import BadInput
from .state import POCKETS

# An input or a match set-up as decoded from JSON: its values are checked where they are read
# (get_int, get_bool, get_str, get_pocket, parse_shot), so they are Any until then.
JsonObject = dict[str, Any]

# Fields any input may carry for the integrator's own use; the engine ignores them.
PASSIVE_FIELDS = {"type", "t_us", "source", "comment"}

# Facts of a shot; the ones a sensor may flag as uncertain, and a `confirm` may correct.
SHOT_FACTS = (
    "pocketed",
    "first_contact",
    "rail_after_contact",
    "object_balls_to_rail",
    "cue_ball_to_rail",
    "off_table",
    "fouls",
)
UNCERTAIN_FACTS = tuple(sorted(set(SHOT_FACTS) - {"fouls"}))
SOURCES = ("sensed", "inferred", "referee")  # protocol/SPEC.md `shot` pocketed[].source

INPUT_FIELDS = {
    "match": {
        "game",
        "players",
        "race_to",
        "races",
        "target",
        "break_order",
        "options",
        "referee",
        "shot_clock",
    },
    "lag": {"winner", "breaker"},
    "call": {"ball", "pocket", "safety"},
    "push_out": set(),
    "shot": {
        "pocketed",
        "first_contact",
        "rail_after_contact",
        "object_balls_to_rail",
        "object_balls_to_rail_range",
        "cue_ball_to_rail",
        "off_table",
        "fouls",
        "replay",
        "uncertain",
        "entered",
    },
    "option": {"choice"},
    "rerack": {"cue_ball_in_rack_area", "ball_in_rack_area", "ball_behind_head_string"},
    "undo": set(),
    "confirm": set(SHOT_FACTS),
    "stalemate": set(),
    "interference": set(),
    "concede": {"player"},
    "abandon": set(),
}
CHOICES = ("shoot", "pass", "accept", "rebreak", "spot", "break", "kitchen")


def input_type(inp: object) -> str:
    if not isinstance(inp, dict):
        raise BadInput("an input must be a JSON object")
    kind = inp.get("type")
    if not isinstance(kind, str) or kind not in INPUT_FIELDS:
        raise BadInput(f"unknown input type {kind!r}")
    extra = set(inp) - INPUT_FIELDS[kind] - PASSIVE_FIELDS
    if extra:
        raise BadInput(f"unknown field(s) for {kind}: {', '.join(sorted(map(str, extra)))}")
    return kind


def _is_int(x: object) -> TypeGuard[int]:  # bool is not an int here
    return type(x) is int


@overload
def get_int(d: JsonObject, key: str, lo: int, hi: int) -> int | None: ...
@overload
def get_int(d: JsonObject, key: str, lo: int, hi: int, *, default: int) -> int: ...
def get_int(d: JsonObject, key: str, lo: int, hi: int, *, default: int | None = None) -> int | None:
    if d.get(key) is None:  # absent or null: not reported
        return default
    x = d[key]
    if not _is_int(x) or not lo <= x <= hi:
        raise BadInput(f"{key} must be an integer from {lo} to {hi}")
    return x


@overload
def get_bool(d: JsonObject, key: str) -> bool | None: ...
@overload
def get_bool(d: JsonObject, key: str, *, default: bool) -> bool: ...
def get_bool(d: JsonObject, key: str, *, default: bool | None = None) -> bool | None:
    if d.get(key) is None:  # absent or null: not reported
        return default
    x = d[key]
    if type(x) is not bool:
        raise BadInput(f"{key} must be true or false")
    return x


@overload
def get_str(d: JsonObject, key: str) -> str | None: ...
@overload
def get_str(d: JsonObject, key: str, *, default: str) -> str: ...
def get_str(d: JsonObject, key: str, *, default: str | None = None) -> str | None:
    if d.get(key) is None:
        return default
    x = d[key]
    if not isinstance(x, str):
        raise BadInput(f"{key} must be a string")
    return x


# A player's name is shown on every screen, printed in terminals and exported to
# spreadsheets: a readable length, and no control character (a terminal escape, a line
# break that splits a CSV row or a state line).
NAME_MAX = 64


def check_name(name: str) -> str:
    if len(name) > NAME_MAX:
        raise BadInput(f"a player's name is at most {NAME_MAX} characters ({len(name)} given)")
    if any(unicodedata.category(c) == "Cc" for c in name):
        raise BadInput("a player's name may not contain control characters")
    return name


def get_pocket(d: JsonObject, key: str = "pocket") -> str:
    p = d.get(key)
    if not isinstance(p, str) or p not in POCKETS:
        raise BadInput(f"{key} must be one of {' '.join(POCKETS)}")
    return p


@dataclass(frozen=True)
class Potted:
    ball: int | None  # None: identity not sensed
    pocket: str
    rested_us: int | None = None  # general 30: time motionless on the lip before it fell
    jammed: bool = False  # general 32: judged to drop from a jam


@dataclass(frozen=True)
class Shot:
    pocketed: tuple[Potted, ...] = ()
    first_contact: int | None = None
    contact_reported: bool = False  # False: nobody said; the fair default applies
    rail_after_contact: bool | None = None
    object_balls_to_rail: int | None = None
    # (lo, hi): what the sensors support; the ruling must hold for every value in it, or
    # wait for the referee / be provisional (REFEREE.md §3b). None: no range given.
    object_balls_to_rail_range: tuple[int, int] | None = None
    cue_ball_to_rail: bool | None = None
    off_table: tuple[int, ...] = ()
    fouls: tuple[str, ...] = ()
    replay: str | None = None  # general 30 / 34: shot void, replayed
    uncertain: tuple[str, ...] = ()  # sorted fact names flagged uncertain (awaiting confirm)

    @property
    def balls(self) -> list[int | None]:  # None: identity not sensed (Potted)
        return [p.ball for p in self.pocketed]

    @property
    def objects_pocketed(self) -> set[int]:
        return {p.ball for p in self.pocketed if p.ball}

    @property
    def scratch(self) -> bool:
        return 0 in self.balls or 0 in self.off_table

    def pocket_of(self, ball: int) -> str | None:
        for p in self.pocketed:
            if p.ball == ball:
                return p.pocket
        return None


def referee_drop(item: object) -> object:
    """A pocketed entry of a `confirm` correction as the shot keeps it: certain (never
    `inferred` any more), and the referee's unless it says it is as `sensed` (REFEREE.md
    §3c: a drop without a ball stays presumed)."""
    if not isinstance(item, dict):
        return item  # parse_shot refuses it with its reason
    out = {k: v for k, v in item.items() if k != "source"}
    if out.get("ball") is not None:
        out["source"] = "sensed" if item.get("source") == "sensed" else "referee"
    return out


def check_entered(d: JsonObject) -> None:
    """`entered`: the shot facts the referee entered or corrected (REFEREE.md §3c). The
    rules rule them like any fact; the shot's facts view marks them as his."""
    got = d.get("entered")
    if got is not None and (
        not isinstance(got, list) or not all(isinstance(f, str) and f in SHOT_FACTS for f in got)
    ):
        raise BadInput(f"entered must be a list of fact names: {', '.join(SHOT_FACTS)}")


def parse_shot(d: JsonObject) -> Shot:
    check_entered(d)
    raw = d.get("pocketed", [])
    flagged = [] if d.get("uncertain") is None else d["uncertain"]
    if not isinstance(flagged, list) or not all(
        isinstance(f, str) and f in UNCERTAIN_FACTS for f in flagged
    ):
        raise BadInput(f"uncertain must be a list of fact names: {', '.join(UNCERTAIN_FACTS)}")
    uncertain = set(flagged)
    if not isinstance(raw, list):
        raise BadInput("pocketed must be a list of {ball, pocket}")
    potted = []
    for item in raw:
        if not isinstance(item, dict) or set(item) - {
            "ball",
            "pocket",
            "rested_us",
            "jammed",
            "source",
            "t",
        }:
            raise BadInput("each pocketed entry is {ball, pocket} (ball may be omitted)")
        source = item.get("source")
        if source is not None and source not in SOURCES:
            raise BadInput(f"pocketed source must be one of {', '.join(SOURCES)}")
        if item.get("t") is not None and not _is_int(item["t"]):
            raise BadInput("pocketed t must be an integer (µs)")
        if source == "inferred":
            uncertain.add("pocketed")
        ball = None if item.get("ball") is None else get_int(item, "ball", 0, 15)
        potted.append(
            Potted(
                ball,
                get_pocket(item),
                get_int(item, "rested_us", 0, 2**63),
                bool(get_bool(item, "jammed", default=False)),
            )
        )
    contact_reported = "first_contact" in d
    first = None
    if contact_reported and d["first_contact"] is not None:
        first = get_int(d, "first_contact", 1, 15)
    off = d.get("off_table", [])
    if not isinstance(off, list) or not all(_is_int(b) and 0 <= b <= 15 for b in off):
        raise BadInput("off_table must be a list of ball numbers 0-15")
    fouls = d.get("fouls", [])
    if not isinstance(fouls, list) or not all(isinstance(f, str) for f in fouls):
        raise BadInput("fouls must be a list of rule numbers (strings)")
    replay = d.get("replay")
    if replay is True:
        replay = "general 34"
    if replay not in (None, False, "general 30", "general 34"):
        raise BadInput("replay must be true, 'general 30' or 'general 34'")
    obr = get_int(d, "object_balls_to_rail", 0, 15)
    span = _rail_range(d.get("object_balls_to_rail_range"), obr)
    return Shot(
        pocketed=tuple(potted),
        first_contact=first,
        contact_reported=contact_reported,
        rail_after_contact=get_bool(d, "rail_after_contact"),
        object_balls_to_rail=obr,
        object_balls_to_rail_range=span,
        cue_ball_to_rail=get_bool(d, "cue_ball_to_rail"),
        off_table=tuple(off),
        fouls=tuple(f.strip() for f in fouls),
        replay=replay or None,
        uncertain=tuple(sorted(uncertain)),
    )


def _rail_range(raw: object, estimate: int | None) -> tuple[int, int] | None:
    """`object_balls_to_rail_range`: [lo, hi] with 0 <= lo <= hi <= 15, holding the
    estimate when both are given."""
    if raw is None:
        return None
    if (
        not isinstance(raw, list)
        or len(raw) != 2
        or not all(_is_int(x) and 0 <= x <= 15 for x in raw)
        or raw[0] > raw[1]
    ):
        raise BadInput("object_balls_to_rail_range must be [lo, hi] with 0 <= lo <= hi <= 15")
    if estimate is not None and not raw[0] <= estimate <= raw[1]:
        raise BadInput("object_balls_to_rail must lie within object_balls_to_rail_range")
    return raw[0], raw[1]


def shot_dict(shot: Shot) -> JsonObject:
    """The `shot` input that parses back to `shot` (parse_shot(shot_dict(s)) == s): how a
    shot held for the referee's check is kept in the state."""
    out: JsonObject = {"type": "shot", "pocketed": []}
    for p in shot.pocketed:
        item: JsonObject = {"pocket": p.pocket}
        if p.ball is not None:
            item["ball"] = p.ball
        if p.rested_us is not None:
            item["rested_us"] = p.rested_us
        if p.jammed:
            item["jammed"] = True
        out["pocketed"].append(item)
    if shot.contact_reported:
        out["first_contact"] = shot.first_contact
    for key in ("rail_after_contact", "object_balls_to_rail", "cue_ball_to_rail", "replay"):
        if getattr(shot, key) is not None:
            out[key] = getattr(shot, key)
    if shot.object_balls_to_rail_range is not None:
        out["object_balls_to_rail_range"] = list(shot.object_balls_to_rail_range)
    if shot.off_table:
        out["off_table"] = list(shot.off_table)
    if shot.fouls:
        out["fouls"] = list(shot.fouls)
    if shot.uncertain:
        out["uncertain"] = list(shot.uncertain)
    return out
