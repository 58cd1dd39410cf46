"""The host config (`host.toml`) and the node configs (`nodes/<node>.json`) that setup
writes: tables from `--table` specs, merged into an existing config without touching what
setup does not manage.

Setup manages the venue (set once), the `[broker]` connection and the referee PIN, and adds
tables and nodes. Everything else is set on the first run only (journal, web scoreboard)
and otherwise left as the user made it; comments in an edited file are not kept.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from railbird.config.schema import goal_key
from railbird.rules import GAMES

DEFAULT_GOAL = {"race_to": 5, "target": 100}
NO_GAME = "none"  # `--table t1:none`: shots only, no game state


class SetupError(ValueError):
    """A request setup cannot carry out; the message says why and what to do."""


@dataclass
class TableSpec:
    """One `--table ID[:GAME[:NODE,NODE...[:PLAYER,PLAYER]]]`; None: not given."""

    id: str
    game: str | None = None
    nodes: list[str] = field(default_factory=list)
    players: list[str] | None = None
    race_to: int | None = None
    target: int | None = None
    # the optional sensors the table has (`--sensors`, or setup's question): None = not
    # said (a new table gets none; an existing one keeps its own)
    sensors: list[str] | None = None


def parse_table(text: str) -> TableSpec:
    parts = text.split(":")
    if len(parts) > 4 or not parts[0].strip():
        raise SetupError(
            f"--table {text!r}: use ID[:GAME[:NODE,NODE...[:PLAYER,PLAYER]]], "
            "e.g. t1:10-ball:t1-a,t1-b:Ann,Bob"
        )
    parts += [""] * (4 - len(parts))
    tid, game, nodes, players = (p.strip() for p in parts)
    if game and game != NO_GAME and game not in GAMES:
        raise SetupError(
            f"--table {text!r}: unknown game {game!r}; use one of {', '.join(GAMES)} or "
            f"{NO_GAME} (shots only)"
        )
    return TableSpec(
        id=tid,
        game=game or None,
        nodes=[n.strip() for n in nodes.split(",") if n.strip()],
        players=[p.strip() for p in players.split(",")] if players else None,
    )


def default_nodes(table: str) -> list[str]:
    return [f"{table}-node"]


def _set_game(t: dict, spec: TableSpec, game: str) -> None:
    for k in ("game", "race_to", "target"):
        t.pop(k, None)
    if game == NO_GAME:
        return
    t["game"] = game
    key = goal_key(game)
    given = {"race_to": spec.race_to, "target": spec.target}
    for k, v in given.items():
        if v is not None:
            t[k] = v  # the wrong one for the game too: the config check then says so
    t.setdefault(key, DEFAULT_GOAL[key])


def new_table(spec: TableSpec, default_game: str) -> dict:
    t: dict = {}
    _set_game(t, spec, spec.game or default_game)
    if spec.players:
        t["players"] = list(spec.players)
    t["nodes"] = list(spec.nodes) or default_nodes(spec.id)
    if spec.sensors:
        t["sensors"] = list(spec.sensors)
    return _in_order(t, _TABLE_ORDER)


def update_table(t: dict, spec: TableSpec) -> dict:
    """An existing table with what `spec` gives: a game (and its goal) or players replace
    the old ones; nodes are added, never removed. Unchanged, it is `t` itself (its keys in
    the user's order)."""
    old, t = t, copy.deepcopy(t)
    if spec.game is not None:
        _set_game(t, spec, spec.game)
    elif spec.race_to is not None or spec.target is not None:
        if spec.race_to is not None:
            t["race_to"] = spec.race_to
        if spec.target is not None:
            t["target"] = spec.target
    if spec.players:
        t["players"] = list(spec.players)
    nodes = list(t.get("nodes", []))
    nodes += [n for n in spec.nodes if n not in nodes]
    t["nodes"] = nodes
    if spec.sensors is not None:
        if spec.sensors:
            t["sensors"] = list(spec.sensors)
        else:
            t.pop("sensors", None)
    return old if t == old else _in_order(t, _TABLE_ORDER)


def host_config(
    existing: dict | None,
    *,
    venue: str | None,
    specs: list[TableSpec],
    default_game: str,
    broker: dict,
    referee_token: str,
    journal: str,
    web_port: int,
) -> dict:
    """The host config: `existing` (the parsed host.toml, or None) with the venue, the
    managed `[broker]` keys (`broker`; a key whose value is None is removed), the referee
    PIN and the tables of `specs`."""
    if existing is None:
        if not venue:
            raise SetupError("no venue: give --venue NAME (a slug, e.g. --venue club)")
        d: dict = {"venue": venue, "journal": journal, "outputs": {"web": {"port": web_port}}}
    else:
        d = copy.deepcopy(existing)
        if venue and d.get("venue") != venue:
            raise SetupError(
                f"--venue {venue}: this installation's venue is {d.get('venue')!r}; every "
                "node and display uses it in its topics, so setup does not change it "
                "(edit host.toml and every node's config to move them all)"
            )
    d["referee_token"] = referee_token
    b = dict(d.get("broker", {}))
    for k, v in broker.items():
        if v is None:
            b.pop(k, None)
        else:
            b[k] = v
    d["broker"] = b
    tables = dict(d.get("tables", {}))
    for spec in specs:
        old = tables.get(spec.id)
        tables[spec.id] = new_table(spec, default_game) if old is None else update_table(old, spec)
    d["tables"] = tables
    return _in_order(d, _ORDER)


_ORDER = ("venue", "journal", "referee_token", "broker", "tables", "outputs")
_TABLE_ORDER = (
    "game",
    "race_to",
    "target",
    "players",
    "break_order",
    "options",
    "nodes",
    "sensors",
)


def _in_order(d: dict, order) -> dict:
    """Keys in a readable order: the ones setup writes first, then the user's own."""
    out = {k: d[k] for k in order if k in d}
    out.update((k, v) for k, v in d.items() if k not in out)
    return out


def node_ids(host: dict) -> dict[str, str]:
    """node -> its table, from the host config's tables."""
    return {n: t for t, tc in host.get("tables", {}).items() for n in tc.get("nodes", [])}


def node_config(
    *,
    venue: str,
    table: str,
    node: str,
    password: str,
    broker_host: str,
    broker_port: int,
    broker_addr: str | None = None,
    tls: bool,
    wifi_ssid: str,
    wifi_password: str,
    pinmap: str | None,
) -> dict:
    """A node's `config.json` (firmware/README.md, "Device config"): its identity, Wi-Fi,
    broker login and pin map, and the firmware's default sensing config (calibration sends
    the venue's own over MQTT later)."""
    from railbird.hardware.calibrate import default_config

    return {
        "venue": venue,
        "table": table,
        "node": node,
        "wifi": {"ssid": wifi_ssid, "password": wifi_password},
        "broker": {
            "host": broker_host,
            # the address to dial while the name does not resolve (firmware/README.md)
            "addr": broker_addr,
            "port": broker_port,
            "user": node,
            "password": password,
            "tls": tls,
            # the CA certificate's file name on the board (provisioning copies tls/ca.crt)
            "ca": "ca.crt" if tls else None,
            "keepalive_s": 30,
        },
        "pinmap": pinmap,
        "sensing": default_config(),
    }
