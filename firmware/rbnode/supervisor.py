"""Watchdog supervisor (the WDT cannot be stopped once started: docs/architecture.md,
"Target facts").

Each supervised task calls `beat(name)` whenever it makes progress. Every `check_ms` the
supervisor feeds the hardware watchdog only if every task beat within its own allowance
(`register(name, max_ms)`); a task that died or is stuck stops the feeding and the board
resets after `timeout_ms` (reset cause "wdt", reported in the next birth). A loop that
blocks the whole event loop also stops the supervisor itself, with the same result.

`stalled` names the first task found stuck (for the log/status before the reset).
"""

try:
    import asyncio
except ImportError:  # older MicroPython names it uasyncio
    import uasyncio as asyncio


class Supervisor:
    def __init__(self, hw, timeout_ms=10000, check_ms=1000, enable=True):
        self.hw = hw
        self.timeout_ms = timeout_ms
        self.check_ms = check_ms
        self.wdt = hw.watchdog(timeout_ms) if enable else None
        self._names = []
        self._max = []
        self._last = []
        self.stalled = None
        self.feeds = 0
        self.running = True

    def register(self, name, max_ms):
        self._names.append(name)
        self._max.append(max_ms)
        self._last.append(self.hw.ticks_us())

    def beat(self, name):
        i = self._names.index(name)
        self._last[i] = self.hw.ticks_us()

    def check(self):
        """True (and the watchdog fed) when every task progressed in time."""
        now = self.hw.ticks_us()
        for i in range(len(self._names)):
            if self.hw.ticks_diff(now, self._last[i]) > self._max[i] * 1000:
                self.stalled = self._names[i]
                return False
        self.stalled = None
        if self.wdt is not None:
            self.wdt.feed()
        self.feeds += 1
        return True

    async def run(self):
        while self.running:
            self.check()
            await asyncio.sleep(self.check_ms / 1000)
