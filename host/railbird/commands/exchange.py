"""`railbird export` and `railbird import`: players, results and tournaments out of the
host's journal as JSON or CSV (safe for spreadsheets), players and tournaments (JSON) into
it (docs/events.md, "Export and import")."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

KINDS = ("players", "results", "tournaments")
IMPORTS = ("players", "tournaments")
FORMATS = ("json", "csv")


def register(sub) -> None:
    ex = sub.add_parser(
        "export",
        help="players, results or tournaments as JSON or CSV, for a league or a rating service",
        description=(
            "Players (name, nickname, starter and kept rating, external ids), results\n"
            "(every rated match with both players' ids) or tournaments (JSON: every stored\n"
            "event, to import elsewhere; CSV: one row per match, a report) as JSON or CSV.\n"
            "A CSV cell of text\n"
            "beginning with = + - @ TAB or CR gets a leading ' so a spreadsheet runs nothing.\n"
            "-o FILE is written whole or not at all (a temporary file renamed over it), 0600:\n"
            "it names people."
        ),
        epilog="examples:\n"
        "  railbird export players --format csv -o players.csv --config host.toml\n"
        "  railbird export results --format json --config host.toml > results.json\n"
        "  railbird export tournaments --format json -o events.json --config host.toml",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ex.add_argument("kind", choices=KINDS, help="what to export")
    _common(ex)
    ex.add_argument("--format", choices=FORMATS, default="csv", help="default: csv")
    ex.add_argument("--output", "-o", help="write to this file instead of standard output")
    ex.set_defaults(func=run_export)
    im = sub.add_parser(
        "import",
        help="players (JSON or CSV) or tournaments (JSON): all checked, any bad: none imported",
        description=(
            "Players from a file `railbird export players` wrote, or a spreadsheet with a\n"
            "`name` column (and `nickname`, `starter`, `id.SYSTEM` columns). A row is the\n"
            "player with the same external id, else the one player of that name, else a new\n"
            "one. Every row is checked first: a bad one is reported with its row number, and\n"
            "then nothing is imported (exit status 2).\n"
            "Tournaments from the JSON `railbird export tournaments --format json` wrote\n"
            "(a CSV of them is a report, not importable): each event checked through the\n"
            "rules; its players found in the registry by id and name, else by name, else\n"
            "added; an event already here (same id, same event) skipped, a clash refused."
        ),
        epilog="examples:\n"
        "  railbird import players players.csv --config host.toml\n"
        "  railbird import players league.json --check --config host.toml   (nothing written)\n"
        "  railbird import tournaments events.json --config host.toml",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    im.add_argument("kind", choices=IMPORTS, help="what to import")
    im.add_argument("file", help="the file (JSON or CSV, by its name's end or --format)")
    _common(im)
    im.add_argument("--format", choices=FORMATS, help="default: from the file's name")
    im.add_argument("--check", action="store_true", help="check every row, write nothing")
    im.set_defaults(func=run_import)


def _common(p) -> None:
    from railbird.commands.players import journal_args

    journal_args(p)


def _fail(what: str, msg: str) -> int:
    print(f"railbird {what}: {msg}", file=sys.stderr)
    return 2


def run_export(args) -> int:
    import sqlite3

    from railbird import private
    from railbird.commands.players import open_registry
    from railbird.competition.errors import CompetitionError
    from railbird.events import exchange as events
    from railbird.history import store
    from railbird.registry import exchange

    opened, error = open_registry(args)
    if opened is None:
        return _fail("export", error)
    journal, _registry = opened
    try:
        if args.kind == "tournaments":
            rows = events.tournaments(journal.db)
            text = events.render(rows, args.format)
        else:
            store.update(journal.db)
            rows = exchange.players(journal.db) if args.kind == "players" else (
                exchange.results(journal.db)
            )  # fmt: skip
            text = exchange.render(args.kind, rows, args.format)
    except sqlite3.Error as e:
        return _fail("export", f"journal {journal.path}: {e}")
    except CompetitionError as e:  # a stored event that does not replay
        return _fail("export", f"journal {journal.path}: {e}")
    finally:
        journal.close()
    if not args.output:
        sys.stdout.write(text)
        return 0
    try:
        private.write_whole(Path(args.output), text)  # whole or not at all, 0600
    except OSError as e:
        return _fail("export", f"--output {args.output}: {e.strerror or e}")
    print(f"{len(rows)} {args.kind} written to {args.output}", file=sys.stderr)
    return 0


def run_import(args) -> int:
    import sqlite3

    from railbird.commands.players import open_registry
    from railbird.competition.errors import CompetitionError
    from railbird.history.export import terminal_safe
    from railbird.registry import exchange

    fmt = args.format or ("json" if args.file.lower().endswith(".json") else "csv")
    if args.kind == "tournaments":
        return _import_tournaments(args, fmt)
    try:
        text = Path(args.file).read_text(encoding="utf-8-sig")  # a spreadsheet's BOM
    except (OSError, UnicodeDecodeError) as e:
        return _fail("import", f"{args.file}: {getattr(e, 'strerror', None) or e}")
    try:
        rows = exchange.read_players(text, fmt)
    except CompetitionError as e:
        return _fail("import", f"{args.file}: {e}")
    opened, error = open_registry(args)
    if opened is None:
        return _fail("import", error)
    journal, _registry = opened
    try:
        res = exchange.import_players(journal.db, rows, write=not args.check)
    except sqlite3.Error as e:
        return _fail("import", f"journal {journal.path}: {e}")
    finally:
        journal.close()
    for err in res.errors:
        print(terminal_safe(f"{args.file}: row {err.row}: {err.error}"), file=sys.stderr)
    if res.errors:
        return _fail("import", f"{len(res.errors)} bad row(s) of {len(rows)}: nothing imported")
    done = "checked, nothing written" if args.check else "imported"
    print(f"{len(rows)} row(s) {done}: {res.added} added, {res.updated} updated, "
          f"{res.unchanged} unchanged")  # fmt: skip
    return 0


def _import_tournaments(args, fmt: str) -> int:
    import sqlite3

    from railbird.commands.players import open_registry
    from railbird.competition.errors import CompetitionError
    from railbird.events import exchange as events
    from railbird.history.export import terminal_safe

    if fmt != "json":
        return _fail("import", f"{args.file}: {events.NOT_IMPORTABLE}")
    try:
        text = Path(args.file).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        return _fail("import", f"{args.file}: {getattr(e, 'strerror', None) or e}")
    try:
        rows = events.read_tournaments(text)
    except CompetitionError as e:
        return _fail("import", f"{args.file}: {e}")
    opened, error = open_registry(args)
    if opened is None:
        return _fail("import", error)
    journal, _registry = opened
    try:
        res = events.import_tournaments(journal.db, rows, write=not args.check)
    except sqlite3.Error as e:
        return _fail("import", f"journal {journal.path}: {e}")
    finally:
        journal.close()
    for err in res.errors:
        print(terminal_safe(f"{args.file}: event #{err.event}: {err.error}"), file=sys.stderr)
    if res.errors:
        return _fail("import", f"{len(res.errors)} bad event(s) of {len(rows)}: nothing imported")
    done = "checked, nothing written" if args.check else "imported"
    print(f"{len(rows)} event(s) {done}: {res.added} added, {res.skipped} already here; "
          f"{res.players_added} player(s) added")  # fmt: skip
    return 0
