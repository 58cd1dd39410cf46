"""Over-the-air updates end to end (issue 14, item 5): a real private mosquitto, `railbird run`
answering time sync (so a new set can get healthy), the node firmware on simulated hardware
(SimNode, its flash in a directory) and `railbird nodes update` serving a real `make
firmware` set over HTTP:

- an update succeeds, one table at a time: each node downloads the set, installs it into a
  spare slot, reboots into it on trial, gets healthy and commits; the next table starts only
  after that; `railbird nodes list` then shows the new version; the nodes have the venue
  key and the rollout signs with it (issue 23: they refuse what it did not sign);
- a corrupted file is refused before install: the host refuses such a set, and a node
  served one anyway (another server) says "failed" and keeps running the old set, with
  nothing installed and no reboot;
- a set that never reports healthy is rolled back: one that never syncs at its deadline,
  one that crashes at every boot after its trial boots; the rollout stops there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.hostproc import RailbirdRun
from harness.mqttsub import subscriber
from harness.waiting import wait_for
from railbird.fleet import firmware
from railbird.fleet.rollout import Rollout
from railbird.fleet.server import FirmwareServer
from railbird.fleet.view import Fleet
from rbnode import ota
from rbnode.hw.storage import FileStorage
from rbnode.node import FW_VERSION
from rbnode.simnode import SimNode

pytestmark = [pytest.mark.broker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
NEW = "rbnode-ota-e2e"
PW = "node-pw"
CONFIG = """
venue = "club"
stats_period_s = 0
[broker]
host = "127.0.0.1"
port = {port}
user = "railbird-host"
password = "host-secret"
[tables.t1]
nodes = ["n1"]
[tables.t2]
nodes = ["n2"]
[tables.t3]
nodes = ["n3"]
"""


@pytest.fixture(scope="module")
def fw_set(tmp_path_factory):
    """A real node set (mpy-cross), built once, with a fixed version."""
    sys.path.insert(0, str(REPO / "tools"))
    import build_firmware

    out = tmp_path_factory.mktemp("fw") / "node"
    build_firmware.build(out, version=NEW)
    return out


class Venue:
    """mosquitto + railbird run + one SimNode per table."""

    def __init__(self, broker, tmp: Path, faults=None, tables=("t1", "t2"), sim_kw=None, key=None):
        self.broker = broker
        self.tmp = tmp
        self.key = key  # the venue key's Signer: the nodes get its public part
        self.host = RailbirdRun(tmp / "host", CONFIG.format(port=broker.port))
        self.host.start()
        self.nodes = {}
        for i, t in enumerate(tables):
            n = f"n{i + 1}"
            broker.add_user(n, PW)
            sn = SimNode(
                "127.0.0.1",
                broker.port,
                "club",
                t,
                n,
                PW,
                tmp / n,
                seed=i + 1,
                dev={"sync_period_s": 2, "venue_key": key.public if key else None},
                fw_faults=faults,
                sim_kw=sim_kw,
            )
            sn.start()
            self.nodes[t] = sn
        for sn in self.nodes.values():
            sn.wait_connected()
            wait_for(lambda sn=sn: sn.status()["sync"] is not None, "first sync", 30)

    def cli(self, *args, timeout=120):
        cmd = [sys.executable, "-m", "railbird", "nodes", *args]
        cmd += ["--host", "127.0.0.1", "--port", str(self.broker.port)]
        cmd += ["--user", "railbird-host", "--password", "host-secret", "--wait", "1"]
        if self.key is not None and args[0] == "update":
            cmd += ["--venue-key", str(self.key.path)]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO)

    def close(self):
        for sn in self.nodes.values():
            sn.stop()
        self.host.stop()


@pytest.fixture
def venue(broker, tmp_path):
    made = []

    def make(**kw):
        v = Venue(broker, tmp_path, **kw)
        made.append(v)
        return v

    yield make
    for v in made:
        v.close()


def update_args(fw_set, *more):
    return [
        "update",
        "--firmware",
        str(fw_set),
        "--advertise",
        "127.0.0.1",
        "--http-port",
        "0",
        *more,
    ]


def test_update_succeeds_one_table_at_a_time(venue, fw_set, venue_keys, tmp_path):
    v = venue(key=venue_keys[0])  # signed: the nodes refuse an unsigned command
    n1, n2 = v.nodes["t1"], v.nodes["t2"]
    assert n1.fw == FW_VERSION and n2.fw == FW_VERSION  # the flashed set has no manifest
    r = v.cli(*update_args(fw_set, "--trial-s", "60"))
    out = r.stdout
    assert r.returncode == 0, out + r.stderr
    assert (
        f"t1/n1: done ({FW_VERSION} -> {NEW}" in out
        and f"t2/n2: done ({FW_VERSION} -> {NEW}" in out
    )
    # one table at a time: t2 was told only once t1's node had committed the set
    assert out.index("  t1/n1: done") < out.index("table t2:") < out.index("  t2/n2: ")
    assert "2 of 2 nodes run " + NEW in out
    for sn in (n1, n2):
        assert sn.fw == NEW and sn.reboots == 1
        run = ota.running(FileStorage(sn.state_dir))
        assert run["slot"] == "a" and run["trial"] is None and run["last"]["state"] == "done"
        # the slot holds exactly the set's files, byte for byte
        for f in json.loads((fw_set / "manifest.json").read_text())["files"]:
            assert (Path(sn.state_dir) / "fw" / "a" / f["path"]).read_bytes() == (
                fw_set / f["path"]
            ).read_bytes()
        assert sn.counters()["update_rejected"] == 0
    # the fleet shows it, and a second rollout has nothing to do
    ls = v.cli("list", "--json")
    rows = [json.loads(x) for x in ls.stdout.splitlines()]
    assert [(x["table"], x["node"], x["fw"], x["update"]["state"]) for x in rows] == [
        ("t1", "n1", NEW, "done"),
        ("t2", "n2", NEW, "done"),
    ]
    assert all(
        x["pinmap"] == "sim" and x["rssi"] == -60 and x["counters"]["events"] == 0 for x in rows
    )
    assert all(x["last_seen_s"] is not None and x["last_seen_s"] < 60 for x in rows)
    # `railbird nodes` alone lists them (broker from the environment)
    env = dict(
        os.environ, RAILBIRD_MQTT_PORT=str(v.broker.port), RAILBIRD_MQTT_USER="railbird-host"
    )
    env["RAILBIRD_MQTT_PASSWORD"] = "host-secret"
    text = subprocess.run(
        [sys.executable, "-m", "railbird", "nodes"], capture_output=True, text=True, env=env
    ).stdout.splitlines()
    assert text[0].split() == [
        "TABLE",
        "NODE",
        "STATE",
        "FIRMWARE",
        "PIN",
        "MAP",
        "LAST",
        "SEEN",
        "RSSI",
        "COUNTERS",
        "COMMANDS",
        "NET",
        "UPDATE",
        "SENSORS",
    ]
    for line, (t, n) in zip(text[1:], (("t1", "n1"), ("t2", "n2")), strict=True):
        assert line.split()[:5] == [t, n, "online", NEW, "sim"], line
        # ... COMMANDS NET UPDATE SENSORS: the sensors' health is "-" with no config
        assert "-60 dBm" in line and "ev=0" in line and line.split()[-2:] == ["done", "-"], line
        # the boards hold the venue key: they obey only signed commands, and say so
        assert line.split()[-4:-2] == ["signed", "-"], line
    # with the host's config: its broker login, and its node that never came online
    ls = v.cli("list", "--json", "--config", str(v.host.conf))
    rows = [json.loads(x) for x in ls.stdout.splitlines()]
    assert [(x["table"], x["node"], x["state"], x["fw"]) for x in rows] == [
        ("t1", "n1", "online", NEW),
        ("t2", "n2", "online", NEW),
        ("t3", "n3", "never seen", None),
    ], ls.stdout + ls.stderr
    again = v.cli(*update_args(fw_set))
    assert again.returncode == 0 and again.stdout.count(": up to date") == 2, again.stdout
    assert n1.reboots == 1
    # an older set is not pushed unless the owner forces it (then it is journalled)
    import build_firmware

    old = tmp_path / "old"
    shutil.copytree(fw_set, old)
    build_firmware.reseal(old, "rbnode-0.0.1")
    journal = tmp_path / "downgrades.jsonl"
    back = v.cli(*update_args(old, "--node", "n1", "--downgrade-journal", str(journal)))
    assert back.returncode == 1, back.stdout + back.stderr
    assert "t1/n1: downgrade (skipped: --force-downgrade to go back)" in back.stdout
    assert n1.fw == NEW and n1.reboots == 1 and not journal.exists()


def test_corrupted_file_is_refused_before_install(venue, fw_set, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(fw_set, bad)
    b = bytearray((bad / "rbnode" / "node.mpy").read_bytes())
    b[len(b) // 2] ^= 0xFF
    (bad / "rbnode" / "node.mpy").write_bytes(bytes(b))
    # the host never offers it
    with pytest.raises(firmware.FirmwareError, match=r"rbnode/node\.mpy does not match"):
        firmware.load(bad)
    v = venue(tables=("t1",))
    r = v.cli(*update_args(bad))
    assert r.returncode == 2 and "rbnode/node.mpy does not match" in r.stderr, r.stderr
    # served anyway (a server that does not check): the node refuses it before install
    sn = v.nodes["t1"]
    fleet = Fleet("club")
    c = subscriber(
        v.broker.port,
        lambda c, u, m: fleet.on_message(m.topic, m.payload, m.retain),
        "ota-test",
        topic="railbird/v1/club/+/node/+/status",
    )
    try:
        fw = firmware.load(bad, verify=False)
        with FirmwareServer(fw, "127.0.0.1", 0) as server:
            ro = Rollout(
                fleet,
                lambda t, p: c.publish(t, p, qos=1),
                fw,
                server.url("127.0.0.1"),
                say=lambda s: None,
            )
            wait_for(lambda: fleet.get("t1", "n1") is not None, "the node's status", 30)
            (res,) = ro.run({"t1": ["n1"]})
    finally:
        c.loop_stop()
        c.disconnect()
    assert res.outcome == "failed" and res.detail == "rbnode/node.mpy: sha256 mismatch", res
    assert sn.fw == FW_VERSION and sn.reboots == 0
    run = ota.running(FileStorage(sn.state_dir))
    assert run["slot"] == "" and run["trial"] is None
    assert not (Path(sn.state_dir) / "fw" / "a" / "manifest.json").exists()
    assert not (Path(sn.state_dir) / "fw" / "boot.json").exists()
    st = sn.status()["update"]
    assert st["state"] == "failed" and st["error"] == "rbnode/node.mpy: sha256 mismatch"


def test_never_healthy_set_is_rolled_back(venue, fw_set):
    """t1's node never syncs on the new set (rolled back at its 10 s deadline), so the
    rollout stops before t2."""
    v = venue(faults={NEW: "no_sync"})
    n1, n2 = v.nodes["t1"], v.nodes["t2"]
    r = v.cli(*update_args(fw_set, "--trial-s", "10"))
    out = r.stdout
    assert r.returncode == 1, out + r.stderr
    assert "t1/n1: rolled_back (no healthy status within 10 s)" in out
    assert "t2/n2: not reached (rollout stopped)" in out
    assert "0 of 2 nodes run " + NEW in out
    assert n1.reboots == 2 and n1.fw == FW_VERSION  # into the trial, and back
    assert n2.reboots == 0
    run = ota.running(FileStorage(n1.state_dir))
    assert run["slot"] == "" and run["last"]["state"] == "rolled_back"
    wait_for(lambda: n1.status()["update"]["state"] == "rolled_back", "rolled back status", 30)


def test_crashing_set_is_rolled_back_after_its_trial_boots(venue, fw_set):
    v = venue(faults={NEW: "crash"}, tables=("t1",))
    sn = v.nodes["t1"]
    r = v.cli(*update_args(fw_set, "--trial-boots", "2"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "t1/n1: rolled_back (no healthy status in 2 boots)" in r.stdout
    assert sn.crashes == 2 and sn.fw == FW_VERSION


def test_a_rollout_goes_past_an_offline_board_and_skips_a_match_in_play(venue, fw_set):
    """Issue 24, item 6: a rollout stopped at the first table with an offline board (so in
    the order t1, t10, t11... one unplugged board meant nothing was updated), and never
    checked for a match in play. Now the offline board is skipped and reported, the next
    table is updated, and a table whose retained state shows a match in play is skipped
    (a board restarting mid-rack loses what it senses meanwhile)."""
    v = venue()
    n1, n2 = v.nodes["t1"], v.nodes["t2"]
    in_play = {"game": "10-ball", "players": ["Ann", "Bob"], "awaiting": None, "rack": 2,
               "match_winner": None, "ended": None}  # fmt: skip
    fleet = Fleet("club")
    c = subscriber(
        v.broker.port,
        lambda c, u, m: fleet.on_message(m.topic, m.payload, m.retain),
        "ota-skip-test",
        topic=tuple(fleet.topics()),
    )
    try:
        msg = json.dumps({"v": 1, "table": "t2", "game": "10-ball", "state": in_play})
        c.publish("railbird/v1/club/t2/state", msg, qos=1, retain=True).wait_for_publish(5)
        wait_for(lambda: fleet.in_play("t2") and fleet.get("t1", "n1"), "t2's state, n1", 30)
        assert not fleet.in_play("t1")
        fw = firmware.load(fw_set)
        with FirmwareServer(fw, "127.0.0.1", 0) as server:
            ro = Rollout(
                fleet,
                lambda t, p: c.publish(t, p, qos=1),
                fw,
                server.url("127.0.0.1"),
                trial_s=60,
                say=lambda s: None,
            )
            # t0's board is unplugged (never seen): first in the order, as t1 before t10
            res = ro.run({"t0": ["gone"], "t1": ["n1"], "t2": ["n2"]})
    finally:
        c.publish("railbird/v1/club/t2/state", b"", qos=1, retain=True).wait_for_publish(5)
        c.loop_stop()
        c.disconnect()
    assert [(r.table, r.node, r.outcome) for r in res] == [
        ("t0", "gone", "offline"),
        ("t1", "n1", "done"),
        ("t2", "n2", "match in play"),
    ], [r.line() for r in res]
    assert n1.fw == NEW and n1.reboots == 1
    assert n2.fw == FW_VERSION and n2.reboots == 0  # not touched mid-match


def test_a_board_with_a_dead_channel_never_commits(venue, fw_set):
    """Issue 24, item 6: health includes sensing. A board whose pocket beam on channel 2 is
    stuck blocked and whose rail channel 1 reads full scale (rbnode.hw.sim `dead`) gets
    connected and synced on the new set, but its trial names the dead channels and it is
    rolled back at the deadline."""
    v = venue(tables=("t1",), sim_kw={"dead": {"beam": [2], "rail": [1]}})
    sn = v.nodes["t1"]
    pockets = {p["ch"]: p["pocket"] for p in sn.node.cfg["pockets"]}
    rails = {r["ch"]: r["rail"] for r in sn.node.cfg["rails"]}
    dead = f"pocket {pockets[2]}, rail {rails[1]}"
    assert sn.call(sn.node.sensing_dead) == dead.split(", ")
    r = v.cli(*update_args(fw_set, "--trial-s", "15"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert (
        f"t1/n1: rolled_back (no healthy status within 15 s: sensing: {dead} not alive)" in r.stdout
    ), r.stdout
    assert sn.fw == FW_VERSION and sn.reboots == 2
    run = ota.running(FileStorage(sn.state_dir))
    assert run["slot"] == "" and run["last"]["state"] == "rolled_back"
