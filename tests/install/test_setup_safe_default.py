"""Issue 23, defect 8 ("plaintext by default"): `railbird setup` without a TLS flag wrote
MQTT on 0.0.0.0:1883 without TLS, nodes with `"tls": false` and the web server on
0.0.0.0, and its summary never said so. Now TLS is the default, every listener is on the
venue address chosen at setup (the plain MQTT one on loopback only), declining TLS is
warned about on every run, and the summary always says what the network sees. Checked with
a real mosquitto started from the written config."""

from __future__ import annotations

import json
import re
import socket

import pytest

from railbird.broker import free_port
from railbird.install.apply import guess_address

from .setuprun import Broker, accepted, setup

pytestmark = [pytest.mark.broker, pytest.mark.slow]

TABLE = ["--venue", "club", "--table", "t1:10-ball:t1-a"]
VENUE_ADDRESS = "127.0.0.2"  # on Linux all of 127/8 is loopback: a second local address
BANNER = "!" * 78


def listeners(inst) -> list[tuple[int, str]]:
    conf = (inst.etc / "mosquitto.conf").read_text()
    return [(int(p), a) for p, a in re.findall(r"^listener (\d+) (\S+)$", conf, re.MULTILINE)]


def refused(host: str, port: int) -> bool:
    """Nothing listens at host:port (the connection is refused outright)."""
    try:
        with socket.create_connection((host, port), timeout=5):
            return False
    except ConnectionRefusedError:
        return True


def test_setup_without_a_tls_flag_serves_tls_on_the_venue_address_only(tmp_path):
    """The regression test of defect 8: no TLS flag and no address given, as a venue runs it."""
    venue = guess_address()
    if venue.startswith("127."):
        pytest.skip("this machine has no default route: no venue address to listen on")
    inst, out = setup(tmp_path / "root", *TABLE, local=False)
    choices = json.loads((inst.etc / "setup.json").read_text())
    assert choices["tls"] is True and choices["listen_address"] == venue
    # TLS on the venue address, plain MQTT on loopback only, nothing on every interface
    assert sorted(listeners(inst)) == sorted([(inst.port, "127.0.0.1"), (inst.tls_port, venue)])
    nc = inst.node("t1-a")["broker"]
    assert (nc["tls"], nc["ca"], nc["port"]) == (True, "ca.crt", inst.tls_port)
    assert inst.host()["outputs"]["web"]["host"] == venue
    assert f"MQTT: TLS on {venue} port {inst.tls_port}" in out.stdout, out.stdout
    assert f"Web server: HTTP, not HTTPS, on {venue} port 8080" in out.stdout
    assert BANNER not in out.stdout and "WARNING" not in out.stderr
    pw = inst.secrets()["mqtt"]["t1-a"]
    ca = {"ca_certs": str(inst.etc / "tls" / "ca.crt")}
    with Broker(inst):
        assert accepted(inst.tls_port, "t1-a", pw, tls=ca, host=venue)  # the board's way in
        assert refused(venue, inst.port)  # no plain MQTT on the venue network
        assert accepted(inst.port, "t1-a", pw)  # this machine's own clients, on loopback


def test_the_chosen_listen_address_is_the_only_one_the_network_sees(tmp_path):
    inst, _ = setup(tmp_path / "root", *TABLE, "--listen-address", VENUE_ADDRESS)
    assert sorted(listeners(inst)) == sorted(
        [(inst.port, "127.0.0.1"), (inst.tls_port, VENUE_ADDRESS)]
    )
    assert inst.host()["outputs"]["web"]["host"] == VENUE_ADDRESS
    users = inst.secrets()["mqtt"]
    ca = {"ca_certs": str(inst.etc / "tls" / "ca.crt")}
    with Broker(inst):
        # a TLS client that checks the broker against the local CA gets in at that address
        # (the certificate names it); a plain one there is refused, and so is TLS elsewhere
        assert accepted(inst.tls_port, "t1-a", users["t1-a"], tls=ca, host=VENUE_ADDRESS)
        assert refused(VENUE_ADDRESS, inst.port)
        assert refused("127.0.0.3", inst.tls_port)
        # the host on this machine dials the plain loopback listener
        assert inst.host()["broker"]["host"] == "127.0.0.1"
        assert inst.host()["broker"]["port"] == inst.port and "tls" not in inst.host()["broker"]
        assert accepted(inst.port, "railbird-host", users["railbird-host"])


def test_declining_tls_is_warned_about_on_every_run_and_switching_names_the_boards(tmp_path):
    """--no-tls: plain MQTT on the listen address (and loopback), the nodes without TLS, a
    banner at the top and the end of the summary and a line on stderr, each run. An
    installation from before TLS was the default (setup.json: plain, every interface) keeps
    working as it is; `--tls` later turns TLS on and names the boards to provision again."""
    root = tmp_path / "root"
    inst, out = setup(root, *TABLE, "--no-tls", "--listen-address", VENUE_ADDRESS)
    lines = out.stdout.splitlines()
    assert lines[0] == BANNER and lines[-1] == BANNER, out.stdout
    assert "WARNING: MQTT WITHOUT TLS" in out.stdout and "WARNING: MQTT WITHOUT TLS" in out.stderr
    assert f"MQTT: PLAIN, NO TLS (--no-tls), on 127.0.0.1 and {VENUE_ADDRESS}" in out.stdout
    assert sorted(listeners(inst)) == sorted([(inst.port, "127.0.0.1"), (inst.port, VENUE_ADDRESS)])
    assert inst.node("t1-a")["broker"]["tls"] is False
    assert not (inst.etc / "tls").exists()
    pw = inst.secrets()["mqtt"]["t1-a"]
    with Broker(inst):
        assert accepted(inst.port, "t1-a", pw, host=VENUE_ADDRESS)
        assert refused("127.0.0.3", inst.port)  # not every interface

    # an installation written before TLS was the default: plain, on every interface
    choices = inst.etc / "setup.json"
    old = json.loads(choices.read_text())
    del old["listen_address"]
    old["broker_bind"] = "0.0.0.0"
    choices.write_text(json.dumps(old))
    inst, out = setup(root, "--table", "t2", port=inst.port, local=False)
    assert inst.node("t1-a")["broker"]["tls"] is False  # its boards go on working
    assert listeners(inst) == [(inst.port, "0.0.0.0")]
    assert "WARNING: MQTT WITHOUT TLS" in out.stderr and out.stdout.startswith(BANNER)
    assert "Listening on every interface: give --listen-address" in out.stdout

    tls_port = str(free_port())
    inst, out = setup(root, "--tls", "--tls-port", tls_port, port=inst.port, local=False)
    nc = inst.node("t1-a")["broker"]
    assert (nc["tls"], nc["port"]) == (True, int(tls_port))
    assert "TLS is now on and these boards still have the old settings: t1-a" in out.stdout
    assert "provision each one again" in out.stdout
    assert BANNER not in out.stdout and "WARNING" not in out.stderr
