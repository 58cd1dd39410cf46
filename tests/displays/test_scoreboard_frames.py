"""The scoreboard frame codec, font and screens (protocol/SCOREBOARD.md)."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

import layout  # firmware/scoreboard (conftest puts it on sys.path)
import segfont
from rbproto import sbframe

printable = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E, blacklist_characters="$*"),
    max_size=sbframe.MAX_PAYLOAD,
)


def test_crc16_ccitt_false_check_value():
    assert sbframe.crc16(b"123456789") == 0x29B1


def test_frame_bytes_are_as_documented():
    # the example in protocol/SCOREBOARD.md
    assert (
        sbframe.encode(5, "S", sbframe.pack({"g": 10, "a": 3, "b": -1}))
        == b"$05S:a=3;b=-1;g=10*6977\n"
    )
    assert sbframe.encode(0x2A, "K") == b"$2AK:*" + b"%04X" % sbframe.crc16(b"2AK:") + b"\n"


@given(st.integers(0, 255), st.sampled_from("SAKNHPQCB"), printable)
def test_round_trip(seq, kind, payload):
    p = sbframe.Parser()
    assert p.feed(sbframe.encode(seq, kind, payload)) == [(seq, kind, payload)]
    assert p.garbage == p.bad == 0


@settings(max_examples=200)
@given(st.lists(st.tuples(st.binary(max_size=40), st.integers(0, 255), printable), max_size=6))
def test_noise_never_raises_and_good_frames_survive(chunks):
    """Random bytes between frames: every intact frame is still decoded, nothing raises."""
    p = sbframe.Parser()
    stream = b""
    for noise, seq, payload in chunks:
        stream += noise.replace(b"\n", b"") + b"\n" + sbframe.encode(seq, "S", payload)
    got = []
    for i in range(0, len(stream), 7):  # arbitrary split points
        got += [f for f in p.feed(stream[i : i + 7]) if f[1] is not None]
    assert got == [(seq, "S", payload) for _, seq, payload in chunks]


def test_corruption_is_detected():
    frame = bytearray(sbframe.encode(1, "S", "a=12;b=3"))
    for i in range(1, len(frame) - 1):
        bad = bytearray(frame)
        bad[i] ^= 0x01
        out = sbframe.Parser().feed(bytes(bad))
        assert all(f != (1, "S", "a=12;b=3") for f in out), i


def test_pack_unpack():
    f = {"g": "141", "a": "-2", "b": "150"}
    assert sbframe.unpack(sbframe.pack(f)) == f
    assert sbframe.unpack("") == {}


def test_font_round_trip_and_decimal_point():
    segs = segfont.render("  3.  5", 8)
    assert segs[2] == segfont.GLYPHS["3"] | segfont.DP
    assert segfont.to_text(segs) == "  3.  5  "
    glyphs = [segfont.GLYPHS[c] for c in "0123456789ABCDEFHJLPRTUY-"]
    assert len(set(glyphs)) == len(glyphs) - 0  # distinct


def test_screen_10_ball():
    rows = layout.rows({"g": "10", "a": "3", "b": "5", "t": "a", "r": "7", "k": "b", "inn": "12"})
    assert rows == ["  3.    5", "RACE   7", "BRK    B", "INN   12"]


def test_screen_14_1_with_two_foul_warning():
    f = {
        "g": "141",
        "a": "87",
        "b": "-2",
        "t": "b",
        "run": "14",
        "fa": "0",
        "fb": "2",
        "ha": "31",
        "hb": "9",
    }
    assert layout.rows(f) == ["  87  -2.", "RUN   14", "B 2 FOUL", "HI 31  9"]
    f["fb"] = "1"
    assert layout.rows(f)[2] == "F0    F1"


def test_announcement_and_link_lost_indicator():
    f = {"g": "10", "a": "0", "b": "0"}
    assert layout.rows(f, ann=("FOUL", "IN HAND"))[2:] == ["FOUL", "IN HAND"]
    assert layout.rows(f, link_lost=True)[3] == " " * 8 + "."
    assert layout.rows({}, have_screen=False)[0] == "RAILBIRD"


def test_screen_marks_a_provisional_ruling_and_a_shot_held_for_the_referee():
    """protocol/REFEREE.md §3b: every display shows a provisional ruling as provisional."""
    from railbird.scoreboard.screens import screen_fields
    from rbproto.sbframe import pack, unpack

    state = {"players": ["Ann", "Bob"], "scores": {"Ann": 0, "Bob": 0}, "at_table": "Bob"}
    state |= {"breaker": "Ann", "inning": 2, "awaiting": None}
    prov = dict(state, provisional=[{"fact": "object_balls_to_rail", "ruling": "legal break"}])
    for st_, row2 in ((state, "BRK    A"), (prov, "PROVISNL")):
        fields = unpack(pack(screen_fields("10-ball", st_)))  # as the board receives them
        assert layout.rows(fields)[2] == row2
    held = dict(state, awaiting="referee_check", at_table="Ann")
    assert layout.rows(unpack(pack(screen_fields("14.1", held))))[2] == "REF CHCK"
