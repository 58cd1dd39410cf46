"""Updates only from the venue (issue 23, defect 6): a board provisioned with the venue key
takes only the `update` and `config` commands that key signed, never a retained one, and
never an older firmware version unless the owner forced that downgrade (protocol/SPEC.md
"Signed commands"; rbnode.trust). The firmware's own Node on simulated hardware (SimNode)
against a real mosquitto; the keys are real RSA-3072 keys made by railbird.venuekey
(openssl), the signatures the host's.

Each refusal is counted (`update_rejected`, `config_rejected`) and says why in the status;
nothing is downloaded or applied. What the key did sign goes through: an update to the
download (a server that is not there: "download: ..."), a config applied.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from harness.mqttsub import subscriber
from railbird.hardware.calibrate import NodeLink
from rbnode.node import FW_VERSION
from rbnode.simnode import SimNode, config_message
from rbnode.trust import Trust
from rbproto import codec

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

pytestmark = pytest.mark.broker

NODE, PW = "n1", "pw"
UPDATE = codec.topic("club", "t1", "update", NODE)
CONFIG = codec.topic("club", "t1", "config", NODE)
NOWHERE = "http://127.0.0.1:9/fw/x/"  # nothing listens: a command that passed fails there


@pytest.fixture
def keys(venue_keys):
    """The venue's key and another one (a self-made set's signer)."""
    return venue_keys


def update(version, uid, **kw):
    return {"v": 1, "id": uid, "version": version, "url": NOWHERE,
            "manifest_sha256": "ab" * 32, **kw}  # fmt: skip


class Host:
    """The host's login: publishes commands, live unless asked to retain."""

    def __init__(self, broker):
        self.c = subscriber(broker.port, lambda *a: None, "signed-test", topic="railbird/v1/x")

    def send(self, topic, msg, retain=False):
        payload = msg if isinstance(msg, bytes) else json.dumps(msg).encode()
        self.c.publish(topic, payload, qos=1, retain=retain).wait_for_publish(5)

    def close(self):
        self.c.loop_stop()
        self.c.disconnect()


def node(broker, tmp_path, key=None, **kw):
    broker.add_user(NODE, PW)
    dev = {"venue_key": key.public} if key is not None else None
    sn = SimNode("127.0.0.1", broker.port, "club", "t1", NODE, PW, tmp_path / NODE, dev=dev, **kw)
    sn.start()
    sn.wait_connected()
    return sn


def wait_update(sn, uid, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        u = sn.status().get("update") or {}
        if u.get("id") == uid and u["state"] in ("failed", "done"):
            return u
        assert time.monotonic() < deadline, sn.status()
        time.sleep(0.02)


def wait_counter(sn, name, n, timeout=20):
    deadline = time.monotonic() + timeout
    while sn.counters()[name] < n:
        assert time.monotonic() < deadline, (name, sn.counters()[name], sn.status())
        time.sleep(0.02)
    assert sn.counters()[name] == n


def test_only_updates_the_venue_key_signed_are_obeyed(broker, tmp_path, keys):
    venue, other = keys
    host = Host(broker)
    sn = node(broker, tmp_path, venue)
    try:
        # unsigned: the right hash is not enough
        host.send(UPDATE, update("rbnode-9", "unsigned"))
        u = wait_update(sn, "unsigned")
        assert u["state"] == "failed" and u["error"].startswith("refused: unsigned update"), u
        # a set signed by another key (a self-built set on another server)
        host.send(UPDATE, other.sign_update(update("rbnode-9", "other")))
        u = wait_update(sn, "other")
        assert u["error"] == "refused: update signature is not the venue key's", u
        # the venue's signature over another manifest, or another version
        good = venue.sign_update(update("rbnode-9", "moved"))
        host.send(UPDATE, {**good, "manifest_sha256": "cd" * 32})
        assert wait_update(sn, "moved")["error"].endswith("is not the venue key's")
        host.send(UPDATE, {**good, "id": "renamed", "version": "rbnode-10"})
        assert wait_update(sn, "renamed")["error"].endswith("is not the venue key's")
        assert sn.counters()["update_rejected"] == 4
        # signed by the venue: obeyed (the download is all that fails)
        host.send(UPDATE, venue.sign_update(update("rbnode-9", "venue")))
        u = wait_update(sn, "venue")
        assert u["error"].startswith("download:"), u
        assert sn.counters()["update_rejected"] == 4 and sn.reboots == 0
        assert "signed" in sn.node.birth_msg()["caps"]  # the host can see it checks
        # the same signed command retained: refused, however good its signature
        host.send(UPDATE, venue.sign_update(update("rbnode-9", "kept")), retain=True)
        sn.restart()  # a retained message reaches a node as retained when it subscribes
        sn.wait_connected()
        wait_counter(sn, "update_rejected", 1)  # counters are per boot
        assert sn.status()["update"] == {"state": "failed", "error": "refused: a retained update"}
        host.send(UPDATE, b"", retain=True)
    finally:
        sn.stop()
        host.close()


def test_a_downgrade_only_when_the_owner_forced_it_for_this_boot(broker, tmp_path, keys):
    venue, _ = keys
    host = Host(broker)
    sn = node(broker, tmp_path, venue)
    old = "rbnode-0.0.9"  # before FW_VERSION (rbnode-0.1.0)
    try:
        host.send(UPDATE, venue.sign_update(update(old, "back")))
        u = wait_update(sn, "back")
        assert u["error"] == f"refused: {old} is older than the running {FW_VERSION} (the " \
            "owner forces a downgrade)", u  # fmt: skip
        # forced, but for another boot (a forced downgrade captured and replayed later)
        stale = ("club", "t1", NODE, sn.boot - 1, FW_VERSION)
        host.send(UPDATE, venue.sign_update(update(old, "replay"), stale))
        assert wait_update(sn, "replay")["error"].startswith("refused: the downgrade was forced "
                                                             f"for boot {sn.boot - 1}")  # fmt: skip
        # forced for this boot, but the signature does not cover the binding it carries
        now = ("club", "t1", NODE, sn.boot, FW_VERSION)
        forged = {**venue.sign_update(update(old, "forged"), stale),
                  "downgrade": {"boot": sn.boot, "from": FW_VERSION}}  # fmt: skip
        host.send(UPDATE, forged)
        assert wait_update(sn, "forged")["error"].endswith("is not the venue key's")
        assert sn.counters()["update_rejected"] == 3
        host.send(UPDATE, venue.sign_update(update(old, "forced"), now))
        assert wait_update(sn, "forced")["error"].startswith("download:")
        # forward is always fine
        host.send(UPDATE, venue.sign_update(update("rbnode-0.1.1", "forward")))
        assert wait_update(sn, "forward")["error"].startswith("download:")
        assert sn.counters()["update_rejected"] == 3
    finally:
        sn.stop()
        host.close()


def wait_config(sn, pred, timeout=20):
    deadline = time.monotonic() + timeout
    while not pred(sn.status()):
        assert time.monotonic() < deadline, sn.status()
        time.sleep(0.02)
    return sn.status()


def test_only_configs_the_venue_key_signed_are_applied(broker, tmp_path, keys):
    venue, other = keys
    host = Host(broker)
    sn = node(broker, tmp_path, venue)
    none = {"pockets": [], "rails": [], "cue_ch": None}  # every pocket removed
    try:
        host.send(CONFIG, json.loads(config_message(2, **none)))
        s = wait_config(sn, lambda s: s.get("config_error"))
        assert s["config_error"].startswith("refused: unsigned config"), s
        assert sn.counters()["config_rejected"] == 1
        host.send(CONFIG, other.sign_config("club", "t1", NODE, json.loads(config_message(3))))
        wait_counter(sn, "config_rejected", 2)
        assert sn.status()["config_error"] == "refused: config signature is not the venue key's"
        # the venue's config for another node is not this node's
        host.send(CONFIG, venue.sign_config("club", "t1", "n2", json.loads(config_message(4))))
        wait_counter(sn, "config_rejected", 3)
        assert sn.status().get("config_rev", 0) < 2
        # the venue's, as `railbird calibrate` publishes it (hardware.calibrate.NodeLink
        # signs with the venue key it is given)
        link = NodeLink("127.0.0.1", broker.port, "club", "t1", NODE, password="host-secret",
                        signer=venue).connect()  # fmt: skip
        try:
            link.publish_config(json.loads(config_message(5, jam_us=3000000)))
        finally:
            link.close()
        s = wait_config(sn, lambda s: s.get("config_rev") == 5)
        assert s["config_error"] is None and sn.node.cfg["jam_us"] == 3000000
        assert sn.counters()["config_rejected"] == 3
    finally:
        sn.stop()
        host.close()


def test_a_retained_config_is_never_applied(broker, tmp_path):
    """The defect as found: with no venue key at all, a retained config with every pocket
    removed was applied. The retained copy of the config the node runs is no command and
    no refusal (`railbird calibrate` leaves one)."""
    host = Host(broker)
    host.send(CONFIG, config_message(7, pockets=[], rails=[], cue_ch=None), retain=True)
    sn = node(broker, tmp_path)
    try:
        wait_counter(sn, "config_rejected", 1)
        s = sn.status()
        assert s["config_error"] == "refused: a retained config", s
        assert len(sn.node.cfg["pockets"]) == 6 and s.get("config_rev", 0) < 7
        # the same config live is obeyed (no key: unsigned is fine on this board)
        host.send(CONFIG, b"", retain=True)
        host.send(CONFIG, config_message(7, pockets=[], rails=[], cue_ch=None))
        s = wait_config(sn, lambda s: s.get("config_rev") == 7)
        assert sn.node.cfg["pockets"] == []
        # ... and its retained copy, re-delivered at the next connect, is nothing to obey
        host.send(CONFIG, config_message(7, pockets=[], rails=[], cue_ch=None), retain=True)
        sn.restart()
        sn.wait_connected()
        s = wait_config(sn, lambda s: s.get("config_rev") == 7)
        assert sn.counters()["config_rejected"] == 0 and s["config_error"] is None
        host.send(CONFIG, b"", retain=True)
    finally:
        sn.stop()
        host.close()


def trust_vectors(venue, other):
    """Every decision of the tests above, as data: (name, kind, msg, retained, boot,
    running, the verdict's start)."""
    up, old = update("rbnode-9", "u"), update("rbnode-0.0.9", "d")
    now = ("club", "t1", NODE, 4, FW_VERSION)
    stale = ("club", "t1", NODE, 3, FW_VERSION)
    cfg = json.loads(config_message(5))
    sig = "refused: update signature is not the venue key's"
    csig = "refused: config signature is not the venue key's"
    return [
        ("unsigned", "update", up, False, 4, FW_VERSION, "refused: unsigned update"),
        ("other-key", "update", other.sign_update(up), False, 4, FW_VERSION, sig),
        ("moved-hash", "update", {**venue.sign_update(up), "manifest_sha256": "cd" * 32},
         False, 4, FW_VERSION, sig),
        ("venue", "update", venue.sign_update(up), False, 4, FW_VERSION, "ok"),
        ("retained", "update", venue.sign_update(up), True, 4, FW_VERSION,
         "refused: a retained update"),
        ("older", "update", venue.sign_update(old), False, 4, FW_VERSION,
         f"refused: rbnode-0.0.9 is older than the running {FW_VERSION}"),
        ("replayed-downgrade", "update", venue.sign_update(old, stale), False, 4, FW_VERSION,
         "refused: the downgrade was forced for boot 3"),
        ("forced", "update", venue.sign_update(old, now), False, 4, FW_VERSION, "ok"),
        ("config-unsigned", "config", cfg, False, 4, None, "refused: unsigned config"),
        ("config-other-key", "config", other.sign_config("club", "t1", NODE, cfg), False, 4,
         None, csig),
        ("config-other-node", "config", venue.sign_config("club", "t1", "n2", cfg), False, 4,
         None, csig),
        ("config-venue", "config", venue.sign_config("club", "t1", NODE, cfg), False, 4, None,
         "ok"),
        ("config-retained", "config", venue.sign_config("club", "t1", NODE, cfg), True, 4, None,
         "refused: a retained config"),
    ]  # fmt: skip


@pytest.mark.micropython
def test_the_same_decisions_in_micropython(micropython, keys, tmp_path):
    """rbnode.trust and rbproto.signing in real MicroPython 1.27 (WebAssembly port) on the
    host's real signatures: the same verdict as CPython for every vector, and the time and
    heap of one RSA-3072 verification (docs/firmware-sensing.md has the figures)."""
    venue, other = keys
    dev = {"venue": "club", "table": "t1", "node": NODE, "venue_key": venue.public}
    vectors = trust_vectors(venue, other)
    want = {}
    out = []
    for name, kind, msg, retained, boot, running, verdict in vectors:
        codec.validate(kind, msg)  # every vector is a valid message: only trust says no
        t = Trust(dev)
        got = (
            t.update(msg, retained, boot, running) if kind == "update" else t.config(msg, retained)
        )
        assert (got or "ok").startswith(verdict), (name, got)
        want[name] = got or "ok"
        out.append({"name": name, "kind": kind, "msg": msg, "retained": retained,
                    "boot": boot, "running": running, "dev": dev})  # fmt: skip
    st = b"railbird-update/1\nrbnode-9\n" + b"ab" * 32 + b"\n"
    timing = {"key": venue.public, "statement": st.decode(), "sig": venue.sign(st)}
    (tmp_path / "trust_vectors.json").write_text(json.dumps({"vectors": out, "time": timing}))
    r = micropython(
        HERE / "mp" / "run_trust.py",
        paths=[REPO / "firmware", REPO / "protocol", tmp_path],
        timeout=120,
        cwd=tmp_path,
    )
    assert r.ok, r.stderr + r.stdout
    got = {}
    for line in r.stdout.splitlines():
        if line.startswith("TRUST "):
            name, _, verdict = line[6:].partition(" ")
            got[name] = verdict
    assert got == want
    assert "TRUST-ALL-OK" in r.stdout
    print("\n" + next(x for x in r.stdout.splitlines() if x.startswith("TRUST-TIME")))
