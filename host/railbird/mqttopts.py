"""Broker connection options shared by every command that talks MQTT."""

from __future__ import annotations

import os
import ssl


def add_broker_options(parser, default_user: str = "railbird-display") -> None:
    g = parser.add_argument_group("broker")
    g.add_argument(
        "--host",
        default=os.environ.get("RAILBIRD_MQTT_HOST", "127.0.0.1"),
        help="broker host name or address (env RAILBIRD_MQTT_HOST; default %(default)s)",
    )
    g.add_argument(
        "--port",
        type=int,
        default=int(os.environ.get("RAILBIRD_MQTT_PORT", "1883")),
        help="broker port (env RAILBIRD_MQTT_PORT; default %(default)s)",
    )
    g.add_argument(
        "--user",
        default=os.environ.get("RAILBIRD_MQTT_USER", default_user),
        help="user name at the broker (env RAILBIRD_MQTT_USER; default %(default)s)",
    )
    g.add_argument(
        "--password",
        default=os.environ.get("RAILBIRD_MQTT_PASSWORD"),
        help="password (env RAILBIRD_MQTT_PASSWORD; prefer the variable, a command "
        "line is visible to other users)",
    )
    g.add_argument(
        "--tls",
        action="store_true",
        default=os.environ.get("RAILBIRD_MQTT_TLS", "").lower() in ("1", "true", "yes"),
        help="connect with TLS, verifying the broker's certificate and name; give "
        "the TLS listener's --port, usually 8883 (env RAILBIRD_MQTT_TLS=1)",
    )
    g.add_argument(
        "--cafile",
        default=os.environ.get("RAILBIRD_MQTT_CAFILE") or None,
        help="PEM file of the CA that signed the broker's certificate, for --tls "
        "(env RAILBIRD_MQTT_CAFILE; default: the system's trusted CAs)",
    )


def make_client(args, client_id: str = "", *, mqtt311: bool = True, **callbacks):
    """The client of a command-line tool, built by railbird.mqttclient.new_client from the
    options above; `callbacks`: its on_connect, on_connect_fail, on_disconnect. MQTT 3.1.1
    unless `mqtt311` is False. A --cafile that cannot be read ends the command."""
    # Imported here: every `railbird` command loads this module to build its parser, and
    # paho costs ~30 ms of start-up that only the commands that connect need.
    from railbird.mqttclient import BrokerLogin, new_client

    login = BrokerLogin(
        args.host, args.port, args.user or None, args.password, args.tls, args.cafile
    )
    try:
        client, _link = new_client(
            "railbird",
            login,
            client_id=client_id,
            mqtt311=mqtt311,
            **callbacks,
        )
    except (OSError, ssl.SSLError) as e:  # missing or unreadable CA file
        raise SystemExit(f"railbird: --cafile {args.cafile}: {e}") from None
    return client
