"""MQTT topics as NATS subjects, the stream that keeps the host's input, and partitions.

nats-server's MQTT gateway turns a topic into a subject by `/` -> `.` (a `.` in a topic
would become `//`; protocol/SPEC.md's topics are slugs and never hold one).

The stream keeps every subject of the venue, `railbird.*.<venue>.*.>`: each table's
consumer needs one filter, `railbird.*.<venue>.<table>.>`, and nats-server 2.9 takes a
filter only when it lies inside one of the stream's subjects. So the feeds the workers
publish back (state, shot, announce, summary, the host's answers to nodes) are kept too;
a worker acknowledges those at once without journalling them (`host_input`). The host's
input is what railbird.daemon.ingest subscribes to on MQTT: events, sync results, births,
statuses and referee input, for every protocol version (another major version is refused
and counted, as on MQTT); `sync/req` is answered at once by the table's owner, never kept.
"""

from __future__ import annotations

import zlib

STREAM = "RAILBIRD"
LEASES = "railbird-leases"  # the key-value bucket of partition leases


# Referee input carries the venue PIN, and on NATS a subscription's allow list cannot leave
# one leaf out of a wildcard for an MQTT client (a `deny` filters core NATS deliveries, not
# the gateway's). So the servers map it out of the protocol's tree (natsconf.member_conf's
# `mappings`): `railbird.<ver>.<venue>.<table>.referee` is kept as
# `railbird.cluster.<venue>.<table>.referee.<ver>`, inside the stream and the table's
# consumer filter like a tick, outside every display's `railbird.<ver>.<venue>.>`.
REFEREE_MAPPING = (
    "railbird.*.*.*.referee",
    "railbird.cluster.{{wildcard(2)}}.{{wildcard(3)}}.referee.{{wildcard(1)}}",
)


def subject(topic: str) -> str:
    p = topic.split("/")
    if len(p) == 5 and p[0] == "railbird" and p[4] == "referee" and p[1] != "cluster":
        return f"railbird.cluster.{p[2]}.{p[3]}.referee.{p[1]}"
    return topic.replace("/", ".")


def topic(subject: str) -> str:
    p = subject.split(".")
    if len(p) == 6 and p[:2] == ["railbird", "cluster"] and p[4] == "referee":
        return f"railbird/{p[5]}/{p[2]}/{p[3]}/referee"  # the mapped referee input
    return subject.replace(".", "/")


def stream_subjects(venue: str) -> list[str]:
    return [f"railbird.*.{venue}.*.>"]


INPUT_LEAVES = ("events", "sync/result", "birth", "status")


def host_input(topic: str) -> bool:
    """Whether `topic` is one the single host subscribes to (railbird.daemon.ingest), or a
    table's tick (`tick_topic`)."""
    p = topic.split("/")
    if len(p) == 5:
        return p[4] == "referee" or (p[1] == "cluster" and p[4] == "tick")
    return len(p) >= 7 and p[4] == "node" and "/".join(p[6:]) in INPUT_LEAVES


def tick_topic(venue: str, table: str) -> str:
    """Cluster mode: a table's time tick is an input in the stream, published by the worker
    that owns the table ({"v": 1, "by": worker}; its time is the stream's timestamp). Under
    `railbird/cluster/`, not the protocol's version root, so that no MQTT client of the
    protocol's tree (`railbird/v1/<venue>/#`) ever sees one; still in the stream's subjects
    and the table's consumer filter (`railbird.*.<venue>.<table>.>`)."""
    return f"railbird/cluster/{venue}/{table}/tick"


def table_subject(venue: str, table: str) -> str:
    """Every input subject of one table (a consumer's filter)."""
    return f"railbird.*.{venue}.{table}.>"


def sync_req_subject(venue: str) -> str:
    return f"railbird.*.{venue}.*.node.*.sync.req"


def partition(venue: str, table: str, partitions: int) -> int:
    """The partition of a table: stable across processes and versions (CRC-32, not hash())."""
    return zlib.crc32(f"{venue}/{table}".encode()) % partitions


def consumer_name(venue: str, table: str) -> str:
    """The durable consumer of one table: its acknowledged position outlives its worker."""
    return f"rb-{venue}-{table}"
