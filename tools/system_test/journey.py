"""The install journey in the booted machine, each step as docs/install.md says and each
one checked: install, setup for three tables, the services, play; the host SIGKILLed, the
machine rebooted, an upgrade, a table added; `make demo` from a fresh clone.

Inside the machine the wheelhouse is at /srv/wheelhouse and pip is told to use it alone
(PIP_NO_INDEX, PIP_FIND_LINKS: docs/install.md "A machine without internet"); the
checkout's commits are at /srv/railbird.git, what `git clone <this repository>` clones."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from tools.system_test.figures import Figures
from tools.system_test.machine import Machine

VENUE = "sys-bar"
WEB = f"http://127.0.0.1:8080/v/{VENUE}/"
PY = "/opt/railbird/bin/python"
RAILBIRD = "/opt/railbird/bin/railbird"
PLAYER = "/srv/system-test/player.py"
OFFLINE = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "/srv/wheelhouse"}
TABLES = ("t1:10-ball:t1-node:Ann,Bob", "t2:14.1", "t3:none")
# setup's flags for this machine: the boards are simulated inside it, so they reach the
# broker on loopback (a venue gives its own address, docs/install.md step 2)
SETUP_FLAGS = "--broker-address 127.0.0.1 --wifi-ssid BarWiFi --non-interactive"
RESTART_LIMIT_S = 5.0


class JourneyError(AssertionError):
    """A step's check failed; the message says which and what was seen."""


@dataclass
class Played:
    """What the boards sent in one `player.py play`: node -> (boot, drops)."""

    sent: dict[str, tuple[int, int]]


@dataclass
class Journey:
    m: Machine
    figures: Figures
    nodes: tuple[str, ...] = ("t1-node", "t2-node", "t3-node")

    # -- steps ----------------------------------------------------------------------------
    def install(self) -> None:
        """docs/install.md step 1, with pip offline."""
        t0 = time.monotonic()
        self.m.sh(
            "git clone -q /srv/railbird.git /opt/railbird-src\n"
            "python3 -m venv /opt/railbird\n"
            "/opt/railbird/bin/pip install -q '/opt/railbird-src[flash]'",
            env=OFFLINE,
        )
        self.figures.install_s = time.monotonic() - t0
        self.say(self.m.run(RAILBIRD, "--version").stdout.strip() + " installed")

    def setup(self) -> None:
        """Step 2: three tables; mosquitto installed by setup (from apt's cache here)."""
        tables = " ".join(f"--table {t}" for t in TABLES)
        t0 = time.monotonic()
        r = self.m.sh(
            f"sudo RAILBIRD_WIFI_PASSWORD=bar-wifi-pw {RAILBIRD} setup --venue {VENUE} "
            f"{tables} {SETUP_FLAGS}"
        )
        self.figures.setup_s = time.monotonic() - t0
        self.log("setup", r.stdout + r.stderr)
        self.m.run("dpkg", "-s", "mosquitto")  # setup installed it
        state = self.m.run("systemctl", "is-enabled", "mosquitto", check=False).stdout.strip()
        if state != "disabled":
            raise JourneyError(f"the package's mosquitto.service is {state!r}, not disabled")

    def start(self) -> None:
        """Step 3; timed to the web scoreboard answering."""
        t0 = time.monotonic()
        self.m.sh("systemctl daemon-reload\nsystemctl enable --now railbird-broker railbird")
        self.wait_web()
        self.figures.start_s = time.monotonic() - t0
        self.active("railbird-broker", "railbird")

    def play(self, *extra: str, shots: int = 2) -> Played:
        """The boards play `shots` shots of two balls each; every event journalled."""
        nodes = [*self.nodes, *extra]
        args = [a for n in nodes for a in ("--node", n)]
        r = self.m.run(PY, PLAYER, "play", *args, "--shots", str(shots), timeout=300)
        played = parse_played(r.stdout)
        self.wait_journalled(played)
        return played

    def kill(self) -> None:
        """The host SIGKILLed while the boards play: back within 5 s, nothing lost."""
        before = self.shots()
        args = [a for n in self.nodes for a in ("--node", n)]
        log = self.m.log.with_name("player-kill.log")
        p = self.m.start(PY, PLAYER, "play", *args, "--shots", "3", log=log)
        time.sleep(2.0)  # the first shot's balls are on their way
        seconds = self.back("systemctl", "kill", "-s", "KILL", "railbird")
        self.figures.kill_restart_s = seconds
        if p.wait(300) != 0:
            raise JourneyError(f"the boards failed during the kill: {log.read_text()}")
        played = parse_played(log.read_text().splitlines()[-1])
        self.wait_journalled(played)
        self.wait_shots(before, 3)
        self.say(f"SIGKILL: back in {seconds:.2f} s, every event journalled")

    def reboot(self) -> None:
        """`systemctl reboot`: both services back, scoring resumes, replay --check OK."""
        before = self.shots()
        t0 = time.monotonic()
        rc = self.m.stop("reboot")
        if rc not in (0, 133):  # 133: systemd-nspawn's "the machine asked for a reboot"
            raise JourneyError(f"systemd-nspawn exited {rc} at the reboot")
        self.m.boot()
        self.wait_web()
        self.active("railbird-broker", "railbird")
        self.figures.reboot_s = time.monotonic() - t0
        self.play()
        self.wait_shots(before, 2)
        self.replay_check()

    def upgrade(self) -> None:
        """docs/install.md "Upgrading": pull, pip install, restart; the journal migrated."""
        old = self.m.run(RAILBIRD, "--version").stdout.strip()
        t0 = time.monotonic()
        self.m.sh(
            "git -C /opt/railbird-src pull -q --ff-only\n"
            "/opt/railbird/bin/pip install -q '/opt/railbird-src[flash]'",
            env=OFFLINE,
        )
        self.figures.upgrade_install_s = time.monotonic() - t0
        new = self.m.run(RAILBIRD, "--version").stdout.strip()
        if new == old:
            raise JourneyError(f"the upgrade left {old!r} installed")
        self.figures.upgrade_restart_s = self.restart("the upgrade")
        before = self.shots()
        self.play()
        self.wait_shots(before, 2)
        self.replay_check()
        version = self.journal()["version"]
        self.say(f"upgraded {old} -> {new}; journal schema version {version}")

    def add_table(self) -> None:
        """docs/install.md "Adding a table": setup, reload the broker, restart the host."""
        r = self.m.sh(
            f"sudo {RAILBIRD} setup --table t4 --non-interactive\nsystemctl reload railbird-broker"
        )
        self.log("setup-t4", r.stdout + r.stderr)
        self.figures.add_table_restart_s = self.restart("a table added")
        self.nodes = (*self.nodes, "t4-node")
        before = self.shots()
        self.play()
        self.wait_shots(before, 2)  # the new table's two as well

    def demo(self) -> None:
        """README.md's `make demo DEMO_SECONDS=20` in a fresh clone, pip offline; mosquitto
        comes from apt's cache (tools/ensure-mosquitto.sh)."""
        t0 = time.monotonic()
        r = self.m.sh(
            "rm -rf /root/railbird\n"
            "git clone -q /srv/railbird.git /root/railbird\n"
            "cd /root/railbird && make demo DEMO_SECONDS=20",
            env=OFFLINE,
            timeout=900,
        )
        self.figures.demo_s = time.monotonic() - t0
        self.log("demo", r.stdout + r.stderr)

    # -- checks ---------------------------------------------------------------------------
    def restart(self, why: str) -> float:
        seconds = self.back("systemctl", "restart", "railbird")
        self.say(f"{why}: restart in {seconds:.2f} s")
        return seconds

    def back(self, *command: str) -> float:
        r = self.m.run(PY, PLAYER, "back", "--url", WEB, "--", *command, timeout=120)
        got = json.loads(r.stdout.strip().splitlines()[-1])
        if got["seconds"] is None:
            raise JourneyError(f"the host was not back after {' '.join(command)}: {got}")
        return float(got["seconds"])

    def wait_web(self, timeout: float = 120.0) -> None:
        script = (
            "import sys, urllib.request\n"
            f"urllib.request.urlopen({WEB!r}, timeout=2)\n"  # raises until it answers
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.m.run(PY, "-c", script, check=False).returncode == 0:
                return
            time.sleep(0.2)
        status = self.m.run("systemctl", "status", "railbird", check=False).stdout
        raise JourneyError(f"the web scoreboard did not answer within {timeout:.0f} s\n{status}")

    def active(self, *units: str) -> None:
        for unit in units:
            state = self.m.run("systemctl", "is-active", unit, check=False).stdout.strip()
            if state != "active":
                raise JourneyError(f"{unit} is {state}")

    def journal(self) -> dict[str, Any]:
        r = self.m.run(PY, PLAYER, "journal")
        out: dict[str, Any] = json.loads(r.stdout)
        return out

    def shots(self) -> dict[str, int]:
        return dict(self.journal()["shots"])

    def wait_journalled(self, played: Played, timeout: float = 60.0) -> None:
        """Every drop the boards sent is in the host's journal, with its boot."""
        deadline = time.monotonic() + timeout
        while True:
            drops = self.journal()["drops"]
            missing = {
                node: (boot, n, drops.get(node, {}).get(str(boot), 0))
                for node, (boot, n) in played.sent.items()
                if drops.get(node, {}).get(str(boot), 0) != n
            }
            if not missing:
                return
            if time.monotonic() > deadline:
                raise JourneyError(f"not journalled (node: boot, sent, journalled): {missing}")
            time.sleep(0.5)

    def wait_shots(self, before: dict[str, int], more: int, timeout: float = 60.0) -> None:
        """Each table scored `more` shots since `before` (the host assembled them)."""
        deadline = time.monotonic() + timeout
        tables = {n.split("-")[0] for n in self.nodes}
        while True:
            now = self.shots()
            short = {t: now.get(t, 0) - before.get(t, 0) for t in tables}
            if all(v >= more for v in short.values()):
                return
            if time.monotonic() > deadline:
                raise JourneyError(f"shots per table since the step: {short}, want {more}")
            time.sleep(0.5)

    def replay_check(self) -> None:
        r = self.m.run(RAILBIRD, "replay", "--check", "/var/lib/railbird/journal.sqlite")
        self.log("replay-check", r.stdout + r.stderr)

    # -- output ---------------------------------------------------------------------------
    def say(self, text: str) -> None:
        print(f"system-test: {text}", flush=True)

    def log(self, name: str, text: str) -> None:
        self.m.log.with_name(f"{name}.log").write_text(text)


def parse_played(stdout: str) -> Played:
    got = json.loads(stdout.strip().splitlines()[-1])
    return Played({n: (int(v["boot"]), int(v["drops"])) for n, v in got["sent"].items()})
