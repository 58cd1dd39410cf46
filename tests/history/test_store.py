"""The history tables in the journal: kept in each batch's transaction they equal one fold
of the whole journal, through a restart in the middle of a match, a rolled-back batch, the
retention of raw inputs (the wall-clock times stay) and a failure of the history itself
(which never fails the batch). And the daemon keeps them: referee input through `Daemon`,
then a restart."""

from __future__ import annotations

import json
import sqlite3

from railbird.config import from_dict
from railbird.core.records import ShotRecord
from railbird.daemon.worker import Daemon
from railbird.history import store
from railbird.history.store import HistoryStore
from tests.history.nights import Night, at

W = at("2026-11-27 20:00")
TENBALL = {"type": "match", "game": "10-ball", "players": ["Ann", "Bob"], "race_to": 2}
STRAIGHT = {"type": "match", "game": "14.1", "players": ["Cleo", "Dev"], "target": 3}


def script() -> list[tuple]:
    """Two tables at once: t1 a 10-ball race to 2 (Bob wins 2-1, one foul), t2 a 14.1 race
    to 3 (Dev runs 3), each step (time, what, table, argument)."""
    t1 = [
        ("referee", {"type": "lag", "winner": "Ann"}),
        ("shot", ["FR"]),
        ("shot", []),
        ("referee", {"type": "call", "ball": 10, "pocket": "FL"}),
        ("shot", [("FL", 10)]),
        ("shot", [("SL", 0)]),
        ("referee", {"type": "call", "ball": 10, "pocket": "HL"}),
        ("shot", [("HL", 10)]),
        ("shot", []),
        ("referee", {"type": "call", "ball": 10, "pocket": "HR"}),
        ("shot", [("HR", 10)]),
    ]
    t2 = [("referee", {"type": "lag", "winner": "Cleo"}), ("shot", [])]
    for b in (1, 2, 3):
        t2 += [("referee", {"type": "call", "ball": b, "pocket": "SL"}), ("shot", [("SL", b)])]
    steps = [(W + 60 * i, what, "t1", arg) for i, (what, arg) in enumerate(t1)]
    steps += [(W + 45 * i + 7, what, "t2", arg) for i, (what, arg) in enumerate(t2)]
    return sorted(steps, key=lambda s: s[0])


def play(night: Night, steps) -> None:
    for wall, what, table, arg in steps:
        if table not in night.games:
            night.table(table, TENBALL if table == "t1" else STRAIGHT)
        if what == "referee":
            night.referee(table, wall, arg)
        else:
            night.shot(table, wall, arg)


def tables(db) -> dict:
    return {
        "matches": store.matches(db),
        "drops": db.execute("SELECT * FROM history_drops ORDER BY venue, tbl, shot, i").fetchall(),
    }


def once(tmp_path, steps=None) -> dict:
    """The history of the script folded once, at the end."""
    night = Night(tmp_path / "once.sqlite")
    play(night, steps or script())
    store.update(night.journal.db)
    out = tables(night.journal.db)
    night.close()
    return out


def test_kept_batch_by_batch_it_equals_one_fold_of_the_journal(tmp_path):
    night = Night(tmp_path / "live.sqlite", live=True)
    play(night, script())
    live = tables(night.journal.db)
    assert [(m["table"], m["result"], m["winner"]) for m in live["matches"]] == [
        ("t1", "won", "Bob"),
        ("t2", "won", "Dev"),
    ]
    assert live == once(tmp_path)
    assert night.history.errors == 0
    night.close()


def test_a_restart_in_the_middle_of_a_match_continues_it(tmp_path):
    steps = script()
    night = Night(tmp_path / "live.sqlite", live=True)
    play(night, steps[:9])
    night.history = HistoryStore(night.journal.db)  # the daemon restarted
    play(night, steps[9:])
    assert tables(night.journal.db) == once(tmp_path)
    night.close()


def test_a_rolled_back_batch_leaves_no_trace(tmp_path):
    steps = script()
    night = Night(tmp_path / "live.sqlite", live=True)
    play(night, steps[:9])
    # a batch that fails after the history took its records: undone whole
    j = night.journal
    iid = j.add_input("local", 1, None, b"{}", "club", "t1", "ok")
    shot = {"n": 99, "pocketed": [{"pocket": "HL"}]}
    j.add_records(iid, [ShotRecord(venue="club", table="t1", shot=shot)])
    night.history.after_batch()
    assert j.db.execute("SELECT COUNT(*) FROM history_drops WHERE shot=99").fetchone()[0] == 1
    j.rollback()
    play(night, steps[9:])
    assert tables(j.db) == once(tmp_path)
    night.close()


def test_history_outlives_the_raw_inputs(tmp_path):
    """Retention deletes raw inputs (railbird.daemon.retention); the matches keep their
    start and end, the drops their times, and a match still open goes on after a restart
    with the start it had."""
    steps = script()
    cut = 9  # t1 and t2 both in progress
    night = Night(tmp_path / "live.sqlite", live=True)
    play(night, steps[:cut])
    db = night.journal.db
    db.execute("DELETE FROM inputs")
    night.history = HistoryStore(db)  # a restart after the cut
    play(night, steps[cut:])
    assert tables(db) == once(tmp_path)
    before = tables(db)
    db.execute("DELETE FROM inputs")
    night.history = HistoryStore(db)
    night.referee("t1", W + 3600, TENBALL)  # the next match, after another restart
    night.referee("t1", W + 3660, {"type": "lag", "winner": "Bob"})
    after = tables(db)
    assert after["matches"][:2] == before["matches"] and after["drops"] == before["drops"]
    assert after["matches"][2]["start"] == W + 3660
    night.close()


def test_a_failing_history_never_fails_the_batch(tmp_path, caplog):
    night = Night(tmp_path / "live.sqlite", live=True)
    db = night.journal.db
    # a view where the history writes its drops: every write of a drop fails
    db.execute("CREATE VIEW history_drops AS SELECT 1 AS venue")
    play(night, script()[:4])
    assert night.history.errors > 0
    assert "match history not updated" in caplog.text
    assert db.execute("SELECT COUNT(*) FROM states").fetchone()[0] == 4  # all committed
    assert db.execute("SELECT COUNT(*) FROM shots").fetchone()[0] == 2
    db.execute("DROP VIEW history_drops")
    night.history.after_batch()  # the next batch: it catches up from its marks
    assert len(store.matches(db)) == 2
    assert db.execute("SELECT COUNT(*) FROM history_drops").fetchone()[0] == 1
    night.close()


def test_the_daemon_keeps_the_history_through_a_restart(tmp_path):
    cfg = from_dict(
        {
            "venue": "club",
            "tables": {"t1": {"game": "10-ball", "players": ["Ann", "Bob"], "race_to": 1,
                              "nodes": ["t1-node"]}},
        }
    )  # fmt: skip
    path = tmp_path / "journal.sqlite"
    d = Daemon(cfg, journal_path=str(path), connect=False).start()
    try:
        for inp in (
            {"type": "lag", "winner": "Ann"},
            {"type": "shot", "pocketed": []},
            {"type": "call", "ball": 10, "pocket": "FL"},
            {"type": "shot", "pocketed": [{"ball": 10, "pocket": "FL"}]},
        ):
            assert d.referee_input("club", "t1", inp)["ok"], inp
        # committed with the input: another connection sees it at once
        other = sqlite3.connect(path)
        (m,) = store.matches(other)
        other.close()
        assert (m["result"], m["winner"], m["scores"], m["innings"]) == ("won", "Bob", [0, 1], 2)
        assert d.stats()["history_errors"] == 0
    finally:
        d.stop()
    d = Daemon(cfg, journal_path=str(path), connect=False).start()
    try:
        assert store.matches(d.journal.db) == [m]
        assert d.referee_input("club", "t1", {"type": "match", "players": ["Cy", "Dee"]})["ok"]
        assert d.referee_input("club", "t1", {"type": "lag", "winner": "Dee"})["ok"]
        rows = [(x["players"], x["result"]) for x in store.matches(d.journal.db)]
        assert rows == [(["Ann", "Bob"], "won"), (["Cy", "Dee"], "in progress")]
        record = d.journal.db.execute("SELECT record FROM history_matches ORDER BY id").fetchone()
        assert json.loads(record[0]) == m
    finally:
        d.stop()


def _batched(path, steps, size: int, as_written: bool) -> dict:
    """The script in transactions of `size` inputs, then a shot of t1 with no drops and, in
    the next batch, that shot written again twice (a correction: the same number), with
    one drop and then two, and a shot of t2 after them; folded as the journal wrote it
    (`as_written`) or read back from its tables."""
    night = Night(path)
    j = night.journal
    history = HistoryStore(j.db, j if as_written else None)
    commit, j.commit = j.commit, lambda: None  # the batches commit below, not each input

    def batch_end():
        j.flush()  # as the daemon: the batch's rows in before the history reads
        history.after_batch()
        commit()

    def shot(table, shot):
        iid = j.add_input("local", 1, None, b"{}", "club", table, "ok", wall=W + 999)
        j.add_records(iid, [ShotRecord(venue="club", table=table, shot=shot)])

    for i, step in enumerate(steps):
        play(night, [step])
        if i % size == size - 1:
            batch_end()
    batch_end()
    n = night.shots["t1"] + 1
    shot("t1", {"n": n, "pocketed": []})
    batch_end()
    shot("t1", {"n": n, "pocketed": [{"pocket": "SR"}]})
    shot("t1", {"n": n, "pocketed": [{"pocket": "SR"}, {"pocket": "HL"}]})
    shot("t2", {"n": night.shots["t2"] + 1, "pocketed": [{"pocket": "SL"}]})
    batch_end()
    out = tables(j.db)
    assert history.errors == 0
    assert j._logging == as_written  # the batches were folded from what the journal kept
    j.commit = commit
    night.close()
    return out


def test_folded_as_the_journal_wrote_it_equals_folded_as_read_back(tmp_path):
    steps = script()
    for size in (1, 3, len(steps)):
        written = _batched(tmp_path / f"w{size}.sqlite", steps, size, True)
        assert written == _batched(tmp_path / f"r{size}.sqlite", steps, size, False)
        assert [d[5] for d in written["drops"] if d[1] == "t1"][-2:] == ["SR", "HL"]
