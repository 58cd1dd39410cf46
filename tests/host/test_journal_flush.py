"""The journal keeps a batch's event rows back and writes them in multi-row INSERTs
(`Journal.flush`, daemon/journal.py): every row of every size of batch is in after the
commit, in order, a row whose key is already there is left as it was (as the row-by-row
statement did), and a rollback leaves none. Sizes around the chunks (256, 64, 16, 4, 1)."""

from __future__ import annotations

import pytest

from railbird.core.records import EventRecord, Source, Status
from railbird.core.timeline import Event
from railbird.daemon.journal import Journal


def _records(n: int, amp: int = 100) -> list[EventRecord]:
    return [
        EventRecord(
            venue="club",
            table="t1",
            event=Event(
                t=1_000 * i,
                node="t1-node",
                boot=1,
                seq=i,
                kind="rail",
                rail="H",
                amp=amp,
                t_node=1_000 * i,
                synced=True,
            ),
            pos=i + 1,
        )
        for i in range(n)
    ]


@pytest.mark.parametrize("n", [1, 3, 4, 17, 255, 256, 257, 341, 600])
def test_every_row_of_a_batch_is_written_once_and_a_known_key_is_left_as_it_was(tmp_path, n):
    j = Journal(tmp_path / "j.sqlite")
    try:
        first = j.add_input(Source.MQTT, 0, "t", b"x", "club", "t1", Status.OK)
        j.add_records(first, _records(1, amp=7))  # seq 0 already there, amp 7
        j.commit()
        iid = j.add_input(Source.MQTT, 1, "t", b"y", "club", "t1", Status.OK)
        j.add_records(iid, _records(n))  # seq 0 again, with amp 100: ignored
        j.commit()
        rows = j.db.execute("SELECT seq, amp, pos, input_id FROM events ORDER BY seq").fetchall()
        assert [r[0] for r in rows] == list(range(n))
        assert rows[0][1:] == (7, 1, first)
        assert all(r[1:] == (100, r[0] + 1, iid) for r in rows[1:])
    finally:
        j.close()


def test_a_rollback_leaves_no_row_kept_back(tmp_path):
    j = Journal(tmp_path / "j.sqlite")
    try:
        iid = j.add_input(Source.MQTT, 0, "t", b"x", "club", "t1", Status.OK)
        j.add_records(iid, _records(300))
        j.rollback()
        iid = j.add_input(Source.MQTT, 1, "t", b"y", "club", "t1", Status.OK)
        j.commit()
        assert j.count("events") == 0 and j.count("inputs") == 1
    finally:
        j.close()
