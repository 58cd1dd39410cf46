"""`railbird event`: the venue's event kept in the host's journal (docs/events.md, "Running
an event"): show it, or write its static export (HTML and JSON) to a folder."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HELP = "the venue's event: show it, or export its bracket, standings and results (HTML, JSON)"


def register(sub) -> None:
    p = sub.add_parser(
        "event",
        help=HELP,
        description=(
            "The event the director runs from the director's page (/v/<venue>/director),\n"
            "as the host's journal holds it. `export` writes index.html (works opened from\n"
            "disk, no script) and event.json to a folder, each to a temporary file renamed\n"
            "over the old one; the host itself keeps such an export up to date as matches\n"
            "end (`event_export_dir`)."
        ),
        epilog="examples:\n"
        "  railbird event show --config host.toml\n"
        "  railbird event export --out /srv/www/thursday --config host.toml",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    show = actions.add_parser("show", help="the event as JSON", description="The event as JSON.")
    _common(show)
    show.set_defaults(func=run_show)
    ex = actions.add_parser(
        "export", help="write the static export", description="Write index.html and event.json."
    )
    _common(ex)
    ex.add_argument("--out", required=True, help="the folder (made if missing)")
    ex.set_defaults(func=run_export)
    p.set_defaults(func=lambda args: _usage(p))


def _common(p) -> None:
    p.add_argument("--journal", help="the daemon's SQLite journal (default: `journal` of --config)")
    p.add_argument("--config", help="the host's TOML config, for its journal, venue and tables")
    p.add_argument("--venue", help="the venue (default: the config's, or the journal's only one)")


def _usage(p) -> int:
    p.print_help(sys.stderr)
    return 2


def _fail(msg: str) -> int:
    print(f"railbird event: {msg}", file=sys.stderr)
    return 2


def _view(args):
    """(view, error)."""
    import sqlite3

    from railbird.competition.errors import CompetitionError
    from railbird.config import ConfigError, load
    from railbird.events.desk import EventDesk
    from railbird.events.store import EventStore

    path, venue, tables = args.journal, args.venue, []
    if args.config:
        try:
            cfg = load(args.config)
        except (ConfigError, OSError) as e:
            return None, f"--config {args.config}: {e}"
        path = path or cfg.journal
        venue = venue or cfg.venue
        tables = list(cfg.table)
    if not path:
        return None, "give --journal, or --config with the host's journal"
    if not Path(path).is_file():  # opening a missing file would make an empty journal
        return None, f"{path}: no such journal file (the host creates it when it first runs)"
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            venues = EventStore(db).venues()
        finally:
            db.close()
        if venue is None:
            if len(venues) != 1:
                return None, f"give --venue: the journal has events of {len(venues)} venues"
            venue = venues[0]
        desk = EventDesk(path, venue, lambda: tables)
        try:
            if desk.t is not None and not tables:  # the tables its matches were called to
                desk.tables = lambda: sorted({m.table for m in desk.t.matches if m.table})
            view = desk.public()
        finally:
            desk.close_db()
    except CompetitionError as e:
        return None, str(e)
    except sqlite3.Error as e:
        return None, f"journal {path}: {e}"
    if view is None:
        return None, f"no event at {venue} in {path}"
    return view, None


def run_show(args) -> int:
    view, error = _view(args)
    if view is None:
        return _fail(error)
    print(json.dumps(view, indent=1, ensure_ascii=False))
    return 0


def run_export(args) -> int:
    from railbird.events import export

    view, error = _view(args)
    if view is None:
        return _fail(error)
    try:
        files = export.write(args.out, view)
    except OSError as e:
        return _fail(f"--out {args.out}: {e}")
    for f in files:
        print(f)
    return 0
