"""The command line: every command loads and documents every option."""

import argparse
import importlib
import pkgutil
import subprocess
import sys

import pytest

import railbird.commands
from railbird.cli import build_parser

COMMANDS = sorted(m.name for m in pkgutil.iter_modules(railbird.commands.__path__))


@pytest.mark.parametrize("name", COMMANDS)
def test_command_module_imports_and_registers(name):
    module = importlib.import_module(f"railbird.commands.{name}")
    assert callable(getattr(module, "register", None)), f"{name} has no register()"


def _subparsers(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    return {}


def _undocumented(parser):
    missing = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            continue
        if action.help in (None, "", argparse.SUPPRESS):
            missing.append("/".join(action.option_strings) or action.dest)
    return missing


def test_every_option_of_every_command_has_help():
    parser = build_parser()
    assert _undocumented(parser) == []
    subs = _subparsers(parser)
    assert "tail" in subs
    for name, sub in subs.items():
        assert sub.description or sub.format_usage(), name
        assert _undocumented(sub) == [], f"railbird {name}: options without help"
        for nested_name, nested in _subparsers(sub).items():
            assert _undocumented(nested) == [], f"railbird {name} {nested_name}"


def test_help_runs_as_a_console_script():
    out = subprocess.run(
        [sys.executable, "-m", "railbird", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "tail" in out and "unavailable" not in out
    out = subprocess.run(
        [sys.executable, "-m", "railbird", "tail", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for opt in (
        "--venue",
        "--table",
        "--json",
        "--count",
        "--host",
        "--port",
        "--user",
        "--password",
        "--tls",
    ):
        assert opt in out
