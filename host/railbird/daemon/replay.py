"""Journal inputs through a pipeline: the one place that maps an input's `source` to the
pipeline call that handles it.

The journal keeps every input with its `source` (railbird.daemon.journal): `mqtt` a broker
message, `adopted` a message or a table's tick taken over from another worker's stream
(cluster mode), `local` referee input from this process (its JSON body), `tick` one
table's tick (every table's in journals from before per-table ticks), `reconnect` the host
reconnecting to the broker, `failed` an input the code failed on (set aside: never run).
The daemon feeds its live input through `run_input` and journals it with that source, and a
restart, `railbird replay`, the benchmarks and the cluster run the journalled inputs through
the same function, so live and replay cannot disagree on what an input means.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, NotRequired, TypedDict, cast

from railbird.core.pipeline import Pipeline
from railbird.core.records import Outcome, Record, ShotRecord, Source, StateRecord, Status
from railbird.daemon.journal import Journal

TableKey = tuple[str, str]  # (venue, table)
# A row of `Journal.inputs(after, wall=True)`: id, source, rx, topic, payload, venue, tbl, wall
InputRow = tuple[
    int, str, int | None, str | None, bytes | str | None, str | None, str | None, float
]


class Rebuilt(TypedDict):
    """`rebuild`'s result; `snapshots.resume` adds `snapshot`, `rebuilt` and, with
    `since_wall`, `nodes`."""

    states: dict[TableKey, StateRecord]  # each table's last state record
    inputs: int  # inputs replayed
    history: dict[
        TableKey, list[ShotRecord | StateRecord]
    ]  # with `since_wall`: shots and states, with `wall`
    snapshot: NotRequired[int]  # the input id of the snapshot started from (0: none)
    # from a snapshot of another configuration: the tables rebuilt alone from their inputs
    # up to it (their configuration changed since; railbird.daemon.snapshots)
    rebuilt: NotRequired[list[TableKey]]
    nodes: NotRequired[dict[TableKey, dict[str, dict[str, Any]]]]  # node -> its last status


def run_input(
    pipeline: Pipeline,
    source: str,
    rx: int | None,
    topic: str | None,
    payload: bytes | str | None,
    venue: str | None,
    tbl: str | None,
) -> Outcome | None:
    """One input, as journalled, through `pipeline` -> (status, reason, records); None for
    an input that is never run (`failed`). MQTT referee payloads are sealed (the daemon seals
    them before they are journalled, railbird.core.refauth).

    The casts: the parameters are the journal's columns, which may be NULL; a cast names
    what the input's source always has (a tick and a reconnect their time, a message its
    topic, local input its table and JSON body) and converts nothing: an input goes on as
    it was journalled, and the pipeline refuses what it cannot read, as it did live."""
    if source == Source.ADOPTED and topic is not None and topic.endswith("/tick"):
        # cluster mode: a table's tick ("": no such table, as None was: nothing to tick)
        return (Status.OK, None, pipeline.tick(cast(int, rx), [(venue or "", tbl or "")]))
    if source in (Source.MQTT, Source.ADOPTED):
        # the payload may be str or NULL: the codec reads the one, refuses the other
        return pipeline.on_message(cast(str, topic), cast(bytes, payload), rx, sealed=True)
    if source == Source.LOCAL:
        body = json.loads(cast(bytes | str, payload))
        return pipeline.on_referee(cast(str, venue), cast(str, tbl), body, Source.LOCAL, rx)
    if source == Source.TICK:  # one table's; all tables' in journals before per-table ticks
        at = cast(int, rx)
        return (Status.OK, None, pipeline.tick(at, None if tbl is None else [(venue or "", tbl)]))
    if source == Source.RECONNECT:
        return (Status.OK, None, pipeline.on_reconnect(cast(int, rx)))
    return None  # set aside (`failed`): never replayed


def apply_input(
    pipeline: Pipeline,
    source: str,
    rx: int | None,
    topic: str | None,
    payload: bytes | str | None,
    venue: str | None,
    tbl: str | None,
) -> list[Record] | None:
    """`run_input`'s records only (None: not run)."""
    out = run_input(pipeline, source, rx, topic, payload, venue, tbl)
    return None if out is None else out[2]


def rebuild(
    pipeline: Pipeline,
    journal: Journal,
    on_records: Callable[[list[Record]], object] | None = None,
    since_wall: float | None = None,
    after: int = 0,
    on_input: Callable[[int, Pipeline], object] | None = None,
    tables: tuple[set[TableKey], int] | None = None,
) -> Rebuilt:
    """Replay every journalled input through `pipeline`; returns the last state record of
    each table (for the outputs) and the number of inputs replayed. With `since_wall`, also
    `history`: per table the `shot` and `state` records of inputs journalled at or after
    that wall-clock time (each with its `wall`), preceded by the last state before it (the nodes'
    latest status is the pipeline's own: railbird.daemon.snapshots.resume). `after`: only the
    inputs after that id (`pipeline` has seen the others: a snapshot,
    railbird.daemon.snapshots.resume); `on_input(id, pipeline)` after each input.
    `tables` (keys, upto): only those tables' inputs and the venue-wide ones, up to input
    `upto` (tables rebuilt alone, railbird.daemon.snapshots)."""
    last: dict[TableKey, StateRecord] = {}
    history: dict[TableKey, list[ShotRecord | StateRecord]] = {}
    before: dict[TableKey, StateRecord] = {}
    n = 0
    rows: Iterable[InputRow] = (
        journal.inputs(after, wall=True)
        if tables is None
        else journal.table_inputs(tables[0], tables[1], wall=True)
    )
    for iid, source, rx, topic, payload, venue, tbl, wall in rows:
        n += 1
        records = apply_input(pipeline, source, rx, topic, payload, venue, tbl)
        if on_input is not None:
            on_input(iid, pipeline)
        if records is None:
            continue
        if on_records is not None:
            on_records(records)
        for r in records:
            if not isinstance(r, (StateRecord, ShotRecord)):
                continue
            key = (r.venue, r.table)
            if isinstance(r, StateRecord):
                last[key] = r
            if since_wall is None:
                continue
            if wall is not None and wall >= since_wall:
                history.setdefault(key, []).append(replace(r, wall=wall))
            elif isinstance(r, StateRecord):
                before[key] = r
    for key, st in before.items():  # the pipeline's records have no `wall`: None
        history.setdefault(key, []).insert(0, st)
    return {"states": last, "inputs": n, "history": history}
