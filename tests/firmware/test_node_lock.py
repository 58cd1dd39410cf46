"""The locked build (rbnode.lock, docs/install.md "What a board holds"; issue 23, defect 7:
anyone at the table could read the Wi-Fi and broker passwords with mpremote).

A board whose config.json says "locked" ignores Ctrl-C on its console, so mpremote never
gets the REPL, and never ends at the REPL; the recovery pin held at reset, or a board held
for provisioning, opens it for that boot; an unlocked board is as before. Under CPython the
board is rbnode.simproc's (firmware/boot.py itself, every boot a process, its console's
Ctrl-C a SIGINT); in real MicroPython (WebAssembly port) boot.py and main.py themselves on
the simulated chip."""

import socket
from pathlib import Path

import pytest

from harness.waiting import wait_for
from rbnode.simproc import SimBoard

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


# as mpremote, a Ctrl-C again until the board answers (asyncio.run's first one only
# cancels the node's task)


def _dead_port():
    with socket.socket() as s:  # no broker: the node runs on without one
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def board(tmp_path):
    boards = []

    def make(locked, recovery=False):
        b = SimBoard(
            "127.0.0.1", _dead_port(), "club", "t1", "n1", "pw", tmp_path / "n1",
            dev={"locked": locked, "wdt": False}, recovery=recovery,
        )  # fmt: skip
        boards.append(b.start())
        b.wait_node()
        return b

    yield make
    for b in boards:
        b.stop()


def test_a_locked_board_ignores_ctrl_c_and_keeps_running(board):
    b = board(locked=True)
    # boot.py locks it; main.py locks it again (MicroPython turns Ctrl-C on for each file)
    assert b.console_lines == ["console locked", "console locked"]
    assert b.ctrl_c()
    wait_for(lambda: "ctrl-c ignored" in b.console_lines, "the Ctrl-C ignored")
    assert b.running(), b.console()[-2000:]
    b.stop()
    assert b.boots == [("power", "stopped")]  # never at the REPL


def test_an_unlocked_board_stops_at_the_repl_on_ctrl_c(board):
    b = board(locked=False)
    assert b.console_lines == ["console locked", "console open"]  # shut only while deciding
    assert b.ctrl_c()
    wait_for(lambda: not b.running() or not b.ctrl_c(), "the boot ended by Ctrl-C", interval=0.5)
    b.stop()
    assert b.boots == [("power", "repl")]
    assert "KeyboardInterrupt" in b.console()


def test_the_recovery_pin_opens_a_locked_board_for_that_boot(board):
    b = board(locked=True, recovery=True)
    assert b.console_lines == ["console locked", "console open"]
    assert "recovery pin 0 held" in b.console()
    assert b.ctrl_c()
    wait_for(lambda: not b.running() or not b.ctrl_c(), "the boot ended by Ctrl-C", interval=0.5)
    b.stop()
    assert b.boots == [("power", "repl")]


def test_the_same_console_in_micropython(micropython):
    """boot.py and main.py in real MicroPython: what each config leaves the console, and
    that a locked board's main.py resets where an unlocked one's would end at the REPL."""
    r = micropython(
        HERE / "mp" / "run_lock.py", paths=[REPO / "firmware", REPO / "protocol", HERE / "mp"]
    )
    assert r.ok, r.stderr + r.stdout
    lines = [x for x in r.stdout.splitlines() if x.startswith("LOCK ")]
    assert lines == [
        "LOCK unlocked open open None",
        "LOCK locked locked locked (0, 1500)",
        "LOCK recovery recovery open",
        "LOCK pin (27, 1500)",
        "LOCK held held open None",
        "LOCK unreadable open open",
        "LOCK main locked reset sim reset locked",
        "LOCK main unlocked reset sim reset open",
        "LOCK main ends locked reset sim reset locked",
        "LOCK main ends unlocked repl OSError(44,) open",
    ], r.stdout
