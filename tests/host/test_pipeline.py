"""Validation, counting and the journal: bad input is a counted rejection, never a crash;
a journal replays to the same state."""

import json

from railbird.config import from_dict
from railbird.core.pipeline import Pipeline
from railbird.core.records import ShotRecord
from railbird.daemon.journal import Journal
from railbird.daemon.replay import rebuild
from railbird.daemon.worker import Daemon

from . import scripts as S

CFG = {"venue": "club", "reorder_window_ms": 500, "tables": {"t1": {"nodes": ["t1-node"]}}}


def good():
    return S.batches(S.number(S.single_pot(0) + S.miss(7000)), size=2)


BAD = [
    ("railbird/v1/club/t1/node/t1-node/events", b"{not json", "bad json"),
    (
        "railbird/v1/club/t1/node/t1-node/events",
        b'{"v":2,"node":"t1-node","boot":1,"events":[]}',
        "unsupported version",
    ),
    ("railbird/v2/club/t1/node/t1-node/events", b'{"v":2}', "unsupported version"),
    (
        "railbird/v1/club/t1/node/intruder/events",
        b'{"v":1,"node":"intruder","boot":1,"events":[{"seq":0,"t":5,"kind":"cue"}]}',
        "unknown node",
    ),
    (
        "railbird/v1/club/t9/node/t1-node/events",
        b'{"v":1,"node":"t1-node","boot":1,"events":[{"seq":0,"t":5,"kind":"cue"}]}',
        "unknown table",
    ),
    (
        "railbird/v1/club/t1/node/t1-node/events",
        b'{"v":1,"node":"t1-node","boot":1,"events":[{"seq":0,"t":5,"kind":"drop"}]}',
        "missing field",
    ),
    ("railbird/v1/club/t1/node/t1-node/events", b"\xff\xfe", "bad json"),
    ("railbird/v1/club/t1/node/t1-node/events", b"", "bad json"),
    (
        "railbird/v1/club/t1/node/other/events",
        b'{"v":1,"node":"t1-node","boot":1,"events":[{"seq":0,"t":5,"kind":"cue"}]}',
        "bad value",
    ),
    ("garbage", b"{}", "bad topic"),
    ("railbird/v1/club/t1/node/t1-node/events", b"x" * 20000, "too large"),
    ("railbird/v1/club/t1/referee", b'{"v":1,"input":"undo"}', "bad type"),
]


def test_bad_input_is_counted_and_good_data_around_it_kept():
    pipe = Pipeline(from_dict(CFG))
    pipe.on_message(*S.sync_result(0), None)
    msgs = good()
    shots = []
    for i, (topic, payload) in enumerate(msgs):
        topic2, payload2, code = BAD[i % len(BAD)]
        status, reason, _ = pipe.on_message(topic2, payload2, None)
        assert status == "rejected" and reason.startswith(code), (reason, code)
        status, reason, recs = pipe.on_message(topic, payload, None)
        assert status == "ok", reason
        shots += [r.shot for r in recs if isinstance(r, ShotRecord)]
    for topic2, payload2, _code in BAD:
        pipe.on_message(topic2, payload2, None)
    shots += [r.shot for r in pipe.flush() if isinstance(r, ShotRecord)]
    assert len(shots) == 2 and pipe.counters["events"] == 4
    assert pipe.counters["rejected"] == len(BAD) + len(msgs)
    assert pipe.rejected["unsupported version"] >= 2
    assert pipe.rejected["unknown node"] >= 1 and pipe.rejected["unknown table"] >= 1


def test_journal_rebuild_gives_the_same_state(tmp_path):
    cfg = from_dict(dict(CFG, journal=str(tmp_path / "j.sqlite")))
    d = Daemon(cfg, connect=False)
    # queued before the worker starts: one group, no idle tick in between (these node
    # times are far behind host time, so any tick would close everything)
    for m in [S.sync_result(0), *good()]:
        d.inbox.put(("mqtt", S.RX, m[0], m[1], 0, 0))
    d.inbox.put(("mqtt", S.RX, BAD[0][0], BAD[0][1], 0, 0))
    d.start()
    import time

    deadline = time.time() + 30  # generous: a loaded machine
    while d.pipeline.counters["shots"] < 2 and time.time() < deadline:
        time.sleep(0.01)  # the idle tick (host time >> these node times) closes the last shot
    before = d.stats()
    shots_before = d.journal.shots()
    d.stop()
    assert len(shots_before) == 2
    j = Journal(tmp_path / "j.sqlite")
    assert j.count("events") == 4 and j.count("inputs") == 5  # 4 messages + 1 tick
    pipe = Pipeline(cfg)
    rebuild(pipe, j)
    after = pipe.stats()
    for k in ("events", "shots", "rejected", "duplicate", "received"):
        assert after.get(k) == before.get(k), k
    t = pipe.tables[("club", "t1")]
    assert t.assembler.n == 3 and not t.assembler.open
    assert [json.dumps(s, sort_keys=True) for s in t.shots] == [
        json.dumps(s, sort_keys=True) for s in shots_before
    ]
