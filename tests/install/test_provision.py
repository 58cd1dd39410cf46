"""Issue 14, item 3, Done-when: provisioning writes a config that the node firmware loads and
that the host accepts, end to end through a broker started from the installation's own
config with the simulated hardware layer; `make flash` and `railbird node provision` run
without node_modules present (the flashing step itself against a fake serial port).

The board is real MicroPython (the unix port) behind a pty (tests/harness/fakeboard.py):
mpremote's raw REPL, `fs cp` and `exec` run there, and the files land in a directory. The
unix port cannot run the ESP32's .mpy files, so the node then boots under CPython from what
landed: the landed config.json, the landed pinmap.json (hal.load_pinmap, as main.py does),
on simulated hardware (SimNode), against mosquitto and `railbird run` from the files
`railbird setup` wrote. The commands run with a PATH that has no node, npm or mosquitto."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from harness import fakeboard
from rbnode.simnode import SimNode, default_device_config

from .setuprun import Broker, setup

pytestmark = [pytest.mark.broker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
VENUE = "club"
WIFI = {"RAILBIRD_WIFI_PASSWORD": "bar-wifi-pw"}
SETUP = ["--venue", VENUE, "--table", "t1:10-ball:t1-a:Ann,Bob", "--wifi-ssid", "BarWiFi"]
# the only programs the commands below may find: no node, npm or mosquitto among them
TOOLS = ("bash", "sh", "dirname", "env", "touch", "rm", "mkdir", "cat")


@pytest.fixture
def bare_path(tmp_path) -> str:
    """A PATH of a few shell tools, without Node.js, npm or mosquitto."""
    bin_dir = tmp_path / "bare-bin"
    bin_dir.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    assert not {"node", "npm", "mosquitto"} & {p.name for p in bin_dir.iterdir()}
    return str(bin_dir)


@pytest.fixture
def board(tmp_path):
    why = fakeboard.available()
    if why:
        pytest.fail(f"the fake board cannot run: {why}")
    b = fakeboard.FakeBoard(tmp_path / "flash").start()
    try:
        yield b
    finally:
        b.stop()


# what only the simulator runs: rbnode.hw.sim, the in-process and per-boot simulated boards
SIM_ONLY = {"sim.py", "simnode.py", "simproc.py", "simboot.py"}


def provision(root: Path, *args: str, path: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "RAILBIRD_WIFI_PASSWORD"}
    return subprocess.run(
        [sys.executable, "-m", "railbird", "node", "provision", "--root", str(root), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**env, "PATH": path},
    )


def boot_from(flash: Path, monkeypatch) -> dict:
    """What firmware/main.py does with the landed files before the node starts: read
    config.json, load the pin map it names from pinmap.json (pinmap_core, as on the board)."""
    from railbird.hardware import pinmap_core
    from rbnode.hw import hal

    dev = json.loads((flash / "config.json").read_text())
    monkeypatch.setitem(sys.modules, "pinmap_core", pinmap_core)
    monkeypatch.chdir(flash)
    pm = hal.load_pinmap(dev.get("pinmap"))
    assert pm["id"] == dev["pinmap"]
    return dev


def wait_stats(path: Path, proc, cond, what: str, timeout: float = 30.0) -> dict:
    deadline = time.monotonic() + timeout
    s: dict = {}
    while time.monotonic() < deadline:
        assert proc.poll() is None, (path.parent / "host.log").read_text()
        try:
            s = json.loads(path.read_text())
        except (OSError, ValueError):
            s = {}
        if cond(s):
            return s
        time.sleep(0.1)
    raise AssertionError(f"{what}: {s}\n{(path.parent / 'host.log').read_text()[-3000:]}")


def test_a_provisioned_board_runs_the_node_the_host_accepts(
    tmp_path, board, bare_path, monkeypatch
):
    inst, _ = setup(tmp_path / "root", *SETUP, env=WIFI)
    written = inst.node("t1-a")
    r = provision(
        inst.root,
        "--node",
        "t1-a",
        "--table",
        "t1",
        "--port",
        board.port,
        path=bare_path,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verified" in r.stdout and not (tmp_path / "node_modules").exists()
    board.wait_resets(2)  # held for the copy, then started
    flash = board.root
    landed = json.loads((flash / "config.json").read_text())
    # the node's own config, as setup wrote it, with the pin map the build installed and
    # the venue key's public part (issue 23: the board takes only what the key signed)
    venue_key = (inst.etc / "venue-key.pub").read_text().strip()
    assert landed == dict(written, pinmap="esp32-devkitc", venue_key=venue_key)
    assert "it has the venue key" in r.stdout
    modules = {
        p.relative_to(REPO / "firmware").with_suffix(".mpy").as_posix()
        for p in (REPO / "firmware" / "rbnode").rglob("*.py")
        if p.name != "__init__.py" and p.name not in SIM_ONLY
    }
    on_board = {p.relative_to(flash).as_posix() for p in flash.rglob("*") if p.is_file()}
    # the simulated hardware and the simulated boards are never copied to a real one
    assert not {Path(p).with_suffix(".py").name for p in on_board} & SIM_ONLY, on_board
    assert modules <= on_board, modules - on_board
    assert {"boot.py", "main.py", "pinmap.json", "pinmap_core.mpy", "rbproto/codec.mpy"} <= (
        on_board
    )
    assert "provisioning" not in on_board  # the hold is gone: the next boot starts the node
    assert (flash / "boot.py").read_bytes() == (REPO / "firmware" / "boot.py").read_bytes()

    dev = boot_from(flash, monkeypatch)
    # TLS is the default: provisioning put the installation's CA on the board, and the board
    # opens it by the name its config gives, beside its other files
    assert dev["broker"]["tls"] is True
    assert (flash / dev["broker"]["ca"]).read_bytes() == (inst.etc / "tls" / "ca.crt").read_bytes()
    monkeypatch.chdir(flash)
    stats = tmp_path / "stats.json"
    with Broker(inst), open(tmp_path / "host.log", "wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "railbird",
                "run",
                "--config",
                str(inst.etc / "host.toml"),
                "--stats-file",
                str(stats),
            ],
            stdout=log,
            stderr=log,
        )
        b = dev["broker"]
        node = SimNode(
            b["host"],
            b["port"],
            dev["venue"],
            dev["table"],
            dev["node"],
            b["password"],
            tmp_path / "node-state",
            dev=dev,
        )
        try:
            wait_stats(stats, proc, lambda s: s.get("connected"), "the host connects")
            node.start()
            node.wait_connected()
            node.drop("HL")
            node.drop("SR", at_us=node.now_us + 200_000)
            s = wait_stats(stats, proc, lambda s: s.get("events", 0) >= 2, "the node's events")
            assert s["rejected"] == 0, s
        finally:
            node.stop()
            proc.terminate()
            proc.wait(20)


def test_make_flash_builds_and_flashes_without_node_modules(tmp_path, board, bare_path):
    """`make flash` in a copy of the repository without node_modules: it builds with
    mpy-cross and copies with mpremote, needing neither Node.js nor mosquitto."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy2(REPO / name, repo / name)
    ignore = shutil.ignore_patterns("build", "__pycache__")
    for d in ("firmware", "protocol", "host", "tools", "hardware"):
        shutil.copytree(REPO / d, repo / d, ignore=ignore)
    (repo / ".venv").symlink_to(sys.prefix)  # the environment running this test
    make = shutil.which("make")
    dry = subprocess.run(
        [make, "-n", "flash", "PORT=" + board.port], cwd=repo, capture_output=True, text=True
    )
    assert "npm" not in dry.stdout and "mosquitto" not in dry.stdout, dry.stdout
    # the board tools' stamp stands for an installed [flash] extra: never reinstall here
    r = subprocess.run(
        [make, "-o", ".venv/.stamp-flash", "flash", "PORT=" + board.port],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PATH": bare_path},
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert not (repo / "node_modules").exists()
    board.wait_resets(2)
    build = repo / "firmware" / "build" / "node"
    for line in (build / "MANIFEST.txt").read_text().splitlines()[:-1]:
        name, _size, digest = line.split()
        assert hashlib.sha256((board.root / name).read_bytes()).hexdigest() == digest, name
    # a board without a config gets the build's default one, which says so
    assert json.loads((board.root / "config.json").read_text())["node"] == "t1-node"
    assert "installed the build's default config.json" in r.stdout


def test_provision_refuses_a_node_the_host_would_not_accept(tmp_path, bare_path):
    """Nothing reaches a board unless host.toml lists the node on its table and the broker's
    password file takes its password: one line saying how to fix it, exit status 2."""
    inst, _ = setup(tmp_path / "root", *SETUP, env=WIFI)
    port = str(tmp_path / "no-board")  # never opened: every case is refused before that

    def refused(*args: str) -> str:
        r = provision(inst.root, *args, "--port", port, path=bare_path, cwd=tmp_path)
        assert r.returncode == 2, r.stdout + r.stderr
        assert r.stdout == "" and len(r.stderr.strip().splitlines()) == 1, r.stderr
        return r.stderr

    assert "railbird setup --table t1::t1-z" in refused("--node", "t1-z", "--table", "t1")
    assert "belongs to table 't1'" in refused("--node", "t1-a", "--table", "t2")
    # a node config whose password the broker no longer takes (a stale copy)
    path = inst.etc / "nodes" / "t1-a.json"
    good = path.read_text()
    stale = json.loads(good)
    stale["broker"]["password"] = "an-old-password"
    path.write_text(json.dumps(stale))
    assert "the broker would refuse node 't1-a'" in refused("--node", "t1-a")
    # a node id the config renames (the board would announce another node)
    stale = json.loads(good)
    stale["node"] = "n1"
    path.write_text(json.dumps(stale))
    assert "names node 'n1'" in refused("--node", "t1-a")
    # a node the host config no longer lists on its table
    path.write_text(good)
    host = (inst.etc / "host.toml").read_text()
    (inst.etc / "host.toml").write_text(host.replace('"t1-a"', '"t1-b"'))
    assert "not configured for table 't1'" in refused("--node", "t1-a")


def test_the_firmware_default_identity_is_the_one_setup_and_the_readme_give(tmp_path):
    """A board flashed with the default config.json announces the node id that `railbird
    setup --table t1` configures (t1-node, the README's too), not one the host refuses."""
    inst, _ = setup(tmp_path / "root", "--venue", VENUE, "--table", "t1", env=WIFI)
    dev = default_device_config()
    host = tomllib.loads((inst.etc / "host.toml").read_text())
    assert dev["venue"] == host["venue"]
    assert dev["node"] in host["tables"][dev["table"]]["nodes"]
    readme = (REPO / "README.md").read_text()
    assert f"--node {dev['node']}" in readme or f'"{dev["node"]}"' in readme


def test_the_hold_file_stops_the_node_for_exactly_one_boot(tmp_path, monkeypatch, capsys):
    """firmware/main.py with the file provisioning/make flash leave: that boot starts
    nothing (no watchdog to cut the copy short) and removes the file; the next boot goes on
    to read its config (here there is none, so it stops there)."""
    import runpy

    monkeypatch.chdir(tmp_path)
    (tmp_path / "provisioning").write_text("")
    runpy.run_path(str(REPO / "firmware" / "main.py"))
    assert "held for provisioning" in capsys.readouterr().out
    assert not (tmp_path / "provisioning").exists()
    with pytest.raises(FileNotFoundError, match=r"config\.json"):
        runpy.run_path(str(REPO / "firmware" / "main.py"))


def test_the_installed_package_carries_what_the_firmware_build_needs(tmp_path):
    """`pip install 'railbird[flash]'` without the repository: the wheel's data files
    (share/railbird) hold every source the node build reads, in the repository's layout, and
    the build runs from them alone (a firmware module the data-files globs miss fails it)."""
    import zipfile

    from railbird.provision import source

    # a copy: setuptools builds in the source tree (build/), which is not the test's to touch
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, src / name)
    skip = shutil.ignore_patterns("build", "__pycache__", "*.egg-info")
    for d in ("host", "protocol", "firmware", "tools", "hardware"):
        shutil.copytree(REPO / d, src / d, ignore=skip)
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    (wheel,) = tmp_path.glob("railbird-*.whl")
    prefix = f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.data/data/share/railbird/"
    share = tmp_path / "share" / "railbird"
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.startswith(prefix) and not name.endswith("/"):
                dest = share / name[len(prefix) :]
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(z.read(name))
    shipped = {
        p.relative_to(share / "firmware").as_posix() for p in (share / "firmware").rglob("*.py")
    }
    in_repo = {
        p.relative_to(REPO / "firmware").as_posix()
        for p in (REPO / "firmware").rglob("*.py")
        if "build" not in p.relative_to(REPO / "firmware").parts
    }
    assert in_repo <= shipped, in_repo - shipped
    assert source.tree(share) == share
    builder = source.build_module(share)
    made, _total = builder.build(tmp_path / "node")
    names = {p.relative_to(tmp_path / "node").as_posix() for p in made}
    assert {"main.py", "rbnode/node.mpy", "rbnode/led.mpy", "pinmap_core.mpy"} <= names


def test_a_board_without_micropython_is_told_at_the_first_question(tmp_path):
    """Issue 24, item 10: a board without MicroPython (a new ESP32 with the vendor's
    firmware) gave 120 s of silence before the clear message. The first thing asked now is a
    one-line exec with its own short deadline. The board: a real pty nobody answers on."""
    from railbird.provision.board import Board, BoardError, install

    master, slave = os.openpty()
    try:
        board = Board(os.ttyname(slave), say=lambda s: None)
        build = tmp_path / "build"
        (build / "rbnode").mkdir(parents=True)
        (build / "main.py").write_text("")
        with pytest.raises(BoardError) as err:
            install(board, build)
    finally:
        os.close(master)
        os.close(slave)
    text = str(err.value)
    assert f"no answer from MicroPython within {board.probe_timeout:.0f} s" in text, text
    assert "hardware/installation.md" in text
    assert board.probe_timeout < board.timeout
