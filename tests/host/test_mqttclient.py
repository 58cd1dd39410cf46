"""Issue 21, item 6: one MQTT client factory (railbird.mqttclient) for every host module that
connects. Their reconnect policies had drifted apart (the feeds' 1-30 s against the ingest's
0.2-5 s was found only after a failed run): one factory, one policy, one log line per
outage, a failure counter."""

from __future__ import annotations

import ast
import logging
from pathlib import Path

import pytest

from harness.waiting import poll
from railbird import mqttclient
from railbird.broker import PrivateBroker
from railbird.mqttclient import BrokerLogin, new_client

HOST = Path(__file__).resolve().parents[2] / "host" / "railbird"


def _paho_client_calls(path: Path) -> list[int]:
    """Lines of `path` that build a paho client themselves (`mqtt.Client(...)` or a
    `Client` imported from paho)."""
    tree = ast.parse(path.read_text(), str(path))
    from_paho = {
        a.asname or a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("paho")
        for a in n.names
        if a.name == "Client"
    }
    lines = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        by_attribute = isinstance(f, ast.Attribute) and f.attr == "Client"
        if by_attribute or (isinstance(f, ast.Name) and f.id in from_paho):
            lines.append(n.lineno)
    return lines


def test_every_host_module_gets_its_client_from_the_factory(tmp_path):
    found = {
        str(p.relative_to(HOST)): lines
        for p in sorted(HOST.rglob("*.py"))
        if p.name != "mqttclient.py" and (lines := _paho_client_calls(p))
    }
    assert found == {}, f"paho clients built outside railbird.mqttclient: {found}"
    # the scan sees a client built by hand, either way
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import paho.mqtt.client as mqtt\nfrom paho.mqtt.client import Client as C\n"
        "a = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)\nb = C(2)\n"
    )
    assert _paho_client_calls(sample) == [3, 4]


def test_the_factory_sets_login_policy_and_version():
    c, link = new_client("t", BrokerLogin(port=1, user="u", password="p"), client_id="id-1")
    assert (c._reconnect_min_delay, c._reconnect_max_delay) == (0.2, 5.0)
    assert (mqttclient.RECONNECT_FIRST_S, mqttclient.RECONNECT_MAX_S) == (0.2, 5.0)
    assert c._username == b"u" and c._password == b"p" and c._client_id == b"id-1"
    assert c._protocol == 5
    c311, _ = new_client("t", BrokerLogin(port=1), mqtt311=True)
    assert c311._protocol == 4 and c311._username is None
    assert link.stats() == {"connect_failures": 0, "connections_lost": 0}


def test_an_unreadable_cafile_is_an_error_at_construction(tmp_path):
    with pytest.raises(FileNotFoundError):
        new_client("t", BrokerLogin(port=1, tls=True, cafile=str(tmp_path / "missing.pem")))


@pytest.mark.broker
def test_an_outage_is_counted_logged_once_and_ends_when_the_broker_is_back(tmp_path, caplog):
    """A client started before its broker: every refused attempt counted, one warning for
    the outage however many retries, one line when it is connected, the module's own
    on_connect still called; then the broker killed: one more outage, back again."""
    caplog.set_level(logging.INFO, logger="railbird.mqtt")
    broker = PrivateBroker(tmp_path / "broker")  # its port chosen, nothing listening yet
    seen = []
    login = BrokerLogin(port=broker.port, user="railbird-host", password="host-secret")
    c, link = new_client("probe", login, on_connect=lambda *a: seen.append(a[3]))
    c.connect_async("127.0.0.1", broker.port, keepalive=5)
    c.loop_start()
    try:
        assert poll(lambda: link.failures >= 4, 60), link.stats()
        assert link.down and "ConnectionRefusedError" in link.reason, link.reason
        broker.start()
        assert poll(lambda: not link.down, 60), link.stats()
        assert seen and not seen[-1].is_failure
        lines = [r.getMessage() for r in caplog.records if r.name == "railbird.mqtt"]
        assert sum("cannot reach" in m for m in lines) == 1, lines
        assert sum("connected to" in m and "again" in m for m in lines) == 1, lines
        assert link.outages == 1 and link.reason == ""

        broker.stop(kill=True)
        assert poll(lambda: link.losses == 1, 60), link.stats()
        broker.start()
        assert poll(lambda: not link.down and len(seen) >= 2, 60), link.stats()
        assert link.outages == 2
    finally:
        c.disconnect()
        c.loop_stop()
        broker.stop()
    # our own disconnect is not an outage
    assert link.outages == 2 and link.losses == 1


def test_an_output_with_a_factory_client_keeps_its_stats_in_the_stats_file():
    """`railbird run --stats-file` reads an output's `link` as a serial scoreboard's: the
    feeds' broker Link once took that name and their stats became an error."""
    from railbird.outputs.factory import describe
    from railbird.outputs.mqtt_feeds import MqttFeedsOutput

    out = MqttFeedsOutput("127.0.0.1", 1, "railbird-host", "host-secret")
    info = describe([out])["mqtt-feeds"]
    assert "error" not in info and info["connect_failures"] == 0, info
