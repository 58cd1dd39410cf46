"""`railbird nodes`: the fleet of sensor nodes (what each runs and reports), and
`railbird nodes update`: a firmware set over the air, one table at a time, and
`railbird nodes net`: a new broker address or Wi-Fi, each node trying it and going back to
the old one when it cannot reach the broker with it (SPEC.md `net`).

The fleet comes from the retained `birth` and `status` of every node (railbird.fleet.view);
an update serves the set over HTTP from this machine (railbird.fleet.server) and follows
each node through download, trial and commit (railbird.fleet.rollout). The node's side:
firmware/README.md "Over-the-air updates".
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

from railbird.mqttopts import add_broker_options, make_client
from railbird.tableorder import natural_key, natural_sorted

HELP = "list the sensor nodes (firmware, pin map, last seen, counters, RSSI); update them"
LIST_HELP = "list the fleet from the nodes' retained birth and status (the default action)"
UPDATE_HELP = "update the nodes' firmware over the air from a `make firmware` set"
_LIST_PARSER = []  # `railbird nodes` without an action parses as `railbird nodes list`


def _common(p, default_user: str) -> None:
    p.add_argument(
        "--venue", default="+", help="only this venue (default: every venue the user may read)"
    )
    p.add_argument(
        "--table",
        action="append",
        default=[],
        help="only this table (repeatable; default: every table with a node)",
    )
    p.add_argument(
        "--config",
        default=None,
        help="host.toml: its venue, its tables' nodes (a configured node never seen is "
        "listed) and its broker login (instead of the broker options below)",
    )
    p.add_argument(
        "--wait",
        type=float,
        default=1.5,
        help="seconds to collect the retained messages (default %(default)s)",
    )
    add_broker_options(p, default_user=default_user)


def register(sub) -> None:
    p = sub.add_parser("nodes", help=HELP, description=__doc__.split("\n\n")[0])
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    ls = actions.add_parser("list", help=LIST_HELP, description=LIST_HELP)
    _common(ls, "railbird-display")
    ls.add_argument("--json", action="store_true", help="print one JSON object per node")
    ls.set_defaults(func=run_list)
    _LIST_PARSER[:] = [ls]
    _register_net(actions)
    up = actions.add_parser(
        "update",
        help=UPDATE_HELP,
        description=UPDATE_HELP + ". Every online node of a table gets the set; the next "
        "table follows once each of them runs it and reported healthy (or the table failed: "
        "then the rollout stops). Offline nodes, and tables with a match in play, are skipped "
        "and reported. Exit status 0 when every node chosen runs the set at the "
        "end, 1 otherwise, 2 for a set or an option that is refused.",
    )
    _common(up, "railbird-host")
    up.add_argument(
        "--firmware",
        default="firmware/build/node",
        help="the set: a `make firmware` node build with its manifest.json (default %(default)s)",
    )
    up.add_argument("--node", action="append", default=[], help="only this node (repeatable)")
    up.add_argument(
        "--advertise",
        default=None,
        help="address the nodes reach this machine at (default: this machine's address "
        "towards the broker, or its default route when the broker is on loopback)",
    )
    up.add_argument("--http-bind", default="0.0.0.0", help="address the download server listens on")
    up.add_argument(
        "--http-port",
        type=int,
        default=8270,
        help="port of the download server (0: any free one; default %(default)s)",
    )
    up.add_argument(
        "--trial-s",
        type=int,
        default=None,
        help="seconds a new set has to report healthy before the node rolls back (10..3600; "
        "the node's default 300)",
    )
    up.add_argument(
        "--trial-boots",
        type=int,
        default=None,
        help="boots a new set may take to report healthy (1..10; the node's default 3)",
    )
    up.add_argument(
        "--table-timeout",
        type=float,
        default=900.0,
        help="seconds a table may take in all (default %(default)s)",
    )
    up.add_argument(
        "--keep-going",
        action="store_true",
        help="go on with the next tables after a table where a node did not update",
    )
    up.add_argument(
        "--force",
        action="store_true",
        help="update tables with a match in play too (skipped otherwise)",
    )
    up.add_argument(
        "--force-downgrade",
        action="store_true",
        help="send the set to nodes that run a later version too (skipped otherwise); each "
        "such downgrade is journalled: who, when, from, to (--downgrade-journal)",
    )
    up.add_argument(
        "--venue-key",
        default=None,
        help="the venue key that signs the command (default $RAILBIRD_VENUE_KEY, else "
        "/etc/railbird/venue-key.pem, which `railbird setup` makes; without one the command "
        "goes unsigned and boards provisioned with a key refuse it)",
    )
    up.add_argument(
        "--downgrade-journal",
        default=None,
        help="the journal of forced downgrades (default /var/lib/railbird/downgrades.jsonl)",
    )
    up.add_argument(
        "--dry-run", action="store_true", help="check the set and show the plan; send nothing"
    )
    up.set_defaults(func=run_update)
    p.set_defaults(func=run_default)


def _register_net(actions) -> None:
    help_ = "send nodes a new broker address or Wi-Fi, tried and reverted if it fails"
    net = actions.add_parser(
        "net",
        help=help_,
        description=help_ + " (protocol/SPEC.md `net`). Each node chosen gets the command, "
        "says `trial`, switches, and keeps the settings once the broker accepted it with "
        "them within --trial-s, else goes back to the old ones. Exit status 0 when every "
        "node kept them, 1 otherwise, 2 for a refused option.",
    )
    _common(net, "railbird-host")
    net.add_argument("--node", action="append", default=[], help="only this node (repeatable)")
    net.add_argument("--broker-host", help="the broker's name or address the nodes dial")
    net.add_argument("--broker-port", type=int, help="its port (default 1883 with a host)")
    net.add_argument("--broker-addr", help="the address to fall back on for the name")
    net.add_argument("--wifi-ssid", help="the Wi-Fi network")
    net.add_argument(
        "--wifi-password-file",
        help="a file holding its password (default: RAILBIRD_WIFI_PASSWORD)",
    )
    net.add_argument("--trial-s", type=int, default=60, help="10..600 (default 60)")
    net.set_defaults(func=run_net)


def _net_command(args) -> dict:
    """The `net` command of the options; SystemExit(2-style message) when refused."""
    import os
    from pathlib import Path

    from rbproto import codec

    cmd: dict = {"v": 1, "id": f"net-{int(time.time())}", "trial_s": args.trial_s}
    if args.broker_host or args.broker_port:
        if not args.broker_host:
            raise ValueError("--broker-port needs --broker-host (the name the nodes dial)")
        b: dict = {"host": args.broker_host, "port": args.broker_port or 1883}
        if args.broker_addr:
            b["addr"] = args.broker_addr
        cmd["broker"] = b
    if args.wifi_ssid:
        if args.wifi_password_file:
            pw = Path(args.wifi_password_file).read_text().rstrip("\n")
        elif "RAILBIRD_WIFI_PASSWORD" in os.environ:
            pw = os.environ["RAILBIRD_WIFI_PASSWORD"]
        else:
            raise ValueError("--wifi-ssid needs --wifi-password-file or RAILBIRD_WIFI_PASSWORD")
        cmd["wifi"] = {"ssid": args.wifi_ssid, "password": pw}
    try:
        codec.encode("net", cmd)
    except codec.ProtocolError as e:
        raise ValueError(str(e)) from None
    return cmd


def run_net(args) -> int:
    from rbproto import codec

    try:
        cmd = _net_command(args)
    except (ValueError, OSError) as e:
        print(f"railbird nodes net: {e}", file=sys.stderr)
        return 2
    fleet, client, _conn_args, configured = _fleet(args)
    try:
        plan = _plan(fleet, configured, args.table, args.node)
        chosen = []
        for t, nodes in plan.items():
            for n in nodes:
                st = fleet.get(t, n)
                if st is None or not st.online:
                    print(f"  {t}/{n}: offline, skipped (it would not get the command)")
                    continue
                chosen.append((st.venue, t, n))
        if not chosen:
            print("railbird nodes net: no online node chosen", file=sys.stderr)
            return 1
        payload = codec.encode("net", cmd)
        for v, t, n in chosen:
            client.publish(codec.topic(v, t, "net", n), payload, qos=1, retain=False)

        def outcome(t, n):
            st = fleet.get(t, n)
            r = ((st.status if st else None) or {}).get("net") or {}
            return r if r.get("id") == cmd["id"] and r.get("state") != "trial" else None

        fleet.wait(lambda f: all(outcome(t, n) for _v, t, n in chosen), args.trial_s + 30)
        ok = True
        for _v, t, n in chosen:
            r = outcome(t, n)
            if r is None:
                ok = False
                print(f"  {t}/{n}: no answer")
            else:
                ok = ok and r["state"] == "done"
                err = f": {r['error']}" if r.get("error") else ""
                print(f"  {t}/{n}: {r['state']}{err}")
        return 0 if ok else 1
    finally:
        client.loop_stop()
        client.disconnect()


def run_default(args) -> int:
    return run_list(_LIST_PARSER[0].parse_args([]))


# -- connection -----------------------------------------------------------------------------
def _conn(args):
    """(connection args for make_client, venue, configured tables) from --config or flags."""
    if not args.config:
        return args, args.venue, {}
    from railbird.config import ConfigError, load

    try:
        cfg = load(args.config)
    except (OSError, ConfigError) as e:
        raise SystemExit(f"railbird nodes: {args.config}: {e}") from None
    b = cfg.broker
    conn = SimpleNamespace(
        host=b.host,
        port=b.port,
        user=b.user,
        password=b.password,
        tls=b.tls,
        cafile=b.cafile or None,
    )
    return conn, cfg.venue, {t: list(tc.nodes) for t, tc in cfg.table.items()}


def _watch(args, fleet):
    """Connect, subscribe to the fleet's topics, collect for --wait s -> (client, conn)."""
    conn, _, _ = _conn(args)
    ready = threading.Event()
    err = []

    def on_connect(client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            err.append(f"the broker refused the connection: {reason_code}")
            ready.set()
            return
        client.subscribe([(t, 1) for t in fleet.topics()])

    def on_subscribe(client, userdata, mid, reason_codes, properties):
        ready.set()

    def on_message(client, userdata, m):
        fleet.on_message(m.topic, m.payload, bool(m.retain))

    client = make_client(conn, on_connect=on_connect)
    client.on_subscribe = on_subscribe
    client.on_message = on_message
    try:
        client.connect(conn.host, conn.port, keepalive=30)
    except OSError as e:
        raise SystemExit(
            f"railbird nodes: cannot connect to {conn.host}:{conn.port}: {e}"
        ) from None
    client.loop_start()
    if not ready.wait(10) or err:
        client.loop_stop()
        raise SystemExit(f"railbird nodes: {err[0] if err else 'no answer from the broker'}")
    time.sleep(max(0.0, args.wait))  # the retained messages arrive after the SUBACK
    return client, conn


def _fleet(args):
    from railbird.fleet.view import Fleet

    _, venue, configured = _conn(args)
    fleet = Fleet(venue)
    client, conn = _watch(args, fleet)
    return fleet, client, conn, configured


def _plan(fleet, configured, tables, nodes) -> dict[str, list[str]]:
    plan: dict[str, list[str]] = {}
    seen = fleet.tables()
    for t in natural_sorted(set(seen) | set(configured)):
        if tables and t not in tables:
            continue
        ns = natural_sorted(set(seen.get(t, [])) | set(configured.get(t, [])))
        ns = [n for n in ns if not nodes or n in nodes]
        if ns:
            plan[t] = ns
    return plan


# -- list ---------------------------------------------------------------------------------------
def run_list(args) -> int:
    from railbird.fleet.view import table_text

    fleet, client, _, configured = _fleet(args)
    client.disconnect()
    client.loop_stop()
    rows = [r for r in fleet.rows() if not args.table or r["table"] in args.table]
    have = {(r["table"], r["node"]) for r in rows}
    for t in natural_sorted(configured):
        nodes = configured[t]
        if args.table and t not in args.table:
            continue
        for n in nodes:
            if (t, n) not in have:
                rows.append(
                    {
                        "venue": fleet.venue,
                        "table": t,
                        "node": n,
                        "state": "never seen",
                        "fw": None,
                        "pinmap": None,
                        "boot": None,
                        "last_seen_s": None,
                        "rssi": None,
                        "counters": {},
                        "update": None,
                        "config_error": None,
                    }
                )
    rows.sort(key=lambda r: (natural_key(r["table"]), natural_key(r["node"])))
    health = _sensor_health(args, fleet.venue, {r["table"] for r in rows})
    for r in rows:
        if r["table"] in health:
            r["sensors"] = health[r["table"]]
    if args.json:
        for r in rows:
            print(json.dumps(r, sort_keys=True))
    elif rows:
        print(table_text(rows))
    else:
        print("no nodes: none has published its birth or status on this broker", file=sys.stderr)
    return 0


def _sensor_health(args, venue: str, tables: set[str]) -> dict[str, str]:
    """{table: its sensor health in one line} from the last shots the daemon journalled
    (core/health.py, as the daemon judges them: the same shots, the config's `sensors`);
    {} without --config or a journal to read."""
    if not args.config:
        return {}
    import sqlite3

    from railbird.config import load
    from railbird.core import health
    from railbird.core.pipeline import HEALTH_SHOTS

    cfg = load(args.config)
    path = Path(cfg.journal)
    if not path.exists():
        return {}
    out = {}
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        db.execute("PRAGMA busy_timeout = 2000")
        for t in tables:
            rows = db.execute(
                "SELECT shot FROM shots WHERE venue = ? AND tbl = ? ORDER BY n DESC LIMIT ?",
                (venue, t, HEALTH_SHOTS),
            ).fetchall()
            shots = [json.loads(s) for (s,) in reversed(rows)]
            tc = cfg.table_config(t)
            kinds = health.present(shots, tc.sensors if tc is not None else ())
            out[t] = health.text(health.channel_health(shots, kinds))
        db.close()
    except sqlite3.Error as e:
        print(f"railbird nodes: the journal {path}: {e}; no sensor health", file=sys.stderr)
        return {}
    return out


# -- update -----------------------------------------------------------------------------------
def advertise_address(broker_host: str) -> str:
    """This machine's address as the nodes see it: the one it reaches the broker from; when
    the broker is on this machine's loopback, the one of its default route."""
    target = broker_host
    try:
        if socket.gethostbyname(broker_host).startswith("127."):
            target = "192.0.2.1"  # TEST-NET: only picks the route, nothing is sent
    except OSError:
        pass
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect((target, 9))
        return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"
    finally:
        s.close()


def _signer(args):
    """The venue key's Signer; None (unsigned, said) when the default key is not there;
    VenueKeyError for a named key that is not there or a key this user cannot read."""
    from railbird import venuekey

    path = Path(args.venue_key) if args.venue_key else venuekey.default_path()
    if args.venue_key is None and not path.exists():
        print(
            f"railbird nodes update: no venue key at {path}: the command goes unsigned, "
            "and boards provisioned with a venue key refuse it",
            file=sys.stderr,
        )
        return None
    return venuekey.Signer(path)


def run_update(args) -> int:
    from railbird import venuekey
    from railbird.fleet import downgrades, firmware
    from railbird.fleet.rollout import Rollout
    from railbird.fleet.server import FirmwareServer
    from rbproto import codec

    try:
        fw = firmware.load(args.firmware)
        signer = _signer(args)
    except (firmware.FirmwareError, venuekey.VenueKeyError) as e:
        print(f"railbird nodes update: {e}", file=sys.stderr)
        return 2
    journal = downgrades.Journal(
        Path(args.downgrade_journal) if args.downgrade_journal else downgrades.DEFAULT
    )
    for name, v, lo, hi in (
        ("--trial-s", args.trial_s, 10, 3600),
        ("--trial-boots", args.trial_boots, 1, 10),
    ):
        if v is not None and not lo <= v <= hi:
            print(f"railbird nodes update: {name} {v} not in {lo}..{hi}", file=sys.stderr)
            return 2
    print(f"firmware {fw.version}: {len(fw.files)} files, {fw.size} bytes ({args.firmware})")
    fleet, client, conn, configured = _fleet(args)
    try:
        plan = _plan(fleet, configured, args.table, args.node)
        if not plan:
            print("railbird nodes update: no node to update", file=sys.stderr)
            return 1
        host = args.advertise or advertise_address(conn.host)
        try:
            server = FirmwareServer(fw, args.http_bind, args.http_port)
        except OSError as e:
            print(
                f"railbird nodes update: cannot serve on port {args.http_port}: {e}",
                file=sys.stderr,
            )
            return 2
        url = server.url(host)
        try:
            codec.encode(
                "update",
                {
                    "v": 1,
                    "id": "x",
                    "version": fw.version,
                    "url": url,
                    "manifest_sha256": fw.manifest_sha256,
                },
            )
        except codec.ProtocolError as e:
            server.httpd.server_close()
            print(f"railbird nodes update: {e}", file=sys.stderr)
            return 2
        print(f"serving {url}")
        for t, nodes in plan.items():
            print(f"  {t}: {' '.join(nodes)}")
        if args.dry_run:
            server.httpd.server_close()
            return 0

        def publish(topic, payload):
            client.publish(topic, payload, qos=1, retain=False)

        with server:
            ro = Rollout(
                fleet,
                publish,
                fw,
                url,
                trial_s=args.trial_s,
                trial_boots=args.trial_boots,
                table_timeout_s=args.table_timeout,
                keep_going=args.keep_going,
                force=args.force,
                signer=signer,
                force_downgrade=args.force_downgrade,
                journal=journal,
            )
            print(f"update {ro.id}")
            results = ro.run(plan)
        print("summary:")
        for r in results:
            print("  " + r.line())
        good = sum(r.ok for r in results)
        print(
            f"{good} of {len(results)} nodes run {fw.version}; served "
            f"{sum(server.served.values())} files"
        )
        return 0 if good == len(results) else 1
    finally:
        client.disconnect()
        client.loop_stop()
