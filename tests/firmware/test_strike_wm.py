"""The strike sensor and the batch watermark `wm` (issue 15) with the real node code on
simulated hardware, in real MicroPython and in CPython: mp_strike_wm.py holds the checks
(strike events with threshold and refractory, a comparator-only input, the strike IRQ
handler under heap_lock, config refusals, birth caps, wm below a blocked beam's start and
rising once its drop is sent, wm with a flash spill, and over seeded random play: never
above an event published later, never decreasing)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SCRIPT = HERE / "mp_strike_wm.py"
PATHS = [REPO / "firmware", REPO / "protocol"]


def check_output(out: str) -> None:
    for part in ("PASS strike channel", "PASS config", "PASS node strike and caps"):
        assert part in out, out
    assert "PASS wm blocked beam" in out and "PASS wm spill" in out, out
    assert "PASS wm backlog" in out, out
    assert out.count("PASS wm random seed") == 3, out
    assert "ALL OK" in out, out


def test_strike_and_wm_in_cpython():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in PATHS))
    r = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=120, env=env
    )
    print(r.stdout)
    assert r.returncode == 0, r.stderr
    check_output(r.stdout)


@pytest.mark.micropython
def test_strike_and_wm_in_micropython(micropython):
    r = micropython(SCRIPT, paths=PATHS, timeout=240)
    print(r.stdout)
    assert r.returncode == 0, r.stderr + r.stdout
    assert "PASS strike irq heap_lock" in r.stdout, r.stdout
    check_output(r.stdout)
