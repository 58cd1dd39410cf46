"""The over-the-air state machine (firmware/rbnode/ota.py) on the simulated flash behind the
hardware layer (rbnode.hw.sim.SimStorage, which cuts the power at any write step):

- an update succeeds (v1 flashed -> v2 in slot a -> v3 in slot b, each committed);
- a corrupted file, a manifest that is not the one the command names, a short file and a
  set that does not fit are refused before anything is installed (the pointer untouched);
- a power cut at every write step of an install, the trial boot, the commit or the rollback
  leaves a node that boots a complete set, the old or the new one, never neither, and the
  retried update completes;
- a set that never gets healthy is rolled back (at its deadline, or after its trial boots);
- the same scenarios pass in real MicroPython 1.27 (tests/firmware/mp/run_ota.py).
"""

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE / "mp"))

import ota_scenarios as sc  # noqa: E402 - needs tests/firmware/mp on sys.path (above)

from rbnode import ota  # noqa: E402 - the firmware is on sys.path by tests/conftest.py
from rbnode.hw.sim import PowerCut, SimStorage  # noqa: E402 - as above


@pytest.mark.parametrize("name", sc.SCENARIOS)
def test_scenario(name, tmp_path):
    getattr(sc, name)(str(tmp_path))


@pytest.mark.parametrize(("name", "history", "finish"), sc.CUTS, ids=[c[0] for c in sc.CUTS])
def test_power_cut_at_every_step(name, history, finish, tmp_path):
    print(sc.power_cuts(str(tmp_path), history, finish))


def test_every_kind_of_write_step_is_cut(tmp_path):
    """The cut loop reaches every kind of flash write the installer makes (so "every step"
    is not only the file writes): creating, writing, closing, renaming, removing, mkdir and
    rmdir (the spare slot emptied of an older set)."""
    sc._prepare(str(tmp_path), ("v2", "v3"))
    st = SimStorage(str(tmp_path))
    files, man = sc.make_set("v4")
    u = ota.install_sync(st, sc.command("v4", man), sc.fetcher(files, man))
    assert u.state == "rebooting" and u.slot == "a"
    kinds = {x.split()[0] for x in st.log}
    assert kinds == {"open", "write", "close", "rename", "remove", "mkdir", "rmdir"}, kinds
    # the switch is the pointer's rename, and it is the last step
    assert st.log[-1] == "rename fw/boot.json.tmp fw/boot.json"
    assert st.log.index("rename fw/a/manifest.json.tmp fw/a/manifest.json") == len(st.log) - 5


def test_torn_pointer_is_never_taken(tmp_path):
    """A pointer cut half-way through its temporary file is ignored; a pointer whose rename
    cannot replace (FAT: removed, then renamed) is read from the complete temporary file."""
    root = str(tmp_path)
    sc.flash_root(root, "v1")
    sc.update(SimStorage(root), "v2")
    st = SimStorage(root)
    good = st.read(ota.POINTER)
    # a torn temporary file next to the good pointer
    (tmp_path / "fw" / "boot.json.tmp").write_bytes(good[: len(good) // 2])
    assert ota.read_state(st)["try"]["version"] == "v2"
    # the FAT window: the pointer removed, the complete new one still under its temp name
    (tmp_path / "fw" / "boot.json").unlink()
    (tmp_path / "fw" / "boot.json.tmp").write_bytes(good)
    assert ota.read_state(st)["try"]["version"] == "v2"
    # a checksum that does not match (a flipped bit) is no pointer at all: the flashed set
    bad = bytearray(good)
    bad[10] ^= 1
    (tmp_path / "fw" / "boot.json.tmp").write_bytes(bytes(bad))
    assert ota.read_state(st) == ota._empty()
    assert sc.boot_check(root, ("v1",))[1]["slot"] == ""


def test_incomplete_confirmed_set_falls_back(tmp_path):
    """Flash that lost a file of the confirmed set (never by the installer): the boot takes
    the previous complete set, and the flashed one when there is none."""
    root = str(tmp_path)
    sc._prepare(root, ("v2", "v3"))  # cur b (v3), prev a (v2)
    (tmp_path / "fw" / "b" / "rbnode" / "hw" / "hal.mpy").write_bytes(b"x")
    assert sc.boot_check(root, ("v2",))[1]["slot"] == "a"
    (tmp_path / "fw" / "a" / "manifest.json").unlink()
    assert sc.boot_check(root, ("v1",))[1]["slot"] == ""


def test_manifest_paths_stay_inside_the_slot(tmp_path):
    """A manifest naming a path outside its slot, or the slot's own manifest, is refused
    before any file is written."""
    for bad in ("../boot.py", "/main.py", "rbnode//x.mpy", "manifest.json", "a/./b", "a\\b"):
        root = tmp_path / str(abs(hash(bad)))
        sc.flash_root(str(root), "v1")
        files, man = sc.make_set("v2")
        m = json.loads(man)
        m["files"][0]["path"] = bad
        man = json.dumps(m).encode()
        st = SimStorage(str(root))
        u = ota.install_sync(st, sc.command("v2", man), sc.fetcher(files, man))
        assert u.state == "failed" and u.error.startswith("manifest: bad path"), (bad, u.error)
        assert not [x for x in st.log if x.startswith("open")]


def test_power_cut_is_not_an_exception(tmp_path):
    """`except Exception` in the firmware cannot swallow the simulated cut."""
    st = SimStorage(str(tmp_path), cut_at=1)
    swallowed = []

    def firmware_step():
        try:
            st.mkdir("fw")
        except Exception:  # noqa: BLE001 - the point of the test
            swallowed.append(1)

    with pytest.raises(PowerCut):
        firmware_step()
    assert not swallowed
    with pytest.raises(PowerCut):
        st.read("anything")  # the power stays off


@pytest.mark.micropython
def test_same_state_machine_in_micropython(micropython):
    r = micropython(
        HERE / "mp" / "run_ota.py",
        paths=[REPO / "firmware", REPO / "protocol", HERE / "mp"],
        timeout=300,
    )
    assert r.ok, r.stderr + r.stdout
    lines = [x for x in r.stdout.splitlines() if x.startswith("OTA ")]
    names = [x.split()[1] for x in lines]
    assert names == list(sc.SCENARIOS) + [c[0] for c in sc.CUTS], r.stdout
    assert "OTA-ALL-OK" in r.stdout
    print("\n" + "\n".join(lines))


@pytest.mark.micropython
def test_boot_py_picks_the_set_in_micropython(micropython):
    """firmware/boot.py itself in real MicroPython: a set on trial is put first on sys.path
    and its boot counted; a set on trial that cannot import rbnode is rolled back and the
    board reset at once (through the hardware layer's chip); the next boot runs the
    confirmed set."""
    r = micropython(
        HERE / "mp" / "run_boot.py", paths=[REPO / "firmware", REPO / "protocol", HERE / "mp"]
    )
    assert r.ok, r.stderr + r.stdout
    lines = [x for x in r.stdout.splitlines() if x.startswith("BOOT ")]
    assert lines == [
        "BOOT trial slot a /fw/a 1",
        "BOOT reset sim reset",
        "BOOT broken None a rolled_back import failed: ImportError('broken set',)",
        "BOOT after slot a /fw/a a",
    ], r.stdout
    assert "firmware selection failed" not in r.stdout
