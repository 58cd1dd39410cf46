"""`railbird tail`: print every Railbird message of a venue, decoded and validated."""

from __future__ import annotations

import json
import sys
import threading
import time

from railbird.mqttopts import add_broker_options, make_client
from rbproto import codec

HELP = "print every Railbird message of a venue, decoded and validated, one line each"


def register(sub) -> None:
    p = sub.add_parser(
        "tail",
        help=HELP,
        description=HELP + ". A message that fails validation is printed with 'REJECTED' and "
        "the codec's reason; tail never stops on bad input.",
    )
    p.add_argument(
        "--venue", default="+", help="venue id to follow (default: every venue the user may read)"
    )
    p.add_argument("--table", default="+", help="only this table (default: every table)")
    p.add_argument(
        "--json",
        action="store_true",
        help="print each decoded message as JSON after the topic instead of a summary",
    )
    p.add_argument(
        "--count",
        type=int,
        default=0,
        help="exit after this many messages (default 0: run until Ctrl-C)",
    )
    p.add_argument(
        "--seconds",
        type=float,
        default=0,
        help="exit after this many seconds (default 0: run until Ctrl-C)",
    )
    p.add_argument(
        "--config",
        default=None,
        help="host.toml: the venue and the broker's address, port and TLS from it; the login "
        "stays the display's (--user, RAILBIRD_MQTT_PASSWORD), never the host's",
    )
    add_broker_options(p)
    p.set_defaults(func=run)


def _from_config(args) -> None:
    """--config fills the venue and where the broker is; it does not lend tail the host's
    login, which may publish: tail only reads, as the display login does."""
    from railbird.config import ConfigError, load

    try:
        cfg = load(args.config)
    except (OSError, ConfigError) as e:
        raise SystemExit(f"railbird tail: {args.config}: {e}") from None
    if args.venue == "+":
        args.venue = cfg.venue
    b = cfg.broker
    args.host, args.port, args.tls = b.host, b.port, b.tls
    args.cafile = b.cafile or args.cafile


def summarize(kind: str, msg: dict) -> str:
    """One human line for a decoded message."""
    if kind == "events":
        parts = []
        for e in msg["events"]:
            where = e.get("pocket") or e.get("rail") or ""
            extra = ""
            if "amp" in e:
                extra = f" amp={e['amp']}"
            elif "n" in e:
                extra = f" n={e['n']}"
            elif "dur" in e:
                extra = f" dur={e['dur']}us"
            parts.append(f"#{e['seq']} t={e['t']} {e['kind']} {where}{extra}".replace("  ", " "))
        return f"boot={msg['boot']} " + " | ".join(parts)
    if kind == "status":
        if msg.get("state") == "offline":
            return "OFFLINE"
        counters = json.dumps(msg.get("counters", {}), sort_keys=True)
        return (
            f"online up={msg.get('uptime_us', 0) // 1_000_000}s queue={msg.get('queue')} "
            f"spill={msg.get('spill')} counters={counters}"
            + (f" config_error={msg['config_error']!r}" if msg.get("config_error") else "")
        )
    if kind == "birth":
        return f"boot={msg['boot']} fw={msg['fw']} reset={msg['reset']} pinmap={msg['pinmap']}"
    if kind == "announce":
        return f"{msg['text']}" + (f" (rule {msg['rule']})" if msg.get("rule") else "")
    if kind == "state":
        st = msg["state"]
        return f"{msg['game']} scores={st.get('scores')} at_table={st.get('at_table')}"
    if kind == "shot":
        balls = ",".join(f"{p.get('ball', '?')}@{p['pocket']}" for p in msg["pocketed"]) or "-"
        return f"shot {msg['n']} pocketed={balls} rails={len(msg['rails'])}"
    if kind == "table_summary":  # without the pocket counts' detail
        return (
            f"{msg.get('game')} scores={msg.get('scores')} online={msg.get('online')} "
            f"pocketed_today={msg.get('pocketed_today')}"
        )
    return json.dumps({k: v for k, v in msg.items() if k != "v"}, sort_keys=True)


def format_line(topic: str, payload: bytes, as_json: bool = False) -> str:
    stamp = time.strftime("%H:%M:%S")
    if not payload:
        # an empty retained message clears the topic (protocol/SPEC.md: `inplay` when its
        # shot closes, retained junk the host removes): a message of the protocol's own
        try:
            venue, table, kind, node = codec.parse_topic(topic)
        except codec.ProtocolError as e:
            return f"{stamp} REJECTED {topic}: {e.reason}"
        where = f"{venue}/{table or '-'}" + (f"/{node}" if node else "")
        return f"{stamp} {where} {kind} cleared"
    try:
        kind, venue, table, node, msg = codec.decode_message(topic, payload)
    except codec.ProtocolError as e:
        return f"{stamp} REJECTED {topic}: {e.reason}"
    if "token" in msg:  # referee input: the token is the referee PIN, never printed
        msg = dict(msg, token="***")
    where = f"{venue}/{table or '-'}" + (f"/{node}" if node else "")
    body = (
        json.dumps(msg, sort_keys=True, separators=(",", ":")) if as_json else summarize(kind, msg)
    )
    return f"{stamp} {where} {kind} {body}"


def run(args) -> int:
    if args.config:
        _from_config(args)
    done = threading.Event()
    seen = [0]
    err = []

    def on_connect(client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            err.append(f"broker refused the connection: {reason_code}")
            done.set()
            return
        # Subscribe to every version so a node speaking another major version is shown
        # as rejected instead of silently ignored.
        client.subscribe(f"railbird/+/{args.venue}/#", qos=1)

    def on_subscribe(client, userdata, mid, reason_codes, properties):
        # said once the broker has granted the subscription (SUBACK), not when it was
        # sent: a message published after this line is shown
        if any(rc.is_failure for rc in reason_codes):
            err.append(f"broker refused the subscription: {reason_codes[0]}")
            done.set()
            return
        print(
            f"# tailing railbird/v1/{args.venue}/{args.table} on {args.host}:{args.port}",
            file=sys.stderr,
            flush=True,
        )

    def on_message(client, userdata, message):
        parts = message.topic.split("/")
        if args.table != "+" and (len(parts) < 4 or parts[3] != args.table):
            return
        print(format_line(message.topic, message.payload, args.json), flush=True)
        seen[0] += 1
        if args.count and seen[0] >= args.count:
            done.set()

    client = make_client(args, on_connect=on_connect)
    client.on_message = on_message
    client.on_subscribe = on_subscribe
    try:
        client.connect(args.host, args.port, keepalive=30)
    except OSError as e:
        print(f"railbird tail: cannot connect to {args.host}:{args.port}: {e}", file=sys.stderr)
        return 1
    client.loop_start()
    try:
        done.wait(args.seconds if args.seconds > 0 else None)
    finally:
        client.disconnect()
        client.loop_stop()
    if err:
        print(f"railbird tail: {err[0]}", file=sys.stderr)
        return 1
    return 0
