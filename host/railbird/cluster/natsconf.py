"""The nats-server configuration of one cluster member (docs/scaling.md shows one in full).

Each member has a `server_name` (JetStream and the MQTT gateway need one), JetStream with its
own store directory, the cluster routes to every member, and an MQTT listener for nodes and
displays. `users`, when given, is the MQTT and NATS logins with their permissions on
subjects, the NATS form of the mosquitto ACL (`acl_users`).
"""

from __future__ import annotations

import json
from urllib.parse import quote

from railbird.cluster.subjects import REFEREE_MAPPING
from rbproto.codec import ROOT

QOS1 = "$MQTT.sub.>"  # the gateway's delivery subjects of QoS 1 subscriptions
# Nodes, displays and consoles speak MQTT: closing core NATS to their logins closes the
# subjects the gateway needs them to hold (`$MQTT.sub.>`, everyone's QoS 1 deliveries) to
# everything but the gateway's own use of them for that client.
MQTT_ONLY = ["MQTT"]


def member_conf(
    name: str,
    host: str,
    client_port: int,
    cluster_port: int,
    mqtt_port: int,
    routes: list[int],
    store_dir: str,
    monitor_port: int = 0,
    users: list | None = None,
    cluster_name: str = "railbird",
    route_user: str | None = None,
    route_password: str | None = None,
) -> str:
    """`route_user`/`route_password`: the credentials every member's routes must present
    (the route port accepts no server without them: a stranger that joins the cluster reads
    every subject, referee input included). Give both, on every member."""
    q = json.dumps  # nats-server's config accepts JSON strings
    if (route_user is None) != (route_password is None):
        raise ValueError("route_user and route_password go together")
    cred = (
        ""
        if route_user is None
        else f"{quote(route_user, safe='')}:{quote(str(route_password), safe='')}@"
    )
    lines = [
        f"server_name: {q(name)}",
        f"listen: {q(f'{host}:{client_port}')}",
    ]
    if monitor_port:
        lines.append(f"http: {q(f'{host}:{monitor_port}')}")
    lines += [
        "jetstream {",
        f"  store_dir: {q(store_dir)}",
        "  max_memory_store: 64MB",
        "  max_file_store: 2GB",
        "}",
        "cluster {",
        f"  name: {q(cluster_name)}",
        f"  listen: {q(f'{host}:{cluster_port}')}",
    ]
    if route_user is not None:
        lines += [
            "  authorization {",
            f"    user: {q(route_user)}",
            f"    password: {q(route_password)}",
            "  }",
        ]
    lines += [
        "  routes: [" + ", ".join(q(f"nats-route://{cred}{host}:{p}") for p in routes) + "]",
        "}",
        "mqtt {",
        f"  listen: {q(f'{host}:{mqtt_port}')}",
        # a node's QoS 1 delivery (its config) is sent again after this long without PUBACK
        "  ack_wait: 10s",
        # the gateway's own streams (sessions, retained messages, QoS 1 deliveries) on all
        # three servers: left to itself nats-server 2.9 sizes them by the servers it knows
        # when the first MQTT client connects, which was 2 of 3 in tests: one server lost
        # then stalled every MQTT session (no quorum)
        "  stream_replicas: 3",
        "  consumer_replicas: 3",
        "}",
    ]
    src, dst = REFEREE_MAPPING  # referee input out of the displays' tree (subjects.py)
    lines.append("mappings {")
    lines.append(f"  {q(src)}: {q(dst)}")
    lines.append("}")
    if users:
        lines.append("authorization {")
        lines.append("  users: [")
        for u in users:
            lines.append("    " + json.dumps(u) + ",")
        lines.append("  ]")
        lines.append("}")
    return "\n".join(lines) + "\n"


def acl_users(
    venue: str,
    host_password: str,
    nodes: dict,
    display_password: str,
    referee_password: str | None = None,
) -> list:
    """Logins equivalent to the project's mosquitto ACL (host/railbird/data/broker): the
    host's workers may do everything; a node publishes only under its own subtree of any
    table and reads its config, sync answers and update commands; a display reads the
    venue's feeds; the referee console (with `referee_password`) also writes a table's
    `referee` input. `nodes`: node id -> password. JetStream's and the MQTT gateway's own
    subjects ($JS, $MQTT, _INBOX) are the workers' business, except `$MQTT.sub.>`: the
    gateway delivers a QoS 1 subscription through a JetStream consumer whose delivery
    subject the MQTT client itself subscribes to, so without it a node never receives its
    retained config (nats-server 2.9 logs a subscription violation)."""
    root = f"railbird.*.{venue}"
    # What displays and consoles read: the protocol's tree of the venue. Referee input,
    # which carries the venue PIN, is not in it: the servers map it out (subjects.py
    # REFEREE_MAPPING), so only the workers read it, as with the mosquitto ACL.
    seen = ROOT.replace("/", ".") + f".{venue}"
    reads = [seen, f"{seen}.>", ROOT.replace("/", ".") + ".*.summary", QOS1]
    users = [
        {"user": "railbird-host", "password": host_password},
        {
            "user": "railbird-display",
            "password": display_password,
            "permissions": {
                "publish": {"deny": [">"]},
                # MQTT's `#` also matches its parent level: `.../<venue>/#` subscribes to
                # `<root>` and `<root>.>`
                "subscribe": {"allow": reads},
            },
            # MQTT only: on core NATS `$MQTT.sub.>` is every client's QoS 1 deliveries
            "allowed_connection_types": MQTT_ONLY,
        },
    ]
    if referee_password is not None:
        users.append(
            {
                "user": "railbird-referee",
                "password": referee_password,
                "permissions": {
                    # the topic it publishes, and the subject the servers map it to
                    "publish": {
                        "allow": [f"{root}.*.referee", f"railbird.cluster.{venue}.*.referee.*"]
                    },
                    "subscribe": {"allow": reads},
                },
                "allowed_connection_types": MQTT_ONLY,
            }
        )
    for node, pw in sorted(nodes.items()):
        mine = f"{root}.*.node.{node}"
        users.append(
            {
                "user": node,
                "password": pw,
                "permissions": {
                    "publish": {"allow": [f"{mine}.>"]},
                    "subscribe": {
                        "allow": [
                            f"{mine}.config",
                            f"{mine}.sync.resp",
                            f"{mine}.update",
                            QOS1,
                        ]
                    },
                },
                "allowed_connection_types": MQTT_ONLY,
            }
        )
    return users
