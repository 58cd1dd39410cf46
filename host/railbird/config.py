"""The daemon's TOML configuration (`railbird run --config FILE`), with documented defaults.

Example (every key optional except where noted; see docs/host.md):

    venue = "club"                 # required: the venue id (a slug)
    subscribe = []                 # subscribe only these tables; [] = every table of the venue
    accept_unknown_tables = false  # a table not under [tables] is rejected ('unknown table')
    journal = "railbird-journal.sqlite"
    reorder_window_ms = 500        # timeline reorder window
    max_hold_ms = 60000            # per-node watermark: how long a node that is offline or
                                   # has a backlog pending may hold its table (0: never hold)
    journal_sync = "normal"        # SQLite synchronous: "normal" (survives a process crash)
                                   # or "full" (also survives power loss; slower)
    referee_token = ""             # if set, MQTT referee input must carry this token
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
    client_id = "railbird-host-<venue>"
    session_expiry_s = 604800      # 7 days (protocol/SPEC.md)
    keepalive_s = 30

    [shots]                        # docs/shots.md
    quiet_ms = 5000
    lip_rest_ms = 5000
    cue_before_ms = 3000
    cue_after_ms = 100
    break_window_ms = 2000
    rail_merge_ms = 100

    [tables.t1]                    # one section per table
    game = "10-ball"               # 10-ball, 14.1, 9-ball, 8-ball
    players = ["Ann", "Bob"]
    race_to = 5                    # or target = 100 for 14.1
    nodes = ["t1-pockets"]         # nodes allowed to report for this table; [] = any

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

import os
import re
import tomllib
from dataclasses import dataclass, field

from railbird.core.shots import ShotParams

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")


class ConfigError(ValueError):
    pass


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


@dataclass
class TableConfig:
    game: str | None = None
    players: list = field(default_factory=lambda: ["Player 1", "Player 2"])
    race_to: int | None = None
    target: int | None = None
    options: dict = field(default_factory=dict)
    nodes: list = field(default_factory=list)

    def match(self) -> dict | None:
        """The `match` input of protocol/REFEREE.md for this table, or None (no game)."""
        if not self.game:
            return None
        m = {"type": "match", "game": self.game, "players": list(self.players)}
        if self.race_to is not None:
            m["race_to"] = self.race_to
        if self.target is not None:
            m["target"] = self.target
        if self.options:
            m["options"] = dict(self.options)
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
    referee_token: str = ""
    lip_policy: str = "warn"
    stats_period_s: int = 60
    broker: BrokerConfig = field(default_factory=BrokerConfig)
    shots: ShotParams = field(default_factory=ShotParams)
    table: dict = field(default_factory=dict)  # table id -> TableConfig
    outputs: OutputsConfig = field(default_factory=OutputsConfig)
    default_table: TableConfig = field(default_factory=TableConfig)
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


_TOP = {
    "venue": str,
    "subscribe": list,
    "accept_unknown_tables": bool,
    "journal": str,
    "reorder_window_ms": int,
    "max_hold_ms": int,
    "journal_sync": str,
    "referee_token": str,
    "lip_policy": str,
    "stats_period_s": int,
}
_TABLE = {
    "game": str,
    "players": list,
    "race_to": int,
    "target": int,
    "options": dict,
    "nodes": list,
}


def _typed(d: dict, spec: dict, where: str) -> dict:
    out = {}
    for k, v in d.items():
        t = spec.get(k)
        if t is None:
            raise ConfigError(f"{where}{k}: unknown key")
        if t is int and (type(v) is not int):
            raise ConfigError(f"{where}{k}: expected an integer")
        if t is not int and not isinstance(v, t):
            raise ConfigError(f"{where}{k}: expected {t.__name__}")
        out[k] = v
    return out


def _spec(dc) -> dict:
    return {k: type(v) for k, v in dc().__dict__.items()}


def _outputs(d) -> OutputsConfig:
    if not isinstance(d, dict):
        raise ConfigError("outputs: expected an [outputs] section")
    d = dict(d)
    feeds = d.pop("feeds", {})
    web = d.pop("web", None)
    serial = d.pop("serial", [])
    oc = OutputsConfig(**_typed(d, {"day_start_hour": int}, "outputs."))
    if not 0 <= oc.day_start_hour <= 23:
        raise ConfigError("outputs.day_start_hour: expected 0-23")
    if not isinstance(feeds, dict):
        raise ConfigError("outputs.feeds: expected a section")
    oc.feeds = FeedsConfig(**_typed(feeds, _spec(FeedsConfig), "outputs.feeds."))
    if not re.match(
        r"^[^#+/][^#+]*$", oc.feeds.discovery_prefix
    ) or oc.feeds.discovery_prefix.endswith("/"):
        raise ConfigError("outputs.feeds.discovery_prefix: not a valid topic prefix")
    if web is not None:
        if not isinstance(web, dict):
            raise ConfigError("outputs.web: expected a section")
        oc.web = WebConfig(**_typed(web, _spec(WebConfig), "outputs.web."))
        if not 0 <= oc.web.port <= 65535:
            raise ConfigError("outputs.web.port: expected 0-65535")
    if not isinstance(serial, list):
        raise ConfigError("outputs.serial: expected [[outputs.serial]] sections")
    seen = set()
    for i, sd in enumerate(serial):
        where = f"outputs.serial[{i}]."
        if not isinstance(sd, dict):
            raise ConfigError(f"{where[:-1]}: expected a section")
        sc = SerialConfig(**_typed(sd, _spec(SerialConfig), where))
        if not SLUG.match(sc.table):
            raise ConfigError(f"{where}table: required, a table id")
        if not sc.port:
            raise ConfigError(f"{where}port: required (e.g. /dev/serial/by-id/...)")
        if sc.port in seen:
            raise ConfigError(f"{where}port: {sc.port} is used twice")
        if sc.baudrate <= 0 or sc.ack_timeout_ms <= 0 or sc.retries < 0:
            raise ConfigError(f"{where}: baudrate, ack_timeout_ms must be > 0, retries >= 0")
        seen.add(sc.port)
        oc.serial.append(sc)
    return oc


def from_dict(d: dict) -> Config:
    raw = d
    if "venue" not in d:
        raise ConfigError('venue: required (the venue id, a slug such as "club")')
    d = dict(d)
    broker = d.pop("broker", {})
    shots = d.pop("shots", {})
    per_table = d.pop("tables", {})
    if not isinstance(per_table, dict):
        raise ConfigError("tables: expected [tables.<id>] sections")
    default_table = d.pop("default_table", {})
    outputs = d.pop("outputs", {})
    cfg = Config(**_typed(d, _TOP, ""))
    cfg.outputs = _outputs(outputs)
    if not SLUG.match(cfg.venue):
        raise ConfigError(f"venue: {cfg.venue!r} is not a slug")
    if cfg.journal_sync not in ("normal", "full"):
        raise ConfigError("journal_sync: expected 'normal' or 'full'")
    if cfg.lip_policy not in ("warn", "rule"):
        raise ConfigError("lip_policy: expected 'warn' or 'rule'")
    if cfg.reorder_window_ms < 0:
        raise ConfigError("reorder_window_ms: must be >= 0")
    if cfg.max_hold_ms < 0:
        raise ConfigError("max_hold_ms: must be >= 0")
    bspec = {k: type(v) for k, v in BrokerConfig().__dict__.items()}
    cfg.broker = BrokerConfig(**_typed(broker, bspec, "broker."))
    if cfg.broker.cafile and not cfg.broker.tls:
        raise ConfigError(
            "broker.cafile: set, but broker.tls is false (the connection would "
            "not be encrypted); add tls = true"
        )
    if cfg.broker.tls and cfg.broker.cafile and not os.path.isfile(cfg.broker.cafile):
        raise ConfigError(f"broker.cafile: {cfg.broker.cafile}: no such file")
    if not cfg.broker.password:
        cfg.broker.password = os.environ.get("RAILBIRD_MQTT_PASSWORD", "")
    if not cfg.broker.client_id:
        cfg.broker.client_id = f"railbird-host-{cfg.venue}"
    sp = {}
    for k, v in shots.items():
        if not k.endswith("_ms") or type(v) is not int:
            raise ConfigError(f"shots.{k}: expected an integer NAME_ms")
        sp[k[:-3] + "_us"] = v * 1000
    try:
        cfg.shots = ShotParams.from_dict(sp)
    except (ValueError, TypeError) as e:
        raise ConfigError(f"shots: {e}") from None
    for t, td in per_table.items():
        if not SLUG.match(t):
            raise ConfigError(f"tables.{t}: not a slug")
        cfg.table[t] = TableConfig(**_typed(td, _TABLE, f"tables.{t}."))
    if default_table:
        cfg.default_table = TableConfig(**_typed(default_table, _TABLE, "default_table."))
    for t in cfg.subscribe:
        if not isinstance(t, str) or not SLUG.match(t):
            raise ConfigError(f"subscribe: {t!r} is not a table id")
    cfg.raw = raw
    return cfg


def load(path) -> Config:
    with open(path, "rb") as f:
        try:
            d = tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path}: {e}") from None
    return from_dict(d)
