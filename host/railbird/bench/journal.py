"""A large journal of realistic play for `make bench` (the restart benchmark), written straight
through the pipeline and the journal, without a broker: what a venue's daemon journals over
days of play, in minutes.

Six tables (10-ball, 9-ball, 8-ball, 14.1), one node each, in play 12 hours a day: shots of
2-12 events (rail hits, drops, now and then the cue ball in the return) 20-400 ms apart with
15-35 s between shots; each event in a message of its own (one-event batches, as a node
sends live play) that arrives 25 ms after it; a sync sample every 60 s and a status every
30 s per node, day and night; a tick of the table after each shot's quiet period (what the
daemon journals when a tick closes a shot); the referee's input whenever the rules wait for
it (the lag, an option, a rerack, a call in call-shot games, a confirmation of sensed facts
now and then, a new match when one is over, a concession when a match runs past 300 inputs,
since random sensed play makes slow progress in a 14.1 match to 100). Inputs are journalled
in transactions of 1,000 with their records, and snapshots are taken as the daemon takes
them (railbird.daemon.snapshots, by the simulated wall clock). At the end the wall clock is
shifted so that the journal ends now. The same seed gives the same journal.
"""

from __future__ import annotations

import heapq
import json
import random
import time
from typing import Any

from railbird.core.records import Source
from rbproto import codec

VENUE = "bench"
TABLES = (
    ("t1", "10-ball", {"race_to": 5}),
    ("t2", "9-ball", {"race_to": 7}),
    ("t3", "8-ball", {"race_to": 5}),
    ("t4", "14.1", {"target": 100}),
    ("t5", "10-ball", {"race_to": 7}),
    ("t6", "9-ball", {"race_to": 5}),
)
RAILS = codec.RAILS
POCKETS = codec.POCKETS
LATENCY_US = 25_000
SYNC_US, STATUS_US = 60_000_000, 30_000_000
BOOT_AT = 3_600_000_000  # host µs at which every node booted (its clock's 0)
COMMIT_EVERY = 1000
MATCH_INPUTS_MAX = 300  # a match still on after this many inputs is conceded (a time limit)
DAY_US, OPEN_US = 86_400_000_000, 12 * 3_600_000_000  # tables in play 12 hours a day


def config(journal: str | None = None):
    from railbird.config import from_dict

    players = (["Ann", "Bob"], ["Cy", "Di"], ["Ed", "Flo"], ["Gus", "Hal"])
    tables = {
        tid: {"game": game, "players": players[i % 4], **goal, "nodes": [f"{tid}-node"]}
        for i, (tid, game, goal) in enumerate(TABLES)
    }
    d = {"venue": VENUE, "stats_period_s": 0, "tables": tables}
    if journal:
        d["journal"] = journal
    return from_dict(d)


def _table_stream(i: int, tid: str, rnd: random.Random):
    """(host µs, order, kind, data) of one table, in time order, forever."""
    t = BOOT_AT + 5_000_000 + i * 1_700_000
    seq = 0
    next_sync = t
    next_status = t + 1_000_000
    while True:
        while next_sync <= t or next_status <= t:
            if next_sync <= next_status:
                yield next_sync, 0, "sync", None
                next_sync += SYNC_US
            else:
                yield next_status, 0, "status", None
                next_status += STATUS_US
        yield t, 1, "shot", None  # the referee's moment before the shot
        for _ in range(rnd.randint(2, 12)):
            t += rnd.randint(20_000, 400_000)
            r = rnd.random()
            if r < 0.15:
                ev = {
                    "kind": "drop",
                    "pocket": rnd.choice(POCKETS),
                    "dur": rnd.randint(15_000, 50_000),
                }
            elif r < 0.17:
                ev = {"kind": "cue", "dur": rnd.randint(15_000, 40_000)}
            else:
                ev = {"kind": "rail", "rail": rnd.choice(RAILS), "amp": rnd.randint(200, 4000)}
            ev.update(seq=seq, t=t - BOOT_AT)
            seq += 1
            yield t, 2, "event", ev
        yield t + 5_000_000 + 60_000, 3, "tick", None  # after `quiet_ms`
        t += rnd.randint(15_000_000, 35_000_000)
        if (t - BOOT_AT) % DAY_US >= OPEN_US:  # closing time: play again tomorrow
            t += DAY_US - (t - BOOT_AT) % DAY_US + rnd.randint(0, 600_000_000)


def _tagged(i: int, tid: str, rnd: random.Random):
    for t, order, kind, data in _table_stream(i, tid, rnd):
        yield t, order, i, kind, data


def _referee(pipeline, tid: str, rnd: random.Random) -> list:
    """What the referee enters at this table before the next shot (local input)."""
    t = pipeline.tables[(VENUE, tid)]
    g = t.game
    if g.referee is None:
        return []
    st = g.referee.state
    if not st.over and g.referee.applied >= MATCH_INPUTS_MAX:
        return [{"type": "concede", "player": rnd.randint(0, 1)}]
    if st.over:
        return [{"type": "match"}, {"type": "lag", "winner": rnd.randint(0, 1)}]
    if st.awaiting == "lag":
        return [{"type": "lag", "winner": rnd.randint(0, 1)}]
    valid = {v["type"]: v for v in g.valid_inputs()}
    if "option" in valid:
        return [{"type": "option", "choice": valid["option"]["choices"][0]}]
    if "rerack" in valid:
        return [{"type": "rerack", **dict.fromkeys(valid["rerack"]["fields"], False)}]
    out = []
    if st.unconfirmed and rnd.random() < 0.5:
        out.append({"type": "confirm"})
    call = valid.get("call")
    if call is not None and call["balls"] and rnd.random() < 0.8:
        out.append({"type": "call", "ball": call["balls"][0], "pocket": rnd.choice(POCKETS)})
    return out


def write(path: str, n_events: int, seed: int = 1, progress=None) -> dict:
    """Write a journal of `n_events` node events at `path` (a new file). -> figures."""
    from railbird.core.pipeline import Pipeline
    from railbird.daemon.journal import Journal
    from railbird.daemon.replay import run_input
    from railbird.daemon.snapshots import Snapshots

    rnd = random.Random(seed)
    cfg = config(path)
    journal = Journal(path)
    pipeline = Pipeline(cfg)
    wall0 = 1_000_000_000.0
    clock = {"wall": wall0}
    snaps = Snapshots(cfg, journal, clock=lambda: clock["wall"])
    raw = json.loads(json.dumps(cfg.raw))
    journal.db.execute("INSERT OR REPLACE INTO meta VALUES ('config', ?)", (json.dumps(raw),))
    streams = [
        _tagged(i, tid, random.Random(seed * 100 + i)) for i, (tid, _, _) in enumerate(TABLES)
    ]
    events = inputs = 0
    pending = 0
    t0 = time.monotonic()
    for t, _order, i, kind, data in heapq.merge(*streams):
        if events >= n_events and kind != "tick":
            break
        tid = TABLES[i][0]
        node = f"{tid}-node"
        rx = t + LATENCY_US
        clock["wall"] = wall0 + rx / 1e6
        todo: list[tuple[Source, Any, Any]] = []  # (source, topic or table, payload or msg)
        if kind == "event":
            body = {"v": 1, "node": node, "boot": 1, "events": [data]}
            todo.append((Source.MQTT, codec.topic(VENUE, tid, "events", node), body))
            events += 1
        elif kind == "sync":
            t1 = t - BOOT_AT
            body = {"v": 1, "node": node, "boot": 1, "id": t1 % 65536, "t1": t1}
            body.update(t2=t + 1_000, t3=t + 1_100, t4=t1 + 2_100)
            todo.append((Source.MQTT, codec.topic(VENUE, tid, "sync_result", node), body))
        elif kind == "status":
            body = {"v": 1, "node": node, "boot": 1, "state": "online", "uptime_us": t - BOOT_AT}
            body.update(queue=0, spill=0, counters={"reconnects": 0})
            todo.append((Source.MQTT, codec.topic(VENUE, tid, "status", node), body))
        elif kind == "shot":
            todo += [(Source.LOCAL, tid, {"input": inp}) for inp in _referee(pipeline, tid, rnd)]
        elif kind == "tick":
            todo.append((Source.TICK, tid, None))
        for source, where, body in todo:
            # run as the journal's input is replayed (railbird.daemon.replay)
            if source == Source.MQTT:
                topic, payload, tbl = where, json.dumps(body, separators=(",", ":")).encode(), tid
            elif source == Source.LOCAL:
                topic, payload, tbl = None, json.dumps(body), where
            else:
                topic, payload, tbl = None, None, where
            status, reason, records = run_input(pipeline, source, rx, topic, payload, VENUE, tbl)
            if source == Source.TICK and not records:
                continue
            iid = journal.add_input(
                source, rx, topic, payload, VENUE, tbl, status, reason, wall=clock["wall"]
            )
            journal.add_records(iid, records)
            inputs += 1
            pending += 1
            if pending >= COMMIT_EVERY:
                snaps.after_batch(pipeline)
                journal.commit()
                pending = 0
                if progress is not None and inputs % 100_000 < COMMIT_EVERY:
                    progress(events, inputs, time.monotonic() - t0)
    snaps.after_batch(pipeline)
    journal.commit()
    # the journal ends now: shift the simulated wall clock
    shift = time.time() - 60 - clock["wall"]
    journal.db.execute("UPDATE inputs SET wall = wall + ?", (shift,))
    journal.db.execute("UPDATE snapshots SET wall = wall + ?", (shift,))
    stats = pipeline.stats()
    figures = {
        "events": stats["events"],
        "inputs": inputs,
        "shots": stats["shots"],
        "states": stats["states"],
        "snapshots": snaps.taken,
        "days": (clock["wall"] - wall0) / 86_400,
        "seconds": time.monotonic() - t0,
    }
    journal.close()
    return figures


def _code_key() -> str:
    """What the cached journal depends on: the code that writes and reads it."""
    import hashlib
    from pathlib import Path

    here = Path(__file__).resolve().parents[1]  # railbird/, this file being in railbird/bench/
    daemon = ("journal.py", "journalerror.py", "migrations.py", "snapshots.py", "worker.py")
    files = [
        *sorted(here.glob("core/*.py")),
        *sorted(here.glob("rules/*.py")),
        *(here / "daemon" / name for name in daemon),
        Path(__file__).resolve(),
    ]
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def cached(n_events: int, folder, seed: int = 1, progress=None) -> tuple[str, dict]:
    """The journal of `n_events` under `folder`, written once per version of the code and
    then reused: -> (path, figures). After writing, a daemon starts and stops on it, so it is
    as a daemon that played those days left it (derived stores brought up to date)."""
    import os
    from pathlib import Path

    from railbird.daemon.worker import Daemon

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"journal-{n_events}-{seed}-{_code_key()}.sqlite"
    meta = path.with_suffix(".json")
    if path.exists() and meta.exists():
        return str(path), json.loads(meta.read_text())
    for old in folder.glob(f"journal-{n_events}-{seed}-*"):
        old.unlink()
    tmp = folder / f"writing-{os.getpid()}.sqlite"
    figures = write(str(tmp), n_events, seed, progress)
    d = Daemon(config(str(tmp)), connect=False).start()
    d.stop()
    for suffix in ("-wal", "-shm"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    os.replace(tmp, path)
    meta.write_text(json.dumps(figures))
    return str(path), figures
