"""A three-server NATS cluster on loopback (tests, `make soak-cluster`, trying cluster mode).

    c = LocalCluster(workdir).start()    # 3 x nats-server: JetStream, routes, MQTT gateway
    c.nats_urls                          # ["nats://127.0.0.1:PORT", ...] for the workers
    c.mqtt_ports                         # the MQTT gateway of each server, for nodes/displays
    c.kill(1)                            # SIGKILL server 1 (a crash), c.restart(1)
    c.stop()

Debian's nats-server (`apt-get install nats-server`); every port a free one, never the
machine's own 4222/1883.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from railbird.broker import free_port
from railbird.cluster.natsconf import member_conf


class ClusterError(RuntimeError):
    pass


def find_nats_server() -> str:
    for c in (shutil.which("nats-server"), "/usr/sbin/nats-server", "/usr/bin/nats-server"):
        if c and os.access(c, os.X_OK):
            return c
    raise ClusterError("nats-server is not installed; install it with: apt-get install nats-server")


class LocalCluster:
    def __init__(
        self,
        workdir,
        size: int = 3,
        host: str = "127.0.0.1",
        users=None,
        route_user: str | None = "railbird-route",
        route_password: str | None = None,
    ):
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.size = size
        self.host = host
        self.users = users
        # the routes authenticate (natsconf.member_conf): a password made per cluster
        self.route_user = route_user
        self.route_password = (
            None if route_user is None else route_password or secrets.token_urlsafe(18)
        )
        self.binary = find_nats_server()
        self.client_ports = [free_port(host) for _ in range(size)]
        self.cluster_ports = [free_port(host) for _ in range(size)]
        self.mqtt_ports = [free_port(host) for _ in range(size)]
        self.monitor_ports = [free_port(host) for _ in range(size)]
        self.procs: list[subprocess.Popen | None] = [None] * size

    @property
    def nats_urls(self) -> list[str]:
        return [f"nats://{self.host}:{p}" for p in self.client_ports]

    def name(self, i: int) -> str:
        return f"rb-nats-{i + 1}"

    def _conf(self, i: int) -> Path:
        path = self.dir / f"{self.name(i)}.conf"
        path.write_text(
            member_conf(
                self.name(i),
                self.host,
                self.client_ports[i],
                self.cluster_ports[i],
                self.mqtt_ports[i],
                [(self.host, p) for j, p in enumerate(self.cluster_ports) if j != i],
                str(self.dir / f"store-{i + 1}"),
                monitor_port=self.monitor_ports[i],
                users=self.users,
                route_user=self.route_user,
                route_password=self.route_password,
            )
        )
        return path

    def start(self, timeout: float = 30.0) -> LocalCluster:
        for i in range(self.size):
            self._spawn(i)
        self.wait_ready(timeout)
        return self

    def _spawn(self, i: int) -> None:
        with open(self.dir / f"{self.name(i)}.log", "ab") as log:
            self.procs[i] = subprocess.Popen(
                [self.binary, "-c", str(self._conf(i))],
                stdout=log,
                stderr=log,
                start_new_session=True,
            )

    def wait_ready(self, timeout: float = 30.0, members=None) -> None:
        """Every (running) member listens on its client and MQTT ports and reports JetStream
        healthy (its /healthz: the meta leader is known and its streams are current)."""
        deadline = time.monotonic() + timeout
        for i in members if members is not None else range(self.size):
            while True:
                proc = self.procs[i]
                if proc is None or proc.poll() is not None:
                    raise ClusterError(f"{self.name(i)} exited: {self.log_tail(i)}")
                if self._healthy(i):
                    break
                if time.monotonic() > deadline:
                    raise ClusterError(f"{self.name(i)} not ready: {self.log_tail(i)}")
                time.sleep(0.1)

    def _healthy(self, i: int) -> bool:
        try:
            for port in (self.client_ports[i], self.mqtt_ports[i]):
                with socket.create_connection((self.host, port), timeout=0.5):
                    pass
            url = f"http://{self.host}:{self.monitor_ports[i]}/healthz"
            with urllib.request.urlopen(url, timeout=1) as r:
                return r.status == 200
        except OSError:
            return False

    def kill(self, i: int) -> None:
        """SIGKILL member i: a crash, no goodbye to its routes or clients."""
        proc = self.procs[i]
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        self.procs[i] = None

    def restart(self, i: int, timeout: float = 30.0) -> None:
        self.kill(i)
        self._spawn(i)
        self.wait_ready(timeout, members=[i])

    def running(self, i: int) -> bool:
        proc = self.procs[i]
        return proc is not None and proc.poll() is None

    def stop(self) -> None:
        for proc in self.procs:
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for i, proc in enumerate(self.procs):
            if proc is not None:
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            self.procs[i] = None

    def log_tail(self, i: int, n: int = 15) -> str:
        try:
            lines = (self.dir / f"{self.name(i)}.log").read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-n:])

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
