"""The single-host run of a cluster's input, and what the workers' journals hold.

A cluster must score exactly what one host would have scored from the same input: the
stream's host-input messages and ticks, in stream order, each with the stream's timestamp
as its receive (tick) time, through one Pipeline (the daemon's deterministic core).
`journalled` reads the same facts out of the workers' journals, so tests and
`make soak-cluster` compare the two.
"""

from __future__ import annotations

import json
import sqlite3

from railbird.cluster.subjects import host_input
from railbird.core.pipeline import Pipeline, shot_json
from railbird.core.records import EventRecord, QuarantinedRecord, ShotRecord, StateRecord
from railbird.core.refauth import is_referee_topic, seal


def reference_run(cfg, messages) -> dict:
    """`messages`: [(stream seq, rx µs, topic, payload)] in stream order. -> {"events":
    {table: [(node, boot, seq, t)] in release order}, "shots": {table: [shot JSON]},
    "states": {table: (game, state, fen) of the last state}, "quarantined": events stamped
    beyond their arrival, kept aside}."""
    pipe = Pipeline(cfg)
    out: dict = {"events": {}, "shots": {}, "states": {}, "quarantined": 0}

    def take(records):
        for r in records:
            match r:
                case EventRecord(event=e):
                    out["events"].setdefault(r.table, []).append((e.node, e.boot, e.seq, e.t))
                case ShotRecord():
                    out["shots"].setdefault(r.table, []).append(shot_json(r.shot))
                case StateRecord():
                    out["states"][r.table] = (r.game, r.state, r.fen)
                case QuarantinedRecord():
                    out["quarantined"] += 1

    run_stream(pipe, cfg, messages, take)
    return out


def run_stream(pipe: Pipeline, cfg, messages, take=None) -> Pipeline:
    """`messages` (as reference_run's) through `pipe` as one host runs them; `take(records)`
    after each host input. -> `pipe`."""
    for _seq, rx, topic, payload in messages:
        if not host_input(topic):
            continue
        if topic.endswith("/tick"):
            venue, table = topic.split("/")[2:4]
            records = pipe.tick(rx, [(venue, table)])
        else:  # referee input's token checked as the daemon does (railbird.core.refauth)
            if is_referee_topic(topic):
                payload = seal(payload, cfg.referee_token)
            records = pipe.on_message(topic, payload, rx, sealed=True)[2]
        if take is not None:
            take(records)
    return pipe


def journalled(paths) -> dict:
    """The same facts from the journals of every worker (live input only: `adopted` input
    produced no records there). Events per table in the order of the stream input that
    released them (the journal's `inputs.rx` is that input's stream timestamp), each
    journal's own release order within one input: a table can pass between workers more
    than once (a lease lost while a server is down comes back later), so its journals
    interleave; `duplicates`: (node, boot, seq)
    journalled more than once across all journals; shots of every journal (a shot number
    twice would show as a shot too many); `states` the newest by wall time."""
    keyed: dict = {}
    shots: dict = {}
    states: dict = {}
    seen: dict = {}
    for j, path in enumerate(paths):
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            ev = db.execute(
                # in the order they were written: by input, each input's in release
                # order (`pos`; the journal's events have no rowid since schema 3)
                "SELECT e.tbl, e.node, e.boot, e.seq, e.t, i.rx FROM events e JOIN inputs i"
                " ON i.id = e.input_id ORDER BY e.input_id, e.late, e.pos, e.node, e.seq"
            ).fetchall()
            sh = db.execute("SELECT tbl, n, shot FROM shots ORDER BY tbl, n").fetchall()
            st = db.execute(
                "SELECT s.tbl, s.game, s.state, s.fen, i.wall FROM states s "
                "JOIN inputs i ON i.id = s.input_id ORDER BY s.id"
            ).fetchall()
        finally:
            db.close()
        for k, (tbl, node, boot, seq, t, rx) in enumerate(ev):
            keyed.setdefault(tbl, []).append(((rx, j, k), (node, boot, seq, t)))
            seen[(node, boot, seq)] = seen.get((node, boot, seq), 0) + 1
        for tbl, n, shot in sh:
            shots.setdefault(tbl, []).append((n, shot))
        for tbl, game, state, fen, wall in st:
            if tbl not in states or wall >= states[tbl][0]:
                states[tbl] = (wall, (game, json.loads(state), fen))
    return {
        "events": {t: [e for _k, e in sorted(v)] for t, v in keyed.items()},
        "shots": {t: [s for _n, s in sorted(v)] for t, v in shots.items()},
        "states": {t: v[1] for t, v in states.items()},
        "duplicates": sorted(k for k, n in seen.items() if n > 1),
    }
