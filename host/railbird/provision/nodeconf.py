"""A node's config for its board, from the installation `railbird setup` wrote, checked so
that the host and the broker accept the board once it runs it:

- `nodes/<node>.json` exists (setup writes one per node of host.toml);
- host.toml lists the node under the config's table, and names the same venue (the host
  refuses a node on a table that does not list it);
- the broker login is the node id and the broker's password file (`passwd`) accepts the
  config's password (setup keeps both in step; a hand edit or a stale copy does not);
- with TLS, the CA certificate the config names is there to copy;
- the venue key's public part (`venue-key.pub`, which setup makes) goes into the board's
  config.json as `venue_key`: the board then takes only updates and configs the venue key
  signed (rbnode.trust). An installation without one (set up before there was one) gives
  the board none, and the board takes unsigned ones, as before; `signed` says which.

Options given for this one board (Wi-Fi, pin map) override the file's values in the copy
that goes to the board; the file itself is not changed.
"""

from __future__ import annotations

import copy
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from railbird.install.mqttpass import parse, verify
from rbproto import signing


class NodeConfigError(ValueError):
    """One line: what is wrong and the command that fixes it."""


@dataclass
class Provision:
    node: str
    table: str
    venue: str
    config: dict  # the board's config.json
    extra: dict[str, Path] = field(default_factory=dict)  # board file -> local file
    signed: bool = False  # the board gets the venue key: it refuses unsigned commands


def _add_hint(node: str, table: str | None) -> str:
    return f"railbird setup --table {table or 'TABLE'}::{node}"


def load(
    etc: Path,
    node: str,
    *,
    table: str | None = None,
    pinmap: str | None = None,
    wifi_ssid: str | None = None,
    wifi_password: str | None = None,
) -> Provision:
    etc = Path(etc)
    path = etc / "nodes" / f"{node}.json"
    try:
        cfg = json.loads(path.read_text())
    except FileNotFoundError:
        raise NodeConfigError(
            f"no node {node!r} in {etc / 'nodes'}: add it with `{_add_hint(node, table)}` "
            "(or give --etc DIR of your installation)"
        ) from None
    except PermissionError:
        raise NodeConfigError(
            f"{path}: permission denied (it holds secrets: run as root)"
        ) from None
    except ValueError as e:
        raise NodeConfigError(f"{path}: not JSON ({e}); run `railbird setup` again") from None
    where = cfg.get("table")
    if table is not None and where != table:
        raise NodeConfigError(
            f"node {node!r} belongs to table {where!r}, not {table!r} ({path}); "
            f"to add it to {table}: `{_add_hint(node, table)}`"
        )
    _check_host(etc, cfg, node, where)
    _check_login(etc, cfg, node)
    cfg = _override(cfg, pinmap, wifi_ssid, wifi_password, path)
    extra = {}
    broker = cfg["broker"]
    if broker.get("tls"):
        ca = etc / "tls" / "ca.crt"
        if not ca.is_file():
            raise NodeConfigError(f"{path} uses TLS but {ca} is missing: run `railbird setup`")
        extra[broker.get("ca") or "ca.crt"] = ca
    key = _venue_key(etc)
    if key is not None:
        cfg["venue_key"] = key
    return Provision(node, where, cfg["venue"], cfg, extra, signed=key is not None)


def _venue_key(etc: Path) -> str | None:
    path = etc / "venue-key.pub"
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return None
    if signing.public_key(text) is None:
        raise NodeConfigError(f"{path}: not a venue key's public part; run `railbird setup`")
    return text


def _check_host(etc: Path, cfg: dict, node: str, table: str) -> None:
    host_toml = etc / "host.toml"
    try:
        host = tomllib.loads(host_toml.read_text())
    except FileNotFoundError:
        raise NodeConfigError(f"no {host_toml}: run `railbird setup` first") from None
    except (PermissionError, tomllib.TOMLDecodeError) as e:
        raise NodeConfigError(f"{host_toml}: {e}") from None
    if cfg.get("node") != node:
        raise NodeConfigError(
            f"{etc / 'nodes' / (node + '.json')} names node {cfg.get('node')!r}, not {node!r}: "
            "the host would not know the board; run `railbird setup` again"
        )
    if host.get("venue") != cfg.get("venue"):
        raise NodeConfigError(
            f"node {node!r} is for venue {cfg.get('venue')!r} but the host runs "
            f"{host.get('venue')!r} ({host_toml}); run `railbird setup` again"
        )
    nodes = host.get("tables", {}).get(table, {}).get("nodes", [])
    if node not in nodes:
        raise NodeConfigError(
            f"node {node!r} is not configured for table {table!r} in {host_toml}: the host "
            f"would refuse the board; add it with `{_add_hint(node, table)}`"
        )


def _check_login(etc: Path, cfg: dict, node: str) -> None:
    broker = cfg.get("broker") or {}
    user = broker.get("user") or node
    if user != node:
        raise NodeConfigError(
            f"node {node!r} would log in as {user!r}: the broker's ACL confines a node by its "
            "node id; run `railbird setup` again"
        )
    passwd = etc / "passwd"
    try:
        entries = parse(passwd.read_text())
    except FileNotFoundError:
        raise NodeConfigError(f"no {passwd}: run `railbird setup` first") from None
    except PermissionError:
        raise NodeConfigError(f"{passwd}: permission denied (run as root)") from None
    if node not in entries:
        raise NodeConfigError(
            f"the broker has no login {node!r} ({passwd}): run `railbird setup` again, then "
            "reload the broker (systemctl reload railbird-broker)"
        )
    if not verify(broker.get("password") or "", entries[node]):
        raise NodeConfigError(
            f"the broker would refuse node {node!r}: its password in {passwd} differs from "
            "the node config's; run `railbird setup` again (it puts both in step)"
        )


def _override(cfg: dict, pinmap, ssid, password, path: Path) -> dict:
    out = copy.deepcopy(cfg)
    if pinmap is not None:
        from railbird.hardware import load as load_pinmap

        try:
            out["pinmap"] = load_pinmap(pinmap)["id"]
        except (OSError, ValueError) as e:
            raise NodeConfigError(f"--pinmap {pinmap}: {e}") from None
    wifi = dict(out.get("wifi") or {})
    if ssid is not None:
        wifi["ssid"] = ssid
    if password is not None:
        wifi["password"] = password
    out["wifi"] = wifi
    if not wifi.get("ssid"):
        raise NodeConfigError(
            f"no Wi-Fi network in {path}: give --wifi-ssid NAME --wifi-password ... (or run "
            "`railbird setup --wifi-ssid NAME` for every node)"
        )
    return out
