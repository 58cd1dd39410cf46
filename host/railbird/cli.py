"""The `railbird` command line.

Each sub-command lives in its own module under `railbird.commands` and exposes
`register(subparsers)`, which adds its parser and sets `func` (called with the parsed
arguments, returning an exit status). New commands need no change here.
"""

import argparse
import importlib
import pkgutil
import sys

import railbird
import railbird.commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="railbird",
        description=(
            "Railbird: pocket and rail sensors in, rules-correct scores out. "
            "Run 'railbird COMMAND --help' for the options of one command."
        ),
    )
    parser.add_argument("--version", action="version", version=f"railbird {railbird.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(railbird.commands.__path__), key=lambda m: m.name):
        try:
            module = importlib.import_module(f"railbird.commands.{info.name}")
        except Exception as exc:  # noqa: BLE001 - one broken command must not take down the rest
            _register_broken(sub, info.name, exc)
            continue
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


def _register_broken(sub, name: str, exc: Exception) -> None:
    reason = f"{type(exc).__name__}: {exc}"
    p = sub.add_parser(name, help=f"(unavailable: {reason})", add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)

    def fail(_args) -> int:
        print(f"railbird {name}: this command cannot load: {reason}", file=sys.stderr)
        return 1

    p.set_defaults(func=fail)


# A command whose actions have a default: `railbird nodes --config host.toml` is `railbird
# nodes list --config host.toml`. argparse alone would read the first option's value as the
# action ("invalid choice: 'host.toml'").
DEFAULT_ACTIONS = {"nodes": "list"}


def with_default_action(argv: list[str]) -> list[str]:
    if len(argv) >= 2 and argv[0] in DEFAULT_ACTIONS:
        first = argv[1]
        if first.startswith("-") and first not in ("-h", "--help"):
            return [argv[0], DEFAULT_ACTIONS[argv[0]], *argv[1:]]
    return argv


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(with_default_action(list(sys.argv[1:] if argv is None else argv)))
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
