"""Issue 13, items 2 and 3: any unexpected exception inside a batch takes the path of a failed
journal write, never a half-done batch. The daemon (in-process, private mosquitto, real
journal) meets an input on which the pipeline fails after it has changed its state: a bug
that no input known today triggers, so it is injected, the only part not real here. The
batch is undone, the input is set aside (journalled raw as `failed`, acknowledged, counted,
logged) with nothing it half did left in the pipeline, the inputs around it are scored, and
the replay agrees with the journal."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time

import pytest

from railbird.config import from_dict
from railbird.core.pipeline import Pipeline
from railbird.daemon.worker import Daemon

from .nodepub import NodePub, shot_events
from .test_journal_disk_full import NODE, PW

pytestmark = pytest.mark.broker

POISON_BOOT = 666


def test_an_input_the_code_fails_on_is_set_aside_whole(broker, tmp_path, monkeypatch):
    real = Pipeline.on_message

    def buggy(self, topic, payload, rx, **kw):
        out = real(self, topic, payload, rx, **kw)  # its events are in the timeline now
        if b'"boot":%d' % POISON_BOOT in payload:
            raise RuntimeError("injected bug")
        return out

    monkeypatch.setattr(Pipeline, "on_message", buggy)
    broker.add_user(NODE, PW)
    journal = tmp_path / "journal.sqlite"
    cfg = from_dict(
        {
            "venue": "club",
            "journal": str(journal),
            "reorder_window_ms": 150,
            "stats_period_s": 0,
            "broker": {"port": broker.port, "password": "host-secret", "client_id": "h-bug"},
            "shots": {"quiet_ms": 400, "lip_rest_ms": 400},
            "tables": {
                "t1": {"game": "10-ball", "players": ["A", "B"], "race_to": 3, "nodes": [NODE]}
            },
        }
    )
    good = shot_events(0, 10_000_000, 6)
    d = Daemon(cfg).start()
    node = None
    try:
        assert d.ingest.connected.wait(10)
        node = NodePub(broker.port, NODE, PW)
        for i in range(0, 12, 2):
            node.events(1, good[i : i + 2])
            if i == 4:
                node.events(POISON_BOOT, shot_events(0, 13_500_000, 1))
        deadline = time.monotonic() + 20
        while not (d.stats()["events"] == len(good) and d.stats()["pending"] == 0):
            assert time.monotonic() < deadline, d.stats()
            time.sleep(0.05)
        # the positive signal is the loop's: the poison input came before the last good
        # ones, and with every good event released and nothing pending in the timeline,
        # anything it half did is counted already. This pause (more ticks) can only make
        # a slow machine pass falsely, never fail falsely.
        time.sleep(0.5)
        s = d.stats()
        assert s["inputs_set_aside"] == 1 and s["journal_error"] is None, s
        assert s["events"] == len(good) and s["duplicate"] == 0, s
    finally:
        if node is not None:
            node.close()
        d.stop()
    db = sqlite3.connect(journal)
    boots = sorted({b for (b,) in db.execute("SELECT boot FROM events")})
    failed = db.execute(
        "SELECT source, status, reason FROM inputs WHERE source='failed'"
    ).fetchall()
    db.close()
    assert boots == [1]  # nothing of the failed input was scored
    assert failed == [("failed", "rejected", "internal: RuntimeError: injected bug")]
    monkeypatch.undo()
    r = subprocess.run(
        [sys.executable, "-m", "railbird", "replay", str(journal), "--check"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0 and "OK" in r.stderr, r.stderr
