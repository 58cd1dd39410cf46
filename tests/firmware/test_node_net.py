"""Boards that follow the venue's network (issue 24, build item 5): the host changes a node's
broker address and Wi-Fi over MQTT (the `net` command, SPEC.md), the node tries them and
keeps them only when it reached the broker within `trial_s`, else it goes back to the old
ones; the broker found by name with the last good address as fallback.

Real parts: the firmware's Node on the simulated hardware (rbnode.simnode), real mosquitto
brokers (the "new broker address" is a second one; the failing one a port nothing listens
on). The radio is the simulated one: `aps` (which credentials the access point accepts) and
`names` (what a name resolves to) of rbnode.hw.sim."""

from __future__ import annotations

import json
import socket
import time

import pytest

from harness.mqttsub import client
from harness.waiting import wait_for
from railbird.broker import PrivateBroker
from rbnode import netcfg
from rbnode.hw.sim import SimHardware
from rbnode.simnode import SimNode
from rbproto import codec

pytestmark = pytest.mark.broker
NODE, PW = "n1", "node-pw"


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def send_net(port: int, msg: dict) -> None:
    """The host's `net` command (not retained, QoS 1, the host login)."""
    c = client(port, "railbird-host", "host-secret")
    info = c.publish(codec.topic("club", "t1", "net", NODE), codec.encode("net", msg), qos=1)
    info.wait_for_publish(10)
    c.loop_stop()
    c.disconnect()


def net_state(sn: SimNode) -> dict | None:
    return sn.call(lambda: sn.node.net.report)


def make_node(broker, tmp_path, host="127.0.0.1", **sim_kw) -> SimNode:
    broker.add_user(NODE, PW)
    sn = SimNode(
        host,
        broker.port,
        "club",
        "t1",
        NODE,
        PW,
        tmp_path / "node",
        seed=5,
        keepalive_s=5,
        sim_kw=sim_kw,
    )
    return sn


def test_a_new_broker_address_is_kept_once_the_node_reached_it(broker, tmp_path):
    second = PrivateBroker(tmp_path / "second", users={NODE: PW})
    second.start()
    sn = make_node(broker, tmp_path)
    try:
        sn.start()
        sn.wait_connected()
        send_net(
            broker.port,
            {
                "v": 1,
                "id": "n-1",
                "broker": {"host": "127.0.0.1", "port": second.port},
                "trial_s": 30,
            },
        )
        wait_for(lambda: (net_state(sn) or {}).get("state") == "done", timeout=30)
        assert sn.call(lambda: sn.node.mqtt.port) == second.port
        sn.wait_connected()
        # persisted: the next boot dials the new broker, config.json notwithstanding
        saved = json.loads((tmp_path / "node" / netcfg.FILE).read_text())
        assert saved["cur"]["port"] == second.port and saved["trial"] is None
        sn.restart()
        sn.wait_connected(20)
        assert sn.call(lambda: sn.node.mqtt.port) == second.port
    finally:
        sn.stop()
        second.stop()


def test_a_broker_nobody_answers_is_reverted_after_the_deadline(broker, tmp_path):
    dead = free_port()
    sn = make_node(broker, tmp_path)
    try:
        sn.start()
        sn.wait_connected()
        t0 = time.monotonic()
        send_net(
            broker.port,
            {"v": 1, "id": "n-2", "broker": {"host": "127.0.0.1", "port": dead}, "trial_s": 10},
        )
        wait_for(lambda: (net_state(sn) or {}).get("state") == "trial", timeout=10)
        wait_for(lambda: sn.call(lambda: sn.node.mqtt.port) == dead, timeout=10)
        wait_for(lambda: (net_state(sn) or {}).get("state") == "reverted", timeout=40)
        assert time.monotonic() - t0 >= 9  # not before the deadline
        r = net_state(sn)
        assert r["id"] == "n-2" and r["port"] == broker.port
        assert "no broker within 10 s" in r["error"]
        sn.wait_connected(30)  # back on the old broker
        assert sn.call(lambda: sn.node.mqtt.port) == broker.port
        saved = json.loads((tmp_path / "node" / netcfg.FILE).read_text())
        assert saved["cur"]["port"] == broker.port and saved["trial"] is None
    finally:
        sn.stop()


def test_new_wifi_credentials_are_kept_and_wrong_ones_reverted(broker, tmp_path):
    # the simulated access point: the config.json credentials, then a new password
    aps = {"railbird": "change-me"}
    sn = make_node(broker, tmp_path, aps=aps)
    try:
        sn.start()
        sn.wait_connected()
        # a wrong password: the node cannot join, cannot reach the broker, goes back
        send_net(
            broker.port,
            {"v": 1, "id": "w-1", "wifi": {"ssid": "railbird", "password": "typo"}, "trial_s": 10},
        )
        wait_for(lambda: (net_state(sn) or {}).get("state") == "reverted", timeout=45)
        sn.wait_connected(30)
        assert sn.call(lambda: sn.hw.wlan().key) == "change-me"
        # the venue adds the new network: the node moves to it and keeps it
        aps["club-5g"] = "s3cret"
        send_net(
            broker.port,
            {"v": 1, "id": "w-2", "wifi": {"ssid": "club-5g", "password": "s3cret"}, "trial_s": 30},
        )
        wait_for(lambda: (net_state(sn) or {}).get("state") == "done", timeout=45)
        assert net_state(sn)["ssid"] == "club-5g"
        # the old network goes away: the node stays connected on the new one
        del aps["railbird"]
        sn.restart()
        sn.wait_connected(30)
        assert sn.call(lambda: sn.hw.wlan().ssid) == "club-5g"
    finally:
        sn.stop()


def test_the_host_is_found_by_name_and_by_its_last_address_when_the_name_fails(broker, tmp_path):
    names = {"railbird.local": "127.0.0.1"}
    sn = make_node(broker, tmp_path, host="railbird.local", names=names)
    try:
        sn.start()
        sn.wait_connected()
        # the name's address is remembered once the broker was reached with it
        wait_for(lambda: (tmp_path / "node" / netcfg.FILE).exists(), timeout=10)
        saved = json.loads((tmp_path / "node" / netcfg.FILE).read_text())
        assert saved["cur"]["addr"] == "127.0.0.1"
        # mDNS stops answering: the next boot dials the last good address
        names.clear()
        sn.restart()
        sn.wait_connected(20)
        assert sn.call(lambda: sn.node.net.dialed) == "127.0.0.1"
    finally:
        sn.stop()


def test_a_name_that_never_resolved_and_no_fallback_is_a_failed_attempt(tmp_path):
    hw = SimHardware(fs_root=str(tmp_path), names={})
    n = netcfg.Net(hw, {"broker": {"host": "nowhere.local", "port": 1883}})
    with pytest.raises(OSError, match="name not known"):
        n.dial("nowhere.local")


def test_bad_and_retained_net_commands_are_refused_and_counted(broker, tmp_path):
    sn = make_node(broker, tmp_path)
    try:
        sn.start()
        sn.wait_connected()
        c = client(broker.port, "railbird-host", "host-secret")
        topic = codec.topic("club", "t1", "net", NODE)
        c.publish(topic, b'{"v":1,"id":"x"}', qos=1).wait_for_publish(10)
        wait_for(lambda: sn.counters().get("net_rejected") == 1, timeout=10)
        assert "broker or wifi" in net_state(sn)["error"]
        ok = codec.encode("net", {"v": 1, "id": "r", "broker": {"host": "10.9.9.9"}})
        # a retained command reaches a node as retained when it subscribes: restart it
        sn.stop()
        c.publish(topic, ok, qos=1, retain=True).wait_for_publish(10)
        sn.start()
        sn.wait_connected()
        wait_for(lambda: sn.counters().get("net_rejected") == 1, timeout=10)
        assert net_state(sn)["error"] == "refused: a retained net command"
        assert sn.call(lambda: sn.node.mqtt.server) == "127.0.0.1"  # nothing tried
        c.publish(topic, b"", qos=1, retain=True).wait_for_publish(10)
        c.loop_stop()
        c.disconnect()
    finally:
        sn.stop()


def test_a_board_that_lost_its_wifi_is_onboarded_again_over_improv_serial(broker, tmp_path):
    """The router got a new password: the board cannot join any more. After its Wi-Fi has
    been down `improv_after_s` it answers Improv Wi-Fi on its serial port, here a real pty
    whose other end `railbird node wifi` opens; wrong settings are refused and the old kept,
    the right ones reach the broker and stay."""
    import os
    import pty
    import subprocess
    import sys

    master, slave = pty.openpty()
    path = os.ttyname(slave)
    aps = {"railbird": "change-me"}
    broker.add_user(NODE, PW)
    sn = SimNode(
        "127.0.0.1",
        broker.port,
        "club",
        "t1",
        NODE,
        PW,
        tmp_path / "node",
        seed=7,
        keepalive_s=5,
        dev={"improv_after_s": 1, "improv_trial_s": 10},
        sim_kw={"aps": aps, "serial": master},
    )

    def node_wifi(ssid: str, password: str) -> subprocess.CompletedProcess:
        pw = tmp_path / "pw"
        pw.write_text(password + "\n")
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "railbird",
                "node",
                "wifi",
                "--port",
                path,
                "--ssid",
                ssid,
                "--password-file",
                str(pw),
                "--wait",
                "60",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": "host"},
        )

    try:
        sn.start()
        sn.wait_connected()
        aps["railbird"] = "new-password"  # the router's new password: the board drops off
        sn.call(lambda: sn.hw.wlan().disconnect())
        wait_for(lambda: not sn.connected(), timeout=20)
        r = node_wifi("railbird", "wrong")
        assert r.returncode == 1 and "unable to connect" in r.stderr, r.stdout + r.stderr
        assert sn.call(lambda: sn.node.net.cur["password"]) == "change-me"
        r = node_wifi("railbird", "new-password")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "reached the broker" in r.stdout
        sn.wait_connected(20)
        assert net_state(sn)["state"] == "done"
        saved = json.loads((tmp_path / "node" / netcfg.FILE).read_text())
        assert saved["cur"]["password"] == "new-password"
    finally:
        sn.stop()
        os.close(slave)


def test_improv_and_the_trial_in_real_micropython(micropython):
    """rbnode.improv and rbnode.netcfg are the device's code: the same checks in MicroPython."""
    from pathlib import Path

    here = Path(__file__).parent
    repo = here.parent.parent
    r = micropython(here / "mp" / "run_improv.py", paths=[repo / "firmware", repo / "protocol"])
    assert r.ok and "MP-IMPROV-OK" in r.stdout, r.stderr + r.stdout
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    assert lines["MP-IMPROV-STATE"] == str(list(improv_packet(1, bytes((2,)))))
    wifi = improv_packet(2, bytes((0,))) + improv_packet(1, bytes((3,)))
    assert lines["MP-IMPROV-WIFI"] == f"True {list(wifi)} [('abc', 'pass')]"
    assert lines["MP-IMPROV-BAD"] == str(list(improv_packet(2, bytes((1,)))))
    done = improv_packet(1, bytes((4,))) + improv_packet(4, bytes((1, 0)))
    assert lines["MP-IMPROV-RESULT"] == str(list(done))
    assert lines["MP-NET-BEGIN"] == "(False, True)"
    assert lines["MP-NET-EARLY"] == "None"
    assert lines["MP-NET-TICK"] == "(False, True) h reverted"
    assert lines["MP-NET-LOADED"] == "reverted h"


def improv_packet(ptype: int, data: bytes) -> bytes:
    """The host's own encoder (railbird.provision.improv), independent of the firmware's."""
    from railbird.provision.improv import packet

    return packet(ptype, data)


def test_railbird_nodes_net_reports_kept_and_reverted(broker, tmp_path):
    """The host's command: the same broker under another host name is kept (exit 0), a port
    nothing listens on is reverted (exit 1), each node's outcome printed."""
    import os
    import subprocess
    import sys

    sn = make_node(broker, tmp_path)

    def nodes_net(*args: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "railbird", "nodes", "net", "--venue", "club"]
        cmd += ["--node", NODE, "--host", "127.0.0.1", "--port", str(broker.port)]
        cmd += ["--user", "railbird-host", "--password", "host-secret", *args]
        env = {**os.environ, "PYTHONPATH": "host"}
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)

    try:
        sn.start()
        sn.wait_connected()
        wait_for(lambda: sn.idle(), timeout=20)
        r = nodes_net("--broker-host", "localhost", "--broker-port", str(broker.port))
        assert r.returncode == 0 and f"t1/{NODE}: done" in r.stdout, r.stdout + r.stderr
        assert sn.call(lambda: sn.node.mqtt.server) == "localhost"
        r = nodes_net(
            "--broker-host", "localhost", "--broker-port", str(free_port()), "--trial-s", "10"
        )
        assert r.returncode == 1 and f"t1/{NODE}: reverted" in r.stdout, r.stdout + r.stderr
        r = nodes_net("--trial-s", "60")
        assert r.returncode == 2 and "broker or wifi" in r.stderr
    finally:
        sn.stop()
