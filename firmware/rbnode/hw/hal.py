"""The hardware interface (HAL) the node core uses; nothing else touches machine/esp32.

Interface (stable; documented in docs/firmware-sensing.md §HAL):
  time   TICKS_PERIOD (2**30), ticks_us(), ticks_diff(a, b), ticks_add(a, d), sleep_ms(ms)
  sched  schedule(fn, arg) -> bool: queue fn(arg) in the soft-IRQ FIFO that pin handlers
         use (micropython.schedule); False when the queue is full
  inputs channels(kind) -> int       kind: "beam" (pocket beams), "cue", "rail",
                 "strike" (dedicated strike-sensor inputs, hardware/strike.md; 0 when the
                 pin map has none: the strike sensor may also sit on a rail input)
         pin(kind, ch) -> Pin-like: .value() -> 0/1 (current level)
         set_irq(kind, ch, handler) installs a SOFT handler handler(pin): beams/cue on
                 both edges, rails and strike inputs on the comparator's rising edge;
                 None removes it.
                 Handlers run late and may be dropped (DESIGN §4: scheduled, queue of 8).
         counter(kind, ch) -> hardware edge counter or None: .value() = edges counted
                 (beams/cue: both edges; rails: rising) modulo .modulus. ESP32: PCNT
                 units 0..7 (8 only,
                 given to beams then cue; rails get None on ESP32).
         adc_read(ch, kind="rail") -> 0..4095, the peak-hold amplitude of rail (or
                 strike) input ch (ADC1 only: Wi-Fi blocks ADC2)
         adc_reset(ch, kind="rail") discharge that input's peak hold (no-op without a
                 dump pin)
         has_adc(kind, ch) -> bool: the input has an amplitude pin (every rail does; a
                 strike input may be comparator-only)
         BEAM_BLOCKED: pin level that means "beam interrupted" (1 for the default front end)
  colour colour_sensors() -> int: the colour station's sensors (hardware/colour.md; 0: none)
         colour_read(i, buf) fills buf[0..3] with sensor i's latest R, G, B, C counts;
                 OSError when it does not answer (unplugged, bus stuck). Task code only
         colour_gate() -> 1 while a ball blocks the station's presence gate, else 0
  store  nvs_get(key, default=None) -> int | default; nvs_set(key, int) (committed)
         fs_root() -> writable directory path (littlefs "/" on the device)
         storage() -> the flash file system as rbnode.hw.storage.FileStorage on fs_root()
                 (files, atomic rename): all the over-the-air installer (rbnode.ota)
                 writes goes through it; the simulated one cuts the power at any step
  system reset_cause() -> "power" "hard" "wdt" "deepsleep" "soft" "unknown"
         watchdog(timeout_ms) -> object with .feed()  (cannot be stopped: DESIGN §4)
         mem_free() -> int, unique_id() -> bytes, reset()
  net    wlan() -> network.WLAN-like: active(b), connect(ssid, pw), isconnected(),
         status("rssi"), ifconfig(), disconnect()
         resolve(host, port) -> the address to dial for host (a name or an address);
                 OSError when it does not resolve (ESP32: getaddrinfo, mDNS for .local)
  serial serial() -> the console port for Improv Wi-Fi (rbnode.improv), or None: .listen(b)
         (True: bytes are Improv's, the console's Ctrl-C off), .read() -> bytes (b"" when
         none waits; never blocks), .write(bytes)
  led    set_led(on) -> the status LED (the pin map's `led`) on or off; a board without
         one ignores it. Called from task context only (rbnode.led)
  pinmap_id  slug naming the pin map in use

Pin map (hardware/pinmaps/, loaded at boot from /pinmap.json): `load_pinmap(src)` reads
it with pinmap_core and returns the dict Esp32Hardware(pinmap=...) takes
(pinmap_core.hal_pinmap); `pin_setup(that dict)` is the pure translation into what the
ESP32 layer sets up (GPIO, internal pull, active level, PCNT unit per channel), so it is
tested under CPython and MicroPython without `machine`.
"""

TICKS_PERIOD = 1 << 30
_MASK = TICKS_PERIOD - 1
_HALF = TICKS_PERIOD >> 1

RESET_CAUSES = ("power", "hard", "wdt", "deepsleep", "soft", "unknown")


def ticks_diff(a, b):
    """Signed a - b on the 2**30 ticks circle (same result as time.ticks_diff on ESP32)."""
    return ((a - b + _HALF) & _MASK) - _HALF


def ticks_add(a, d):
    return (a + d) & _MASK


PINMAP_FILE = "pinmap.json"  # installed by `make firmware` / `make flash` (the chosen map)


def load_pinmap(src=None, nvs_ns="railbird"):
    """Device config `pinmap` -> the Esp32Hardware pin map dict (pinmap_core.hal_pinmap).
    src None: the file the build installed (PINMAP_FILE); an id ("esp32-devkitc"): that
    file, which must carry this id (a board flashed with another map is refused); a name
    ending in .json: that file on the board; a dict: a pin map document (schema 1,
    hardware/pinmaps/README.md). Raises pinmap_core.PinmapError or OSError."""
    import pinmap_core
    want = None
    if src is None:
        src = PINMAP_FILE
    elif isinstance(src, str) and not src.endswith(".json"):
        want, src = src, PINMAP_FILE
    if isinstance(src, str):
        pm = pinmap_core.load(src)
    else:
        pm = pinmap_core.validate(src)
    if want is not None and pm["id"] != want:
        raise pinmap_core.PinmapError("pin map id mismatch: config wants %s, %s is %s"
                                      % (want, src, pm["id"]))
    return pinmap_core.hal_pinmap(pm, nvs_ns)


def _pull(pulls, gpio):
    p = pulls.get(gpio)
    if p is None:
        p = pulls.get(str(gpio))  # the dict went through JSON
    return p if p in ("up", "down") else None


def pin_setup(pm):
    """Pure: pin map dict (pinmap_core.hal_pinmap) -> what the ESP32 layer sets up:
    {"id", "nvs_ns", "atten_db", "blocked": level meaning "beam interrupted" (BEAM_BLOCKED),
     "beam": [(gpio, pull, active, pcnt_unit)], "cue": [] or [(gpio, pull, active, unit)],
     "rail": [(edge_gpio, pull, active, adc_gpio, dump_gpio)],
     "strike": [(edge_gpio, pull, active, adc_gpio | None, dump_gpio)],
     "led": (gpio, active) | None,
     "colour": (sda, scl, gate_gpio, gate_pull, sensors) | None}   the colour station
     (hardware/colour.md); its gate is blocked at the beams' level (`blocked`)
    pull: "up"/"down" = enable the chip's internal pull, None = none (an external resistor
    or a push-pull driver); active: 0/1; pcnt_unit: int or None. Raises ValueError when the
    beams and the cue input do not share one active level (the sensing code has one
    BEAM_BLOCKED for both)."""
    pulls = pm.get("pull") or {}
    act = pm.get("active") or {}
    units = pm.get("pcnt") or {}
    beams = pm.get("beams") or []
    ba = act.get("beam")
    if not isinstance(ba, list):
        ba = [1 if ba is None else ba] * len(beams)
    bu = units.get("beam") or [None] * len(beams)
    beam = []
    for i in range(len(beams)):
        beam.append((beams[i], _pull(pulls, beams[i]), ba[i], bu[i]))
    cue = []
    if pm.get("cue") is not None:
        ca = act.get("cue")
        cue.append((pm["cue"], _pull(pulls, pm["cue"]), 1 if ca is None else ca,
                    units.get("cue")))
    levels = [b[2] for b in beam] + [c[2] for c in cue]
    blocked = levels[0] if levels else 1
    for lv in levels:
        if lv != blocked:
            raise ValueError("pin map %s: beams and the cue input must share one active "
                             "level" % pm.get("id"))
    ra = act.get("rail") or []
    rail = []
    i = 0
    for r in pm.get("rails") or []:
        rail.append((r[0], _pull(pulls, r[0]), ra[i] if i < len(ra) else 1, r[1],
                     r[2] if len(r) > 2 else None))
        i += 1
    sa = act.get("strike") or []
    strike = []
    i = 0
    for r in pm.get("strike") or []:
        strike.append((r[0], _pull(pulls, r[0]), sa[i] if i < len(sa) else 1, r[1],
                       r[2] if len(r) > 2 else None))
        i += 1
    led = pm.get("led")
    c = pm.get("colour")
    colour = None
    if c:
        colour = (c["sda"], c["scl"], c["gate"], _pull(pulls, c["gate"]), c["sensors"])
    return {"id": pm.get("id", "custom"), "nvs_ns": pm.get("nvs_ns", "railbird"),
            "atten_db": pm.get("atten_db", 11), "blocked": blocked, "beam": beam,
            "cue": cue, "rail": rail, "strike": strike,
            "led": None if led is None else (led[0], led[1]), "colour": colour}


class Hardware:
    TICKS_PERIOD = TICKS_PERIOD
    BEAM_BLOCKED = 1
    pinmap_id = "none"

    def ticks_us(self):
        raise NotImplementedError

    def ticks_diff(self, a, b):
        raise NotImplementedError

    def ticks_add(self, a, d):
        raise NotImplementedError

    def sleep_ms(self, ms):
        raise NotImplementedError

    def schedule(self, fn, arg):
        raise NotImplementedError

    def channels(self, kind):
        raise NotImplementedError

    def pin(self, kind, ch):
        raise NotImplementedError

    def set_irq(self, kind, ch, handler):
        raise NotImplementedError

    def counter(self, kind, ch):
        return None

    def adc_read(self, ch, kind="rail"):
        raise NotImplementedError

    def adc_reset(self, ch, kind="rail"):
        pass

    def has_adc(self, kind, ch):
        return kind == "rail"

    def colour_sensors(self):
        return 0

    def colour_read(self, i, buf):
        raise OSError("no colour station")

    def colour_gate(self):
        return 0

    def nvs_get(self, key, default=None):
        raise NotImplementedError

    def nvs_set(self, key, value):
        raise NotImplementedError

    def fs_root(self):
        raise NotImplementedError

    def storage(self):
        s = getattr(self, "_storage", None)
        if s is None:
            from rbnode.hw.storage import FileStorage
            s = self._storage = FileStorage(self.fs_root())
        return s

    def reset_cause(self):
        return "unknown"

    def watchdog(self, timeout_ms):
        raise NotImplementedError

    def mem_free(self):
        return 0

    def unique_id(self):
        return b"\x00\x00\x00\x00\x00\x00"

    def reset(self):
        raise NotImplementedError

    def wlan(self):
        raise NotImplementedError

    def serial(self):
        return None

    def resolve(self, host, port):
        import socket
        return socket.getaddrinfo(host, port)[0][-1][0]

    def set_led(self, on):
        pass
