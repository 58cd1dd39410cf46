"""`railbird replay`: rebuild every table from a journal and report or check it."""

from __future__ import annotations

import json
import sqlite3
import sys

HELP = "rebuild every table from a daemon journal and print a summary, its shots or its inputs"


def register(sub) -> None:
    p = sub.add_parser(
        "replay",
        help=HELP,
        description=HELP + ". The journal's inputs (raw messages, referee input, ticks) are "
        "run through a fresh pipeline exactly as the daemon does at start-up. Read-only, "
        "except that a journal of an older schema version is upgraded first.",
    )
    p.add_argument("journal", help="the daemon's SQLite journal file")
    p.add_argument(
        "--config",
        help="TOML config to replay with (default: the config the daemon stored in the journal)",
    )
    p.add_argument(
        "--shots",
        action="store_true",
        help="print the replayed shots as JSON lines (canonical, as `assemble`)",
    )
    p.add_argument(
        "--export-inputs",
        action="store_true",
        help="print the journal's MQTT inputs and ticks as `railbird assemble` input",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="compare the replayed shots and each table's final game state with the "
        "journalled ones, and the pipeline with each snapshot the journal keeps at its "
        "input; exit 1 if they differ",
    )
    p.add_argument(
        "--from-snapshot",
        action="store_true",
        help="start from the newest snapshot, as the daemon's restart does, instead of the "
        "beginning of the journal (after a retention cut: its base snapshot)",
    )
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from railbird.config import ConfigError, load
    from railbird.daemon.journal import Journal, JournalError

    # Opening a missing file would create an empty journal and "replay" nothing.
    if not Path(args.journal).is_file():
        print(f"railbird replay: {args.journal}: no such journal file", file=sys.stderr)
        return 2
    try:
        cfg = load(args.config) if args.config else None
    except (ConfigError, OSError) as e:
        print(f"railbird replay: --config {args.config}: {e}", file=sys.stderr)
        return 2
    try:
        journal = Journal(args.journal)
    except JournalError as e:
        print(f"railbird replay: {e}", file=sys.stderr)
        return 2
    try:
        return _replay(args, journal, cfg)
    except sqlite3.DatabaseError as e:  # a journal damaged past its header
        print(f"railbird replay: journal {args.journal}: cannot be read: {e}", file=sys.stderr)
        return 2
    finally:
        journal.close()


def _replay(args, journal, cfg) -> int:
    from railbird.core.pipeline import shot_json
    from railbird.daemon.offline import export_inputs, replay, stored_shots

    if args.export_inputs:
        for line in export_inputs(journal):
            sys.stdout.write(line + "\n")
        return 0
    report: dict = {}
    pipe, shots = replay(journal, cfg, latest=args.from_snapshot, report=report)
    if args.shots:
        for s in shots:
            sys.stdout.write(shot_json(s) + "\n")
    status = 0
    if args.check:
        stored = sorted(stored_shots(journal, report["start"]), key=lambda s: (s["table"], s["n"]))
        mine = sorted(shots, key=lambda s: (s["table"], s["n"]))
        if [shot_json(s) for s in stored] != [shot_json(s) for s in mine]:
            print(
                f"replay: MISMATCH: journal has {len(stored)} shots, replay {len(mine)}",
                file=sys.stderr,
            )
            status = 1
        else:
            print(f"replay: OK: {len(mine)} shots identical", file=sys.stderr)
        if report["start"]:
            print(f"replay: from the snapshot after input {report['start']}", file=sys.stderr)
        if report["snapshot_mismatches"]:
            print(
                "replay: MISMATCH: the snapshots after input(s) "
                f"{', '.join(map(str, report['snapshot_mismatches']))} differ from the replay",
                file=sys.stderr,
            )
            status = 1
        elif report["snapshots"]:
            print(f"replay: OK: {report['snapshots']} snapshot(s) identical", file=sys.stderr)
        for (venue, table), t in sorted(pipe.tables.items()):
            # the game too: every referee input (new match, concede, undo ...) replays
            row = journal.db.execute(
                "SELECT fen FROM states WHERE venue = ? AND tbl = ? ORDER BY id DESC LIMIT 1",
                (venue, table),
            ).fetchone()
            if row is not None and not _same_state(row[0], _fen(t)):
                print(
                    f"replay: MISMATCH: {venue}/{table} game state {_fen(t)} "
                    f"is not the journalled {row[0]}",
                    file=sys.stderr,
                )
                status = 1
    if not args.shots:
        summary = {"tables": {}, "counters": pipe.stats()}
        for (venue, table), t in sorted(pipe.tables.items()):
            summary["tables"][f"{venue}/{table}"] = {
                "shots": t.assembler.n - 1,
                "events": t.pos,
                "pending": t.timeline.pending,
                "shot_open": t.assembler.open,
                "game": t.game.game,
                "fen": _fen(t),
            }
        print(json.dumps(summary, indent=2, sort_keys=True))
    return status


def _same_state(journalled: str | None, replayed: str | None) -> bool:
    """The same game state, whichever form of the line the journal holds (a journal written
    before the line's second form, rules/fenlegacy.py, holds the first)."""
    if journalled == replayed:
        return True
    from railbird.rules import from_fen

    try:
        return from_fen(journalled) == from_fen(replayed)
    except Exception:  # noqa: BLE001 - unreadable: not the same
        return False


def _fen(t):
    g = t.game
    if not g.available:
        return None
    try:
        return g._result(None, g.referee)["fen"]
    except Exception:  # noqa: BLE001 - the FEN is a convenience: no FEN rather than no replay
        return None
