"""The broker's `mosquitto.conf` for an installation: the project template the tests' private
brokers use (`host/railbird/data/broker/`), filled in for production.

What differs from a test broker, and why: the password file and ACL live with the other
configuration (`/etc/railbird`), the persistence in the state directory
(`/var/lib/railbird/mosquitto`), and the log goes to standard error, i.e. the systemd
journal or `docker logs`, which rotate it (a log file would grow without end).
"""

from __future__ import annotations

import re
from importlib import resources

from .layout import Layout

HEADER = (
    "# Written by `railbird setup` from host/railbird/data/broker/mosquitto.conf.in "
    "(docs/install.md);\n# a later `railbird setup` writes it again: change the template "
    "or setup's options, not this file.\n"
)


def _template(name: str) -> str:
    return resources.files("railbird").joinpath("data/broker", name).read_text()


def _set(conf: str, directive: str, value: str) -> str:
    """`conf` with the one `directive` line's value replaced (a template without exactly
    one such line is an error here, not a silently different broker)."""
    pattern = re.compile(rf"^{re.escape(directive)} .*$", re.MULTILINE)
    found = pattern.findall(conf)
    if len(found) != 1:
        raise ValueError(f"mosquitto.conf.in: {len(found)} `{directive}` lines, expected one")
    return pattern.sub(lambda _m: f"{directive} {value}", conf)


def mosquitto_conf(
    layout: Layout,
    *,
    port: int,
    bind: str,
    user: str,
    tls_port: int | None = None,
) -> str:
    """The config; `user`: the account mosquitto drops to when started as root ("": its
    default); `tls_port`: a TLS listener there too, the plain one then on loopback only."""
    conf = (
        _template("mosquitto.conf.in")
        .replace("@PORT@", str(port))
        .replace("@BIND@", bind if tls_port is None else "127.0.0.1")
        .replace("@DIR@", str(layout.etc))
        .replace("@USER@", f"user {user}" if user else "")
    )
    conf = _set(conf, "persistence_location", f"{layout.broker_state}/")
    conf = _set(conf, "log_dest", "stderr")
    if tls_port is not None:
        conf += (
            _template("mosquitto-tls.conf.in")
            .replace("@TLS_PORT@", str(tls_port))
            .replace("@BIND@", bind)
            .replace("@TLS_DIR@", str(layout.tls))
        )
    return HEADER + conf.rstrip("\n") + "\n"
