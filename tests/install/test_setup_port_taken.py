"""Issue 24, item 4: a broker port another process already holds. Debian starts its own
mosquitto.service on 1883 the moment the package is installed, and railbird-broker then fails
at every start with "Address already in use" while setup had said all was well. Setup now
finds whoever listens on the broker's ports, tells its own broker from any other, names the
other (pid, command, systemd unit) as the first next step and exits non-zero; the
distribution's mosquitto.service is stopped only with the owner's consent.

Real processes: a second mosquitto from a config of its own, and the installation's broker
started from the mosquitto.conf setup wrote."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

from harness.waiting import poll
from railbird.broker import find_mosquitto, free_port
from railbird.install import portholder

from .setuprun import Broker, setup

pytestmark = [pytest.mark.broker, pytest.mark.slow]

FIRST = ["--venue", "club", "--table", "t1:10-ball:t1-node"]


def other_mosquitto(tmp_path: Path, port: int) -> subprocess.Popen:
    conf = tmp_path / "other.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\n")
    proc = subprocess.Popen([find_mosquitto(), "-c", str(conf)], stderr=subprocess.DEVNULL)
    started = poll(lambda: proc.poll() is not None or portholder.holder(port) is not None, 10)
    assert started and proc.poll() is None, "the other mosquitto did not start"
    return proc


def test_another_broker_on_the_port_is_named_and_setup_fails(tmp_path):
    port = free_port()
    other = other_mosquitto(tmp_path, port)
    try:
        inst, r = setup(tmp_path / "root", *FIRST, port=port, check=False)
        assert r.returncode == 3, r.stdout + r.stderr
        assert f"port {port} is taken" in r.stderr
        step1 = r.stdout.split("Next:", 1)[1].strip().splitlines()[0]
        assert step1.startswith("1. ") and f"port {port} is taken by pid {other.pid}" in step1
        assert str(tmp_path / "other.conf") in step1 and "--broker-port" in step1
        # the installation itself is written: only the port is in the way
        assert inst.etc.joinpath("mosquitto.conf").exists()
    finally:
        other.terminate()
        other.wait(10)
    # the other broker gone, the same setup is clean
    _, r = setup(tmp_path / "root", port=port)
    assert "is taken" not in r.stdout + r.stderr


def test_its_own_broker_on_the_port_is_not_in_the_way(tmp_path):
    inst, _ = setup(tmp_path / "root", *FIRST)
    with Broker(inst):
        h = portholder.holder(inst.port)
        assert h is not None and h.runs_config(inst.etc / "mosquitto.conf")
        _, r = setup(tmp_path / "root", "--table", "t2:9-ball", port=inst.port)
        assert r.returncode == 0 and "is taken" not in r.stdout + r.stderr


def test_a_listener_is_found_with_its_process_and_nothing_on_a_free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        h = portholder.holder(s.getsockname()[1])
        assert h is not None and h.pid == os.getpid()
        assert any("python" in part for part in h.command[:1])
    assert portholder.holder(free_port()) is None


@pytest.mark.parametrize(
    ("cgroup", "unit"),
    [
        ("0::/system.slice/mosquitto.service\n", "mosquitto.service"),
        ("12:pids:/system.slice/railbird-broker.service\n1:name=systemd:/system.slice\n",
         "railbird-broker.service"),
        ("0::/user.slice/user-1000.slice/session-3.scope\n", ""),
        ("0::/\n", ""),
    ],
)  # fmt: skip
def test_the_systemd_unit_comes_from_the_cgroup(cgroup, unit):
    assert portholder.unit_of(cgroup) == unit


def test_the_distribution_unit_gets_the_systemctl_line_and_consent_flag():
    from railbird.install.apply import Report
    from railbird.install.layout import Layout
    from railbird.install.summary import summary

    system = Layout(Path("/"))
    r = Report(system, host={"venue": "club", "tables": {}}, choices={"broker_port": 1883})
    command = ("/usr/sbin/mosquitto", "-c", "/etc/mosquitto/mosquitto.conf")
    distro = portholder.Holder(1883, 812, command, "mosquitto.service")
    text = summary(r, first=True, mosquitto=True, user=True, taken=[distro])
    step1 = text.split("Next:", 1)[1].strip().splitlines()[0]
    assert "pid 812, mosquitto.service" in step1
    assert "sudo systemctl disable --now mosquitto" in step1 and "--stop-other-mosquitto" in step1
