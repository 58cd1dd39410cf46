"""Put a firmware build (`make firmware`'s firmware/build/node or /scoreboard) on a board that
runs MicroPython, over its serial port with mpremote, and check every file that landed.

Steps, each one mpremote run (`mpremote connect PORT resume ...`: no soft reset, which the
unix port and some boards answer differently):
1. hold (sensor node): leave the file `provisioning` on the board and reset it; the node's
   main.py then starts nothing for that one boot, so no watchdog can reset the board in the
   middle of the copy (a running node's watchdog cannot be stopped);
2. prepare: make the build's directories, remove a `.py` that would shadow a `.mpy` of the
   build, the hold file, and the over-the-air pointer `fw/boot.json` (the set flashed here
   is the one that runs; rbnode.ota), and say whether the board has a config.json;
3. copy every file (`fs cp`), the config only when asked to or when the board has none;
4. read each file back on the board (SHA-256) and compare with the build;
5. reset: the board boots the new set.

Paths on the board are relative to its current directory (`/` on the ESP32), never
absolute, so the same run works on a board and on the test's stand-in (the MicroPython unix
port in a directory; tests/harness/fakeboard.py).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HOLD = "provisioning"  # firmware/main.py: present at boot -> removed, the node not started
OTA_POINTER = "fw/boot.json"
CONFIG = "config.json"
MARK = "RBPROV"  # prefix of the lines our own board-side scripts print


class BoardError(RuntimeError):
    """The board did not take the build; the message says what to do."""


def mpremote_command() -> list[str]:
    """mpremote of this environment (the [flash] extra), else the one on PATH."""
    beside = Path(sys.executable).parent / "mpremote"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("mpremote")
    if found:
        return [found]
    return [sys.executable, "-m", "mpremote"]


@dataclass
class Board:
    port: str
    mpremote: list[str] = field(default_factory=mpremote_command)
    timeout: float = 120.0  # a copy of the whole set over a slow UART
    # The first question: a board with MicroPython answers a one-line exec in 1-3 s, so a
    # board without it (a new ESP32 holds the vendor's firmware) is told in this long, not
    # after the copy's 120 s of silence.
    probe_timeout: float = 20.0
    settle_s: float = 2.0  # after a reset: the board boots (and a USB port comes back)
    say: object = print

    def probe(self) -> None:
        out = self.run("exec", "print('railbird-probe', 6 * 7)", timeout=self.probe_timeout)
        if "railbird-probe 42" not in out:
            raise BoardError(
                f"{self.port}: the board answered, but not as MicroPython does ({out[-80:]!r}); "
                "is MicroPython 1.27 on it (hardware/installation.md, step 0)?"
            )

    def run(self, *args: str, timeout: float | None = None) -> str:
        cmd = [*self.mpremote, "connect", self.port, "resume", *args]
        timeout = self.timeout if timeout is None else timeout
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except FileNotFoundError as e:
            raise BoardError(
                f"mpremote not found ({e.filename}): pip install 'railbird[flash]'"
            ) from e
        except subprocess.TimeoutExpired as e:
            raise BoardError(
                f"{self.port}: no answer from MicroPython within {timeout:.0f} s; is "
                "MicroPython on the board (hardware/installation.md, step 0)?"
            ) from e
        if r.returncode != 0:
            tail = (r.stderr.strip() or r.stdout.strip()).splitlines()[-1:] or ["?"]
            raise BoardError(f"mpremote on {self.port} failed: {tail[0]}")
        return r.stdout

    def reset(self) -> None:
        self.run("reset")
        self.wait_back()

    def wait_back(self) -> None:
        """After a reset: give the board its boot time; a native USB port (ESP32-S3)
        vanishes meanwhile and comes back."""
        time.sleep(self.settle_s)
        deadline = time.monotonic() + 15
        while self.port.startswith("/dev/") and not Path(self.port).exists():
            if time.monotonic() > deadline:
                raise BoardError(f"{self.port} did not come back after the reset")
            time.sleep(0.2)

    def hold(self) -> None:
        self.run("exec", f"open({HOLD!r}, 'w').close()", "+", "reset")
        self.wait_back()


def files_of(build: Path) -> list[str]:
    """Every file of a build, relative, sorted (MANIFEST.txt is the build's own record)."""
    out = []
    for p in sorted(build.rglob("*")):
        rel = p.relative_to(build).as_posix()
        if p.is_file() and rel != "MANIFEST.txt" and "__pycache__" not in rel:
            out.append(rel)
    return out


def _prepare_script(files: list[str]) -> str:
    dirs = sorted(
        {p.as_posix() for f in files for p in Path(f).parents} - {"."},
        key=lambda d: (d.count("/"), d),
    )
    shadows = [f[:-4] + ".py" for f in files if f.endswith(".mpy")]
    return "\n".join(
        [
            "import os",
            "def _rm(p):",
            "    try:",
            "        os.remove(p)",
            "    except OSError:",
            "        pass",
            f"for d in {dirs!r}:",
            "    try:",
            "        os.mkdir(d)",
            "    except OSError:",
            "        pass",
            f"for p in {[*shadows, HOLD, OTA_POINTER]!r}:",
            "    _rm(p)",
            "try:",
            f"    os.stat({CONFIG!r})",
            f"    print({MARK!r}, 'config', 1)",
            "except OSError:",
            f"    print({MARK!r}, 'config', 0)",
        ]
    )


def _hash_script(files: list[str]) -> str:
    return "\n".join(
        [
            "import hashlib, binascii",
            f"for p in {files!r}:",
            "    h = hashlib.sha256()",
            "    try:",
            "        with open(p, 'rb') as f:",
            "            while True:",
            "                b = f.read(1024)",
            "                if not b:",
            "                    break",
            "                h.update(b)",
            f"        print({MARK!r}, 'sha', p, binascii.hexlify(h.digest()).decode())",
            "    except OSError:",
            f"        print({MARK!r}, 'sha', p, '-')",
        ]
    )


def _marked(out: str, kind: str) -> list[list[str]]:
    return [
        line.split()[2:] for line in out.splitlines() if line.startswith(MARK + " " + kind + " ")
    ]


def install(
    board: Board,
    build: Path,
    *,
    config: Path | None = None,
    extra: dict[str, Path] | None = None,
    hold: bool = True,
) -> dict:
    """Put `build` on `board`. `config`: this file becomes the board's config.json; None:
    the build's config.json only when the board has none (it holds the board's Wi-Fi and
    broker secrets). `extra`: more files, board path -> local file (a TLS CA). -> {"files":
    {board path: sha256}, "config": "replaced" | "installed" | "kept"}."""
    build = Path(build)
    if not (build / "main.py").exists():
        raise BoardError(f"no build in {build}: run 'make firmware' first")
    files = files_of(build)
    local = {f: build / f for f in files}
    for name, path in (extra or {}).items():
        local[name] = Path(path)
    if config is not None:
        local[CONFIG] = Path(config)
    board.probe()
    if hold and (build / "rbnode").is_dir():
        board.say(f"holding the node on {board.port} (it starts nothing until the copy is done)")
        board.hold()
    prep = board.run("exec", _prepare_script(list(local)))
    has_config = _marked(prep, "config") == [["1"]]
    copy = dict(local)
    if config is None and has_config:
        del copy[CONFIG]
        state = "kept"
    else:
        state = "replaced" if config is not None else "installed"
    args: list[str] = []
    for name, path in copy.items():
        args += ["+", "fs", "cp", str(path), ":" + name]
    board.say(f"copying {len(copy)} files to {board.port}")
    board.run(*args[1:])
    # read back in a run of its own: what a later connection sees is what the board kept
    landed = dict(_marked(board.run("exec", _hash_script(list(copy))), "sha"))
    want = {name: hashlib.sha256(path.read_bytes()).hexdigest() for name, path in copy.items()}
    bad = sorted(n for n in want if landed.get(n) != want[n])
    if bad:
        raise BoardError(
            f"{len(bad)} file(s) did not land intact on {board.port}: {', '.join(bad[:5])}; "
            "run it again (the board was not reset)"
        )
    board.say(f"verified {len(want)} files (SHA-256); resetting the board")
    board.reset()
    return {"files": want, "config": state}


def locked_config(src: Path, tmp: Path) -> Path:
    """A private copy of the config `src` that says "locked" (firmware/rbnode/lock.py)."""
    from railbird.private import write_private

    cfg = json.loads(Path(src).read_text())
    cfg["locked"] = True
    out = tmp / CONFIG
    write_private(out, json.dumps(cfg, indent=2) + "\n")
    return out


def main(argv=None) -> int:
    """`tools/flash.sh` (`make flash`): python -m railbird.provision.board PORT BUILD
    [--config FILE]."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m railbird.provision.board")
    ap.add_argument("port")
    ap.add_argument("build", type=Path)
    ap.add_argument("--config", type=Path, help="install this file as config.json")
    ap.add_argument("--mpremote", help="the mpremote command (default: this environment's)")
    ap.add_argument(
        "--locked", action="store_true", help="the config.json installed says locked (no REPL)"
    )
    a = ap.parse_args(argv)
    board = Board(a.port, mpremote=[a.mpremote] if a.mpremote else mpremote_command())
    try:
        with tempfile.TemporaryDirectory(prefix="railbird-flash-") as tmp:
            config = a.config
            if a.locked:
                config = locked_config(config or a.build / CONFIG, Path(tmp))
            r = install(board, a.build, config=config)
    except BoardError as e:
        print(f"flash: {e}", file=sys.stderr)
        return 1
    if r["config"] == "kept":
        print("kept the board's config.json (CONFIG=file to replace it)")
    elif r["config"] == "installed" and (a.build / "rbnode").is_dir():
        print(
            "installed the build's default config.json: give the board its own with "
            "`railbird node provision` (docs/install.md) or CONFIG=file"
        )
    print(json.dumps({"port": a.port, "files": len(r["files"]), "config": r["config"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
