"""Uncertain sensed facts that decide a ruling (protocol/REFEREE.md §3b).

A sensed fact may come as a range of values the sensors support (`object_balls_to_rail`
with `object_balls_to_rail_range`) or as a flagged yes/no (`rail_after_contact`,
`cue_ball_to_rail` named in `uncertain`). The shot is ruled for every combination of those
values; when every combination gives the same state the ruling stands as a fact, otherwise
it depends on a guess: the referee is asked (awaiting "referee_check") or, without one, the
fair default is applied and the ruling is marked provisional. These helpers are the
bookkeeping; the rules themselves stay in `general.py`.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any, TypedDict

from .frozen import replace
from .inputs import Shot
from .state import State

RANGE = "object_balls_to_rail"
FLAGGED_BOOLS = ("rail_after_contact", "cue_ball_to_rail")

# fact -> value: a count of object balls to a rail, or a yes/no. Any, not int: the facts go
# to dataclasses.replace(shot, **facts), and mypy checks ** against every field of Shot.
Facts = dict[str, Any]
# (fact, the values the sensors allow, in increasing order)
Axis = tuple[str, tuple[int, ...]]


class Choice(TypedDict):
    """One of the referee's one-tap choices (REFEREE.md §3b)."""

    label: str
    facts: Facts
    rule: str | None


# (the state a shot is ruled to, the combinations of facts that rule to it)
Group = tuple[State, list[Facts]]

# Flagged yes/no facts whose sensed "no" is the likely truth, so the ruling it gives is
# proposed to the referee as the likely call (issue 26): `rail_after_contact` is flagged
# "no" only on a strike with nothing sensed after it (no rail, no pocket: core/game.py), and
# every such shot in the sensing corpus was a foul (no rail after contact, or no contact at
# all). Proposed, never ruled unseen: without a referee the fair default stays (§3b).
LIKELY_AS_SENSED = frozenset({"rail_after_contact"})


def canon(obj: object) -> str:
    """Canonical JSON, the form the state keeps `check` and `provisional` in."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def axes(shot: Shot) -> list[Axis]:
    """(fact, values in increasing order) for each uncertain fact with more than one
    value the sensors allow. The last value is always the fair one (more balls to a rail,
    a rail reached), the presumption REFEREE.md §3 makes when a fact is unknown."""
    out: list[Axis] = []
    span = shot.object_balls_to_rail_range
    if span is not None and span[0] < span[1]:
        out.append((RANGE, tuple(range(span[0], span[1] + 1))))
    for fact in FLAGGED_BOOLS:
        if fact in shot.uncertain:  # sensed either way, or not at all (None): both values
            out.append((fact, (False, True)))
    return out


# The rules tell counts of object balls to a rail apart only below this: a break's
# requirement is at most four balls (10-ball and 8-ball four, 14.1 two), pocketed and
# off-table balls counted on top (8.4), and none against some (a stroke). Every count from
# here up rules like this one, so a range is ruled for its counts up to here, its ends and
# the estimate: a 10-ball break estimated at 3-15 balls is ruled for 6 counts, not 13
# (tests/rules/test_uncertain_rulings.py holds the two to the same outcome). None: all.
ALIKE_FROM = 5


def ruled(ax: list[Axis], said: Facts) -> list[Axis]:
    """`ax` with the range cut to the counts that can rule differently (`ALIKE_FROM`), its
    ends and the sensed one, in increasing order: the same groups, the same representative
    of each (`nearest`), the same fair value as ruling every count."""
    if ALIKE_FROM is None:
        return ax
    out = []
    for fact, values in ax:
        if fact == RANGE:
            keep = {values[0], values[-1], said.get(RANGE)}
            values = tuple(v for v in values if v <= ALIKE_FROM or v in keep)
        out.append((fact, values))
    return out


def sensed(shot: Shot, ax: list[Axis]) -> Facts:
    """The sensed value of each doubtful fact; one not sensed at all: the range's low end
    for a count, the fair value for a yes/no."""
    out: Facts = {}
    for fact, values in ax:
        value = getattr(shot, fact)
        if value is None:
            value = values[0] if fact == RANGE else values[-1]
        out[fact] = value
    return out


def deciding(ax: list[Axis], groups: list[Group]) -> list[str]:
    """The facts of `ax` whose value alone changes the ruling somewhere: two combinations
    that differ only in it fall in different groups. Only those are put to the referee."""
    where: dict[tuple[tuple[str, int], ...], int] = {}
    for g, (_state, members) in enumerate(groups):
        for facts in members:
            where[tuple(sorted(facts.items()))] = g
    out = []
    for fact, values in ax:
        for key, g in where.items():
            facts = dict(key)
            for v in values:
                if v != facts[fact] and where[tuple(sorted({**facts, fact: v}.items()))] != g:
                    break
            else:
                continue
            out.append(fact)
            break
    return out


def settled(shot: Shot, facts: Collection[str]) -> Shot:
    """`shot` with `facts` no longer in doubt: out of `uncertain`, the range dropped (its
    values all rule alike, or the referee has said); an estimate left out is the range's
    low end, so the ruling cites a number, not a default."""
    obr = shot.object_balls_to_rail
    if obr is None and shot.object_balls_to_rail_range is not None:
        obr = shot.object_balls_to_rail_range[0]
    flagged = tuple(f for f in shot.uncertain if f not in facts)
    if RANGE in facts or shot.object_balls_to_rail_range is not None:
        flagged = tuple(f for f in flagged if f != RANGE)
    return replace(
        shot, object_balls_to_rail=obr, object_balls_to_rail_range=None, uncertain=flagged
    )


def settled_but(shot: Shot, facts: list[str], said: Facts) -> Shot:
    """`shot` with `facts` (which decide nothing) out of doubt, as sensed."""
    if not facts:
        return shot
    shot = replace(shot, uncertain=tuple(f for f in shot.uncertain if f not in facts))
    if RANGE in facts:
        shot = replace(shot, object_balls_to_rail=said[RANGE], object_balls_to_rail_range=None)
    return shot


def nearest(members: list[Facts], target: Facts) -> Facts:
    """The member whose values are nearest to the sensed ones (a choice's representative
    facts: every member rules alike, so only the ruling's wording depends on it)."""

    def dist(m: Facts) -> int:
        return sum(abs(int(m[k]) - int(target[k])) for k in m)

    return min(members, key=dist)


def tell_apart(choices: list[Choice]) -> None:
    """Two outcomes alike in name: their facts are appended, so no two buttons share a
    label (in place)."""
    labels = [c["label"] for c in choices]
    for c in choices:
        if labels.count(c["label"]) > 1:
            facts = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in c["facts"].items())
            c["label"] = f"{c['label']} ({facts})"


def proposed(names: Collection[str], sensed: Facts, choices: list[Choice]) -> int | None:
    """The index of the choice proposed as the likely call: the one with the sensed values,
    when every deciding fact is one whose sensed "no" is likely (`LIKELY_AS_SENSED`);
    None: no proposal (a break's range, a fact not sensed at all)."""
    if not names or any(f not in LIKELY_AS_SENSED or sensed.get(f) is not False for f in names):
        return None
    for i, c in enumerate(choices):
        if all(c["facts"].get(f) == sensed[f] for f in names):
            return i
    return None


def sensed_in(names: list[str], text: str) -> Facts:
    """The yes/no values `describe` put in `text` for the facts `names` (a provisional
    entry keeps only the sentence); a range or a fact not sensed is left out."""
    out: Facts = {}
    for part, name in zip(text.split("; "), names, strict=False):
        if name == RANGE:
            continue
        said = part.rpartition(": ")[2]
        if said.startswith("sensed "):
            out[name] = said.startswith("sensed yes")
    return out


def with_proposal(entry: Any, sensed: Facts) -> Any:
    """A held shot or provisional entry (its JSON) with `proposed`: the label of the likely
    call, or None (REFEREE.md §3b). Derived on output, never stored: the state line
    rebuilds the stored JSON byte for byte (fendoubt)."""
    if not isinstance(entry, dict):
        return entry
    i = proposed(entry.get("facts") or [], sensed, entry.get("choices") or [])
    return {**entry, "proposed": None if i is None else entry["choices"][i]["label"]}


def describe(shot: Shot, ax: list[Axis]) -> str:
    parts = []
    for fact, values in ax:
        if fact == RANGE:
            est = shot.object_balls_to_rail
            parts.append(
                f"object balls to a rail {values[0]}-{values[-1]} by the rail sensors"
                + ("" if est is None else f" (estimate {est})")
            )
        else:
            value = getattr(shot, fact)
            said = "not sensed" if value is None else f"sensed {'yes' if value else 'no'}"
            parts.append(f"{fact.replace('_', ' ')}: {said}, not certain")
    return "; ".join(parts)
