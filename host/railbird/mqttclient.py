"""The one way the host builds an MQTT client (paho-mqtt 2.x).

Every module that connects to a broker — the daemon's ingest, the display feeds, the
host watch of the boards, the simulated referee console, calibration, the command-line
tools and the benchmarks — gets its client from `new_client`, so they cannot drift apart
again (the feeds' 1-30 s reconnect delay, when the ingest's was 0.2-5 s, was found only
after a failed run):

- the client id, the MQTT version, the login and TLS (the broker's certificate and name
  verified, against `cafile` or the system's CAs) set the same way;
- one reconnect policy, `RECONNECT_FIRST_S` doubling to `RECONNECT_MAX_S`;
- a `Link` that counts failed attempts and lost connections and logs one line when an
  outage begins (with its reason) and one when it ends, never one per retry.

The module's own callbacks are handed to `new_client`, which runs the `Link`'s
bookkeeping before each.
"""

from __future__ import annotations

import logging
import ssl
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import paho.mqtt.client as mqtt

log = logging.getLogger("railbird.mqtt")

# A broker restart or a venue machine booting: back within seconds of the broker, without
# hammering a broker that is down (paho's own default is 1-120 s).
RECONNECT_FIRST_S = 0.2
RECONNECT_MAX_S = 5.0


@dataclass(frozen=True, slots=True)
class BrokerLogin:
    """Where a client connects and as whom. `password` None: no password sent."""

    host: str = "127.0.0.1"
    port: int = 1883
    user: str | None = None
    password: str | None = None
    tls: bool = False
    cafile: str | None = None  # PEM of the CA that signed the broker's certificate

    @property
    def where(self) -> str:
        return f"{self.host}:{self.port}{' with TLS' if self.tls else ''}"


class Link:
    """A client's connection seen as outages: `failures` failed connection attempts,
    `losses` connections lost, `reason` why the current outage began ("" while connected
    or before the first attempt). Written by paho's network thread only."""

    def __init__(self, name: str, where: str):
        self.name = name
        self.where = where
        self.failures = 0
        self.losses = 0
        self.outages = 0
        self.reason = ""
        self.down = False

    def _begin(self, reason: str, line: str) -> None:
        self.reason = reason
        if not self.down:
            self.down = True
            self.outages += 1
            log.warning("%s: %s %s: %s; retrying", self.name, line, self.where, reason)

    def connect_failed(self) -> None:
        # paho calls on_connect_fail inside its `except OSError` around the attempt, so the
        # reason is the exception being handled: refused, unreachable, a TLS failure
        e = sys.exc_info()[1]
        self.failures += 1
        self._begin(
            f"{type(e).__name__}: {e}" if e is not None else "unknown error", "cannot reach"
        )

    def refused(self, reason_code: Any) -> None:
        self.failures += 1
        self._begin(f"refused: {reason_code}", "the broker at")

    def lost(self, reason_code: Any) -> None:
        self.losses += 1
        self._begin(str(reason_code), "lost the connection to")

    def connected(self) -> None:
        if self.down:
            log.info(
                "%s: connected to %s again (%d failed attempt(s) so far)",
                self.name,
                self.where,
                self.failures,
            )
        self.down = False
        self.reason = ""

    def stats(self) -> dict[str, int]:
        return {"connect_failures": self.failures, "connections_lost": self.losses}


Callback = Callable[..., Any]


def new_client(
    name: str,
    login: BrokerLogin,
    *,
    client_id: str = "",
    mqtt311: bool = False,
    manual_ack: bool = False,
    clean_session: bool | None = None,
    max_queued: int = 0,
    on_connect: Callback | None = None,
    on_connect_fail: Callback | None = None,
    on_disconnect: Callback | None = None,
) -> tuple[mqtt.Client, Link]:
    """A paho client (MQTT 5 unless `mqtt311`) and its `Link`. `name` prefixes the log
    lines ("feeds", "ingest", ...). Raises OSError or ssl.SSLError when `login.cafile`
    cannot be read. The callbacks are paho 2.x's (CallbackAPIVersion.VERSION2)."""
    kwargs: dict[str, Any] = {}
    if clean_session is not None:  # MQTT 3.1.1 only (MQTT 5 says clean_start at connect)
        kwargs["clean_session"] = clean_session
    client = mqtt.Client(
        mqtt.CallbackAPIVersion.VERSION2,
        client_id=client_id,
        protocol=mqtt.MQTTv311 if mqtt311 else mqtt.MQTTv5,
        manual_ack=manual_ack,
        **kwargs,
    )
    if login.user:
        client.username_pw_set(login.user, login.password or None)
    if login.tls:
        client.tls_set(ca_certs=login.cafile or None, cert_reqs=ssl.CERT_REQUIRED)
    if max_queued:
        client.max_queued_messages_set(max_queued)
    client.reconnect_delay_set(RECONNECT_FIRST_S, RECONNECT_MAX_S)
    link = Link(name, login.where)

    def connected(c: mqtt.Client, userdata: Any, flags: Any, reason_code: Any, *rest: Any) -> None:
        if reason_code.is_failure:
            link.refused(reason_code)
        else:
            link.connected()
        if on_connect is not None:
            on_connect(c, userdata, flags, reason_code, *rest)

    def connect_failed(c: mqtt.Client, userdata: Any) -> None:
        link.connect_failed()
        if on_connect_fail is not None:
            on_connect_fail(c, userdata)

    def disconnected(
        c: mqtt.Client, userdata: Any, flags: Any, reason_code: Any, *rest: Any
    ) -> None:
        # our own disconnect() is no outage; a refused CONNACK disconnects too: one outage
        if reason_code.is_failure and not link.down:
            link.lost(reason_code)
        if on_disconnect is not None:
            on_disconnect(c, userdata, flags, reason_code, *rest)

    client.on_connect = connected
    client.on_connect_fail = connect_failed
    client.on_disconnect = disconnected
    return client, link
