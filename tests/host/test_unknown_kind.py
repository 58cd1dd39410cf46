"""The additive protocol change against a host that does not know the new kind
(protocol/SPEC.md "Additive changes"): an event of an unknown kind between good drops is
counted (`unknown_kind_events`, per node too) and skipped, its seq consumed; the good events
around it are journalled and assembled; nothing is refused."""

import json
import time

import pytest

from harness.mqttsub import client
from harness.waiting import wait_for
from railbird.config import from_dict
from railbird.core.pipeline import Pipeline
from railbird.core.records import ShotRecord
from railbird.daemon.journal import Journal
from railbird.daemon.worker import Daemon
from rbproto import codec

from . import scripts as S

CFG = {"venue": "club", "reorder_window_ms": 100, "tables": {"t1": {"nodes": [S.NODE]}}}
TOPIC = codec.topic(S.VENUE, S.TABLE, "events", S.NODE)


def batch(events, boot=1):
    # built by hand: scripts.batches keeps only the fields of the known kinds
    return json.dumps({"v": 1, "node": S.NODE, "boot": boot, "events": events}).encode()


def laser(seq, t):
    # a kind from a later firmware, with fields no v1 kind would accept
    return {"seq": seq, "t": t, "kind": "laser", "pocket": "XX", "amp": -3, "beam": [1, 2]}


def drops(t0_us, seq0=0):
    return [
        {"seq": seq0, "t": t0_us, "kind": "drop", "pocket": "FL", "dur": 40000},
        laser(seq0 + 1, t0_us + 50_000),
        {"seq": seq0 + 2, "t": t0_us + 100_000, "kind": "drop", "pocket": "SR", "dur": 40000},
    ]


def test_pipeline_counts_and_skips_an_unknown_kind_keeping_the_batch():
    pipe = Pipeline(from_dict(CFG))
    pipe.on_message(*S.sync_result(0), None)
    status, reason, _ = pipe.on_message(TOPIC, batch(drops(10_000_000)), S.RX)
    assert status == "ok", reason
    s = pipe.stats()
    assert s["events"] == 2 and s["rejected"] == 0 and s["duplicate"] == 0
    assert s["unknown_kind_events"] == 1
    assert s["unknown_kind_events_by_node"] == {S.NODE: 1}
    # a batch of unknown kinds only is neither refused nor a duplicate
    status, reason, _ = pipe.on_message(TOPIC, batch([laser(3, 10_200_000)]), S.RX)
    assert status == "ok" and "kind this host does not know" in reason
    # the next known seq follows the unknown one: no gap, nothing lost, not late
    status, _, _ = pipe.on_message(TOPIC, batch([{"seq": 4, "t": 10_300_000, "kind": "cue"}]), S.RX)
    assert status == "ok"
    shots = [r.shot for r in pipe.flush() if isinstance(r, ShotRecord)]
    assert len(shots) == 1
    assert [p["pocket"] for p in shots[0]["pocketed"]] == ["FL", "SR"]
    s = pipe.stats()
    assert s["unknown_kind_events"] == 2 and s["events"] == 3
    assert s["late"] == 0 and s["rejected"] == 0


@pytest.mark.broker
def test_daemon_journals_and_assembles_around_an_unknown_kind(broker, tmp_path):
    broker.add_user(S.NODE, "pw")
    journal = tmp_path / "j.sqlite"
    cfg = from_dict(
        dict(
            CFG,
            journal=str(journal),
            broker={"port": broker.port, "password": "host-secret", "client_id": "h1"},
            shots={"quiet_ms": 300, "lip_rest_ms": 300},
        )
    )
    d = Daemon(cfg).start()
    try:
        assert d.ingest.connected.wait(10)
        node = client(broker.port, S.NODE, "pw")
        now = int(time.monotonic() * 1e6)
        node.publish(*S.sync_result(0, t1=now), qos=1).wait_for_publish(5)
        # the shot just played: drop, laser, drop in one batch; then a laser alone
        node.publish(TOPIC, batch(drops(now - 400_000)), qos=1).wait_for_publish(5)
        node.publish(TOPIC, batch([laser(3, now - 250_000)]), qos=1).wait_for_publish(5)
        wait_for(lambda: d.pipeline.counters["shots"] >= 1, "the shot")
        node.disconnect()
        node.loop_stop()
        s = d.stats()
        assert s["events"] == 2 and s["unknown_kind_events"] == 2 and s["rejected"] == 0
        shot = d.journal.shots()[0]
        assert [p["pocket"] for p in shot["pocketed"]] == ["FL", "SR"]
    finally:
        d.stop()
    j = Journal(journal)
    assert j.count("events") == 2 and j.count("events", "WHERE kind = 'laser'") == 0
    # both messages are in the journal whole (a later host that knows the kind replays them)
    statuses = [r[0] for r in j.db.execute("SELECT status FROM inputs WHERE topic = ?", (TOPIC,))]
    assert statuses == ["ok", "ok"]
