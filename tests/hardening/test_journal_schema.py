"""Issue 13, item 14: the journal has a schema version with migrations tested from every
released version, and a journal of a newer version is refused.

Released version 1 is every journal written before versions existed (user_version 0), in two
layouts: before and after the `conflicts` table. A journal of each is built here with the
schema those releases wrote (copied below as they were) and filled through today's pipeline;
today's code opens it: it reaches the current version with every input as it was, has the
schema of a new journal, replays to exactly the pipeline that wrote it (`railbird replay
--check` agrees), and the daemon goes on with it and restarts from its snapshots.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import subprocess
import sys

import pytest

from railbird.config import from_dict
from railbird.core.pipeline import Pipeline
from railbird.core.records import ShotRecord, StateRecord
from railbird.daemon import migrations, snapshots
from railbird.daemon.journal import Journal, JournalError
from railbird.daemon.offline import replay
from railbird.daemon.replay import rebuild
from railbird.daemon.worker import Daemon
from rbproto import codec

from .nodepub import shot_events
from .snapstate import state_bytes

# The schema of version 1 as releases up to commit b73935e wrote it ...
V1 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS inputs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  source TEXT NOT NULL,            -- mqtt | local | tick | reconnect
  rx INTEGER,                      -- host monotonic µs at receipt (tick: the tick time)
  wall REAL NOT NULL,              -- wall clock, for people
  topic TEXT, payload BLOB,
  venue TEXT, tbl TEXT,
  status TEXT, reason TEXT
);
CREATE TABLE IF NOT EXISTS events (
  venue TEXT NOT NULL, tbl TEXT NOT NULL, node TEXT NOT NULL, boot INTEGER NOT NULL,
  seq INTEGER NOT NULL, t INTEGER NOT NULL, t_node INTEGER NOT NULL, kind TEXT NOT NULL,
  pocket TEXT, rail TEXT, amp INTEGER, dur INTEGER, n INTEGER, synced INTEGER,
  late INTEGER NOT NULL, pos INTEGER, input_id INTEGER,
  PRIMARY KEY (venue, tbl, node, boot, seq)
);
CREATE INDEX IF NOT EXISTS events_pos ON events (venue, tbl, pos);
CREATE TABLE IF NOT EXISTS shots (
  venue TEXT NOT NULL, tbl TEXT NOT NULL, n INTEGER NOT NULL, shot TEXT NOT NULL,
  input_id INTEGER, PRIMARY KEY (venue, tbl, n)
);
CREATE TABLE IF NOT EXISTS states (
  id INTEGER PRIMARY KEY AUTOINCREMENT, venue TEXT, tbl TEXT, game TEXT, state TEXT,
  fen TEXT, announcements TEXT, cause TEXT, source TEXT, input_id INTEGER
);
CREATE TABLE IF NOT EXISTS referee (
  id INTEGER PRIMARY KEY AUTOINCREMENT, venue TEXT, tbl TEXT, rid TEXT, by_ TEXT,
  input TEXT, ok INTEGER, error TEXT, source TEXT, input_id INTEGER
);
CREATE TABLE IF NOT EXISTS rules_errors (
  id INTEGER PRIMARY KEY AUTOINCREMENT, venue TEXT, tbl TEXT, input TEXT, error TEXT,
  source TEXT, input_id INTEGER
);
CREATE TABLE IF NOT EXISTS nodes (
  venue TEXT, tbl TEXT, node TEXT, status TEXT, input_id INTEGER,
  PRIMARY KEY (venue, tbl, node)
);
"""
# ... and as later releases of version 1 did: one table more.
V1_CONFLICTS = (
    V1
    + """
CREATE TABLE IF NOT EXISTS conflicts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  venue TEXT NOT NULL, tbl TEXT NOT NULL, node TEXT NOT NULL, boot INTEGER NOT NULL,
  seq INTEGER NOT NULL, t_node INTEGER, event TEXT NOT NULL, input_id INTEGER
);
"""
)
RELEASED = {"v1": V1, "v1 with conflicts": V1_CONFLICTS}

NODE = "t1-node"
CONFIG = {
    "venue": "club",
    "reorder_window_ms": 150,
    "stats_period_s": 0,
    "shots": {"quiet_ms": 400, "lip_rest_ms": 400},
    "tables": {"t1": {"game": "10-ball", "players": ["Ann", "Bob"], "race_to": 3, "nodes": [NODE]}},
}


def config(path=None):
    d = json.loads(json.dumps(CONFIG))
    if path is not None:
        d["journal"] = str(path)
    return from_dict(d)


def _j(x) -> str:
    return json.dumps(x, sort_keys=True, separators=(",", ":"))


def write_v1(path, schema: str) -> Pipeline:
    """A journal as a version-1 daemon wrote it: its inputs, shots and states (what a
    restart and `replay --check` read), the config in `meta`. -> the pipeline that wrote it."""
    cfg = config(path)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(schema)
    db.execute("INSERT INTO meta VALUES ('config', ?)", (json.dumps(cfg.raw),))
    p, rx, wall = Pipeline(cfg), 10_000_000, 1_700_000_000.0
    db.execute("BEGIN")

    def journal(source, rx, topic, payload, venue, tbl, res):
        status, reason, records = res if source != "tick" else ("ok", None, res)
        cur = db.execute(
            "INSERT INTO inputs (source, rx, wall, topic, payload, venue, tbl, status, reason)"
            " VALUES (?,?,?,?,?,?,?,?,?)",
            (source, rx, wall + rx / 1e6, topic, payload, venue, tbl, status, reason),
        )
        for r in records:
            if isinstance(r, ShotRecord):
                db.execute(
                    "INSERT OR REPLACE INTO shots VALUES (?,?,?,?,?)",
                    (r.venue, r.table, r.shot["n"], _j(r.shot), cur.lastrowid),
                )
            elif isinstance(r, StateRecord):
                db.execute(
                    "INSERT INTO states (venue, tbl, game, state, fen, announcements, cause,"
                    " source, input_id) VALUES (?,?,?,?,?,?,?,?,?)",
                    (r.venue, r.table, r.game, _j(r.state), r.fen,
                     _j(r.announcements), r.cause, r.source, cur.lastrowid),
                )  # fmt: skip

    lag = {"input": {"type": "lag", "winner": 0}, "id": "lag-1"}
    journal("local", rx, None, json.dumps(lag), "club", "t1", p.on_referee("club", "t1", lag))
    topic = codec.topic("club", "t1", "events", NODE)
    events = shot_events(0, 20_000_000, 12)
    for i in range(0, len(events), 2):
        rx = events[i]["t"] + 50_000
        payload = json.dumps({"v": 1, "node": NODE, "boot": 1, "events": events[i : i + 2]})
        payload = payload.encode()
        journal("mqtt", rx, topic, payload, "club", "t1", p.on_message(topic, payload, rx))
        if i % 4 == 2:  # the table rests: a tick closes the shot
            rx += 600_000
            journal("tick", rx, None, None, None, None, p.tick(rx))
    db.execute("COMMIT")
    db.close()
    assert p.counters["shots"] >= 6 and p.counters["states"] >= 6, p.stats()
    return p


def replay_check(path) -> subprocess.CompletedProcess:
    """`railbird replay <journal> --check`, as an installer runs it."""
    return subprocess.run(
        [sys.executable, "-m", "railbird", "replay", str(path), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _rows(path, sql):
    db = sqlite3.connect(path)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def _schema(path) -> list:
    """Tables and indexes with their SQL, comments and spacing aside."""

    def norm(sql):
        sql = re.sub(r"--[^\n]*", "", sql or "")
        return re.sub(r"\s+", " ", sql).replace("( ", "(").replace(" )", ")").strip()

    return sorted(
        (t, n, norm(s))
        for t, n, s in _rows(path, "SELECT type, name, sql FROM sqlite_master")
        if not n.startswith("sqlite_")
    )


@pytest.mark.parametrize("release", sorted(RELEASED))
def test_a_released_journal_is_upgraded_and_replays_identically(tmp_path, release):
    path = tmp_path / "journal.sqlite"
    wrote = write_v1(path, RELEASED[release])
    inputs = _rows(path, "SELECT * FROM inputs ORDER BY id")
    assert _rows(path, "PRAGMA user_version") == [(0,)]

    Journal(path).close()
    assert _rows(path, "PRAGMA user_version") == [(migrations.VERSION,)]
    assert _rows(path, "SELECT * FROM inputs ORDER BY id") == inputs
    fresh = tmp_path / "fresh.sqlite"
    Journal(fresh).close()
    assert _schema(path) == _schema(fresh)

    j = Journal(path)
    try:
        report = {}
        pipe, _ = replay(j, report=report)
        assert report == {"start": 0, "snapshots": 0, "snapshot_mismatches": []}
    finally:
        j.close()
    assert state_bytes(pipe) == state_bytes(wrote)
    r = replay_check(path)
    assert r.returncode == 0, r.stderr
    assert f"OK: {wrote.counters['shots']} shots identical" in r.stderr


def test_the_daemon_goes_on_with_an_upgraded_journal_and_restarts_from_its_snapshot(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(snapshots, "EVERY_INPUTS", 4)
    path = tmp_path / "journal.sqlite"
    write_v1(path, V1)
    cfg = config(path)
    d = Daemon(cfg, connect=False).start()
    try:
        assert d.replayed == len(_rows(path, "SELECT id FROM inputs"))
        for i in range(6):
            res = d.referee_input("club", "t1", {"type": "call", "ball": 1 + i, "pocket": "SL"})
            assert "ok" in res
    finally:
        d.stop()
    (last,) = _rows(path, "SELECT MAX(input_id) FROM snapshots")[0]
    assert last is not None
    j = Journal(path)
    try:
        full = Pipeline(cfg)
        rebuild(full, j)
        pipeline, rb = snapshots.resume(cfg, j)
    finally:
        j.close()
    assert rb["snapshot"] == last and rb["inputs"] < 6
    assert state_bytes(pipeline) == state_bytes(full)


def test_a_journal_of_a_newer_version_is_refused_unchanged(tmp_path):
    path = tmp_path / "journal.sqlite"
    Journal(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {migrations.VERSION + 1}")
    db.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()

    with pytest.raises(JournalError) as e:
        Journal(path)
    msg = str(e.value)
    assert "\n" not in msg
    assert f"schema version {migrations.VERSION + 1}" in msg and "newer railbird" in msg
    for cmd in (["replay", str(path)], ["run", "--journal", str(path), "--config"]):
        if cmd[0] == "run":
            conf = tmp_path / "c.toml"
            conf.write_text('venue = "club"\n[tables.t1]\nnodes = ["n1"]\n')
            cmd = [*cmd, str(conf)]
        r = subprocess.run(
            [sys.executable, "-m", "railbird", *cmd], capture_output=True, text=True, timeout=60
        )
        assert r.returncode == 2, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "newer railbird" in lines[0], r.stderr
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_a_journal_with_state_lines_of_the_first_form_replays_as_identical(tmp_path):
    """Journals written before the state line's second form hold the first (with
    `breaking=`, rules/fenlegacy.py): `replay --check` compares the states the lines
    describe, not their text; a line of another state is still a mismatch."""
    from railbird.rules import fenlegacy, from_fen

    path = tmp_path / "journal.sqlite"
    write_v1(path, RELEASED[sorted(RELEASED)[-1]])
    db = sqlite3.connect(path)
    with db:
        rows = db.execute("SELECT id, fen FROM states WHERE fen IS NOT NULL").fetchall()
        assert rows
        for sid, fen in rows:
            old = fenlegacy.write(from_fen(fen))
            assert old != fen and old.split(" ")[0] == fen.split(" ")[0]
            db.execute("UPDATE states SET fen = ? WHERE id = ?", (old, sid))
    db.close()

    r = replay_check(path)
    assert r.returncode == 0, r.stderr
    assert "MISMATCH" not in r.stderr

    db = sqlite3.connect(path)
    with db:  # the last state's line names another state (the first one's)
        first, last = rows[0][0], rows[-1][0]
        db.execute(
            "UPDATE states SET fen = (SELECT fen FROM states WHERE id = ?) WHERE id = ?",
            (first, last),
        )
    db.close()
    r = replay_check(path)
    assert r.returncode == 1 and "MISMATCH" in r.stderr, r.stderr


def test_a_version_2_journal_keeps_its_events_keyed_by_their_key_alone(tmp_path):
    """Version 3: the events table without rowid and without `events_pos`, every row as it
    was (an integer past SQLite's range is its digits, railbird.daemon.journal `sql_int`)."""
    path = tmp_path / "journal.sqlite"
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript(V1_CONFLICTS)
    for sql in dict(migrations.STEPS)[2]:
        db.execute(sql)
    db.execute("PRAGMA user_version = 2")
    rows = [
        ("club", "t1", NODE, 1, seq, 10_000 + seq, 900 + seq, "rail", None, "F", 800, None,
         None, 1, seq % 2, None if seq % 2 else seq, seq)
        for seq in (3, 1, 2)
    ]  # fmt: skip
    rows.append(("club", "t1", NODE, b"18446744073709551615", 0, 5, 5, "drop", "HL", None,
                 None, 20_000, None, 0, 0, 7, 4))  # fmt: skip
    db.executemany("INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    db.close()
    key = "ORDER BY venue, tbl, node, boot, seq"
    before = _rows(path, f"SELECT * FROM events {key}")

    Journal(path).close()
    assert _rows(path, "PRAGMA user_version") == [(migrations.VERSION,)]
    assert _rows(path, f"SELECT * FROM events {key}") == before
    names = {n for (n,) in _rows(path, "SELECT name FROM sqlite_master WHERE tbl_name='events'")}
    assert names == {"events"}  # the table is its key's B-tree: no index beside it
    (sql,) = _rows(path, "SELECT sql FROM sqlite_master WHERE name='events'")[0]
    assert sql.endswith("WITHOUT ROWID")
    fresh = tmp_path / "fresh.sqlite"
    Journal(fresh).close()
    assert _schema(path) == _schema(fresh)
