"""Run programs in real MicroPython: the WebAssembly port (npm
`@micropython/micropython-webassembly-pyscript`) under Node."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("mp_run.mjs")
PACKAGE = REPO / "node_modules" / "@micropython" / "micropython-webassembly-pyscript"


@dataclass
class MPResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def available() -> str | None:
    """None when real MicroPython can run here, else the reason it cannot."""
    if not shutil.which("node"):
        return "node is not installed"
    if not PACKAGE.exists():
        return "npm package missing: run `make test` (it runs npm install)"
    return None


def run(
    main: str | Path,
    paths=(),
    heap: int = 4 * 1024 * 1024,
    timeout: float = 60.0,
    cwd: Path | None = None,
) -> MPResult:
    """Run `main` with every .py below each of `paths` importable; return its result."""
    cmd = ["node", str(RUNNER), "--heap", str(heap)]
    for p in paths:
        cmd += ["--path", str(p)]
    cmd.append(str(main))
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, cwd=str(cwd or REPO)
    )
    return MPResult(proc.returncode, proc.stdout, proc.stderr)
