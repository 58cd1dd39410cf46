"""`railbird demo` (`make demo`): a private broker, two simulated tables, the host daemon,
the web scoreboard and a live terminal scoreboard; Ctrl-C stops everything."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HELP = "run the demo: broker, two simulated tables, host, web and terminal scoreboards"
DESCRIPTION = """\
Start everything on this machine, with nothing to set up:
  - a private mosquitto on a free loopback port with the project's config
    (authentication, ACL, persistence);
  - two simulated tables running the real node firmware on simulated hardware:
    t1 plays a 10-ball match, t2 a 14.1 continuous match, each with a simulated
    referee console entering calls and options over MQTT;
  - the host daemon, `railbird run` with a generated config (journal, shots, rules, the
    MQTT display feeds with Home Assistant discovery, the web scoreboard and referee
    panel);
  - a live scoreboard in this terminal.
Ctrl-C stops everything and prints a summary. Every run is recorded in the host's
journal; `railbird replay JOURNAL --check` replays it.

With --seconds N the demo runs unattended for N seconds and exits 0 only when both games
progressed (shots assembled and scores changed) and none of its processes died. A broker
that goes away is started again: the tables pause and the host catches up, as at a venue.
"""

VENUE = "demo"
TABLES = (
    # table, node, match, seed
    (
        "t1",
        "t1-node",
        {"type": "match", "game": "10-ball", "players": ["Ana", "Ben"], "race_to": 3},
        19,
    ),
    (
        "t2",
        "t2-node",
        {"type": "match", "game": "14.1", "players": ["Cleo", "Dev"], "target": 50},
        7,
    ),
)
QUIET_MS = 2000
INSTALL = "sudo apt-get install -y mosquitto mosquitto-clients"


def register(sub) -> None:
    p = sub.add_parser(
        "demo",
        help=HELP,
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--seconds",
        type=float,
        default=0,
        help="run this long, then stop and check (default 0: until Ctrl-C)",
    )
    p.add_argument(
        "--journal",
        help="the host's journal file (default: in the work directory; printed in the summary)",
    )
    p.add_argument(
        "--workdir",
        help="directory for the broker, configs, logs and journal "
        "(default: a new temporary directory, kept and printed)",
    )
    p.add_argument(
        "--web-port",
        type=int,
        default=8080,
        help="web scoreboard port (default 8080; a free port if it is taken; 0: any free port)",
    )
    p.add_argument("--pin", help="referee panel PIN, 6 to 12 digits (default: random, printed)")
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="add this to the tables' seeds for other games (default 0)",
    )
    p.add_argument(
        "--no-board",
        action="store_true",
        help="no full-screen board: print one line per shot instead",
    )
    p.add_argument(
        "--screenshots",
        metavar="DIR",
        help="before stopping, save a screenshot of the web scoreboard and of the "
        "terminal board in DIR (headless Chromium)",
    )
    p.set_defaults(func=run)


# -- process handling -----------------------------------------------------------------------
class Procs:
    """Children, each in its own session (process group), stopped in reverse order."""

    def __init__(self):
        self.items: list = []  # (name, Popen)

    def start(self, name, argv, log_path, env=None) -> subprocess.Popen:
        with open(log_path, "ab") as log:
            p = subprocess.Popen(
                argv,
                stdout=log,
                stderr=log,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        self.items.append((name, p))
        return p

    def dead(self) -> list:
        return [(n, p.returncode) for n, p in self.items if p.poll() is not None]

    def stop(self, names=None, timeout: float = 10.0) -> None:
        todo = [(n, p) for n, p in reversed(self.items) if names is None or n in names]
        for _n, p in todo:
            _signal_group(p, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for _n, p in todo:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(max(0.1, deadline - time.monotonic()))
        for _n, p in todo:  # whatever is left of each group: no process stays behind
            _signal_group(p, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(5)


def _signal_group(p, sig) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(p.pid, sig)


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _toml_str(s) -> str:
    return json.dumps(str(s))  # a JSON string is a TOML basic string


def _host_config(path: Path, port: int, journal: Path, web_port: int, pin: str) -> None:
    """The `railbird run` configuration of the demo: the production code path with the
    demo's broker, a short quiet period, the display feeds with Home Assistant discovery,
    and the web scoreboard whose referee panel PIN is the venue's referee token."""
    lines = [
        f'venue = "{VENUE}"',
        f"journal = {_toml_str(journal)}",
        "stats_period_s = 0",
        f"referee_token = {_toml_str(pin)}",
        "",
        "[broker]",
        'host = "127.0.0.1"',
        f"port = {port}",
        'user = "railbird-host"',
        'password = "host-secret"',
        "",
        "[shots]",
        f"quiet_ms = {QUIET_MS}",
        "",
        "[outputs.feeds]",
        "enabled = true",
        "discovery = true",
        "",
        "[outputs.web]",
        'host = "127.0.0.1"',
        f"port = {web_port}",
        'title = "Railbird demo"',
        "",
    ]
    for table, node, m, _seed in TABLES:
        lines += [
            f"[tables.{table}]",
            f'game = "{m["game"]}"',
            "players = [" + ", ".join(f'"{p}"' for p in m["players"]) + "]",
        ]
        lines.append(f"race_to = {m['race_to']}" if "race_to" in m else f"target = {m['target']}")
        lines += [f'nodes = ["{node}"]', _cue_return_line(), ""]
    from railbird.private import write_private

    write_private(path, "\n".join(lines))  # it holds the host's password and the PIN


def _cue_return_line() -> str:
    """The simulated table's ball-return delays, so the host pairs a scratch as the
    simulator plays it (docs/shots.md)."""
    from railbird.sim.physics import SIM_CUE_RETURN_MS

    return "cue_return_ms = {" + ", ".join(f"{p} = {v}" for p, v in SIM_CUE_RETURN_MS.items()) + "}"


def _wait_host(stats: Path, procs, stop_reason, log: Path, timeout: float = 20.0):
    """Wait until `railbird run` writes its stats (it runs, its outputs have started);
    -> the web scoreboard's URL, or None when it is not running."""
    deadline = time.monotonic() + timeout
    while True:
        if procs.dead() or time.monotonic() > deadline or stop_reason["why"]:
            raise RuntimeError(f"the host did not start; see {log}")
        try:
            d = json.loads(stats.read_text())
        except (OSError, ValueError):
            time.sleep(0.05)
            continue
        for info in (d.get("outputs") or {}).values():
            if isinstance(info, dict) and info.get("url"):
                return info["url"]
        return None


# -- the demo --------------------------------------------------------------------------------
def run(args) -> int:
    from railbird.broker import DEFAULT_USERS, BrokerError, PrivateBroker, find_mosquitto
    from railbird.hostwatch import HostWatch
    from railbird.sim import verify
    from railbird.termboard import JournalFeed, TermBoard

    # Live lines must show as they happen also when the output is a pipe or a CI log.
    sys.stdout.reconfigure(line_buffering=True)

    try:
        find_mosquitto()
    except BrokerError:
        print(
            "railbird demo: mosquitto is not installed. Install it with:\n"
            f"    {INSTALL}\n(`make demo` installs it for you when run as root.)",
            file=sys.stderr,
        )
        return 1
    work = Path(args.workdir or tempfile.mkdtemp(prefix="railbird-demo-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    journal = Path(args.journal).resolve() if args.journal else work / "journal.sqlite"
    journal.parent.mkdir(parents=True, exist_ok=True)
    from railbird.config.check import WEAK_PIN, weak_pin

    if args.pin is not None and weak_pin(args.pin):
        print(f"railbird demo: --pin: {WEAK_PIN.split(': ', 1)[1]}", file=sys.stderr)
        return 2
    pin = args.pin
    while pin is None or weak_pin(pin):  # the config check would refuse a weak one
        pin = f"{random.SystemRandom().randint(0, 999_999):06d}"
    node_pw = {node: secrets.token_hex(8) for _t, node, _m, _s in TABLES}

    stop_reason = {"why": None}

    def on_signal(signum, _frame):
        stop_reason["why"] = signal.Signals(signum).name

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    procs = Procs()
    broker = None
    t_start = time.monotonic()
    interactive = sys.stdout.isatty() and not args.no_board and not args.seconds
    board = TermBoard({t: m["game"] for t, _n, m, _s in TABLES}, title="Railbird demo")
    feed = JournalFeed(journal, VENUE)
    watch = None  # the host's heartbeat and the nodes' status: the journal cannot tell
    web_url = None
    failed = False
    try:
        broker = PrivateBroker(work / "broker", users=node_pw)
        broker.start()
        watch = HostWatch(
            VENUE, port=broker.port, password=DEFAULT_USERS["railbird-display"]
        ).start()
        web_port = args.web_port
        if web_port and not _port_free(web_port):
            web_port = 0
        cfg_path = work / "host.toml"
        _host_config(cfg_path, broker.port, journal, web_port, pin)
        stats = work / "host.stats.json"
        if stats.exists():
            stats.unlink()
        py = sys.executable
        # The host is `railbird run` itself, configured by host.toml: one code path for
        # production and the demo. Its --stats-file says when it runs and where the web is.
        procs.start(
            "host",
            [
                py,
                "-m",
                "railbird",
                "run",
                "--config",
                str(cfg_path),
                "--stats-file",
                str(stats),
                "--log-level",
                "INFO",
                "--exit-with-parent",
            ],
            work / "host.log",
        )
        web_url = _wait_host(stats, procs, stop_reason, work / "host.log")
        for table, node, m, seed in TABLES:
            # secrets by the environment: a command line is readable by every user (ps)
            env = dict(os.environ, RAILBIRD_NODE_PASSWORD=node_pw[node], RAILBIRD_REFEREE_TOKEN=pin)
            argv = [
                py,
                "-m",
                "railbird",
                "sim",
                "--port",
                str(broker.port),
                "--venue",
                VENUE,
                "--table",
                table,
                "--node",
                node,
                "--game",
                m["game"],
                "--players",
                *m["players"],
                "--seed",
                str(seed + args.seed),
                "--style",
                "demo",
                "--quiet-ms",
                str(QUIET_MS),
                "--state-dir",
                str(work / f"{node}-flash"),
                "--log-level",
                "INFO",
                "--transcript",
                str(work / f"{table}-transcript.jsonl"),
            ]
            argv += (
                ["--race-to", str(m["race_to"])]
                if "race_to" in m
                else ["--target", str(m["target"])]
            )
            argv += ["--pace", "0.6", "--exit-with-parent"]
            procs.start(f"sim-{table}", argv, work / f"sim-{table}.log", env=env)

        where = [
            f"web scoreboard:  {web_url}/v/{VENUE}/   (tables: "
            + ", ".join(f"{web_url}/v/{VENUE}/{t}/" for t, *_ in TABLES)
            + ")"
            if web_url
            else "web scoreboard:  not available (see " + str(work / "host.log") + ")",
            f"referee PIN:     {pin}",
            f"broker:          127.0.0.1:{broker.port} (users railbird-display/"
            "display-secret, railbird-referee/referee-secret)",
            f"watch it:        railbird tail --venue {VENUE} --port {broker.port}",
            f"journal:         {journal}",
            f"logs:            {work}",
        ]
        print(
            "Railbird demo is running"
            + (f" for {args.seconds:g} s" if args.seconds else "; Ctrl-C stops it")
            + ".",
            flush=True,
        )
        for w in where:
            print("  " + w, flush=True)
        board.footer = [
            (f"web {web_url}/v/{VENUE}/  ·  " if web_url else "") + f"referee PIN {pin}",
            f"journal {journal}",
            "Ctrl-C stops everything.",
        ]
        if interactive:
            time.sleep(2.0)

        shot_lines = {}

        def on_shot(tbl, shot):
            board.on_shot(tbl, shot)
            if not interactive:
                shot_lines[tbl] = shot

        def on_state(tbl, state, fen, anns):
            board.on_state(tbl, state, fen, anns)
            if not interactive and state.get("scores") is not None:
                s = shot_lines.pop(tbl, None)
                if s is not None:
                    down = len([p for p in s.get("pocketed", []) if p.get("ball") != 0])
                    scores = " ".join(f"{k} {v}" for k, v in state["scores"].items())
                    print(
                        f"  [{tbl}] shot {s['n']}: {down} down, {len(s.get('rails', []))} "
                        f"rail hits -> {scores}" + (f"; {anns[-1]['text']}" if anns else ""),
                        flush=True,
                    )

        screenshot_at = None
        if args.screenshots:
            screenshot_at = t_start + (args.seconds - 6 if args.seconds > 12 else 30)
        last_draw = 0.0
        while not stop_reason["why"]:
            feed.poll(on_state, on_shot)
            board.sync(watch)
            now = time.monotonic()
            if interactive and now - last_draw > 0.5:
                width = shutil.get_terminal_size((100, 30)).columns
                sys.stdout.write(board.frame(width))
                sys.stdout.flush()
                last_draw = now
            if not broker.running:
                _restart_broker(broker)
            dead = procs.dead()
            if dead:  # a host or table that died: the run failed, whatever the games did
                stop_reason["why"] = "a process ended: " + ", ".join(
                    f"{n} ({rc})" for n, rc in dead
                )
                failed = True
                break
            if screenshot_at is not None and now >= screenshot_at:
                screenshot_at = None
                _screenshots(Path(args.screenshots), web_url, board, work)
                if not args.seconds:
                    stop_reason["why"] = "screenshots taken"
            if args.seconds and now - t_start >= args.seconds:
                stop_reason["why"] = "time"
                break
            time.sleep(0.25)
    except Exception as e:  # noqa: BLE001 - report, then clean up
        print(f"railbird demo: {e}", file=sys.stderr)
        stop_reason["why"] = stop_reason["why"] or f"error: {e}"
        failed = True
    finally:
        if interactive:
            sys.stdout.write("\x1b[H\x1b[2J")
        print(
            "stopping: tables, then the host (after its quiet period closes the last "
            "shots), then the broker…",
            flush=True,
        )
        procs.stop([n for n, _p in procs.items if n.startswith("sim-")], timeout=12)
        if not failed and any(n == "host" for n, _p in procs.items):
            t_end = time.monotonic() + QUIET_MS / 1000 + 1.0
            while time.monotonic() < t_end and not procs.dead():
                feed.poll(board.on_state, board.on_shot)
                time.sleep(0.1)
        procs.stop(["host"], timeout=15)
        procs.stop()
        if broker is not None:
            broker.stop()
        feed.close()
        if watch is not None:
            watch.stop()
        for s, h in old.items():
            signal.signal(s, h)
    if interactive:
        sys.stdout.write("\n")
    elapsed = time.monotonic() - t_start
    return _report(journal, work, elapsed, stop_reason["why"], failed, args, verify)


def _report(journal, work, elapsed, why, failed, args, verify) -> int:
    print(f"\nRailbird demo stopped after {elapsed:.1f} s ({why}).")
    if not journal.exists():
        print("no journal was written", file=sys.stderr)
        return 1
    summ = verify.summary(journal)
    ok = not failed
    for table, _node, m, _seed in TABLES:
        s = summ.get(table, {"shots": 0, "score_changes": 0})
        prog = verify.progressed(s)
        ok = ok and prog
        print(
            f"  {table} {m['game']:8s} shots {s.get('shots', 0):3d}  states "
            f"{s.get('states', 0):3d}  score changes {s.get('score_changes', 0):3d}  "
            f"scores {json.dumps(s.get('scores'))}  rack {s.get('rack')}  "
            f"balls down {s.get('balls_pocketed', 0)}  fouls {s.get('fouls', 0)}  "
            f"rules errors {s.get('rules_errors', 0)}  "
            f"{'progressed' if prog else 'NO PROGRESS'}"
        )
    print(f"  journal: {journal}")
    print(f"  replay:  railbird replay {journal} --check")
    print(f"  logs:    {work}")
    if args.seconds:
        if ok:
            print("DEMO OK: both games progressed")
        else:
            print("DEMO FAILED: " + (why if failed else "a game did not progress"))
        return 0 if ok else 1
    print("both games progressed" if ok else "(a game had not progressed yet)")
    return 0 if not failed else 1


def _restart_broker(broker) -> None:
    """A broker that went away (killed, crashed) is started again on its port, with its
    persistent store: the host and the tables reconnect and go on, which is what they do
    at a venue (the tables pause, the host holds each table until its node caught up)."""
    rc = broker.proc.returncode if broker.proc is not None else None
    print(f"broker stopped (exit {rc}); restarting it on port {broker.port}", flush=True)
    broker.start()
    print("broker restarted", flush=True)


def _screenshots(out: Path, web_url, board, work: Path) -> None:
    from railbird.sim import screenshots

    try:
        made = screenshots.take(out, web_url, VENUE, board, work)
        for p in made:
            print(f"  screenshot: {p}", flush=True)
    except Exception as e:  # noqa: BLE001 - screenshots are a bonus, not a failure
        print(f"railbird demo: screenshots failed: {e}", file=sys.stderr)
