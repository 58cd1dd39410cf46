"""The first `railbird setup` on a terminal without --table asks its questions (venue, tables,
each table's game, nodes and players, the broker's address and name, the listen address,
TLS, the Wi-Fi network) and writes the same installation the flags would. Run in a real
pseudo-terminal."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
import tomllib

from railbird.broker import free_port

ANSWERS = [
    "",  # venue: the default, club
    "t1, t2",
    "",  # t1: 10-ball
    "",  # t1: t1-node
    "Ann,Bob",
    "laser",  # t1: not a sensor Railbird knows: asked again
    "strike",  # t1: a strike sensor
    "14.1",
    "t2-a,t2-b",
    "",  # t2: no players yet
    "",  # t2: no optional sensor
    "127.0.0.1",
    "pool-host.local",  # the name the boards dial first
    "",  # the listen address: the broker's address, this machine's
    "",  # TLS: yes
    "BarWiFi",
]


def test_the_questions_write_the_installation(tmp_path):
    root = tmp_path / "root"
    master, slave = pty.openpty()
    cmd = [sys.executable, "-m", "railbird", "setup", "--root", str(root)]
    cmd += ["--broker-port", str(free_port()), "--tls-port", str(free_port())]
    env = dict(os.environ, RAILBIRD_WIFI_PASSWORD="wifi-pw")
    proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    os.write(master, "".join(a + "\n" for a in ANSWERS).encode())
    out = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the terminal's other side is closed (the process ended)
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert proc.wait(30) == 0, out.decode(errors="replace")
    text = out.decode(errors="replace")
    assert "Venue id" in text and "t2: game" in text, text

    host = tomllib.loads((root / "etc" / "railbird" / "host.toml").read_text())
    assert host["venue"] == "club"
    assert host["tables"]["t1"] == {
        "game": "10-ball",
        "race_to": 5,
        "players": ["Ann", "Bob"],
        "nodes": ["t1-node"],
        "sensors": ["strike"],
    }
    assert "its optional sensors" in text and "unknown sensor(s) laser" in text, text
    assert host["tables"]["t2"] == {"game": "14.1", "target": 100, "nodes": ["t2-a", "t2-b"]}
    node = json.loads((root / "etc" / "railbird" / "nodes" / "t2-b.json").read_text())
    assert node["wifi"] == {"ssid": "BarWiFi", "password": "wifi-pw"}
    assert "name they find it by first" in text, text
    # the boards dial the name and fall back on the address while it does not resolve
    assert node["broker"]["host"] == "pool-host.local"
    assert node["broker"]["addr"] == "127.0.0.1"
    # the defaults offered: listen where the broker's address is, MQTT over TLS
    assert "listen on" in text and "MQTT over TLS" in text, text
    assert host["outputs"]["web"]["host"] == "127.0.0.1" and node["broker"]["tls"] is True
