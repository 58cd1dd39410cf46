"""The small CLI snags of issue 24, item 10, against a real broker: `railbird nodes --config
host.toml` lists the fleet without the word `list` (argparse took the config's path for the
action), and `railbird tail --config host.toml` follows the config's venue on its broker
while keeping the display's login (tail only reads; the host's login may publish)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from harness.mqttsub import client

pytestmark = pytest.mark.broker

CONFIG = """
venue = "club"
[broker]
host = "127.0.0.1"
port = {port}
user = "railbird-host"
password = "host-secret"
[tables.t1]
game = "10-ball"
players = ["Ann", "Bob"]
race_to = 2
nodes = ["t1-node"]
"""


def railbird(*args, env=None, timeout=60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "railbird", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ, **(env or {})),
    )


def test_nodes_with_only_options_lists_the_fleet(broker, tmp_path):
    conf = tmp_path / "host.toml"
    conf.write_text(CONFIG.format(port=broker.port))
    r = railbird("nodes", "--config", str(conf), "--json", "--wait", "0.5")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert [(x["table"], x["node"], x["state"]) for x in rows] == [("t1", "t1-node", "never seen")]
    assert railbird("nodes", "--help").stdout.startswith("usage: railbird nodes")


def test_tail_follows_the_configs_broker_with_the_display_login(broker, tmp_path):
    conf = tmp_path / "host.toml"
    conf.write_text(CONFIG.format(port=broker.port))
    env = {"RAILBIRD_MQTT_PASSWORD": "display-secret"}
    tail = subprocess.Popen(
        [sys.executable, "-m", "railbird", "tail", "--config", str(conf), "--count", "1",
         "--seconds", "60"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, **env),
    )  # fmt: skip
    try:
        # wait for its subscription line, then publish what a display may read
        line = tail.stderr.readline()
        assert f"railbird/v1/club/+ on 127.0.0.1:{broker.port}" in line, line
        c = client(broker.port, "railbird-host", "host-secret")
        try:
            msg = json.dumps({"v": 1, "table": "t1", "text": "Ann breaks", "level": "info"})
            c.publish("railbird/v1/club/t1/announce", msg, qos=1).wait_for_publish(5)
        finally:
            c.disconnect()
            c.loop_stop()
        out, err = tail.communicate(timeout=60)
    finally:
        if tail.poll() is None:
            tail.kill()
    assert tail.returncode == 0, err
    assert "club/t1" in out and "Ann breaks" in out, out
