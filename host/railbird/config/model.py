"""The daemon's TOML configuration (`railbird run --config FILE`), with documented defaults.

Strict: an unknown key, a wrong type or value, or keys that contradict each other (the
schema in railbird.config.schema, the rules across keys in railbird.config.check) make the
config an error, with one line per problem naming the key and the fix. docs/host.md lists
every key (generated from the schema).

Example (every key optional except where noted):

    venue = "club"                 # required: the venue id (a slug)
    subscribe = []                 # subscribe only these tables; [] = every table of the venue
    accept_unknown_tables = false  # a table not under [tables] is rejected ('unknown table')
    journal = "railbird-journal.sqlite"
    reorder_window_ms = 500        # timeline reorder window
    max_hold_ms = 60000            # per-node watermark: how long a node that is offline or
                                   # has a backlog pending may hold its table (0: never hold)
    journal_sync = "normal"        # SQLite synchronous: "normal" (survives a process crash)
                                   # or "full" (also survives power loss; slower)
    journal_keep_inputs_days = 30  # raw inputs older than this (and than a snapshot) are
                                   # exported, then deleted from the journal (0: keep all)
    journal_export_dir = ""        # where they go ("" = the journal's path + ".exports")
    referee_token = ""             # if set, MQTT referee input must carry this token
    director_pin = ""              # the event director's page PIN ("" = no director page)
    event_export_dir = ""          # the event's static export ("" = the journal's path + ".event")
    lip_policy = "warn"            # "warn": lone drop after rest is a warning only;
                                   # "rule": also pass rested_us to the rules (general 30)
    stats_period_s = 60            # log counters this often (0: never)

    [broker]
    host = "127.0.0.1"
    port = 1883
    user = "railbird-host"
    password = ""                  # or env RAILBIRD_MQTT_PASSWORD
    tls = false                    # true: TLS, verifying the broker's certificate and name
                                   # (use the TLS listener's port, usually 8883)
    cafile = ""                    # PEM file of the CA that signed the broker's certificate
                                   # ("" = the system's trusted CAs); needs tls = true
    client_id = ""                 # the persistent session's id; "" = railbird-host-<venue>-
                                   # <HMAC of the venue keyed with the password>: not guessable
    session_expiry_s = 604800      # 7 days (protocol/SPEC.md)
    keepalive_s = 30
    ingest_process = true          # the MQTT client in a process of its own (two cores for
                                   # the host: docs/performance.md); false: a daemon thread

    [shots]                        # docs/shots.md
    quiet_ms = 5000
    lip_rest_ms = 5000
    cue_before_ms = 0              # 0: the slowest cue_return_ms x 1.3 + 250 ms
    cue_after_ms = 100
    break_window_ms = 2000
    rail_merge_ms = 100

    [tables.t1]                    # one section per table
    game = "10-ball"               # 10-ball, 14.1, 9-ball, 8-ball
    players = ["Ann", "Bob"]
    race_to = 5                    # or target = 100 for 14.1
    break_order = "alternate"      # general 35: alternate, winner, loser or trailing
                                   # (game, players, race_to/target, break_order, options:
                                   # the defaults of a referee's new `match`, docs/host.md)
    nodes = ["t1-pockets"]         # required: the nodes that report for this table (each
                                   # node for one table only)
    referee = false                # true: a referee is at the table, a ruling the sensors
                                   # cannot decide waits for him (protocol/REFEREE.md §3b)
    sensors = ["strike", "colour"] # the optional sensors it has: a strike sensor, a colour
                                   # station in the return (hardware/colour.md)
    table_size = "9ft"             # 7ft, 8ft, 9ft: the default cue-ball return delays
    cue_return_ms = {HL = 2850, HR = 2850, SL = 2000, SR = 2000, FL = 1000, FR = 1000}
                                   # measured by `railbird calibrate` (docs/shots.md)

    [outputs]                      # what people see (docs/displays.md); all optional
    day_start_hour = 6             # pocket counts: a business day starts at this local hour

    [outputs.feeds]                # MQTT display feeds + Home Assistant discovery
    enabled = true                 # on by default (same broker and user as the daemon)
    discovery = true               # Home Assistant MQTT discovery configs (retained)
    discovery_prefix = "homeassistant"
    client_id = ""                 # "" = "<broker client_id>-feeds"

    [outputs.web]                  # web scoreboard + referee panel; off unless this section
    enabled = true                 # exists
    host = "0.0.0.0"               # listen address ("127.0.0.1": this machine only)
    port = 8080                    # 0 = any free port (logged, and in --stats-file)
    title = "Railbird"
    max_connections = 512          # at most; never more than half the fd limit
    idle_timeout_s = 10            # a connection without a complete request is closed
    stream_queue = 256             # a live stream this many events behind is ended
    stream_stall_s = 10            # ... or one whose client takes nothing this long
    write_timeout_s = 10           # a reply not taken whole this long: connection reset
    allowed_hosts = []             # names the pages are reached by, besides IP addresses,
                                   # localhost and this machine's own names
                                   # the referee panel's PIN is `referee_token`; without one
                                   # the panel is disabled (the scoreboard still runs)

    [[outputs.serial]]             # one per serial LED scoreboard (protocol/SCOREBOARD.md)
    table = "t1"                   # required
    port = "/dev/serial/by-id/usb-FTDI_...-if00-port0"   # required; a stable path
    baudrate = 115200
    announce = true                # show FOUL / SPOT / RERACK banners
    ack_timeout_ms = 250
    retries = 4
"""

from __future__ import annotations

import hmac
import os
import tomllib
from dataclasses import dataclass, field, replace

from railbird.core.railballs import TABLE_MM
from railbird.core.shots import DEFAULT_TABLE_SIZE, ShotParams, cue_return_us


class ConfigError(ValueError):
    """A configuration that must not be run: `problems` has one line per problem, each
    naming the key and the fix; the message is those lines, each after "config error: "."""

    def __init__(self, problems):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(f"config error: {p}" for p in self.problems))


@dataclass
class BrokerConfig:
    host: str = "127.0.0.1"
    port: int = 1883
    user: str = "railbird-host"
    password: str = ""
    tls: bool = False
    cafile: str = ""
    client_id: str = ""
    session_expiry_s: int = 7 * 24 * 3600
    keepalive_s: int = 30
    # `railbird run`'s MQTT ingest in a child process (railbird.daemon.ingestproc)
    ingest_process: bool = True


@dataclass
class ClusterConfig:
    """`[cluster]`: this daemon is one worker of a NATS JetStream cluster (docs/scaling.md)."""

    nats: list = field(default_factory=list)  # nats://host:port of the cluster's servers
    worker: str = ""  # this worker's id, unique in the cluster
    user: str = ""
    password: str = ""
    partitions: int = 16
    lease_s: int = 5
    replicas: int = 3
    max_ack_pending: int = 256


@dataclass
class TableConfig:
    game: str | None = None
    players: list = field(default_factory=lambda: ["Player 1", "Player 2"])
    race_to: int | None = None
    target: int | None = None
    break_order: str | None = None
    options: dict = field(default_factory=dict)
    nodes: list = field(default_factory=list)
    table_size: str = DEFAULT_TABLE_SIZE
    cue_return_ms: dict = field(default_factory=dict)  # pocket -> ms (`railbird calibrate`)
    referee: bool = False  # a referee at the table (REFEREE.md §3b)
    # the optional sensors the table has (core/health.py `optional`: "strike"), so a
    # silent one is suspect before it ever fires (docs/shots.md "Sensor health")
    sensors: list = field(default_factory=list)

    def shot_params(self, shots: ShotParams) -> ShotParams:
        """The `[shots]` parameters with this table's expected cue-ball return delays and
        playing surface."""
        return replace(
            shots,
            cue_return_us=cue_return_us(self.table_size, self.cue_return_ms),
            table_mm=TABLE_MM[self.table_size],
            colour_station="colour" in self.sensors,  # hardware/colour.md
        )

    def match(self) -> dict | None:
        """The `match` input of protocol/REFEREE.md for this table, or None (no game)."""
        if not self.game:
            return None
        return self.match_defaults()

    def match_defaults(self) -> dict:
        """What a referee's `match` input leaves out comes from here (even without a game:
        the players)."""
        m = {"type": "match", "players": list(self.players)}
        if self.game:
            m["game"] = self.game
        if self.race_to is not None:
            m["race_to"] = self.race_to
        if self.target is not None:
            m["target"] = self.target
        if self.break_order is not None:
            m["break_order"] = self.break_order
        if self.options:
            m["options"] = dict(self.options)
        if self.referee:
            m["referee"] = True
        return m


@dataclass
class FeedsConfig:
    enabled: bool = True
    discovery: bool = True
    discovery_prefix: str = "homeassistant"
    client_id: str = ""


@dataclass
class WebConfig:
    enabled: bool = True
    host: str = "0.0.0.0"
    port: int = 8080
    title: str = "Railbird"
    max_connections: int = 512
    idle_timeout_s: int = 10
    stream_queue: int = 256
    stream_stall_s: int = 10
    write_timeout_s: int = 10
    allowed_hosts: list[str] = field(default_factory=list)


@dataclass
class SerialConfig:
    table: str = ""
    port: str = ""
    baudrate: int = 115200
    announce: bool = True
    ack_timeout_ms: int = 250
    retries: int = 4


@dataclass
class OutputsConfig:
    day_start_hour: int = 6
    feeds: FeedsConfig = field(default_factory=FeedsConfig)
    web: WebConfig | None = None  # None: no [outputs.web] section, no web server
    serial: list = field(default_factory=list)  # SerialConfig per board


@dataclass
class Config:
    venue: str = "venue"
    subscribe: list = field(default_factory=list)
    accept_unknown_tables: bool = False
    journal: str = "railbird-journal.sqlite"
    reorder_window_ms: int = 500
    max_hold_ms: int = 60_000
    journal_sync: str = "normal"
    journal_keep_inputs_days: int = 30
    journal_export_dir: str = ""
    referee_token: str = ""
    director_pin: str = ""
    event_export_dir: str = ""
    lip_policy: str = "warn"
    stats_period_s: int = 60
    broker: BrokerConfig = field(default_factory=BrokerConfig)
    shots: ShotParams = field(default_factory=ShotParams)
    table: dict = field(default_factory=dict)  # table id -> TableConfig
    outputs: OutputsConfig = field(default_factory=OutputsConfig)
    default_table: TableConfig = field(default_factory=TableConfig)
    cluster: ClusterConfig | None = None  # None: no [cluster] section, a single host
    raw: dict = field(default_factory=dict)  # the TOML as read (kept in the journal)

    @property
    def window_us(self) -> int:
        return self.reorder_window_ms * 1000

    @property
    def max_hold_us(self) -> int:
        return self.max_hold_ms * 1000

    def table_config(self, table: str) -> TableConfig | None:
        tc = self.table.get(table)
        if tc is None and self.accept_unknown_tables:
            return self.default_table
        return tc

    def knows(self, venue: str, table: str | None, node: str | None) -> bool:
        """Whether a message of this venue, table and node can count here: the rules the
        pipeline rejects by ('unknown venue', 'unknown table', 'wrong table', 'unknown
        node'), for the ingest to tell a retained copy it need not journal again."""
        if self.venue not in ("*", venue):
            return False
        if table is None:
            return True
        tc = self.table_config(table)
        if tc is None:
            return False
        if node is None:
            return True
        for name, other in self.table.items():
            if name != table and node in other.nodes:
                return False  # a node counts only on the table whose `nodes` lists it
        return not tc.nodes or node in tc.nodes


def from_dict(d: dict, *, check: bool = True) -> Config:
    """The Config of a TOML document `d`. Raises ConfigError with every problem (unknown
    keys, wrong types or values, and the rules across keys: railbird.config.check) unless
    `check` is False, which is for a config read back from a journal: it was accepted when
    the journal was written, and a replay must reproduce that run."""
    if check:
        from railbird.config.check import problems

        found = problems(d)
        if found:
            raise ConfigError(found)
    raw = d
    d = dict(d)
    broker = d.pop("broker", {})
    shots = d.pop("shots", {})
    per_table = d.pop("tables", {})
    default_table = d.pop("default_table", None)
    outputs = d.pop("outputs", {})
    cluster = d.pop("cluster", None)
    cfg = Config(**d)
    if cluster is not None:
        cfg.cluster = ClusterConfig(**cluster)
        if not cfg.cluster.password:
            cfg.cluster.password = os.environ.get("RAILBIRD_NATS_PASSWORD", "")
    cfg.broker = BrokerConfig(**broker)
    if not cfg.broker.password:
        cfg.broker.password = os.environ.get("RAILBIRD_MQTT_PASSWORD", "")
    cfg.shots = ShotParams.from_dict({k[:-3] + "_us": v * 1000 for k, v in shots.items()})
    cfg.table = {t: TableConfig(**td) for t, td in per_table.items()}
    if default_table is not None:
        cfg.default_table = TableConfig(**default_table)
    cfg.outputs = _outputs(outputs)
    cfg.raw = raw
    return cfg


def host_client_id(bcfg: BrokerConfig, venue: str) -> str:
    """The host's MQTT client id, which names its persistent session (the queue the broker
    keeps while the host is away). `bcfg.client_id` when set; else `railbird-host-<venue>-`
    and 16 hex digits of an HMAC of the venue keyed with the host's broker password: stable
    across restarts, and not nameable by a client that lacks the password (any login may
    connect with any id, and mosquitto hands the session to the newest; protocol/SPEC.md
    "Security"). Without a password it is the guessable `railbird-host-<venue>`."""
    if bcfg.client_id:
        return bcfg.client_id
    if not bcfg.password:
        return f"railbird-host-{venue}"
    mac = hmac.new(bcfg.password.encode(), f"railbird-host-session:{venue}".encode(), "sha256")
    return f"railbird-host-{venue}-{mac.hexdigest()[:16]}"


def _outputs(d: dict) -> OutputsConfig:
    d = dict(d)
    feeds = d.pop("feeds", {})
    web = d.pop("web", None)
    serial = d.pop("serial", [])
    oc = OutputsConfig(**d)
    oc.feeds = FeedsConfig(**feeds)
    oc.web = None if web is None else WebConfig(**web)
    oc.serial = [SerialConfig(**sd) for sd in serial]
    return oc


def masked(raw: dict) -> dict:
    """A copy of the TOML document `raw` to print or journal: secrets (the broker password,
    the referee token that is also the web panel's PIN, the MQTT client ids) replaced by
    "***"."""
    from railbird.config.schema import SECRETS

    def walk(x):
        if isinstance(x, dict):
            return {k: "***" if k in SECRETS and x[k] else walk(v) for k, v in x.items()}
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x

    return walk(raw)


def load(path) -> Config:
    with open(path, "rb") as f:
        try:
            d = tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path}: not valid TOML: {e}") from None
    return from_dict(d)
