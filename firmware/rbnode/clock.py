"""64-bit microsecond clock since boot, extended from the wrapping `ticks_us`.

Interface (stable):
    Clock(ticks_us, ticks_diff)   functions injected by the hw layer
    .now()        -> int µs since the Clock was made (boot), monotonic, never wraps
    .update()     -> same as now(); call at least every few minutes (cheap)
    .extend(ticks) -> int: a ticks value captured recently (IRQ handler, <~8 min ago)
                   mapped onto the same 64-bit timeline (calls update() itself)
    .last_ticks   ticks value of the last update (read-only)

Why: on ESP32 `time.ticks_us()` wraps every 2**30 µs (~17.9 min) and `ticks_diff` is
only valid for spans under half of that, 2**29 µs ~ 8.9 min (docs/architecture.md,
"Target facts"). Events must
carry a 64-bit time since boot, so task code accumulates ticks_diff steps here; as long
as update() runs at least once per ~8 minutes no wrap is missed. The 64-bit value is a
long int on MicroPython after 2**30 µs, so now()/extend() allocate: task code only, never
in an IRQ handler (handlers store raw ticks, which are small ints).
"""


class Clock:
    def __init__(self, ticks_us, ticks_diff):
        self._ticks_us = ticks_us
        self._diff = ticks_diff
        self.last_ticks = ticks_us()
        self._us = 0

    def update(self):
        t = self._ticks_us()
        d = self._diff(t, self.last_ticks)
        # d < 0 cannot happen with a monotonic source; refuse to step back anyway.
        if d > 0:
            self._us += d
            self.last_ticks = t
        return self._us

    def now(self):
        return self.update()

    def extend(self, ticks):
        # Update first so the reference is fresh: then the result is right for any ticks
        # captured less than 2**29 µs (~8.9 min) ago, however long since the last update()
        # (as long as updates themselves came at least every ~8 min).
        self.update()
        return self._us + self._diff(ticks, self.last_ticks)
