"""Start and stop a private mosquitto with Railbird's own configuration.

Used by the tests, the demo and the benchmarks: each gets its own broker on a free loopback
port, with a password file, the project ACL and a persistence directory in a directory it
owns. `restart()` keeps the port and the persistence directory, so sessions and queued
messages survive as they would on a real broker restart.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from importlib import resources
from pathlib import Path

DEFAULT_USERS = {
    "railbird-host": "host-secret",
    "railbird-referee": "referee-secret",
    "railbird-display": "display-secret",
}


class BrokerError(RuntimeError):
    pass


def find_mosquitto() -> str:
    for candidate in (shutil.which("mosquitto"), "/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise BrokerError(
        "mosquitto is not installed; install it with: sudo apt-get install -y mosquitto"
    )


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _template(name: str) -> str:
    return resources.files("railbird").joinpath("data/broker", name).read_text()


class PrivateBroker:
    """A mosquitto process with the project's configuration in `workdir`."""

    def __init__(self, workdir, users: dict | None = None, port: int | None = None,
                 host: str = "127.0.0.1"):
        self.workdir = Path(workdir)
        self.host = host
        self.port = port or free_port(host)
        self.users = dict(DEFAULT_USERS)
        self.users.update(users or {})
        self.proc: subprocess.Popen | None = None
        self.binary = find_mosquitto()

    # -- configuration -------------------------------------------------------------
    def add_user(self, name: str, password: str) -> None:
        self.users[name] = password
        if self.proc is not None:
            self._write_passwords()
            self.proc.send_signal(signal.SIGHUP)  # mosquitto reloads the password file

    def _write_passwords(self) -> None:
        passwd = self.workdir / "passwd"
        passwd.write_text("")
        for name, pw in self.users.items():
            subprocess.run(["mosquitto_passwd", "-b", str(passwd), name, pw],
                           check=True, capture_output=True)
        passwd.chmod(0o600)

    def _write_config(self) -> Path:
        self.workdir.mkdir(parents=True, exist_ok=True)
        conf = (_template("mosquitto.conf.in")
                .replace("@PORT@", str(self.port))
                .replace("@BIND@", self.host)
                .replace("@DIR@", str(self.workdir))
                .replace("@USER@", "user root" if os.geteuid() == 0 else ""))
        path = self.workdir / "mosquitto.conf"
        path.write_text(conf)
        acl = self.workdir / "acl"
        acl.write_text(_template("acl"))
        acl.chmod(0o600)
        self._write_passwords()
        return path

    # -- life cycle ----------------------------------------------------------------
    def start(self, timeout: float = 10.0) -> "PrivateBroker":
        conf = self._write_config()
        log = open(self.workdir / "stderr.log", "ab")
        self.proc = subprocess.Popen([self.binary, "-c", str(conf)], stdout=log, stderr=log,
                                     start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BrokerError(f"mosquitto exited with {self.proc.returncode}: {self.log_tail()}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise BrokerError(f"mosquitto did not listen on {self.port}: {self.log_tail()}")

    def stop(self, kill: bool = False) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def restart(self) -> "PrivateBroker":
        self.stop()
        return self.start()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, n: int = 20) -> str:
        out = []
        for name in ("mosquitto.log", "stderr.log"):
            p = self.workdir / name
            if p.exists():
                out += p.read_text(errors="replace").splitlines()[-n:]
        return "\n".join(out)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
