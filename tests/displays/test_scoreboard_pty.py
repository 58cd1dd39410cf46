"""Host link <-> scoreboard firmware (under CPython) over a REAL pseudo-terminal."""

from __future__ import annotations

import os

import serial

from harness.waiting import poll
from railbird.outputs.serial_scoreboard import SerialScoreboardOutput
from railbird.scoreboard.link import ScoreboardLink
from rbproto import sbframe
from tests.displays.conftest import expected_rows

FAST = {"ack_timeout": 0.15, "reopen_interval": 0.1, "ping_interval": 0.5}


def shows(cable, *texts, timeout=5.0):
    want = expected_rows(*texts)
    ok = poll(lambda: cable.board is not None and cable.board.segments() == want, timeout)
    assert ok, f"board shows {cable.board.text() if cable.board else None}, want {list(texts)}"


def test_screen_reaches_board_with_acks(cable):
    cable.plug()
    link = ScoreboardLink(str(cable.path), **FAST).start()
    try:
        shows(cable, "RAILBIRD")
        link.set_screen({"g": "10", "a": 1, "b": 0, "t": "b", "r": 7, "k": "a"})
        shows(cable, "  1    0.", "RACE   7", "BRK    A")
        assert link.wait_idle()
        assert link.stats["acks"] >= 1 and link.stats["hellos"] >= 1
        assert link.board_info["proto"] == "1"
        link.announce("FOUL", "IN HAND", 5000)
        shows(cable, "  1    0.", "RACE   7", "FOUL", "IN HAND")
    finally:
        link.stop()


def test_unplug_replug_and_reboot_lose_nothing(cable):
    cable.plug()
    out = SerialScoreboardOutput(str(cable.path), "bar", "t1", **FAST)
    out.start()
    try:
        state = {"scores": [0, 0], "at_table": 0, "breaker": 0, "goal": 5, "fouls": [0, 0]}
        out.on_state("bar", "t1", "10-ball", state, "", [])
        shows(cable, "  0.    0", "RACE   5", "BRK    A")
        # pulled out: the port vanishes; the daemon keeps scoring meanwhile
        cable.unplug()
        assert poll(lambda: not out.link.connected, 5)
        state = dict(state, scores=[1, 0])
        out.on_state("bar", "t1", "10-ball", state, "", [])
        state = dict(state, at_table=1, fouls=[0, 0], scores=[1, 0])
        out.on_state(
            "bar",
            "t1",
            "10-ball",
            state,
            "",
            [{"text": "Foul: scratch - ball in hand", "rule": "6.3", "level": "foul"}],
        )
        # it keeps trying to reopen the vanished port, and fails
        assert poll(lambda: out.link.stats["open_failures"] >= 2, 5), out.link.stats
        # plugged back in: the board was powered from USB, so it comes up blank
        cable.plug()
        shows(cable, "  1    0.", "RACE   5", "FOUL", "IN HAND")
        # the board reboots on its own (brown-out) with the cable in: HELLO -> full resend
        cable.reboot()
        shows(cable, "  1    0.", "RACE   5", "FOUL", "IN HAND")
        assert out.link.stats["hellos"] >= 3
        assert out.stats["errors"] == 0
    finally:
        out.stop()


def test_garbage_both_ways_is_counted_never_fatal(cable):
    cable.plug()
    link = ScoreboardLink(str(cable.path), **FAST).start()
    try:
        link.set_screen({"g": "141", "a": 10, "b": 3, "run": 4})
        shows(cable, "  10   3", "RUN    4", "", "")
        # noise towards the host (from the board end) and towards the board (another writer)
        # (the second handle first: opening a port flushes its input queue)
        with serial.serial_for_url(str(cable.path), timeout=0) as other:
            other.write(b"noise\xfe\x01$01S:a=99*FFFF\n")
            # the board has read it (garbage counted, the bad CRC NAKed) before this
            # second handle closes
            assert poll(
                lambda: (
                    cable.board.board.parser.garbage > 0 and cable.board.board.counters["naks"] >= 1
                ),
                5,
            )
        os.write(cable.master, b"\x00\xff garbage $12K:*0000\n$zz\n")
        assert poll(lambda: link.stats["garbage_bytes"] > 0 and link.stats["bad_frames"] > 0, 5), (
            link.stats
        )
        link.set_screen({"g": "141", "a": 11, "b": 3, "run": 5})
        shows(cable, "  11   3", "RUN    5", "", "")
        assert link.stats["garbage_bytes"] > 0 and link.stats["bad_frames"] > 0
        assert cable.board.board.parser.garbage > 0
        assert cable.board.board.counters["naks"] >= 1
        assert link._thread.is_alive()
    finally:
        link.stop()


def test_lost_ack_is_retransmitted_and_applied_once(cable):
    """The board answers the first try of each frame with nothing (ACK lost): the host
    resends with the same sequence number; the board ACKs the duplicate."""
    cable.plug()
    sb = cable.board
    real_write = sb.hw.write
    dropped = []

    def lossy(data):
        if data.startswith(b"$") and data[3:4] == b"K" and len(dropped) < 3:
            dropped.append(data)
            return
        real_write(data)

    sb.hw.write = lossy
    link = ScoreboardLink(str(cable.path), **FAST).start()
    try:
        link.set_screen({"g": "9", "a": 2, "b": 2})
        shows(cable, "  2    2")
        assert link.wait_idle()
        assert link.stats["retransmits"] >= 1
        assert sb.board.counters["dups"] >= 1
    finally:
        link.stop()


def test_nak_on_corrupt_frame_triggers_resend():
    """pyserial loop:// as the line: a frame corrupted in flight is NAKed and resent."""
    import sys

    from tests.displays.conftest import FW

    sys.path.insert(0, str(FW))
    from board import Board

    class LoopHW:  # the board end of a hand-driven line
        def __init__(self):
            self.rx = b""
            self.tx = b""
            from hw.sim import SimMax7219Chain
            from max7219 import Max7219Chain

            self.chips = SimMax7219Chain()
            self.display = Max7219Chain(self.chips, self.chips.cs)

        def boot_id(self):
            return 7

        def ticks_ms(self):
            return 0

        def ticks_diff(self, a, b):
            return a - b

        def ticks_add(self, a, n):
            return a + n

        def read(self):
            d, self.rx = self.rx, b""
            return d or None

        def write(self, d):
            self.tx += d

    hw = LoopHW()
    b = Board(hw)
    good = sbframe.encode(3, "S", "g=10;a=4;b=1")
    bad = good.replace(b"a=4", b"a=5")
    hw.rx = bad
    b.poll()
    assert b"N:e=crc" in hw.tx and not b.have_screen
    hw.tx = b""
    hw.rx = good
    b.poll()
    assert hw.tx.startswith(b"$03K:")
    assert hw.chips.text()[0] == "  4    1"
