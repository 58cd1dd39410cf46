"""The facts in force of the last shot (protocol/REFEREE.md §3c): what the referee edits.

A referee corrects a shot as a whole: he sees every fact it was ruled on, each marked
where it came from, and sends the whole set back in one `confirm`. This module builds that
view from the shot input in force (the sensed shot with every correction folded in) and
the rulings it was given; it rules nothing itself. Each fact is

- `sensed`: in the shot as the host (or the transcript) gave it,
- `presumed`: nobody reported it and a default decided something (REFEREE.md §3; the
  engine's `Ruling.presumed` says which value it presumed),
- `referee`: entered or corrected by the referee (the input's `entered` list, and
  `source: "referee"` on a pocketed entry).

`confirm` is the `confirm` facts that make every presumed and unconfirmed fact the
referee's at the value it was ruled on: one tap, and the ruling stays what it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .engine import apply_traced
from .errors import RulesError
from .inputs import SHOT_FACTS, JsonObject
from .state import Presumed, Ruling, State

ORIGINS = ("sensed", "presumed", "referee")
# The facts the view lists besides `pocketed`, in the order a card shows them.
SCALAR_FACTS = tuple(f for f in SHOT_FACTS if f != "pocketed")


@dataclass(frozen=True)
class Drop:
    """One pocketed entry of the shot: `ball` None only when a presumption has no value."""

    ball: int | None
    pocket: str
    origin: str
    restored: bool  # hung on the lip past the limit: back on the lip, not pocketed (g. 30)
    lip: JsonObject  # the entry's `rested_us` / `jammed`, kept by a confirm (general 30, 32)

    def as_dict(self) -> JsonObject:
        out: JsonObject = {"ball": self.ball, "pocket": self.pocket, "origin": self.origin}
        out.update(self.lip)  # a console's correction sends them back with the entry
        if self.restored:
            out["restored"] = True
        return out


@dataclass(frozen=True)
class Fact:
    """A fact of the shot other than the drops. `value` None with origin `presumed`: the
    default has no one value (e.g. "a legal ball" in 14.1); the referee must name it."""

    name: str
    value: object
    origin: str
    uncertain: bool

    def as_dict(self) -> JsonObject:
        out: JsonObject = {"fact": self.name, "value": self.value, "origin": self.origin}
        if self.uncertain:
            out["uncertain"] = True
        return out


@dataclass(frozen=True)
class ShotFacts:
    drops: tuple[Drop, ...]
    facts: tuple[Fact, ...]
    presumed: tuple[str, ...]  # the facts in force by a default
    unconfirmed: tuple[str, ...]  # flagged uncertain and not yet confirmed (§3a)
    confirm: JsonObject  # the `confirm` facts that confirm all of it as ruled
    t_us: int | None  # the shot input's `t_us`: which sensed shot this is (the host's start)

    def as_dict(self) -> JsonObject:
        return {
            "t_us": self.t_us,
            "pocketed": [d.as_dict() for d in self.drops],
            "facts": [f.as_dict() for f in self.facts],
            "presumed": list(self.presumed),
            "unconfirmed": list(self.unconfirmed),
            "confirm": self.confirm,
        }


def entered_of(shot: JsonObject) -> set[str]:
    got = shot.get("entered")
    return {str(f) for f in got} if isinstance(got, list) else set()


def add_entered(shot: JsonObject, names: Iterable[str]) -> None:
    """Name `names` in the shot input's `entered` (the referee's facts), in place."""
    shot["entered"] = sorted(entered_of(shot) | set(names))


def shot_facts(
    pre: State, shot: JsonObject, now: State, rulings: list[Ruling] | None = None
) -> ShotFacts | None:
    """The view of `shot` (the input in force, ruled from `pre`; `now` the state after it
    and everything later; `rulings`: what ruling `shot` from `pre` gave, when the caller
    has just done it). None when the shot no longer rules from `pre` (it cannot be shown
    as anything but what the history says)."""
    if rulings is None:
        try:
            _, rulings = apply_traced(pre, shot)
        except RulesError:
            return None
    presumptions: list[Presumed] = [p for r in rulings for p in r.presumed]
    entered = entered_of(shot)
    unconfirmed = tuple(now.unconfirmed)
    limit = pre.opt_int("hanging_ball_us")

    drops: list[Drop] = []
    raw = shot.get("pocketed") or []
    for i, item in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(item, dict):
            continue
        ball = item.get("ball")
        if ball is None:
            guess = next((p for p in presumptions if p.fact == "pocketed" and p.entry == i), None)
            origin, ball = "presumed", None if guess is None else guess.value
        elif item.get("source") == "referee" or (
            "pocketed" in entered and item.get("source") is None
        ):
            origin = "referee"
        else:
            origin = "sensed"
        rested = item.get("rested_us")
        drops.append(
            Drop(
                ball if isinstance(ball, int) else None,
                str(item.get("pocket")),
                origin,
                isinstance(rested, int) and rested > limit,
                {k: item[k] for k in ("rested_us", "jammed") if k in item},
            )
        )

    presumed_value = {p.fact: p for p in presumptions if p.fact != "pocketed"}
    facts: list[Fact] = []
    for name in SCALAR_FACTS:
        if name in shot and not (name in ("off_table", "fouls") and not shot[name]):
            origin = "referee" if name in entered else "sensed"
            facts.append(Fact(name, shot[name], origin, name in unconfirmed))
        elif name in presumed_value:
            facts.append(Fact(name, presumed_value[name].value, "presumed", False))

    presumed = tuple(
        sorted({"pocketed" for d in drops if d.origin == "presumed"} | set(presumed_value))
    )
    confirm = _confirming(now, drops, facts, unconfirmed)
    t_us = shot.get("t_us")
    return ShotFacts(
        tuple(drops),
        tuple(facts),
        presumed,
        unconfirmed,
        confirm,
        t_us if isinstance(t_us, int) and not isinstance(t_us, bool) else None,
    )


def _confirming(
    now: State, drops: list[Drop], facts: list[Fact], unconfirmed: tuple[str, ...]
) -> JsonObject:
    """The `confirm` facts that make every presumed or unconfirmed fact the referee's at
    the value the shot was ruled on. A provisional ruling (§3b) was ruled on its fair
    choice's facts, not on the estimate in the shot: those are the ones confirmed. Empty
    while the shot is held for the referee's check (he answers it with a choice)."""
    if now.awaiting == "referee_check":
        return {}
    out: JsonObject = {}
    drop_doubt = any(d.origin == "presumed" for d in drops) or "pocketed" in unconfirmed
    if drop_doubt and all(d.ball is not None for d in drops):
        out["pocketed"] = [
            {"ball": d.ball, "pocket": d.pocket, **d.lip, "source": "referee"} for d in drops
        ]
    for f in facts:
        if (f.origin == "presumed" or f.uncertain) and f.value is not None:
            out[f.name] = f.value
    from . import doubt

    for entry in doubt.load(now.provisional) or []:
        for choice in entry.get("choices") or []:
            if choice.get("label") == entry.get("ruling"):
                out.update(choice.get("facts") or {})
    return out
