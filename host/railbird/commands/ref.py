"""`railbird ref`: a referee console on the command line (for scripts and a button node)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import uuid

from railbird.core.records import Status
from railbird.mqttopts import add_broker_options, make_client
from railbird.rules.engine import GAMES
from rbproto.codec import POCKETS

HELP = "referee a table over MQTT: new match, lag, calls, options, confirm, undo, concede ..."
DESCRIPTION = """\
Send one referee input to the host of a table over MQTT (the table's `referee` topic,
QoS 1, a fresh id) and wait for the host's answer on `referee/result`: the rulings are
printed and the exit status is 0; a refusal is printed and the status is 1; no answer in
--timeout seconds gives status 3 (2: the broker refused or could not be reached). `state`
prints the table's current state from the retained `state` topic.

The inputs and what the host does with them: protocol/REFEREE.md, "Match control through
the host". A player is given by name (or 0 / 1 for the first / second player).
"""
EPILOG = """\
examples:
  railbird ref --venue club --table t1 match --game 10-ball --players Ann Bob --race-to 5
  railbird ref --venue club --table t1 lag Ann --breaker Bob
  railbird ref --venue club --table t1 call 3 SR
  railbird ref --venue club --table t1 option shoot
  railbird ref --venue club --table t1 foul 6.3
  railbird ref --venue club --table t1 concede Bob
  railbird ref --venue club --table t1 match            # next match, same players
"""
CHOICES = ("shoot", "pass", "accept", "rebreak", "spot", "break", "kitchen")
EXIT_OK, EXIT_REFUSED, EXIT_BROKER, EXIT_NO_ANSWER = 0, 1, 2, 3


def _player(text: str):
    return int(text) if text in ("0", "1") else text


def _ball(text: str) -> int:
    try:
        ball = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a ball number") from None
    if not 0 <= ball <= 15:
        raise argparse.ArgumentTypeError(f"ball {ball}: expected 0-15")
    return ball


def _potted(text: str) -> dict:
    """BALL@POCKET (e.g. 5@FL), or ?@POCKET for a ball not identified."""
    ball, sep, pocket = text.partition("@")
    if not sep or pocket.upper() not in POCKETS:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected BALL@POCKET, a pocket of {' '.join(POCKETS)}"
        )
    item = {"pocket": pocket.upper()}
    if ball != "?":
        item["ball"] = _ball(ball)
    return item


def _option(text: str):
    """NAME (set to true) or NAME=VALUE (an integer)."""
    name, sep, value = text.partition("=")
    if not sep:
        return name, True
    try:
        return name, int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"option {name}: {value!r} is not an integer") from None


def _shot_facts(p) -> None:
    p.add_argument(
        "--pocketed",
        nargs="+",
        type=_potted,
        metavar="BALL@POCKET",
        help="balls pocketed, e.g. 3@FL 0@SR (?@HL: a ball not identified)",
    )
    p.add_argument(
        "--first-contact",
        type=_ball,
        metavar="BALL",
        help="the object ball the cue ball hit first (0: no ball was hit)",
    )
    p.add_argument(
        "--no-rail", action="store_true", help="no ball reached a rail after contact (6.3)"
    )


def _facts(args) -> dict:
    out = {}
    if args.pocketed is not None:
        out["pocketed"] = args.pocketed
    if args.first_contact is not None:
        out["first_contact"] = args.first_contact or None
    if args.no_rail:
        out["rail_after_contact"] = False
    return out


def build_input(args) -> dict | None:
    """The referee input of the parsed sub-command (None for `state`)."""
    what = args.what
    if what == "state":
        return None
    if what == "match":
        inp = {"type": "match"}
        for key in ("game", "players", "race_to", "target", "break_order"):
            if getattr(args, key) is not None:
                inp[key] = getattr(args, key)
        if args.option:
            inp["options"] = dict(args.option)
        if args.referee is not None:
            inp["referee"] = args.referee
        return inp
    if what == "lag":
        inp = {"type": "lag", "winner": _player(args.winner)}
        if args.breaker is not None:
            inp["breaker"] = _player(args.breaker)
        return inp
    if what == "call":
        return {"type": "call", "ball": args.ball, "pocket": args.pocket}
    if what == "safety":
        return {"type": "call", "safety": True}
    if what == "push-out":
        return {"type": "push_out"}
    if what == "option":
        return {"type": "option", "choice": args.choice}
    if what == "rerack":
        return {
            "type": "rerack",
            "cue_ball_in_rack_area": args.cue_in_rack,
            "ball_in_rack_area": args.ball_in_rack,
            "ball_behind_head_string": args.ball_behind_head_string,
        }
    if what == "foul":
        return {"type": "confirm", "fouls": args.rules}
    if what == "confirm":
        return {"type": "confirm", **_facts(args)}
    if what == "shot":
        return {"type": "shot", **_facts(args)}
    if what == "concede":
        return {"type": "concede", "player": _player(args.player)}
    if what == "send":
        try:
            inp = json.loads(args.json)
        except ValueError as e:
            raise SystemExit(f"railbird ref send: not JSON: {e}") from None
        if not isinstance(inp, dict):
            raise SystemExit("railbird ref send: the input must be a JSON object")
        return inp
    return {"type": what.replace("-", "_")}  # push-out, undo, abandon, stalemate, interference


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "ref",
        help=HELP,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--venue", required=True, help="the venue id")
    p.add_argument("--table", required=True, help="the table id")
    p.add_argument(
        "--by", default="cli", help="the console's name, journalled with the input (default cli)"
    )
    p.add_argument(
        "--token",
        default=os.environ.get("RAILBIRD_REFEREE_TOKEN"),
        help="the venue's referee token, if the host requires one (env RAILBIRD_REFEREE_TOKEN)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=5.0,
        help="seconds to wait for the host's answer (default %(default)s)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the host's answer (or the state) as JSON instead of text",
    )
    add_broker_options(p, default_user="railbird-referee")
    sub = p.add_subparsers(dest="what", metavar="INPUT", required=True)

    m = sub.add_parser("match", help="a new match (what is left out: the last match or config)")
    m.add_argument("--game", choices=tuple(GAMES), help="the game")
    m.add_argument("--players", nargs=2, metavar="NAME", help="the two players")
    m.add_argument("--race-to", type=int, dest="race_to", help="racks to win (rack games)")
    m.add_argument("--target", type=int, help="points to win (14.1)")
    m.add_argument(
        "--referee",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a referee is at the table: a ruling the sensors cannot decide waits for his "
        "check (default: the last match, else the table's config; protocol/REFEREE.md §3b)",
    )
    m.add_argument(
        "--break-order",
        dest="break_order",
        choices=("alternate", "winner", "loser", "trailing"),
        help="who breaks the next rack (general 35)",
    )
    m.add_argument(
        "--option",
        action="append",
        type=_option,
        metavar="NAME[=VALUE]",
        help="a named rule option (protocol/REFEREE.md §5); repeatable",
    )

    lag = sub.add_parser("lag", help="the lag winner, who chooses the breaker (1.2)")
    lag.add_argument("winner", help="the player who won the lag")
    lag.add_argument("--breaker", help="the player chosen to break (default: the winner)")

    c = sub.add_parser("call", help="call a ball and pocket for the next shot")
    c.add_argument("ball", type=_ball, help="the ball called (1-15)")
    c.add_argument("pocket", type=str.upper, choices=POCKETS, help="the pocket called")

    sub.add_parser("safety", help="call safety for the next shot")
    sub.add_parser("push-out", help="the next shot is a push-out (9.4, 2.4)")

    o = sub.add_parser("option", help="the decision awaited (shoot or pass, accept ...)")
    o.add_argument("choice", choices=CHOICES, help="the choice made")

    r = sub.add_parser("rerack", help="14.1 re-rack answers (4.8); leave out what is not so")
    r.add_argument("--cue-in-rack", action="store_true", help="the cue ball lies in the rack area")
    r.add_argument(
        "--ball-in-rack", action="store_true", help="the 15th ball lies in the rack area"
    )
    r.add_argument(
        "--ball-behind-head-string",
        action="store_true",
        help="the 15th ball lies behind the head string",
    )

    f = sub.add_parser("foul", help="declare fouls on the last shot (a confirm with fouls)")
    f.add_argument("rules", nargs="+", metavar="RULE", help="rule numbers, e.g. 6.3 or 9.10.4")

    cf = sub.add_parser(
        "confirm", help="confirm the uncertain facts of the last shot, or correct them"
    )
    _shot_facts(cf)
    sh = sub.add_parser("shot", help="enter a shot by hand (what the sensors would report)")
    _shot_facts(sh)

    sub.add_parser("undo", help="withdraw the last input")
    k = sub.add_parser("concede", help="a player concedes the match (1.11)")
    k.add_argument("player", help="the player who concedes")
    sub.add_parser("abandon", help="end the match without a result")
    sub.add_parser("stalemate", help="declare a stalemate (1.12)")
    sub.add_parser("interference", help="outside interference that cannot be restored")
    s = sub.add_parser("send", help="send any input given as JSON")
    s.add_argument("json", help='the input, e.g. \'{"type": "undo"}\'')
    sub.add_parser("state", help="print the table's current state")
    p.set_defaults(func=run)


def _topics(args):
    from rbproto import codec

    return (
        codec.topic(args.venue, args.table, "referee"),
        codec.topic(args.venue, args.table, "referee_result"),
        codec.topic(args.venue, args.table, "state"),
    )


def exchange(args, inp: dict | None) -> tuple[int, object]:
    """Publish `inp` and wait for its answer (or read the state): (exit status, answer)."""

    from rbproto import codec

    try:
        referee_t, result_t, state_t = _topics(args)
    except codec.ProtocolError as e:
        return EXIT_BROKER, f"bad venue or table: {e}"
    rid = uuid.uuid4().hex[:16]
    msg = {"v": 1, "input": inp, "id": rid, "by": args.by[:32]}
    if args.token:
        msg["token"] = args.token
    if inp is not None:
        try:
            payload = codec.encode("referee", msg)
        except codec.ProtocolError as e:
            return EXIT_REFUSED, f"not a referee message: {e}"
    done = threading.Event()
    box: dict = {}

    def on_connect(client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            box["broker"] = f"the broker refused the connection: {reason_code}"
            done.set()
            return
        client.subscribe(state_t if inp is None else result_t, qos=1)

    def on_subscribe(client, userdata, mid, reason_codes, properties):
        if inp is not None:  # subscribed first, so the answer cannot be missed
            client.publish(referee_t, payload, qos=1)

    def on_message(client, userdata, message):
        try:
            kind, _, _, _, body = codec.decode_message(message.topic, message.payload)
        except codec.ProtocolError:
            return
        wanted = kind == "state" if inp is None else kind == "referee_result"
        if wanted and (inp is None or body.get("id") == rid):
            box["answer"] = body
            done.set()

    client = make_client(
        args, client_id=f"railbird-ref-{rid}", mqtt311=False, on_connect=on_connect
    )
    client.on_subscribe = on_subscribe
    client.on_message = on_message
    try:
        client.connect(args.host, args.port, keepalive=30)
    except OSError as e:
        return EXIT_BROKER, f"cannot connect to {args.host}:{args.port}: {e}"
    client.loop_start()
    try:
        done.wait(args.timeout)
    finally:
        client.disconnect()
        client.loop_stop()
    if "broker" in box:
        return EXIT_BROKER, box["broker"]
    if "answer" not in box:
        if inp is None:
            return EXIT_NO_ANSWER, f"no state for {args.venue}/{args.table} in {args.timeout:g} s"
        return EXIT_NO_ANSWER, f"no answer from the host in {args.timeout:g} s"
    answer = box["answer"]
    if inp is None or answer["status"] in (Status.OK, Status.PENDING, Status.DUPLICATE):
        return EXIT_OK, answer
    return EXIT_REFUSED, answer


def describe(answer: dict) -> str:
    """The host's answer as the lines a referee reads."""
    status = answer["status"]
    if status == Status.OK:
        lines = [
            f"{r['text']}" + (f" ({r['rule']})" if r.get("rule") else "")
            for r in answer.get("rulings") or ()
        ]
        return "\n".join(lines) or "applied"
    if status == Status.PENDING:
        return f"held for the shot in play: {', '.join(answer.get('facts') or ())}"
    if status == Status.DUPLICATE:
        return "already applied (duplicate id)"
    return f"{status}: {answer.get('error') or 'no reason given'}"


def describe_state(msg: dict) -> str:
    st = msg.get("state") or {}
    players = st.get("players") or []
    scores = st.get("scores") or {}
    lines = [
        f"{msg.get('game')}: " + " v ".join(f"{p} {scores.get(p, 0)}" for p in players),
        f"rack {st.get('rack')}, at the table: {st.get('at_table') or '-'}"
        + (f", ball in hand ({st['ball_in_hand']})" if st.get("ball_in_hand") else ""),
    ]
    if st.get("match_winner"):
        lines.append(f"match over: {st['match_winner']} wins")
    elif st.get("ended") == "abandoned":
        lines.append("no match (abandoned)")
    if st.get("awaiting"):
        lines.append(f"awaiting: {st['awaiting']}")
    valid = st.get("valid_inputs")
    if valid:
        lines.append("valid now: " + ", ".join(v["type"] for v in valid))
    return "\n".join(lines)


def run(args) -> int:
    inp = build_input(args)
    status, answer = exchange(args, inp)
    if isinstance(answer, str):
        print(f"railbird ref: {answer}", file=sys.stderr)
        return status
    if args.json:
        print(json.dumps(answer, ensure_ascii=False, sort_keys=True))
    elif inp is None:
        print(describe_state(answer))
    else:
        print(describe(answer), file=sys.stdout if status == EXIT_OK else sys.stderr)
    return status
