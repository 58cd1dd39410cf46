"""The status LED (issue 14, item 4): the node shows Wi-Fi down, broker down, syncing,
healthy, a blocked and a jammed beam with the patterns hardware/installation.md documents
("Status LED"), driven from the node's own task through the hardware layer.

The patterns below are the installation guide's table; the same table is checked in real
MicroPython by test_status_led_micropython.py. The node runs unchanged on simulated
hardware (SimNode) against a private mosquitto, with a test host that answers time sync."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import pytest

from harness.mqttsub import subscriber
from harness.waiting import wait_for
from rbnode import led as rbled
from rbnode.hw.sim import SimHardware
from rbnode.simnode import SimNode
from rbproto import codec

NODE, PW = "t1-node", "node-pw"
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

# hardware/installation.md, "Status LED": (period ms, [on from, on until) in ms)
GUIDE = {
    "wifi_down": (200, [(0, 100)]),
    "broker_down": (1000, [(0, 100), (200, 300)]),
    "jammed": (1200, [(0, 100), (200, 300), (400, 500)]),
    "syncing": (1000, [(0, 500)]),
    "blocked": (None, []),  # steady on
    "healthy": (2000, [(0, 50)]),
}


def expected_on(name: str, ms: int) -> bool:
    period, windows = GUIDE[name]
    if period is None:
        return True
    return any(a <= ms % period < b for a, b in windows)


@pytest.mark.parametrize("name", list(GUIDE))
def test_each_condition_blinks_as_the_guide_says(name):
    cond = rbled.NAMES.index(name)
    for ms in range(2 * 2400):
        assert rbled.lit(cond, ms) == expected_on(name, ms), (name, ms)


def test_the_first_condition_that_holds_is_shown():
    c = rbled.condition
    assert rbled.NAMES[c(False, False, True, True, True)] == "wifi_down"
    assert rbled.NAMES[c(True, False, True, True, True)] == "broker_down"
    assert rbled.NAMES[c(True, True, True, True, True)] == "jammed"
    assert rbled.NAMES[c(True, True, False, True, True)] == "syncing"
    assert rbled.NAMES[c(True, True, False, False, True)] == "blocked"
    assert rbled.NAMES[c(True, True, False, False, False)] == "healthy"


def test_the_pin_is_written_only_on_a_change_and_a_pattern_starts_lit():
    hw = SimHardware(seed=1)
    led = rbled.StatusLed(hw)
    cond = rbled.NAMES.index("wifi_down")
    for ms in range(1000, 1400, rbled.LED_MS):
        hw.now_us = ms * 1000
        led.update(cond, ms)
    # on at 1000, off at 1100, on at 1200, off at 1300: four writes for 20 updates
    assert hw.led == [(1000000, True), (1100000, False), (1200000, True), (1300000, False)]
    hw.now_us = 1310000
    led.update(rbled.NAMES.index("healthy"), 1310)
    assert hw.led[-1] == (1310000, True)  # a new condition starts with its first flash


# -- the node on simulated hardware ---------------------------------------------------------


class SyncHost:
    """Answers the node's time sync, as `railbird run` does."""

    def __init__(self, broker):
        self.c = subscriber(broker.port, self._on, "led-host")

    def _on(self, c, u, m):
        t2 = time.monotonic_ns() // 1000
        try:
            kind, venue, table, node, msg = codec.decode_message(m.topic, m.payload)
        except codec.ProtocolError:
            return
        if kind == "sync_req":
            resp = {"v": 1, "id": msg["id"], "t1": msg["t1"], "t2": t2, "t3": t2 + 5}
            c.publish(codec.topic(venue, table, "sync_resp", node), codec.encode("sync_resp", resp))

    def close(self):
        self.c.loop_stop()
        self.c.disconnect()


def wait_condition(sn: SimNode, name: str, timeout: float = 15.0) -> int:
    """Wait until the node shows `name` -> the simulated µs when it did."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        shown = sn.call(lambda: (sn.node.led.cond, sn.hw.now_us))
        if shown[0] is not None and rbled.NAMES[shown[0]] == name:
            return shown[1]
        time.sleep(0.02)
    raise AssertionError(f"the LED never showed {name}; it shows {rbled.NAMES[shown[0]]}")


def segments(sn: SimNode, since_us: int) -> list[tuple[bool, int]]:
    """(level, ms) of every complete LED segment after `since_us` (simulated time)."""
    log = [e for e in sn.call(lambda: list(sn.hw.led)) if e[0] >= since_us]
    return [(log[i][1], (log[i + 1][0] - log[i][0]) // 1000) for i in range(len(log) - 1)]


def assert_blinks(sn: SimNode, name: str, since_us: int, seconds: float) -> None:
    """Over `seconds`, the LED's on and off times are the guide's, within the LED task's
    step (and some scheduling slack on a loaded machine). `seconds` of the node's clock:
    a starved simulation runs late, and the segments are measured on that clock anyway."""
    end_us = since_us + int(seconds * 1e6)
    wait_for(lambda: sn.now_us >= end_us, f"{seconds} s of the node's clock", 10 * seconds + 20)
    period, windows = GUIDE[name]
    segs = segments(sn, since_us)
    ons = sorted(d for on, d in segs if on)
    offs = sorted(d for on, d in segs if not on)
    want_on = {b - a for a, b in windows}
    gaps = [b[0] - a[1] for a, b in itertools.pairwise(windows)]
    want_off = set(gaps) | {period - windows[-1][1] + windows[0][0]}
    slack = 2 * rbled.LED_MS + 30

    def mostly_near(durations, wanted):
        near = [d for d in durations if min(abs(d - w) for w in wanted) <= slack]
        return durations and len(near) >= 0.75 * len(durations)

    assert mostly_near(ons, want_on), (name, segs)
    assert mostly_near(offs, want_off), (name, segs)


@pytest.mark.broker
@pytest.mark.slow
def test_the_node_shows_each_condition_as_it_happens(broker, tmp_path):
    broker.add_user(NODE, PW)
    # a sync every 2 s (not 60): the host that starts answering later is heard soon
    sn = SimNode(
        "127.0.0.1",
        broker.port,
        "club",
        "t1",
        NODE,
        PW,
        tmp_path / "node",
        seed=7,
        dev={"sync_period_s": 2},
    )
    sn.start()
    host = None
    try:
        # connected, nobody answers time sync: syncing (slow blink)
        sn.wait_connected()
        t = wait_condition(sn, "syncing")
        assert_blinks(sn, "syncing", t, 2.2)
        # the host answers: healthy (a short heartbeat)
        host = SyncHost(broker)
        t = wait_condition(sn, "healthy")
        assert_blinks(sn, "healthy", t, 4.5)
        # a ball in the beam for 1.5 s: steady on while blocked, then healthy again
        sn.drop("HL", dur_us=1_500_000)
        t = wait_condition(sn, "blocked")
        t_end = wait_condition(sn, "healthy")
        on = [e for e in sn.call(lambda: list(sn.hw.led)) if t <= e[0] < t_end]
        assert all(level for _, level in on), on
        assert t_end - t >= 1_400_000
        # blocked past jam_us (2 s): triple blink until it clears
        sn.drop("HR", dur_us=4_500_000)
        t = wait_condition(sn, "jammed")
        assert_blinks(sn, "jammed", t, 2.4)
        wait_condition(sn, "healthy")
        # Wi-Fi lost: fast blink, whatever the broker connection says
        sn.call(lambda: setattr(sn.hw, "net_up", False))
        t = wait_condition(sn, "wifi_down")
        assert_blinks(sn, "wifi_down", t, 1.0)
        sn.call(lambda: setattr(sn.hw, "net_up", True))
        # the broker goes away: double blink
        broker.stop()
        t = wait_condition(sn, "broker_down", timeout=30)
        assert_blinks(sn, "broker_down", t, 2.2)
    finally:
        sn.stop()
        if host is not None:
            host.close()


def test_a_board_without_a_status_led_ignores_it():
    from rbnode.hw import hal

    class Bare(hal.Hardware):
        pass

    Bare().set_led(True)  # the HAL's default: nothing to drive, nothing raised


@pytest.mark.micropython
def test_the_patterns_in_real_micropython(micropython):
    """The same table in real MicroPython: rbnode.led sampled every ms, its pin writes on
    the simulated hardware, the priority order, and a node with no broker, then no Wi-Fi."""
    r = micropython(HERE / "mp" / "run_status_led.py", paths=[REPO / "firmware", REPO / "protocol"])
    assert r.ok and "MP-LED-OK" in r.stdout, r.stderr + r.stdout
    lines = {}
    for line in r.stdout.splitlines():
        tag, _, rest = line.partition(" ")
        if tag == "MP-LED":
            name, _, wins = rest.partition(" ")
            lines[name] = json.loads(wins)
        elif tag.startswith("MP-LED-") and rest:
            lines[tag] = json.loads(rest.replace("'", '"'))
    for name in GUIDE:
        want = [[ms, ms + 1] for ms in range(2400) if expected_on(name, ms)]
        merged: list[list[int]] = []
        for a, b in want:
            if merged and merged[-1][1] == a:
                merged[-1][1] = b
            else:
                merged.append([a, b])
        assert lines[name] == merged, name
    assert lines["MP-LED-WRITES"] == [[1000000, 1], [1100000, 0], [1200000, 1], [1300000, 0]]
    assert lines["MP-LED-ORDER"] == [
        "wifi_down",
        "broker_down",
        "jammed",
        "syncing",
        "blocked",
        "healthy",
    ]
    assert lines["MP-LED-NODE"] == ["broker_down", "wifi_down"]
