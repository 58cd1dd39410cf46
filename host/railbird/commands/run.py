"""`railbird run`: the host daemon."""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
import time

HELP = "run the host daemon: node events in, shots and game states out, everything journalled"

EPILOG = """\
configuration file (TOML; defaults shown; every key optional except venue and each
table's nodes). Strict: an unknown key, a wrong value or keys that contradict each other
(race_to on 14.1, a node on two tables, ...) stop the daemon before it starts, with one
"config error:" line per problem naming the key and the fix (exit status 2); check a file
with --check-config. The full key reference: docs/host.md "Configuration".

  venue = "club"                  the venue id (slug); required
  subscribe = []                  tables to follow; [] = every table of the venue
  accept_unknown_tables = false   refuse (count) messages of tables without a [tables.X]
  journal = "railbird-journal.sqlite"   SQLite journal (WAL); --journal overrides
  journal_sync = "normal"         "normal": survives a process crash; "full": power loss too
  journal_keep_inputs_days = 30   raw inputs older than this (and than a snapshot) are
                                  exported, then deleted (0: keep all; docs/host.md)
  journal_export_dir = ""         where they are exported; "" = <journal>.exports
  reorder_window_ms = 500         how long the timeline waits for out-of-order events
  max_hold_ms = 60000             how long a node that is offline or still sending its
                                  backlog may hold its table's timeline (0: never)
  referee_token = ""              when set, MQTT referee input must carry this token
  director_pin = ""               the event director's page PIN (docs/events.md); "" = off
  event_export_dir = ""           the event's static export; "" = <journal>.event
  lip_policy = "warn"             "rule": also pass the lip time to the rules (general 30)
  stats_period_s = 60             log the counters this often (0: never)

  [broker]  host = "127.0.0.1", port = 1883, user = "railbird-host", password = ""
            (or env RAILBIRD_MQTT_PASSWORD), tls = false, cafile = "",
            client_id = "" (= railbird-host-<venue>-<HMAC keyed with the password>),
            session_expiry_s = 604800, keepalive_s = 30, ingest_process = true (the
            MQTT client in a child process; false: a thread of the daemon)
  [shots]   quiet_ms = 5000, lip_rest_ms = 5000, cue_before_ms = 0 (0: the slowest
            cue_return_ms x 1.3 + 250 ms), cue_after_ms = 100, break_window_ms = 2000,
            rail_merge_ms = 100, strike_gap_ms = 2500 (a strike after this much silence
            closes the shot in play), strike_quiet_ms = 8000 (the quiet_ms of a shot
            that opened at a strike), stroke_silence_ms = 3500, stroke_confirm_ms = 1000
            (a new stroke whose strike was missed)               (docs/shots.md)
  [tables.t1]  game = "10-ball" (10-ball, 14.1, 9-ball, 8-ball), players = ["Ann", "Bob"]
            (exactly two different names), race_to = 5 (racks; 14.1 takes target = 100,
            points), break_order = "alternate", options = {}, nodes = ["t1-node"] (required;
            each node on one table), table_size = "9ft" (7ft, 8ft, 9ft), cue_return_ms =
            {HL = 2850, HR = 2850, SL = 2000, SR = 2000, FL = 1000, FR = 1000} (the cue
            ball's return delay per pocket; railbird calibrate measures it; a pocket left
            out takes table_size's default), referee = false (true: a referee at the
            table decides what the sensors cannot; protocol/REFEREE.md §3b),
            sensors = [] (the optional sensors: "strike", "colour" for a colour station
            in the return, hardware/colour.md; a silent one is warned of)
  [cluster]  nats = ["nats://host:4222", ...], worker = "w1" (both required), user = "",
            password = "" (or env RAILBIRD_NATS_PASSWORD), partitions = 16, lease_s = 5,
            replicas = 3, max_ack_pending = 256: this daemon is one worker of a NATS
            JetStream cluster; [broker] is then the cluster's MQTT gateway (the display
            feeds); docs/scaling.md
  [default_table]  the same keys for a table not under [tables] (nodes = [] = any node),
            used with accept_unknown_tables = true

outputs (docs/host.md "Outputs", docs/displays.md):

  [outputs]        day_start_hour = 6   pocket counts per business day from this local hour
  [outputs.feeds]  enabled = true       MQTT display feeds (retained state and summary
                                        topics, shots, announcements); same broker and user
                   discovery = true     Home Assistant MQTT discovery (the ACL must let the
                                        user write homeassistant/#; see docs/displays.md)
                   discovery_prefix = "homeassistant"
                   client_id = ""       "" = "<broker client_id>-feeds"
  [outputs.web]    enabled = true       web scoreboard + referee panel; runs only when this
                                        section exists
                   host = "0.0.0.0", port = 8080 (0 = any free port; logged and in
                   --stats-file), title = "Railbird", max_connections = 512 (never
                   more than half the fd limit), idle_timeout_s = 10,
                   stream_queue = 256 (events a live stream may fall behind before it
                   is ended; the browser reconnects from a snapshot), stream_stall_s = 10
                   (a stream whose client takes nothing this long is ended),
                   write_timeout_s = 10 (a reply not taken whole this long is
                   dropped and its connection reset), allowed_hosts = [] (names
                   the pages are reached by besides an IP address, localhost and
                   this machine's names; others get 400)
                   The referee panel's PIN is referee_token (above): 6 to 12 digits,
                   not one digit repeated nor a run. Without a token the
                   panel is disabled (a warning is logged; referee POSTs get 403) and the
                   scoreboard runs read-only.
  [[outputs.serial]]  one per serial LED scoreboard: table = "t1" and port =
                   "/dev/serial/by-id/..." required; baudrate = 115200, announce = true,
                   ack_timeout_ms = 250, retries = 4

At start-up the outputs get today's shots and the current state of every table from the
journal (pocket counts survive a restart; the last announcements are not shown again).

See docs/host.md for the full description.
"""


def register(sub) -> None:
    p = sub.add_parser(
        "run",
        help=HELP,
        description=HELP + ".",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--config", "-c", required=True, help="TOML configuration file (see below)")
    p.add_argument("--journal", help="journal file (overrides `journal` of the config)")
    p.add_argument("--host", help="broker host (overrides [broker] host)")
    p.add_argument("--port", type=int, help="broker port (overrides [broker] port)")
    p.add_argument("--user", help="broker user (overrides [broker] user)")
    p.add_argument(
        "--password",
        help="broker password (overrides [broker] password; prefer "
        "the environment variable RAILBIRD_MQTT_PASSWORD)",
    )
    p.add_argument(
        "--seconds",
        type=float,
        default=0,
        help="stop after this many seconds (default 0: until SIGTERM or Ctrl-C)",
    )
    p.add_argument(
        "--stats-file",
        help="write the counters as JSON to this file five times a second "
        "(for monitoring and tests)",
    )
    p.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log level on standard error (default %(default)s)",
    )
    p.add_argument(
        "--exit-with-parent",
        action="store_true",
        help="stop (cleanly, as on SIGTERM) when the parent process goes away; for "
        "a supervisor that starts the daemon, such as `railbird demo`",
    )
    p.add_argument(
        "--check-config",
        action="store_true",
        help="only load and check the configuration: print it as JSON (secrets masked) and "
        "exit 0, or print one line per problem and exit 2",
    )
    p.set_defaults(func=run)


def run(args) -> int:
    from railbird.config import ConfigError, load, masked

    logging.basicConfig(
        level=args.log_level,
        stream=sys.stderr,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    try:
        cfg = load(args.config)
    except OSError as e:
        print(f"config error: {args.config}: cannot read it: {e.strerror or e}", file=sys.stderr)
        return 2
    except ConfigError as e:
        print(e, file=sys.stderr)  # one line per problem; the daemon does not start
        return 2
    for opt in ("host", "port", "user", "password"):
        v = getattr(args, opt)
        if v is not None:
            setattr(cfg.broker, opt, v)
    if args.journal:
        cfg.journal = args.journal
    if args.check_config:
        print(json.dumps(masked(cfg.raw), indent=2, sort_keys=True, default=str))
        return 0
    outputs = _outputs(cfg)

    from railbird.daemon import ingestproc
    from railbird.daemon.journal import JournalError
    from railbird.daemon.worker import Daemon

    ingest = ingestproc.factory(cfg)  # MQTT in a child process (broker.ingest_process)
    if cfg.cluster is not None:  # one worker of a NATS JetStream cluster (docs/scaling.md)
        from railbird.cluster.ingest import ClusterIngest

        def ingest(inbox):
            return ClusterIngest(cfg, inbox)

    try:
        daemon = Daemon(cfg, outputs=outputs, ingest=ingest)
    except JournalError as e:  # not a journal, empty, damaged: one line, nothing started
        print(f"railbird run: {e}", file=sys.stderr)
        return 2
    _connect(outputs, daemon)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    signal.signal(signal.SIGINT, lambda *a: stop.set())
    if getattr(args, "exit_with_parent", False):
        from railbird.sim.table import watch_parent

        watch_parent(stop)
    try:
        daemon.start()
    except JournalError as e:
        print(f"railbird run: {e}", file=sys.stderr)
        daemon.journal.close()
        return 2
    for out in outputs:
        url = getattr(out, "url", None) if getattr(out, "running", False) else None
        if url:
            logging.getLogger("railbird.run").info(
                "web scoreboard: %s/v/%s/ (referee panel %s)",
                url,
                cfg.venue,
                "on" if getattr(out, "pins", None) else "off: no referee_token",
            )
    from railbird.daemon.gcpolicy import GcPolicy

    gc_policy = GcPolicy()
    gc_policy.start()  # the rebuilt state frozen now, not a minute into the sign-ins
    try:
        t0 = time.monotonic()
        while not stop.wait(0.2):
            gc_policy.step()
            if args.stats_file:
                _write_stats(args.stats_file, _stats(daemon, outputs))
            if args.seconds and time.monotonic() - t0 >= args.seconds:
                break
    finally:
        daemon.stop()
        if args.stats_file:
            _write_stats(args.stats_file, _stats(daemon, outputs))
    return 0


def _stats(daemon, outputs) -> dict:
    from railbird.outputs.factory import describe  # imported already by _outputs

    d = daemon.stats()
    if outputs:
        d["outputs"] = describe(outputs)  # an output that fails to describe itself says so
    return d


def _connect(outputs, daemon) -> None:
    """The web referee panel's inputs go to the daemon (journalled like any referee input)."""
    from railbird.outputs.factory import connect

    connect(outputs, daemon)


_stats_failed = {"at": None}


def _write_stats(path, stats) -> None:
    """Best effort: a stats file that cannot be written (no descriptor left, a full disk)
    is an error line a minute, never the end of scoring (issue 13, item 5)."""
    import os

    from railbird.private import open_private

    tmp = f"{path}.tmp"
    try:
        with open_private(tmp, "w") as f:  # 0600, like the journal it summarises
            json.dump(stats, f, sort_keys=True)
        os.replace(tmp, path)
    except OSError as e:
        now = time.monotonic()
        if _stats_failed["at"] is None or now - _stats_failed["at"] >= 60:
            _stats_failed["at"] = now
            logging.getLogger("railbird.run").error("stats file %s not written: %s", path, e)


def _outputs(cfg) -> list:
    """The outputs named by the config's [outputs] section (railbird.outputs.factory)."""
    from railbird.outputs.factory import from_config

    try:
        return list(from_config(cfg))
    except Exception as e:  # noqa: BLE001 - a broken display must not stop scoring
        logging.getLogger("railbird.run").error("outputs not started: %s", e)
        return []
