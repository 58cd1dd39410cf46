"""Offline runs of the pipeline: `railbird assemble` (JSON lines in, shots out) and
`railbird replay` (a journal in).

Input lines for `assemble` (one JSON object per line; blank lines and `#` comments skipped):

    {"topic": "railbird/v1/club/t1/node/n1/events", "payload": {...}, "rx": 123}
    {"tick": 123456789}
    {"tick": 123456789, "venue": "club", "table": "t1"}
    {"reconnect": 123456789}

`payload` is the message object (or its JSON text); `rx` (optional) is the host receive time
in µs: it estimates the times of nodes without time sync and bounds every event's (an event
stamped far beyond its arrival is quarantined); `tick` advances table time as the daemon's
ticks do: of the one table it names (the daemon journals each table's tick), else of every
table; `reconnect` is the host reconnecting to the broker after losing it (per-node
watermarks, docs/host.md). At the end of input every table is flushed. The output is a pure
function of the input lines: same input, same bytes.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from railbird.config import Config
from railbird.core.pipeline import Pipeline, shot_json
from railbird.core.records import Record, ShotRecord, Source, Status
from railbird.daemon.journal import Journal
from railbird.daemon.replay import apply_input, rebuild


def offline_config(base: Config | None = None) -> Config:
    cfg = base or Config()
    if base is None:
        cfg.venue = "*"
        cfg.accept_unknown_tables = True
    return cfg


def _record_line(r: Record) -> str:
    if isinstance(r, ShotRecord):
        return shot_json(r.shot)
    body = r.as_dict()
    if "event" in body:
        body["event"] = body["event"].to_dict()
    return json.dumps(body, sort_keys=True, separators=(",", ":"))


def assemble(
    lines: Iterable[str],
    cfg: Config | None = None,
    every_record: bool = False,
    errors: Counter[str] | None = None,
    stats: dict[str, Any] | None = None,
) -> Iterator[str]:
    """Yield output lines (str, no newline): shots, or every record with `every_record`.
    `errors` (a Counter) counts the refused lines by reason instead of raising at the first;
    `stats` (a dict) receives the pipeline's counters at the end of input."""
    pipe = Pipeline(offline_config(cfg))
    bad: Counter[str] = errors if errors is not None else Counter()

    def emit(records: list[Record]) -> Iterator[str]:
        for r in records:
            if every_record or isinstance(r, ShotRecord):
                yield _record_line(r)

    for no, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                raise ValueError("not an object")
            # ticks and reconnects run as the journal's (`or []`: apply_input gives None only
            # for a `failed` input); a message is not sealed (its referee token, if any, is
            # checked against the configured one)
            if "tick" in obj:
                venue, tbl = (obj["venue"], obj["table"]) if "table" in obj else (None, None)
                records = (
                    apply_input(pipe, Source.TICK, int(obj["tick"]), None, None, venue, tbl) or []
                )
            elif "reconnect" in obj:
                records = (
                    apply_input(pipe, Source.RECONNECT, int(obj["reconnect"]), *(None,) * 4) or []
                )
            else:
                payload = obj["payload"]
                if not isinstance(payload, (str, bytes)):
                    payload = json.dumps(payload, separators=(",", ":"))
                if isinstance(payload, str):
                    payload = payload.encode("utf-8")
                rx = obj.get("rx")
                status, reason, records = pipe.on_message(obj["topic"], payload, rx)
                if status == Status.REJECTED:
                    bad[(reason or "").split(":", 1)[0]] += 1
        except (ValueError, KeyError, TypeError) as e:
            bad["bad line"] += 1
            if errors is None:
                raise ValueError(f"line {no}: {e}") from None
            continue
        yield from emit(records)
    yield from emit(pipe.flush())
    if stats is not None:
        stats.update(pipe.stats())


def replay(
    journal: Journal,
    cfg: Config | None = None,
    latest: bool = False,
    report: dict[str, object] | None = None,
) -> tuple[Pipeline, list[dict[str, Any]]]:
    """A pipeline that has seen every journalled input (railbird.daemon.replay.rebuild), and
    the shots it produced in order -> (pipeline, shots). It starts from the beginning: a
    fresh pipeline, or the base snapshot once the inputs before it were deleted
    (daemon.retention); with `latest`, from the newest usable snapshot (what a restart
    does: one made under `cfg`, or one of another configuration with the tables it
    changed rebuilt alone, railbird.daemon.snapshots).

    On the way every snapshot the journal keeps under `cfg` is compared with the replayed
    pipeline at its input. `report` (a dict) receives `start` (the input id the replay
    started after; `stored_shots(journal, start)` are the journal's shots to compare),
    `snapshots` (how many were compared) and `snapshot_mismatches` (the input ids of those
    that differ)."""
    from railbird.core import snapshot as snap
    from railbird.daemon import snapshots

    if cfg is None:
        cfg = journal_config(journal)
    pipe, start = snapshots.starting_point(cfg, journal, latest=latest)
    kept = snapshots.stored(journal, cfg, after=start)
    # after a start that rebuilt tables alone the statistics are the daemon's, carried
    # (railbird.daemon.snapshots): the rest of such a snapshot is compared, in any order
    carried = snapshots.statistics_carried_after(journal)
    shots: list[dict[str, Any]] = []  # as the pipeline made them (JSON-shaped)
    bad: list[int] = []

    def compare(iid: int, p: Pipeline) -> None:
        if iid not in kept:
            return
        mine = snap.encode(snap.dump(p, shots=False))
        if carried is not None and iid > carried:
            same = snap.comparable(mine, False) == snap.comparable(kept[iid], False)
        else:
            same = mine == kept[iid]
        if not same:
            bad.append(iid)

    rebuild(
        pipe,
        journal,
        lambda recs: shots.extend(r.shot for r in recs if isinstance(r, ShotRecord)),
        after=start,
        on_input=compare if kept else None,
    )
    if report is not None:
        report.update(start=start, snapshots=len(kept), snapshot_mismatches=bad)
    return pipe, shots


def stored_shots(journal: Journal, after: int = 0) -> list[dict[str, Any]]:
    """The journal's shots of the inputs after `after`, by table and number."""
    rows = journal.db.execute(
        "SELECT shot FROM shots WHERE input_id > ? ORDER BY venue, tbl, n", (after,)
    )
    return [json.loads(s) for (s,) in rows]


def journal_config(journal: Journal) -> Config:
    from railbird.config import from_dict

    row = journal.db.execute("SELECT value FROM meta WHERE key='config'").fetchone()
    raw = json.loads(row[0]) if row and row[0] else {}
    if not raw:
        return offline_config()
    return from_dict(raw, check=False)  # accepted when journalled, maybe by older checks


def export_inputs(journal: Journal) -> Iterator[str]:
    """The journal's MQTT inputs, ticks and reconnects as `assemble` input lines."""
    for _id, source, rx, topic, payload, venue, tbl in journal.inputs():
        if source == Source.MQTT:
            try:
                p = json.loads(payload)
            except (ValueError, TypeError, UnicodeDecodeError):
                p = bytes(payload).decode("utf-8", "replace")
            yield json.dumps(
                {"topic": topic, "payload": p, "rx": rx}, sort_keys=True, separators=(",", ":")
            )
        elif source == Source.TICK:
            one = {} if tbl is None else {"venue": venue, "table": tbl}
            yield json.dumps({"tick": rx, **one})
        elif source == Source.RECONNECT:
            yield json.dumps({"reconnect": rx})
