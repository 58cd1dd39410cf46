"""Real ESP32 hardware layer (device only: imports machine, esp32, network).

Interface: rbnode.hw.hal.Hardware. Esp32Hardware(pinmap=None) with pinmap a dict:
    {"id": "rb-esp32-v1",
     "beams": [gpio, ...],            up to 6 pocket beam inputs (IR receiver, high = blocked)
     "cue": gpio or None,             cue-ball detector in the ball return
     "rails": [[cmp_gpio, adc_gpio, dump_gpio or None], ...]   up to 6 rail channels
     "nvs_ns": "railbird"}
DEFAULT_PINMAP avoids the strapping pins 0, 2, 5, 12, 15 and flash pins 6-11; rail
amplitudes are on ADC1 (GPIO 32-39) because ADC2 is unusable while Wi-Fi is on; 34-39 are
input-only without pull-ups, so they carry the ADC signals (DESIGN §4).

PCNT: the ESP32 has 8 units. Units 0..5 count both edges of the pocket beams, unit 6 the
cue detector; rails get no counter (hw.counter("rail", ch) -> None), so lost rail edges
are only seen when the per-channel edge ring overflows. Each unit wraps at 32000
(`max=32000`: the hardware resets the count to 0 there) and the beam code takes
differences modulo 32000. The unit's glitch filter is 1023 APB ticks = 12.8 µs.
"""

import esp32
import machine
import micropython
import network
import time

from rbnode.hw import hal

DEFAULT_PINMAP = {
    "id": "rb-esp32-v1",
    "beams": [4, 13, 14, 16, 17, 18],
    "cue": 19,
    "rails": [[21, 32, None], [22, 33, None], [23, 34, None],
              [25, 35, None], [26, 36, None], [27, 39, None]],
    "nvs_ns": "railbird",
}

_CAUSES = {
    machine.PWRON_RESET: "power",
    machine.HARD_RESET: "hard",
    machine.WDT_RESET: "wdt",
    machine.DEEPSLEEP_RESET: "deepsleep",
    machine.SOFT_RESET: "soft",
}

_PCNT_MOD = 32000


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


class _Null:
    def feed(self):
        pass


class Esp32Hardware(hal.Hardware):
    BEAM_BLOCKED = 1

    def __init__(self, pinmap=None):
        pm = pinmap or DEFAULT_PINMAP
        self.pinmap = pm
        self.pinmap_id = pm.get("id", "custom")
        self._nvs = esp32.NVS(pm.get("nvs_ns", "railbird"))
        P = machine.Pin
        beams = [P(g, P.IN, P.PULL_UP if g < 34 else None) for g in pm.get("beams", [])]
        cue = pm.get("cue")
        self._pins = {"beam": beams,
                      "cue": [P(cue, P.IN, P.PULL_UP if cue < 34 else None)]
                      if cue is not None else [],
                      "rail": [P(r[0], P.IN) for r in pm.get("rails", [])]}
        self._adc = []
        self._dump = []
        for r in pm.get("rails", []):
            # 11 dB: the full 0..~3.1 V range of the peak hold
            a = machine.ADC(P(r[1]), atten=machine.ADC.ATTN_11DB)
            self._adc.append(a.read_u16)  # bound once
            self._dump.append(P(r[2], P.OUT, value=0) if r[2] is not None else None)
        self._counters = {"beam": [], "cue": [], "rail": [None] * len(self._pins["rail"])}
        unit = 0
        for kind in ("beam", "cue"):
            for p in self._pins[kind]:
                self._counters[kind].append(_Pcnt(unit, p) if unit < 8 else None)
                unit += 1
        self.ticks_us = time.ticks_us  # C functions: no allocation in IRQ handlers
        self.ticks_diff = time.ticks_diff
        self.ticks_add = time.ticks_add
        self.sleep_ms = time.sleep_ms

    def schedule(self, fn, arg):
        # Same queue as Pin.irq handlers (mp_sched_schedule): used as a FIFO barrier.
        try:
            micropython.schedule(fn, arg)
            return True
        except RuntimeError:  # "schedule queue full"
            return False

    def channels(self, kind):
        return len(self._pins[kind])

    def pin(self, kind, ch):
        return self._pins[kind][ch]

    def set_irq(self, kind, ch, handler):
        P = machine.Pin
        p = self._pins[kind][ch]
        if handler is None:
            p.irq(handler=None)
        elif kind == "rail":
            p.irq(handler=handler, trigger=P.IRQ_RISING)
        else:
            p.irq(handler=handler, trigger=P.IRQ_RISING | P.IRQ_FALLING)

    def counter(self, kind, ch):
        return self._counters[kind][ch]

    def adc_read(self, ch):
        return self._adc[ch]() >> 4  # 16-bit scaled -> 12-bit 0..4095 (SPEC amp)

    def adc_reset(self, ch):
        d = self._dump[ch]
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
        return _CAUSES.get(machine.reset_cause(), "unknown")

    def watchdog(self, timeout_ms):
        return machine.WDT(timeout=timeout_ms)

    def mem_free(self):
        import gc
        return gc.mem_free()

    def unique_id(self):
        return machine.unique_id()

    def reset(self):
        machine.reset()

    def wlan(self):
        return network.WLAN(network.STA_IF)
