"""`railbird setup` with TLS (the default, and `--tls` as given): a local CA, the broker's
certificate and one per node. The broker started from the written config serves TLS with
that certificate to every written login (the node configs point at it), keeps its plain
listener on loopback, and a second run keeps the CA, the certificates and every key."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from railbird.broker import free_port

from .setuprun import Broker, accepted, setup

pytestmark = [pytest.mark.broker, pytest.mark.slow]

ARGS = ["--venue", "club", "--table", "t1:10-ball:t1-a", "--table", "t2:9-ball:t2-a", "--tls"]


@pytest.fixture
def openssl():
    exe = shutil.which("openssl")
    if exe is None:
        pytest.fail("openssl is not installed (apt-get install -y openssl)")
    return exe


def test_tls_installation(tmp_path, openssl):
    inst, _ = setup(tmp_path / "root", *ARGS, "--tls-port", str(free_port()))
    tls = inst.etc / "tls"
    users = inst.secrets()["mqtt"]
    host = inst.host()
    # the host on this machine dials the plain listener on loopback; the boards use TLS
    assert host["broker"]["port"] == inst.port and "tls" not in host["broker"]
    nc = inst.node("t1-a")
    assert (nc["broker"]["tls"], nc["broker"]["ca"], nc["broker"]["port"]) == (
        True,
        "ca.crt",
        inst.tls_port,
    )
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "railbird",
            "run",
            "-c",
            str(inst.etc / "host.toml"),
            "--check-config",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr

    # each node's certificate: signed by the CA, for the node, for client authentication
    for node in ("t1-a", "t2-a"):
        crt = tls / "nodes" / f"{node}.crt"
        v = subprocess.run(
            [openssl, "verify", "-CAfile", str(tls / "ca.crt"), "-purpose", "sslclient", str(crt)],
            capture_output=True,
            text=True,
        )
        assert v.returncode == 0 and ": OK" in v.stdout, v.stdout + v.stderr
        subject = subprocess.run(
            [openssl, "x509", "-in", str(crt), "-noout", "-subject"], capture_output=True, text=True
        ).stdout
        assert f"CN = {node}" in subject or f"CN={node}" in subject, subject

    with Broker(inst):
        trusted = {"ca_certs": str(tls / "ca.crt")}
        for user, pw in users.items():
            assert accepted(inst.tls_port, user, pw, tls=trusted), f"{user} refused over TLS"
        assert not accepted(inst.tls_port, "t1-a", users["t2-a"], tls=trusted)
        # a node presenting its own certificate is accepted too (ready for a broker that
        # requires them)
        mine = dict(
            trusted,
            certfile=str(tls / "nodes" / "t1-a.crt"),
            keyfile=str(tls / "nodes" / "t1-a.key"),
        )
        assert accepted(inst.tls_port, "t1-a", users["t1-a"], tls=mine)
        # the plain listener is on loopback only
        conf = (inst.etc / "mosquitto.conf").read_text()
        assert f"listener {inst.port} 127.0.0.1" in conf

    # the second run: nothing of the PKI changes, a new node gets its certificate
    before = {p: p.read_bytes() for p in tls.rglob("*") if p.is_file() and p.suffix != ".srl"}
    setup(tmp_path / "root", "--table", "t3:10-ball:t3-a", port=inst.port)
    for p, data in before.items():
        assert p.read_bytes() == data, f"{p.name} changed"
    assert (tls / "nodes" / "t3-a.crt").exists() and (tls / "nodes" / "t3-a.key").exists()
    assert inst.node("t3-a")["broker"]["tls"] is True  # TLS stays on without --tls


def test_a_server_certificate_near_its_end_is_renewed_by_setup(tmp_path, openssl):
    """Issue 24, item 9: the broker's certificate lasts 825 days and nothing renewed it.
    Running setup again is the renewal: a server certificate that expires within 60 days is
    made anew from the same CA (no board needs a new CA), and nothing else changes."""
    from railbird.broker import make_server_cert
    from railbird.install.pki import RENEW_DAYS, expires_within

    inst, _ = setup(tmp_path / "root", *ARGS, "--tls-port", str(free_port()))
    tls = inst.etc / "tls"
    ca = (tls / "ca.crt").read_bytes()
    names = ["127.0.0.1", "localhost"]
    # a certificate with 10 days left, as the old one would be in 27 months
    make_server_cert(tls, tls / "ca.crt", tls / "ca.key", names=tuple(names), days=10)
    assert expires_within(tls / "server.crt", RENEW_DAYS)
    old = (tls / "server.crt").read_bytes()
    _, out = setup(tmp_path / "root", port=inst.port)
    assert (tls / "server.crt").read_bytes() != old
    assert not expires_within(tls / "server.crt", 800)  # a full CERT_DAYS again
    assert (tls / "ca.crt").read_bytes() == ca
    assert f"created  {tls / 'server.crt'}" in out.stdout, out.stdout
    with Broker(inst):  # the broker serves it to a client that trusts the old CA
        users = inst.secrets()["mqtt"]
        assert accepted(inst.tls_port, "t1-a", users["t1-a"], tls={"ca_certs": str(tls / "ca.crt")})
