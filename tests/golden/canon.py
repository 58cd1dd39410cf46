"""One canonical text line per pipeline record: the only place that knows how a record
looks, for the golden corpus (tests/golden/README.md).

`record_line(record)` is THE single place to adapt when the record representation
changes. The pipeline's records are typed frozen values (railbird.core.records, some holding
a `railbird.core.timeline.Event`); each one's `as_dict()` is the dict a record was before it
had a type, so the corpus shows that the refactor changed nothing. Everything else here (the
test, the generator) calls it and never looks inside a record itself.

A line is compact JSON with sorted keys. An `Event` is written with every field, by name
(not through its own `to_dict`, which leaves out `t_node` and `synced` and may change with
it). Any other object that is not plain JSON data is an error, not a guess: a new type in a
record must be given its explicit form here.
"""

from __future__ import annotations

import json

from railbird.core.records import Record
from railbird.core.timeline import Event

EVENT_FIELDS = (
    "t",
    "node",
    "boot",
    "seq",
    "kind",
    "pocket",
    "rail",
    "amp",
    "dur",
    "n",
    "t_node",
    "synced",
)


def event_dict(ev: Event) -> dict:
    """Every field of an event, None included: a field that goes missing is a change."""
    return {name: getattr(ev, name) for name in EVENT_FIELDS}


def _plain(value):
    if isinstance(value, Event):
        return event_dict(value)
    raise TypeError(
        f"record holds a {type(value).__name__}: give it an explicit form in tests/golden/canon.py"
    )


def record_line(record: Record) -> str:
    """The canonical line of one record (no newline)."""
    return json.dumps(record.as_dict(), sort_keys=True, separators=(",", ":"), default=_plain)


def result_line(status: str, reason) -> str:
    """The canonical line of an input's outcome (`on_message`/`on_referee`'s status and
    reason, what the journal keeps in `inputs.status`/`inputs.reason`)."""
    return json.dumps({"reason": reason, "status": status}, sort_keys=True, separators=(",", ":"))


def stats_line(stats: dict) -> str:
    """The canonical line of `Pipeline.stats()` after the last input (every counter)."""
    return json.dumps(stats, sort_keys=True, separators=(",", ":"))
