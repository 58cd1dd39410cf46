"""`railbird calibrate`: walk an installer through every pocket and rail of a table, measure
the node's signals, propose thresholds and publish the config (hardware/calibration.md)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HELP = "calibrate a table's sensor node: learn the wiring, measure, publish the config"


def register(sub) -> None:
    from railbird.mqttopts import add_broker_options

    p = sub.add_parser(
        "calibrate",
        help=HELP,
        description=HELP + ". The node must be online. Calibration publishes a probe config "
        "(every channel reports, thresholds 0), asks for a ball dropped into each pocket, "
        "a knock on each rail and the cue ball into each pocket (its return delay, for the "
        "host's cue_return_ms), proposes rail thresholds (between the quiet noise and a fraction "
        "of the median knock) and beam debounce/jam times, then publishes the new config "
        "(retained) and waits until the node's status shows it applied. Abandoning it "
        "re-publishes the previous config.",
        epilog="Exit status: 0 applied, 1 calibration failed or declined (previous config "
        "restored), 2 usage or connection problem.",
    )
    p.add_argument("--table", required=True, help="table id (a slug)")
    p.add_argument(
        "--venue", default=os.environ.get("RAILBIRD_VENUE"), help="venue id (env RAILBIRD_VENUE)"
    )
    p.add_argument("--node", help="node id (default: the one node of the table that is online)")
    p.add_argument(
        "--broker", dest="host", default=argparse.SUPPRESS, help="broker host (same as --host)"
    )
    add_broker_options(p, default_user="railbird-host")
    p.add_argument(
        "--venue-key",
        default=None,
        help="the venue key that signs the configs (default $RAILBIRD_VENUE_KEY, else "
        "/etc/railbird/venue-key.pem when it is there; a board provisioned with the key "
        "refuses an unsigned config)",
    )
    g = p.add_argument_group("measurement")
    g.add_argument("--drops", type=int, default=2, help="balls to drop per pocket (default 2)")
    g.add_argument("--knocks", type=int, default=3, help="knocks per rail (default 3)")
    g.add_argument(
        "--quiet-seconds",
        type=float,
        default=5.0,
        help="noise measurement with the table still (default 5)",
    )
    g.add_argument(
        "--step-timeout",
        type=float,
        default=60.0,
        help="seconds to wait for each pocket/rail (default 60)",
    )
    g.add_argument(
        "--fraction",
        type=float,
        default=0.3,
        help="rail threshold as a fraction of the median knock (default 0.3)",
    )
    g.add_argument("--pinmap", help="pin map file or id (default: the one the node's birth names)")
    g.add_argument("--skip-cue", action="store_true", help="do not test the cue-ball detector")
    g.add_argument(
        "--cue-drops",
        type=int,
        default=3,
        help="cue-ball drops per pocket to measure its return delay (default 3; the median "
        "is kept)",
    )
    g.add_argument(
        "--skip-colour",
        action="store_true",
        help="do not learn the colour station's ball colours (the node keeps its table)",
    )
    g.add_argument(
        "--colour-rolls",
        type=int,
        default=3,
        help="rolls of each ball past the colour station (default 3; the median is kept)",
    )
    g.add_argument(
        "--allow-partial",
        action="store_true",
        help="publish even when some pockets or rails were not found",
    )
    m = p.add_argument_group("mode")
    m.add_argument(
        "--non-interactive",
        action="store_true",
        help="never read the terminal: a step that times out aborts (or is skipped "
        "with --allow-partial) and the proposal is published",
    )
    m.add_argument(
        "--script",
        metavar="FILE",
        help="answers to the questions, one per line (r/s/a at a timed-out step, y/n "
        "to publish), instead of the terminal",
    )
    m.add_argument(
        "--json", metavar="FILE", help="also write the result (config, measurements) as JSON"
    )
    m.add_argument(
        "--host-config",
        metavar="FILE",
        help="write the measured cue-ball return delays (cue_return_ms) into [tables.<table>] "
        "of this `railbird run` config; the file must still pass the strict check",
    )
    p.set_defaults(func=run)


def discover_node(args, timeout=2.0):
    """The ids of the nodes of the table whose retained status is online."""
    import threading

    from railbird.mqttopts import make_client
    from rbproto import codec

    found, ready = {}, threading.Event()

    def on_connect(client, userdata, flags, rc, props=None):
        client.subscribe(f"{codec.ROOT}/{args.venue}/{args.table}/node/+/status", 1)
        ready.set()

    def on_message(client, userdata, msg):
        try:
            _v, _t, _kind, node = codec.parse_topic(msg.topic)
            st = codec.decode("status", msg.payload)
        except codec.ProtocolError:
            return
        found[node] = st.get("state")

    c = make_client(
        args, client_id=f"railbird-calibrate-discover-{os.getpid()}", on_connect=on_connect
    )
    c.on_message = on_message
    c.connect(args.host, args.port, 30)
    c.loop_start()
    try:
        ready.wait(timeout)
        time.sleep(timeout / 2)
    finally:
        c.disconnect()
        c.loop_stop()
    return sorted(n for n, s in found.items() if s == "online")


def _signer(named: str | None):
    """The venue key's Signer: the named one (an error when unusable), else the default
    one when it is there, else None (unsigned)."""
    from railbird import venuekey

    path = Path(named) if named else venuekey.default_path()
    if named is None and not path.exists():
        return None
    return venuekey.Signer(path)


def run(args) -> int:
    from railbird import venuekey
    from railbird.hardware import calibrate as cal, load as load_pinmap

    if not args.venue:
        print("railbird calibrate: --venue (or RAILBIRD_VENUE) is required", file=sys.stderr)
        return 2
    pm = None
    if args.pinmap:
        try:
            pm = load_pinmap(args.pinmap)
        except (OSError, ValueError) as e:
            print(f"railbird calibrate: {e}", file=sys.stderr)
            return 2
    answers = None
    if args.script:
        with open(args.script) as f:
            answers = [
                line
                for line in f.read().splitlines()
                if line.strip() and not line.lstrip().startswith("#")
            ]
    ui = cal.ConsoleUI(
        interactive=not args.non_interactive and answers is None and sys.stdin.isatty(),
        answers=answers,
    )
    node = args.node
    try:
        if not node:
            nodes = discover_node(args)
            if len(nodes) != 1:
                found = "several nodes: " + ", ".join(nodes) if nodes else "no node"
                print(
                    f"railbird calibrate: {found} "
                    f"online at {args.venue}/{args.table}; name one with --node",
                    file=sys.stderr,
                )
                return 2
            node = nodes[0]
        link = cal.NodeLink(
            args.host,
            args.port,
            args.venue,
            args.table,
            node,
            user=args.user,
            password=args.password,
            tls=args.tls,
            cafile=args.cafile,
            signer=_signer(args.venue_key),
        ).connect()
    except (cal.CalibrationError, OSError, venuekey.VenueKeyError) as e:
        print(f"railbird calibrate: {e}", file=sys.stderr)
        return 2
    try:
        c = cal.Calibrator(
            link,
            ui,
            drops=args.drops,
            knocks=args.knocks,
            quiet_s=args.quiet_seconds,
            step_timeout=args.step_timeout,
            fraction=args.fraction,
            pinmap=pm,
            skip_cue=args.skip_cue,
            allow_partial=args.allow_partial,
            cue_drops=args.cue_drops,
            skip_colour=args.skip_colour,
            colour_rolls=args.colour_rolls,
        )
        res = c.run()
    finally:
        link.close()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "ok": res.ok,
                    "message": res.message,
                    "config": res.config,
                    "pockets": res.pockets,
                    "cue_seen": res.cue_seen,
                    "debounce_us": res.debounce_us,
                    "jam_us": res.jam_us,
                    "rails": [r.__dict__ for r in res.rails],
                    "cue_return_ms": res.cue_return_ms,
                    "colour_rgb": res.colour_rgb,
                    "warnings": res.warnings,
                },
                f,
                indent=2,
            )
    if not res.ok:
        print(f"railbird calibrate: {res.message}", file=sys.stderr)
        return 1
    if args.host_config:
        return write_host_config(args.host_config, args.table, res.cue_return_ms)
    return 0


def write_host_config(path: str, table: str, cue_ms: dict) -> int:
    """Set `cue_return_ms` of `[tables.<table>]` in the host config at `path`; the new file
    replaces the old one only when it passes the strict check."""
    import tomllib

    from railbird.config import ConfigError, from_dict
    from railbird.hardware.calibrate import cue_return_line, with_table_line
    from railbird.private import write_private

    if not cue_ms:
        print(
            f"railbird calibrate: no cue-ball return measured; {path} left as it is",
            file=sys.stderr,
        )
        return 1
    try:
        with open(path) as f:
            old = f.read()
        new = with_table_line(old, table, cue_return_line(cue_ms))
        from_dict(tomllib.loads(new))
    except (OSError, ValueError, tomllib.TOMLDecodeError, ConfigError) as e:
        print(f"railbird calibrate: {path} not updated: {e}", file=sys.stderr)
        return 1
    write_private(path + ".new", new)  # it may hold the broker password
    os.replace(path + ".new", path)
    print(f"{path}: [tables.{table}] {cue_return_line(cue_ms)}")
    return 0
