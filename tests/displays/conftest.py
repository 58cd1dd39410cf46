"""Fixtures for the display tests: a pluggable pseudo-terminal serial port and the
scoreboard firmware running under CPython on its board end."""

from __future__ import annotations

import os
import sys
import tty
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FW = REPO / "firmware" / "scoreboard"
if str(FW) not in sys.path:
    sys.path.insert(0, str(FW))


class PtyCable:
    """A USB-serial cable as a pty: `path` is a stable symlink (like /dev/serial/by-id/...)
    to the host end; the board holds the master. unplug() closes the master and removes the
    link, so the host's port reads fail and reopening it fails until plug()."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.master = None
        self.board = None

    def plug(self, start_board=True, **board_kw):
        master, slave = os.openpty()
        tty.setraw(slave)  # no echo or newline translation before the host configures it
        slave_name = os.ttyname(slave)
        os.close(slave)
        self.master = master
        tmp = self.path.with_suffix(".tmp")
        if tmp.exists() or tmp.is_symlink():
            tmp.unlink()
        tmp.symlink_to(slave_name)
        tmp.replace(self.path)
        if start_board:
            self.power_on(**board_kw)
        return self

    def power_on(self, **board_kw):
        from simboard import SimBoard

        self.board = SimBoard(self.master, **board_kw).start()
        return self.board

    def reboot(self, **board_kw):
        """The board resets (power glitch) but the cable stays: same port, fresh board."""
        self.board.stop()
        return self.power_on(**board_kw)

    def unplug(self):
        if self.board:
            self.board.stop()
            self.board = None
        if self.path.is_symlink():
            self.path.unlink()
        if self.master is not None:
            os.close(self.master)
            self.master = None

    def close(self):
        self.unplug()


@pytest.fixture
def cable(tmp_path):
    c = PtyCable(tmp_path / "ttyRailbirdBoard")
    yield c
    c.close()


def expected_rows(*texts):
    """Segment rows the board must show for the given row texts."""
    import segfont

    texts = list(texts) + [""] * (4 - len(texts))
    return [segfont.render(t, 8) for t in texts]
