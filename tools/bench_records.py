"""The pipeline's records as dataclasses or msgspec.Structs: which is cheaper (issue 21).

    PYTHONPATH=host:protocol:/path/to/msgspec .venv/bin/python tools/bench_records.py

Every golden stream (tests/golden/corpus) goes through a Pipeline once; the records it gives
are the realistic mix (events, in-play views, shots, states, holds, node status, referee
results). Each variant then builds that mix again from the same field values, by keyword
as the pipeline does, dispatches every record on its class (isinstance, in the order of the
daemon's `_dispatch` and the journal's `add_records`), reads the fields a consumer reads and
serialises it (`as_dict` and the golden canon's JSON). CPU time by time.process_time, the
minimum of REPEATS runs. The whole replay of the corpus through the pipeline is timed too,
to put the records' share in proportion. msgspec is not a dependency: it is looked for on
sys.path (`pip install --target DIR msgspec` and DIR on PYTHONPATH).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "host"), str(ROOT / "protocol"), str(ROOT)]

# after sys.path: the checkout's host code and its golden corpus, not an installed copy
from railbird.core import pipeline as pipeline_module  # noqa: E402, I001 - after sys.path
from railbird.core import records as rec  # noqa: E402 - after sys.path
from railbird.core.pipeline import Pipeline  # noqa: E402 - after sys.path
from tests.golden import replay  # noqa: E402 - after sys.path
from tests.golden.canon import _plain, record_line  # noqa: E402 - after sys.path

REPEATS = 7
CLASSES = (
    rec.EventRecord,
    rec.InplayRecord,
    rec.ShotRecord,
    rec.StateRecord,
    rec.NodeRecord,
    rec.HoldRecord,
    rec.LateRecord,
    rec.ConflictRecord,
    rec.QuarantinedRecord,
    rec.RefereeRecord,
    rec.RulesErrorRecord,
    rec.PendingRecord,
)


def corpus_mix(serialise: bool = False) -> tuple[list, float]:
    """-> (records of every golden stream, CPU seconds of the fastest replay); with
    `serialise` each record's canonical line is made too (tests/golden/canon.py)."""
    streams = [replay.read_stream(name) for name in replay.stream_names()]
    best, out = None, []
    for _ in range(REPEATS):
        got = []
        t0 = time.process_time()
        for header, inputs in streams:
            cfg = replay.config(header)
            p = Pipeline(cfg)
            for inp in inputs:
                recs = replay.feed(p, cfg, inp)[2]
                if serialise:
                    for r in recs:
                        record_line(r)
                got += recs
        dt = time.process_time() - t0
        best = dt if best is None or dt < best else best
        out = got
    return out, best


def struct_replay(made: dict) -> float:
    """The corpus replay (with serialisation) with the pipeline building Structs: its record
    classes swapped for the msgspec ones for the run."""
    saved = {c.__name__: getattr(pipeline_module, c.__name__) for c in CLASSES}
    for c in CLASSES:
        if hasattr(pipeline_module, c.__name__):
            setattr(pipeline_module, c.__name__, made[c])
    try:
        return corpus_mix(serialise=True)[1]
    finally:
        for name, c in saved.items():
            setattr(pipeline_module, name, c)


def msgspec_classes() -> dict | None:
    try:
        import msgspec
    except ImportError:
        return None
    made = {}
    for cls in CLASSES:
        fields = [
            (f.name, object) if f.default is dataclasses.MISSING else (f.name, object, f.default)
            for f in dataclasses.fields(cls)
        ]
        made[cls] = msgspec.defstruct(
            cls.__name__,
            fields,
            frozen=True,
            namespace={"as_dict": cls.as_dict, "kind": cls.kind},
        )
    return made


def plan(records: list, to: dict | None) -> list:
    """(class, kwargs) to rebuild each record with `to`'s classes (None: the dataclasses)."""
    out = []
    for r in records:
        kw = {f.name: getattr(r, f.name) for f in dataclasses.fields(r)}
        out.append(((to or {}).get(type(r), type(r)), kw))
    return out


def run(steps: list, order: tuple) -> float:
    dumps = json.dumps
    event, shot, state, node, inplay = order[0], order[2], order[3], order[4], order[1]
    best = None
    for _ in range(REPEATS):
        t0 = time.process_time()
        n = 0
        for cls, kw in steps:
            r = cls(**kw)
            # dispatch as the daemon and the journal do, reading what they read
            if isinstance(r, event):
                n += r.pos + r.event.seq
            elif isinstance(r, inplay):
                n += len(r.inplay)
            elif isinstance(r, shot):
                n += len(r.shot)
            elif isinstance(r, state):
                n += len(r.fen) + len(r.announcements)
            elif isinstance(r, node):
                n += len(r.status)
            else:
                n += len(r.venue)
            dumps(r.as_dict(), sort_keys=True, separators=(",", ":"), default=_plain)
        dt = time.process_time() - t0
        best = dt if best is None or dt < best else best
    return best


def run_build(steps: list) -> float:
    best = None
    for _ in range(REPEATS):
        t0 = time.process_time()
        for cls, kw in steps:
            cls(**kw)
        dt = time.process_time() - t0
        best = dt if best is None or dt < best else best
    return best


def run_dicts(events: list) -> float:
    """The event record as the dict literal it was before the types, for the baseline."""
    vals = [(r.venue, r.table, r.event, r.pos) for r in events]
    best = None
    for _ in range(REPEATS):
        t0 = time.process_time()
        for venue, table, ev, pos in vals:
            {"type": "event", "venue": venue, "table": table, "event": ev, "pos": pos}  # noqa: B018 - built to be timed
        dt = time.process_time() - t0
        best = dt if best is None or dt < best else best
    return best


def main() -> int:
    records, replay_s = corpus_mix()
    kinds: dict = {}
    for r in records:
        kinds[r.kind] = kinds.get(r.kind, 0) + 1
    print(f"{len(records):,} records from the golden corpus: {dict(sorted(kinds.items()))}")
    print(f"corpus replay through the pipeline (records as dataclasses): {replay_s * 1e3:.1f} ms")
    dc = plan(records, None)
    dc_all, dc_build = run(dc, CLASSES), run_build(dc)
    print(
        f"dataclass(frozen, slots): build {dc_build * 1e6 / len(dc):.2f} µs/record, "
        f"build+dispatch+serialise {dc_all * 1e6 / len(dc):.2f} µs/record"
    )
    made = msgspec_classes()
    if made is None:
        print("msgspec not importable: only the dataclasses measured")
        return 0
    # alternated, the minimum of each: the machine's load moves both alike
    dc_replay = ms_replay = float("inf")
    for _ in range(3):
        dc_replay = min(dc_replay, corpus_mix(serialise=True)[1])
        ms_replay = min(ms_replay, struct_replay(made))
    print(
        f"corpus replay + canonical lines: dataclasses {dc_replay * 1e3:.1f} ms, "
        f"Structs {ms_replay * 1e3:.1f} ms (ratio {dc_replay / ms_replay:.3f})"
    )
    ev = [r for r in records if isinstance(r, rec.EventRecord)]
    ev_dc = run_build(plan(ev, None)) / len(ev)
    ev_ms = run_build(plan(ev, made)) / len(ev)
    ev_dict = run_dicts(ev) / len(ev)
    print(
        f"an event's record (the hot path, one per event): dict literal {ev_dict * 1e6:.2f} µs, "
        f"dataclass {ev_dc * 1e6:.2f} µs, Struct {ev_ms * 1e6:.2f} µs"
    )
    ms = plan(records, made)
    ms_all, ms_build = run(ms, tuple(made[c] for c in CLASSES)), run_build(ms)
    print(
        f"msgspec.Struct(frozen): build {ms_build * 1e6 / len(ms):.2f} µs/record, "
        f"build+dispatch+serialise {ms_all * 1e6 / len(ms):.2f} µs/record"
    )
    print(
        f"ratio dataclass/msgspec: build {dc_build / ms_build:.2f}, "
        f"all {dc_all / ms_all:.2f}; records built in the replay: "
        f"{dc_build / replay_s:.1%} of its CPU as dataclasses, "
        f"{ms_build / replay_s:.1%} as Structs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
