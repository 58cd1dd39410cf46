"""A cluster worker's journal (docs/scaling.md "Taking a table over"): a table's history
adopted from the stream is run and kept as input, so a restarted worker rebuilds the table
exactly, but its records are not journalled a second time; live input and the ticks that
come back through the stream are journalled as on a single host. No NATS here: the items
are what railbird.cluster.ingest puts into the daemon's inbox."""

from __future__ import annotations

import time

from host import scripts as S
from railbird.cluster import subjects
from railbird.cluster.reference import reference_run
from railbird.config import from_dict
from railbird.core.pipeline import shot_json
from railbird.daemon.journal import Journal
from railbird.daemon.worker import Daemon
from rbproto import codec

CONFIG = {
    "venue": S.VENUE,
    "stats_period_s": 0,
    "reorder_window_ms": 150,
    "shots": {"quiet_ms": 400, "lip_rest_ms": 400},
    "tables": {
        S.TABLE: {"game": "10-ball", "players": ["Ann", "Bob"], "race_to": 5, "nodes": [S.NODE]}
    },
}


def stream() -> list:
    """(seq, rx, topic, payload): a synced node's rack, each batch followed by a tick, as
    the stream holds it (every receive time after the events it carries: scripts.RX)."""
    tick = subjects.tick_topic(S.VENUE, S.TABLE)
    lag = codec.encode("referee", {"v": 1, "input": {"type": "lag", "winner": 0}, "id": "r1"})
    out = [(1, S.RX, *S.sync_result(0)), (2, S.RX, codec.topic(S.VENUE, S.TABLE, "referee"), lag)]
    for topic, payload in S.batches(S.game(), size=3):
        out.append((len(out) + 1, S.RX + len(out), topic, payload))
        out.append((len(out) + 1, S.RX + len(out), tick, b'{"v":1,"by":"w1"}'))
    return out


def run(daemon: Daemon, items: list) -> None:
    """Into the inbox, and wait until the daemon has taken every message."""
    want = daemon.pipeline.counters["received"] + sum(i[0] in ("adopted", "mqtt") for i in items)
    want -= sum(i[0] == "adopted" and i[2].endswith("/tick") for i in items)
    for item in items:
        daemon.inbox.put(item)
    deadline = time.monotonic() + 20
    while daemon.pipeline.counters["received"] < want or daemon.inbox.qsize():
        assert time.monotonic() < deadline, "the daemon did not take its input"
        time.sleep(0.02)
    # the last batch may still be under way (rules, commit): the caller reads the pipeline
    # and the journal after `daemon.stop()`, which joins the worker thread


def test_adopted_history_rebuilds_on_restart_and_is_not_journalled_twice(tmp_path):
    cfg = from_dict(dict(CONFIG, journal=str(tmp_path / "j.sqlite")))
    msgs = stream()
    half = len(msgs) // 2
    adopted = [("adopted", rx, t, p, seq) for seq, rx, t, p in msgs[:half]]
    live = []
    for seq, rx, t, p in msgs[half:]:
        if t.endswith("/tick"):
            live.append(("tick_in", rx, S.VENUE, S.TABLE, seq, 1))
        else:
            live.append(("mqtt", rx, t, p, seq, 1))
    d = Daemon(cfg, connect=False).start()
    try:
        run(d, adopted + live + [("caught_up", msgs[-1][1])])
    finally:
        d.stop()
    game = d.pipeline.tables[(S.VENUE, S.TABLE)].game.snapshot()
    shots = list(d.pipeline.tables[(S.VENUE, S.TABLE)].shots)
    ref = reference_run(cfg, msgs)
    # the worker's pipeline is the single-host run of the same stream
    assert [shot_json(s) for s in shots] == ref["shots"][S.TABLE]
    assert len(ref["shots"][S.TABLE]) >= 5
    assert game["fen"] == ref["states"][S.TABLE][2]
    assert "aw=lag" not in game["fen"]  # the referee's lag, adopted, was ruled
    j = Journal(str(tmp_path / "j.sqlite"))
    try:
        n_adopted = j.count("inputs", "WHERE source = 'adopted'")
        journalled_shots = [row[0] for row in j.db.execute("SELECT n FROM shots ORDER BY n")]
        events = j.count("events")
    finally:
        j.close()
    assert n_adopted == half
    # only the shots and events that live input and ticks produced are this worker's records
    live_ref = reference_run(cfg, msgs[:half])
    assert journalled_shots == list(
        range(len(live_ref["shots"].get(S.TABLE, [])) + 1, len(ref["shots"][S.TABLE]) + 1)
    )
    assert events == len(ref["events"][S.TABLE]) - len(live_ref["events"].get(S.TABLE, []))
    # a restart rebuilds the table from the journal, adopted input and all
    d2 = Daemon(cfg, connect=False).start()
    try:
        again = d2.pipeline.tables[(S.VENUE, S.TABLE)]
        assert again.game.snapshot()["fen"] == game["fen"]
        assert [shot_json(s) for s in again.shots] == ref["shots"][S.TABLE]
    finally:
        d2.stop()
