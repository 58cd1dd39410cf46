"""`railbird referee`: replay a JSON Lines transcript through the rules engine."""

from __future__ import annotations

import argparse
import json
import sys

HELP = "referee a match: JSON Lines inputs on stdin, the state after each on stdout"
DESCRIPTION = """\
Read a match transcript as JSON Lines on stdin and write the game state after every
input as one JSON line on stdout. The first line is the match:
  {"type": "match", "game": "10-ball", "players": ["Ann", "Bob"], "race_to": 5}
then lag, call, push_out, shot, option, rerack, undo and confirm lines (confirm:
the referee confirms or corrects the facts of the last shot; stalemate and
interference are extensions). A bad or out-of-place line gets {"error": reason} and
leaves the state unchanged; blank lines are skipped. The contract, the defaults for
facts nobody entered, every named rule option and a worked example per game are in
protocol/REFEREE.md.
"""
EPILOG = """\
example:
  printf '%s\\n' '{"type":"match","game":"14.1","players":["Ann","Bob"],"target":50}' \\
    '{"type":"lag","winner":"Ann","breaker":"Bob"}' | railbird referee
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "referee",
        help=HELP,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--fen",
        action="store_true",
        help="write only the canonical one-line state (FEN) per input, not JSON",
    )
    p.set_defaults(func=run)


def process_line(referee, line: str):
    """One transcript line -> (referee, output dict). Never raises on bad input."""
    from railbird.rules import Referee, RulesError

    try:
        inp = json.loads(line)
    except (ValueError, RecursionError) as exc:
        return referee, {"error": f"not JSON: {exc}"}
    try:
        if referee is None:
            if not isinstance(inp, dict) or inp.get("type") != "match":
                return None, {"error": "the first input must be a match"}
            referee = Referee(inp)
            return referee, referee.state_json()
        if isinstance(inp, dict) and inp.get("type") == "match":
            return referee, {"error": "the match has already started"}
        return referee, referee.feed(inp)
    except RulesError as exc:
        return referee, {"error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - never crash on a transcript: report, keep the state
        return referee, {"error": f"internal error: {type(exc).__name__}: {exc}"}


def run(args) -> int:
    from railbird.rules import to_fen

    referee = None
    # Bytes, decoded one line at a time: a line that is not UTF-8 is one bad line, not the
    # end of the transcript (a strict text stdin would fail on the whole buffered chunk).
    for raw in sys.stdin.buffer:
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad = raw[exc.start]
            print(json.dumps({"error": f"not UTF-8: byte 0x{bad:02x} at {exc.start}"}), flush=True)
            continue
        if not line.strip():
            continue
        referee, out = process_line(referee, line)
        if args.fen and "error" not in out:
            print(to_fen(referee.state), flush=True)
        else:
            print(json.dumps(out, ensure_ascii=False), flush=True)
    return 0
