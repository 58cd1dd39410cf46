"""The device-only firmware (sensor node boot.py, main.py, rbnode/hw/esp32.py; scoreboard
main.py, hw/esp32.py) type-checks against the MicroPython 1.27 ESP32 stubs, and the check
fails on a wrong `machine`/`esp32`/`network` call: mypy, as `make typecheck-firmware` runs it
(tools/typecheck_firmware.py, firmware/mypy.ini). These modules run on no machine here."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import typecheck_firmware as tc

REPO = Path(__file__).resolve().parents[2]

FW = REPO / "firmware"


@pytest.fixture(scope="module")
def typeshed(tmp_path_factory):
    try:
        return tc.build_typeshed(tmp_path_factory.mktemp("typeshed"))
    except tc.SetupMissing as e:
        pytest.fail(str(e))


def test_device_modules_typecheck_against_the_esp32_stubs(typeshed):
    ok, report = tc.check(typeshed=typeshed)
    assert ok, report
    assert "[node] Success: no issues found in 3 source files" in report
    assert "[scoreboard] Success: no issues found in 2 source files" in report


# (set, module, original text, wrong text, what mypy must say). Each is a mistake the
# CPython tests cannot see: they run these modules only on stand-in machine/esp32 modules.
MISTAKES = [
    (
        "node",
        "rbnode/hw/esp32.py",
        "trigger=P.IRQ_RISING | P.IRQ_FALLING",
        "trigger=P.IRQ_RISINGG | P.IRQ_FALLING",
        '"type[Pin]" has no attribute "IRQ_RISINGG"',
    ),
    (
        "node",
        "rbnode/hw/esp32.py",
        "machine.WDT(timeout=timeout_ms)",
        "machine.WDT(timeout_ms=timeout_ms)",
        'Unexpected keyword argument "timeout_ms" for "WDT"',
    ),
    (
        "node",
        "rbnode/hw/esp32.py",
        "self._nvs.get_i32(key)",
        "self._nvs.get_i32(key, default)",
        'Too many arguments for "get_i32" of "NVS"',
    ),
    (
        "node",
        "rbnode/hw/esp32.py",
        "network.WLAN(network.STA_IF)",
        "network.WLAN(network.STA_MODE)",
        'Module has no attribute "STA_MODE"',
    ),
    (
        "node",
        "rbnode/hw/esp32.py",
        "machine.unique_id()",
        "machine.unique_ident()",
        'Module has no attribute "unique_ident"',
    ),
    (
        "scoreboard",
        "scoreboard/main.py",
        "WDT(timeout=5000)",
        "WDT(5000)",
        'Too many positional arguments for "WDT"',
    ),
    # CPython's `time` is not the device's: the stubs' module must be the one checked against.
    (
        "scoreboard",
        "scoreboard/hw/esp32.py",
        "return time.ticks_ms()",
        "return int(time.monotonic() * 1000)",
        'Module has no attribute "monotonic"',
    ),
]


@pytest.mark.parametrize(
    ("set_name", "module", "good", "bad", "message"),
    MISTAKES,
    ids=[f"{m[1]}:{m[3]}" for m in MISTAKES],
)
def test_a_wrong_device_call_fails_the_check(
    typeshed, tmp_path, set_name, module, good, bad, message
):
    src = (FW / module).read_text()
    assert src.count(good) == 1, f"{module} no longer has {good!r}: update this case"
    line = src[: src.index(good)].count("\n") + 1
    # A top-level name of its own: a copy named esp32.py would shadow the `esp32` stub.
    bad_file = tmp_path / "device_module_under_test.py"
    bad_file.write_text(src.replace(good, bad))
    paths, _ = tc.SETS[set_name]

    rc, out = tc.run_mypy([bad_file], paths, typeshed)
    assert rc == 1, out
    errors = [ln for ln in out.splitlines() if ": error: " in ln]
    assert len(errors) == 1, out
    assert f"device_module_under_test.py:{line}: error: {message}" in errors[0], out

    # ...and the unchanged copy passes, so the error is the mistake's alone.
    bad_file.write_text(src)
    rc, out = tc.run_mypy([bad_file], paths, typeshed)
    assert rc == 0, out


def test_missing_stubs_say_run_make_setup(tmp_path, monkeypatch):
    monkeypatch.setattr(tc, "STUB_DISTS", ("micropython-esp32-stubs-not-installed",))
    with pytest.raises(tc.SetupMissing, match="run make setup"):
        tc.build_typeshed(tmp_path)
