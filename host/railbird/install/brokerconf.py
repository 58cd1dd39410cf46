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


LOOPBACK = "127.0.0.1"
ANY = "0.0.0.0"


def mosquitto_conf(
    layout: Layout,
    *,
    port: int,
    listen: str,
    user: str,
    tls_port: int | None = None,
) -> str:
    """The config; `listen`: the venue interface's address the nodes reach ("0.0.0.0":
    every interface, only when asked for); `user`: the account mosquitto drops to when
    started as root ("": its default); `tls_port`: the TLS listener on `listen`, the plain
    one then on loopback only (this machine's own clients). Without TLS the plain port
    listens on loopback and on `listen` (issue 23, defect 8: never on every interface
    unasked)."""
    plain = [LOOPBACK] if tls_port is not None or listen == LOOPBACK else [LOOPBACK, listen]
    if tls_port is None and listen == ANY:
        plain = [ANY]
    template = _template("mosquitto.conf.in")
    if template.count("listener @PORT@ @BIND@") != 1:
        raise ValueError("mosquitto.conf.in: expected one `listener @PORT@ @BIND@` line")
    conf = (
        template.replace("listener @PORT@ @BIND@", "\n".join(f"listener {port} {a}" for a in plain))
        .replace("@DIR@", str(layout.etc))
        .replace("@USER@", f"user {user}" if user else "")
    )
    conf = _set(conf, "persistence_location", f"{layout.broker_state}/")
    conf = _set(conf, "log_dest", "stderr")
    if tls_port is not None:
        conf += (
            _template("mosquitto-tls.conf.in")
            .replace("@TLS_PORT@", str(tls_port))
            .replace("@BIND@", listen)
            .replace("@TLS_DIR@", str(layout.tls))
        )
    return HEADER + conf.rstrip("\n") + "\n"
