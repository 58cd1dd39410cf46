"""The hardware interface (HAL) the node core uses; nothing else touches machine/esp32.

Interface (stable; documented in docs/firmware-sensing.md §HAL):
  time   TICKS_PERIOD (2**30), ticks_us(), ticks_diff(a, b), ticks_add(a, d), sleep_ms(ms)
  sched  schedule(fn, arg) -> bool: queue fn(arg) in the soft-IRQ FIFO that pin handlers
         use (micropython.schedule); False when the queue is full
  inputs channels(kind) -> int       kind: "beam" (pocket beams), "cue", "rail"
         pin(kind, ch) -> Pin-like: .value() -> 0/1 (current level)
         set_irq(kind, ch, handler) installs a SOFT handler handler(pin): beams/cue on
                 both edges, rails on the comparator's rising edge; None removes it.
                 Handlers run late and may be dropped (DESIGN §4: scheduled, queue of 8).
         counter(kind, ch) -> hardware edge counter or None: .value() = edges counted
                 (beams/cue: both edges; rails: rising) modulo .modulus. ESP32: PCNT units 0..7 (8 only,
                 given to beams then cue; rails get None on ESP32).
         adc_read(ch) -> 0..4095, rail ch peak-hold amplitude (ADC1 only: Wi-Fi blocks ADC2)
         adc_reset(ch) discharge that channel's peak hold (no-op without a dump pin)
         BEAM_BLOCKED: pin level that means "beam interrupted" (1 for the default front end)
  store  nvs_get(key, default=None) -> int | default; nvs_set(key, int) (committed)
         fs_root() -> writable directory path (littlefs "/" on the device)
  system reset_cause() -> "power" "hard" "wdt" "deepsleep" "soft" "unknown"
         watchdog(timeout_ms) -> object with .feed()  (cannot be stopped: DESIGN §4)
         mem_free() -> int, unique_id() -> bytes, reset()
  net    wlan() -> network.WLAN-like: active(b), connect(ssid, pw), isconnected(),
         status("rssi"), ifconfig()
  pinmap_id  slug naming the pin map in use
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

    def adc_read(self, ch):
        raise NotImplementedError

    def adc_reset(self, ch):
        pass

    def nvs_get(self, key, default=None):
        raise NotImplementedError

    def nvs_set(self, key, value):
        raise NotImplementedError

    def fs_root(self):
        raise NotImplementedError

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
