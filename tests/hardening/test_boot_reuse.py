"""Issue 13, item 10: a node whose boot counter did not rise across a reboot numbers its new
events like the old ones. Such an event (same node, boot and seq, other content) is not a
duplicate: it is kept as a conflict (journalled in `conflicts`, counted in the stats, an
error in the log, a warning on the next shot), never dropped silently; a re-sent copy of
either event is still a duplicate, and the replay agrees.

`railbird run` on a private mosquitto; the node's messages are published as the node."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest

from harness.hostproc import RailbirdRun

from .nodepub import NodePub, shot_events
from .test_journal_disk_full import CONFIG, NODE, PW

pytestmark = [pytest.mark.broker, pytest.mark.slow]

BOOT = 5


def test_a_reused_boot_counter_is_kept_as_conflicts_not_dropped(broker, tmp_path):
    broker.add_user(NODE, PW)
    host = RailbirdRun(tmp_path / "host", CONFIG.format(port=broker.port, node=NODE))
    first = shot_events(0, 10_000_000, 5)  # 5 shots: rail + drop, seq 0..9
    # the reboot: node time starts again, same boot, seq from 0 again, other pockets
    second = shot_events(0, 2_000_000, 5, spacing_us=1_300_000)
    for e in second:
        if e["kind"] == "drop":
            e["pocket"] = "HL"
    host.start()
    node = NodePub(broker.port, NODE, PW)
    try:
        for i in range(0, 10, 2):
            node.events(BOOT, first[i : i + 2])
        host.wait(lambda s: s["events"] == 10 and s["pending"] == 0, "the first boot's events")
        for i in range(0, 10, 2):
            node.events(BOOT, second[i : i + 2])
        s = host.wait(lambda s: s["conflicts"] == 10, "ten conflicts", timeout=15)
        node.events(BOOT, first[:2])  # re-sent copies of either: duplicates, as before
        node.events(BOOT, second[:2])
        s = host.wait(lambda s: s["duplicate"] == 4, "re-sent copies are duplicates")
        assert s["conflicts"] == 10 and s["events"] == 10, s
    finally:
        node.close()
        host.stop()
    log = host.log(100_000)
    assert "ERROR conflict on railbird/v1/club/t1/node/t1-node/events" in log, log

    db = sqlite3.connect(host.journal)
    kept = db.execute("SELECT node, boot, seq, event FROM conflicts ORDER BY id").fetchall()
    scored = db.execute("SELECT seq, pocket FROM events ORDER BY seq").fetchall()
    warned = [
        w
        for (shot,) in db.execute("SELECT shot FROM shots")
        for w in json.loads(shot).get("warnings", [])
        if w.startswith("conflict:")
    ]
    db.close()
    assert [(n, b, q) for n, b, q, _ in kept] == [(NODE, BOOT, q) for q in range(10)]
    assert [json.loads(ev) for *_, ev in kept] == [
        dict(e, node=NODE, boot=BOOT) for e in second
    ]  # what the node said, in full
    assert [p for _, p in scored if p] == ["FR", "SL", "HL", "SR", "HR"]  # the first boot's
    assert len(warned) == 1, warned
    r = subprocess.run(
        [sys.executable, "-m", "railbird", "replay", str(host.journal), "--check"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0 and "OK" in r.stderr, r.stderr
    assert json.loads(r.stdout)["counters"]["conflicts"] == 10
