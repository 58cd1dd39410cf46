"""Run `railbird setup` into a temporary root and use what it wrote: read its secrets, start
a mosquitto from its `mosquitto.conf`, log in to it with paho."""

from __future__ import annotations

import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import paho.mqtt.client as paho

from railbird.broker import find_mosquitto, free_port


@dataclass
class Install:
    root: Path
    port: int  # the broker's plain port
    tls_port: int | None = None
    listen: str = "127.0.0.1"  # where the TLS listener is (the plain one: loopback too)

    @property
    def etc(self) -> Path:
        return self.root / "etc" / "railbird"

    def secrets(self) -> dict:
        return tomllib.loads((self.etc / "secrets.toml").read_text())

    def host(self) -> dict:
        return tomllib.loads((self.etc / "host.toml").read_text())

    def node(self, node: str) -> dict:
        return json.loads((self.etc / "nodes" / f"{node}.json").read_text())

    def passwd_users(self) -> list[str]:
        lines = (self.etc / "passwd").read_text().splitlines()
        return [line.split(":", 1)[0] for line in lines if line.strip()]


_KEY: list[bytes] = []


def _seed_venue_key(root: Path) -> None:
    """Put one venue key, made once per process, where setup keeps its own: an RSA-3072 key
    costs openssl about 0.4 s, and some 40 setups run in the suite. Setup keeps a key it
    finds (a second run must not change the key every board checks against), so this is
    the path of a later run; test_secret_files_are_0600 has setup make its own."""
    from railbird import venuekey

    if not _KEY:
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            venuekey.make(Path(d) / "k.pem")
            _KEY.append((Path(d) / "k.pem").read_bytes())
    key = root / "etc" / "railbird" / "venue-key.pem"
    if not key.exists():
        key.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(_KEY[0])


def setup(
    root: Path,
    *args: str,
    port: int | None = None,
    env=None,
    check=True,
    seed_key: bool | None = None,
    local: bool = True,
):
    """`railbird setup --root ROOT --non-interactive` with `args` (the broker on loopback at
    a free `port`, TLS too on a free port the first time, the nodes dialling 127.0.0.1) ->
    (Install, CompletedProcess). local=False: setup's own defaults for the broker's address
    and the listen address (this machine's address on the default route). seed_key:
    the venue key made once for all (_seed_venue_key), not by this run."""
    port = port or free_port()
    if check if seed_key is None else seed_key:
        _seed_venue_key(Path(root))
    choices = Path(root) / "etc" / "railbird" / "setup.json"
    if not choices.exists() and "--tls-port" not in args:
        # TLS is the default: its listener too on a free port (a later run keeps it)
        args = (*args, "--tls-port", str(free_port()))
    cmd = [
        sys.executable,
        "-m",
        "railbird",
        "setup",
        "--root",
        str(root),
        "--non-interactive",
        "--broker-port",
        str(port),
        *(("--broker-address", "127.0.0.1") if local else ()),
        # in Docker the containers listen on their own interfaces (the compose file's ports)
        *(("--listen-address", "127.0.0.1") if local and "--docker" not in args else ()),
        *args,
    ]
    r = subprocess.run(
        cmd, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=120
    )
    if check:
        assert r.returncode == 0, f"railbird setup failed ({r.returncode}):\n{r.stdout}{r.stderr}"
    tls_port, listen = None, "127.0.0.1"
    if choices.exists():
        c = json.loads(choices.read_text())
        tls_port = c["tls_port"] if c["tls"] else None
        # (`broker_bind`: the key of an installation from before --listen-address)
        addr = c.get("listen_address") or c.get("broker_bind", "0.0.0.0")
        listen = "127.0.0.1" if addr == "0.0.0.0" else addr
    return Install(Path(root), port, tls_port, listen), r


class Broker:
    """mosquitto started from the installation's own mosquitto.conf, as its unit does."""

    def __init__(self, inst: Install):
        self.inst = inst
        self.log = inst.root / "broker.log"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 10) -> Broker:
        conf = self.inst.etc / "mosquitto.conf"
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [find_mosquitto(), "-c", str(conf)], stdout=log, stderr=log
            )
        ports = [("127.0.0.1", self.inst.port)]
        ports += [(self.inst.listen, self.inst.tls_port)] if self.inst.tls_port else []
        deadline = time.monotonic() + timeout
        while ports:
            assert self.proc.poll() is None, f"mosquitto exited: {self.log.read_text()}"
            assert time.monotonic() < deadline, f"no listener on {ports}: {self.log.read_text()}"
            try:
                with socket.create_connection(ports[0], timeout=0.2):
                    ports.pop(0)
            except OSError:
                time.sleep(0.05)
        return self

    def reload(self) -> None:
        """SIGHUP, as `systemctl reload railbird-broker` sends: new logins and ACL, taken
        up in mosquitto's main loop a moment later (the caller waits for a new login)."""
        self.proc.send_signal(signal.SIGHUP)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)

    def __enter__(self):
        # `with Broker(inst).start()` once started a second mosquitto here and left the
        # first running after the test: one broker per Broker, whichever way it is entered
        if self.proc is not None and self.proc.poll() is None:
            return self
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def login(
    port: int,
    user: str,
    password: str,
    tls: dict | None = None,
    client_id: str = "",
    host: str = "127.0.0.1",
):
    """Connect to `host` and wait for the CONNACK -> (client, reason code); the caller
    disconnects. `tls`: keyword arguments of `paho.Client.tls_set`."""
    c = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=paho.MQTTv5)
    c.username_pw_set(user, password)
    if tls is not None:
        c.tls_set(tls_version=ssl.PROTOCOL_TLS_CLIENT, **tls)
    got, answered = {}, threading.Event()

    def on_connect(client, userdata, flags, rc, props):
        got["rc"] = rc
        answered.set()

    c.on_connect = on_connect
    c.connect(host, port)
    c.loop_start()
    assert answered.wait(5), f"no CONNACK for {user}"
    return c, got["rc"]


def accepted(
    port: int, user: str, password: str, tls: dict | None = None, host: str = "127.0.0.1"
) -> bool:
    c, rc = login(port, user, password, tls, host=host)
    c.disconnect()
    c.loop_stop()
    return not rc.is_failure
