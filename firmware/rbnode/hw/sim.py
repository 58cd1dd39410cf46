"""Simulated hardware for tests and the demo (CPython and MicroPython).

Interface (stable; beyond rbnode.hw.hal.Hardware):
    SimHardware(seed=1, start_ticks=0, beams=6, cue=True, rails=6, rail_counters=True,
                irq_delay_us=30, irq_jitter_us=0, queue_depth=8, rail_tau_us=0,
                fs_root=None, reset_cause="power", counter_modulus=32000, strike=1,
                strike_adc=True, dead=None, chip=None)
                            strike: dedicated strike inputs (hal "strike"), with an
                            amplitude pin when strike_adc (else comparator-only)
                            dead: {kind: [ch, ...]} channels with a hardware fault: a dead
                            beam or cue input reads "blocked" for ever (an emitter out, a
                            receiver unplugged against its pull), a dead rail or strike
                            input's comparator stays tripped and its ADC reads 4095 (a peak
                            hold that never discharges, an input floating high); scheduled
                            edges on them do nothing
                            chip: the SimChip whose watchdog .watchdog() arms (else one
                            of this object's own, checked against simulated time)
    .now_us                 simulated µs since boot (ground truth, 64-bit)
    .advance(us)            run time forward: pin edges, counters, queued soft IRQs
    .run_until(at_us)
    .busy(us)               the VM is busy for us: handlers queue up (and may overflow)
    .schedule(fn, arg)      like micropython.schedule: same FIFO/depth as pin handlers
    .schedule_edge(kind, ch, at_us, level)
    .schedule_drop(ch, at_us, dur_us)        beam blocked for dur_us (kind "beam")
    .schedule_cue(at_us, dur_us)
    .schedule_bounce(kind, ch, at_us, pulses, width_us, gap_us)   short blocks (chatter)
    .schedule_rail(ch, at_us, amp, width_us=3000)   comparator pulse + peak-hold amplitude
    .schedule_strike(ch, at_us, amp, width_us=3000, kind="strike")   the same on the strike
                            sensor's input (kind "rail" when it sits on a rail input)
    .schedule_balls(at_us, balls, touching=(), rgb=None)   balls rolling past the colour
                            station (colour=N sensors; rbnode.hw.simcolour); .colour_unplugged
                            makes every read raise OSError, .colour_ambient/.colour_noise
                            tune the light
    .schedule_random(start_us, end_us, drops=0, rails=0, min_gap_us=60000) -> truth list
    .truth                  list of (kind, ch, at_us, dur_or_amp) scheduled so far
    .irq_overflow           soft-IRQ queue overflows (edges whose handler never ran)
    .irq_delay_us/.irq_jitter_us/.queue_depth   tunable any time
    .net_up                 what wlan().isconnected() reports (with the access point's word)
    .aps                    None (any credentials join), or {ssid: password} the simulated
                            access points accept; wlan().connect() with others stays off
    .serial()               SimSerial on the `serial` file descriptor given (a pty's
                            master end: the host's tool opens the other), else None
    .names                  None (the OS resolves), or {name: address}: resolve() of a name
                            not in it raises OSError, as an unanswered mDNS query; nothing
                            resolves while the Wi-Fi is down
    .wdt_expired            set when a watchdog from .watchdog() was not fed in time (chip
                            None)
    .led                    the status LED's changes: [(now_us, on)], oldest first
    .storage()              SimStorage on fs_root (below)
    .reset_hook             None, or called by reset() instead of raising SystemExit
                            (rbnode.simnode reboots the node with it)

Model (docs/architecture.md, "Target facts"): an edge changes the pin level at its time
and bumps the pin's edge counter at once (PCNT is hardware); the pin's handler is queued
in ONE global FIFO of `queue_depth` (8) entries (shared with schedule()) and runs
irq_delay_us (+ uniform jitter) later, or when the VM is no longer busy. A full queue drops
the handler call silently, like the ESP32 port. The handler reads ticks_us() and
pin.value() when it RUNS. ticks_us wraps at 2**30 like ESP32.
SimChip(reset_cause="power", report=None): what rbnode.hw.chip() gives boot.py off the board
(sim.chip(): the one set_chip() installed, else an inert one): .reset_cause(),
.watchdog(ms) (each arm and feed goes to report("wdt <ms>") / report("feed") when a
runner supervises it: rbnode.simboot, whose parent resets a board not fed in time), .reset()
(on_reset(), else SystemExit like SimHardware.reset).

Randomness comes from a private xorshift32 so the same seed gives the same run in CPython
and MicroPython.

SimStorage(root, cut_at=None, free_bytes=None): rbnode.hw.storage.FileStorage with the
power cut at its `cut_at`-th write step (1-based; steps: open_write, each write(), close,
rename, remove, mkdir, rmdir): a write() writes the first half of its bytes, any other step
does nothing, and that step and every later call raise PowerCut (a BaseException, so no
`except Exception` in the firmware can swallow it). What earlier write() calls wrote stays
(files left open are closed as they are). `.steps` counts the steps, `.log` names them.
"""

import os

from rbnode.hw import hal
from rbnode.hw.storage import FileStorage

_MASK = hal.TICKS_PERIOD - 1


class SimPin:
    def __init__(self, hw, kind, ch, level):
        self.hw = hw
        self.kind = kind
        self.ch = ch
        self._level = level
        self.handler = None

    def value(self, v=None):
        if v is None:
            return self._level
        self._level = v
        return None

    def irq(self, handler=None, trigger=None):
        self.handler = handler
        return None


class SimCounter:
    """Hardware edge counter: counts every level change at edge time, mod `modulus`
    (the ESP32 PCNT unit is set to wrap at 32000)."""

    def __init__(self, modulus):
        self.modulus = modulus
        self._v = 0

    def value(self):
        return self._v


class SimWDT:
    def __init__(self, hw, timeout_ms):
        self.hw = hw
        self.timeout_us = timeout_ms * 1000
        self.last = hw.now_us

    def feed(self):
        self.last = self.hw.now_us


class SimChip:
    """The chip off the board. The console (rbnode.lock): `console` is "open" or "locked"
    (what lock_console/open_console last did: Ctrl-C on or off); `recovery` is whether the
    recovery pin is held low at this reset, `recovery_asked` the (pin, window_ms) asked."""

    def __init__(self, reset_cause="power", report=None, recovery=False):
        self.cause = reset_cause
        self.report = report
        self.recovery = recovery
        self.recovery_asked = None
        self.console = "open"
        self.on_reset = None
        self.armed_ms = None  # the watchdog's period once armed (it cannot be stopped)
        self._fed = None

    def reset_cause(self):
        return self.cause

    def watchdog(self, timeout_ms):
        self.armed_ms = timeout_ms
        if self.report is not None:
            self.report("wdt %d" % timeout_ms)
        return _ChipWDT(self)

    def _feed(self):
        if self.report is None:
            return
        import time
        now = time.monotonic()
        if self._fed is None or now - self._fed > 0.2:  # a line per feed would flood
            self._fed = now
            self.report("feed")

    def reset(self):
        if self.on_reset is not None:
            return self.on_reset()
        raise SystemExit("sim reset")

    def _console(self, state):
        self.console = state
        if self.report is not None:
            self.report("console " + state)
        try:  # under CPython, a SIGINT to the board's process is its console's Ctrl-C
            import signal
        except ImportError:  # MicroPython: no signals; `console` says what the board would do
            return
        if state == "open":
            signal.signal(signal.SIGINT, signal.default_int_handler)
        else:
            signal.signal(signal.SIGINT, self._ignored)

    def _ignored(self, signum, frame):
        if self.report is not None:
            self.report("ctrl-c ignored")

    def lock_console(self):
        self._console("locked")

    def open_console(self):
        self._console("open")

    def recovery_held(self, pin, window_ms):
        self.recovery_asked = (pin, window_ms)
        return self.recovery


class _ChipWDT:
    def __init__(self, chip):
        self.chip = chip

    def feed(self):
        self.chip._feed()


_CHIP = None


def chip():
    """The chip rbnode.hw.chip() returns off the board."""
    global _CHIP
    if _CHIP is None:
        _CHIP = SimChip()
    return _CHIP


def set_chip(c):
    global _CHIP
    _CHIP = c


class SimWLAN:
    def __init__(self, hw):
        self.hw = hw
        self._active = False
        self.ssid = None
        self.key = None

    def active(self, v=None):
        if v is not None:
            self._active = bool(v)
        return self._active

    def connect(self, ssid=None, key=None):
        self.ssid = ssid
        self.key = key

    def disconnect(self):
        self.ssid = None

    def joined(self):
        aps = self.hw.aps
        if aps is None:
            return True
        return self.ssid is not None and aps.get(self.ssid) == self.key

    def isconnected(self):
        return self._active and self.hw.net_up and self.joined()

    def status(self, what=None):
        if what == "rssi":
            return self.hw.rssi
        return 1010 if self.isconnected() else 1000

    def ifconfig(self):
        return ("127.0.0.1", "255.0.0.0", "127.0.0.1", "127.0.0.1")


class SimSerial:
    """The board's console port on a file descriptor (CPython: a pty's master end)."""

    def __init__(self, fd):
        self.fd = fd
        os.set_blocking(fd, False)

    def listen(self, on):
        pass  # no console to silence here

    def read(self):
        try:
            return os.read(self.fd, 256)
        except (BlockingIOError, OSError):  # nothing waiting; the other end not open yet
            return b""

    def write(self, b):
        try:
            os.write(self.fd, b)
        except OSError:
            pass  # nobody at the other end: Improv answers are best effort


class PowerCut(BaseException):
    pass


class _SimWriter:
    def __init__(self, st, f, p):
        self.st = st
        self.f = f
        self.p = p

    def write(self, b):
        f = self.f

        def torn():
            f.write(b[:len(b) // 2])
        self.st._step("write " + self.p, torn)
        return f.write(b)

    def close(self):
        self.st._step("close " + self.p)
        self.st._open.remove(self)
        self.f.close()


class SimStorage(FileStorage):
    def __init__(self, root, cut_at=None, free_bytes=None):
        FileStorage.__init__(self, root)
        self.cut_at = cut_at
        self.free_bytes = free_bytes
        self.steps = 0
        self.log = []
        self.dead = False
        self._open = []

    def _step(self, what, partial=None):
        if self.dead:
            raise PowerCut("power is off")
        self.steps += 1
        self.log.append(what)
        if self.cut_at is not None and self.steps >= self.cut_at:
            self.dead = True
            if partial is not None:
                partial()
            for w in self._open:
                w.f.close()
            self._open = []
            raise PowerCut(what)

    def _alive(self):
        if self.dead:
            raise PowerCut("power is off")

    def read(self, p):
        self._alive()
        return FileStorage.read(self, p)

    def open_read(self, p):
        self._alive()
        return FileStorage.open_read(self, p)

    def open_write(self, p):
        self._step("open " + p)
        w = _SimWriter(self, FileStorage.open_write(self, p), p)
        self._open.append(w)
        return w

    def rename(self, src, dst):
        self._step("rename " + src + " " + dst)
        FileStorage.rename(self, src, dst)

    def remove(self, p):
        self._step("remove " + p)
        FileStorage.remove(self, p)

    def rmdir(self, p):
        self._step("rmdir " + p)
        FileStorage.rmdir(self, p)

    def mkdir(self, p):
        if self.isdir(p):
            return  # nothing written
        self._step("mkdir " + p)
        FileStorage.mkdir(self, p)

    def listdir(self, p):
        self._alive()
        return FileStorage.listdir(self, p)

    def size(self, p):
        self._alive()
        return FileStorage.size(self, p)

    def isdir(self, p):
        self._alive()
        return FileStorage.isdir(self, p)

    def free(self):
        self._alive()
        if self.free_bytes is not None:
            return self.free_bytes
        return FileStorage.free(self)


def _tmpdir(seed):
    try:
        import tempfile
        return tempfile.mkdtemp(prefix="rbnode-sim-")
    except ImportError:  # MicroPython: its FS root is writable
        d = "/simfs%d" % seed
        try:
            os.mkdir(d)
        except OSError:
            pass
        return d


class SimHardware(hal.Hardware):
    pinmap_id = "sim"
    BEAM_BLOCKED = 1

    def __init__(self, seed=1, start_ticks=0, beams=6, cue=True, rails=6, rail_counters=True,
                 irq_delay_us=30, irq_jitter_us=0, queue_depth=8, rail_tau_us=0,
                 fs_root=None, reset_cause="power", counter_modulus=32000, strike=1,
                 strike_adc=True, aps=None, names=None, serial=None, dead=None,
                 chip=None, colour=0):
        self._serial = None if serial is None else SimSerial(serial)
        self.aps = aps
        self.names = names
        self._rng = (seed * 2654435761 + 12345) & 0xFFFFFFFF or 1
        self.seed = seed
        self.now_us = 0
        self._start = start_ticks & _MASK
        self._ticks = self._start  # cached: ticks_us() must not allocate (IRQ path)
        self.irq_delay_us = irq_delay_us
        self.irq_jitter_us = irq_jitter_us
        self.queue_depth = queue_depth
        self.rail_tau_us = rail_tau_us
        self.irq_overflow = 0
        self.irq_run = 0
        self._busy_until = 0
        self._last_due = 0
        self._edges = []  # sorted by (at, n): [at, n, pin, level, amp]
        self._n = 0
        self._pending = []  # FIFO of [due, pin]
        idle = 1 - self.BEAM_BLOCKED
        self._pins = {"beam": [SimPin(self, "beam", c, idle) for c in range(beams)],
                      "cue": [SimPin(self, "cue", 0, idle)] if cue else [],
                      "rail": [SimPin(self, "rail", c, 0) for c in range(rails)],
                      "strike": [SimPin(self, "strike", c, 0) for c in range(strike)]}
        self._dead = {"beam": (), "cue": (), "rail": (), "strike": ()}
        for kind in dead or {}:
            self._dead[kind] = tuple(dead[kind])
            for c in dead[kind]:
                # stuck at the faulty level: blocked for a beam, tripped for a comparator
                self._pins[kind][c]._level = self.BEAM_BLOCKED if kind in ("beam", "cue") \
                    else 1
        self.chip = chip
        self.strike_adc = strike_adc
        self._counters = {}
        for kind in ("beam", "cue", "rail", "strike"):
            if kind == "strike":
                self._counters[kind] = [None] * strike  # like the ESP32: no PCNT left
            elif kind == "rail" and not rail_counters:
                self._counters[kind] = [None] * rails
            else:
                self._counters[kind] = [SimCounter(counter_modulus)
                                        for _ in self._pins[kind]]
        # peak-hold amplitude and its time per comparator input
        self._held = {"rail": [0] * rails, "strike": [0] * strike}
        self._held_t = {"rail": [0] * rails, "strike": [0] * strike}
        self._root = fs_root or _tmpdir(seed)
        self._reset_cause = reset_cause
        self._wdts = []
        self.wdt_expired = False
        self.net_up = True
        self.rssi = -60
        self.truth = []
        self.reset_hook = None
        self.led = []
        self._storage = None
        self._colour = colour  # the colour station's sensors (0: none)
        self._passes = []  # [start_us, end_us, ball, [per reading: [refl per sensor]]]
        self.colour_unplugged = False
        self.colour_ambient = 40.0
        self.colour_noise = 1.0

    # --- randomness (xorshift32; identical in CPython and MicroPython) ---
    def rand32(self):
        x = self._rng
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        self._rng = x
        return x

    def randint(self, lo, hi):
        return lo + self.rand32() % (hi - lo + 1)

    # --- time ---
    def ticks_us(self):
        return self._ticks

    def ticks_diff(self, a, b):
        return hal.ticks_diff(a, b)

    def ticks_add(self, a, d):
        return hal.ticks_add(a, d)

    def sleep_ms(self, ms):
        self.advance(ms * 1000)

    def _set_time(self, t):
        if t > self.now_us:
            self.now_us = t
            self._ticks = (self._start + t) & _MASK

    def busy(self, us):
        self._busy_until = max(self._busy_until, self.now_us + us)

    def advance(self, us):
        self.run_until(self.now_us + us)

    def run_until(self, target):
        edges = self._edges
        pend = self._pending
        while True:
            te = edges[0][0] if edges else None
            th = None
            if pend:
                th = pend[0][0]
                if th < self._busy_until:
                    th = self._busy_until
            if te is not None and te <= target and (th is None or te <= th):
                at, _, pin, level, amp = edges.pop(0)
                self._set_time(at)
                self._edge(pin, level, amp)
            elif th is not None and th <= target:
                _, fn, arg = pend.pop(0)
                self._set_time(th)
                self.irq_run += 1
                fn(arg)
            else:
                break
        self._set_time(target)
        for w in self._wdts:
            if self.now_us - w.last > w.timeout_us:
                self.wdt_expired = True

    def _edge(self, pin, level, amp):
        if pin.ch in self._dead[pin.kind]:
            return  # a dead input does not follow the ball
        comp = pin.kind == "rail" or pin.kind == "strike"
        if comp and level and amp is not None:
            ch = pin.ch
            cur = self._decayed(ch, pin.kind)
            self._held[pin.kind][ch] = amp if amp > cur else cur
            self._held_t[pin.kind][ch] = self.now_us
        if level == pin._level:
            return
        pin._level = level
        c = self._counters[pin.kind][pin.ch]
        if c is not None and (level or not comp):
            c._v = (c._v + 1) % c.modulus
        if comp and not level:
            return  # comparator handler triggers on the rising edge only
        if pin.handler is None:
            return
        if not self._queue(pin.handler, pin):
            self.irq_overflow += 1  # DESIGN §4: dropped silently on the device

    def _queue(self, fn, arg):
        if len(self._pending) >= self.queue_depth:
            return False
        due = self.now_us + self.irq_delay_us
        if self.irq_jitter_us:
            due += self.rand32() % (self.irq_jitter_us + 1)
        if due < self._last_due:
            due = self._last_due  # FIFO: a handler never overtakes an earlier one
        self._last_due = due
        self._pending.append([due, fn, arg])
        return True

    def schedule(self, fn, arg):
        """micropython.schedule: same FIFO and depth as the pin handlers."""
        return self._queue(fn, arg)

    # --- scheduling ---
    def schedule_edge(self, kind, ch, at_us, level, amp=None):
        pin = self._pins[kind][ch]
        self._n += 1
        item = [at_us, self._n, pin, level, amp]
        e = self._edges
        # binary search for the first edge after at_us (an equal time keeps scheduling
        # order): a linear scan made scheduling thousands of random edges quadratic
        lo = 0
        hi = len(e)
        while lo < hi:
            mid = (lo + hi) >> 1
            if e[mid][0] > at_us:
                hi = mid
            else:
                lo = mid + 1
        e.insert(lo, item)

    def schedule_drop(self, ch, at_us, dur_us, kind="beam"):
        b = self.BEAM_BLOCKED
        self.schedule_edge(kind, ch, at_us, b)
        self.schedule_edge(kind, ch, at_us + dur_us, 1 - b)
        self.truth.append((kind, ch, at_us, dur_us))

    def schedule_cue(self, at_us, dur_us):
        self.schedule_drop(0, at_us, dur_us, kind="cue")

    def schedule_bounce(self, kind, ch, at_us, pulses, width_us, gap_us):
        b = self.BEAM_BLOCKED
        t = at_us
        for _ in range(pulses):
            self.schedule_edge(kind, ch, t, b)
            self.schedule_edge(kind, ch, t + width_us, 1 - b)
            t += width_us + gap_us
        return t

    def schedule_rail(self, ch, at_us, amp, width_us=3000):
        self.schedule_edge("rail", ch, at_us, 1, amp)
        self.schedule_edge("rail", ch, at_us + width_us, 0)
        self.truth.append(("rail", ch, at_us, amp))

    def schedule_strike(self, ch, at_us, amp, width_us=3000, kind="strike"):
        self.schedule_edge(kind, ch, at_us, 1, amp)
        self.schedule_edge(kind, ch, at_us + width_us, 0)
        self.truth.append(("strike", ch, at_us, amp))

    def schedule_random(self, start_us, end_us, drops=0, rails=0, min_gap_us=60000,
                        dur_us=(20000, 45000), amp=(100, 4000)):
        """Random drops on random beams and rail hits on random rails, at least min_gap_us
        apart per channel (so each is separable); returns the scheduled truth entries."""
        out = []
        last = {}
        span = end_us - start_us
        todo = [("beam", drops), ("rail", rails)]
        for kind, n in todo:
            nch = len(self._pins[kind])
            k = 0
            tries = 0
            while k < n and tries < n * 50:
                tries += 1
                ch = self.rand32() % nch
                at = start_us + self.rand32() % span
                ok = True
                for t0 in last.get((kind, ch), ()):
                    if -min_gap_us < at - t0 < min_gap_us:
                        ok = False
                        break
                if not ok:
                    continue
                last.setdefault((kind, ch), []).append(at)
                if kind == "beam":
                    self.schedule_drop(ch, at, self.randint(dur_us[0], dur_us[1]))
                else:
                    self.schedule_rail(ch, at, self.randint(amp[0], amp[1]))
                out.append(self.truth[-1])
                k += 1
        return out

    # --- inputs ---
    # --- the colour station (rbnode.hw.simcolour: ball colours, views, ambient, noise) ---
    def _rnd(self):
        return self.rand32() / 4294967296.0

    def schedule_balls(self, at_us, balls, touching=(), rgb=None, speed=(300.0, 900.0)):
        """`balls` roll past the colour station one after another from `at_us`: each
        reaches it after the one before has cleared the gate (`touching`: indices of balls
        with no space before them). -> [(start_us, ball)] of the passes."""
        from rbnode.hw import simcolour as sc
        out = []
        t = at_us
        if self._passes and t < self._passes[-1][1]:
            t = self._passes[-1][1] + sc.SAMPLE_US
        for i in range(len(balls)):
            v = speed[0] + (speed[1] - speed[0]) * self._rnd()
            seq = sc.ball_pass(balls[i], v, self._rnd, rgb=rgb or sc.GROUP_RGB)
            end = t + seq[-1][0] + sc.SAMPLE_US
            self._passes.append([t, end, balls[i], [x[1] for x in seq]])
            self.truth.append(("ball", 0, t, balls[i]))
            out.append((t, balls[i]))
            t = end + sc.gap_us(v, (i + 1) in touching)
        return out

    def _pass_now(self):
        now = self.now_us
        ps = self._passes
        while ps and ps[0][1] <= now:
            ps.pop(0)
        if ps and ps[0][0] <= now:
            return ps[0]
        return None

    def colour_sensors(self):
        return self._colour

    def colour_gate(self):
        return 1 if self._pass_now() is not None else 0

    def colour_read(self, i, buf):
        from rbnode.hw import simcolour as sc
        if self.colour_unplugged:
            raise OSError("colour sensor %d: no ACK" % i)
        p = self._pass_now()
        refl = None
        if p is not None:
            k = (self.now_us - p[0]) // sc.SAMPLE_US
            if k < len(p[3]):
                refl = p[3][k][i]
        c = sc.counts(refl, self.colour_ambient, self.now_us, self._rnd, self.colour_noise)
        buf[0] = c[0]
        buf[1] = c[1]
        buf[2] = c[2]
        buf[3] = c[3]

    def channels(self, kind):
        return len(self._pins[kind])

    def pin(self, kind, ch):
        return self._pins[kind][ch]

    def set_irq(self, kind, ch, handler):
        self._pins[kind][ch].handler = handler

    def counter(self, kind, ch):
        return self._counters[kind][ch]

    def _decayed(self, ch, kind="rail"):
        a = self._held[kind][ch]
        if a and self.rail_tau_us:
            import math
            a = int(a * math.exp(-(self.now_us - self._held_t[kind][ch]) / self.rail_tau_us))
        return a

    def adc_read(self, ch, kind="rail"):
        if ch in self._dead[kind]:
            return 4095
        return self._decayed(ch, kind)

    def adc_reset(self, ch, kind="rail"):
        self._held[kind][ch] = 0

    def has_adc(self, kind, ch):
        return kind == "rail" or (kind == "strike" and self.strike_adc)

    # --- store / system ---
    def fs_root(self):
        return self._root

    def storage(self):
        if self._storage is None:
            self._storage = SimStorage(self._root)
        return self._storage

    def _nvs_path(self):
        return self._root + "/nvs.json"

    def _nvs_load(self):
        import json
        try:
            with open(self._nvs_path()) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def nvs_get(self, key, default=None):
        return self._nvs_load().get(key, default)

    def nvs_set(self, key, value):
        import json
        d = self._nvs_load()
        d[key] = int(value)
        tmp = self._nvs_path() + ".tmp"
        with open(tmp, "w") as f:
            json.dump(d, f)
        os.rename(tmp, self._nvs_path())

    def reset_cause(self):
        return self._reset_cause

    def watchdog(self, timeout_ms):
        if self.chip is not None:
            return self.chip.watchdog(timeout_ms)
        w = SimWDT(self, timeout_ms)
        self._wdts.append(w)
        return w

    def mem_free(self):
        try:
            import gc
            return gc.mem_free()
        except (ImportError, AttributeError):
            return 100000

    def unique_id(self):
        return bytes((0x5A, 0x11, 0, 0, (self.seed >> 8) & 255, self.seed & 255))

    def reset(self):
        if self.reset_hook is not None:
            return self.reset_hook()
        raise SystemExit("sim reset")

    def wlan(self):
        if not hasattr(self, "_wlan"):
            self._wlan = SimWLAN(self)
        return self._wlan

    def serial(self):
        return self._serial

    def resolve(self, host, port):
        if self.aps is not None and not self.wlan().isconnected():
            raise OSError("no Wi-Fi")
        if self.names is None or _is_address(host):
            return host
        a = self.names.get(host)
        if a is None:
            raise OSError("-202 name not known: " + host)
        return a

    def set_led(self, on):
        self.led.append((self.now_us, bool(on)))


def _is_address(host):
    parts = host.split(".")
    if len(parts) != 4:
        return False
    for p in parts:
        if not p.isdigit():
            return False
    return True

