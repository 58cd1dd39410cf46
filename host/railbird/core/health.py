"""Sensor health from activity (docs/shots.md "Sensor health"; issue 26, item 4).

A dead sensor is silent, and silence is also what a working sensor says when nothing
happens to it. What tells them apart is the rest of the table: a channel that has not fired
during many shots in which the other channels did is suspect. Every shot has activity (that
is what opens it), so "shots since the channel last fired" is the measure, against a number
of shots per channel kind (`Channel.quiet_shots`) past which a working channel that silent
is very unlikely: the strike sensor hears nearly every stroke, each rail piezo is hit in
most shots, a pocket's beam sees a ball every few dozen shots.

Pure: a function of the table's last shots (the pipeline keeps them, snapshots carry them),
so a replay gives the same health and the same warnings. A channel kind is one
`register(Channel(...))` line: the kind, its items, how a shot shows it fired.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from rbproto.codec import POCKETS, RAILS

# A shot as the pipeline keeps it (railbird.core.shots.Shot, or its JSON form)
ShotFacts = Mapping[str, Any]


class Health(StrEnum):
    OK = "ok"  # fired within its channel's quiet_shots
    SUSPECT = "suspect"  # silent for quiet_shots shots or more while the table played
    UNKNOWN = "unknown"  # too few shots yet to tell


@dataclass(frozen=True, slots=True)
class Channel:
    """One kind of sensor channel: `kind` names it (the event kind it sends), `items` its
    individual channels (a table's six beams, six rails; () for a single one), `fired` the
    items a shot shows fired, `quiet_shots` the silence past which it is suspect, `cap` the
    node capability that says a node has it (None: every table has it), `effect` what a
    dead one changes in the shots (said in their warnings)."""

    kind: str
    label: str
    items: tuple[str, ...]
    fired: Callable[[ShotFacts], Iterable[str]]
    quiet_shots: int
    cap: str | None = None
    effect: str = ""


CHANNELS: dict[str, Channel] = {}


def register(channel: Channel) -> Channel:
    CHANNELS[channel.kind] = channel
    return channel


ONE = ""  # the item of a channel kind with a single channel (the strike sensor)


def _struck(shot: ShotFacts) -> Iterable[str]:
    return (ONE,) if shot.get("strike") or shot.get("clicks") else ()


def _rails(shot: ShotFacts) -> Iterable[str]:
    return {r["rail"] for r in shot.get("rails") or ()}


def _beams(shot: ShotFacts) -> Iterable[str]:
    return {p["pocket"] for p in shot.get("pocketed") or ()}


# With 10 % of the strokes missed, 12 in a row has a chance of 1e-12; a rail silent through
# 40 shots, a pocket through 150, are as rare in play (tools/sensing_corpus: every rail is hit
# in most shots, every pocket takes a ball every 20-40 shots).
register(
    Channel(
        "strike",
        "strike sensor",
        (),
        _struck,
        12,
        cap="strike",
        effect="shots open at their first rail or drop, up to 3.8 s after the stroke, and a "
        "stroke that reaches no rail and pockets nothing makes no shot",
    )
)
register(
    Channel(
        "rail",
        "rail piezo",
        RAILS,
        _rails,
        40,
        effect="its hits are missing from the rail facts (a no-rail foul, object balls to a "
        "rail on a break)",
    )
)
register(
    Channel(
        "drop",
        "pocket beam",
        POCKETS,
        _beams,
        150,
        effect="a ball into that pocket is not in the pocketed facts",
    )
)


def _read(shot: ShotFacts) -> Iterable[str]:
    return (ONE,) if any("conf" in p for p in shot.get("pocketed") or ()) else ()


# The colour station fires only when a ball is pocketed, in about half the shots (the
# corpus: 166 balls in 369 shots), so a working station silent through 25 shots is as rare
# (about 3e-7) as a strike sensor silent through 12.
register(
    Channel(
        "colour",
        "colour station",
        (),
        _read,
        25,
        cap="colour",
        effect="the numbers of pocketed balls are presumed (the lowest on the table), not read",
    )
)


@dataclass(frozen=True, slots=True)
class ChannelHealth:
    kind: str
    item: str  # "" for a single channel
    health: Health
    silent_shots: int  # shots since it last fired (all kept shots when it never did)

    @property
    def name(self) -> str:
        label = CHANNELS[self.kind].label
        return f"{label} {self.item}" if self.item else label

    def as_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "item": self.item,
            "health": str(self.health),
            "silent_shots": self.silent_shots,
        }


def optional() -> list[str]:
    """The channel kinds a table may have or not (a node capability says so): the values
    of `[tables.<id>] sensors`."""
    return [kind for kind, ch in CHANNELS.items() if ch.cap is not None]


def present(shots: Sequence[ShotFacts], caps: Collection[str]) -> list[str]:
    """The channel kinds a table has: those every table has, those a node of it announced
    (`caps`), and those that fired in any kept shot."""
    out = []
    for kind, ch in CHANNELS.items():
        if ch.cap is None or ch.cap in caps or any(_fired_any(ch, s) for s in shots):
            out.append(kind)
    return out


def _fired_any(ch: Channel, shot: ShotFacts) -> bool:
    return next(iter(ch.fired(shot)), None) is not None  # the single item is "": falsy


def channel_health(shots: Sequence[ShotFacts], kinds: Iterable[str]) -> list[ChannelHealth]:
    """The health of every channel of `kinds` from the table's last shots (oldest first)."""
    out = []
    n = len(shots)
    for kind in kinds:
        ch = CHANNELS[kind]
        items = ch.items or (ONE,)
        since: dict[str, int] = {}
        # back from the newest shot, only as far as the quiet limit (or until all fired)
        for back, shot in enumerate(reversed(shots[-ch.quiet_shots :])):
            for item in ch.fired(shot):
                since.setdefault(item, back)
            if len(since) == len(items):
                break
        for item in items:
            silent = since.get(item)
            if silent is not None:
                health = Health.OK
            elif n >= ch.quiet_shots:
                health, silent = Health.SUSPECT, min(n, ch.quiet_shots)
            else:
                health, silent = Health.UNKNOWN, n
            out.append(ChannelHealth(kind, item, health, silent))
    return out


def warnings(health: Iterable[ChannelHealth]) -> list[str]:
    """A `sensor:` warning per suspect channel, for every shot while it lasts."""
    out = []
    for h in health:
        if h.health is Health.SUSPECT:
            out.append(
                f"sensor: {h.name} silent for {h.silent_shots}+ shots while the table played "
                f"(dead?): {CHANNELS[h.kind].effect}"
            )
    return out


def summary(health: Iterable[ChannelHealth]) -> dict[str, str]:
    """{channel name: health} as the owner's views show it (`railbird nodes`, status)."""
    return {h.name: str(h.health) for h in health}


def text(health: Sequence[ChannelHealth]) -> str:
    """One line for the owner (`railbird nodes`' SENSORS column): the suspect channels, or
    "ok" (every judged channel fired lately), or "?" (too few shots to tell any)."""
    bad = [h.name for h in health if h.health is Health.SUSPECT]
    if bad:
        return "suspect: " + ", ".join(bad)
    return "ok" if any(h.health is Health.OK for h in health) else "?"
