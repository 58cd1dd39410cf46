"""Sensing core in REAL MicroPython (WebAssembly port): clock, ring, beam, rail; the IRQ
path under micropython.heap_lock(); heap used by the sensing buffers."""

import re
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FIRMWARE = HERE.parents[1] / "firmware"

pytestmark = pytest.mark.micropython


def test_core_modules_in_micropython(micropython):
    r = micropython(HERE / "mp_sensing_core.py", paths=[FIRMWARE], timeout=240)
    print(r.stdout)
    assert r.returncode == 0, r.stderr
    assert "ALL OK" in r.stdout


def test_irq_path_allocates_nothing_under_heap_lock(micropython):
    r = micropython(HERE / "mp_sensing_heap.py", paths=[FIRMWARE], timeout=60)
    print(r.stdout)
    assert r.returncode == 0, r.stderr
    locked = re.search(r"LOCKED irq_calls=(\d+) beam_ovf=(\d+) rail_ovf=(\d+) err=(\S+)", r.stdout)
    assert locked, r.stdout
    calls, bovf, rovf, err = locked.groups()
    assert err == "none"
    assert int(calls) == 40 and int(bovf) == 40 - 16 and int(rovf) == 40 - 8
    # The control proves the lock is effective: an allocation fails under it.
    assert "CONTROL MemoryError" in r.stdout
    assert re.search(r"AFTER events=\d+", r.stdout)


def test_sensing_buffer_heap(micropython):
    r = micropython(HERE / "mp_sensing_heap.py", paths=[FIRMWARE], timeout=60)
    m = re.search(r"HEAP ring512=(\d+) channels13=(\d+) total=(\d+)", r.stdout)
    assert m, r.stdout + r.stderr
    ring, chans, total = map(int, m.groups())
    print(f"sensing heap: ring(512)={ring} B, 7 beams + 6 rails={chans} B, total={total} B")
    assert 7168 <= ring <= 9000  # 14 B/event payload + array headers
    assert total < 24 * 1024  # half of the node's 48 KB budget (issue 3)


def test_spill_and_bootcount_in_micropython(micropython):
    r = micropython(HERE / "mp_sensing_spill.py", paths=[FIRMWARE], timeout=60)
    assert r.returncode == 0, r.stderr
    assert "SPILL OK boot 1 2" in r.stdout
