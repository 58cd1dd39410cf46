"""What `railbird setup` changes on the machine itself, only for the root `/` and only as
root: mosquitto from the distribution's package and the service user. Elsewhere (a trial
root, no root rights, `--no-install`) it says the exact command instead."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from pathlib import Path

from railbird.broker import BrokerError, find_mosquitto

from .layout import SERVICE_USER, Layout

APT_PACKAGES = ("mosquitto", "mosquitto-clients")
INSTALL_MOSQUITTO = "apt-get install -y " + " ".join(APT_PACKAGES)
ADD_USER = (
    f"useradd --system --user-group --home-dir /var/lib/railbird --no-create-home "
    f"--shell /usr/sbin/nologin {SERVICE_USER}"
)


def may_change(layout: Layout, allowed: bool) -> bool:
    return allowed and layout.system and os.geteuid() == 0


def has_mosquitto() -> bool:
    try:
        find_mosquitto()
        return True
    except BrokerError:
        return False


def has_user() -> bool:
    try:
        pwd.getpwnam(SERVICE_USER)
        return True
    except KeyError:
        return False


def systemd_runs() -> bool:
    return Path("/run/systemd/system").is_dir()


def install_mosquitto(say) -> bool:
    """apt-get install mosquitto (after an `apt-get update` if the lists are stale); the
    package's own mosquitto.service would hold port 1883, so it is disabled."""
    if shutil.which("apt-get") is None:
        say(f"no apt-get here: install mosquitto 2 with your package manager ({INSTALL_MOSQUITTO})")
        return False
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "install", "-y", "--no-install-recommends", *APT_PACKAGES]
    say("installing mosquitto: " + " ".join(cmd))
    if subprocess.run(cmd, env=env).returncode != 0:
        subprocess.run(["apt-get", "update"], env=env)
        if subprocess.run(cmd, env=env).returncode != 0:
            say(f"apt-get failed: install mosquitto yourself ({INSTALL_MOSQUITTO})")
            return False
    if systemd_runs() and shutil.which("systemctl"):
        say("disabling the package's own mosquitto.service (railbird-broker takes its port)")
        subprocess.run(["systemctl", "disable", "--now", "mosquitto"])
    return has_mosquitto()


DISTRIBUTION_UNIT = "mosquitto.service"  # what Debian's mosquitto package starts on 1883


def stop_distribution_mosquitto(say) -> bool:
    """`systemctl disable --now mosquitto`, asked for by the owner: the distribution's broker
    holds the port railbird-broker needs. True once it is stopped."""
    if not (systemd_runs() and shutil.which("systemctl")):
        say("systemd does not run here: stop the other mosquitto yourself")
        return False
    say("stopping and disabling the distribution's broker: systemctl disable --now mosquitto")
    return subprocess.run(["systemctl", "disable", "--now", DISTRIBUTION_UNIT]).returncode == 0


def add_user(say) -> bool:
    say(f"adding the service user: {ADD_USER}")
    return subprocess.run(ADD_USER.split()).returncode == 0
