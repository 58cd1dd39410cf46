"""MQTT 3.1.1 packets are byte-exact against the specification (hand-written vectors in
mp/mqtt_vectors.py, also run in real MicroPython by test_mqtt_micropython.py)."""

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from rbnode import mqtt

# The vectors live beside the MicroPython runner that imports them by this name too.
sys.path.insert(0, str(Path(__file__).resolve().parent / "mp"))
import mqtt_vectors as V


@pytest.mark.parametrize(("value", "enc"), V.LENGTHS)
def test_remaining_length(value, enc):
    assert mqtt.encode_length(value) == enc
    assert mqtt.decode_length(b"\x30" + enc, 1) == (value, 1 + len(enc))
    assert mqtt.decode_length(b"\x30" + enc[:-1], 1) is None


@pytest.mark.parametrize("bad", [-1, 268435456])
def test_remaining_length_out_of_range(bad):
    with pytest.raises(mqtt.MQTTError):
        mqtt.encode_length(bad)


def test_remaining_length_five_bytes_is_malformed():
    with pytest.raises(mqtt.MQTTError):
        mqtt.decode_length(b"\x30\xff\xff\xff\xff\x01", 1)


@pytest.mark.parametrize(
    ("name", "fn", "args", "kw", "expected"), V.PACKETS, ids=[p[0] for p in V.PACKETS]
)
def test_packet_bytes(name, fn, args, kw, expected):
    assert getattr(mqtt, fn)(*args, **kw) == expected


@pytest.mark.parametrize(
    ("name", "raw", "ptype", "flags", "body"), V.INBOUND, ids=[p[0] for p in V.INBOUND]
)
def test_split_inbound(name, raw, ptype, flags, body):
    assert mqtt.split(raw + b"\x00") == (ptype, flags, body, len(raw))
    for cut in range(len(raw)):
        assert mqtt.split(raw[:cut]) is None


def test_vectors_check_all():
    assert V.check_all(mqtt) > 40


def test_refusals():
    with pytest.raises(mqtt.MQTTError):
        mqtt.connect("a", password="p")  # 3.1.2.9: password needs a user name
    with pytest.raises(mqtt.MQTTError):
        mqtt.publish("a", b"", qos=2, pid=1)  # QoS 2 not implemented
    with pytest.raises(mqtt.MQTTError):
        mqtt.publish("a", b"", qos=1, pid=0)  # 2.3.1: packet id must be non-zero
    with pytest.raises(mqtt.MQTTError):
        mqtt.decode_publish(4, b"\x00\x01a\x00\x01")  # inbound QoS 2


def test_roundtrip_publish_random():
    @settings(deadline=None)  # 20 kB payloads: no per-example deadline on a loaded machine
    @given(
        st.text(min_size=1, max_size=60).filter(lambda s: "\x00" not in s),
        st.binary(max_size=20000),
        st.integers(0, 1),
        st.booleans(),
        st.booleans(),
        st.integers(1, 65535),
    )
    def check(topic, payload, qos, retain, dup, pid):
        pkt = mqtt.publish(topic, payload, qos, retain, pid, dup)
        ptype, flags, body, used = mqtt.split(pkt)
        assert ptype == mqtt.PUBLISH and used == len(pkt)
        assert mqtt.decode_publish(flags, body) == (
            topic,
            payload,
            qos,
            retain,
            dup,
            pid if qos else 0,
        )

    check()


def test_backoff_capped_exponential_with_jitter():
    c = mqtt.MQTTClient("n", "h", backoff_min_ms=250, backoff_max_ms=30000)
    for attempt in range(40):
        cap = min(30000, 250 * 2**attempt)
        ds = [c.backoff_ms(attempt) for _ in range(200)]
        assert all(10 <= d <= cap for d in ds), (attempt, max(ds))
        if cap >= 1000:
            assert max(ds) > cap // 2 and min(ds) < cap // 2  # jitter spreads the delays
    assert max(c.backoff_ms(30) for _ in range(500)) <= 30000
