"""Real ESP32 hardware layer (device only: imports machine, esp32, network).

Interface: rbnode.hw.hal.Hardware. Esp32Hardware(pinmap=None): pinmap is the dict
pinmap_core.hal_pinmap() makes from a pin map file of hardware/pinmaps/ (None: load
/pinmap.json, the map `make firmware --pinmap ID` installed; see hal.load_pinmap). There is
no built-in pin map: the shipped JSON files are the only source of GPIO numbers.
hal.pin_setup() (pure, tested on both shipped maps) says what to set up:
- inputs get the chip's internal pull only where the map asks for a pull and declares no
  external resistor (external_pullups/external_pulldowns); otherwise no pull;
- BEAM_BLOCKED = the beams' (and cue input's) `active` level; a rail comparator's IRQ fires
  on the edge into its `active` level (rising for "high");
- rail amplitudes on ADC1 with the map's attenuation (ADC2 is unusable with Wi-Fi on);
- the status LED, if any, starts at its inactive level; set_led() drives it (rbnode.led).

PCNT: the units the map assigns to ONE input each (esp32-devkitc: beams 0..5 on units
0..5, cue on 6) count both edges of that input; an input without its own unit (a paired
unit, as on the ESP32-S3 map) gets no counter here (hw.counter -> None: lost edges are then
only seen when the edge ring overflows). Rails and strike inputs get no counter. Each unit
wraps at 32000 (`max=32000`: the hardware resets the count to 0 there) and the beam code takes
differences modulo 32000. The unit's glitch filter is 1023 APB ticks = 12.8 µs.
"""

import esp32
import machine
import micropython
import network
import time

from rbnode.hw import hal

_CAUSES = {
    machine.PWRON_RESET: "power",
    machine.HARD_RESET: "hard",
    machine.WDT_RESET: "wdt",
    machine.DEEPSLEEP_RESET: "deepsleep",
    machine.SOFT_RESET: "soft",
}

_PCNT_MOD = 32000
_MUX = 0x70  # TCA9548A I2C multiplexer (the TCS34725's address is fixed)
_TCS = 0x29  # TCS34725
_CMD = 0x80  # TCS34725 command bit
_AUTO = 0x20  # ... with register auto-increment


class Chip:
    """rbnode.hw.chip() on the board: what boot.py needs, no pin touched."""

    def reset_cause(self):
        return _CAUSES.get(machine.reset_cause(), "unknown")

    def watchdog(self, timeout_ms):
        # a second machine.WDT() (the node's supervisor) re-arms the same watchdog with its
        # own timeout
        return machine.WDT(timeout=timeout_ms)

    def reset(self):
        machine.reset()

    def lock_console(self):
        # rbnode.lock: no Ctrl-C on the USB console, no second terminal (WebREPL). The
        # port has no way to detach the REPL from its own UART: main.py never returns to it
        micropython.kbd_intr(-1)
        try:
            import os
            os.dupterm(None, 0)
        except (AttributeError, TypeError, ValueError, OSError):  # a build without dupterm
            pass

    def open_console(self):
        micropython.kbd_intr(3)

    def recovery_held(self, pin, window_ms):
        """The recovery pin pulled low at any moment of the `window_ms` after the call."""
        p = machine.Pin(pin, machine.Pin.IN, machine.Pin.PULL_UP)
        t0 = time.ticks_ms()
        while time.ticks_diff(time.ticks_ms(), t0) < window_ms:
            if p.value() == 0:
                return True
            time.sleep_ms(10)
        return False


class _Pcnt:
    """A PCNT unit counting both edges of one pin; .value() modulo .modulus."""

    modulus = _PCNT_MOD

    def __init__(self, unit, pin, both=True):
        inc = esp32.PCNT.INCREMENT
        self._u = esp32.PCNT(unit, pin=pin, rising=inc,
                             falling=inc if both else esp32.PCNT.IGNORE,
                             filter=1023, max=_PCNT_MOD)
        self._u.start()
        self.value = self._u.value  # bound once


class _Console:
    """Improv Wi-Fi on the USB console (rbnode.improv): while listening, Ctrl-C (0x03, the
    RPC packet type byte) is data, not an interrupt; the REPL's Ctrl-C comes back after."""

    def __init__(self):
        import select
        import sys
        self._in = sys.stdin.buffer
        self._out = sys.stdout.buffer
        self._poll = select.poll()
        self._poll.register(sys.stdin, select.POLLIN)

    def listen(self, on):
        micropython.kbd_intr(-1 if on else 3)

    def read(self):
        out = b""
        while len(out) < 256 and self._poll.poll(0):
            out += self._in.read(1)
        return out

    def write(self, b):
        self._out.write(b)


class Esp32Hardware(hal.Hardware):
    BEAM_BLOCKED = 1

    def __init__(self, pinmap=None):
        pm = pinmap if pinmap is not None else hal.load_pinmap()
        st = hal.pin_setup(pm)
        self.pinmap = pm
        self.setup = st
        self.pinmap_id = st["id"]
        self.BEAM_BLOCKED = st["blocked"]
        self._colour = self._colour_setup(st["colour"])
        self._nvs = esp32.NVS(st["nvs_ns"])
        P = machine.Pin
        pulls = {"up": P.PULL_UP, "down": P.PULL_DOWN}

        def inp(gpio, pull):
            # None: no internal pull (the stub types `pull` as int, but the port takes None)
            return P(gpio, P.IN, pulls.get(pull))  # type: ignore[arg-type]  # port takes None

        self._pins = {"beam": [inp(b[0], b[1]) for b in st["beam"]],
                      "cue": [inp(c[0], c[1]) for c in st["cue"]],
                      "rail": [inp(r[0], r[1]) for r in st["rail"]],
                      "strike": [inp(r[0], r[1]) for r in st["strike"]]}
        # comparator inputs (rails, strike) interrupt on the edge into their active level
        self._trig = {"rail": [P.IRQ_RISING if r[2] else P.IRQ_FALLING for r in st["rail"]],
                      "strike": [P.IRQ_RISING if r[2] else P.IRQ_FALLING
                                 for r in st["strike"]]}
        atten = {0: machine.ADC.ATTN_0DB, 2.5: machine.ADC.ATTN_2_5DB,
                 6: machine.ADC.ATTN_6DB}.get(st["atten_db"], machine.ADC.ATTN_11DB)
        self._adc = {}  # type: dict[str, list]
        self._dump = {}  # type: dict[str, list]
        for kind in ("rail", "strike"):
            adcs = []
            dumps = []
            for r in st[kind]:
                # a strike input without an amplitude pin is comparator-only
                adcs.append(machine.ADC(P(r[3]), atten=atten).read_u16
                            if r[3] is not None else None)  # bound once
                dumps.append(P(r[4], P.OUT, value=0) if r[4] is not None else None)
            self._adc[kind] = adcs
            self._dump[kind] = dumps
        self._counters = {"rail": [None] * len(st["rail"]),
                          "strike": [None] * len(st["strike"])}  # type: dict[str, list]
        for kind in ("beam", "cue"):
            cs = []
            for k in range(len(st[kind])):
                unit = st[kind][k][3]
                cs.append(_Pcnt(unit, self._pins[kind][k]) if unit is not None else None)
            self._counters[kind] = cs
        led = st["led"]
        self._led = P(led[0], P.OUT, value=1 - led[1]) if led is not None else None
        self._led_on = led[1] if led is not None else 1  # the level that lights it
        # The C functions themselves replace the HAL methods: calling them from an IRQ
        # handler allocates no bound method.
        self.ticks_us = time.ticks_us  # type: ignore[method-assign]  # C function: IRQ-safe
        self.ticks_diff = time.ticks_diff  # type: ignore[method-assign]  # C function: IRQ-safe
        self.ticks_add = time.ticks_add  # type: ignore[method-assign]  # C function: IRQ-safe
        self.sleep_ms = time.sleep_ms  # type: ignore[method-assign]  # C function: IRQ-safe

    def schedule(self, fn, arg):
        # Same queue as Pin.irq handlers (mp_sched_schedule): used as a FIFO barrier.
        try:
            micropython.schedule(fn, arg)
            return True
        except RuntimeError:  # "schedule queue full"
            return False

    # --- the colour station (hardware/colour.md): TCS34725s behind a TCA9548A mux ---
    def _colour_setup(self, c):
        """The station from hal.pin_setup's `colour` (sda, scl, gate, gate pull, sensors),
        made from the pin map's `colour` entry, or None. Each sensor: power on, RGBC
        enabled, 2.4 ms integration, gain 4x."""
        if c is None:
            return None
        P = machine.Pin
        sda, scl, gpio, pull, n = c
        i2c = machine.I2C(0, sda=P(sda), scl=P(scl), freq=400000)
        gate = P(gpio, P.IN, {"up": P.PULL_UP, "down": P.PULL_DOWN}.get(pull))  # type: ignore[arg-type]  # port takes None
        sel = bytearray(1)
        for i in range(n):
            sel[0] = 1 << i
            try:
                i2c.writeto(_MUX, sel)
                i2c.writeto_mem(_TCS, _CMD | 0x01, b"\xff")  # ATIME: 2.4 ms
                i2c.writeto_mem(_TCS, _CMD | 0x0F, b"\x01")  # gain 4x
                i2c.writeto_mem(_TCS, _CMD | 0x00, b"\x03")  # PON | AEN
            except OSError:  # a sensor that does not answer: its reads fail and are counted
                pass
        return [i2c, gate, n, sel, bytearray(8)]

    def colour_sensors(self):
        st = self._colour
        return 0 if st is None else st[2]

    def colour_gate(self):
        st = self._colour
        return 0 if st is None else st[1].value() == self.BEAM_BLOCKED

    def colour_read(self, i, buf):
        st = self._colour
        if st is None:
            raise OSError("no colour station")
        i2c, sel, raw = st[0], st[3], st[4]
        sel[0] = 1 << i
        i2c.writeto(_MUX, sel)
        i2c.readfrom_mem_into(_TCS, _CMD | _AUTO | 0x14, raw)  # C, R, G, B: 16 bits each
        buf[3] = raw[0] | raw[1] << 8
        buf[0] = raw[2] | raw[3] << 8
        buf[1] = raw[4] | raw[5] << 8
        buf[2] = raw[6] | raw[7] << 8

    def channels(self, kind):
        return len(self._pins[kind])

    def pin(self, kind, ch):
        return self._pins[kind][ch]

    def set_irq(self, kind, ch, handler):
        P = machine.Pin
        p = self._pins[kind][ch]
        if handler is None:
            p.irq(handler=None)
        elif kind == "rail" or kind == "strike":
            p.irq(handler=handler, trigger=self._trig[kind][ch])
        else:
            p.irq(handler=handler, trigger=P.IRQ_RISING | P.IRQ_FALLING)

    def counter(self, kind, ch):
        return self._counters[kind][ch]

    def adc_read(self, ch, kind="rail"):
        return self._adc[kind][ch]() >> 4  # 16-bit scaled -> 12-bit 0..4095 (SPEC amp)

    def has_adc(self, kind, ch):
        a = self._adc.get(kind)
        return a is not None and a[ch] is not None

    def adc_reset(self, ch, kind="rail"):
        d = self._dump[kind][ch]
        if d is not None:
            d.value(1)
            time.sleep_us(20)  # RC of the dump transistor path: well under 20 µs
            d.value(0)

    def nvs_get(self, key, default=None):
        try:
            return self._nvs.get_i32(key)
        except OSError:  # ESP_ERR_NVS_NOT_FOUND
            return default

    def nvs_set(self, key, value):
        self._nvs.set_i32(key, value)
        self._nvs.commit()

    def fs_root(self):
        return ""  # littlefs is mounted at "/"; paths are "/spill/..."

    def reset_cause(self):
        return Chip().reset_cause()

    def watchdog(self, timeout_ms):
        return Chip().watchdog(timeout_ms)

    def mem_free(self):
        import gc
        return gc.mem_free()

    def unique_id(self):
        return machine.unique_id()

    def reset(self):
        machine.reset()

    def wlan(self):
        return network.WLAN(network.STA_IF)

    def serial(self):
        if getattr(self, "_serial", None) is None:
            self._serial = _Console()
        return self._serial

    def set_led(self, on):
        p = self._led
        if p is not None:
            p.value(self._led_on if on else 1 - self._led_on)
