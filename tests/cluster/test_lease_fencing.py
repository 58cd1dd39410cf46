"""A worker cut off from NATS gives its leases up before another worker may take them
(docs/scaling.md's failure table: a lease not renewed for 3/4 of `lease_s` is fenced). The
cluster's three servers are frozen (SIGSTOP), so every request the worker makes times out,
the way a worker behind a dead switch sees it. The presence key it renews first times out
too, and that must not keep it from fencing the partitions it can no longer renew: before
the fix the renewal left at the presence key, and the worker went on consuming tables
another worker had been given."""

from __future__ import annotations

import os
import signal

from harness.hostproc import RailbirdRun
from harness.nats import nats_cluster, worker_config

LEASE_S = 4


def test_a_worker_cut_off_from_nats_fences_its_leases(tmp_path):
    tables = {f"t{i}": f"t{i}-node" for i in range(1, 5)}
    with nats_cluster(tmp_path / "nats") as c:
        w = RailbirdRun(tmp_path / "w1", worker_config(c, "w1", tables, lease_s=LEASE_S))
        w.start(lambda s: True, "started")
        frozen: list[int] = []
        try:
            w.wait(lambda s: s.get("connected"), "worker connected", timeout=60)
            w.wait(
                lambda s: sorted(s["cluster_tables"]) == sorted(tables),
                "the only worker serves every table",
                60,
            )
            for proc in c.procs:
                assert proc is not None
                os.kill(proc.pid, signal.SIGSTOP)
                frozen.append(proc.pid)
            # fenced at 3/4 of the lease after the last renewal; the deadline is generous
            # (each request must first time out), and the assertion is only that it happens
            gone = w.wait(
                lambda s: s["cluster_partitions"] == [],
                "the leases given up while NATS is unreachable",
                timeout=LEASE_S + 60,
            )
            assert gone["cluster_tables"] == []
        finally:
            for pid in frozen:
                os.kill(pid, signal.SIGCONT)
            w.stop()
