"""The download path of an over-the-air update: the node's HTTP/1.0 client (rbnode.http, the
firmware's own code under CPython asyncio) against the host's firmware server
(railbird.fleet.server), and a node's answers to update commands it cannot or need not run
(a real mosquitto, SimNode)."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.mqttsub import subscriber
from railbird.fleet import firmware
from railbird.fleet.server import FirmwareServer
from rbnode import http
from rbnode.node import FW_VERSION
from rbnode.simnode import SimNode
from rbproto import codec

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fw_set(tmp_path_factory):
    sys.path.insert(0, str(REPO / "tools"))
    import build_firmware

    out = tmp_path_factory.mktemp("fw") / "node"
    build_firmware.build(out, version="rbnode-9-http-test")
    return out


def fetch(url, chunk=1024):
    got = []
    n = asyncio.run(http.get(url, got.append, timeout_ms=5000, chunk=chunk))
    return n, got


def test_the_node_client_fetches_exactly_the_set(fw_set):
    fw = firmware.load(fw_set)
    with FirmwareServer(fw, "127.0.0.1", 0) as srv:
        base = srv.url("127.0.0.1")
        n, got = fetch(base + "manifest.json")
        assert b"".join(got) == (fw_set / "manifest.json").read_bytes() and n == len(fw.manifest)
        assert max(len(c) for c in got) <= 1024  # streamed in the node's chunks
        path = fw.files[0][0]
        assert b"".join(fetch(base + path, chunk=100)[1]) == (fw_set / path).read_bytes()
        # only the set's own files under its own version: never the board's config, the
        # loader, another version or a path outside the set
        for bad in ("config.json", "boot.py", "../node/manifest.json", "MANIFEST.txt"):
            with pytest.raises(http.HTTPError, match="HTTP 404"):
                fetch(base + bad)
        with pytest.raises(http.HTTPError, match="HTTP 404"):
            fetch(base.replace("rbnode-9-http-test", "rbnode-9-other") + "manifest.json")
        assert srv.served["manifest.json"] == 1 and srv.refused == 5


def _one_shot_server(answer: bytes):
    """A TCP server that sends `answer` to the first client and closes -> port."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)

    def serve():
        c, _ = s.accept()
        c.recv(4096)
        c.sendall(answer)
        c.close()
        s.close()

    threading.Thread(target=serve, daemon=True).start()
    return s.getsockname()[1]


def test_a_short_or_broken_answer_is_an_error():
    port = _one_shot_server(b"HTTP/1.0 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 40)
    with pytest.raises(http.HTTPError, match="40 of 100 bytes"):
        fetch(f"http://127.0.0.1:{port}/f")
    port = _one_shot_server(b"SSH-2.0-OpenSSH\r\n")
    with pytest.raises(http.HTTPError, match="not an HTTP answer"):
        fetch(f"http://127.0.0.1:{port}/f")
    assert http.split_url("http://h:81/a/b") == ("h", 81, "/a/b")
    assert http.split_url("http://h") == ("h", 80, "/")
    with pytest.raises(http.HTTPError):
        http.split_url("https://h/x")


@pytest.mark.broker
def test_commands_the_node_need_not_or_cannot_run(broker, tmp_path):
    """The running version: "done" at once, nothing fetched. A command the codec refuses:
    counted, its reason in status.update. A command while another runs: counted, ignored."""
    broker.add_user("n1", "pw")
    statuses = []
    c = subscriber(
        broker.port,
        lambda c, u, m: statuses.append(json.loads(m.payload)),
        "ota-cmd-test",
        topic="railbird/v1/club/t1/node/n1/status",
    )
    sn = SimNode("127.0.0.1", broker.port, "club", "t1", "n1", "pw", tmp_path / "n1")
    sn.start()
    topic = codec.topic("club", "t1", "update", "n1")

    def send(msg):
        payload = msg if isinstance(msg, bytes) else json.dumps(msg).encode()
        c.publish(topic, payload, qos=1)

    def wait_update(pred):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            for s in statuses[::-1]:
                if pred(s.get("update") or {}):
                    return s
            time.sleep(0.05)
        raise AssertionError(f"no such status.update: {[s.get('update') for s in statuses]}")

    cmd = {
        "v": 1,
        "id": "u1",
        "version": FW_VERSION,
        "url": "http://127.0.0.1:9/fw/x/",
        "manifest_sha256": "0" * 64,
    }
    try:
        sn.wait_connected()
        send(cmd)
        s = wait_update(lambda u: u.get("id") == "u1")
        assert s["update"] == {"id": "u1", "version": FW_VERSION, "state": "done", "error": None}
        assert s["fw"] == FW_VERSION
        send({**cmd, "id": "u2", "url": "ftp://x/"})
        s = wait_update(lambda u: u.get("state") == "failed")
        assert s["update"]["error"].startswith("bad value: url") and "id" not in s["update"]
        assert sn.counters()["update_rejected"] == 1
        # another version from a server that is not there: fails (nothing to download)
        send({**cmd, "id": "u3", "version": "rbnode-9"})
        s = wait_update(lambda u: u.get("id") == "u3" and u["state"] == "failed")
        assert s["update"]["error"].startswith("download:"), s["update"]
        # a server that never answers: the download waits, and a second command is refused
        hold = socket.socket()
        hold.bind(("127.0.0.1", 0))
        hold.listen(1)
        url = f"http://127.0.0.1:{hold.getsockname()[1]}/fw/x/"
        send({**cmd, "id": "u4", "version": "rbnode-9", "url": url})
        wait_update(lambda u: u.get("id") == "u4" and u["state"] == "downloading")
        send({**cmd, "id": "u5", "version": "rbnode-10"})
        deadline = time.monotonic() + 10
        while sn.counters()["update_rejected"] < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sn.counters()["update_rejected"] == 2
        assert sn.status()["update"]["id"] == "u4"
        hold.close()
        assert sn.reboots == 0 and sn.fw == FW_VERSION
    finally:
        sn.stop()
        c.loop_stop()
        c.disconnect()


@pytest.mark.broker
def test_a_retained_update_is_never_obeyed(broker, tmp_path):
    """Issue 23, item 6: a retained `update` (the protocol never retains one) was obeyed
    again after the host's rollout, after a power cut and after a re-flash. The node refuses
    it, counts it and says why in its status; a live command is still obeyed."""
    broker.add_user("n1", "pw")
    topic = codec.topic("club", "t1", "update", "n1")
    cmd = {"v": 1, "id": "old", "version": "rbnode-0-old", "url": "http://127.0.0.1:9/fw/x/",
           "manifest_sha256": "0" * 64}  # fmt: skip
    c = subscriber(broker.port, lambda *a: None, "ota-retained-test", topic="railbird/v1/none")
    c.publish(topic, json.dumps(cmd).encode(), qos=1, retain=True).wait_for_publish(5)
    sn = SimNode("127.0.0.1", broker.port, "club", "t1", "n1", "pw", tmp_path / "n1")
    sn.start()
    try:
        sn.wait_connected()
        deadline = time.monotonic() + 30
        while sn.counters()["update_rejected"] < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sn.counters()["update_rejected"] == 1
        assert sn.status()["update"] == {"state": "failed", "error": "refused: a retained update"}
        # the same command live (not retained) is taken: it fails only on the download
        c.publish(topic, b"", qos=1, retain=True).wait_for_publish(5)
        live = {**cmd, "id": "live", "version": FW_VERSION}
        c.publish(topic, json.dumps(live).encode(), qos=1).wait_for_publish(5)
        deadline = time.monotonic() + 30
        while (sn.status().get("update") or {}).get("id") != "live":
            assert time.monotonic() < deadline, sn.status()
            time.sleep(0.05)
        assert sn.status()["update"]["state"] == "done"  # its own version: nothing to do
        assert sn.reboots == 0
    finally:
        sn.stop()
        c.loop_stop()
        c.disconnect()
