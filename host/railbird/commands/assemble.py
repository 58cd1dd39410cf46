"""`railbird assemble`: sensor messages (JSON lines) in, shots (JSON lines) out, offline."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections import Counter

HELP = (
    "assemble shots offline from recorded messages: railbird assemble < events.jsonl > shots.jsonl"
)


def register(sub) -> None:
    p = sub.add_parser(
        "assemble",
        help=HELP,
        description=HELP + '. Each input line is {"topic": ..., "payload": {...}, "rx": µs} '
        '(rx optional) or {"tick": µs}; the output has one shot per line as canonical JSON '
        "(sorted keys). Deterministic: the same input gives the same bytes. The algorithm and "
        "its parameters: docs/shots.md.",
    )
    p.add_argument(
        "input",
        nargs="?",
        default="-",
        help="input file of JSON lines (default '-': standard input)",
    )
    p.add_argument(
        "--config",
        help="daemon TOML config whose [shots] parameters, "
        "reorder_window_ms and [tables.*] games are used (default: built-in defaults, "
        "every table accepted, no games)",
    )
    p.add_argument(
        "--window-ms", type=int, help="reorder window in ms (overrides the config; default 500)"
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="print every record (timeline events, late events, shots, states), "
        "each with its 'type', instead of shots only",
    )
    p.add_argument(
        "--stats",
        action="store_true",
        help="print the pipeline counters as JSON to standard error at the end",
    )
    p.set_defaults(func=run)


def run(args) -> int:
    from railbird.config import ConfigError, load
    from railbird.daemon.offline import assemble, offline_config

    cfg = None
    if args.config:
        try:
            cfg = load(args.config)
        except (OSError, ConfigError) as e:
            print(f"railbird assemble: {e}", file=sys.stderr)
            return 2
        cfg.accept_unknown_tables = True
        cfg.venue = "*"
    cfg = offline_config(cfg)
    if args.window_ms is not None:
        cfg.reorder_window_ms = args.window_ms
    errors: Counter[str] = Counter()
    stats: dict[str, object] = {}
    out = sys.stdout
    # surrogateescape: a line that is not UTF-8 is refused as a bad line, not a traceback
    try:
        src = (
            contextlib.nullcontext(
                io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape")
            )
            if args.input == "-"
            else open(args.input, encoding="utf-8", errors="surrogateescape")  # noqa: SIM115 - the with below closes it
        )
    except OSError as e:
        print(f"railbird assemble: {args.input}: {e.strerror or e}", file=sys.stderr)
        return 2
    with src as lines:
        for line in assemble(lines, cfg, every_record=args.all, errors=errors, stats=stats):
            out.write(line + "\n")
    if errors:
        print(
            f"railbird assemble: refused input: {json.dumps(dict(sorted(errors.items())))}",
            file=sys.stderr,
        )
    if args.stats:
        print(json.dumps(stats, sort_keys=True), file=sys.stderr)
    return 0
