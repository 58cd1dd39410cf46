"""The nats-server configuration of one cluster member (docs/scaling.md shows one in full).

Each member has a `server_name` (JetStream and the MQTT gateway need one), JetStream with its
own store directory, the cluster routes to every member, and an MQTT listener for nodes and
displays. `users`, when given, is the MQTT and NATS logins with their permissions on
subjects, the NATS form of the mosquitto ACL (`acl_users`).
"""

from __future__ import annotations

import json
from urllib.parse import quote

from railbird.access import RULES, Access, Login
from railbird.cluster.subjects import REFEREE_MAPPING, subject

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
    routes: list[tuple[str, int]],
    store_dir: str,
    monitor_port: int = 0,
    users: list | None = None,
    cluster_name: str = "railbird",
    route_user: str | None = None,
    route_password: str | None = None,
    route_host: str | None = None,
) -> str:
    """`routes`: (address, route port) of every other member. `route_user`/`route_password`:
    the credentials every member's routes must present (the route port accepts no server
    without them: a stranger that joins the cluster reads every subject, referee input
    included). Give both, on every member. `route_host`: the address the route port listens
    on (default `host`), the servers' own link: never every interface, and off loopback
    never without the route credentials."""
    q = json.dumps  # nats-server's config accepts JSON strings
    if (route_user is None) != (route_password is None):
        raise ValueError("route_user and route_password go together")
    route_host = host if route_host is None else route_host
    if route_host in ("", "0.0.0.0", "::", "[::]", "*"):
        raise ValueError(
            f"route port on {route_host or 'every interface'}: bind it to the servers' own link"
        )
    if route_user is None and not _loopback(route_host):
        raise ValueError(f"routes on {route_host} need route_user and route_password")
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
        f"  listen: {q(f'{route_host}:{cluster_port}')}",
    ]
    if route_user is not None:
        lines += [
            "  authorization {",
            f"    user: {q(route_user)}",
            f"    password: {q(route_password)}",
            "  }",
        ]
    lines += [
        "  routes: [" + ", ".join(q(f"nats-route://{cred}{h}:{p}") for h, p in routes) + "]",
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


def _loopback(address: str) -> bool:
    return address == "localhost" or address.startswith("127.") or address == "::1"


def _subjects(mqtt_filter: str) -> list[str]:
    """The NATS subjects an MQTT topic filter stands for (`+` -> `*`, `#` -> `>`). `#` also
    matches its parent level: `a/#` is `a` and `a.>`. A filter the servers map elsewhere
    (referee input, subjects.REFEREE_MAPPING) adds the subject it is mapped to: a publisher
    needs both."""

    def nats(s: str) -> str:
        return s.replace("+", "*").replace("#", ">")

    out = [mqtt_filter.removesuffix("/#")] if mqtt_filter.endswith("/#") else []
    plain = mqtt_filter.replace("/", ".")
    out.append(nats(plain))
    if subject(mqtt_filter) != plain:
        out.append(nats(subject(mqtt_filter)))
    return out


def _grants(login: Login, access: Access, venue: str, node: str = "*") -> list[str]:
    """The subjects `login` may `access` in `venue`, by railbird.access.RULES."""
    out: list[str] = []
    for r in RULES:
        if login in (r.readers if access is Access.READ else r.writers):
            out += _subjects(r.filter(venue, "+", node))
    return out


def acl_users(
    venue: str,
    host_password: str,
    nodes: dict,
    display_password: str,
    referee_password: str | None = None,
) -> list:
    """The logins of cluster mode with their permissions, made from railbird.access.RULES,
    the description the mosquitto ACL is made from: the host's workers may do everything; a
    node publishes only what a node publishes, below its own subtree of any table, and
    reads its commands; a display reads the venue's feeds and sensors; the referee console
    (with `referee_password`) also writes a table's `referee` input. `nodes`: node id ->
    password.

    Two differences from mosquitto, both nats-server's (2.9.10, measured in
    tests/cluster/test_cluster_acl.py): a subscription wider than a login's grants (a
    display's `railbird/v1/<venue>/#`) is refused outright rather than filtered message by
    message, because a NATS `deny` does not filter the MQTT gateway's QoS 1 deliveries; so
    consoles and displays subscribe kind by kind (`railbird/v1/<venue>/+/state`). And every
    MQTT login holds `$MQTT.sub.>`: the gateway delivers a QoS 1 subscription through a
    JetStream consumer whose delivery subject the client itself subscribes to (without it a
    node never receives its retained config). On core NATS that subject space is everyone's
    deliveries, so those logins may connect over MQTT only (`allowed_connection_types`)."""

    def mqtt_login(user: str, password: str, publish: list[str], subscribe: list[str]) -> dict:
        return {
            "user": user,
            "password": password,
            "permissions": {
                "publish": {"allow": publish} if publish else {"deny": [">"]},
                "subscribe": {"allow": [*subscribe, QOS1]},
            },
            "allowed_connection_types": MQTT_ONLY,
        }

    users = [{"user": Login.HOST.value, "password": host_password}]
    logins = [(Login.DISPLAY, display_password)]
    if referee_password is not None:
        logins.append((Login.REFEREE, referee_password))
    for login, pw in logins:
        users.append(
            mqtt_login(
                login.value,
                pw,
                _grants(login, Access.WRITE, venue),
                _grants(login, Access.READ, venue),
            )
        )
    for node, pw in sorted(nodes.items()):
        users.append(
            mqtt_login(
                node,
                pw,
                _grants(Login.NODE, Access.WRITE, venue, node),
                _grants(Login.NODE, Access.READ, venue, node),
            )
        )
    return users
