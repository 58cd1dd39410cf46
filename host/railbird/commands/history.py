"""`railbird history`: the matches and pocket counts the host kept, printed or exported."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from pathlib import Path

from railbird import private

HELP = "print or export the match history and pocket counts (table, CSV, JSON)"
FORMATS = ("table", "csv", "json")
COUNTS = ("day", "hour", "pocket")


def register(sub) -> None:
    p = sub.add_parser(
        "history",
        help=HELP,
        description=(
            "Print or export the match history and pocket counts kept in the journal\n"
            "(docs/history.md): every match with players, game, result, start and end, racks,\n"
            "innings, high runs, fouls and balls pocketed; with --counts, the balls the pocket\n"
            "sensors saw drop per table and business day, hour of the day or pocket. A journal\n"
            "whose history is behind its records (written by an older railbird) is brought up\n"
            "to date first."
        ),
        epilog="examples:\n"
        "  railbird history --journal /var/lib/railbird/journal.sqlite\n"
        "  railbird history --config host.toml --from 2026-11-01 --to 2026-11-30 "
        "--format csv > november.csv\n"
        "  railbird history --config host.toml --player Ann --format json\n"
        "  railbird history --config host.toml --counts hour --table t1",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--journal",
        help="the daemon's SQLite journal (default: `journal` of --config)",
    )
    p.add_argument(
        "--config",
        help="the host's TOML config: its venue, journal and [outputs] day_start_hour "
        "(default: the config the daemon stored in the journal)",
    )
    p.add_argument(
        "--from",
        dest="first",
        metavar="DATE",
        help="the first business day (YYYY-MM-DD; a day starts at day_start_hour, 06:00 "
        "by default); a match counts on the day it started",
    )
    p.add_argument(
        "--to", dest="last", metavar="DATE", help="the last business day, included (YYYY-MM-DD)"
    )
    p.add_argument("--table", help="only this table")
    p.add_argument(
        "--player",
        metavar="NAME",
        help="only the matches of this player; with --counts, the balls dropped while this "
        "player was at the table",
    )
    p.add_argument(
        "--venue", help="only this venue (default: the venue of --config, else every venue)"
    )
    p.add_argument(
        "--format", choices=FORMATS, default="table", help="output format (default: table)"
    )
    p.add_argument(
        "--counts",
        choices=COUNTS,
        help="print pocket counts instead of matches: per business day, per hour of the "
        "day, or per pocket over the whole period (each row per table, by pocket)",
    )
    p.add_argument(
        "--output", "-o", metavar="FILE", help="write to FILE instead of standard output"
    )
    p.set_defaults(func=run)


def _fail(msg: str) -> int:
    print(f"railbird history: {msg}", file=sys.stderr)
    return 2


def _journal_config(journal) -> dict:
    """The config the daemon ran with, as it journalled it (secrets masked)."""
    try:
        row = journal.db.execute("SELECT value FROM meta WHERE key='config'").fetchone()
        return json.loads(row[0]) if row else {}
    except (sqlite3.Error, ValueError, TypeError):
        return {}


def run(args) -> int:
    from railbird.config import ConfigError, load
    from railbird.daemon.journal import Journal, JournalError
    from railbird.history import period

    cfg = None
    if args.config:
        try:
            cfg = load(args.config)
        except (ConfigError, OSError) as e:
            return _fail(f"--config {args.config}: {e}")
    path = args.journal or (cfg.journal if cfg is not None else None)
    if not path:
        return _fail("give --journal, or --config with the host's journal")
    # Opening a missing file would create an empty journal.
    if not Path(path).is_file():
        return _fail(f"{path}: no such journal file")
    try:
        first = period.parse_day(args.first, "--from") if args.first else None
        last = period.parse_day(args.last, "--to") if args.last else None
    except period.PeriodError as e:
        return _fail(str(e))
    try:
        journal = Journal(path)
    except JournalError as e:
        return _fail(str(e))
    try:
        text = _report(args, journal, cfg, first, last)
    except period.PeriodError as e:
        return _fail(str(e))
    except sqlite3.DatabaseError as e:
        return _fail(f"journal {path}: cannot be read: {e}")
    finally:
        journal.close()
    if args.output:
        try:
            # whole or not at all: a full disk leaves the old file (or none), never a
            # truncated CSV with a valid header that a spreadsheet opens as the whole month
            out = Path(args.output)
            private.write_whole(out, text, _mode_for(out))  # an export is an ordinary file
        except OSError as e:
            return _fail(f"--output {args.output}: {e.strerror or e}")
    else:
        sys.stdout.write(text)
    return 0


def _mode_for(path: Path) -> int:
    """The mode the file has, or the one the umask gives a new file."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _report(args, journal, cfg, first, last) -> str:
    from railbird.history import export, period, store

    store.update(journal.db)  # the daemon keeps it current; a journal from before is not
    raw = _journal_config(journal)
    if cfg is not None:
        day_start_hour = cfg.outputs.day_start_hour
        venue = args.venue or cfg.venue
    else:
        day_start_hour = int((raw.get("outputs") or {}).get("day_start_hour", 6))
        venue = args.venue
    since, until = period.bounds(first, last, day_start_hour)
    meta = {
        "venue": venue,
        "from": first.isoformat() if first else None,
        "to": last.isoformat() if last else None,
        "day_start_hour": day_start_hour,
    }
    for key in ("table", "player"):
        if getattr(args, key):
            meta[key] = getattr(args, key)
    filters = {"venue": venue, "table": args.table, "player": args.player}
    filters.update(since=since, until=until)
    if args.counts:
        raw_counts = store.drop_counts(journal.db, args.counts, day_start_hour, **filters)
        rows = export.counts_rows(raw_counts, args.counts)
        return export.render_counts(rows, args.counts, args.format, meta)
    return export.render_matches(store.matches(journal.db, **filters), args.format, meta)
