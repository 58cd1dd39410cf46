"""`railbird sim`: a simulated table (real node firmware on simulated hardware + a referee
console) playing 10-ball or 14.1 against a broker, or offline as a transcript."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import sys

from railbird.rules.engine import GAMES

# the games the simulated player has no strategy for (sim/player.py)
UNPLAYED = ("8-ball",)

HELP = "simulate a table: the real node firmware on simulated hardware plays a game"
DESCRIPTION = """\
Simulate one pool table. The real node firmware (firmware/rbnode) runs on the simulated
hardware layer and publishes what its pocket beams, cue-ball detector and rail sensors
see; a referee console publishes what a referee enters (lag, calls, push-outs, options,
re-racks) to the table's referee topic. The game is played by a seeded random player
driven by the rules engine's state (deterministic per --seed), or scripted from a
scenario file (format: docs/demo.md). The host (`railbird run`) assembles the shots and
keeps the score; when it publishes the table's retained state topic the simulator waits
for the host to agree with its own expectation before each turn.

--dry-run needs no broker: it plays the game at once and writes the transcript (referee
inputs and the shots the host would sense) as JSON lines that `railbird referee` reads.
"""
EPILOG = """\
examples:
  railbird sim --dry-run --game 14.1 --seed 7 --turns 40 | railbird referee --fen
  railbird sim --port 1883 --venue club --table t1 --node t1-node --game 10-ball \\
      --players Ann Bob --race-to 3 --node-password SECRET
  railbird sim --dry-run --scenario tests/demo/scenarios/tenball_quick.json
"""


def register(sub) -> None:
    p = sub.add_parser(
        "sim",
        help=HELP,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    g = p.add_argument_group("game")
    g.add_argument(
        "--game",
        choices=[g for g in GAMES if g not in UNPLAYED],
        default=None,
        help="the game (default: the scenario's match, else 10-ball)",
    )
    g.add_argument(
        "--players",
        nargs=2,
        metavar=("A", "B"),
        default=None,
        help="the two players (default: Ann Bob)",
    )
    g.add_argument("--race-to", type=int, default=None, help="racks to win (default 3)")
    g.add_argument("--target", type=int, default=None, help="14.1 points to win (default 50)")
    g.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    g.add_argument(
        "--style",
        choices=["default", "demo"],
        default="default",
        help="player tendencies: demo makes things happen sooner",
    )
    g.add_argument("--scenario", help="a scripted scenario (JSON, see docs/demo.md)")
    g.add_argument(
        "--then-random",
        action="store_true",
        help="after the scenario's last step, go on with random play",
    )
    g.add_argument("--turns", type=int, default=None, help="stop after this many turns")
    g.add_argument("--seconds", type=float, default=None, help="stop after this many seconds")
    g.add_argument(
        "--dry-run",
        action="store_true",
        help="no broker: write the transcript as JSON lines and exit",
    )
    g.add_argument("--transcript", help="also write the transcript (JSON lines) to this file")
    n = p.add_argument_group("table and broker")
    n.add_argument("--host", default="127.0.0.1", help="broker host (default 127.0.0.1)")
    n.add_argument("--port", type=int, default=1883, help="broker port (default 1883)")
    n.add_argument("--venue", default="club", help="venue id (default club)")
    n.add_argument("--table", default="t1", help="table id (default t1)")
    n.add_argument("--node", default=None, help="node id = broker user (default TABLE-node)")
    n.add_argument(
        "--node-password",
        default=os.environ.get("RAILBIRD_NODE_PASSWORD", ""),
        help="the node's broker password (or env RAILBIRD_NODE_PASSWORD)",
    )
    n.add_argument(
        "--referee-user",
        default="railbird-referee",
        help="the referee console's broker user (default %(default)s)",
    )
    n.add_argument(
        "--referee-password",
        default=os.environ.get("RAILBIRD_REFEREE_PASSWORD", "referee-secret"),
        help="(or env RAILBIRD_REFEREE_PASSWORD)",
    )
    n.add_argument(
        "--referee-token",
        default=os.environ.get("RAILBIRD_REFEREE_TOKEN", ""),
        help="the venue's referee token, if set (or env RAILBIRD_REFEREE_TOKEN)",
    )
    n.add_argument(
        "--state-dir",
        help="the node's flash (boot counter, spill); default a directory under $TMPDIR",
    )
    n.add_argument(
        "--quiet-ms",
        type=int,
        default=5000,
        help="the host's [shots] quiet_ms (pacing without a state feed)",
    )
    n.add_argument(
        "--strike-quiet-ms",
        type=int,
        default=8000,
        help="the host's [shots] strike_quiet_ms (with --strike: a shot opens at a strike)",
    )
    n.add_argument("--window-ms", type=int, default=500, help="the host's reorder_window_ms")
    n.add_argument(
        "--strike",
        action="store_true",
        help="the node has a strike sensor and sends a strike at the start of every shot",
    )
    n.add_argument(
        "--pace", type=float, default=1.0, help="multiply the players' thinking time (default 1.0)"
    )
    n.add_argument(
        "--log-level",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log level on standard error; INFO logs every turn (default %(default)s)",
    )
    n.add_argument(
        "--exit-with-parent",
        action="store_true",
        help="stop when the parent process goes away (used by `railbird demo`)",
    )
    p.set_defaults(func=run)


def build_match(args, scenario) -> dict:
    m = dict(scenario.match) if scenario is not None and scenario.match else {}
    m["type"] = "match"
    if args.game:
        m["game"] = args.game
    m.setdefault("game", "10-ball")
    if args.players:
        m["players"] = list(args.players)
    m.setdefault("players", ["Ann", "Bob"])
    if m["game"] == "14.1":
        m.pop("race_to", None)
        if args.target:
            m["target"] = args.target
        m.setdefault("target", 50)
    else:
        m.pop("target", None)
        if args.race_to:
            m["race_to"] = args.race_to
        m.setdefault("race_to", 3)
    return m


def run(args) -> int:
    from railbird.sim import scenario as scen
    from railbird.sim.player import Style
    from railbird.sim.table import make_source

    logging.basicConfig(
        level=args.log_level,
        stream=sys.stderr,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    scenario = None
    if args.scenario:
        try:
            scenario = scen.load(args.scenario)
        except (OSError, scen.ScenarioError) as e:
            print(f"railbird sim: {e}", file=sys.stderr)
            return 2
    match = build_match(args, scenario)
    style = Style.demo() if args.style == "demo" else Style()
    source = make_source(
        match, args.seed, scenario, style, then_random=args.then_random or scenario is None
    )
    with contextlib.ExitStack() as stack:
        tfile = stack.enter_context(open(args.transcript, "w")) if args.transcript else None
        return _play(args, scenario, match, source, tfile)


def _play(args, scenario, match, source, tfile) -> int:
    """Play `match` offline (--dry-run) or live through the broker; every message also goes
    to `tfile` (the transcript) when there is one."""
    from railbird.sim.physics import shot_params
    from railbird.sim.table import LiveTable, Offline

    def out(d):
        line = json.dumps(d, sort_keys=True)
        if args.dry_run:
            sys.stdout.write(line + "\n")
        if tfile is not None:
            tfile.write(line + "\n")
            tfile.flush()

    params = shot_params(quiet_us=args.quiet_ms * 1000, strike_quiet_us=args.strike_quiet_ms * 1000)
    turns = args.turns
    if args.dry_run:
        if turns is None and scenario is None:
            turns = 100
        out(match)
        r = Offline(args.table, match, source, args.seed, shot_params=params, out=out)
        r.run(turns=turns)
        print(json.dumps(r.stats(), sort_keys=True), file=sys.stderr)
        return 1 if r.checks_failed else 0

    node = args.node or f"{args.table}-node"
    table = LiveTable(
        host=args.host,
        port=args.port,
        venue=args.venue,
        table=args.table,
        node=node,
        node_password=args.node_password,
        match=match,
        source=source,
        seed=args.seed,
        state_dir=args.state_dir,
        referee_user=args.referee_user,
        referee_password=args.referee_password,
        referee_token=args.referee_token,
        # a shot that opens at a strike closes after strike_quiet_ms (docs/shots.md)
        quiet_us=(args.strike_quiet_ms if args.strike else args.quiet_ms) * 1000,
        window_us=args.window_ms * 1000,
        strike_sensor=args.strike,
        shot_params=params,
        pace=args.pace,
        out=out,
    )

    def on_signal(*_):
        table.stopped.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if args.exit_with_parent:
        from railbird.sim.table import watch_parent

        watch_parent(table.stopped)
    try:
        table.start()
    except Exception as e:  # noqa: BLE001 - broker down, bad password, no firmware
        print(f"railbird sim: cannot start table {args.table}: {e}", file=sys.stderr)
        table.stop()
        return 1
    print(
        f"railbird sim: table {args.venue}/{args.table} ({match['game']}, node {node}) "
        f"on {args.host}:{args.port}",
        file=sys.stderr,
        flush=True,
    )
    try:
        table.run(turns=turns, seconds=args.seconds)
    finally:
        table.stop()
    print(json.dumps(table.stats(), sort_keys=True), file=sys.stderr)
    return 1 if table.checks_failed else 0
