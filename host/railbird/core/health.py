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
    return Activity(len(shots), shots).kinds(caps)


def channel_health(shots: Sequence[ShotFacts], kinds: Iterable[str]) -> list[ChannelHealth]:
    """The health of every channel of `kinds` from the table's last shots (oldest first)."""
    return Activity(len(shots), shots).health(kinds)


class Activity:
    """When each channel last fired, by shot number, over a table's last `window` shots:
    what `present` and `channel_health` judge, kept as the shots come. A shot costs one
    look at it per channel kind, and a judgement one per channel, where judging the kept
    shots again scanned up to `window` of them per kind at every shot close (the
    pipeline's, core/pipeline.py). The same shots give the same health either way: a
    replay, or a restart that builds it again from a snapshot's kept shots."""

    __slots__ = ("count", "kind_last", "last", "window")

    def __init__(self, window: int, shots: Iterable[ShotFacts] = ()) -> None:
        self.window = window  # judged on the last `window` shots
        self.count = 0  # shots seen
        self.last: dict[tuple[str, str], int] = {}  # (kind, item) -> its last shot's number
        self.kind_last: dict[str, int] = {}  # kind -> the last shot in which any item fired
        for shot in shots:
            self.add(shot)

    def add(self, shot: ShotFacts) -> None:
        n = self.count
        for kind, ch in CHANNELS.items():
            for item in ch.fired(shot):
                self.last[(kind, item)] = n
                self.kind_last[kind] = n
        self.count = n + 1

    @property
    def judged(self) -> int:
        """How many shots are judged: the last `window`, or all while there are fewer."""
        return min(self.count, self.window)

    def kinds(self, caps: Collection[str]) -> list[str]:
        """`present`: the kinds every table has, those announced, those fired lately."""
        first = self.count - self.judged  # the number of the oldest judged shot
        return [
            kind
            for kind, ch in CHANNELS.items()
            if ch.cap is None or ch.cap in caps or self.kind_last.get(kind, -1) >= first
        ]

    def health(self, kinds: Iterable[str]) -> list[ChannelHealth]:
        """`channel_health`: ok when an item fired within the last quiet_shots judged shots,
        suspect when as many shots passed without it, unknown while fewer were judged."""
        out = []
        n = self.judged
        newest = self.count - 1
        for kind in kinds:
            ch = CHANNELS[kind]
            within = min(ch.quiet_shots, n)
            for item in ch.items or (ONE,):
                last = self.last.get((kind, item))
                back = None if last is None else newest - last
                if back is not None and back < within:
                    health, silent = Health.OK, back
                elif n >= ch.quiet_shots:
                    health, silent = Health.SUSPECT, min(n, ch.quiet_shots)
                else:
                    health, silent = Health.UNKNOWN, n
                out.append(ChannelHealth(kind, item, health, silent))
        return out

    def judge(self, caps: Collection[str]) -> list[ChannelHealth]:
        """The health of every channel the table has (`caps`: the optional ones it says)."""
        return self.health(self.kinds(caps))

    def suspects(self, caps: Collection[str]) -> list[ChannelHealth]:
        """The suspect channels of `judge(caps)`, in its order, without building the
        others: every shot's warnings ask this (the pipeline's `_shot`, more than one
        shot a message at a busy table), and judging all 13-14 channels there was a
        tenth of the daemon's time per message in `make bench`'s end to end."""
        n = self.judged
        newest = self.count - 1
        out = []
        for kind in self.kinds(caps):
            ch = CHANNELS[kind]
            q = ch.quiet_shots
            if n < q:
                continue  # unknown or ok: nothing is suspect before quiet_shots are judged
            for item in ch.items or (ONE,):
                last = self.last.get((kind, item))
                if last is None or newest - last >= q:
                    out.append(ChannelHealth(kind, item, Health.SUSPECT, q))
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
    """{channel name: health}, every channel judged."""
    return {h.name: str(h.health) for h in health}


@dataclass(frozen=True, slots=True)
class Report:
    """A table's sensor health as its owner is shown it (`railbird nodes`, the table's
    summary feed, the venue board): `suspect` when any channel is, with those channels;
    else `ok` when a channel was judged to have fired lately; else `unknown` (too few
    shots yet). It changes only when a channel turns suspect or well again, or the first
    time one is judged ok: not with every shot (a suspect channel's `silent_shots` is its
    kind's quiet_shots, fixed)."""

    health: Health
    suspect: tuple[ChannelHealth, ...] = ()

    @property
    def text(self) -> str:
        """One line: "ok", "suspect: strike sensor, rail piezo RF", or "?"."""
        if self.suspect:
            return "suspect: " + ", ".join(h.name for h in self.suspect)
        return "ok" if self.health is Health.OK else "?"

    def as_dict(self) -> dict[str, object]:
        """The `sensors` field of the `table_summary` message (protocol/SPEC.md)."""
        return {
            "health": str(self.health),
            "suspect": [
                {
                    "kind": h.kind,
                    "item": h.item,
                    "name": h.name,
                    "silent_shots": h.silent_shots,
                    "effect": CHANNELS[h.kind].effect,
                }
                for h in self.suspect
            ],
        }


def report(health: Sequence[ChannelHealth]) -> Report:
    bad = tuple(h for h in health if h.health is Health.SUSPECT)
    if bad:
        return Report(Health.SUSPECT, bad)
    return Report(Health.OK if any(h.health is Health.OK for h in health) else Health.UNKNOWN)


def text(health: Sequence[ChannelHealth]) -> str:
    """One line for the owner (`railbird nodes`' SENSORS column): the suspect channels, or
    "ok" (every judged channel fired lately), or "?" (too few shots to tell any)."""
    return report(health).text
