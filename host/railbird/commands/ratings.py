"""`railbird ratings`: the players' ratings the host keeps (docs/events.md, "Ratings"):
list them, refit them from the match history, or check that what is kept is what the
history gives."""

from __future__ import annotations

import argparse
import json
import sys

HELP = "the players' ratings: list, recompute from the history, check; the handicap chart"
FORMATS = ("table", "json", "csv")


def register(sub) -> None:
    p = sub.add_parser(
        "ratings",
        help=HELP,
        description=(
            "Ratings per rack on the scale leagues use (100 points = 2:1 odds per rack),\n"
            "fitted over every rack result in the match history, each player anchored at the\n"
            "starter rating the director gave (`railbird players edit N --rating R`, else\n"
            "500). The host refits them when a match ends; `recompute` refits them from the\n"
            "history, `check` says whether what is kept is what the history gives."
        ),
        epilog="examples:\n"
        "  railbird ratings list --config host.toml\n"
        "  railbird ratings recompute --config host.toml\n"
        "  railbird ratings check --config host.toml        (exit status 1: they differ)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    ls = actions.add_parser("list", help="the kept ratings, best first", description="List.")
    _common(ls)
    ls.add_argument("--format", choices=FORMATS, default="table", help="default: table")
    ls.set_defaults(func=run_list)
    rc = actions.add_parser(
        "recompute", help="refit every rating from the match history", description="Refit."
    )
    _common(rc)
    rc.set_defaults(func=run_recompute)
    ck = actions.add_parser(
        "check",
        help="compare the kept ratings with a refit from the history (exit 1: they differ)",
        description="Refit from the history without writing, and compare.",
    )
    _common(ck)
    ck.set_defaults(func=run_check)
    ch = actions.add_parser(
        "chart",
        help="show, set or clear the handicap chart: rating gaps to races",
        description="The director's chart: bands GAP:STRONGER-WEAKER from a gap of 0 up, e.g. "
        "'0:5-5 50:5-4 100:5-3 150:6-3' (a gap of 100-149: 5 for the stronger, 3 for the "
        "weaker). Without SPEC: the chart as set.",
    )
    _common(ch)
    ch.add_argument("spec", nargs="?", help="the bands, e.g. '0:5-5 50:5-4 100:5-3'")
    ch.add_argument("--clear", action="store_true", help="no handicap: every race even")
    ch.set_defaults(func=run_chart)
    rc2 = actions.add_parser(
        "race",
        help="the handicapped races of two rated players, by the chart",
        description="The races the chart gives players A and B (registry ids), from their "
        "kept ratings.",
    )
    _common(rc2)
    rc2.add_argument("a", type=int, help="a player's id")
    rc2.add_argument("b", type=int, help="the other's id")
    rc2.set_defaults(func=run_race)
    p.set_defaults(func=lambda _args: _usage(p))


def _common(p) -> None:
    from railbird.commands.players import journal_args

    journal_args(p)


def _usage(p) -> int:
    from railbird.commands.players import usage

    return usage(p)


def _fail(msg: str) -> int:
    print(f"railbird ratings: {msg}", file=sys.stderr)
    return 2


def _run(args, action) -> int:
    from railbird.commands.players import with_registry
    from railbird.history import store

    def fold_then(journal, registry) -> int:
        store.update(journal.db)  # a journal the daemon has not folded yet
        return action(journal.db, registry)

    return with_registry(args, fold_then, "ratings")


def rows(db, registry) -> list[dict]:
    """The kept ratings with the players' names and external ids, best first."""
    from railbird.registry import ratings

    out = []
    for r in ratings.kept(db).ratings.values():
        p = registry.get(r.player)
        out.append(
            {
                "id": p.id,
                "name": p.name,
                "rating": r.rating,
                "starter": r.starter,
                "racks": r.racks,
                "won": r.won,
                "established": r.established,
                "external": dict(p.external),
            }
        )
    out.sort(key=lambda x: (-x["rating"], x["name"], x["id"]))
    return out


def run_list(args) -> int:
    def act(db, registry) -> int:
        from railbird.history.export import to_csv, to_table

        found = rows(db, registry)
        if args.format == "json":
            print(json.dumps({"ratings": found}, indent=1, ensure_ascii=False))
            return 0
        cols = ("id", "name", "rating", "starter", "racks", "won", "established")
        flat = [r | {"established": "yes" if r["established"] else "no"} for r in found]
        if args.format == "csv":
            sys.stdout.write(to_csv(cols, flat))
        elif not found:
            print("no ratings kept yet (the host fits them when a match ends)")
        else:
            sys.stdout.write(to_table(cols, flat))
        return 0

    return _run(args, act)


def run_recompute(args) -> int:
    def act(db, registry) -> int:
        from railbird.registry import ratings

        k = ratings.recompute(db)
        print(f"{len(k.ratings)} player(s) rated from {len(k.matches)} match(es)")
        return 0

    return _run(args, act)


def run_check(args) -> int:
    def act(db, registry) -> int:
        from railbird.registry import ratings

        now, kept = ratings.compute(db), ratings.kept(db)
        differ = [
            p
            for p in sorted(set(now.ratings) | set(kept.ratings))
            if now.ratings.get(p) != kept.ratings.get(p)
        ]
        series = sum(a != b for a, b in zip(now.matches, kept.matches, strict=False))
        series += abs(len(now.matches) - len(kept.matches))
        if not differ and not series:
            print(f"the kept ratings are the history's: {len(now.ratings)} player(s), "
                  f"{len(now.matches)} rated match(es)")  # fmt: skip
            return 0
        for p in differ:
            a, b = kept.ratings.get(p), now.ratings.get(p)
            print(f"player {p}: kept {a.rating if a else None}, history {b.rating if b else None}")
        print(f"{len(differ)} rating(s) and {series} rated match(es) differ "
              "(railbird ratings recompute refits them)")  # fmt: skip
        return 1

    return _run(args, act)


def run_chart(args) -> int:
    def act(db, registry) -> int:
        from railbird.competition import handicap
        from railbird.registry import ratings

        if args.clear:
            ratings.set_chart(db, None)
            print("no handicap chart: races are even")
        elif args.spec:
            ratings.set_chart(db, handicap.parse(args.spec))
        c = ratings.chart(db)
        if c is not None:
            print(f"handicap chart: {c.text()}")
        elif not args.clear:
            print("no handicap chart")
        return 0

    return _run(args, act)


def run_race(args) -> int:
    def act(db, registry) -> int:
        from railbird.registry import ratings

        a, b = registry.resolve(args.a), registry.resolve(args.b)
        got = ratings.races(db, a.id, b.id)
        if got is None:
            why = "no handicap chart" if ratings.chart(db) is None else "not both rated yet"
            return _fail(f"{a.name} v {b.name}: {why}")
        from railbird.history.export import terminal_safe

        print(terminal_safe(f"{a.name} races to {got[0]}, {b.name} to {got[1]}"))
        return 0

    return _run(args, act)
