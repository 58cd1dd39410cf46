"""The systemd units of an installation, from the templates in
`host/railbird/data/systemd/`: the executables setup finds and the installation's paths
filled in."""

from __future__ import annotations

import os
import pwd
import shutil
import stat
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


def blocked_on_the_way(path: Path, uid: int | None, gids: set[int]) -> Path | None:
    """The first directory above `path` (or `path` itself) that a process of `uid` and
    `gids` cannot pass (no search permission), or None. `uid` None: a user not made yet,
    who owns nothing and is in no group of the file's. Root passes everything."""
    if uid == 0:
        return None
    for d in [*reversed(path.parents), path]:
        try:
            st = d.stat()
        except OSError:
            return d
        if uid is not None and st.st_uid == uid:
            bit = stat.S_IXUSR
        elif st.st_gid in gids:
            bit = stat.S_IXGRP
        else:
            bit = stat.S_IXOTH
        if not st.st_mode & bit:
            return d
    return None


def unreachable_by_the_service() -> str | None:
    """Why the service user could not start what the unit's ExecStart names, or None: a
    clone in a home directory (Debian makes them 0700) holds the venv and the package, and
    the railbird unit would fail at every start with 'Permission denied'."""
    try:
        pw = pwd.getpwnam(SERVICE_USER)
        uid, gids = pw.pw_uid, {pw.pw_gid, *os.getgrouplist(SERVICE_USER, pw.pw_gid)}
    except KeyError:
        uid, gids = None, set()
    import railbird

    needed = [Path(sys.executable).resolve(), Path(railbird.__file__).resolve().parent]
    script = Path(sys.executable).parent / "railbird"
    if script.exists():
        needed.insert(0, script)
    for p in needed:
        blocked = blocked_on_the_way(p, uid, gids)
        if blocked is not None:
            mode = oct(blocked.stat().st_mode & 0o777) if blocked.exists() else "missing"
            return (
                f"the service user {SERVICE_USER} cannot reach {p}: {blocked} (mode {mode}) "
                f"is closed to it, so the railbird unit would fail at every start. Install "
                "as docs/install.md says (python3 -m venv /opt/railbird; /opt/railbird/bin/pip "
                f"install '<the clone>[flash]'; then /opt/railbird/bin/railbird setup), or "
                f"open the way: chmod o+x {blocked}"
            )
    return None


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
