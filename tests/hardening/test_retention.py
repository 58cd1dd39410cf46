"""Issue 13, item 14: retention of raw journal inputs. Inputs older than a snapshot and than
`journal_keep_inputs_days` are exported (gzip JSON Lines) before they are deleted; the export
holds every deleted input exactly as the journal had it, and the journal still restarts to
exactly the state it had (and `railbird replay --check` still passes, from the cut).

The journal is written by the daemon (in-process, no broker: inputs go into its inbox as the
ingest puts them); the retention age is reached by running retention with a clock 31 days
ahead rather than by waiting.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
import zlib

import pytest

from harness.waiting import wait_for
from railbird.config import from_dict
from railbird.daemon import retention, snapshots
from railbird.daemon.journal import Journal
from railbird.daemon.worker import Daemon
from rbproto import codec

from .nodepub import shot_events
from .snapstate import state_bytes

DAY = 86_400
NODE = "t1-node"


def config(path, **kw):
    d = {
        "venue": "club",
        "journal": str(path),
        "reorder_window_ms": 150,
        "stats_period_s": 0,
        "shots": {"quiet_ms": 300, "lip_rest_ms": 300},
        "tables": {
            "t1": {"game": "10-ball", "players": ["Ann", "Bob"], "race_to": 3, "nodes": [NODE]}
        },
        **kw,
    }
    return from_dict(d)


def play(d: Daemon, first_seq: int, shots: int) -> None:
    """`shots` shots from the node (one event per message, as a node in play sends them),
    junk that is rejected, referee input; returns once the worker has taken all of it."""
    topic = codec.topic("club", "t1", "events", NODE)
    base = time.monotonic_ns() // 1000
    # the node's clock is the host's (a sync sample says so): its times map exactly
    sync = {"v": 1, "node": NODE, "boot": 1, "id": first_seq, "t1": base, "t2": base + 1}
    sync.update(t3=base + 2, t4=base + 3)
    sync_topic = codec.topic("club", "t1", "sync_result", NODE)
    d.inbox.put(("mqtt", base + 3, sync_topic, json.dumps(sync).encode(), None, 1))
    events = shot_events(first_seq, base - (shots + 1) * 600_000, shots, spacing_us=600_000)
    before = d.stats()["received"]
    for ev in events:
        payload = json.dumps({"v": 1, "node": NODE, "boot": 1, "events": [ev]}).encode()
        d.inbox.put(("mqtt", time.monotonic_ns() // 1000, topic, payload, None, 1))
    d.inbox.put(("mqtt", time.monotonic_ns() // 1000, topic, b"\xff not json", None, 1))
    deadline = time.monotonic() + 10
    while d.stats()["received"] < before + len(events) + 2:
        assert time.monotonic() < deadline, d.stats()
        time.sleep(0.01)
    d.referee_input("club", "t1", {"type": "call", "ball": 1, "pocket": "SL"})
    # quiet: a tick closes the last shot (waited for: how soon depends on the machine)
    wait_for(
        lambda: not d.pipeline.tables[("club", "t1")].shot_in_play(),
        "the last shot closed by a tick",
        30,
    )


def _rows(path, sql, args=()):
    db = sqlite3.connect(path)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


@pytest.fixture
def journal_with_snapshots(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshots, "EVERY_INPUTS", 6)
    path = tmp_path / "journal.sqlite"
    cfg = config(path, journal_export_dir=str(tmp_path / "exports"))
    d = Daemon(cfg, connect=False).start()
    try:
        d.referee_input("club", "t1", {"type": "lag", "winner": 0})
        play(d, 0, 8)
        play(d, 100, 6)
    finally:
        d.stop()
    # read once the worker has stopped: until then a tick may still close a shot (under
    # load the second play's events came late and made one after a read taken in play)
    return path, cfg, state_bytes(d.pipeline)


def test_old_inputs_are_exported_then_deleted_and_the_journal_restarts_exactly(
    journal_with_snapshots,
):
    path, cfg, state = journal_with_snapshots
    everything = _rows(
        path,
        "SELECT id, source, rx, wall, topic, payload, venue, tbl, status, reason FROM inputs"
        " ORDER BY id",
    )
    kept = [i for (i,) in _rows(path, "SELECT input_id FROM snapshots ORDER BY input_id")]
    assert len(kept) == 2
    j = Journal(path)
    try:
        assert retention.run(cfg, j, now=time.time()) is None  # nothing is 30 days old
        later = time.time() + 31 * DAY
        cuts = [retention.run(cfg, j, now=later) for _ in range(3)]  # one cut per call
    finally:
        j.close()
    assert [c and c["upto"] for c in cuts] == [kept[0], kept[1], None]
    exported = [e for c in cuts[:2] for e in retention.read_export(c["file"])]
    assert len(exported) == sum(c["deleted"] for c in cuts[:2]) == kept[1] > 20
    assert [
        (
            e["id"],
            e["source"],
            e["rx"],
            e["wall"],
            e["topic"],
            e.get("payload"),
            e["venue"],
            e["table"],
            e["status"],
            e["reason"],
        )
        for e in exported
    ] == [r for r in everything if r[0] <= kept[1]]
    assert any(isinstance(e.get("payload"), bytes) for e in exported)  # MQTT payloads
    assert any(isinstance(e.get("payload"), str) for e in exported)  # local referee input
    assert any(e["status"] == "rejected" for e in exported)  # the junk too
    left = [r[0] for r in everything if r[0] > kept[1]]
    assert [i for (i,) in _rows(path, "SELECT id FROM inputs ORDER BY id")] == left
    assert [i for (i,) in _rows(path, "SELECT input_id FROM snapshots")] == [kept[1]]
    assert _rows(path, "SELECT COUNT(*) FROM shots")[0][0] > 0  # derived records stay

    d = Daemon(cfg, connect=False).start()
    try:
        assert state_bytes(d.pipeline) == state
        received = d.stats()["received"]
        play(d, 200, 3)  # and it goes on: 6 events, a sync sample, junk, a referee call
        after = d.stats()
    finally:
        d.stop()
    assert after["received"] == received + 9 and after["rejected"] == 3, after
    r = subprocess.run(
        [sys.executable, "-m", "railbird", "replay", str(path), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert f"from the snapshot after input {kept[1]}" in r.stderr


def test_nothing_is_deleted_when_the_snapshot_to_cut_at_does_not_load(journal_with_snapshots):
    path, cfg, _ = journal_with_snapshots
    n = _rows(path, "SELECT COUNT(*) FROM inputs")[0][0]
    db = sqlite3.connect(path)
    db.execute(
        "UPDATE snapshots SET state = ? WHERE input_id = (SELECT MIN(input_id) FROM snapshots)",
        (b"broken",),
    )
    db.commit()
    db.close()
    j = Journal(path)
    try:
        with pytest.raises(zlib.error):
            retention.run(cfg, j, now=time.time() + 31 * DAY)
    finally:
        j.close()
    assert _rows(path, "SELECT COUNT(*) FROM inputs")[0][0] == n
    assert not (path.parent / "exports").exists() or not list(
        (path.parent / "exports").glob("*.gz")
    )


def test_keep_zero_keeps_every_input(journal_with_snapshots):
    path, cfg, _ = journal_with_snapshots
    cfg.journal_keep_inputs_days = 0
    j = Journal(path)
    try:
        assert retention.run(cfg, j, now=time.time() + 3650 * DAY) is None
    finally:
        j.close()


def test_one_snapshot_a_day_is_kept_for_retention_to_cut_at():
    now = 100 * DAY
    rows = [(i, now - (40 - i // 3) * DAY) for i in range(1, 121)]  # 3 a day over 40 days
    kept = snapshots.keep(rows, 0, now, keep_days=30)
    newest_per_day = {
        max(i for i, w in rows if w // DAY == day) for day in {w // DAY for _, w in rows}
    }
    in_age = {i for i in newest_per_day if dict(rows)[i] >= now - 32 * DAY}
    assert kept == in_age | {119, 120}
    assert snapshots.keep(rows, 0, now, keep_days=0) == {119, 120}
    assert snapshots.keep(rows, 60, now, keep_days=0) == {60, 119, 120}  # the base stays
