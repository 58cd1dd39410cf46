"""`make soak-cluster` (docs/scaling.md): cluster mode for RAILBIRD_SOAK_MINUTES (default 5)
of play on eight tables: three nats-server processes, two workers, simulated nodes running
the real firmware through the MQTT gateway; the stream's leader server is SIGKILLed a
quarter into the play and the worker with the most tables at half. Checks what the short
test in `make test` checks (tests/cluster/scenario.py) and prints the figures."""

from __future__ import annotations

import os

import pytest

from cluster import scenario

pytestmark = [pytest.mark.slow]

MINUTES = float(os.environ.get("RAILBIRD_SOAK_MINUTES", "5"))


def test_soak_cluster(tmp_path, soak_report):
    play_s = MINUTES * 60
    fig = scenario.run(
        tmp_path, n_tables=8, play_s=play_s, drops=int(play_s * 0.25), rails=int(play_s * 0.5)
    )
    ref, got = fig["reference"], fig["journals"]
    events = sum(map(len, ref["events"].values()))
    shots = sum(map(len, ref["shots"].values()))
    text = "\n".join(
        [
            f"play: {MINUTES:g} min on 8 tables, 3 nats-server, 2 workers",
            f"stream: {fig['messages']} messages, {fig['inputs']} host inputs (ticks too)",
            f"events: {events} in the single-host run; journalled twice across the "
            f"journals: {len(got['duplicates'])}; quarantined (stamped beyond their "
            f"arrival, in both runs alike): {ref['quarantined']}",
            f"shots: {shots}; tables whose shots differ from the single-host run: "
            + str(sum(got["shots"].get(t, []) != v for t, v in ref["shots"].items())),
            f"killed: {fig['nats_killed']} (the stream's leader), then worker "
            f"{fig['worker_killed']} with {fig['orphaned_tables']} table(s)",
            f"orphaned tables served again after: {fig['failover_s']} s",
        ]
    )
    print("\n" + text)
    soak_report("cluster soak (docs/scaling.md)", text)
    scenario.check(fig)
