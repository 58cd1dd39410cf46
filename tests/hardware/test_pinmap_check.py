"""`railbird hw check`: every rule has a bad pin map that trips it, the shipped maps pass."""

from __future__ import annotations

import copy
import json

import pytest

from railbird.cli import main
from railbird.hardware import check, pinmap_core, shipped_pinmaps


def shipped(name: str) -> dict:
    for p in shipped_pinmaps():
        if p.stem == name:
            return json.loads(p.read_text())
    raise LookupError(name)


@pytest.fixture
def esp32():
    return copy.deepcopy(shipped("esp32-devkitc"))


@pytest.fixture
def s3():
    return copy.deepcopy(shipped("esp32-s3-devkitc"))


def rules(findings, level=check.ERROR):
    return {f.rule for f in findings if f.level == level}


def only_error(pm, rule, pin):
    """Exactly the one error rule fires, naming the pin."""
    errs = check.errors(check.check(pm))
    assert errs, "expected an error"
    assert {f.rule for f in errs} == {rule}, [str(f) for f in errs]
    assert any(f.pin == pin and f"GPIO {pin}" in f.message for f in errs), [str(f) for f in errs]
    return errs


# -- the shipped maps ---------------------------------------------------------------------


def test_two_pin_maps_are_shipped():
    assert {p.stem for p in shipped_pinmaps()} >= {"esp32-devkitc", "esp32-s3-devkitc"}


@pytest.mark.parametrize("path", shipped_pinmaps(), ids=lambda p: p.stem)
def test_shipped_maps_pass(path):
    pm = json.loads(path.read_text())
    assert pm["id"] == path.stem
    assert check.errors(check.check(pm)) == []


@pytest.mark.parametrize("path", shipped_pinmaps(), ids=lambda p: p.stem)
def test_shipped_maps_have_full_sensor_set(path):
    pm = pinmap_core.load(str(path))
    ch = pinmap_core.channels(pm)
    assert ch == {"beams": 6, "rails": 6, "cue": 1, "strike": ch["strike"]}
    # the S3 map has a dedicated strike input (config strike.ch 6); the DevKitC has no pin
    assert ch["strike"] == (1 if pm["id"] == "esp32-s3-devkitc" else 0)
    assert pinmap_core.strike_channel(pm) == (6 if ch["strike"] else None)
    assert pm.get("led") is not None
    # every beam is cross-checked by a pulse counter
    assert all(pinmap_core.pcnt_for(pm, f"beam{ch}") for ch in range(6))


def test_cli_check_passes_on_shipped_maps(capsys):
    assert main(["hw", "check"]) == 0
    out = capsys.readouterr().out
    assert "esp32-devkitc.json: ok" in out and "esp32-s3-devkitc.json: ok" in out


# -- one bad map per rule -----------------------------------------------------------------


def test_two_functions_on_one_pin(esp32):
    esp32["cue"]["pin"] = 16  # beam0's pin
    errs = only_error(esp32, "duplicate-pin", 16)
    assert "beam0 and cue" in errs[0].message


def test_output_on_input_only_pin(esp32):
    esp32["led"]["pin"] = 37
    esp32["module"] = "ESP32-WROOM-32-bare-chip"  # unknown module: 37 not excluded as unexposed
    errs = only_error(esp32, "input-only", 37)
    assert "input-only" in errs[0].message


def test_pull_up_needed_on_pin_without_one(esp32):
    # Move beam 0 to GPIO 34 (input-only, no internal pull-up) and forget the resistor.
    esp32["rails"][2]["amp"]["pin"] = 37
    esp32["module"] = "custom"
    esp32["beams"][0]["pin"] = 34
    errs = only_error(esp32, "no-pull", 34)
    assert "needs a pull-up" in errs[0].message and "external" in errs[0].message


def test_pull_up_satisfied_by_external_resistor(esp32):
    esp32["rails"][2]["amp"]["pin"] = 37
    esp32["module"] = "custom"
    esp32["beams"][0]["pin"] = 34
    esp32["external_pullups"].append(34)
    assert check.errors(check.check(esp32)) == []


def test_internal_pull_up_is_only_a_warning(esp32):
    esp32["external_pullups"].remove(17)
    findings = check.check(esp32)
    assert check.errors(findings) == []
    assert any(f.rule == "weak-pull" and f.pin == 17 for f in findings)


def test_analog_on_adc2(esp32):
    # Swap rail 3's edge (GPIO 25, an ADC2 pin) with rail 4's amplitude (GPIO 32, ADC1).
    esp32["rails"][3]["edge"]["pin"] = 32
    esp32["rails"][4]["amp"]["pin"] = 25
    errs = only_error(esp32, "adc2", 25)
    assert "ADC2" in errs[0].message and "Wi-Fi" in errs[0].message
    assert "rail4.amp" in errs[0].message


def test_analog_on_pin_without_adc(s3):
    s3["rails"][0]["amp"]["pin"] = 38
    errs = only_error(s3, "not-adc", 38)
    assert "no ADC" in errs[0].message


def test_analog_on_adc2_s3(s3):
    s3["rails"][0]["amp"]["pin"] = 18  # ADC2 on the S3 (and rail0.edge's pin)
    s3["rails"][0]["edge"]["pin"] = 1  # swap: edge to GPIO 1, amp to 18
    errs = only_error(s3, "adc2", 18)
    assert "ADC2" in errs[0].message


def test_strike_input_follows_the_rail_rules(s3):
    s3["strike"][0]["amp"]["pin"] = 38  # no ADC
    errs = only_error(s3, "not-adc", 38)
    assert "strike0.amp" in errs[0].message
    s3["strike"][0]["amp"]["pin"] = 8
    s3["strike"][0]["edge"]["pin"] = 46  # a strapping pin for the comparator edge
    errs = only_error(s3, "strapping-pin", 46)
    assert "strike0.edge" in errs[0].message


def test_strike_input_shape_and_a_comparator_only_input(s3):
    del s3["strike"][0]["amp"]  # comparator only: no analog pin needed
    assert check.errors(check.check(s3)) == []
    assert pinmap_core.hal_pinmap(s3)["strike"] == [[9, None, None]]
    s3["strike"].append({"ch": 1, "edge": {"pin": 8}})
    with pytest.raises(pinmap_core.PinmapError, match="too many: strike"):
        pinmap_core.validate(s3)


@pytest.mark.parametrize("pin", [0, 5, 12, 15])
def test_strapping_pin_for_a_sensor(esp32, pin):
    esp32["beams"][3]["pin"] = pin
    esp32["external_pullups"] = [p if p != 19 else pin for p in esp32["external_pullups"]]
    errs = only_error(esp32, "strapping-pin", pin)
    assert "strapping" in errs[0].message and "beam3" in errs[0].message


def test_strapping_pin_for_s3_sensor(s3):
    s3["sync"]["pin"] = 46
    s3["external_pulldowns"] = [46]
    only_error(s3, "strapping-pin", 46)


def test_strapping_pin_for_an_output_is_a_warning(esp32):
    findings = check.check(esp32)  # the shipped LED on GPIO 2
    assert check.errors(findings) == []
    assert any(
        f.rule == "strapping-pin" and f.pin == 2 and f.level == check.WARNING for f in findings
    )


@pytest.mark.parametrize("pin", [6, 7, 8, 9, 10, 11])
def test_flash_pin_for_a_sensor(esp32, pin):
    esp32["rails"][1]["edge"]["pin"] = pin
    errs = only_error(esp32, "flash-pin", pin)
    assert "flash" in errs[0].message


def test_flash_pin_s3(s3):
    s3["rails"][1]["edge"]["pin"] = 30
    only_error(s3, "flash-pin", 30)


def test_octal_psram_pins_on_s3_module(s3):
    s3["rails"][1]["edge"]["pin"] = 35
    errs = only_error(s3, "reserved-pin", 35)
    assert "PSRAM" in errs[0].message
    s3["module"] = "ESP32-S3-WROOM-1-N8"  # no octal PSRAM: 35 is fine
    assert check.errors(check.check(s3)) == []


def test_usb_pins_on_s3(s3):
    s3["rails"][1]["edge"]["pin"] = 19
    errs = only_error(s3, "reserved-pin", 19)
    assert "USB" in errs[0].message


def test_console_uart_on_esp32(esp32):
    esp32["rails"][1]["edge"]["pin"] = 1
    only_error(esp32, "reserved-pin", 1)


def test_wrover_psram_pins(esp32):
    esp32["module"] = "ESP32-WROVER-E"
    errs = check.errors(check.check(esp32))
    assert {f.pin for f in errs} == {16, 17} and {f.rule for f in errs} == {"reserved-pin"}


def test_irq_glitch_pins_for_edges(esp32):
    esp32["rails"][0]["edge"]["pin"] = 36
    esp32["rails"][0]["amp"]["pin"] = 37
    esp32["module"] = "custom"
    only_error(esp32, "irq-glitch", 36)


def test_no_such_gpio(esp32):
    esp32["rails"][1]["edge"]["pin"] = 20
    only_error(esp32, "no-such-pin", 20)


def test_too_many_pulse_counters_s3(s3):
    s3["pcnt"] = [{"unit": i, "inputs": [f"beam{i}"]} for i in range(6)] + [
        {"unit": 6, "inputs": ["cue"]}
    ]
    errs = check.errors(check.check(s3))
    assert rules(check.check(s3)) == {"pcnt-count"}
    assert any("7 pulse counter units used" in f.message and "has 4" in f.message for f in errs)


def test_too_many_pulse_counters_esp32(esp32):
    esp32["pcnt"] += [{"unit": 7, "inputs": ["rail0.edge"]}, {"unit": 8, "inputs": ["rail1.edge"]}]
    errs = check.errors(check.check(esp32))
    assert rules(check.check(esp32)) == {"pcnt-count"}
    assert any("9 pulse counter units used" in f.message for f in errs)


def test_pcnt_unit_with_three_inputs(s3):
    s3["pcnt"][0]["inputs"].append("cue")
    s3["pcnt"].pop()  # cue no longer in unit 3
    errs = check.errors(check.check(s3))
    assert {f.rule for f in errs} == {"pcnt-count"}
    assert "3 inputs" in errs[0].message


def test_pcnt_on_unknown_or_analog_input(esp32):
    esp32["pcnt"][6]["inputs"] = ["rail0.amp"]
    errs = check.errors(check.check(esp32))
    assert {f.rule for f in errs} == {"pcnt-input"} and errs[0].pin == 36
    esp32["pcnt"][6]["inputs"] = ["beam9"]
    assert {f.rule for f in check.errors(check.check(esp32))} == {"pcnt-input"}


def test_unknown_chip_and_bad_shape(esp32):
    esp32["chip"] = "esp8266"
    assert rules(check.check(esp32)) == {"unknown-chip"}
    del esp32["beams"]
    errs = check.check(esp32)
    assert rules(errs) == {"schema"} and "beams" in errs[0].message


def test_channels_must_be_in_order(esp32):
    esp32["beams"][1]["ch"] = 4
    errs = check.check(esp32)
    assert rules(errs) == {"schema"} and "beams[1].ch" in errs[0].message


# -- the command line ---------------------------------------------------------------------


def test_cli_check_fails_with_pin_and_reason(tmp_path, esp32, capsys):
    esp32["cue"]["pin"] = 16
    esp32["rails"][0]["amp"]["pin"] = 25
    esp32["rails"][3]["edge"]["pin"] = 12
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(esp32))
    assert main(["hw", "check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "GPIO 16: used by beam0 and cue" in err
    assert "GPIO 25 (rail0.amp): analog input on GPIO 25, an ADC2 pin" in err
    assert "GPIO 12 (rail3.edge)" in err and "strapping" in err
    # the shipped map alongside still passes, but the run fails
    assert main(["hw", "check", "esp32-devkitc", str(bad)]) == 1


def test_cli_check_json_and_unreadable(tmp_path, capsys):
    assert main(["hw", "check", "--json", "esp32-s3-devkitc"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report[0]["ok"] is True
    (tmp_path / "x.json").write_text("{not json")
    assert main(["hw", "check", str(tmp_path / "x.json")]) == 1
    assert main(["hw", "check", "no-such-map"]) == 1


def test_cli_strict_fails_on_warnings(tmp_path):
    # the colour station's I2C lines on strapping GPIO 3 and 0 (held HIGH by their pull-ups)
    assert main(["hw", "check", "esp32-s3-devkitc", "--strict"]) == 1
    s3 = shipped("esp32-s3-devkitc")
    del s3["colour"]
    s3["external_pullups"].remove(48)
    (tmp_path / "s3.json").write_text(json.dumps(s3))
    assert main(["hw", "check", str(tmp_path / "s3.json"), "--strict"]) == 0
    assert main(["hw", "check", "esp32-devkitc", "--strict"]) == 1  # LED on strapping GPIO 2


# -- the colour station (hardware/colour.md "Wiring") -------------------------------------


def test_s3_map_has_a_colour_station_the_devkitc_none(s3, esp32):
    assert s3["colour"] == {"sda": 3, "scl": 0, "gate": 48, "sensors": 3}
    assert "colour" not in esp32  # no pin left: a table without a station has no entry
    names = {f[0] for f in pinmap_core.functions(s3)}
    assert {"colour.sda", "colour.scl", "colour.gate"} <= names
    # its I2C lines sit on strapping pins: warnings that say why, not errors
    warned = {
        f.pin for f in check.check(s3) if f.rule == "strapping-pin" and f.level == check.WARNING
    }
    assert warned == {0, 3}
    hal = pinmap_core.hal_pinmap(s3)
    assert hal["colour"] == s3["colour"] and 48 not in hal["pull"]  # external pull-up
    assert pinmap_core.hal_pinmap(esp32)["colour"] is None


@pytest.mark.parametrize(
    ("part", "other"),
    [("gate", ("beams", 0)), ("sda", ("rails", 2)), ("scl", ("strike", 0))],
)
def test_colour_pin_clashing_with_a_sensor(s3, part, other):
    key, i = other
    taken = s3[key][i]["pin"] if key == "beams" else s3[key][i]["edge"]["pin"]
    s3["colour"][part] = taken
    errs = only_error(s3, "duplicate-pin", taken)
    assert f"colour.{part}" in errs[0].message


def test_colour_pin_clashing_with_the_cue_input(s3):
    s3["colour"]["gate"] = s3["cue"]["pin"]
    errs = only_error(s3, "duplicate-pin", s3["cue"]["pin"])
    assert "cue and colour.gate" in errs[0].message


def test_colour_gate_on_a_strapping_pin_is_an_error(s3):
    s3["colour"]["gate"], s3["colour"]["sda"] = 3, 48
    s3["external_pullups"] = [p for p in s3["external_pullups"] if p != 48] + [3]
    errs = only_error(s3, "strapping-pin", 3)
    assert "colour.gate" in errs[0].message


def test_colour_pins_the_chip_lacks_or_reserves(s3, esp32):
    s3["colour"]["sda"] = 22  # the S3 has no GPIO 22-25
    only_error(s3, "no-such-pin", 22)
    s3["colour"]["sda"] = 19
    only_error(s3, "reserved-pin", 19)  # native USB
    esp32["rails"] = esp32["rails"][:2]  # frees GPIO 14, 25-27 and 32-35
    esp32["colour"] = {"sda": 34, "scl": 14, "gate": 25, "sensors": 3}
    errs = only_error(esp32, "input-only", 34)  # an I2C line is driven low
    assert "I2C" in errs[0].message


@pytest.mark.parametrize("n", [0, 9, -1, True, "3"])
def test_colour_sensor_count_out_of_range(s3, n):
    s3["colour"]["sensors"] = n
    (f,) = check.check(s3)
    assert f.rule == "schema" and "colour.sensors" in f.message and "1..8" in f.message


def test_colour_entry_missing_a_pin(s3):
    del s3["colour"]["gate"]
    (f,) = check.check(s3)
    assert f.rule == "schema" and "colour.gate" in f.message


def test_fewer_than_three_colour_sensors_warns(s3):
    s3["colour"]["sensors"] = 2
    findings = check.check(s3)
    assert check.errors(findings) == []
    assert any(f.rule == "colour-views" and f.level == check.WARNING for f in findings)


def test_hw_help(capsys):
    with pytest.raises(SystemExit) as e:
        main(["hw", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for action in ("check", "wiring", "list", "show"):
        assert action in out
