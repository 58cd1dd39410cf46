"""`railbird setup`: write (or extend) an installation: broker, host config, secrets, node
configs, systemd units (railbird.install; docs/install.md)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from railbird.core.health import optional as optional_sensors

HELP = "install: broker config, logins, ACL, host config, node configs, TLS, systemd units"
DESCRIPTION = """\
Write a Railbird installation under --root (default /): /etc/railbird/ holds the broker's
mosquitto.conf, password file and ACL (each node confined to its table), host.toml (the
`railbird run` config), nodes/<node>.json (each node's config.json, ready for provisioning),
secrets.toml (every secret, generated here) and tls/, a local CA with the broker's
certificate and one per node (MQTT is TLS unless --no-tls); /etc/systemd/system/ the
units railbird-broker.service and railbird.service; state goes to /var/lib/railbird. As
root on / it also installs mosquitto (apt-get) and adds the service user `railbird`;
otherwise it prints the commands.

Run it again to add a table or a node: every existing secret is kept, and it says what
changed. Without --table on a terminal, the first run asks its questions instead.

The broker and the web server listen on one address of this machine, --listen-address
(default: the broker's address when it is this machine's, else the address of the
interface with the default route), and on loopback for this machine's own clients.
"""
EPILOG = """\
examples:
  railbird setup --venue club --table t1:10-ball:t1-node:Ann,Bob --table t2:14.1 \\
      --wifi-ssid BarWiFi --wifi-password '...' --broker-address 192.168.1.10
  railbird setup --table t3              # later: add a table (node t3-node, 10-ball)
  railbird setup --table t1::t1-cue      # add a node to table t1
  railbird setup --root /tmp/trial --venue club --table t1 --broker-port 1999
"""


def register(sub) -> None:
    p = sub.add_parser(
        "setup",
        help=HELP,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--root",
        default="/",
        help="install under this directory (default /); the files name their paths under it, "
        "so a trial installation runs where it is",
    )
    p.add_argument("--venue", help="the venue id, a slug (first run only; it is in every topic)")
    p.add_argument(
        "--table",
        action="append",
        default=[],
        metavar="ID[:GAME[:NODE,...[:PLAYER,PLAYER]]]",
        help="a table to add or extend (repeatable): its game (10-ball, 9-ball, 8-ball, "
        "14.1, none), node ids (default ID-node) and players; an existing table gains the "
        "nodes given, and the game or players only when given",
    )
    p.add_argument(
        "--game", default="10-ball", help="game of a new table that names none (10-ball)"
    )
    p.add_argument("--players", help="two names 'Ann,Bob' for the tables given without any")
    p.add_argument(
        "--sensors",
        help="the optional sensors of the tables given, comma-separated ("
        + ", ".join(optional_sensors())
        + "; '' for none): a silent one is then reported in every shot (docs/shots.md "
        '"Sensor health")',
    )
    p.add_argument("--race-to", type=int, help="racks to win, for the tables given (default 5)")
    p.add_argument("--target", type=int, help="points to win, for 14.1 tables given (100)")
    p.add_argument(
        "--broker-address",
        help="the broker's address as the nodes reach it (default: this machine's address)",
    )
    p.add_argument(
        "--broker-name",
        help="the name the nodes find the broker by first, falling back on --broker-address "
        "(mDNS or a DHCP host name; default: this machine's <host name>.local when no "
        "--broker-address is given; '' for the address alone)",
    )
    p.add_argument("--broker-port", type=int, help="the broker's plain MQTT port (1883)")
    p.add_argument(
        "--listen-address",
        metavar="ADDRESS",
        help="the address of the venue interface the broker and the web server listen on "
        "(default: the broker's address when it is this machine's, else that of the "
        "interface with the default route; 0.0.0.0: every interface, only when you mean "
        "it); the plain MQTT listener for this machine's own clients stays on loopback",
    )
    # the name of --listen-address before it covered the web server too (kept for scripts)
    p.add_argument("--broker-bind", dest="listen_address", help="the old name of --listen-address")
    tls = p.add_mutually_exclusive_group()
    tls.add_argument(
        "--tls",
        action="store_true",
        default=None,
        help="MQTT over TLS, the default: a local CA, the broker's certificate and one per "
        "node; nodes use TLS, the plain listener stays on loopback (give it to turn TLS on "
        "in an installation an earlier run made plain; then provision every board again)",
    )
    tls.add_argument(
        "--no-tls",
        dest="tls",
        action="store_false",
        help="plain MQTT on the venue network (NOT RECOMMENDED: anyone on it reads every "
        "board's password and can pose as the broker; setup warns on every run)",
    )
    p.add_argument("--tls-port", type=int, help="the broker's TLS port (8883)")
    p.add_argument(
        "--docker",
        action="store_true",
        default=None,
        help="for the repository's docker-compose.yml: the host reaches the broker as "
        "`broker`; no systemd units, no package or user changes",
    )
    p.add_argument("--pinmap", help="the nodes' pin map id (esp32-devkitc; `railbird hw list`)")
    p.add_argument("--wifi-ssid", help="the Wi-Fi network the nodes join")
    p.add_argument(
        "--wifi-password",
        help="its password (prefer the environment variable RAILBIRD_WIFI_PASSWORD)",
    )
    p.add_argument(
        "--web-port", type=int, default=8080, help="the web scoreboard's port (first run; 8080)"
    )
    p.add_argument(
        "--non-interactive", action="store_true", help="never ask; fail on what is missing"
    )
    p.add_argument(
        "--stop-other-mosquitto",
        action="store_true",
        help="if the distribution's mosquitto.service holds the broker's port, stop and "
        "disable it (asked on a terminal; setup never stops it unasked)",
    )
    p.add_argument(
        "--no-install",
        action="store_true",
        help="do not install mosquitto nor add the service user: print the commands",
    )
    p.set_defaults(func=run)


def _specs(args):
    from railbird.install.hostconf import parse_table

    specs = [parse_table(t) for t in args.table]
    players = [n.strip() for n in args.players.split(",")] if args.players else None
    sensors = None if args.sensors is None else _sensor_list(args.sensors)
    for s in specs:
        s.players = s.players or players
        s.sensors = getattr(args, "table_sensors", {}).get(s.id, sensors)
        s.race_to, s.target = args.race_to, args.target
    return specs


def _sensor_list(text: str) -> list[str]:
    from railbird.install.hostconf import SetupError

    given = [x.strip() for x in text.split(",") if x.strip() and x.strip() != "none"]
    known = optional_sensors()
    bad = [x for x in given if x not in known]
    if bad:
        raise SetupError(
            f"unknown sensor(s) {', '.join(bad)}: the optional ones are {', '.join(known)}"
        )
    return given


def _ask(question: str, default: str = "") -> str:
    shown = f" [{default}]" if default else ""
    answer = input(f"{question}{shown}: ").strip()
    return answer or default


def _questions(args) -> None:
    """The first run on a terminal without --table: the few answers setup needs."""
    import getpass

    from railbird.install.apply import guess_address, guess_name, is_local_address

    print("Railbird setup: a few questions (Enter takes the default in brackets).")
    args.table_sensors = {}
    args.venue = args.venue or _ask("Venue id (lower-case letters, digits, '-')", "club")
    tables = _ask("Table ids, separated by commas", "t1")
    for t in (x.strip() for x in tables.split(",") if x.strip()):
        game = _ask(f"  {t}: game (10-ball, 9-ball, 8-ball, 14.1, none)", args.game)
        nodes = _ask(f"  {t}: node ids, separated by commas", f"{t}-node")
        players = _ask(f"  {t}: the two players 'Ann,Bob' (Enter: none yet)")
        args.table.append(f"{t}:{game}:{nodes}" + (f":{players}" if players else ""))
        # a silent sensor is only suspect when the table is known to have it
        # (docs/shots.md "Sensor health"); the answer goes with this table's spec
        while True:
            said = _ask(
                f"  {t}: its optional sensors, comma-separated ({', '.join(optional_sensors())}"
                "; Enter: none)"
            )
            try:
                args.table_sensors[t] = _sensor_list(said)
                break
            except ValueError as e:
                print(f"  {e}")
    args.broker_address = args.broker_address or _ask(
        "The broker's address as the nodes reach it", guess_address()
    )
    if args.broker_name is None:
        name = _ask("The name they find it by first, mDNS or DHCP ('-': none)", guess_name())
        args.broker_name = "" if name == "-" else name
    if args.listen_address is None and not args.docker:
        default = args.broker_address if is_local_address(args.broker_address) else ""
        args.listen_address = _ask(
            "The address the broker and the web server listen on (this machine's venue "
            "interface; 0.0.0.0: every interface)",
            default or guess_address(),
        )
    if args.tls is None:
        answer = _ask("MQTT over TLS, the nodes checking the local CA? (yes/no)", "yes")
        args.tls = answer.lower() not in ("n", "no")
    args.wifi_ssid = args.wifi_ssid or _ask("Wi-Fi network the nodes join (Enter: later)")
    if args.wifi_ssid and args.wifi_password is None:
        args.wifi_password = getpass.getpass("Its password: ")


def run(args) -> int:
    from railbird.install import system
    from railbird.install.apply import Options, install
    from railbird.install.hostconf import SetupError
    from railbird.install.layout import Layout

    layout = Layout(Path(args.root).resolve())
    if args.wifi_password is None and os.environ.get("RAILBIRD_WIFI_PASSWORD"):
        args.wifi_password = os.environ["RAILBIRD_WIFI_PASSWORD"]
    first = not layout.host_toml.exists()
    if first and not args.table and not args.non_interactive and sys.stdin.isatty():
        _questions(args)

    def say(line: str) -> None:
        print(f"railbird setup: {line}", flush=True)

    changes = system.may_change(layout, not args.no_install and not args.docker)
    if changes and not system.has_user():
        system.add_user(say)
    if changes and not system.has_mosquitto():
        system.install_mosquitto(say)
    try:
        report = install(
            Options(
                root=layout.root,
                venue=args.venue,
                tables=_specs(args),
                default_game=args.game,
                web_port=args.web_port,
                broker_address=args.broker_address,
                broker_name=args.broker_name,
                broker_port=args.broker_port,
                listen_address=args.listen_address,
                tls=args.tls,
                tls_port=args.tls_port,
                docker=args.docker,
                pinmap=args.pinmap,
                wifi_ssid=args.wifi_ssid,
                wifi_password=args.wifi_password,
            )
        )
    except SetupError as e:
        print(f"railbird setup: {e}", file=sys.stderr)
        return 2
    except PermissionError as e:
        print(
            f"railbird setup: {e.filename}: permission denied; run it as root "
            "(sudo railbird setup ...) or give --root DIR",
            file=sys.stderr,
        )
        return 2
    from railbird.install.summary import PLAINTEXT_WARNING, summary

    taken = _other_brokers(args, layout, report, say)
    mosquitto, user = system.has_mosquitto(), system.has_user()
    print(summary(report, first=first, mosquitto=mosquitto, user=user, taken=taken))
    if not report.choices["tls"]:
        print(f"railbird setup: {PLAINTEXT_WARNING}", file=sys.stderr)
    if taken:
        ports = ", ".join(str(h.port) for h in taken)
        print(f"railbird setup: the broker's port {ports} is taken (Next, step 1)", file=sys.stderr)
        return 3
    return 0


def _other_brokers(args, layout, report, say) -> list:
    """Whatever listens on the broker's ports now and is not its own broker. The
    distribution's mosquitto.service (Debian starts it on 1883 when the package goes in) is
    stopped only with the owner's consent: --stop-other-mosquitto, or yes on a terminal."""
    import time

    from railbird.install import portholder, system

    c = report.choices
    ports = [c["broker_port"]] + ([c["tls_port"]] if c.get("tls") else [])
    taken = portholder.others_on(ports, layout.mosquitto_conf)
    ours = system.may_change(layout, not args.no_install and not args.docker)
    if not ours or not any(h.unit == system.DISTRIBUTION_UNIT for h in taken):
        return taken
    consent = args.stop_other_mosquitto
    if not consent and not args.non_interactive and sys.stdin.isatty():
        held = ", ".join(str(h.port) for h in taken if h.unit == system.DISTRIBUTION_UNIT)
        answer = _ask(
            f"The distribution's mosquitto.service holds port {held}, which railbird-broker "
            "needs. Stop and disable it? (yes/no)",
            "no",
        )
        consent = answer.lower() in ("y", "yes")
    if consent and system.stop_distribution_mosquitto(say):
        deadline = time.monotonic() + 10
        while taken and time.monotonic() < deadline:
            time.sleep(0.2)
            taken = portholder.others_on(ports, layout.mosquitto_conf)
    return taken
