"""Start and stop a private mosquitto with Railbird's own configuration.

Used by the tests, the demo and the benchmarks: each gets its own broker on a free loopback
port, with a password file, the project ACL (`railbird.access.mosquitto_acl`) and a
persistence directory in a directory it owns. `restart()` keeps the port and the
persistence directory, so sessions and queued messages survive as they would on a real
broker restart.

`PrivateBroker(dir, acl=text)` uses that ACL instead of the project's; `confined_acl(venue,
tables)` is the project's with each node confined to its own table (`python -m railbird.broker
acl --config host.toml` prints it for a real broker, `python -m railbird.broker acl` the
project's).

`PrivateBroker(dir, tls=True)` adds a TLS listener on `tls_port` (the plain one stays) with a
throwaway CA and a server certificate for 127.0.0.1/localhost made in `dir/tls` with the
`openssl` binary; clients trust `cafile`. `make_ca()` makes another CA, for clients that
must be refused.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

from railbird import access
from railbird.private import write_private

DEFAULT_USERS = {
    "railbird-host": "host-secret",
    "railbird-referee": "referee-secret",
    "railbird-display": "display-secret",
}


class BrokerError(RuntimeError):
    pass


def find_mosquitto() -> str:
    for candidate in (
        shutil.which("mosquitto"),
        "/usr/sbin/mosquitto",
        "/usr/local/sbin/mosquitto",
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise BrokerError(
        "mosquitto is not installed; install it with: sudo apt-get install -y mosquitto"
    )


def _ephemeral_range() -> tuple[int, int]:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low, high = (int(x) for x in f.read().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


_handed_out: set[int] = set()
# Its own generator: a test that seeds `random` must not make every worker pick alike.
_pick = random.Random()


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on, for a broker or server about to start.

    Picked below the kernel's ephemeral range: a port from bind(0) is one the kernel also
    hands out as the local port of outgoing connections, so between this call and the
    server's bind another process's connection could take it ("Address already in use").
    Random within 20000 up to the range, never the same twice in one process; bind(0) only
    if none of 50 tries binds."""
    low, _ = _ephemeral_range()
    top = max(low - 1, 20001)
    for _ in range(50):
        port = _pick.randint(20000, top)
        if port in _handed_out:
            continue
        with socket.socket() as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _openssl(*args: str, cwd: Path) -> None:
    exe = shutil.which("openssl")
    if exe is None:
        raise BrokerError(
            "openssl is not installed (needed for a TLS test broker); install it "
            "with: sudo apt-get install -y openssl"
        )
    r = subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True)
    if r.returncode:
        raise BrokerError(f"openssl {args[0]} failed: {r.stderr.strip()}")


_EC = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")


def make_ca(
    directory, name: str = "ca", cn: str = "Railbird test CA", days: int = 7
) -> tuple[Path, Path]:
    """A self-signed CA (P-256) in `directory`: (`<name>.crt`, `<name>.key`)."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    crt, key = d / f"{name}.crt", d / f"{name}.key"
    _openssl(
        "req",
        "-x509",
        *_EC,
        "-keyout",
        key.name,
        "-out",
        crt.name,
        "-days",
        str(days),
        "-subj",
        f"/CN={cn}",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
        cwd=d,
    )
    key.chmod(0o600)
    return crt, key


def make_server_cert(
    directory, ca_crt: Path, ca_key: Path, names=("127.0.0.1", "localhost"), days: int = 7
) -> tuple[Path, Path]:
    """A server certificate signed by the CA, with `names` (IP addresses or DNS names) as
    subjectAltName: (`server.crt`, `server.key`) in `directory`."""
    d = Path(directory)
    crt, key, csr, ext = d / "server.crt", d / "server.key", d / "server.csr", d / "server.ext"
    san = ",".join(
        ("IP:" if n.replace(".", "").isdigit() or ":" in n else "DNS:") + n for n in names
    )
    ext.write_text(
        f"subjectAltName={san}\nbasicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\nsubjectKeyIdentifier=hash\n"
        "authorityKeyIdentifier=keyid,issuer\n"
    )
    _openssl("req", *_EC, "-keyout", key.name, "-out", csr.name, "-subj", f"/CN={names[0]}", cwd=d)
    _openssl(
        "x509",
        "-req",
        "-in",
        csr.name,
        "-CA",
        str(ca_crt),
        "-CAkey",
        str(ca_key),
        "-CAcreateserial",
        "-out",
        crt.name,
        "-days",
        str(days),
        "-extfile",
        ext.name,
        cwd=d,
    )
    key.chmod(0o600)
    return crt, key


def _template(name: str) -> str:
    return resources.files("railbird").joinpath("data/broker", name).read_text()


def confined_acl(venue: str, tables: dict) -> str:
    """The project ACL with every node confined to its own table at the broker
    (`railbird.access.mosquitto_acl` with `tables`: table id -> node ids): one `user` block
    per node instead of the node `pattern` lines, which let a node write its subtree under
    any table. A node not listed can then do nothing: regenerate when nodes change
    (mosquitto reloads the ACL on SIGHUP)."""
    return access.mosquitto_acl(venue, tables)


class PrivateBroker:
    """A mosquitto process with the project's configuration in `workdir`."""

    def __init__(
        self,
        workdir,
        users: dict | None = None,
        port: int | None = None,
        host: str = "127.0.0.1",
        tls: bool = False,
        tls_port: int | None = None,
        acl: str | None = None,
    ):
        self.workdir = Path(workdir)
        self.host = host
        self.port = port or free_port(host)
        self.tls = tls
        self.tls_port = (tls_port or free_port(host)) if tls else None
        self.cafile: Path | None = self.workdir / "tls" / "ca.crt" if tls else None
        self.users = dict(DEFAULT_USERS)
        self.users.update(users or {})
        self.acl = acl  # None: the project's ACL
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
        write_private(passwd, "")  # 0600 from the start; mosquitto_passwd keeps the mode
        for name, pw in self.users.items():
            subprocess.run(
                ["mosquitto_passwd", "-b", str(passwd), name, pw], check=True, capture_output=True
            )

    def _write_config(self) -> Path:
        self.workdir.mkdir(parents=True, exist_ok=True)
        conf = (
            _template("mosquitto.conf.in")
            .replace("@PORT@", str(self.port))
            .replace("@BIND@", self.host)
            .replace("@DIR@", str(self.workdir))
            .replace("@USER@", "user root" if os.geteuid() == 0 else "")
        )
        if self.tls:
            conf += (
                _template("mosquitto-tls.conf.in")
                .replace("@TLS_PORT@", str(self.tls_port))
                .replace("@BIND@", self.host)
                .replace("@TLS_DIR@", str(self._make_pki()))
            )
        path = self.workdir / "mosquitto.conf"
        path.write_text(conf)
        acl = self.workdir / "acl"
        write_private(acl, self.acl if self.acl is not None else access.mosquitto_acl())
        self._write_passwords()
        return path

    def _make_pki(self) -> Path:
        """The CA and server certificate, made once (a restart keeps them)."""
        d = self.workdir / "tls"
        if not (d / "server.crt").exists():
            ca_crt, ca_key = make_ca(d)
            names = ["127.0.0.1", "localhost"]
            if self.host not in names:
                names.insert(0, self.host)
            make_server_cert(d, ca_crt, ca_key, names=tuple(names))
        return d

    # -- life cycle ----------------------------------------------------------------
    def start(self, timeout: float = 10.0) -> PrivateBroker:
        conf = self._write_config()
        # mosquitto keeps its own copy of the descriptor: ours can close once it runs
        with open(self.workdir / "stderr.log", "ab") as log:
            self.proc = subprocess.Popen(
                [self.binary, "-c", str(conf)], stdout=log, stderr=log, start_new_session=True
            )
        deadline = time.monotonic() + timeout
        waiting = [self.port] + ([self.tls_port] if self.tls else [])
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BrokerError(
                    f"mosquitto exited with {self.proc.returncode}: {self.log_tail()}"
                )
            try:
                with socket.create_connection((self.host, waiting[0]), timeout=0.2):
                    waiting.pop(0)
                    if not waiting:
                        return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise BrokerError(f"mosquitto did not listen on {waiting}: {self.log_tail()}")

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

    def restart(self) -> PrivateBroker:
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


def main(argv=None) -> int:
    """`python -m railbird.broker acl`: print the project ACL; with `--config host.toml`,
    `confined_acl` for the venue and the tables' `nodes` of that host config (what `railbird
    setup` writes). Both are made by `railbird.access` from its one description."""
    import argparse

    from railbird.config import ConfigError, load

    p = argparse.ArgumentParser(prog="python -m railbird.broker", description=main.__doc__)
    p.add_argument("what", choices=["acl"])
    p.add_argument("--config", "-c", help="the host's TOML configuration")
    args = p.parse_args(argv)
    if args.config is None:
        sys.stdout.write(access.mosquitto_acl())
        return 0
    try:
        cfg = load(args.config)
    except (OSError, ConfigError) as e:
        print(f"railbird.broker: {args.config}: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(confined_acl(cfg.venue, {t: tc.nodes for t, tc in cfg.table.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
