"""MQTT 3.1.1 packets written by hand from the specification (OASIS MQTT 3.1.1, section
numbers in the names). Common subset: imported by the CPython tests and run in real
MicroPython by `check_all()`."""

# (value, encoding) of the remaining length, 2.2.3 table 2.4 boundaries.
LENGTHS = [
    (0, b"\x00"),
    (1, b"\x01"),
    (127, b"\x7f"),
    (128, b"\x80\x01"),
    (16383, b"\xff\x7f"),
    (16384, b"\x80\x80\x01"),
    (2097151, b"\xff\xff\x7f"),
    (2097152, b"\x80\x80\x80\x01"),
    (268435455, b"\xff\xff\xff\x7f"),
]

# (name, function name, args, kwargs, expected bytes)
PACKETS = [
    # 3.1: minimal CONNECT, clean session, keepalive 60, client id "a".
    (
        "connect-min",
        "connect",
        ("a",),
        {"keepalive": 60},
        b"\x10\x0d"  # fixed header: CONNECT, remaining length 13
        b"\x00\x04MQTT"  # protocol name
        b"\x04"  # protocol level 4 (3.1.1)
        b"\x02"  # connect flags: clean session
        b"\x00\x3c"  # keepalive 60 s
        b"\x00\x01a",  # client id
    ),
    # 3.1.2.3 flags: user(7) pw(6) will retain(5) will QoS 1(4-3=01) will(2) clean(1) = 0xEE
    (
        "connect-full",
        "connect",
        ("n1",),
        {"keepalive": 30, "user": "u", "password": "p", "will": ("w", b"off", 1, True)},
        b"\x10\x1c"  # fixed header
        b"\x00\x04MQTT\x04\xee\x00\x1e"  # variable header: flags 0xEE, keepalive 30
        b"\x00\x02n1"  # client id
        b"\x00\x01w"  # will topic
        b"\x00\x03off"  # will message
        b"\x00\x01u"  # user
        b"\x00\x01p",  # password
    ),
    # user without password, will QoS 0 not retained, persistent session:
    # 0x80|0x04 = 0x84; 10+3+3+2+3 = 21 bytes
    (
        "connect-user-will0",
        "connect",
        ("c",),
        {"keepalive": 0, "user": "u", "will": ("t", b"", 0, False), "clean": False},
        b"\x10\x15"  # fixed header
        b"\x00\x04MQTT\x04\x84\x00\x00"  # variable header: flags 0x84, keepalive 0
        b"\x00\x01c"  # client id
        b"\x00\x01t"  # will topic
        b"\x00\x00"  # empty will message
        b"\x00\x01u",  # user
    ),
    # 3.3: QoS 0 publish, no packet id.
    ("publish-qos0", "publish", ("a/b", b"hi"), {}, b"\x30\x07\x00\x03a/bhi"),
    # QoS 1 + retain: 0x30|0x02|0x01
    (
        "publish-qos1-retain",
        "publish",
        ("a/b", b"hi"),
        {"qos": 1, "retain": True, "pid": 10},
        b"\x33\x09\x00\x03a/b\x00\x0ahi",
    ),
    # DUP flag (bit 3) on a re-sent QoS 1 publish, pid 0x1234.
    (
        "publish-dup",
        "publish",
        ("x", b""),
        {"qos": 1, "pid": 0x1234, "dup": True},
        b"\x3a\x05\x00\x01x\x12\x34",
    ),
    # remaining length 2+3+123 = 128 -> two-byte length 0x80 0x01
    ("publish-len128", "publish", ("a/b", b"z" * 123), {}, b"\x30\x80\x01\x00\x03a/b" + b"z" * 123),
    # remaining length 127 fits one byte
    ("publish-len127", "publish", ("a/b", b"z" * 122), {}, b"\x30\x7f\x00\x03a/b" + b"z" * 122),
    # 3.4 PUBACK
    ("puback", "puback", (10,), {}, b"\x40\x02\x00\x0a"),
    # 3.8 SUBSCRIBE: fixed header flags 0010, pid 1, two filters
    (
        "subscribe",
        "subscribe",
        (1, [("a/b", 1), ("c/#", 0)]),
        {},
        b"\x82\x0e\x00\x01\x00\x03a/b\x01\x00\x03c/#\x00",
    ),
    # 3.10 UNSUBSCRIBE
    ("unsubscribe", "unsubscribe", (2, ["a/b"]), {}, b"\xa2\x07\x00\x02\x00\x03a/b"),
    ("pingreq", "pingreq", (), {}, b"\xc0\x00"),
    ("disconnect", "disconnect", (), {}, b"\xe0\x00"),
]

# Inbound packets: (name, bytes, type, flags, body)
INBOUND = [
    ("connack-ok", b"\x20\x02\x00\x00", 2, 0, b"\x00\x00"),
    ("connack-sp-badauth", b"\x20\x02\x01\x04", 2, 0, b"\x01\x04"),
    ("suback", b"\x90\x04\x00\x01\x01\x80", 9, 0, b"\x00\x01\x01\x80"),
    ("puback", b"\x40\x02\x12\x34", 4, 0, b"\x12\x34"),
    ("pingresp", b"\xd0\x00", 13, 0, b""),
    ("publish-qos1-retain", b"\x33\x09\x00\x03a/b\x00\x0ahi", 3, 3, b"\x00\x03a/b\x00\x0ahi"),
]


def check_all(mqtt):
    """Run every vector against module `mqtt`; return the number of checks, raise on error."""
    n = 0
    for value, enc in LENGTHS:
        got = mqtt.encode_length(value)
        assert got == enc, ("encode_length", value, got)
        assert mqtt.decode_length(b"\x30" + enc, 1) == (value, 1 + len(enc)), ("decode", value)
        assert mqtt.decode_length(b"\x30" + enc[:-1], 1) is None, ("partial", value)
        n += 3
    for bad in (-1, 268435456):
        try:
            mqtt.encode_length(bad)
        except mqtt.MQTTError:
            n += 1
        else:
            raise AssertionError(("accepted length", bad))
    try:
        mqtt.decode_length(b"\x30\xff\xff\xff\xff\x01", 1)
    except mqtt.MQTTError:
        n += 1
    else:
        raise AssertionError("five-byte length accepted")
    for name, fn, args, kw, expected in PACKETS:
        got = getattr(mqtt, fn)(*args, **kw)
        assert got == expected, (name, got, expected)
        n += 1
    for name, raw, ptype, flags, body in INBOUND:
        r = mqtt.split(raw + b"\xff")  # trailing byte of the next packet is left alone
        assert r == (ptype, flags, body, len(raw)), (name, r)
        assert mqtt.split(raw[:-1]) is None or len(raw) == 2, (name, "partial")
        n += 2
    assert mqtt.decode_connack(b"\x00\x00") == (False, 0)
    assert mqtt.decode_connack(b"\x01\x04") == (True, 4)
    assert mqtt.decode_suback(b"\x00\x01\x01\x80") == (1, [1, 0x80])
    assert mqtt.decode_pid(b"\x12\x34") == 0x1234
    t, p, q, r, d, pid = mqtt.decode_publish(3, b"\x00\x03a/b\x00\x0ahi")
    assert (t, p, q, r, d, pid) == ("a/b", b"hi", 1, True, False, 10), (t, p, q, r, d, pid)
    t, p, q, r, d, pid = mqtt.decode_publish(8, b"\x00\x01xpayload")
    assert (t, p, q, r, d, pid) == ("x", b"payload", 0, False, True, 0)
    # a publish header + unchanged payload equals the whole packet
    assert mqtt.publish_header("a/b", 2, 1, True, 10) + b"hi" == mqtt.publish(
        "a/b", b"hi", 1, True, 10
    )
    # a large payload: remaining length 16384 boundary (2 + 3 + 2 + 16377)
    big = mqtt.publish("a/b", b"q" * 16377, 1, False, 1)
    assert big[:4] == b"\x32\x80\x80\x01", big[:4]
    assert mqtt.split(big)[3] == len(big) == 4 + 16384
    big = mqtt.publish("a/b", b"q" * 16376, 1, False, 1)
    assert big[:3] == b"\x32\xff\x7f", big[:3]
    for f, t, want in (
        ("a/+/c", "a/b/c", True),
        ("a/#", "a", True),
        ("a/#", "a/b/c", True),
        ("a/+", "a/b/c", False),
        ("a/b", "a/b", True),
        ("+/+", "a", False),
    ):
        assert mqtt.topic_matches(f, t) == want, (f, t)
    n += 14
    return n
