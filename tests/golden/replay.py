"""Reading the golden corpus and feeding it to the host, for the test and the generator.

A stream (`corpus/<name>.in.jsonl`) is JSON Lines: a header `{"stream", "about",
"config"}` (the `railbird.config.from_dict` input), then one input per line, in order:

    {"op": "mqtt", "rx": µs|null, "topic": ..., "payload": text}   (or "payload_b64")
    {"op": "referee", "rx": µs, "venue": ..., "table": ..., "msg": {"input": ...}}
    {"op": "tick", "now": µs, "tables": null | [[venue, table], ...]}
    {"op": "reconnect", "rx": µs}
    {"op": "flush"}                                     (end of input, offline tools only)

Layer 1, the pipeline: each input goes to `railbird.core.pipeline.Pipeline` as the daemon
gives it (an MQTT referee payload sealed first, railbird.core.refauth), and gives lines
`<input index>\\tresult\\t<status, reason>` (messages and referee input only) and
`<input index>\\trecord\\t<record_line>` per record, in order, and last
`<number of inputs>\\tstats\\t<Pipeline.stats()>` (`corpus/<name>.out.tsv`).

Layer 2, the daemon: the same inputs through a `railbird.daemon.worker.Daemon` without a
broker (`_process` one input per batch, `tick`), then the journal's derived tables and the
inputs' status and reason, wall-clock columns left out, one line per row
(`corpus/<name>.journal.tsv`; `flush` is not a daemon input and is skipped).
"""

from __future__ import annotations

import base64
import hashlib
import json
import sqlite3
from concurrent.futures import Future
from pathlib import Path

from railbird.config import from_dict
from railbird.core import snapshot as snap
from railbird.core.pipeline import Pipeline
from railbird.core.refauth import is_referee_topic, seal

from .canon import record_line, result_line, stats_line

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"


# -- the stream files ------------------------------------------------------------------------
def stream_names() -> list[str]:
    return sorted(p.name[: -len(".in.jsonl")] for p in CORPUS.glob("*.in.jsonl"))


def read_stream(name: str) -> tuple[dict, list[dict]]:
    """-> (header, inputs)"""
    lines = (CORPUS / f"{name}.in.jsonl").read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0]), [json.loads(x) for x in lines[1:]]


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def config(header: dict, journal: str | None = None):
    d = json.loads(json.dumps(header["config"]))
    if journal is not None:
        d["journal"] = journal
    return from_dict(d)


def payload_of(inp: dict) -> bytes:
    if "payload_b64" in inp:
        return base64.b64decode(inp["payload_b64"])
    return inp["payload"].encode("utf-8")


def describe(inp: dict, width: int = 300) -> str:
    """An input, short, for a failure message."""
    text = json.dumps(inp, sort_keys=True)
    return text if len(text) <= width else text[:width] + "..."


# -- layer 1: the pipeline ------------------------------------------------------------------
def feed(p: Pipeline, cfg, inp: dict):
    """One input, as the daemon hands it to the pipeline -> (status|None, reason, records)."""
    op = inp["op"]
    if op == "mqtt":
        topic, payload = inp["topic"], payload_of(inp)
        if is_referee_topic(topic):  # the daemon checks the token once and seals it
            payload = seal(payload, cfg.referee_token)
        return p.on_message(topic, payload, inp["rx"], sealed=True)
    if op == "referee":
        return p.on_referee(inp["venue"], inp["table"], inp["msg"], "local")
    if op == "tick":
        tables = inp["tables"]
        return (
            None,
            None,
            p.tick(inp["now"], None if tables is None else [tuple(k) for k in tables]),
        )
    if op == "reconnect":
        return None, None, p.on_reconnect(inp["rx"])
    if op == "flush":
        return None, None, p.flush()
    raise ValueError(f"unknown op {op!r}")


def lines_of(i: int, status, reason, records) -> list[str]:
    out = [] if status is None else [f"{i}\tresult\t{result_line(status, reason)}"]
    out += [f"{i}\trecord\t{record_line(r)}" for r in records]
    return out


def restored(p: Pipeline, cfg) -> Pipeline:
    """The pipeline as a restart gets it back: its snapshot as bytes, loaded afresh."""
    return snap.load(cfg, snap.decode(snap.encode(snap.dump(p))))


def pipeline_lines(header: dict, inputs: list[dict], restart_every: int = 0) -> list[str]:
    """Every input's lines; `restart_every` n > 0: the pipeline is snapshotted and loaded
    from the snapshot after every n-th input (a restart there)."""
    cfg = config(header)
    p = Pipeline(cfg)
    out: list[str] = []
    for i, inp in enumerate(inputs):
        status, reason, records = feed(p, cfg, inp)
        out += lines_of(i, status, reason, records)  # serialised now: records may be live
        if restart_every and (i + 1) % restart_every == 0:
            p = restored(p, cfg)
    out.append(f"{len(inputs)}\tstats\t{stats_line(p.stats())}")  # the counters at the end
    return out


# -- layer 2: the daemon and its journal ----------------------------------------------------
# the journal's derived tables and the inputs, as (table, columns, order); no wall clock
JOURNAL_TABLES = (
    ("inputs", "id, source, rx, topic, payload, venue, tbl, status, reason", "id"),
    (
        "events",
        "venue, tbl, node, boot, seq, t, t_node, kind, pocket, rail, amp, dur, n, synced,"
        " late, pos, input_id",
        "venue, tbl, pos, node, boot, seq",
    ),
    ("shots", "venue, tbl, n, shot, input_id", "venue, tbl, n"),
    ("states", "id, venue, tbl, game, state, fen, announcements, cause, source, input_id", "id"),
    ("referee", "id, venue, tbl, rid, by_, input, ok, error, source, input_id", "id"),
    ("rules_errors", "id, venue, tbl, input, error, source, input_id", "id"),
    ("conflicts", "id, venue, tbl, node, boot, seq, t_node, event, input_id", "id"),
    (
        "quarantined",
        "id, venue, tbl, node, boot, seq, t_node, t, rx, event, reason, input_id",
        "id",
    ),
    ("nodes", "venue, tbl, node, status, input_id", "venue, tbl, node"),
)


# Columns written as a digest (sha256 prefix and length): the payload is the stream's own
# input; a state's JSON, its announcements and a shot's JSON are in the pipeline layer's
# records too, in full there for a readable difference
DIGESTED = ("payload", "state", "announcements", "shot")


def _cell(name: str, value):
    if isinstance(value, bytes):
        if name in DIGESTED:
            return {"sha256": hashlib.sha256(value).hexdigest()[:16], "len": len(value)}
        try:
            return {"bytes": value.decode("utf-8")}  # e.g. an integer past 64 bits
        except UnicodeDecodeError:
            return {"b64": base64.b64encode(value).decode("ascii")}
    if name in DIGESTED and isinstance(value, str):
        return {"sha256": hashlib.sha256(value.encode()).hexdigest()[:16], "len": len(value)}
    return value


def journal_lines(path: str) -> list[str]:
    db = sqlite3.connect(path)
    try:
        out = []
        for table, cols, order in JOURNAL_TABLES:
            names = [c.strip() for c in cols.split(",")]
            for row in db.execute(f"SELECT {cols} FROM {table} ORDER BY {order}"):
                d = {n: _cell(n, v) for n, v in zip(names, row, strict=True)}
                out.append(f"{table}\t{json.dumps(d, sort_keys=True, separators=(',', ':'))}")
        return out
    finally:
        db.close()


def _daemon(cfg, path: str, every_inputs: int | None = None):
    from railbird.daemon.snapshots import Snapshots
    from railbird.daemon.worker import Daemon

    d = Daemon(cfg, journal_path=path, connect=False)
    # no snapshot by the wall clock; by count only when asked (a restart's snapshot)
    d.snapshots = Snapshots(
        cfg, d.journal, every_inputs=every_inputs or 10**12, every_s=1e18, clock=lambda: 0.0
    )
    return d


def _daemon_feed(d, inp: dict) -> None:
    op = inp["op"]
    if op == "mqtt":
        d._process([("mqtt", inp["rx"], inp["topic"], payload_of(inp), None, 1)])
    elif op == "referee":
        d._process([("local", inp["rx"], inp["venue"], inp["table"], inp["msg"], Future())])
    elif op == "tick":
        tables = inp["tables"]
        d.tick(inp["now"], None if tables is None else [tuple(k) for k in tables])
    elif op == "reconnect":
        d._connected_before = True  # a reconnect, not the first connect of the process
        d._process([("connected", inp["rx"])])
    elif op == "flush":
        pass  # offline tools only
    else:
        raise ValueError(f"unknown op {op!r}")
    if d.faults.error is not None:
        raise RuntimeError(f"daemon failed on input {describe(inp)}: {d.faults.error}")


def journal_replay(header: dict, inputs: list[dict], path: str):
    """A daemon's journal replayed from its first input (railbird.daemon.replay.rebuild, what
    a restart without a snapshot and `railbird replay` run) -> (the replay's record lines,
    the live daemon pipeline's final state, the replayed one's; states as snapshot bytes)."""
    from railbird.daemon.journal import Journal
    from railbird.daemon.replay import rebuild

    cfg = config(header, path)
    d = _daemon(cfg, path)
    for inp in inputs:
        _daemon_feed(d, inp)
    live = snap.encode(snap.dump(d.pipeline))
    d.stop()
    lines: list[str] = []
    journal = Journal(path)
    try:
        p = Pipeline(cfg)
        rebuild(p, journal, on_records=lambda recs: lines.extend(record_line(x) for x in recs))
    finally:
        journal.close()
    return lines, live, snap.encode(snap.dump(p))


def daemon_journal(
    header: dict, inputs: list[dict], path: str, restart_at: int = 0, ids: dict | None = None
) -> list[str]:
    """Feed a Daemon (no broker) and read its journal back. `restart_at` k > 0: the daemon
    takes snapshots every k // 2 inputs, stops after input k and a new one starts on the
    same journal as `railbird run` does (railbird.daemon.snapshots.resume) and goes on.
    `ids` (a dict) receives journal input id -> stream input index."""
    from railbird.daemon.snapshots import resume

    cfg = config(header, path)
    d = _daemon(cfg, path, max(1, restart_at // 2) if restart_at else None)
    for i, inp in enumerate(inputs):
        if restart_at and i == restart_at:
            d.stop()
            d = _daemon(cfg, path)
            d.pipeline, rb = resume(cfg, d.journal)
            assert rb["snapshot"] > 0, "the restart did not start from a snapshot"
            d.history.start()
        _daemon_feed(d, inp)
        if ids is not None:
            newest = d.journal.db.execute("SELECT MAX(id) FROM inputs").fetchone()[0] or 0
            for iid in range(max(ids, default=0) + 1, newest + 1):
                ids[iid] = i
    d.stop()
    return journal_lines(path)
