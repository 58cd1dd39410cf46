"""The sensor node reads the shipped pin map files (hardware/pinmaps/): the pure
translation pin map -> ESP32 set-up (rbnode.hw.hal.pin_setup over pinmap_core.hal_pinmap)
equals the JSON for every channel (GPIO, pull, active level, PCNT unit); Esp32Hardware
sets up exactly that (on stand-in machine/esp32 modules); the build installs the map and its
loader; both load in real MicroPython; `cue_ch` means the same everywhere."""

import importlib
import json
import shutil
import sys
import types
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import pytest

from railbird.hardware import PINMAP_DIR, calibrate, pinmap_core
from rbnode import config as rbconfig
from rbnode.hw import hal
from rbnode.node import Node
from rbproto import codec

REPO = Path(__file__).resolve().parents[2]
if str(REPO / "tools") not in sys.path:
    sys.path.insert(0, str(REPO / "tools"))  # build_firmware, for the build tests

MAPS = ("esp32-devkitc", "esp32-s3-devkitc")


def _json(name):
    return json.loads((PINMAP_DIR / f"{name}.json").read_text())


def _expected_pull(doc, obj, default):
    """What the JSON says the firmware must enable: the internal pull, unless the map
    declares an external resistor on the pin (or the input needs none)."""
    pull = obj.get("pull", default)
    if pull == "none":
        return None
    ext = doc.get("external_pullups" if pull == "up" else "external_pulldowns", [])
    return None if obj["pin"] in ext else pull


def _level(obj, default="high"):
    return 1 if obj.get("active", default) == "high" else 0


def _single_units(doc):
    return {u["inputs"][0]: u["unit"] for u in doc.get("pcnt", []) if len(u["inputs"]) == 1}


@pytest.fixture(autouse=True)
def _pinmap_core_module(monkeypatch):
    # on the device pinmap_core is a top-level module (the build puts it at the root)
    monkeypatch.setitem(sys.modules, "pinmap_core", pinmap_core)


# ---- the pure translation -------------------------------------------------------------


@pytest.mark.parametrize("name", MAPS)
def test_pin_setup_equals_json(name):
    doc = _json(name)
    st = hal.pin_setup(pinmap_core.hal_pinmap(pinmap_core.validate(_json(name))))
    units = _single_units(doc)
    assert st["id"] == doc["id"] == name
    assert len(st["beam"]) == len(doc["beams"]) == 6
    for i, b in enumerate(doc["beams"]):
        assert st["beam"][i] == (
            b["pin"],
            _expected_pull(doc, b, "up"),
            _level(b),
            units.get(f"beam{i}"),
        ), (name, i)
    cue = doc["cue"]
    assert st["cue"] == [
        (cue["pin"], _expected_pull(doc, cue, "up"), _level(cue), units.get("cue"))
    ]
    assert len(st["rail"]) == len(doc["rails"]) == 6
    for i, r in enumerate(doc["rails"]):
        dump = r.get("dump")
        assert st["rail"][i] == (
            r["edge"]["pin"],
            _expected_pull(doc, r["edge"], "none"),
            _level(r["edge"]),
            r["amp"]["pin"],
            None if dump is None else dump["pin"],
        ), (name, i)
    assert st["blocked"] == _level(doc["beams"][0]) == 1
    assert st["atten_db"] == doc["adc"]["atten_db"]
    assert st["led"] == (doc["led"]["pin"], _level(doc["led"]))


def test_shipped_maps_use_external_pullups_only():
    # the old built-in map enabled internal pull-ups on every pin below 34; the shipped
    # maps fit 4.7 kOhm resistors on the interface board, so no internal pull is enabled
    for name in MAPS:
        st = hal.pin_setup(pinmap_core.hal_pinmap(pinmap_core.validate(_json(name))))
        pulls = [x[1] for x in st["beam"] + st["cue"] + st["rail"]]
        assert pulls == [None] * 13, name


def test_pcnt_units_follow_the_map():
    dk = hal.pin_setup(pinmap_core.hal_pinmap(_json("esp32-devkitc")))
    assert [b[3] for b in dk["beam"]] == [0, 1, 2, 3, 4, 5] and dk["cue"][0][3] == 6
    s3 = hal.pin_setup(pinmap_core.hal_pinmap(_json("esp32-s3-devkitc")))
    # paired units cannot attribute a lost edge to one beam: no per-beam counter
    assert [b[3] for b in s3["beam"]] == [None] * 6 and s3["cue"][0][3] == 3


def test_internal_pull_when_no_resistor_and_low_active_rail():
    doc = _json("esp32-devkitc")
    doc["external_pullups"] = [16]
    doc["rails"][2]["edge"]["active"] = "low"
    doc["rails"][2]["edge"]["pull"] = "up"
    st = hal.pin_setup(pinmap_core.hal_pinmap(pinmap_core.validate(doc)))
    assert st["beam"][0][1] is None and st["beam"][1][1] == "up" and st["cue"][0][1] == "up"
    assert st["rail"][2][1:3] == ("up", 0)


def test_mixed_active_levels_refused():
    doc = _json("esp32-devkitc")
    doc["cue"]["active"] = "low"
    with pytest.raises(ValueError, match="one active level"):
        hal.pin_setup(pinmap_core.hal_pinmap(doc))
    doc = _json("esp32-devkitc")
    for b in doc["beams"]:
        b["active"] = "low"
    doc["cue"]["active"] = "low"
    assert hal.pin_setup(pinmap_core.hal_pinmap(doc))["blocked"] == 0


def test_load_pinmap(tmp_path, monkeypatch):
    shutil.copy(PINMAP_DIR / "esp32-devkitc.json", tmp_path / "pinmap.json")
    shutil.copy(PINMAP_DIR / "esp32-s3-devkitc.json", tmp_path / "s3.json")
    monkeypatch.chdir(tmp_path)
    want = pinmap_core.hal_pinmap(_json("esp32-devkitc"))
    assert hal.load_pinmap() == want
    assert hal.load_pinmap("esp32-devkitc") == want
    assert hal.load_pinmap("s3.json")["id"] == "esp32-s3-devkitc"
    assert hal.load_pinmap(_json("esp32-s3-devkitc"))["id"] == "esp32-s3-devkitc"
    with pytest.raises(pinmap_core.PinmapError, match="mismatch"):
        hal.load_pinmap("esp32-s3-devkitc")
    with pytest.raises(pinmap_core.PinmapError):
        hal.load_pinmap({"id": "x", "beams": [4, 13]})  # the old built-in dict format
    (tmp_path / "pinmap.json").unlink()
    with pytest.raises(FileNotFoundError):
        hal.load_pinmap()


# ---- Esp32Hardware on stand-in machine/esp32 modules ----------------------------------


class _Pin:
    IN, OUT, PULL_UP, PULL_DOWN, IRQ_RISING, IRQ_FALLING = 1, 3, 11, 12, 21, 22
    made: ClassVar[list] = []

    def __init__(self, gpio, mode=None, pull=None, value=None):
        self.gpio, self.mode, self.pull, self.level = gpio, mode, pull, value
        self.trigger = None
        _Pin.made.append(self)

    def value(self, v=None):
        if v is None:
            return self.level or 0
        self.level = v

    def irq(self, handler=None, trigger=None):
        self.trigger = trigger if handler is not None else None


class _ADC:
    ATTN_0DB, ATTN_2_5DB, ATTN_6DB, ATTN_11DB = 0, 1, 2, 3
    made: ClassVar[list] = []

    def __init__(self, pin, atten=None):
        self.gpio, self.atten = pin.gpio, atten
        _ADC.made.append(self)

    def read_u16(self):
        return 0


class _PCNT:
    INCREMENT, IGNORE = 1, 0
    made: ClassVar[list] = []

    def __init__(self, unit, pin=None, **kw):
        self.unit, self.gpio = unit, pin.gpio
        _PCNT.made.append(self)

    def start(self):
        pass

    def value(self):
        return 0


class _I2C:
    """machine.I2C on the colour station's pins: records what the driver wrote."""

    made: ClassVar[list] = []

    def __init__(self, bus, sda=None, scl=None, freq=0):
        self.sda, self.scl, self.freq = sda.gpio, scl.gpio, freq
        self.writes: list = []
        _I2C.made.append(self)

    def writeto(self, addr, buf):
        self.writes.append((addr, None, bytes(buf)))

    def writeto_mem(self, addr, reg, buf):
        self.writes.append((addr, reg, bytes(buf)))


@pytest.fixture
def esp32_layer(monkeypatch):
    for cls in (_Pin, _ADC, _PCNT, _I2C):
        cls.made = []
    machine = types.ModuleType("machine")
    machine.Pin, machine.ADC, machine.I2C = _Pin, _ADC, _I2C
    for i, n in enumerate(
        ("PWRON_RESET", "HARD_RESET", "WDT_RESET", "DEEPSLEEP_RESET", "SOFT_RESET")
    ):
        setattr(machine, n, i + 1)
    esp32 = types.ModuleType("esp32")
    esp32.PCNT = _PCNT
    esp32.NVS = lambda ns: SimpleNamespace(ns=ns)
    micropython = types.ModuleType("micropython")
    network = types.ModuleType("network")
    fake_time = types.ModuleType("time")
    for n in ("ticks_us", "ticks_diff", "ticks_add", "sleep_ms", "sleep_us"):
        setattr(fake_time, n, lambda *a: 0)
    for name, mod in (
        ("machine", machine),
        ("esp32", esp32),
        ("micropython", micropython),
        ("network", network),
    ):
        monkeypatch.setitem(sys.modules, name, mod)
    monkeypatch.delitem(sys.modules, "rbnode.hw.esp32", raising=False)
    real_time = sys.modules["time"]
    sys.modules["time"] = fake_time  # only esp32.py sees the device's time module
    try:
        mod = importlib.import_module("rbnode.hw.esp32")
    finally:
        sys.modules["time"] = real_time
    monkeypatch.delitem(sys.modules, "rbnode.hw.esp32")
    return mod


@pytest.mark.parametrize("name", MAPS)
def test_esp32_hardware_sets_up_the_json(esp32_layer, name, tmp_path, monkeypatch):
    assert not hasattr(esp32_layer, "DEFAULT_PINMAP")  # no built-in map any more
    doc = _json(name)
    shutil.copy(PINMAP_DIR / f"{name}.json", tmp_path / "pinmap.json")
    monkeypatch.chdir(tmp_path)
    hw = esp32_layer.Esp32Hardware()  # boot: loads /pinmap.json
    assert hw.pinmap_id == name and hw.BEAM_BLOCKED == 1
    pins = {p.gpio: p for p in _Pin.made}
    ext = set(doc.get("external_pullups", []))
    for b in doc["beams"] + [doc["cue"]]:
        p = pins[b["pin"]]
        assert p.mode == _Pin.IN and p.pull == (None if b["pin"] in ext else _Pin.PULL_UP)
    for i, r in enumerate(doc["rails"]):
        assert pins[r["edge"]["pin"]].pull is None
        hw.set_irq("rail", i, lambda pin: None)
        assert pins[r["edge"]["pin"]].trigger == _Pin.IRQ_RISING
    strike = doc.get("strike", [])
    assert [a.gpio for a in _ADC.made] == [r["amp"]["pin"] for r in doc["rails"]] + [
        r["amp"]["pin"] for r in strike
    ]
    for i, r in enumerate(strike):  # the strike input: a comparator edge like a rail's
        assert pins[r["edge"]["pin"]].pull is None
        hw.set_irq("strike", i, lambda pin: None)
        assert pins[r["edge"]["pin"]].trigger == _Pin.IRQ_RISING
        assert hw.has_adc("strike", i)
    assert hw.channels("strike") == len(strike)
    assert {a.atten for a in _ADC.made} == {_ADC.ATTN_11DB}
    units = _single_units(doc)
    assert sorted((c.unit, c.gpio) for c in _PCNT.made) == sorted(
        (u, doc["cue"]["pin"] if n == "cue" else doc["beams"][int(n[4:])]["pin"])
        for n, u in units.items()
    )
    assert pins[doc["led"]["pin"]].mode == _Pin.OUT and pins[doc["led"]["pin"]].level == 0
    assert hw.channels("beam") == 6 and hw.channels("cue") == 1 and hw.channels("rail") == 6
    colour = doc.get("colour")
    if colour is None:  # a table without a station: no bus, no sensors
        assert _I2C.made == [] and hw.colour_sensors() == 0
    else:  # hardware/colour.md "Wiring": the bus on sda/scl, the gate a pulled-up input
        (bus,) = _I2C.made
        assert (bus.sda, bus.scl, bus.freq) == (colour["sda"], colour["scl"], 400000)
        gate = pins[colour["gate"]]
        assert gate.mode == _Pin.IN
        assert gate.pull == (None if colour["gate"] in ext else _Pin.PULL_UP)
        assert hw.colour_sensors() == colour["sensors"]
        # each sensor selected on the mux (0x70), then PON | AEN on the TCS34725 (0x29)
        sel = [w[2] for w in bus.writes if w[0] == 0x70]
        assert sel == [bytes([1 << i]) for i in range(colour["sensors"])]
        assert bus.writes.count((0x29, 0x80, b"\x03")) == colour["sensors"]
    # the birth message's pinmap is the loaded map's id
    msg = Node.birth_msg(
        SimpleNamespace(
            hw=hw,
            node_id="n1",
            boot=1,
            reset_cause="power",
            cfg_hash="00000000",
            upd=SimpleNamespace(version="rbnode-0.1.0"),
            _strike=None,
            _colour=None,
            trust=SimpleNamespace(required=False),
        )
    )
    assert msg["pinmap"] == name
    codec.validate("birth", msg)


# ---- build output ---------------------------------------------------------------------


def test_build_installs_pinmap_and_loader(tmp_path):
    import build_firmware

    out = tmp_path / "node"
    made, _ = build_firmware.build(out)
    names = {p.relative_to(out).as_posix() for p in made}
    assert {"pinmap.json", "pinmap_core.mpy"} <= names
    assert (out / "pinmap.json").read_bytes() == (PINMAP_DIR / "esp32-devkitc.json").read_bytes()
    assert (out / "pinmap_core.mpy").read_bytes()[:1] == b"M"  # compiled .mpy
    assert "pinmap.json" in (out / "MANIFEST.txt").read_text()
    assert "rbproto/sbframe.mpy" not in names  # the scoreboard's codec stays off the node
    build_firmware.build(out, pinmap="esp32-s3-devkitc")
    assert json.loads((out / "pinmap.json").read_text())["id"] == "esp32-s3-devkitc"


def test_build_pinmap_from_config(tmp_path):
    import build_firmware

    cfg = json.loads((REPO / "firmware" / "config.json").read_text())
    cfg["pinmap"] = "esp32-s3-devkitc"
    (tmp_path / "c.json").write_text(json.dumps(cfg))
    build_firmware.build(tmp_path / "node", config=tmp_path / "c.json")
    assert json.loads((tmp_path / "node" / "pinmap.json").read_text())["id"] == "esp32-s3-devkitc"
    with pytest.raises(SystemExit):  # the board would refuse it at boot
        build_firmware.build(tmp_path / "node", config=tmp_path / "c.json", pinmap="esp32-devkitc")


def test_build_both_nodes(tmp_path):
    import build_firmware

    build_firmware.main(["--out", str(tmp_path)])
    sb = {
        p.relative_to(tmp_path / "scoreboard").as_posix()
        for p in (tmp_path / "scoreboard").rglob("*")
        if p.is_file()
    }
    assert sb == {
        "segfont.mpy",
        "layout.mpy",
        "max7219.mpy",
        "board.mpy",
        "hw/__init__.py",
        "hw/esp32.mpy",
        "main.py",
        "rbproto/__init__.py",
        "rbproto/sbframe.mpy",
        "MANIFEST.txt",
    }
    assert (tmp_path / "node" / "main.py").exists() and (tmp_path / "node" / "pinmap.json").exists()


# ---- real MicroPython -----------------------------------------------------------------

MP_MAIN = """
import json, os
from rbnode.hw import hal
os.chdir("/lib-0")
out = {}
out["default"] = hal.pin_setup(hal.load_pinmap())
out["by_id"] = hal.load_pinmap("esp32-devkitc")["id"]
out["s3"] = hal.pin_setup(hal.load_pinmap("/lib-1/esp32-s3-devkitc.json"))
try:
    hal.load_pinmap("esp32-s3-devkitc")
    out["mismatch"] = None
except ValueError as e:
    out["mismatch"] = str(e)
print(json.dumps(out))
"""


@pytest.mark.micropython
def test_pinmap_loads_in_micropython(micropython, tmp_path):
    import build_firmware

    node = tmp_path / "build"
    build_firmware.build(node)
    dev = tmp_path / "dev"  # the board's root: pinmap.json + the sources of the .mpy files
    dev.mkdir()
    shutil.copy(node / "pinmap.json", dev / "pinmap.json")
    shutil.copy(pinmap_core.__file__, dev / "pinmap_core.py")
    shutil.copytree(
        REPO / "firmware" / "rbnode",
        dev / "rbnode",
        ignore=shutil.ignore_patterns("__pycache__", "sim.py", "simnode.py"),
    )
    maps = tmp_path / "maps"
    maps.mkdir()
    shutil.copy(PINMAP_DIR / "esp32-s3-devkitc.json", maps / "esp32-s3-devkitc.json")
    main = tmp_path / "main.py"
    main.write_text(MP_MAIN)
    res = micropython(main, paths=[dev, maps], cwd=tmp_path)
    assert res.ok, res.stderr
    got = json.loads(res.stdout.strip().splitlines()[-1])

    def cpython(name):
        return json.loads(json.dumps(hal.pin_setup(pinmap_core.hal_pinmap(_json(name)))))

    assert got["default"] == cpython("esp32-devkitc")
    assert got["s3"] == cpython("esp32-s3-devkitc")
    assert got["by_id"] == "esp32-devkitc"
    assert "mismatch" in got["mismatch"]


# ---- cue_ch: one meaning (SPEC.md config, firmware config.py, pin map README, calibrate) -


class _Hw:
    def __init__(self, pm):
        self._ch = pinmap_core.channels(pm)
        self.pinmap_id = pm["id"]

    def channels(self, kind):
        return self._ch[{"beam": "beams", "rail": "rails", "cue": "cue"}[kind]]


@pytest.mark.parametrize("name", MAPS)
def test_cue_ch_is_the_dedicated_cue_input(name):
    pm = pinmap_core.validate(_json(name))
    cue = pinmap_core.cue_channel(pm)
    assert cue == len(pm["beams"]) == 6
    default = json.loads((REPO / "firmware" / "config.json").read_text())["sensing"]
    assert default["cue_ch"] == cue
    assert calibrate.default_config()["cue_ch"] == cue
    # calibrate without a pin map assumes the same
    link = SimpleNamespace(birth=None, config=None)
    assert calibrate.Calibrator._channels(SimpleNamespace(pinmap=None, link=link)) == (6, 6, cue)
    hw = _Hw(pm)
    base = {"v": 1, "rev": 1, "pockets": [{"ch": 0, "pocket": "HL"}], "rails": []}
    assert rbconfig.check(dict(base, cue_ch=cue), hw)["cue_ch"] == cue  # dedicated input
    assert rbconfig.check(dict(base, cue_ch=3), hw)["cue_ch"] == 3  # a beam input
    with pytest.raises(rbconfig.ConfigError, match="not in pin map"):
        rbconfig.check(dict(base, cue_ch=cue + 1), hw)
    with pytest.raises(rbconfig.ConfigError, match="also pocket"):
        rbconfig.check(dict(base, cue_ch=0), hw)


def test_cue_ch_documented_alike():
    spec = (REPO / "protocol" / "SPEC.md").read_text()
    readme = (REPO / "firmware" / "README.md").read_text()
    pins = (REPO / "hardware" / "pinmaps" / "README.md").read_text()
    for text in (spec, readme, pins):
        assert "beams + i" in text or "len(beams) + cue.ch" in text
    assert "`cue_ch` (uint or null: the input of the cue-ball detector" in spec


def test_node_treats_cue_ch_6_as_the_cue_input(tmp_path):
    from rbnode.hw.sim import SimHardware

    hw = SimHardware(seed=1, fs_root=str(tmp_path))
    dev = json.loads((REPO / "firmware" / "config.json").read_text())
    dev["spill"] = 0
    dev["wdt"] = False
    node = Node(hw, dev)
    cues = [b for b in node._beams if b.kind == "cue"]
    assert len(cues) == 1 and cues[0].ch == 0 and cues[0]._pin is hw.pin("cue", 0)
