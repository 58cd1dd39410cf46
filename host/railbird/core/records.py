"""The pipeline's output as typed values, and the words the host uses for inputs and outcomes.

`railbird.core.pipeline.Pipeline` answers every input with a list of records, one frozen,
slotted dataclass per kind (`Record`, the union of them all). Consumers dispatch on the class
(`match r: case ShotRecord(): ...` or `isinstance`), never on a string. Each record has
`venue` and `table` and the payload of its kind; `as_dict()` gives the dict the record was
before it had a type (`{"type": kind, "venue", "table", ...}`, an `Event` left as the object),
the one serialised form of each kind: `railbird assemble --every-record` writes it and the
golden corpus checks it (tests/golden/canon.py). The journal writes the fields itself.

`ShotRecord.wall` and `StateRecord.wall`: the wall-clock time the record was journalled,
set only on the records a restart hands to the outputs' `restore`
(railbird.daemon.replay.rebuild, `dataclasses.replace`); the pipeline leaves it None and
`as_dict` leaves it out.

The enums (`StrEnum`: each member equals its string, so the journal's stored words and the
JSON stay as they are): `Kind` of a record, `Source` of a journalled input, `Status` of an
input's outcome, `HoldState`/`HoldReason` of a node's hold, `Origin` of a ruled input's facts.

Dataclass or msgspec.Struct: measured by `tools/bench_records.py`; the figures and the choice
are in docs/architecture.md ("Typed records").
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any, ClassVar, TypeAlias

from railbird.core.timeline import Event

JSON: TypeAlias = dict[str, Any]


class Kind(StrEnum):
    """What a record is (its `type` in `as_dict`)."""

    NODE = "node"
    HOLD = "hold"
    LATE = "late"
    QUARANTINED = "quarantined"
    CONFLICT = "conflict"
    EVENT = "event"
    INPLAY = "inplay"
    SHOT = "shot"
    RULES_ERROR = "rules_error"
    STATE = "state"
    REFEREE = "referee"
    PENDING = "pending"


class Source(StrEnum):
    """Where an input came from: the journal's `inputs.source` (railbird.daemon.replay)."""

    MQTT = "mqtt"  # a broker message
    ADOPTED = "adopted"  # cluster mode: a message or tick taken over from the stream
    LOCAL = "local"  # referee input from this process
    TICK = "tick"  # a table's tick (every table's in old journals)
    RECONNECT = "reconnect"  # the host reconnected to its broker
    FAILED = "failed"  # the code failed on it: set aside, never run


class Status(StrEnum):
    """An input's outcome (`on_message`/`on_referee`; the journal's `inputs.status`)."""

    OK = "ok"
    DUPLICATE = "duplicate"
    REJECTED = "rejected"
    IGNORED = "ignored"
    REFUSED = "refused"
    STALE = "stale"  # referee input made against an older revision (core/revision.py)
    PENDING = "pending"
    CONFLICT = "conflict"
    QUARANTINED = "quarantined"


class HoldState(StrEnum):
    """A node's hold on its table (docs/host.md "Per-node watermarks")."""

    HELD = "held"
    LIVE = "live"
    GONE = "gone"


class HoldReason(StrEnum):
    """Why a node holds its table."""

    OFFLINE = "offline"  # its last will
    RECONNECT = "reconnect"  # the host reconnected to the broker
    BACKLOG = "backlog"  # a reconnect status with events still buffered


class Origin(StrEnum):
    """Whose facts a ruled input carries (`source` of state and rules_error records)."""

    SENSED = "sensed"
    REFEREE = "referee"


# as_dict of a record: {"type": kind, field: value, ...} in field order (the journal's and
# the golden corpus's bytes), leaving out `wall` (restore history only) and the optional
# flags that are absent when false (`referee_facts`, `pending`)
_NEVER = frozenset({"wall"})
_WHEN_SET = frozenset({"referee_facts", "pending", "rev"})
_NAMES: dict[type, tuple[str, ...]] = {}


def _plain(record: Any) -> JSON:
    names = _NAMES.get(type(record))
    if names is None:
        names = _NAMES[type(record)] = tuple(f.name for f in fields(record) if f.name not in _NEVER)
    d: JSON = {"type": record.kind}
    for name in names:
        value = getattr(record, name)
        if value or name not in _WHEN_SET:
            d[name] = value
    return d


@dataclass(frozen=True, slots=True)
class NodeRecord:
    """A node's `status` (or `birth`) message."""

    kind: ClassVar[Kind] = Kind.NODE
    venue: str
    table: str
    node: str
    status: JSON

    def as_dict(self) -> JSON:
        return _plain(self)


@dataclass(frozen=True, slots=True)
class HoldRecord:
    """A node's hold changed: `held` (with its reason), `live` again (`was`: held or gone)
    or `gone` (held past max_hold_ms). `known`: table µs up to which its events are in;
    `at`: host µs of the input."""

    kind: ClassVar[Kind] = Kind.HOLD
    venue: str
    table: str
    node: str
    state: HoldState
    known: int | None
    at: int | None
    reason: str | None = None  # held, gone
    was: str | None = None  # live

    def as_dict(self) -> JSON:
        d: JSON = {
            "type": self.kind,
            "venue": self.venue,
            "table": self.table,
            "node": self.node,
            "state": self.state,
        }
        if self.state == HoldState.LIVE:
            d["was"] = self.was
        else:
            d["reason"] = self.reason
        d["known"] = self.known
        d["at"] = self.at
        return d


@dataclass(frozen=True, slots=True)
class EventRecord:
    """An event released in timeline order; `pos` its place in the table's timeline."""

    kind: ClassVar[Kind] = Kind.EVENT
    venue: str
    table: str
    event: Event
    pos: int

    def as_dict(self) -> JSON:
        return _plain(self)


@dataclass(frozen=True, slots=True)
class LateRecord:
    """An event that came after the reorder window: journalled, not in the shot facts."""

    kind: ClassVar[Kind] = Kind.LATE
    venue: str
    table: str
    event: Event

    def as_dict(self) -> JSON:
        return _plain(self)


@dataclass(frozen=True, slots=True)
class ConflictRecord:
    """An event numbered like one seen before but saying something else."""

    kind: ClassVar[Kind] = Kind.CONFLICT
    venue: str
    table: str
    event: Event

    def as_dict(self) -> JSON:
        return _plain(self)


@dataclass(frozen=True, slots=True)
class QuarantinedRecord:
    """An event stamped far beyond its arrival (`rx`): kept aside, never in the timeline."""

    kind: ClassVar[Kind] = Kind.QUARANTINED
    venue: str
    table: str
    event: Event
    rx: int
    reason: str

    def as_dict(self) -> JSON:
        return _plain(self)


@dataclass(frozen=True, slots=True)
class InplayRecord:
    """The provisional view of the shot in play (railbird.core.shots)."""

    kind: ClassVar[Kind] = Kind.INPLAY
    venue: str
    table: str
    inplay: JSON

    def as_dict(self) -> JSON:
        return _plain(self)


@dataclass(frozen=True, slots=True)
class ShotRecord:
    """An assembled shot (the `shot` message of protocol/SPEC.md without `v`)."""

    kind: ClassVar[Kind] = Kind.SHOT
    venue: str
    table: str
    shot: JSON
    wall: float | None = None  # journalled at (restore history only; see the docstring)

    def as_dict(self) -> JSON:
        return _plain(self)


@dataclass(frozen=True, slots=True)
class StateRecord:
    """The table's game state after an input: `cause` the input's type, `source` whose
    facts it carried, `referee_facts` the referee's facts ruled with a sensed shot."""

    kind: ClassVar[Kind] = Kind.STATE
    venue: str
    table: str
    game: str  # the rules' game name
    state: JSON
    fen: str
    announcements: list[JSON]
    cause: str | None
    source: Origin | None  # None: the configured match before any input (the daemon's)
    referee_facts: list[str] | None = None
    wall: float | None = None  # journalled at (restore history only; see the docstring)

    def as_dict(self) -> JSON:
        return _plain(self)


@dataclass(frozen=True, slots=True)
class RulesErrorRecord:
    """An input the rules refused, with the reason."""

    kind: ClassVar[Kind] = Kind.RULES_ERROR
    venue: str
    table: str
    input: JSON
    error: str
    source: Origin

    def as_dict(self) -> JSON:
        return _plain(self)


@dataclass(frozen=True, slots=True)
class RefereeRecord:
    """Referee input as applied, refused or (`pending`) held for the shot in play."""

    kind: ClassVar[Kind] = Kind.REFEREE
    venue: str
    table: str
    id: str | None
    by: str | None
    input: JSON
    ok: bool
    error: str | None
    source: Source
    pending: bool = False
    # refused as stale: the table's revision now (the input carried another)
    rev: str | None = None

    def as_dict(self) -> JSON:
        return _plain(self)


@dataclass(frozen=True, slots=True)
class PendingRecord:
    """Referee facts held for the shot in play (`facts` their names), with the state they
    will be ruled from."""

    kind: ClassVar[Kind] = Kind.PENDING
    venue: str
    table: str
    facts: list[str]
    state: JSON | None
    fen: str | None

    def as_dict(self) -> JSON:
        return _plain(self)


Record: TypeAlias = (
    NodeRecord
    | HoldRecord
    | EventRecord
    | LateRecord
    | ConflictRecord
    | QuarantinedRecord
    | InplayRecord
    | ShotRecord
    | StateRecord
    | RulesErrorRecord
    | RefereeRecord
    | PendingRecord
)

# (status, reason, records): what the pipeline answers to one input
Outcome: TypeAlias = tuple[Status, str | None, list[Record]]
