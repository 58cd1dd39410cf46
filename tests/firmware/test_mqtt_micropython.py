"""MQTT packet encode/decode in real MicroPython 1.27 (WebAssembly port)."""

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

pytestmark = pytest.mark.micropython


def test_mqtt_packets_in_micropython(micropython):
    r = micropython(
        HERE / "mp" / "run_mqtt_vectors.py", paths=[REPO / "firmware", HERE / "mp"], timeout=60
    )
    assert r.ok, r.stderr + r.stdout
    assert "MQTT-VECTORS-OK" in r.stdout and "micropython" in r.stdout
    print(r.stdout.strip())
