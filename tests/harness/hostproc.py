"""`railbird run` as a subprocess, as an installer would run it: a TOML config, a journal,
and the `--stats-file` the daemon rewrites, which tests poll instead of sleeping."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path


class RailbirdRun:
    def __init__(self, workdir: Path, config: str, extra_args=()):
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.conf = self.dir / "railbird.toml"
        self.conf.write_text(config)
        self.journal = self.dir / "journal.sqlite"
        self.stats_file = self.dir / "stats.json"
        self.extra_args = list(extra_args)
        self.popen_kw: dict = {}  # e.g. preexec_fn: a lowered fd limit (tests/hardening)
        self.proc: subprocess.Popen | None = None

    def start(self, ready=lambda s: s.get("connected"), what="host connected", timeout=60):
        if self.stats_file.exists():
            self.stats_file.unlink()  # a stale file would satisfy `ready` at once
        with open(self.dir / "host.log", "ab") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "railbird",
                    "run",
                    "--config",
                    str(self.conf),
                    "--journal",
                    str(self.journal),
                    "--stats-file",
                    str(self.stats_file),
                    *self.extra_args,
                ],
                stdout=log,
                stderr=log,
                **self.popen_kw,
            )
        self.wait(ready, what, timeout)
        return self

    def start_with_web(self, timeout: float = 60) -> str:
        """`start`, until the host is connected and its web scoreboard listens: its URL."""
        self.start(
            lambda s: s.get("connected") and s["outputs"]["web"]["url"], "host and web up", timeout
        )
        return self.web_url

    @property
    def web_url(self) -> str:
        """Where the web scoreboard listens (http://host:port), from the stats file."""
        return self.stats()["outputs"]["web"]["url"]

    def stats(self) -> dict:
        try:
            return json.loads(self.stats_file.read_text())
        except (OSError, ValueError):
            return {}

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log(self, n: int = 3000) -> str:
        p = self.dir / "host.log"
        return p.read_text(errors="replace")[-n:] if p.exists() else ""

    def wait(self, cond, what: str, timeout: float = 20, poll: float = 0.05) -> dict:
        """Poll the stats file until `cond(stats)` holds; a KeyError or TypeError in `cond`
        (a field not written yet) counts as not yet."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive:
                raise AssertionError(f"host exited ({self.proc.returncode}): {self.log()}")
            stats = self.stats()
            try:
                if cond(stats):
                    return stats
            except (KeyError, TypeError):
                pass
            time.sleep(poll)
        raise TimeoutError(f"{what}: {self.stats()}\n{self.log()}")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self, timeout: float = 20) -> None:
        if self.alive:
            self.proc.send_signal(signal.SIGTERM)
            rc = self.proc.wait(timeout)
            assert rc == 0, f"host exit code {rc}: {self.log()}"
