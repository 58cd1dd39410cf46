"""One Debian machine booted by systemd-nspawn with a private network (loopback only).

Booted as these hosts allow (issue 24): a tmpfs on /run/systemd/nspawn once, then
`systemd-nspawn -D ROOT --register=no --keep-unit -b --private-network`. Without
registration there is no machined, so `systemctl --machine` and `machinectl shell` cannot
reach it; commands enter the namespaces of its PID 1 (systemd) with nsenter instead, so
they run inside it as root, talk to its systemd over its own /run and see only its network.
A reboot inside (`systemctl reboot`) ends systemd-nspawn (exit status 133, "reboot"); the
machine is then booted again from the same root, which is what a reboot is to its disk."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

NSPAWN_RUN = Path("/run/systemd/nspawn")
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class MachineError(RuntimeError):
    """The machine did not boot, stop, or a command in it failed; the message says which."""


@dataclass(frozen=True)
class Bind:
    host: Path
    inside: str
    read_only: bool = True


@dataclass
class Machine:
    root: Path
    log: Path
    binds: tuple[Bind, ...] = ()
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _leader: int | None = field(default=None, repr=False)

    def boot(self, timeout: float = 120.0) -> float:
        """Boot and wait until systemd says running (or degraded) -> seconds it took."""
        ensure_nspawn_run()
        cmd = ["systemd-nspawn", "-D", str(self.root), "--register=no", "--keep-unit"]
        cmd += ["-b", "--private-network", "--console=passive"]
        for b in self.binds:
            cmd.append(f"--bind{'-ro' if b.read_only else ''}={b.host}:{b.inside}")
        t0 = time.monotonic()
        out = self.log.open("ab")
        self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
        out.close()
        self._leader = None
        deadline = t0 + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise MachineError(f"systemd-nspawn exited {self._proc.returncode}: {self.log}")
            if self._leader is None:
                self._leader = child_of(self._proc.pid)
            if self._leader is not None:
                r = self.run("systemctl", "is-system-running", check=False, timeout=10)
                state = r.stdout.strip()
                if state in ("running", "degraded"):
                    if state == "degraded":
                        failed = self.run("systemctl", "--failed", "--no-legend", check=False)
                        raise MachineError(f"booted degraded: {failed.stdout.strip()}")
                    return time.monotonic() - t0
            time.sleep(0.1)
        raise MachineError(f"not booted within {timeout:.0f} s: {self.log}")

    def run(
        self,
        *argv: str,
        check: bool = True,
        timeout: float = 600.0,
        env: dict[str, str] | None = None,
        cwd: str = "/root",
    ) -> subprocess.CompletedProcess[str]:
        """`argv` inside the machine as root, with a clean environment plus `env`."""
        r = subprocess.run(
            self.enter(argv, env, cwd), capture_output=True, text=True, timeout=timeout
        )
        if check and r.returncode != 0:
            raise MachineError(
                f"in the machine: {' '.join(argv)} -> exit {r.returncode}\n{r.stdout}{r.stderr}"
            )
        return r

    def sh(
        self,
        script: str,
        *,
        check: bool = True,
        timeout: float = 600.0,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """A shell script inside the machine (bash -e), as `run`."""
        return self.run(
            "bash", "-euo", "pipefail", "-c", script, check=check, timeout=timeout, env=env
        )

    def start(
        self, *argv: str, log: Path, env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        """`argv` inside the machine in the background; its output to `log` on the host."""
        out = log.open("ab")
        p = subprocess.Popen(self.enter(argv, env, "/root"), stdout=out, stderr=out)
        out.close()
        return p

    def enter(self, argv: tuple[str, ...], env: dict[str, str] | None, cwd: str) -> list[str]:
        if self._leader is None:
            raise MachineError("the machine is not booted")
        base = {"PATH": PATH, "HOME": "/root", "LANG": "C.UTF-8", "USER": "root"}
        pairs = [f"{k}={v}" for k, v in {**base, **(env or {})}.items()]
        # -r -w: the root and working directory of its PID 1, so paths are the machine's
        ns = ["nsenter", "-t", str(self._leader), "-m", "-u", "-i", "-n", "-p", "-C", "-r", "-w"]
        return [*ns, "--", "/usr/bin/env", "-i", f"--chdir={cwd}", *pairs, *argv]

    def stop(self, command: str = "poweroff", timeout: float = 90.0) -> int:
        """`systemctl poweroff` (or `reboot`) inside; wait for systemd-nspawn -> its status."""
        if self._proc is None:
            return 0
        # systemctl may be cut off while the machine goes down: its status is not the point
        self.run("systemctl", command, "--no-block", check=False, timeout=30)
        try:
            rc = self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            rc = self._proc.wait(30)
            raise MachineError(f"did not {command} within {timeout:.0f} s") from None
        finally:
            self._proc, self._leader = None, None
        return rc

    def kill(self) -> None:
        """End systemd-nspawn (and with it the machine) if it still runs: after a failure."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(30)
        self._proc, self._leader = None, None


def ensure_nspawn_run() -> None:
    """systemd-nspawn keeps per-machine state in /run/systemd/nspawn; on hosts whose PID 1
    is not systemd that directory is missing or not writable as nspawn needs: a tmpfs."""
    if os.path.ismount(NSPAWN_RUN):
        return
    NSPAWN_RUN.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(NSPAWN_RUN)], check=True)


def child_of(pid: int) -> int | None:
    """The child of `pid` that runs systemd: the machine's PID 1 (systemd-nspawn forks
    helpers first, and its child is the container's init only once it has exec'd)."""
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        for kid in kids:
            if Path(f"/proc/{kid}/comm").read_text().strip() == "systemd":
                return int(kid)
    except FileNotFoundError:  # a helper that just exited
        return None
    return None
