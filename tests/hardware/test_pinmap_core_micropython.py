"""pinmap_core runs unchanged in real MicroPython (the firmware build copies it)."""

from __future__ import annotations

import shutil

import pytest

from railbird.hardware import PINMAP_DIR, pinmap_core

pytestmark = pytest.mark.micropython

CORE = pinmap_core.__file__

MAIN = """
import pinmap_core as pc
for name in ("esp32-devkitc", "esp32-s3-devkitc"):
    pm = pc.load("/lib-0/" + name + ".json")
    fs = pc.functions(pm)
    print(name, len(fs), pc.channels(pm)["beams"], pc.rail_pins(pm, 0), pc.pcnt_for(pm, "beam1"),
          pc.pull_source(pm, pc.beam_pin(pm, 0), "up"), pc.cue_pin(pm))
try:
    pc.loads('{"schema": 1, "id": "x", "chip": "esp32", '
             '"beams": [{"ch": 1, "pin": 4}], "rails": []}')
except pc.PinmapError as e:
    print("rejected", e)
"""


def test_pinmap_core_in_micropython(micropython, tmp_path):
    shutil.copy(CORE, tmp_path / "pinmap_core.py")
    for name in ("esp32-devkitc", "esp32-s3-devkitc"):
        shutil.copy(PINMAP_DIR / f"{name}.json", tmp_path / f"{name}.json")
    main = tmp_path / "main.py"
    main.write_text(MAIN)
    res = micropython(main, paths=[tmp_path], cwd=tmp_path)
    assert res.ok, res.stderr
    lines = res.stdout.strip().splitlines()
    expected = []
    for name in ("esp32-devkitc", "esp32-s3-devkitc"):
        pm = pinmap_core.load(str(PINMAP_DIR / f"{name}.json"))
        expected.append(
            " ".join(
                str(x)
                for x in (
                    name,
                    len(pinmap_core.functions(pm)),
                    6,
                    pinmap_core.rail_pins(pm, 0),
                    pinmap_core.pcnt_for(pm, "beam1"),
                    "external",
                    pinmap_core.cue_pin(pm),
                )
            )
        )
    assert lines[:2] == expected
    assert lines[2].startswith("rejected bad value: beams[0].ch")
