"""`railbird players`: the players registry kept in the host's journal (docs/events.md,
"Players"): add, list or search, rename, edit, merge duplicates."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HELP = "the players registry: add, list or search, rename, edit, merge duplicates"
FORMATS = ("table", "json")


def register(sub) -> None:
    p = sub.add_parser(
        "players",
        help=HELP,
        description=(
            "The players registry the host keeps in its journal: the people its events and\n"
            "match forms pick from. Names are trimmed, at most 64 characters and free of\n"
            "control characters; a name already registered is refused unless --same-name\n"
            "says it is another person. A duplicate merged into a player is no longer listed;\n"
            "its id still resolves to that player."
        ),
        epilog="examples:\n"
        "  railbird players add 'Ann Lee' --nickname Annie --rating 540 --id fargo=12345 "
        "--config host.toml\n"
        "  railbird players list --config host.toml\n"
        "  railbird players list an --config host.toml       (names or nicknames from 'an')\n"
        "  railbird players rename 3 'Ann Lee-Smith' --config host.toml\n"
        "  railbird players merge 3 7 --config host.toml     (7 was a duplicate of 3)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION")

    add = actions.add_parser("add", help="register a player", description="Register a player.")
    journal_args(add)
    add.add_argument("name", help="the player's name")
    _fields(add)
    add.add_argument(
        "--same-name",
        action="store_true",
        help="another person of a name already registered (else such a name is refused)",
    )
    add.set_defaults(func=run_add)

    ls = actions.add_parser(
        "list",
        help="list the players, or those whose name, a word of it or nickname starts with PREFIX",
        description="List the registered players by name (merged duplicates left out), or "
        "search: case and accents are ignored.",
    )
    journal_args(ls)
    ls.add_argument("prefix", nargs="?", help="only players whose name, a word of their name "
                    "or their nickname begins with this")  # fmt: skip
    ls.add_argument(
        "--format", choices=FORMATS, default="table", help="output format (default: table)"
    )
    ls.set_defaults(func=run_list)

    rn = actions.add_parser("rename", help="change a player's name", description="Rename.")
    journal_args(rn)
    rn.add_argument("player", type=int, help="the player's id")
    rn.add_argument("name", help="the new name")
    rn.add_argument(
        "--same-name", action="store_true", help="the new name is another registered person's"
    )
    rn.set_defaults(func=run_rename)

    ed = actions.add_parser(
        "edit",
        help="change a player's nickname, rating or external ids",
        description="Change what is given; the rest stays. An empty value clears it "
        "(--nickname '', --rating '', --id fargo=).",
    )
    journal_args(ed)
    ed.add_argument("player", type=int, help="the player's id")
    _fields(ed)
    ed.set_defaults(func=run_edit)

    mg = actions.add_parser(
        "merge",
        help="merge a duplicate (DROP) into a player (KEEP)",
        description="DROP is a duplicate of KEEP: it is no longer listed, its id resolves to "
        "KEEP, and KEEP takes its nickname, rating and external ids where it has none.",
    )
    journal_args(mg)
    mg.add_argument("keep", type=int, help="the id of the player who stays")
    mg.add_argument("drop", type=int, help="the id of the duplicate")
    mg.set_defaults(func=run_merge)
    p.set_defaults(func=lambda _args: usage(p))


def journal_args(p) -> None:
    """--journal and --config, as every command on the registry's journal takes them."""
    p.add_argument("--journal", help="the daemon's SQLite journal (default: `journal` of --config)")
    p.add_argument("--config", help="the host's TOML config, for its journal")


def _fields(p) -> None:
    p.add_argument("--nickname", help="a nickname, shown and searched beside the name")
    p.add_argument("--rating", help="a rating, a whole number from 0 to 9999")
    p.add_argument(
        "--id",
        dest="ids",
        action="append",
        default=[],
        metavar="SYSTEM=ID",
        help="an external id, e.g. fargo=12345 or league=A-77 (repeatable)",
    )


def usage(p) -> int:
    p.print_help(sys.stderr)
    return 2


def _fail(msg: str, what: str = "players") -> int:
    print(f"railbird {what}: {msg}", file=sys.stderr)
    return 2


def open_registry(args):
    """(journal, registry) or an error message."""
    from railbird.config import ConfigError, load
    from railbird.daemon.journal import Journal, JournalError
    from railbird.registry.players import PlayerRegistry

    path = args.journal
    if not path and args.config:
        try:
            path = load(args.config).journal
        except (ConfigError, OSError) as e:
            return None, f"--config {args.config}: {e}"
    if not path:
        return None, "give --journal, or --config with the host's journal"
    if not Path(path).is_file():  # opening a missing file would make an empty journal
        return None, f"{path}: no such journal file (the host creates it when it first runs)"
    try:
        journal = Journal(path)
    except JournalError as e:
        return None, str(e)
    return (journal, PlayerRegistry(journal.db)), None


def with_registry(args, action, what: str = "players") -> int:
    """`action(journal, registry)` on the journal the arguments name -> its exit status; a
    refusal or a busy journal is one line on standard error and status 2."""
    import sqlite3

    from railbird.competition.errors import CompetitionError

    opened, error = open_registry(args)
    if opened is None:
        return _fail(error, what)
    journal, registry = opened
    try:
        return action(journal, registry)
    except CompetitionError as e:
        return _fail(str(e), what)
    except sqlite3.OperationalError as e:  # a daemon holding the journal past BUSY_MS
        return _fail(f"journal {journal.path}: {e}", what)
    finally:
        journal.close()


def _run(args, action) -> int:
    return with_registry(args, lambda _journal, registry: action(registry))


def _ids(raw: list[str], clearing: bool) -> list[tuple[str, str]]:
    from railbird.competition.errors import InvalidName

    out = []
    for item in raw:
        system, sep, value = item.partition("=")
        if not sep or (not value and not clearing):
            raise InvalidName(f"--id takes SYSTEM=ID, e.g. fargo=12345 (got {item!r})")
        out.append((system.strip(), value))
    return out


def _rating(text: str | None) -> int | None:
    from railbird.competition.errors import InvalidName

    if text is None or not text.strip():
        return None
    try:
        return int(text)
    except ValueError:
        raise InvalidName(f"a rating is a whole number from 0 to 9999 (got {text!r})") from None


def _line(p) -> str:
    from railbird.history.export import terminal_safe

    extra = [f"'{p.nickname}'"] if p.nickname else []
    extra += [f"rating {p.rating}"] if p.rating is not None else []
    extra += [f"{s} {v}" for s, v in p.external]
    tail = f" ({', '.join(extra)})" if extra else ""
    return terminal_safe(f"{p.id}: {p.name}{tail}")


def run_add(args) -> int:
    def act(reg) -> int:
        p = reg.add(args.name, args.nickname, _rating(args.rating), _ids(args.ids, False),
                    same_name=args.same_name)  # fmt: skip
        print(f"added player {_line(p)}")
        return 0

    return _run(args, act)


def run_list(args) -> int:
    def act(reg) -> int:
        found = reg.search(args.prefix, limit=10_000) if args.prefix else reg.listed()
        if args.format == "json":
            doc = {"players": [_as_dict(p, reg.aliases(p.id)) for p in found]}
            print(json.dumps(doc, indent=2, ensure_ascii=False))
            return 0
        from railbird.history.export import to_table

        rows = [
            {
                "id": p.id,
                "name": p.name,
                "nickname": p.nickname,
                "rating": p.rating,
                "ids": " ".join(f"{s}={v}" for s, v in p.external) or None,
            }
            for p in found
        ]
        sys.stdout.write(to_table(("id", "name", "nickname", "rating", "ids"), rows))
        return 0

    return _run(args, act)


def _as_dict(p, aliases: list[str]) -> dict:
    return {
        "id": p.id,
        "name": p.name,
        "nickname": p.nickname,
        "rating": p.rating,
        "external": dict(p.external),
        "aliases": aliases,
    }


def run_rename(args) -> int:
    def act(reg) -> int:
        old = reg.get(args.player).name
        p = reg.rename(args.player, args.name, same_name=args.same_name)
        from railbird.history.export import terminal_safe

        print(terminal_safe(f"renamed player {p.id}: {old} -> {p.name}"))
        return 0

    return _run(args, act)


def run_edit(args) -> int:
    def act(reg) -> int:
        changes: dict = {}
        if args.nickname is not None:
            changes["nickname"] = args.nickname
        if args.rating is not None:
            changes["rating"] = _rating(args.rating)
        p = reg.edit(args.player, external=_ids(args.ids, True), **changes)
        print(f"player {_line(p)}")
        return 0

    return _run(args, act)


def run_merge(args) -> int:
    def act(reg) -> int:
        dropped = reg.get(args.drop)
        p = reg.merge(args.keep, args.drop)
        from railbird.history.export import terminal_safe

        print(terminal_safe(f"merged player {dropped.id} ({dropped.name}) into ") + _line(p))
        return 0

    return _run(args, act)
