"""Who holds a TCP port: before railbird-broker can listen on the broker's port, whatever
listens there now must be found and named — most often the distribution's own
mosquitto.service, which Debian starts on 1883 the moment the package is installed.

Read from /proc (Linux): the listening socket's inode in /proc/net/tcp and tcp6, the
process whose file descriptors include it, its command line and its systemd unit (from
/proc/PID/cgroup). As a user who cannot read another user's /proc/PID/fd the port is still
found taken, by a process not named.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

_LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp's st column


@dataclass(frozen=True)
class Holder:
    """The process listening on a port; pid 0 when it cannot be seen from this user."""

    port: int
    pid: int = 0
    command: tuple[str, ...] = ()
    unit: str = ""  # the systemd service it runs in, "" outside one

    def runs_config(self, conf: Path) -> bool:
        """True if it is a mosquitto started with `-c conf` (this installation's broker)."""
        cmd = list(self.command)
        for i, arg in enumerate(cmd[:-1]):
            if arg in ("-c", "--config-file") and Path(cmd[i + 1]) == conf:
                return True
        return False

    def describe(self) -> str:
        if not self.pid:
            return "a process this user cannot see (run setup as root to name it)"
        what = " ".join(self.command) or "?"
        where = f", {self.unit}" if self.unit else ""
        return f"pid {self.pid}{where}: {what}"


def _listening_inodes(port: int, proc: Path) -> set[str]:
    inodes = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = (proc / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) < 10 or cols[3] != _LISTEN:
                continue
            try:
                local_port = int(cols[1].rsplit(":", 1)[1], 16)
            except (IndexError, ValueError):
                continue
            if local_port == port:
                inodes.add(cols[9])
    return inodes


def unit_of(cgroup_text: str) -> str:
    """The systemd service in a /proc/PID/cgroup text ("0::/system.slice/mosquitto.service"
    -> "mosquitto.service"); "" when the process is in none."""
    for line in cgroup_text.splitlines():
        path = line.rsplit(":", 1)[-1]
        for part in reversed(path.split("/")):
            if part.endswith(".service"):
                return part
    return ""


def others_on(ports: list[int], broker_conf: Path) -> list[Holder]:
    """The processes listening on `ports` that are not this installation's broker (a
    mosquitto run with `broker_conf`, as railbird-broker.service and the tests start it)."""
    found = []
    for port in ports:
        h = holder(port)
        if h is None or h.unit == "railbird-broker.service" or h.runs_config(broker_conf):
            continue
        found.append(h)
    return found


def holder(port: int, proc: Path = Path("/proc")) -> Holder | None:
    """Who listens on `port` (any address), or None when nothing does."""
    inodes = _listening_inodes(port, proc)
    if not inodes:
        return None
    wanted = {f"socket:[{i}]" for i in inodes}
    for pid_dir in proc.iterdir():
        if not pid_dir.name.isdigit():
            continue
        try:
            fds = list((pid_dir / "fd").iterdir())
        except OSError:  # another user's process, or gone
            continue
        for fd in fds:
            try:
                target = fd.readlink()
            except OSError:
                continue
            if str(target) in wanted:
                return _describe(port, pid_dir)
    return Holder(port)


def _describe(port: int, pid_dir: Path) -> Holder:
    try:
        raw = (pid_dir / "cmdline").read_bytes()
        command = tuple(a.decode(errors="replace") for a in raw.split(b"\0") if a)
    except OSError:
        command = ()
    try:
        unit = unit_of((pid_dir / "cgroup").read_text())
    except OSError:
        unit = ""
    return Holder(port, int(pid_dir.name), command, unit)
