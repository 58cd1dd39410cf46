"""The node application's asyncio tasks in real MicroPython 1.27 (WebAssembly port):
sensing queues events, the MQTT client retries with backoff (no sockets there), the
supervisor feeds the watchdog, and the status message encodes."""

import json
import subprocess
from pathlib import Path

import pytest

from harness import micropython as mp_harness

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

pytestmark = pytest.mark.micropython


def test_node_tasks_run_in_micropython(tmp_path):
    why = mp_harness.available()
    if why:
        pytest.fail("real MicroPython unavailable: " + why)
    sensing = json.loads((REPO / "firmware" / "config.json").read_text())["sensing"]
    main = tmp_path / "tasks_main.py"
    main.write_text(f"SENSING = {sensing!r}\n" + (HERE / "mp" / "run_node_tasks.py").read_text())
    r = subprocess.run(
        [
            "node",
            str(mp_harness.RUNNER),
            "--path",
            str(REPO / "firmware"),
            "--path",
            str(REPO / "protocol"),
            str(main),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(REPO),
    )
    assert r.returncode == 0, r.stderr + r.stdout
    assert "MP-NODE-OK" in r.stdout, r.stdout
    line = next(x for x in r.stdout.splitlines() if x.startswith("MP-NODE events")).split()
    vals = dict(zip(line[1::2], line[2::2], strict=True))
    assert int(vals["events"]) == 13 and int(vals["queue"]) == 13
    assert int(vals["conn_fail"]) >= 2 and int(vals["feeds"]) >= 1
    assert vals["stalled"] == "None"
