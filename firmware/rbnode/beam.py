"""Pocket beams and the cue-ball detector: edge capture in the IRQ handler, debouncing,
classification and lost-edge detection in task code.

Interface (stable):
    Beam(hw, clock, emit, ch, kind="beam", code=None, debounce_us=2000, gap_us=None,
         jam_us=2000000)
        kind  "beam" (pocket beam ch -> emits K_DROP) or "cue" (emits K_CUE)
        emit  emit(t, kind_code, ch_code, val) e.g. EventRing.push (task context only)
        code  channel code put in events (default ch, or ring.CH_CUE for the cue)
    .poll(now=None)       drain edges, emit drop/cue/jam/lost; call every few ms
    .configure(debounce_us=None, gap_us=None, jam_us=None)  live
    .close()              remove the IRQ handler
    .shown()              2 jammed (until clear), 1 blocked, 0 clear: for the status LED
    .alive()              False while the beam has never read clear in this boot or a jam
                          is declared (an emitter out, a receiver unplugged): the health
                          a set on trial must show (rbnode.updater)
    .pending_since()      the earliest time an event still to come may carry: the start of
                          a run not yet emitted (blocked, jammed or in its debounce gap: the
                          drop is stamped at the start and emitted when the beam clears),
                          or an edge not yet polled; None when clear and drained (the node's
                          watermark, node.py)
    counters: .events .glitches .jams .lost_edges .ring_overflow .irq_calls .stale_edges
              (cumulative; stale_edges/2 ~ pulses, blocked or clear, that ended before
              their first handler ran: hidden balls, or hidden gaps that merged two balls)
    EDGES_PER_CHANNEL = 16 edge slots per channel

IRQ path (`_on_edge`, bound once at init): reads ticks_us and the pin level and stores
them in this channel's preallocated ring (array('I') + bytearray). No allocation, no float,
only small ints (ticks < 2**30, counters masked to 30 bits) -- ESP32 soft IRQs may still
run with the heap locked during GC. If the ring is full the edge is counted and dropped.

Debounce (docs/firmware-sensing.md derives the numbers): a "run" starts at a blocked edge;
a clear gap shorter than gap_us (default = debounce_us = 2 ms) is merged into the run;
once the beam has been clear for gap_us the run ends, and it becomes one event with
t = run start, dur = run span (first blocked edge to last clear edge), unless the beam
was blocked for less than debounce_us in total over the run (chatter or a glitch:
counted in .glitches, dropped). A run blocked for jam_us emits one `jam` (t = run start,
dur = blocked time at declaration); when it finally clears, the `drop` follows with the
full dur.

A VM stall longer than a ball hides pulses (stale_edges), shortens balls into glitches or
merges balls: docs/firmware-sensing.md, "VM stalls longer than a ball".

Lost edges (DESIGN §4: the soft-IRQ queue holds 8; overflowing pin edges vanish): each
poll compares the hardware counter (PCNT, both edges) with the edges the handler stored.
In-flight handlers make a transient positive difference, so a deficit is confirmed with a
probe queued behind them (edges.LostCheck); a confirmed loss emits `lost` (val = n) and the
beam state is resynced from the pin level.
"""

from rbnode.edges import EdgeChannel
from rbnode.ring import CH_CUE, K_CUE, K_DROP, K_JAM

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):
        return x

_N = const(16)  # edge slots per channel (power of two); a ball makes 2 edges
_M = const(15)
_WRAP = const(0x3FFFFFFF)  # keep IRQ counters < 2**30: small ints, no allocation

EDGES_PER_CHANNEL = _N

_CLEAR = const(0)
_BLOCKED = const(1)
_GAP = const(2)


class Beam(EdgeChannel):
    def __init__(self, hw, clock, emit, ch, kind="beam", code=None, debounce_us=2000,
                 gap_us=None, jam_us=2000000):
        if code is None:
            code = CH_CUE if kind == "cue" else ch
        EdgeChannel.__init__(self, hw, clock, emit, kind, ch, code, _N)
        self._kcode = K_CUE if kind == "cue" else K_DROP
        self.glitch_us = debounce_us
        self.gap_us = debounce_us if gap_us is None else gap_us
        self.jam_us = jam_us
        self._blocked = hw.BEAM_BLOCKED
        self._pin = hw.pin(kind, ch)
        self._el = bytearray(_N)  # pin level of each edge, beside its time in _et
        # Task-side state.
        self._st = _CLEAR
        self._start = 0
        self._seg = 0
        self._blk = 0  # blocked time summed over the run's segments
        self._gap_t = 0
        self._jam_sent = False
        self.events = 0
        self.glitches = 0
        self.jams = 0
        self.stale_edges = 0
        self._seen_clear = self._pin.value() != self._blocked
        if self._pin.value() == self._blocked:  # blocked at boot: a jam if it stays
            self._begin(clock.now())
        self._arm()

    # ---- IRQ context: no allocation ----
    def _on_edge(self, pin):
        t = self._ticks()
        self._calls = (self._calls + 1) & _WRAP
        w = self._w
        if ((w - self._r) & _WRAP) >= _N:
            self._ovf = (self._ovf + 1) & _WRAP
            return
        j = w & _M
        self._et[j] = t
        self._el[j] = pin.value()
        self._w = (w + 1) & _WRAP

    # ---- task context ----
    def configure(self, debounce_us=None, gap_us=None, jam_us=None):
        if debounce_us is not None:
            self.glitch_us = debounce_us
            if gap_us is None:
                gap_us = debounce_us
        if gap_us is not None:
            self.gap_us = gap_us
        if jam_us is not None:
            self.jam_us = jam_us

    def shown(self):
        """For the status LED: 2 while a declared jam has not cleared, 1 while blocked,
        else 0."""
        st = self._st
        if st == _CLEAR:
            return 0
        if self._jam_sent:
            return 2
        return 1 if st == _BLOCKED else 0

    def alive(self):
        return self._seen_clear and not self._jam_sent

    def pending_since(self):
        # task context; the caller reads its clock first (see Rail.pending_since)
        p = None
        if self._st != _CLEAR:
            p = self._start
        r = self._r
        if r != self._w:
            t = self._clock.extend(self._et[r & _M])
            if p is None or t < p:
                p = t
        return p

    def poll(self, now=None):
        clk = self._clock
        if now is None:
            now = clk.now()
        # Snapshot AFTER `now`: every handler that ran before `now` is in [r, w).
        w = self._w
        cv = self._counted()
        r = self._r
        et = self._et
        el = self._el
        blk = self._blocked
        while r != w:
            j = r & _M
            t = clk.extend(et[j])
            b = el[j] == blk
            r = (r + 1) & _WRAP
            self._r = r  # free the slot at once
            self._level(t, b)
        self._timers(now)
        if self._report_lost(now, w, cv):
            # Edges are missing, so the level sequence may be wrong: trust the pin now.
            if self._r == self._w:
                b = self._pin.value() == blk
                if b != (self._st == _BLOCKED):
                    self._level(now, b)

    def _level(self, t, blocked):
        st = self._st
        if blocked:
            if st == _CLEAR:
                self._begin(t)
            elif st == _GAP:
                if t - self._gap_t < self.gap_us:
                    self._st = _BLOCKED  # short gap: bounce, same ball
                    self._seg = t
                else:
                    self._finish()
                    self._begin(t)
            else:
                # "Blocked" while blocked: a clear gap ended before its handler ran (the
                # VM stalled across it), so the balls on either side merge into one run.
                self.stale_edges += 1
        elif st == _BLOCKED:
            self._seen_clear = True
            self._gap_t = t
            self._blk += t - self._seg
            self._st = _GAP
        else:
            self._seen_clear = True
            # A "clear" edge while clear: the pulse ended before its handler ran (a glitch
            # shorter than the IRQ latency, or a ball inside a long VM stall). Its timing
            # is gone; count it so status shows it (2 stale edges per hidden pulse).
            self.stale_edges += 1

    def _begin(self, t):
        self._st = _BLOCKED
        self._start = t
        self._seg = t
        self._blk = 0
        self._jam_sent = False

    def _finish(self):
        self._st = _CLEAR
        dur = self._gap_t - self._start
        if self._blk < self.glitch_us and not self._jam_sent:
            self.glitches += 1
            return
        self.events += 1
        self._emit(self._start, self._kcode, self.code, dur)

    def _timers(self, now):
        st = self._st
        if st == _GAP:
            if now - self._gap_t >= self.gap_us:
                self._finish()
        elif st == _BLOCKED and not self._jam_sent:
            dur = now - self._start
            if dur >= self.jam_us:
                self._jam_sent = True
                self.jams += 1
                self._emit(self._start, K_JAM, self.code, dur)
