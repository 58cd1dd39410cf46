"""A three-server NATS cluster for tests (railbird.cluster.local.LocalCluster), its JetStream
read back with nats-py, and a cluster worker's config.

    with nats_cluster(tmp_path) as c: ...      # or the `nats_cluster` fixture (tests/cluster)
    msgs = stream_messages(c.nats_urls)        # every message the stream holds, in order
"""

from __future__ import annotations

import asyncio
import time
from contextlib import contextmanager

from railbird.cluster import subjects
from railbird.cluster.local import LocalCluster


async def _quiet(e):
    """nats-py logs each failed connection attempt with a traceback (a killed server stays
    in the list): tests say what failed themselves."""


async def connect(urls, **kw):
    """A nats-py connection to any of `urls` that does not log the servers it cannot reach."""
    import nats

    return await nats.connect(servers=urls, connect_timeout=2, error_cb=_quiet, **kw)


@contextmanager
def nats_cluster(workdir, **kw):
    c = LocalCluster(workdir, **kw).start()
    try:
        yield c
    finally:
        c.stop()


# How long a read of the stream is tried again while JetStream's API does not answer: a
# cluster that lost a server left a consumer's creation unanswered for over 30 s on a loaded
# machine (three tries of 10 s each failed make soak's cluster run and the failover test)
PATIENCE_S = 90.0


def stream_messages(
    urls, stream: str = subjects.STREAM, timeout: float = 20.0, user=None, password=None
) -> list:
    """[(stream seq, µs timestamp, topic, payload)] of every message in `stream`. `timeout`:
    for the first 10,000 messages; a longer stream (minutes of play and their feeds, in
    `make soak-cluster`) gets as much again for every 10,000 more. A read that the cluster
    does not answer is tried again for PATIENCE_S."""
    import nats.errors

    from railbird.cluster.ingest import stream_us

    async def run():
        nc = await connect(urls, user=user, password=password)
        try:
            js = nc.jetstream(timeout=10)
            last = (await js.stream_info(stream)).state.last_seq
            return await asyncio.wait_for(read(js, last), timeout * (1 + last // 10_000))
        finally:
            await nc.close()

    async def read(js, last):
        from nats.js.api import AckPolicy, ConsumerConfig

        sub = await js.pull_subscribe(
            "railbird.>",
            stream=stream,
            config=ConsumerConfig(
                ack_policy=AckPolicy.NONE,
                inactive_threshold=10,
                mem_storage=True,
                num_replicas=1,
            ),
        )
        out = []
        while not out or out[-1][0] < last:
            for m in await sub.fetch(512, timeout=5):
                seq = m.metadata.sequence.stream
                out.append((seq, stream_us(m), subjects.topic(m.subject), bytes(m.data)))
        return out

    deadline = time.monotonic() + PATIENCE_S
    while True:  # a cluster that lost a server answers slowly for a while
        try:
            return asyncio.run(run())
        except (TimeoutError, OSError, nats.errors.Error):
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def worker_config(cluster, worker: str, tables: dict, extra: str = "", lease_s: int = 4) -> str:
    """A `railbird run` config for one worker; `tables`: table id -> node id."""
    urls = ", ".join(f'"{u}"' for u in cluster.nats_urls)
    lines = [
        'venue = "club"',
        "reorder_window_ms = 150",
        "stats_period_s = 0",
        "[broker]",
        f"port = {cluster.mqtt_ports[0]}",
        "[shots]",
        "quiet_ms = 400",
        "lip_rest_ms = 400",
        "cue_before_ms = 500",
        "break_window_ms = 500",
    ]
    for t, node in sorted(tables.items()):
        lines += [
            f"[tables.{t}]",
            'game = "10-ball"',
            'players = ["Ann", "Bob"]',
            "race_to = 50",
            f'nodes = ["{node}"]',
        ]
    lines += [
        "[outputs.feeds]",
        "discovery = false",
        "[cluster]",
        f"nats = [{urls}]",
        f'worker = "{worker}"',
        "partitions = 8",
        f"lease_s = {lease_s}",
        extra,
    ]
    return "\n".join(lines) + "\n"
