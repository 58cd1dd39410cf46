"""Pin map loader shared by the host and the node firmware.

Written in the MicroPython/CPython common subset (no typing, dataclasses, f-strings or
pathlib): the firmware build copies this file as it is, the host imports it. It checks the
*shape* of a pin map (hardware/pinmaps/README.md) and answers the questions the firmware
asks of it (which GPIO is beam channel 3, does it need the internal pull-up, which PCNT unit
counts it). Whether the pins suit the chip is the host checker's job
(railbird.hardware.check), which has the chip tables; the node trusts a checked map.
"""

import json

SCHEMA = 1
MAX_BEAMS = 6
MAX_RAILS = 6
MAX_STRIKE = 1
MAX_COLOUR_SENSORS = 8  # the TCA9548A multiplexer's channels (hardware/colour.md)
PULLS = ("up", "down", "none")
ACTIVE = ("low", "high")


class PinmapError(ValueError):
    """A pin map that does not have the documented shape; the message names the field."""


def _int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _need(obj, key, where):
    if not isinstance(obj, dict) or key not in obj:
        raise PinmapError("missing field: %s%s" % (where, key))
    return obj[key]


def _pin(v, where):
    if not _int(v) or v < 0 or v > 63:
        raise PinmapError("bad pin: %s: expected a GPIO number, got %r" % (where, v))
    return v


def _choice(obj, key, choices, default, where):
    v = obj.get(key, default)
    if v not in choices:
        raise PinmapError("bad value: %s%s: %r not in %s" % (where, key, v, " ".join(choices)))
    return v


def _input(obj, where, default_pull):
    if not isinstance(obj, dict):
        raise PinmapError("bad type: %s: expected an object" % where)
    _pin(_need(obj, "pin", where + "."), where + ".pin")
    _choice(obj, "pull", PULLS, default_pull, where + ".")
    _choice(obj, "active", ACTIVE, "low", where + ".")


def _channels(items, limit, where):
    if not isinstance(items, list):
        raise PinmapError("bad type: %s: expected a list" % where)
    if len(items) > limit:
        raise PinmapError("too many: %s: %d > %d" % (where, len(items), limit))
    for i, item in enumerate(items):
        ch = _need(item, "ch", "%s[%d]." % (where, i))
        if ch != i:
            raise PinmapError(
                "bad value: %s[%d].ch: channels must be 0, 1, 2 ... in order, got %r"
                % (where, i, ch)
            )


def validate(pm):
    """Check the shape of a pin map dict; return it. Raises PinmapError(reason)."""
    if not isinstance(pm, dict):
        raise PinmapError("bad type: pin map: expected an object")
    if _need(pm, "schema", "") != SCHEMA:
        raise PinmapError("unsupported schema: %r (this loader reads %d)" % (pm["schema"], SCHEMA))
    pid = _need(pm, "id", "")
    if not isinstance(pid, str) or not pid or len(pid) > 32 or pid.lower() != pid or " " in pid:
        raise PinmapError("bad value: id: expected a lowercase slug, got %r" % (pid,))
    if not isinstance(_need(pm, "chip", ""), str):
        raise PinmapError("bad type: chip: expected a string")
    beams = _need(pm, "beams", "")
    _channels(beams, MAX_BEAMS, "beams")
    for i, b in enumerate(beams):
        _input(b, "beams[%d]" % i, "up")
    rails = _need(pm, "rails", "")
    _channels(rails, MAX_RAILS, "rails")
    for i, r in enumerate(rails):
        _input(_need(r, "edge", "rails[%d]." % i), "rails[%d].edge" % i, "none")
        amp = _need(r, "amp", "rails[%d]." % i)
        _pin(_need(amp, "pin", "rails[%d].amp." % i), "rails[%d].amp.pin" % i)
        dump = r.get("dump")
        if dump is not None:
            _pin(_need(dump, "pin", "rails[%d].dump." % i), "rails[%d].dump.pin" % i)
    strike = pm.get("strike", [])
    _channels(strike, MAX_STRIKE, "strike")
    for i, r in enumerate(strike):
        # the strike sensor's own input (hardware/strike.md): a rail-type comparator EDGE,
        # an optional peak-hold AMP (without one the node sends strikes without `amp`)
        _input(_need(r, "edge", "strike[%d]." % i), "strike[%d].edge" % i, "none")
        for part in ("amp", "dump"):
            x = r.get(part)
            if x is not None:
                _pin(_need(x, "pin", "strike[%d].%s." % (i, part)), "strike[%d].%s.pin" % (i, part))
    cue = pm.get("cue")
    if cue is not None:
        _input(cue, "cue", "up")
    colour = pm.get("colour")
    if colour is not None:
        # the colour station (hardware/colour.md): an I2C bus to the sensors' multiplexer
        # and the presence gate, a beam-type input; optional (a table without a station)
        if not isinstance(colour, dict):
            raise PinmapError("bad type: colour: expected an object or null")
        for key in ("sda", "scl", "gate"):
            _pin(_need(colour, key, "colour."), "colour." + key)
        n = _need(colour, "sensors", "colour.")
        if not _int(n) or n < 1 or n > MAX_COLOUR_SENSORS:
            raise PinmapError(
                "bad value: colour.sensors: expected 1..%d (the multiplexer's channels), got %r"
                % (MAX_COLOUR_SENSORS, n)
            )
    sync = pm.get("sync")
    if sync is not None:
        _pin(_need(sync, "pin", "sync."), "sync.pin")
        _choice(sync, "dir", ("in", "out"), "in", "sync.")
        _choice(sync, "pull", PULLS, "none", "sync.")
    led = pm.get("led")
    if led is not None:
        _pin(_need(led, "pin", "led."), "led.pin")
        _choice(led, "active", ACTIVE, "high", "led.")
    for key in ("external_pullups", "external_pulldowns"):
        pins = pm.get(key, [])
        if not isinstance(pins, list):
            raise PinmapError("bad type: %s: expected a list of GPIO numbers" % key)
        for i, p in enumerate(pins):
            _pin(p, "%s[%d]" % (key, i))
    units = pm.get("pcnt", [])
    if not isinstance(units, list):
        raise PinmapError("bad type: pcnt: expected a list")
    for i, u in enumerate(units):
        if not _int(_need(u, "unit", "pcnt[%d]." % i)):
            raise PinmapError("bad type: pcnt[%d].unit: expected an int" % i)
        ins = _need(u, "inputs", "pcnt[%d]." % i)
        if not isinstance(ins, list) or not ins:
            raise PinmapError("bad type: pcnt[%d].inputs: expected a non-empty list" % i)
    return pm


def loads(text):
    """Parse and validate a pin map from JSON text."""
    try:
        pm = json.loads(text)
    except ValueError as e:
        raise PinmapError("bad json: %s" % e)
    return validate(pm)


def load(path):
    """Read and validate the pin map file at `path`."""
    with open(path) as f:
        return loads(f.read())


def functions(pm):
    """Every pin use of a (validated) pin map, in a fixed order, as tuples
    (name, pin, direction, signal, pull): name like 'beam0', 'cue', 'rail2.edge',
    'rail2.amp', 'rail2.dump' (optional peak-hold discharge output), 'strike0.edge',
    'strike0.amp', 'strike0.dump', 'colour.sda', 'colour.scl', 'colour.gate', 'sync', 'led';
    direction 'in', 'out' or 'io' (the colour station's I2C lines, open drain, pulled up
    on the multiplexer board); signal 'digital' or 'analog'; pull 'up', 'down' or 'none'
    (what the input needs, not who provides it)."""
    out = []
    for b in pm["beams"]:
        out.append(("beam%d" % b["ch"], b["pin"], "in", "digital", b.get("pull", "up")))
    cue = pm.get("cue")
    if cue is not None:
        out.append(("cue", cue["pin"], "in", "digital", cue.get("pull", "up")))
    for r in pm["rails"]:
        e = r["edge"]
        out.append(("rail%d.edge" % r["ch"], e["pin"], "in", "digital", e.get("pull", "none")))
        out.append(("rail%d.amp" % r["ch"], r["amp"]["pin"], "in", "analog", "none"))
        if r.get("dump") is not None:
            out.append(("rail%d.dump" % r["ch"], r["dump"]["pin"], "out", "digital", "none"))
    for r in pm.get("strike", []):
        e = r["edge"]
        n = "strike%d" % r["ch"]
        out.append((n + ".edge", e["pin"], "in", "digital", e.get("pull", "none")))
        if r.get("amp") is not None:
            out.append((n + ".amp", r["amp"]["pin"], "in", "analog", "none"))
        if r.get("dump") is not None:
            out.append((n + ".dump", r["dump"]["pin"], "out", "digital", "none"))
    colour = pm.get("colour")
    if colour is not None:
        out.append(("colour.sda", colour["sda"], "io", "digital", "none"))
        out.append(("colour.scl", colour["scl"], "io", "digital", "none"))
        # the gate's receiver is open collector like a beam's: it needs a pull-up
        out.append(("colour.gate", colour["gate"], "in", "digital", "up"))
    sync = pm.get("sync")
    if sync is not None:
        out.append(
            ("sync", sync["pin"], sync.get("dir", "in"), "digital", sync.get("pull", "none"))
        )
    led = pm.get("led")
    if led is not None:
        out.append(("led", led["pin"], "out", "digital", "none"))
    return out


def pull_source(pm, pin, pull):
    """Who provides the pull an input needs: 'external' (a resistor the pin map declares),
    'internal' (the firmware enables Pin.PULL_UP / PULL_DOWN) or 'none'."""
    if pull == "none":
        return "none"
    key = "external_pullups" if pull == "up" else "external_pulldowns"
    if pin in pm.get(key, []):
        return "external"
    return "internal"


def beam_pin(pm, ch):
    return pm["beams"][ch]["pin"]


def rail_pins(pm, ch):
    """(edge GPIO, amplitude GPIO) of rail channel `ch`."""
    r = pm["rails"][ch]
    return r["edge"]["pin"], r["amp"]["pin"]


def cue_pin(pm):
    cue = pm.get("cue")
    return None if cue is None else cue["pin"]


def channels(pm):
    """What a config may name: {'beams': n, 'rails': n, 'cue': n, 'strike': n} (cue 0 or
    1, strike the dedicated strike inputs, 0 or 1)."""
    return {
        "beams": len(pm["beams"]),
        "rails": len(pm["rails"]),
        "cue": 0 if pm.get("cue") is None else 1,
        "strike": len(pm.get("strike", [])),
    }


def strike_channel(pm):
    """The config's `strike.ch` for the dedicated strike input: rail inputs come first, so
    it is channel len(rails) (6 on the shipped maps); None without one (the strike piezo
    may then take a rail input)."""
    return len(pm["rails"]) if pm.get("strike") else None


def cue_channel(pm):
    """The config's `cue_ch` for the dedicated cue input: beams come first, so the cue
    detector is channel len(beams) (6 on the shipped maps); None without one."""
    return None if pm.get("cue") is None else len(pm["beams"])


def active_level(pm, name):
    """Pin level (0/1) meaning 'active' (beam blocked, cue present, comparator tripped,
    LED on) for input/output `name` ('beam0', 'cue', 'rail0.edge', 'led')."""
    if name == "cue":
        obj, default = pm.get("cue"), "high"
    elif name == "led":
        obj, default = pm.get("led"), "high"
    elif name.startswith("beam"):
        obj, default = pm["beams"][int(name[4:])], "high"
    elif name.startswith("rail") and name.endswith(".edge"):
        obj, default = pm["rails"][int(name[4:-5])]["edge"], "high"
    elif name.startswith("strike") and name.endswith(".edge"):
        obj, default = pm["strike"][int(name[6:-5])]["edge"], "high"
    else:
        raise PinmapError("bad value: %r has no active level" % (name,))
    return 1 if (obj or {}).get("active", default) == "high" else 0


def hal_pinmap(pm, nvs_ns="railbird"):
    """The dict rbnode.hw.esp32.Esp32Hardware(pinmap=...) takes (rbnode.hw.hal.pin_setup
    turns it into pin set-up arguments):
    {"id", "nvs_ns",
     "beams": [gpio], "cue": gpio|None, "rails": [[edge, adc, dump|None]],
     "strike": [[edge, adc|None, dump|None]],
     "pull": {gpio: "up"|"down"}   inputs that need the INTERNAL pull (external resistors
                                   and "none" are left off),
     "active": {"beam": [0|1 per beam], "cue": 0|1|None, "rail": [0|1 per rail edge],
                "strike": [0|1 per strike edge]},
     "pcnt": {"beam": [unit|None per beam], "cue": unit|None}   only units counting ONE
                                   input (a paired unit cannot say which beam lost an edge),
     "atten_db": ADC attenuation, "led": [gpio, 0|1] | None,
     "colour": {"sda", "scl", "gate", "sensors"} | None}   the colour station
                                   (hardware/colour.md); its gate's pull is in "pull"."""
    pull = {}
    for _name, pin, direction, _signal, p in functions(pm):
        if direction == "in" and p != "none" and pull_source(pm, pin, p) == "internal":
            pull[pin] = p
    rails = []
    for r in pm["rails"]:
        d = r.get("dump")
        rails.append([r["edge"]["pin"], r["amp"]["pin"], None if d is None else d["pin"]])
    strike = []
    for r in pm.get("strike", []):
        a = r.get("amp")
        d = r.get("dump")
        strike.append(
            [r["edge"]["pin"], None if a is None else a["pin"], None if d is None else d["pin"]]
        )
    has_cue = pm.get("cue") is not None
    single = {}
    for u in pm.get("pcnt", []):
        if len(u["inputs"]) == 1:
            single[u["inputs"][0]] = u["unit"]
    led = pm.get("led")
    return {
        "id": pm["id"],
        "nvs_ns": nvs_ns,
        "beams": [b["pin"] for b in pm["beams"]],
        "cue": cue_pin(pm),
        "rails": rails,
        "strike": strike,
        "pull": pull,
        "active": {
            "beam": [active_level(pm, "beam%d" % i) for i in range(len(pm["beams"]))],
            "cue": active_level(pm, "cue") if has_cue else None,
            "rail": [active_level(pm, "rail%d.edge" % i) for i in range(len(pm["rails"]))],
            "strike": [active_level(pm, "strike%d.edge" % i) for i in range(len(strike))],
        },
        "pcnt": {
            "beam": [single.get("beam%d" % i) for i in range(len(pm["beams"]))],
            "cue": single.get("cue") if has_cue else None,
        },
        "atten_db": (pm.get("adc") or {}).get("atten_db", 11),
        "led": None if led is None else [led["pin"], active_level(pm, "led")],
        "colour": _colour(pm.get("colour")),
    }


def _colour(c):
    if c is None:
        return None
    return {"sda": c["sda"], "scl": c["scl"], "gate": c["gate"], "sensors": c["sensors"]}


def pcnt_for(pm, name):
    """(unit, channel) of the pulse counter that counts input `name` ('beam3', 'cue'),
    or None. Two inputs in one unit share its count (unit channel 0 and 1)."""
    for u in pm.get("pcnt", []):
        ins = u["inputs"]
        for i in range(len(ins)):
            if ins[i] == name:
                return u["unit"], i
    return None
