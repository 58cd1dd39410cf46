"""A simulated board that runs the code on its flash: every boot is a process (CPython only).

    b = SimBoard("127.0.0.1", port, "club", "t1", "n1", "pw", state_dir, seed=1)
    b.start(); b.wait_node()      # the first boot's node is up (b.fw: its version)
    ...                           # `railbird nodes update` installs a set into fw/a
    b.wait_boots(3)               # into the trial and back, each boot a new process
    b.stop()                      # power cut

rbnode.simnode runs the node in a thread of the test's own process, with the modules the
test imported, whichever set the flash names. SimBoard is for what that cannot show: a
downloaded set that is broken. Each boot is `python -m rbnode.simboot` with the flashed set
(firmware/, protocol/) on its path and the state directory as its flash, so boot.py picks
the set and the downloaded set's own files are imported and run: a syntax error, an import
error, an exception at every boot or an endless loop are the set's, not emulated. A process
also is the one honest way to stop a hung board under CPython (a thread cannot be killed):
the watchdog is this object, which kills a boot that armed it and did not feed it within
its period, and boots the board again with reset cause "wdt". A boot that ends with an
exception outside main.py's handler sits at the REPL: the watchdog, if armed, resets it;
else the board stays dead until stop().

.boots: one (reset cause, how the boot ended) per boot: "reset" (the board reset itself),
"wdt" (not fed: killed), "repl" (stopped at the REPL), "stopped" (stop()). .reboots counts
the boots after the first; .fw and .boot are what the running node reported; console.log in
the state directory holds every boot's output.
"""

import json
import os
import select
import subprocess
import sys
import threading
import time

from rbnode.simboot import RESET
from rbnode.simnode import default_device_config

HERE = os.path.dirname(os.path.abspath(__file__))
FIRMWARE = os.path.dirname(HERE)
PROTOCOL = os.path.join(os.path.dirname(FIRMWARE), "protocol")
BOOT_PY = os.path.join(FIRMWARE, "boot.py")


class SimBoard:
    def __init__(self, broker_host, port, venue, table, node, password, state_dir, seed=1,
                 dev=None, sim_kw=None, keepalive_s=10, fatal_pause_s=5, reset_cause="power",
                 recovery=False):
        d = default_device_config()
        d.update({"venue": venue, "table": table, "node": node})
        d["broker"] = dict(d["broker"], host=broker_host, port=port, user=node,
                           password=password, keepalive_s=keepalive_s)
        d["wdt"] = True
        for k, v in (dev or {}).items():
            d[k] = dict(d[k], **v) if isinstance(v, dict) and isinstance(d.get(k), dict) else v
        self.dev = d
        self.node_id = node
        self.state_dir = os.path.abspath(str(state_dir))
        os.makedirs(self.state_dir, exist_ok=True)
        self.seed = seed
        self.sim_kw = dict(sim_kw or {})
        self.fatal_pause_s = fatal_pause_s
        self.recovery = recovery  # the recovery pin held at every reset (rbnode.lock)
        self.console_lines = []  # every boot's "console ..." and "ctrl-c ..." lines, in order
        self.reset_cause = reset_cause
        self.boots = []
        self.fw = None
        self.boot = None
        self._proc = None
        self._thread = None
        self._halt = threading.Event()
        self._lock = threading.Lock()
        self._nodes = 0  # boots whose node started

    @property
    def reboots(self):
        return max(0, len(self.boots) - 1 + (self._proc is not None))

    def console(self):
        try:
            with open(os.path.join(self.state_dir, "console.log")) as f:
                return f.read()
        except OSError:
            return ""

    # -- life cycle ----------------------------------------------------------------------
    def start(self):
        self._halt.clear()
        self._thread = threading.Thread(target=self._run, name="simboard-" + self.node_id,
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout=10.0):
        """A power cut: the running boot is killed (no DISCONNECT: the will fires)."""
        self._halt.set()
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                self._proc.kill()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def wait_node(self, timeout=30.0, boots=None):
        """Until a boot's node started (the `boots`-th boot's, default any)."""
        deadline = time.monotonic() + timeout
        while self.boot is None or (boots is not None and self._nodes < boots):
            if time.monotonic() > deadline:
                raise TimeoutError("no node started on %s:\n%s" % (self.node_id,
                                                                    self.console()[-3000:]))
            time.sleep(0.05)

    def running(self):
        """Whether a boot is running (not ended at the REPL, not between two boots)."""
        with self._lock:
            return self._proc is not None and self._proc.poll() is None

    def ctrl_c(self):
        """A Ctrl-C on the board's console (SIGINT to the running boot) -> whether a boot
        was running."""
        import signal
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                return False
            self._proc.send_signal(signal.SIGINT)
            return True

    def wait_boots(self, n, timeout=120.0):
        """Until the board has booted n times (the n-th boot is running or ended)."""
        deadline = time.monotonic() + timeout
        while len(self.boots) + (self._proc is not None) < n:
            if time.monotonic() > deadline:
                raise TimeoutError("%s booted %r:\n%s" % (self.node_id, self.boots,
                                                          self.console()[-3000:]))
            time.sleep(0.05)

    # -- the boots -------------------------------------------------------------------------
    def _run(self):
        self._nodes = 0
        cause = self.reset_cause
        n = 0
        while not self._halt.is_set():
            n += 1
            end = self._boot(cause, n)
            self.boots.append((cause, end))
            if end == "reset":
                cause = "soft"
            elif end == "wdt":
                cause = "wdt"
            else:
                break

    def _boot(self, cause, n):
        r, w = os.pipe()
        spec = {"root": self.state_dir, "fd": w, "boot_py": BOOT_PY, "dev": self.dev,
                "seed": self.seed + 1000 * (n - 1), "reset_cause": cause,
                "sim_kw": self.sim_kw, "fatal_pause_s": self.fatal_pause_s,
                "recovery": self.recovery}
        # the flash holds its config.json, which boot.py reads (rbnode.lock)
        with open(os.path.join(self.state_dir, "config.json"), "w") as f:
            json.dump(self.dev, f)
        path = os.path.join(self.state_dir, "simboot.json")
        with open(path, "w") as f:
            json.dump(spec, f)
        env = dict(os.environ, PYTHONPATH=FIRMWARE + os.pathsep + PROTOCOL,
                   PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
        log = open(os.path.join(self.state_dir, "console.log"), "ab")
        log.write(b"--- boot %d, reset cause %s\n" % (n, cause.encode()))
        log.flush()
        with self._lock:
            if self._halt.is_set():
                os.close(r)
                os.close(w)
                log.close()
                return "stopped"
            # -P: the flash directory (the cwd) is no import path; only boot.py adds a slot
            self._proc = subprocess.Popen(
                [sys.executable, "-P", "-m", "rbnode.simboot", path], cwd=self.state_dir,
                env=env, stdout=log, stderr=subprocess.STDOUT, pass_fds=(w,))
        os.close(w)
        try:
            return self._watch(self._proc, r)
        finally:
            os.close(r)
            log.close()
            with self._lock:
                self._proc = None

    def _watch(self, p, r):
        period = None  # the armed watchdog's period in s (it cannot be disarmed)
        fed = time.monotonic()
        buf = b""
        eof = False
        while True:
            if self._halt.is_set():
                p.kill()
                p.wait()
                return "stopped"
            if not eof:
                ready, _, _ = select.select([r], [], [], 0.05)
                if ready:
                    chunk = os.read(r, 4096)
                    if not chunk:
                        eof = True
                    buf += chunk
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        fed = self._line(line.decode(), fed)
                        if line.startswith(b"wdt "):
                            period = int(line.split()[1]) / 1000
            else:
                time.sleep(0.05)
            code = p.poll()
            if code is not None and self._halt.is_set():
                # stop() killed it between the check above and this poll: a power cut, not
                # a boot that ended by itself (at the REPL, say)
                return "stopped"
            if code == RESET:
                return "reset"
            if period is not None and time.monotonic() - fed > period:
                p.kill()
                p.wait()
                return "wdt"
            if code is not None and period is None:
                self._halt.wait()  # at the REPL with no watchdog: dead until power off
                return "repl"

    def _line(self, line, fed):
        parts = line.split()
        if not parts:
            return fed
        if parts[0] in ("feed", "wdt"):
            return time.monotonic()
        if parts[0] in ("console", "ctrl-c"):
            self.console_lines.append(line)
        if parts[0] == "node" and len(parts) == 3:
            self.boot = int(parts[1])
            self.fw = parts[2]
            self._nodes += 1
        return fed
