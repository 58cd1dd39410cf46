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
        module = importlib.import_module(f"railbird.commands.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
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
