"""The host's side: `make test-system` needs root, debootstrap and systemd-nspawn."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

PACKAGES = ("debootstrap", "systemd-container")
TOOLS = {"debootstrap": "debootstrap", "systemd-nspawn": "systemd-container", "nsenter": ""}


class HostError(RuntimeError):
    """The host cannot run the system test; the message says what to do."""


def ensure_root() -> None:
    if os.geteuid() != 0:
        raise HostError(
            "make test-system needs root (debootstrap, systemd-nspawn): sudo make test-system"
        )


def ensure_tools() -> None:
    """debootstrap and systemd-nspawn, installed with apt-get when missing."""
    missing = [pkg for tool, pkg in TOOLS.items() if pkg and shutil.which(tool) is None]
    if not missing:
        return
    cmd = ["apt-get", "install", "-y", *PACKAGES]
    if shutil.which("apt-get") is None:
        raise HostError(f"missing {', '.join(missing)}; install: {' '.join(cmd)}")
    print(f"system-test: installing {' '.join(PACKAGES)} with apt-get", file=sys.stderr)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(cmd, check=True, env=env)
