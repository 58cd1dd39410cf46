"""Issue 13, item 3: boot, seq, t, dur and n up to 2^64 - 1 are valid (protocol/SPEC.md,
"Messages": `uint` and `u64`), but SQLite's INTEGER stops at 2^63 - 1. A node that sends
such numbers must be journalled losslessly like any other, and the events around it, of
its own and other boots, processed, journalled and acknowledged in the same batches.

`railbird run` on a private mosquitto; the node's messages are published as the node."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from harness.hostproc import RailbirdRun
from rbproto import codec

from .nodepub import NodePub, shot_events
from .test_journal_disk_full import CONFIG, NODE, PW

pytestmark = [pytest.mark.broker, pytest.mark.slow]

U64 = 2**64 - 1


def big_batch() -> list:
    """Valid per the spec, every number past SQLite's INTEGER."""
    return [
        {"seq": U64 - 2, "t": U64 - 3_000_000, "kind": "rail", "rail": "F", "amp": 900},
        {"seq": U64 - 1, "t": U64 - 2_800_000, "kind": "drop", "pocket": "FR", "dur": U64},
        {"seq": U64, "t": U64 - 1_000_000, "kind": "lost", "pocket": "SL", "n": U64},
    ]


def test_numbers_past_int64_are_journalled_losslessly_and_block_nothing(broker, tmp_path):
    broker.add_user(NODE, PW)
    for e in big_batch():  # the spec and the codec accept them
        codec.validate("events", {"v": 1, "node": NODE, "boot": U64, "events": [e]})
    host = RailbirdRun(tmp_path / "host", CONFIG.format(port=broker.port, node=NODE))
    host.start()
    node = NodePub(broker.port, NODE, PW)
    normal = shot_events(0, 10_000_000, 10)
    messages = 0
    try:
        for i in range(0, 10, 2):  # interleaved: normal, big, normal, ...
            node.events(1, normal[i : i + 2])
            messages += 1
            if i == 4:
                node.events(U64, big_batch())
                messages += 1
        for i in range(10, 20, 2):
            node.events(1, normal[i : i + 2])
            messages += 1
        total = len(normal) + len(big_batch())
        s = host.wait(
            lambda s: s["events"] == total and s["pending"] == 0,
            "every event in, the big ones too",
            timeout=20,
        )
        assert s["rejected"] == 0 and s["duplicate"] == 0, s
        host.stop()
        host.start()  # same session: anything not acknowledged would come again
        # ... before what is published now (the broker sends a session's redeliveries
        # first): once this is in, anything that was coming again has come
        node.events(2, shot_events(0, 40_000_000, 1))
        again = host.wait(
            lambda s: s["received"] > messages and s["events"] >= total + 2 and not s["pending"],
            "the message after the restart",
            timeout=20,
        )
        assert again["received"] == s["received"] + 1 == messages + 1, (s, again)
        assert again["events"] == total + 2
    finally:
        node.close()
        host.stop()

    db = sqlite3.connect(host.journal)
    rows = db.execute("SELECT boot, seq, t_node, dur, n FROM events").fetchall()
    db.close()
    as_int = [tuple(int(v) if isinstance(v, bytes) else v for v in r) for r in rows]
    big = sorted(r for r in as_int if r[0] == U64)
    assert big == [
        (U64, U64 - 2, U64 - 3_000_000, None, None),
        (U64, U64 - 1, U64 - 2_800_000, U64, None),
        (U64, U64, U64 - 1_000_000, None, U64),
    ]
    assert sorted(r[1] for r in as_int if r[0] == 1) == list(range(20))
    r = subprocess.run(
        [sys.executable, "-m", "railbird", "replay", str(host.journal), "--check"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0 and "OK" in r.stderr, r.stderr
