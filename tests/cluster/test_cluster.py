"""Cluster mode end to end (issue 16, item 6; docs/scaling.md): three nats-server processes
and two `railbird run` workers on loopback, simulated nodes running the real firmware
publishing through the MQTT gateway; the stream's leader server and then a worker are
SIGKILLed mid-play. Every event is journalled exactly once, each table's events keep the
single-host order, and its shots and last state equal a single-host run of the same input.
The long run with figures is `make soak-cluster` (tests/soak/test_soak_cluster.py)."""

from __future__ import annotations

import pytest

from cluster import scenario

pytestmark = [pytest.mark.slow]


def test_failover_loses_nothing_and_scores_as_one_host(tmp_path):
    fig = scenario.run(tmp_path, n_tables=4, play_s=12.0, drops=10, rails=16)
    print(
        f"\ncluster: {fig['inputs']} inputs; killed {fig['nats_killed']} (stream leader), "
        f"then worker {fig['worker_killed']}: its {fig['orphaned_tables']} table(s) served "
        f"again after {fig['failover_s']} s (taken before the kill: "
        f"{fig['taken_before_kill']}; kill after {fig['kill_tries']} tries)"
    )
    scenario.check(fig)
