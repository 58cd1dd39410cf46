"""The journal keeps a batch's `inputs`, `shots` and `states` rows back and writes them in
multi-row INSERTs (`Journal.flush`), giving their ids itself (daemon/journal.py `_next`).
The ids must be the ones SQLite gives row by row: the AUTOINCREMENT of `inputs` and
`states` (one more than the largest ever, also once the newest rows were deleted, and
handed out again after a rollback) and the rowid of `shots` (one more than the largest, the
row an INSERT OR REPLACE replaces counted). Checked against the same rows written one
statement at a time into a second journal, across commits, rollbacks and a reopening."""

from __future__ import annotations

import sqlite3

from railbird.core.records import Origin, ShotRecord, Source, StateRecord, Status
from railbird.daemon.journal import Journal


class RowByRow:
    """The same rows through the statements the journal used before it kept rows back."""

    def __init__(self, path):
        Journal(path).close()  # the same schema
        self.db = sqlite3.connect(path, isolation_level=None)

    def begin(self):
        if not self.db.in_transaction:
            self.db.execute("BEGIN")

    def input(self, rx):
        self.begin()
        return self.db.execute(
            "INSERT INTO inputs (source, rx, wall, topic, payload, venue, tbl, status, reason)"
            " VALUES ('tick', ?, 0, NULL, NULL, 'club', 't1', 'ok', NULL)",
            (rx,),
        ).lastrowid

    def shot(self, iid, n):
        return self.db.execute(
            "INSERT OR REPLACE INTO shots VALUES ('club', 't1', ?, '{}', ?)", (n, iid)
        ).lastrowid

    def state(self, iid):
        return self.db.execute(
            "INSERT INTO states (venue, tbl, game, state, fen, announcements, cause, source,"
            " input_id) VALUES ('club', 't1', '10-ball', '{}', 'f', '[]', 'shot', 'sensed', ?)",
            (iid,),
        ).lastrowid


def _records(n):
    return [
        ShotRecord(venue="club", table="t1", shot={"n": n}),
        StateRecord(
            venue="club",
            table="t1",
            game="10-ball",
            state={},
            fen="f",
            announcements=[],
            cause="shot",
            source=Origin.SENSED,
        ),
    ]


def _rows(db):
    return {
        "inputs": db.execute("SELECT id, rx FROM inputs ORDER BY id").fetchall(),
        "shots": db.execute("SELECT rowid, n, input_id FROM shots ORDER BY rowid").fetchall(),
        "states": db.execute("SELECT id, input_id FROM states ORDER BY id").fetchall(),
        "sequence": db.execute("SELECT name, seq FROM sqlite_sequence ORDER BY name").fetchall(),
    }


def test_ids_are_those_sqlite_gives_row_by_row(tmp_path):
    j = Journal(tmp_path / "kept.sqlite")
    ref = RowByRow(str(tmp_path / "ref.sqlite"))
    rx = 0

    def batch(shots):
        """One transaction: an input per shot number, each with its shot and a state."""
        nonlocal rx
        for n in shots:
            rx += 1
            iid = j.add_input(Source.TICK, rx, None, None, "club", "t1", Status.OK)
            assert iid == ref.input(rx)
            j.add_records(iid, _records(n))
            assert ref.shot(iid, n) and ref.state(iid)

    def commit():
        j.commit()
        ref.db.execute("COMMIT")
        assert _rows(j.db) == _rows(ref.db)

    def rollback():
        j.rollback()
        ref.db.execute("ROLLBACK")

    batch([1, 2, 3])
    commit()
    batch([3, 4])  # shot 3 written again (a correction): replaced, a new rowid
    commit()
    batch([5, 6])
    rollback()  # the ids are free again
    batch([4, 5])
    commit()
    for db in (j.db, ref.db):  # the newest inputs and states go (AUTOINCREMENT goes on)
        db.execute("DELETE FROM inputs WHERE id > 4")
        db.execute("DELETE FROM states WHERE id > 3")
    j.close()
    j = Journal(tmp_path / "kept.sqlite")  # a restart reads where the ids stand
    batch([5, 5, 6])  # the same shot twice in one batch: the second one stays
    commit()
    assert _rows(j.db)["inputs"][-1][0] == 10
    j.close()
    ref.db.close()
