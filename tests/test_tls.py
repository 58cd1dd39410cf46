"""TLS end to end (protocol/SPEC.md §Security): a private mosquitto with a TLS listener and a
throwaway CA; the node firmware's own MQTT client (SimNode, TLS from its config keys) logs in
over TLS and publishes events; `railbird run` (TOML `tls = true`, `cafile`) ingests them over
TLS; `railbird tail --tls --cafile` prints them. Clients that do not trust the CA, or that
reach the broker under a name its certificate does not carry, are refused with a
certificate error and keep running."""

import asyncio
import os
import socket
import ssl
import subprocess
import sys
import time

import paho.mqtt.client as mqtt
import pytest

from harness.hostproc import RailbirdRun
from harness.waiting import wait_for
from railbird.broker import PrivateBroker, make_ca
from railbird.config import ConfigError, from_dict
from rbnode import mqtt as rbmqtt
from rbnode.simnode import SimNode

pytestmark = pytest.mark.broker

NODE, PW = "t1-node", "node-pw"

CONFIG = """
venue = "club"
subscribe = ["t1"]
reorder_window_ms = 100
stats_period_s = 0
[broker]
host = "127.0.0.1"
port = {port}
user = "railbird-host"
password = "host-secret"
tls = true
cafile = "{cafile}"
client_id = "tls-host"
[shots]
quiet_ms = 300
lip_rest_ms = 300
[tables.t1]
game = "10-ball"
players = ["Ann", "Bob"]
race_to = 3
nodes = ["{node}"]
"""


@pytest.fixture
def tls_broker(tmp_path):
    b = PrivateBroker(tmp_path / "broker", tls=True)
    b.add_user(NODE, PW)
    b.start()
    try:
        yield b
    finally:
        b.stop()


def tail_cmd(port, *extra):
    return [
        sys.executable,
        "-m",
        "railbird",
        "tail",
        "--venue",
        "club",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--user",
        "railbird-display",
        *extra,
    ]


def env():
    e = dict(os.environ, RAILBIRD_MQTT_PASSWORD="display-secret")
    e.pop("RAILBIRD_MQTT_TLS", None)
    e.pop("RAILBIRD_MQTT_CAFILE", None)
    return e


# -- the broker's configuration -----------------------------------------------------------


def test_plain_config_unchanged_and_tls_listener_added(tmp_path):
    plain = PrivateBroker(tmp_path / "plain")
    text = plain._write_config().read_text()
    assert text.count("listener ") == 1 and "certfile" not in text and "keyfile" not in text
    assert plain.tls_port is None and plain.cafile is None
    tls = PrivateBroker(tmp_path / "tls", tls=True, port=plain.port)
    ttext = tls._write_config().read_text()
    # the plain configuration is a prefix of the TLS one: TLS only appends its listener
    assert ttext.startswith(text.replace(str(tmp_path / "plain"), str(tmp_path / "tls")))
    assert f"listener {tls.tls_port} 127.0.0.1" in ttext
    assert f"certfile {tmp_path / 'tls' / 'tls' / 'server.crt'}" in ttext
    assert (
        tls.cafile.exists()
        and (tmp_path / "tls" / "tls" / "server.key").stat().st_mode & 0o077 == 0
    )
    # the server certificate names 127.0.0.1 and localhost and chains to the CA
    ctx = ssl.create_default_context(cafile=str(tls.cafile))
    ctx.verify_flags |= ssl.VERIFY_X509_STRICT
    tls.start()
    try:
        for name in ("127.0.0.1", "localhost"):
            raw = socket.create_connection(("127.0.0.1", tls.tls_port), timeout=5)
            with ctx.wrap_socket(raw, server_hostname=name) as s:
                assert s.version() in ("TLSv1.2", "TLSv1.3")
        # the certificates survive a restart (clients keep trusting the same CA)
        ca = tls.cafile.read_bytes()
        tls.restart()
        assert tls.cafile.read_bytes() == ca
    finally:
        tls.stop()


def test_host_config_tls_keys(tmp_path):
    ca = tmp_path / "ca.crt"
    ca.write_text("x")
    c = from_dict({"venue": "v", "broker": {"tls": True, "cafile": str(ca), "port": 8883}})
    assert c.broker.tls and c.broker.cafile == str(ca) and c.broker.port == 8883
    assert from_dict({"venue": "v", "broker": {"tls": True}}).broker.cafile == ""
    with pytest.raises(ConfigError, match="tls is false"):
        from_dict({"venue": "v", "broker": {"cafile": str(ca)}})
    with pytest.raises(ConfigError, match="no such file"):
        from_dict({"venue": "v", "broker": {"tls": True, "cafile": str(tmp_path / "nope")}})
    with pytest.raises(ConfigError, match="expected bool"):
        from_dict({"venue": "v", "broker": {"tls": "yes"}})


# -- node -> broker -> host daemon and tail, all over TLS ----------------------------------


@pytest.mark.slow
def test_node_daemon_and_tail_over_tls(tls_broker, tmp_path):
    b = tls_broker
    host = RailbirdRun(
        tmp_path / "host", CONFIG.format(port=b.tls_port, cafile=b.cafile, node=NODE)
    )
    tail_out, tail_err = tmp_path / "tail.out", tmp_path / "tail.err"
    tail = None
    sn = None
    try:
        host.start(what="host connected over TLS")
        with open(tail_out, "wb") as o, open(tail_err, "wb") as e:
            tail = subprocess.Popen(
                tail_cmd(b.tls_port, "--tls", "--cafile", str(b.cafile), "--seconds", "60"),
                stdout=o,
                stderr=e,
                env=env(),
            )
        wait_for(lambda: "# tailing" in tail_err.read_text(), "tail subscribed over TLS", 20)

        # the node's TLS comes from its device config keys, as on the board
        sn = SimNode(
            "127.0.0.1",
            b.tls_port,
            "club",
            "t1",
            NODE,
            PW,
            tmp_path / "node",
            seed=3,
            dev={"broker": {"tls": True, "ca": str(b.cafile)}},
        )
        assert sn.ssl is not None and sn.ssl.verify_mode == ssl.CERT_REQUIRED
        sn.start()
        sn.wait_connected(15)
        tls_version = sn.call(lambda: sn.node.mqtt._writer.get_extra_info("ssl_object").version())
        assert tls_version in ("TLSv1.2", "TLSv1.3")
        sn.drop("HL", dur_us=30000)
        sn.rail("LH", 1500)
        sn.drop("FR", dur_us=25000)
        sn.wait_idle(30)

        # the daemon ingested the three events over TLS
        st = host.wait(lambda s: s.get("events", 0) >= 3, "host ingested 3 events")
        assert st["events"] == 3, st

        # tail printed them (and the node's birth/status)
        def printed():
            t = tail_out.read_text()
            return "drop HL" in t and "rail LH" in t and "drop FR" in t and t

        out = wait_for(printed, "tail printed the events", 20)
        assert "club/t1/t1-node events" in out and "club/t1/t1-node birth" in out
        assert "REJECTED" not in out
        counters = sn.counters()
        assert counters["published"] >= 3 or counters["events"] >= 3, counters
        assert sn.node.mqtt.counters["conn_fail"] == 0
    finally:
        if sn is not None:
            sn.stop()
        if tail is not None:
            tail.terminate()
            tail.wait(10)
        host.stop()
    # the broker saw TLS connections from all three on the TLS port
    log = (b.workdir / "mosquitto.log").read_text()
    assert f"on port {b.tls_port}" in log


# -- refusals ------------------------------------------------------------------------------


def test_untrusted_ca_refused_everywhere(tls_broker, tmp_path):
    b = tls_broker
    other_ca, _ = make_ca(tmp_path / "other", cn="Somebody else's CA")

    # firmware client (CPython): connect() fails with a certificate error ...
    ctx = rbmqtt.ssl_context(str(other_ca))
    c = rbmqtt.MQTTClient(NODE, "127.0.0.1", b.tls_port, NODE, PW, ssl=ctx)
    with pytest.raises(ssl.SSLCertVerificationError, match="CERTIFICATE_VERIFY_FAILED"):
        asyncio.run(c.connect())
    assert c.state == rbmqtt.DISCONNECTED and c._writer is None

    # ... and run() counts it, retries with backoff and keeps going (no crash)
    async def run_briefly():
        cl = rbmqtt.MQTTClient(
            NODE, "127.0.0.1", b.tls_port, NODE, PW, ssl=ctx, backoff_min_ms=20, backoff_max_ms=50
        )
        task = asyncio.create_task(cl.run())
        await asyncio.sleep(0.6)
        assert not task.done()
        cl.stop()
        await asyncio.wait_for(task, 2)
        return cl

    cl = asyncio.run(run_briefly())
    assert cl.counters["conn_fail"] >= 2 and cl.counters["connects"] == 0
    assert "CERTIFICATE_VERIFY_FAILED" in cl.last_error

    # railbird tail with the wrong CA, and with the system store: a clear error, exit 1
    for extra in (["--cafile", str(other_ca)], []):
        r = subprocess.run(
            tail_cmd(b.tls_port, "--tls", *extra, "--seconds", "5"),
            capture_output=True,
            text=True,
            timeout=30,
            env=env(),
        )
        assert r.returncode == 1, r.stderr
        assert "cannot connect" in r.stderr and "CERTIFICATE_VERIFY_FAILED" in r.stderr
        assert "Traceback" not in r.stderr
    # a CA file that does not exist: a one-line error, no traceback
    r = subprocess.run(
        tail_cmd(b.tls_port, "--tls", "--cafile", str(tmp_path / "nope.crt"), "--seconds", "5"),
        capture_output=True,
        text=True,
        timeout=30,
        env=env(),
    )
    assert r.returncode != 0 and "nope.crt" in r.stderr and "Traceback" not in r.stderr

    # the host daemon's ingest: not connected, the reason kept and logged, still running
    from railbird.daemon.worker import Daemon

    cfg = from_dict(
        {
            "venue": "club",
            "journal": str(tmp_path / "j.sqlite"),
            "broker": {
                "port": b.tls_port,
                "password": "host-secret",
                "tls": True,
                "cafile": str(other_ca),
                "client_id": "bad-ca-host",
            },
            "outputs": {"feeds": {"enabled": False}},
        }
    )
    d = Daemon(cfg).start()
    try:
        assert not d.ingest.connected.wait(2)
        assert "CERTIFICATE_VERIFY_FAILED" in d.ingest.connect_error
    finally:
        d.stop()


def test_hostname_mismatch_and_plain_client_refused(tls_broker):
    b = tls_broker
    # the CA is trusted but the certificate does not name the host we think we reach
    ctx = rbmqtt.ssl_context(str(b.cafile))
    c = rbmqtt.MQTTClient(
        NODE, "127.0.0.1", b.tls_port, NODE, PW, ssl=ctx, server_hostname="broker.example"
    )
    with pytest.raises(ssl.SSLCertVerificationError, match=r"[Hh]ostname mismatch"):
        asyncio.run(c.connect())
    # the right name and password get in; a wrong password is refused over TLS too
    ok = rbmqtt.MQTTClient(NODE, "127.0.0.1", b.tls_port, NODE, PW, ssl=ctx)
    bad = rbmqtt.MQTTClient(NODE, "127.0.0.1", b.tls_port, NODE, "wrong", ssl=ctx)

    async def both():
        await ok.connect()
        await ok.disconnect()
        with pytest.raises(rbmqtt.MQTTError, match=r"bad user name or password|not authorized"):
            await bad.connect()

    asyncio.run(both())
    # an unencrypted MQTT client on the TLS port gets no CONNACK
    p = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    p.username_pw_set(NODE, PW)
    acked = []
    p.on_connect = lambda *a: acked.append(a)
    p.connect("127.0.0.1", b.tls_port)
    p.loop_start()
    # nothing to wait for when nothing must happen: a slow machine can only make this pass
    # falsely (a CONNACK not arrived yet), never fail falsely
    time.sleep(1.0)
    p.loop_stop()
    assert not acked


def test_tls_without_ca_encrypts_but_does_not_verify(tls_broker):
    """`"tls": true` without `"ca"` on a node: encrypted, the broker NOT authenticated
    (documented as such in firmware/README.md)."""
    ctx = rbmqtt.ssl_context(None)
    assert ctx.verify_mode == ssl.CERT_NONE
    c = rbmqtt.MQTTClient(
        NODE,
        "127.0.0.1",
        tls_broker.tls_port,
        NODE,
        PW,
        ssl=ctx,
        server_hostname="anything.example",
    )

    async def go():
        await c.connect()
        v = c._writer.get_extra_info("ssl_object").version()
        await c.disconnect()
        return v

    assert asyncio.run(go()) in ("TLSv1.2", "TLSv1.3")
