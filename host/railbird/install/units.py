"""The systemd units of an installation, from the templates in
`host/railbird/data/systemd/`: the executables setup finds and the installation's paths
filled in."""

from __future__ import annotations

import shutil
import sys
from importlib import resources
from pathlib import Path

from .layout import SERVICE_USER, Layout

UNITS = ("railbird-broker.service", "railbird.service")


def railbird_command() -> str:
    """How systemd starts `railbird`: the console script of the environment setup runs
    from (a venv's), else that interpreter with `-m railbird`."""
    script = Path(sys.executable).parent / "railbird"
    if script.exists():
        return str(script)
    return f"{sys.executable} -m railbird"


def mosquitto_path() -> str:
    """mosquitto's path, or where the distribution's package puts it (not installed yet)."""
    from railbird.broker import BrokerError, find_mosquitto

    try:
        return find_mosquitto()
    except BrokerError:
        return shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def render(name: str, layout: Layout, mosquitto: str, railbird: str) -> str:
    text = resources.files("railbird").joinpath("data/systemd", name + ".in").read_text()
    fields = {
        "@USER@": SERVICE_USER,
        "@ETC@": str(layout.etc),
        "@STATE@": str(layout.state),
        "@MOSQUITTO@": mosquitto,
        "@RAILBIRD@": railbird,
    }
    for k, v in fields.items():
        text = text.replace(k, v)
    return text
