"""What the journal keeps in memory for the hot path (`Journal.remembered`, the newest input
and snapshot) agrees with SQLite across commits and rollbacks (issue 21, item 11)."""

from __future__ import annotations

from railbird.config import from_dict
from railbird.core.pipeline import Pipeline
from railbird.daemon.journal import Journal
from railbird.daemon.snapshots import NEWEST_KEY, Snapshots


def _newest(j: Journal):
    j.flush()  # the rows the journal keeps back until the batch is through
    return j.db.execute("SELECT MAX(id) FROM inputs").fetchone()[0]


def test_newest_input_follows_commit_and_rollback(tmp_path):
    j = Journal(tmp_path / "j.sqlite")
    assert j.newest_input() is None
    a = j.add_input("tick", 1, status="ok")
    assert j.newest_input() == a == _newest(j)
    j.commit()
    b = j.add_input("tick", 2, status="ok")
    assert j.newest_input() == b
    j.rollback()  # the id is free again: SQLite hands it out once more
    assert j.newest_input() == a == _newest(j)
    c = j.add_input("tick", 3, status="ok")
    j.commit()
    assert j.newest_input() == c == _newest(j)
    j.close()
    j = Journal(tmp_path / "j.sqlite")  # a restart reads it again
    assert j.newest_input() == c
    j.close()


def test_newest_snapshot_is_dropped_with_a_rolled_back_batch(tmp_path):
    cfg = from_dict({"venue": "v", "tables": {"t1": {"nodes": ["n1"]}}})
    j = Journal(tmp_path / "j.sqlite")
    snaps = Snapshots(cfg, j, every_inputs=2, every_s=1e9)
    pipeline = Pipeline(cfg)
    for rx in (1, 2):
        j.add_input("tick", rx, status="ok")
    assert snaps.after_batch(pipeline, now=10.0)
    j.commit()
    kept = j.remembered(NEWEST_KEY, lambda: None)
    for rx in (3, 4):
        j.add_input("tick", rx, status="ok")
    assert snaps.after_batch(pipeline, now=11.0)
    j.rollback()  # e.g. the commit failed on a full disk: that snapshot is not in
    assert j.remembered(NEWEST_KEY, lambda: None) == kept == (2, 10.0)
    assert not snaps.after_batch(pipeline, now=12.0)  # no input past it: not due
    for rx in (3, 4):
        j.add_input("tick", rx, status="ok")
    assert snaps.after_batch(pipeline, now=13.0)
    j.commit()
    row = j.db.execute(
        "SELECT input_id, wall FROM snapshots ORDER BY input_id DESC LIMIT 1"
    ).fetchone()
    assert j.remembered(NEWEST_KEY, lambda: None) == row == (4, 13.0)
    j.close()
