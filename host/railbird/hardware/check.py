"""The pin map checker behind `railbird hw check`.

Every rule reads the chip tables in `chips.json` (which GPIOs exist, are input-only, lack
internal pulls, belong to ADC1/ADC2, strap the boot, carry flash/PSRAM/USB/console, how many
PCNT units there are), so a new chip or module is data, not code. Each finding names the GPIO,
the function using it and the reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

from . import pinmap_core

ERROR = "error"
WARNING = "warning"

SENSOR_PREFIXES = ("beam", "cue", "rail", "strike", "colour.gate", "sync")
# fewer colour sensors than this cannot tell every stripe from its solid (hardware/colour.md
# "Simulated separation": the third view closes the gap)
COLOUR_VIEWS = 3


@dataclass(frozen=True)
class Finding:
    level: str  # "error" or "warning"
    rule: str  # stable rule code, e.g. "duplicate-pin", "adc2"
    pin: int | None  # the GPIO concerned (None for map-wide findings)
    function: str | None
    message: str

    def __str__(self) -> str:
        return f"{self.level}: {self.message} [{self.rule}]"


def load_chips() -> dict:
    text = resources.files("railbird.hardware").joinpath("chips.json").read_text()
    chips = json.loads(text)
    chips.pop("_doc", None)
    return chips


def _pins(table) -> set[int]:
    if isinstance(table, dict):
        return {int(k) for k in table}
    return set(table)


def _chip_view(chips: dict, chip: str, module: str | None, findings: list[Finding]) -> dict | None:
    spec = chips.get(chip)
    if spec is None:
        findings.append(
            Finding(
                ERROR,
                "unknown-chip",
                None,
                None,
                f"chip {chip!r} is not one of: {', '.join(sorted(chips))}",
            )
        )
        return None
    view = dict(spec)
    view["reserved"] = {int(k): v for k, v in spec.get("reserved", {}).items()}
    view["not_exposed"] = set()
    view["io_1v8"] = set()
    if module is not None:
        mod = spec.get("modules", {}).get(module)
        if mod is None:
            findings.append(
                Finding(
                    WARNING,
                    "unknown-module",
                    None,
                    None,
                    f"module {module!r} is not in the {chip} tables "
                    f"(known: {', '.join(sorted(spec.get('modules', {})))}); "
                    "module-specific reserved pins (PSRAM) were not checked",
                )
            )
        else:
            view["reserved"].update({int(k): v for k, v in mod.get("reserved", {}).items()})
            view["not_exposed"] = set(mod.get("not_exposed", []))
            view["io_1v8"] = set(mod.get("io_1v8", []))
    return view


def _is_sensor(name: str) -> bool:
    return name.startswith(SENSOR_PREFIXES)


def check(pm: dict, chips: dict | None = None) -> list[Finding]:
    """All findings for pin map `pm` (a dict). Structural problems come back as a single
    `schema` error, since the other rules need a well-formed map."""
    chips = chips if chips is not None else load_chips()
    findings: list[Finding] = []
    try:
        pinmap_core.validate(pm)
    except pinmap_core.PinmapError as e:
        return [Finding(ERROR, "schema", None, None, f"pin map shape: {e}")]

    chip = _chip_view(chips, pm["chip"], pm.get("module"), findings)
    if chip is None:
        return findings

    def err(rule, pin, fn, msg):
        findings.append(Finding(ERROR, rule, pin, fn, msg))

    def warn(rule, pin, fn, msg):
        findings.append(Finding(WARNING, rule, pin, fn, msg))

    gpios = set(chip["gpios"])
    input_only = set(chip["input_only"])
    no_pull = set(chip["no_internal_pullup"])
    adc1, adc2 = set(chip["adc1"]), set(chip["adc2"])
    strapping = {int(k): v for k, v in chip["strapping"].items()}
    flash = {int(k): v for k, v in chip["flash"].items()}
    glitch = {int(k): v for k, v in chip.get("irq_glitch", {}).items()}
    ext_up = set(pm.get("external_pullups", []))
    ext_down = set(pm.get("external_pulldowns", []))

    funcs = pinmap_core.functions(pm)
    used: dict[int, list[str]] = {}
    for name, pin, _d, _s, _p in funcs:
        used.setdefault(pin, []).append(name)

    # Two functions on one pin.
    for pin, names in sorted(used.items()):
        if len(names) > 1:
            err(
                "duplicate-pin",
                pin,
                names[0],
                f"GPIO {pin}: used by {' and '.join(names)}; one pin carries one function",
            )

    for name, pin, direction, signal, pull in funcs:
        where = f"GPIO {pin} ({name})"
        if pin not in gpios:
            err("no-such-pin", pin, name, f"{where}: the {pm['chip']} has no GPIO {pin}")
            continue
        if pin in chip["not_exposed"]:
            err(
                "not-exposed",
                pin,
                name,
                f"{where}: GPIO {pin} is not brought out on a {pm.get('module')} module",
            )
        if pin in flash:
            err(
                "flash-pin",
                pin,
                name,
                f"{where}: GPIO {pin} is wired to the module's flash/PSRAM ({flash[pin]}); "
                "using it crashes the chip",
            )
        if pin in chip["reserved"]:
            err(
                "reserved-pin",
                pin,
                name,
                f"{where}: GPIO {pin} is reserved: {chip['reserved'][pin]}",
            )
        if pin in chip["io_1v8"]:
            err(
                "io-1v8",
                pin,
                name,
                f"{where}: GPIO {pin} runs at 1.8 V on a {pm.get('module')} module; "
                "3.3 V sensor signals would overdrive it",
            )
        if pin in strapping:
            if _is_sensor(name) and direction == "in":
                err(
                    "strapping-pin",
                    pin,
                    name,
                    f"{where}: GPIO {pin} is a strapping pin ({strapping[pin]}); a sensor can hold "
                    "it at the wrong level at reset",
                )
            else:
                warn(
                    "strapping-pin",
                    pin,
                    name,
                    f"{where}: GPIO {pin} is a strapping pin ({strapping[pin]}); the load on it "
                    "must leave it at its boot level",
                )
        if direction in ("out", "io") and pin in input_only:
            err(
                "input-only",
                pin,
                name,
                f"{where}: output on GPIO {pin}, which is input-only on the {pm['chip']}"
                + (" (an I2C line is driven low by the node)" if direction == "io" else ""),
            )
        if signal == "analog":
            if pin in adc2:
                err(
                    "adc2",
                    pin,
                    name,
                    f"{where}: analog input on GPIO {pin}, an ADC2 pin; ADC2 cannot be read "
                    "while Wi-Fi is on: use an ADC1 pin (" + _ranges(adc1) + ")",
                )
            elif pin not in adc1:
                err(
                    "not-adc",
                    pin,
                    name,
                    f"{where}: analog input on GPIO {pin}, which has no ADC; use an ADC1 pin ("
                    + _ranges(adc1)
                    + ")",
                )
        if signal == "digital" and direction == "in" and pin in glitch:
            err("irq-glitch", pin, name, f"{where}: edge input on GPIO {pin}: {glitch[pin]}")
        if direction == "in" and pull in ("up", "down"):
            external = ext_up if pull == "up" else ext_down
            if pin not in external and pin in no_pull:
                err(
                    "no-pull",
                    pin,
                    name,
                    f"{where}: needs a pull-{pull}, GPIO {pin} has no internal pull-{pull} and "
                    f"no external pull-{pull} is declared (add {pin} to external_pull{pull}s and "
                    "fit the resistor)",
                )
            elif pin not in external and name.startswith(("beam", "cue")):
                warn(
                    "weak-pull",
                    pin,
                    name,
                    f"{where}: relies on the internal pull-{pull} (about 45 kOhm) on a long "
                    "cable run; an external 4.7 kOhm is more robust",
                )

    for key, label in (("external_pullups", "pull-up"), ("external_pulldowns", "pull-down")):
        for pin in pm.get(key, []):
            if pin not in used:
                warn(
                    "unused-pull",
                    pin,
                    None,
                    f"GPIO {pin}: external {label} declared on an unused pin",
                )
            elif pin in ext_up and pin in ext_down:
                err(
                    "pull-conflict",
                    pin,
                    None,
                    f"GPIO {pin}: both an external pull-up and pull-down",
                )

    colour = pm.get("colour")
    if colour is not None and colour["sensors"] < COLOUR_VIEWS:
        warn(
            "colour-views",
            None,
            "colour",
            f"colour station with {colour['sensors']} sensor(s): without {COLOUR_VIEWS} views "
            "some stripes show too little white to be told from their solids "
            "(hardware/colour.md)",
        )
    findings += _check_pcnt(pm, chip, {f[0]: f for f in funcs})
    return findings


def _check_pcnt(pm: dict, chip: dict, by_name: dict) -> list[Finding]:
    out = []
    units = pm.get("pcnt", [])
    n_units, per_unit = chip["pcnt_units"], chip["pcnt_channels_per_unit"]
    if len(units) > n_units:
        out.append(
            Finding(
                ERROR,
                "pcnt-count",
                None,
                None,
                f"{len(units)} pulse counter units used, the {pm['chip']} has "
                f"{n_units}; share a unit between two inputs (up to {per_unit} each)",
            )
        )
    seen_units, seen_inputs = set(), {}
    for u in units:
        unit = u["unit"]
        if not 0 <= unit < n_units:
            out.append(
                Finding(
                    ERROR,
                    "pcnt-count",
                    None,
                    None,
                    f"pulse counter unit {unit} does not exist on the {pm['chip']} "
                    f"(units 0-{n_units - 1})",
                )
            )
        if unit in seen_units:
            out.append(
                Finding(
                    ERROR, "pcnt-count", None, None, f"pulse counter unit {unit} is listed twice"
                )
            )
        seen_units.add(unit)
        if len(u["inputs"]) > per_unit:
            out.append(
                Finding(
                    ERROR,
                    "pcnt-count",
                    None,
                    None,
                    f"pulse counter unit {unit} counts {len(u['inputs'])} inputs, a unit "
                    f"has {per_unit} channels",
                )
            )
        for name in u["inputs"]:
            f = by_name.get(name)
            if f is None:
                out.append(
                    Finding(
                        ERROR,
                        "pcnt-input",
                        None,
                        name,
                        f"pulse counter unit {unit}: no input named {name!r} in this map",
                    )
                )
            elif f[2] != "in" or f[3] != "digital":
                out.append(
                    Finding(
                        ERROR,
                        "pcnt-input",
                        f[1],
                        name,
                        f"pulse counter unit {unit}: {name} (GPIO {f[1]}) is not a digital input",
                    )
                )
            if name in seen_inputs:
                out.append(
                    Finding(
                        ERROR,
                        "pcnt-input",
                        None,
                        name,
                        f"{name} is counted by units {seen_inputs[name]} and {unit}",
                    )
                )
            seen_inputs[name] = unit
    for name, f in by_name.items():
        if name.startswith("beam") and name not in seen_inputs:
            out.append(
                Finding(
                    WARNING,
                    "pcnt-missing",
                    f[1],
                    name,
                    f"GPIO {f[1]} ({name}): no pulse counter; lost edges on this beam go unnoticed",
                )
            )
    return out


def _ranges(pins) -> str:
    pins = sorted(pins)
    parts, start, prev = [], None, None
    for p in pins:
        if start is None:
            start = prev = p
        elif p == prev + 1:
            prev = p
        else:
            parts.append(f"{start}-{prev}" if prev > start else f"{start}")
            start = prev = p
    if start is not None:
        parts.append(f"{start}-{prev}" if prev > start else f"{start}")
    return "GPIO " + ", ".join(parts)


def errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.level == ERROR]
