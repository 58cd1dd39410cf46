"""The status LED: the one condition the node shows, and its blink pattern.

Pure logic (no hardware, no allocation per call): `condition(...)` picks the condition shown
(the first that holds, in the order below); `lit(cond, ms)` says whether the LED is on `ms`
milliseconds into that condition's pattern (a pattern starts with the LED on when its
condition begins). `StatusLed(hw)` turns them into `hw.set_led(on)` calls; the node's LED
task calls `update()` every LED_MS from task context, never from an IRQ handler, and the
pin is written only when its level changes.

Conditions and patterns (documented for installers in hardware/installation.md, "Status
LED"; tests/firmware/test_status_led.py):
  WIFI_DOWN    fast blink      100 ms on, 100 ms off
  BROKER_DOWN  double blink    two 100 ms flashes 100 ms apart, every 1 s
  JAMMED       triple blink    three 100 ms flashes 100 ms apart, every 1.2 s (a beam
                               blocked for the config's jam_us, until it clears)
  SYNCING      slow blink      500 ms on, 500 ms off (connected; the boot's first time
                               sync or the backlog after a connect is not through yet)
  BLOCKED      steady on       while a beam is blocked (a ball passing: a short flash)
  HEALTHY      heartbeat       a 50 ms flash every 2 s
"""

WIFI_DOWN = 0
BROKER_DOWN = 1
JAMMED = 2
SYNCING = 3
BLOCKED = 4
HEALTHY = 5

NAMES = ("wifi_down", "broker_down", "jammed", "syncing", "blocked", "healthy")

# (period ms, on windows as flat [start, end) pairs in ms); period 0: steady on
PATTERNS = (
    (200, (0, 100)),
    (1000, (0, 100, 200, 300)),
    (1200, (0, 100, 200, 300, 400, 500)),
    (1000, (0, 500)),
    (0, ()),
    (2000, (0, 50)),
)

# How often the LED task looks: under half the shortest on or off time (50 ms).
LED_MS = 20


def condition(wifi_up, broker_up, jammed, syncing, blocked):
    """The condition shown: the first that holds in priority order."""
    if not wifi_up:
        return WIFI_DOWN
    if not broker_up:
        return BROKER_DOWN
    if jammed:
        return JAMMED
    if syncing:
        return SYNCING
    if blocked:
        return BLOCKED
    return HEALTHY


def lit(cond, ms):
    """Is the LED on `ms` milliseconds after `cond` began?"""
    period, on = PATTERNS[cond]
    if not period:
        return True
    t = ms % period
    i = 0
    while i < len(on):
        if on[i] <= t < on[i + 1]:
            return True
        i += 2
    return False


class StatusLed:
    def __init__(self, hw):
        self.hw = hw
        self.cond = None
        self.on = None
        self._since = 0

    def update(self, cond, now_ms):
        """Show `cond` at `now_ms` (any monotonic ms clock) -> the LED level."""
        if cond != self.cond:
            self.cond = cond
            self._since = now_ms
        on = lit(cond, now_ms - self._since)
        if on != self.on:
            self.on = on
            self.hw.set_led(on)
        return on
