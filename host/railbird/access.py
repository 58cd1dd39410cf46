"""Who may read and write which topic kinds: the one description both brokers' access rules
are made from (protocol/SPEC.md, "Security").

    access.RULES                  # one Rule per topic kind: its readers and writers
    access.allows(login, kind, Access.READ, own=True)
    access.mosquitto_acl()        # the project ACL (PrivateBroker, the demo)
    access.mosquitto_acl("club", {"t1": ["t1-node"]})   # setup's: each node on its table

`railbird.cluster.natsconf.acl_users` makes the NATS permissions of cluster mode from the
same `RULES`. A node logs in with its node id and its grants are for its own subtree only
(`node/<its id>/...`): no node reads or writes another node's topics nor any table or venue
topic. The host reads and writes every kind and more (`HOST_READS`, `HOST_WRITES`): it must
see any topic under `railbird/` to count what breaks the protocol, and clear retained junk.

Node kinds are granted under any version root (`railbird/+/...`): a node speaking another
major version is then seen and counted by the host (and shown by `railbird tail`), not
unseen. Table and venue kinds only under the protocol's root (`rbproto.codec.ROOT`).

Imports: rbproto (the topic vocabulary). Imported by: broker, cluster (natsconf), tests.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from rbproto import codec


class Login(enum.Enum):
    """A kind of broker login; the value is the user name (a node's is its node id)."""

    HOST = "railbird-host"
    REFEREE = "railbird-referee"
    DISPLAY = "railbird-display"
    NODE = "<node id>"


class Access(enum.Enum):
    READ = "read"
    WRITE = "write"


class Level(enum.Enum):
    """Where a topic kind sits: below the venue, a table, a node, or outside Railbird's tree
    (Home Assistant's discovery prefix)."""

    VENUE = "venue"
    TABLE = "table"
    NODE = "node"
    HOME_ASSISTANT = "homeassistant"


@dataclass(frozen=True)
class Rule:
    """One topic kind: its leaf below its level and who reads and writes it. For a
    Level.NODE kind, Login.NODE means the node the topic belongs to, never another."""

    kind: str  # rbproto.codec kind ("table_summary", "sync_req"), or ha_discovery/ha_status
    level: Level
    leaf: str  # below the level: "referee/result", "sync/req"; under homeassistant/
    readers: frozenset[Login]
    writers: frozenset[Login]

    def filter(self, venue: str = "+", table: str = "+", node: str = "+") -> str:
        """The MQTT topic filter of this kind (the given venue, table, node, or any)."""
        if self.level is Level.HOME_ASSISTANT:
            return f"homeassistant/{self.leaf}"
        if self.level is Level.NODE:
            return f"railbird/+/{venue}/{table}/node/{node}/{self.leaf}"
        if self.level is Level.TABLE:
            return f"{codec.ROOT}/{venue}/{table}/{self.leaf}"
        return f"{codec.ROOT}/{venue}/{self.leaf}"

    def example(self, venue: str, table: str, node: str) -> str:
        """A concrete topic of this kind (the protocol's form: `rbproto.codec.topic`)."""
        if self.level is Level.HOME_ASSISTANT:
            if self.leaf == "#":  # a discovery topic: <prefix>/<component>/<id>/config
                return f"homeassistant/sensor/railbird_{venue}_{table}/config"
            return f"homeassistant/{self.leaf}"
        return codec.topic(
            venue,
            None if self.level is Level.VENUE else table,
            self.kind,
            node if self.level is Level.NODE else None,
        )


H, R, D, N = Login.HOST, Login.REFEREE, Login.DISPLAY, Login.NODE
_FEEDS = frozenset({H, R, D})  # what the host publishes for consoles and displays


def _leaf(kind: str, level: Level) -> str:
    """A kind's leaf, from the codec's own topic (one vocabulary of leaves)."""
    prefix = {Level.VENUE: "v", Level.TABLE: "v/t", Level.NODE: "v/t/node/n"}[level]
    t = codec.topic(
        "v", None if level is Level.VENUE else "t", kind, "n" if level is Level.NODE else None
    )
    return t[len(f"{codec.ROOT}/{prefix}/") :]


def _rule(kind, level, readers, writers) -> Rule:
    return Rule(kind, level, _leaf(kind, level), frozenset(readers), frozenset(writers))


# fmt: off
RULES: tuple[Rule, ...] = (
    # kind              level               readers         writers
    # What a node publishes (rbproto.codec.NODE_WRITES): the host takes it in, consoles and
    # displays watch the sensors (railbird tail, the boards' "sensors" line).
    _rule("events",         Level.NODE,     _FEEDS,         {H, N}),
    _rule("birth",          Level.NODE,     _FEEDS,         {H, N}),
    _rule("status",         Level.NODE,     _FEEDS,         {H, N}),
    _rule("sync_req",       Level.NODE,     _FEEDS,         {H, N}),
    _rule("sync_result",    Level.NODE,     _FEEDS,         {H, N}),
    # The host's commands to a node: never the node's own login, which could otherwise
    # reconfigure or reflash its board for good (issue 23, defect 6).
    _rule("config",         Level.NODE,     {*_FEEDS, N},   {H}),
    _rule("sync_resp",      Level.NODE,     {*_FEEDS, N},   {H}),
    _rule("update",         Level.NODE,     {*_FEEDS, N},   {H}),
    # `net` carries the venue's Wi-Fi password: the host and that node only.
    _rule("net",            Level.NODE,     {H, N},         {H}),
    # Referee input carries the referee PIN: consoles write it, only the host reads it.
    _rule("referee",        Level.TABLE,    {H},            {H, R}),
    _rule("referee_result", Level.TABLE,    _FEEDS,         {H}),
    _rule("shot",           Level.TABLE,    _FEEDS,         {H}),
    _rule("state",          Level.TABLE,    _FEEDS,         {H}),
    _rule("announce",       Level.TABLE,    _FEEDS,         {H}),
    _rule("inplay",         Level.TABLE,    _FEEDS,         {H}),
    _rule("table_summary",  Level.TABLE,    _FEEDS,         {H}),
    _rule("summary",        Level.VENUE,    _FEEDS,         {H}),
    _rule("host",           Level.VENUE,    _FEEDS,         {H}),
    # Home Assistant MQTT discovery (docs/displays.md): the host announces each table and
    # re-announces when Home Assistant (logged in as a display) says it is back online.
    Rule("ha_discovery",    Level.HOME_ASSISTANT, "#",      frozenset({H, D}), frozenset({H})),
    Rule("ha_status",       Level.HOME_ASSISTANT, "status", frozenset({H, D}), frozenset({H})),
)
# fmt: on

# The host's own breadth, beyond the kinds: it reads every topic under railbird/ (another
# major version and junk are counted, not unseen) and writes the protocol's tree (its feeds,
# its commands, and the empty retained messages that clear junk).
HOST_READS = ("railbird/#",)
HOST_WRITES = (f"{codec.ROOT}/#",)


def rule(kind: str) -> Rule:
    for r in RULES:
        if r.kind == kind:
            return r
    raise KeyError(kind)


def allows(login: Login, kind: str, access: Access, own: bool = True) -> bool:
    """Whether `login` may `access` topics of `kind`. `own`: for a node kind, whether the
    topic is that node's own (a node login has nothing of another node's)."""
    r = rule(kind)
    who = r.readers if access is Access.READ else r.writers
    if login is Login.NODE and r.level is Level.NODE and not own:
        return False
    return login in who


def _check() -> None:
    """The description covers every kind of the protocol once, and the host has them all."""
    kinds = [r.kind for r in RULES]
    protocol = [r.kind for r in RULES if r.level is not Level.HOME_ASSISTANT]
    if len(set(kinds)) != len(kinds) or set(protocol) != set(codec.KINDS):
        raise AssertionError(f"access.RULES must name each protocol kind once: {kinds}")
    if any(H not in r.readers or H not in r.writers for r in RULES):
        raise AssertionError("the host reads and writes every kind")
    node_writes = {r.leaf for r in RULES if r.level is Level.NODE and N in r.writers}
    node_reads = {r.leaf for r in RULES if r.level is Level.NODE and N in r.readers}
    if node_writes != set(codec.NODE_WRITES) or node_reads != set(codec.NODE_READS):
        raise AssertionError("a node writes codec.NODE_WRITES and reads codec.NODE_READS")


_check()


# --- mosquitto ---------------------------------------------------------------------------

_WHY = {
    H: (
        "The host daemon reads every version root (another major version is counted, not",
        "unseen) and writes the protocol's tree; Home Assistant discovery besides.",
    ),
    R: (
        "Referee consoles write referee input and read the feeds and the sensors, never",
        "another console's input (it carries the referee PIN) nor a node's net command.",
    ),
    D: (
        "Displays and Home Assistant only read: the feeds and the sensors, never referee",
        "input (the PIN) nor a node's net command (the Wi-Fi password).",
    ),
}


def _lines(login: Login, venue: str, table: str = "+", node: str = "+") -> list[str]:
    """`topic` lines of `login` for every kind, read and write on one line when both."""
    out = []
    for r in RULES:
        if login is H and r.level is not Level.HOME_ASSISTANT:
            continue  # HOST_READS / HOST_WRITES cover the tree
        read, write = login in r.readers, login in r.writers
        if not (read or write):
            continue
        how = "readwrite" if read and write else "read" if read else "write"
        out.append(f"topic {how} {r.filter(venue, table, node)}")
    return out


def mosquitto_acl(venue: str = "+", tables: dict | None = None) -> str:
    """The mosquitto ACL file for `venue` (`+`: any). `tables` None: every node (user name =
    node id) gets its grants by `pattern` under any table (the project ACL: a pattern can
    substitute only the user name); else table id -> node ids, one `user` block per node
    on its own table, and a node not listed may do nothing (setup's ACL: regenerate when
    nodes change, mosquitto rereads it on SIGHUP)."""
    v = "+" if venue in ("", "*") else venue
    out = [
        "# Railbird broker ACL, generated by railbird.access from its RULES (protocol/SPEC.md",
        "# §Security): edit those, not this file. Nodes log in with their node id.",
    ]
    host = [f"topic read {f}" for f in HOST_READS] + [f"topic readwrite {f}" for f in HOST_WRITES]
    # The node patterns below apply to every user name: without this line the display
    # login could write the leaves of a node called `railbird-display` (mosquitto checks a
    # user's own `deny` before any pattern).
    named = [] if tables is not None else ["topic deny railbird/+/+/+/node/{}/#"]
    for login, extra in ((H, host), (R, named), (D, named)):
        lines = [x.format(login.value) for x in extra]
        why = [f"# {x}" for x in _WHY[login]]
        out += ["", *why, f"user {login.value}", *lines, *_lines(login, v)]
    out += [
        "",
        "# A node writes only what a node publishes, below its own subtree (in any protocol",
        "# version, so a host counts a node speaking another one), never the host's commands",
        "# to it (config, update), and reads its config, sync answers, update and net.",
    ]
    if tables is None:
        out += [ln.replace("topic ", "pattern ", 1) for ln in _lines(N, v, "+", "%u")]
    else:
        for t in sorted(tables):
            for n in sorted(tables[t]):
                out += ["", f"user {n}", *_lines(N, v, t, n)]
    return "\n".join(out) + "\n"
