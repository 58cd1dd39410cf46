#!/usr/bin/env python3
"""`make typecheck-firmware`: type-check the device-only firmware against the MicroPython
ESP32 stubs, so that a wrong `machine`/`esp32`/`network` call fails the build.

The device-only modules run on no machine here (they import machine, esp32, network):
- sensor node: firmware/boot.py, firmware/main.py, firmware/rbnode/hw/esp32.py;
- scoreboard: firmware/scoreboard/main.py, firmware/scoreboard/hw/esp32.py.

mypy reads them with firmware/mypy.ini against a typeshed assembled here from the installed
micropython-esp32-stubs and micropython-stdlib-stubs: mypy takes `time`, `os`, `sys`... only
from a typeshed, and the stubs install as bare .pyi files in site-packages, which it ignores.
The typeshed goes to a temporary directory per run (it is small; mypy takes about a second).

usage: python tools/typecheck_firmware.py [--set node|scoreboard|all]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata, util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIRMWARE = REPO / "firmware"
CONFIG = FIRMWARE / "mypy.ini"
STUB_DISTS = ("micropython-stdlib-stubs", "micropython-esp32-stubs")  # later ones win

# name -> (module search path, device-only files). Two runs: each node has its own `main`.
SETS = {
    "node": (
        [FIRMWARE, REPO / "protocol", REPO / "host" / "railbird" / "hardware"],
        [FIRMWARE / "boot.py", FIRMWARE / "main.py", FIRMWARE / "rbnode" / "hw" / "esp32.py"],
    ),
    "scoreboard": (
        [FIRMWARE / "scoreboard", REPO / "protocol"],
        [FIRMWARE / "scoreboard" / "main.py", FIRMWARE / "scoreboard" / "hw" / "esp32.py"],
    ),
}


class SetupMissing(RuntimeError):
    pass


def _require():
    if util.find_spec("mypy") is None:
        raise SetupMissing("mypy is not installed: run make setup")
    for name in STUB_DISTS:
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError as e:
            raise SetupMissing(f"{name} is not installed: run make setup") from e


def build_typeshed(dest):
    """Lay the stub packages out as a typeshed under `dest` (stdlib/ + stubs/ + VERSIONS)."""
    _require()
    dest = Path(dest)
    for name in STUB_DISTS:
        dist = metadata.distribution(name)
        for f in dist.files or ():
            if f.suffix not in (".pyi", ".py") and f.name != "VERSIONS":
                continue
            if "__pycache__" in f.parts or ".dist-info" in f.parts[0]:
                continue
            # micropython-stdlib-stubs already ships stdlib/ and stubs/; every other stub
            # (machine, esp32, time, _mpy_shed...) is a MicroPython "standard library" module.
            rel = Path(*f.parts) if f.parts[0] in ("stdlib", "stubs") else Path("stdlib", *f.parts)
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(dist.locate_file(f), dest / rel)
    stdlib = dest / "stdlib"
    versions = stdlib / "VERSIONS"
    if not versions.exists():
        raise SetupMissing("micropython-stdlib-stubs has no stdlib/VERSIONS: run make setup")
    # mypy only looks up the modules VERSIONS lists; the port's own ones are not in it.
    listed = {
        line.split(":")[0].strip()
        for line in versions.read_text().splitlines()
        if ":" in line and not line.lstrip().startswith("#")
    }
    extra = sorted(
        p.stem if p.suffix else p.name
        for p in stdlib.iterdir()
        if (p.suffix == ".pyi" or p.is_dir()) and (p.stem if p.suffix else p.name) not in listed
    )
    with versions.open("a") as fh:
        fh.write("\n# MicroPython modules (tools/typecheck_firmware.py)\n")
        fh.writelines(f"{m}: 3.0-\n" for m in extra)
    return dest


def run_mypy(files, paths, typeshed):
    """mypy over `files` (device-only modules) with `paths` as MYPYPATH -> (returncode, out)."""
    env = dict(os.environ)
    env["MYPYPATH"] = os.pathsep.join(str(p) for p in paths)
    cmd = [
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(CONFIG),
        "--custom-typeshed-dir",
        str(typeshed),
        "--cache-dir",
        os.devnull,  # nothing written to the tree; a full run takes about a second
        *[str(f) for f in files],
    ]
    r = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def check(names=tuple(SETS), typeshed=None):
    """Type-check the named sets -> (ok, report text)."""
    with tempfile.TemporaryDirectory(prefix="mpy-typeshed-") as tmp:
        ts = typeshed or build_typeshed(tmp)
        ok, out = True, []
        for name in names:
            paths, files = SETS[name]
            rc, text = run_mypy(files, paths, ts)
            ok = ok and rc == 0
            out.append(f"[{name}] {text.strip()}")
        return ok, "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=[*SETS, "all"], default="all")
    args = ap.parse_args(argv)
    try:
        ok, report = check(tuple(SETS) if args.set == "all" else (args.set,))
    except SetupMissing as e:
        print(f"typecheck-firmware: {e}", file=sys.stderr)
        return 2
    print(report)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
