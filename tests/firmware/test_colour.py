"""The colour station's driver (rbnode.colour) with the real node code on simulated
hardware (rbnode.hw.simcolour), in CPython and in real MicroPython: mp_colour.py holds the
checks (a rack read as it rolls past, two balls touching, `ball` events in the node's
batches, birth caps `colour`, the sensors unplugged, the config's `colour` table applied
when it arrives and at boot)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SCRIPT = HERE / "mp_colour.py"
PATHS = [REPO / "firmware", REPO / "protocol"]


def check_output(out: str) -> None:
    for part in (
        "PASS classify",
        "PASS learn colours",
        "PASS station rack",
        "PASS node colour events and caps",
        "PASS node colour config",
        "PASS pass medians",
    ):
        assert part in out, out
    assert "ALL OK" in out, out


def test_colour_station_in_cpython():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in PATHS))
    r = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=120, env=env
    )
    print(r.stdout)
    assert r.returncode == 0, r.stderr
    check_output(r.stdout)


@pytest.mark.micropython
def test_colour_station_in_micropython(micropython):
    r = micropython(SCRIPT, paths=PATHS, timeout=240)
    print(r.stdout)
    assert r.returncode == 0, r.stderr + r.stdout
    check_output(r.stdout)
