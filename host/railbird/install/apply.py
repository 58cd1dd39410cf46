"""Write an installation (`railbird setup`): every file of `layout.Layout` from the options
and what an earlier run left, and a report of what changed.

Secrets are generated once and kept: `secrets.toml` holds every one (broker logins, the
referee PIN, the Wi-Fi password), and the files that use them are written from it. Without
it (deleted), the secrets are taken back from the files that hold them (host.toml, the node
configs) before any is made anew. Nothing is written unless the resulting host config passes
the same check as `railbird run --check-config`.
"""

from __future__ import annotations

import ipaddress
import json
import os
import pwd
import re
import secrets
import socket
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from railbird import venuekey
from railbird.broker import confined_acl
from railbird.config.check import problems, weak_pin
from railbird.private import write_private

from . import mqttpass, pki, tomlout, units
from .brokerconf import ANY, LOOPBACK, mosquitto_conf
from .hostconf import SetupError, TableSpec, host_config, node_config, node_ids
from .layout import SERVICE_USER, Layout

HOST_USER, REFEREE_USER, DISPLAY_USER = "railbird-host", "railbird-referee", "railbird-display"
CLIENT_USERS = (HOST_USER, REFEREE_USER, DISPLAY_USER)
DEFAULTS = {
    "broker_port": 1883,
    # TLS unless the owner declines it (--no-tls); an installation an earlier run made
    # plain keeps its choice (setup.json), so its running boards go on working
    "tls": True,
    "tls_port": 8883,
    "docker": False,
    "pinmap": "esp32-devkitc",
    "wifi_ssid": "",
}
DOCKER_BROKER = "broker"  # the broker's service name in docker-compose.yml
HOST_HEADER = """\
Railbird host configuration, written by `railbird setup` (docs/install.md); every key:
docs/host.md. Edit it freely: a later `railbird setup` keeps your values (it manages the
venue, [broker], referee_token and adds tables and nodes), but not comments.
It holds the host's broker password and the referee PIN: keep it mode 0600."""


@dataclass
class Options:
    root: Path
    venue: str | None = None
    tables: list[TableSpec] = field(default_factory=list)
    default_game: str = "10-ball"
    web_port: int = 8080
    # None: what the last run chose (setup.json), else DEFAULTS
    broker_address: str | None = None
    # the name the nodes dial first (mDNS or a DHCP host name); "" for none; None: the last
    # run's choice, else guess_name() when the address was guessed too
    broker_name: str | None = None
    broker_port: int | None = None
    # the venue interface's address the broker and the web server listen on; None: the
    # last run's choice, else the broker's address when it is this machine's, else the
    # address of the interface with the default route ("0.0.0.0" only when given)
    listen_address: str | None = None
    tls: bool | None = None
    tls_port: int | None = None
    docker: bool | None = None
    pinmap: str | None = None
    wifi_ssid: str | None = None
    wifi_password: str | None = None


@dataclass
class Report:
    layout: Layout
    files: list = field(default_factory=list)  # (status, path, what)
    new_secrets: list = field(default_factory=list)  # names of the secrets made this run
    kept_secrets: list = field(default_factory=list)
    other_logins: list = field(default_factory=list)  # password-file users setup did not make
    host: dict = field(default_factory=dict)
    choices: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    # nodes whose config.json changed what the board dials with: (node, [what changed])
    boards_changed: list = field(default_factory=list)

    def changed(self, path: Path) -> bool:
        return any(p == path and s != "unchanged" for s, p, _ in self.files)


_BOARD_SETTINGS = (
    ("wifi", "ssid", "Wi-Fi network"),
    ("wifi", "password", "Wi-Fi password"),
    ("broker", "host", "broker address"),
    ("broker", "addr", "broker fallback address"),
    ("broker", "port", "broker port"),
    ("broker", "tls", "TLS"),
    ("broker", "password", "broker password"),
)


def board_settings_changed(old: dict, new: dict) -> list[str]:
    """What differs between two node configs among the settings a board dials with (a
    board keeps the old ones until they are sent to it or it is provisioned again)."""
    return [
        what
        for sect, key, what in _BOARD_SETTINGS
        if (old.get(sect) or {}).get(key) != (new.get(sect) or {}).get(key)
    ]


_LABEL = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")


def guess_name(hostname: str | None = None) -> str:
    """This machine's mDNS name (`<host name>.local`), or "" when its host name is not one
    a resolver would take (a DNS label) or is only `localhost`."""
    label = (hostname if hostname is not None else socket.gethostname()).split(".")[0].lower()
    if label == "localhost" or not _LABEL.fullmatch(label):
        return ""
    return f"{label}.local"


def guess_address() -> str:
    """This machine's address on the network the default route leads to (no packet is sent:
    connecting a UDP socket only picks the source address); 127.0.0.1 when there is none."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed anywhere real
            return s.getsockname()[0]
        except OSError:
            return "127.0.0.1"


def is_local_address(addr: str) -> bool:
    """Whether `addr` is an IPv4 address of this machine (one a listener can bind)."""
    try:
        ipaddress.IPv4Address(addr)
    except ValueError:
        return False
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((addr, 0))
        except OSError:
            return False
    return True


def check_listen_address(addr: str, docker: bool) -> str:
    """`--listen-address` as given, checked: an IPv4 address of this machine, or 0.0.0.0
    (every interface, the owner's explicit choice)."""
    try:
        ipaddress.IPv4Address(addr)
    except ValueError:
        raise SetupError(
            f"--listen-address {addr!r}: give an IPv4 address of this machine's venue "
            "interface (`ip -4 addr`), or 0.0.0.0 for every interface"
        ) from None
    if addr != ANY and docker:
        raise SetupError(
            f"--listen-address {addr}: with --docker the containers listen on their own "
            "interfaces; publish the ports on the venue address with RAILBIRD_LISTEN="
            f"{addr} docker compose up -d (docker-compose.yml)"
        )
    if addr != ANY and not is_local_address(addr):
        raise SetupError(
            f"--listen-address {addr}: not an address of this machine (`ip -4 addr` lists "
            "them); the broker and the web server could not listen there"
        )
    return addr


def new_password() -> str:
    return secrets.token_urlsafe(24)  # 192 bits; URL-safe, so it needs no quoting anywhere


def new_pin() -> str:
    """8 random digits the config check accepts (referee_token is the referee app's PIN)."""
    while True:
        pin = f"{secrets.randbelow(10**8):08d}"
        if not weak_pin(pin):
            return pin


@dataclass
class _Plan:
    choices: dict
    host: dict  # the host config
    users: dict  # broker login -> password
    pin: str
    wifi_password: str


class Installer:
    def __init__(self, opts: Options):
        self.opts = opts
        self.layout = Layout(Path(opts.root))
        self.report = Report(self.layout)
        self.chown = None  # (uid, gid) of the service user when files are handed to it

    # -- reading what is there ---------------------------------------------------------------
    def _read_toml(self, path: Path) -> dict | None:
        try:
            with open(path, "rb") as f:
                return tomllib.load(f)
        except FileNotFoundError:
            return None
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise SetupError(f"{path}: cannot read it ({e}); fix or remove it first") from None

    def _read_json(self, path: Path) -> dict | None:
        try:
            return json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            raise SetupError(f"{path}: cannot read it ({e}); fix or remove it first") from None

    def _choices(self) -> dict:
        prev = self._read_json(self.layout.choices) or {}
        out = {}
        for k, default in DEFAULTS.items():
            given = getattr(self.opts, k)
            out[k] = given if given is not None else prev.get(k, default)
        if out["docker"] and not (self.opts.broker_address or prev.get("broker_address")):
            raise SetupError(
                "--docker: give --broker-address (the Docker host's address as the nodes "
                "reach it; inside a container setup cannot tell)"
            )
        out["broker_address"] = (
            self.opts.broker_address or prev.get("broker_address") or guess_address()
        )
        guessed = not self.opts.broker_address and not prev.get("broker_address")
        out["listen_address"] = self._listen_address(prev, out)
        if self.opts.broker_name is not None:
            out["broker_name"] = self.opts.broker_name
        elif "broker_name" in prev:
            out["broker_name"] = prev["broker_name"]
        else:
            # a name only when the owner named no address: an address given is how the
            # nodes reach the broker, and a name that does not resolve costs every dial
            # a resolver timeout; in Docker the container's host name means nothing
            out["broker_name"] = guess_name() if guessed and not out["docker"] else ""
        if out["broker_name"]:
            self.report.notes.append(
                f"the nodes will find the broker as {out['broker_name']} and fall back on "
                f"{out['broker_address']} while that name does not resolve (mDNS needs "
                "avahi-daemon on this machine; --broker-name '' for the address alone)"
            )
        elif guessed:
            self.report.notes.append(
                f"the nodes will dial the broker at {out['broker_address']} (this machine's "
                "address as far as setup can tell); give --broker-address if they reach it "
                "by another name or address"
            )
        return out

    def _listen_address(self, prev: dict, out: dict) -> str:
        """Where the broker and the web server listen (issue 23, defect 8): the address
        given; else the last run's (an installation from before this choice listened on
        every interface, `broker_bind`, and keeps doing so until the owner says otherwise:
        its boards may dial any of them); else the broker's address when it is this
        machine's, else the default route's interface. In Docker the container's own
        interfaces (the compose file publishes the ports)."""
        if self.opts.listen_address is not None:
            return check_listen_address(self.opts.listen_address, out["docker"])
        if prev.get("listen_address") or prev.get("broker_bind"):
            return prev.get("listen_address") or prev["broker_bind"]
        if out["docker"]:
            return ANY
        if is_local_address(out["broker_address"]):
            return out["broker_address"]
        return guess_address()

    def _known_secrets(self, host: dict | None) -> dict:
        """mqtt user -> password, "pin", "wifi": from secrets.toml, else from the files
        that hold them."""
        s = self._read_toml(self.layout.secrets)
        if s is not None:
            out = dict(s.get("mqtt", {}))
            if s.get("referee", {}).get("pin"):
                out["pin"] = s["referee"]["pin"]
            if "wifi" in s:
                out["wifi"] = s["wifi"].get("password", "")
            return out
        out = {}
        if host:
            b = host.get("broker", {})
            if b.get("password") and b.get("user", HOST_USER) == HOST_USER:
                out[HOST_USER] = b["password"]
            if host.get("referee_token"):
                out["pin"] = host["referee_token"]
        if self.layout.nodes.is_dir():
            for p in sorted(self.layout.nodes.glob("*.json")):
                n = self._read_json(p) or {}
                pw = n.get("broker", {}).get("password")
                if n.get("node") and pw:
                    out[n["node"]] = pw
                if n.get("wifi", {}).get("password"):
                    out.setdefault("wifi", n["wifi"]["password"])
        return out

    # -- writing ----------------------------------------------------------------------------
    def _dir(self, path: Path, mode: int, owner: str = "root") -> None:
        """`owner`: "root", "group" (root's, the service group may enter) or "service"."""
        missing = []
        p = path
        while not p.exists():
            missing.append(p)
            p = p.parent
        for d in reversed(missing):  # parents setup makes are searchable, like /etc's
            d.mkdir()
            d.chmod(0o755)
        path.chmod(mode)
        if self.chown:
            uid, gid = self.chown
            os.chown(path, *{"root": (0, 0), "group": (0, gid), "service": (uid, gid)}[owner])

    def _put(self, path: Path, data: str, what: str, *, private: bool, service: bool) -> None:
        """Write `data` to `path` when it differs (atomically: a broker rereading it on
        SIGHUP sees the old or the new file); 0600 when `private`, else 0644; handed to the
        service user when `service` (and setup hands files over at all)."""
        raw = data.encode()
        try:
            old = path.read_bytes()
        except FileNotFoundError:
            old = None
        if old != raw:
            tmp = path.with_name(f".{path.name}.tmp")
            write_private(tmp, raw)  # 0600 from the first byte
            if not private:
                tmp.chmod(0o644)
            os.replace(tmp, path)
        elif private:
            path.chmod(0o600)
        if self.chown:
            os.chown(path, *(self.chown if service else (0, 0)))
        status = "created" if old is None else "unchanged" if old == raw else "updated"
        self.report.files.append((status, path, what))

    # -- the run ------------------------------------------------------------------------------
    def run(self) -> Report:
        old_umask = os.umask(0o077)  # whatever is made here (openssl's keys too) starts private
        try:
            return self._run()
        finally:
            os.umask(old_umask)

    def _run(self) -> Report:
        plan = self._plan()
        self._hand_over()
        L = self.layout
        self._dir(L.etc, 0o750, "group")
        self._dir(L.nodes, 0o700)
        self._dir(L.state, 0o700, "service")
        self._dir(L.broker_state, 0o700, "service")
        if plan.choices["tls"]:
            self._write_tls(plan)
        self._write_venue_key()
        self._write_broker(plan)
        self._put(
            L.host_toml,
            tomlout.dumps(plan.host, HOST_HEADER),
            "host config",
            private=True,
            service=True,
        )
        self._write_nodes(plan)
        if not plan.choices["docker"]:
            self._write_units()
        self._put(
            L.choices,
            json.dumps(plan.choices, indent=2, sort_keys=True) + "\n",
            "setup's choices (no secrets)",
            private=False,
            service=False,
        )
        return self.report

    def _plan(self) -> _Plan:
        """Everything to write, checked, before anything is written."""
        L, r = self.layout, self.report
        choices = self._choices()
        r.choices = choices
        existing = self._read_toml(L.host_toml)
        known = self._known_secrets(existing)
        if not existing and not self.opts.tables:
            raise SetupError("no tables: give at least one --table ID (e.g. --table t1)")
        if L.system and not choices["docker"]:
            why = units.unreachable_by_the_service()
            if why is not None:
                raise SetupError(why)

        def secret(name: str, make, label: str) -> str:
            if name in known:
                r.kept_secrets.append(label)
            else:
                known[name] = make()
                r.new_secrets.append(label)
            return known[name]

        # the host on this machine dials the plain listener on loopback (its traffic never
        # leaves the machine); in Docker it crosses the containers' network, over TLS
        tls = choices["tls"] and choices["docker"]
        host_pw = secret(HOST_USER, new_password, f"broker login {HOST_USER}")
        pin = secret("pin", new_pin, "referee PIN")
        broker = {
            "host": DOCKER_BROKER if choices["docker"] else LOOPBACK,
            "port": choices["tls_port"] if tls else choices["broker_port"],
            "user": HOST_USER,
            "password": host_pw,
            "tls": True if tls else None,
            "cafile": str(L.tls / "ca.crt") if tls else None,
        }
        host = host_config(
            existing,
            venue=self.opts.venue,
            specs=self.opts.tables,
            default_game=self.opts.default_game,
            broker=broker,
            referee_token=pin,
            journal=str(L.journal),
            web_port=self.opts.web_port,
        )
        web = host.get("outputs", {}).get("web")
        if web is not None and (existing is None or self.opts.listen_address is not None):
            # the first run, or the owner's new choice: the web server on the venue address
            host["outputs"]["web"] = {"host": choices["listen_address"]} | {
                k: v for k, v in web.items() if k != "host"
            }
        check = dict(host, broker={k: v for k, v in host["broker"].items() if k != "cafile"})
        found = problems(check)  # the CA file is made later: its existence is not checked
        if found:
            raise SetupError(
                "the host config would not pass `railbird run --check-config`:\n  "
                + "\n  ".join(found)
            )
        r.host = host
        users = {HOST_USER: host_pw}
        for u in CLIENT_USERS[1:]:
            users[u] = secret(u, new_password, f"broker login {u}")
        for n in node_ids(host):
            users[n] = secret(n, new_password, f"broker login {n} (node)")
        if self.opts.wifi_password is not None:
            known["wifi"] = self.opts.wifi_password
        if not choices["wifi_ssid"]:
            r.notes.append(
                "no Wi-Fi network yet: the node configs have an empty wifi.ssid; run setup "
                "again with --wifi-ssid NAME --wifi-password ... before provisioning"
            )
        return _Plan(choices, host, users, pin, known.get("wifi", ""))

    def _write_venue_key(self) -> None:
        """The venue key, once (a second run keeps it: every board checks against it), and
        its public part, which `railbird node provision` gives each board."""
        L = self.layout
        try:
            if venuekey.make(L.venue_key):
                self.report.files.append(
                    ("created", L.venue_key, "venue key: signs updates and configs; back it up")
                )
            pub = venuekey.public_hex(L.venue_key)
        except venuekey.VenueKeyError as e:
            raise SetupError(str(e)) from None
        L.venue_key.chmod(0o600)
        if self.chown:
            os.chown(L.venue_key, 0, 0)
        self._put(L.venue_key_pub, pub + "\n", "venue key, public part", private=False,
                  service=False)  # fmt: skip

    def _write_tls(self, plan: _Plan) -> None:
        L, c = self.layout, plan.choices
        self._dir(L.tls, 0o750, "group")
        names = [c["broker_address"], "127.0.0.1", "localhost"]
        names += [c["listen_address"]] if c["listen_address"] != ANY else []
        names += [c["broker_name"]] if c.get("broker_name") else []
        names += [DOCKER_BROKER] if c["docker"] else []
        nodes = sorted(node_ids(plan.host))
        made = pki.ensure(L.tls, plan.host["venue"], list(dict.fromkeys(names)), nodes)
        for f in made:
            self.report.files.append(("created", L.tls / f, pki.what(f)))
        for crt in [L.tls / "ca.crt", L.tls / "server.crt", *L.tls.glob("nodes/*.crt")]:
            crt.chmod(0o644)  # certificates are public; keys stay 0600
        if self.chown:  # the broker reads its key; the CA key and node keys stay root's
            os.chown(L.tls / "server.key", *self.chown)
        self.report.new_secrets += [f"TLS key {f}" for f in made if f.endswith(".key")]

    def _write_broker(self, plan: _Plan) -> None:
        L, c = self.layout, plan.choices
        secrets_toml = self._secrets_toml(plan.users, plan.pin, plan.wifi_password)
        self._put(L.secrets, secrets_toml, "every secret", private=True, service=False)
        entries = mqttpass.parse(L.passwd.read_text()) if L.passwd.exists() else {}
        entries, _changed = mqttpass.merged(entries, plan.users)
        self.report.other_logins = [u for u in entries if u not in plan.users]
        hashes = mqttpass.render(entries)
        self._put(L.passwd, hashes, "broker logins (hashes)", private=True, service=True)
        tables = {t: tc["nodes"] for t, tc in plan.host["tables"].items()}
        acl = confined_acl(plan.host["venue"], tables)
        self._put(L.acl, acl, "broker ACL: each node on its own table", private=True, service=True)
        conf = mosquitto_conf(
            L,
            port=c["broker_port"],
            listen=c["listen_address"],
            user=self._broker_user(c["docker"]),
            tls_port=c["tls_port"] if c["tls"] else None,
        )
        self._put(L.mosquitto_conf, conf, "broker config", private=False, service=True)

    def _write_nodes(self, plan: _Plan) -> None:
        c, host = plan.choices, plan.host
        for n, table in node_ids(host).items():
            nc = node_config(
                venue=host["venue"],
                table=table,
                node=n,
                password=plan.users[n],
                broker_host=c.get("broker_name") or c["broker_address"],
                broker_addr=c["broker_address"] if c.get("broker_name") else None,
                broker_port=c["tls_port"] if c["tls"] else c["broker_port"],
                tls=c["tls"],
                wifi_ssid=c["wifi_ssid"],
                wifi_password=plan.wifi_password,
                pinmap=c["pinmap"],
            )
            old = self._read_json(self.layout.node_json(n))
            if old is not None:
                what = board_settings_changed(old, nc)
                if what:
                    self.report.boards_changed.append((n, what))
            self._put(
                self.layout.node_json(n),
                json.dumps(nc, indent=2) + "\n",
                f"node {n}'s config.json",
                private=True,
                service=False,
            )

    def _write_units(self) -> None:
        L = self.layout
        self._dir(L.units, 0o755)
        mosq, rb = units.mosquitto_path(), units.railbird_command()
        for u in units.UNITS:
            text = units.render(u, L, mosq, rb)
            self._put(L.units / u, text, "systemd unit", private=False, service=False)

    def _hand_over(self) -> None:
        """On the real system as root, the files the services read go to the service user
        (made by `railbird setup` before, or present in the Docker image)."""
        if not (self.layout.system and os.geteuid() == 0):
            return
        try:
            pw = pwd.getpwnam(SERVICE_USER)
        except KeyError:
            self.report.notes.append(
                f"no user {SERVICE_USER}: files stay root's; add it "
                f"(useradd --system --user-group {SERVICE_USER}) and run setup again"
            )
            return
        self.chown = (pw.pw_uid, pw.pw_gid)

    def _broker_user(self, docker: bool) -> str:
        """Whom mosquitto becomes when started as root: the service user on the real system;
        under another root whoever runs setup (a trial installation runs as them); in Docker
        mosquitto's own default (the compose file starts it as that user already)."""
        if docker:
            return ""
        if self.layout.system:
            return SERVICE_USER
        return pwd.getpwuid(os.geteuid()).pw_name

    @staticmethod
    def _secrets_toml(users: dict, pin: str, wifi_password: str) -> str:
        doc = {"mqtt": users, "referee": {"pin": pin}, "wifi": {"password": wifi_password}}
        header = (
            "Every secret of this Railbird installation (railbird setup; docs/install.md).\n"
            "Only root reads it. setup writes the other files from it and keeps these values.\n"
            "[mqtt]: the broker logins, user = password (nodes log in with their node id);\n"
            "[referee] pin: the referee app's PIN (host.toml referee_token)."
        )
        return tomlout.dumps(doc, header)


def install(opts: Options) -> Report:
    return Installer(opts).run()
