"""What the edge-capturing channels (pocket beams and the cue detector in beam.py, rails in
rail.py) share: the preallocated edge ring their IRQ handlers fill, its counters, and the
lost-edge check every poll ends with.

    EdgeChannel  base class; the subclass defines _on_edge (IRQ context) and poll
    LostCheck    pulse-counter cross-check that finds edges the IRQ path lost
    Barrier      the probe LostCheck queues behind in-flight handlers (one per board)

The IRQ handlers stay in the subclasses, each written out for its own ring: a shared
handler would cost attribute lookups or a branch on every edge.
"""

from array import array

from rbnode.ring import K_LOST

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):
        return x

_WRAP = const(0x3FFFFFFF)  # keep IRQ counters < 2**30: small ints, no allocation


class Barrier:
    """One outstanding probe per board, queued with hw.schedule() into the SAME FIFO as
    the pin handlers (mp_sched_schedule on ESP32). When probe k has run, every handler
    queued before probe k was queued has run or was dropped. Only one probe is ever in
    the queue, so probes take at most one of its 8 slots (DESIGN §4)."""

    def __init__(self, hw):
        self._sched = hw.schedule
        self.done = 0
        self.pending = False
        self._cb = self._ran  # bound once

    def _ran(self, _arg):
        # Scheduler context: no allocation.
        self.done += 1
        self.pending = False

    def request(self):
        """Return the `done` value that proves a probe queued after this call has run,
        or -1 if the queue is full (try again next poll)."""
        if self.pending:
            return self.done + 2  # the queued one predates this call: need the next
        if self._sched(self._cb, 0):
            self.pending = True
            return self.done + 1
        return -1

    def kick(self):
        if not self.pending:
            if self._sched(self._cb, 0):
                self.pending = True


def barrier(hw):
    b = getattr(hw, "_rb_barrier", None)
    if b is None:
        b = Barrier(hw)
        hw._rb_barrier = b
    return b


class LostCheck:
    """Pulse-counter cross-check shared by beams and rails (task code).

    A deficit (counted > stored edges) is either real (handler dropped: queue overflow,
    edge ring full) or in flight (handler queued, not run yet: the VM may be busy with a
    long flash write). Instead of a guessed timeout, the deficit counted at time A is
    confirmed once a Barrier probe queued after A has run: every handler for an edge
    before A has then run or was lost, so counted(A) - stored(now) is a lost count
    (never too high; if too low, the rest shows up at the next check).
    """

    def __init__(self, hw, counter):
        self.counter = counter
        self._bar = barrier(hw)
        self._last = counter.value() if counter is not None else 0
        self._counted = 0
        self._seen = 0  # cumulative stored edges
        self._w_last = 0
        self._acc = 0  # deficit already reported (or absorbed)
        self._target = 0  # barrier generation to wait for; 0 = idle
        self._pcount = 0

    def check(self, w, counter_value):
        """w: the channel's stored-edge count (src._w) read BEFORE counter_value.
        Returns the number of edges to report as lost now (usually 0)."""
        c = self.counter
        if c is None:
            return 0
        self._seen += (w - self._w_last) & _WRAP
        self._w_last = w
        self._counted += (counter_value - self._last) % c.modulus
        self._last = counter_value
        n = 0
        bar = self._bar
        if self._target > 0:
            if bar.done >= self._target:
                d = self._pcount - self._seen - self._acc
                if d > 0:
                    n = d
                    self._acc += d
                self._target = 0
            elif not bar.pending:
                bar.kick()  # an earlier request failed or was the older probe
        d = self._counted - self._seen - self._acc
        if d < 0:
            # Stored more than counted: the PCNT glitch filter ate a pulse the GPIO saw.
            self._acc += d
        elif d > 0 and self._target == 0:
            t = bar.request()
            if t > 0:
                self._pcount = self._counted
                self._target = t
        return n


class EdgeChannel:
    """Base of Beam and Rail. The subclass's _on_edge stores each edge's ticks_us in
    _et[_w % slots] and advances _w (masked to 30 bits); its poll drains [_r, _w)."""

    def __init__(self, hw, clock, emit, kind, ch, code, slots):
        self._hw = hw
        self._clock = clock
        self._emit = emit
        self.kind = kind
        self.ch = ch
        self.code = code
        # IRQ-side state, preallocated.
        self._et = array("I", range(slots))  # see ring.py on range()
        self._w = 0
        self._r = 0
        self._calls = 0
        self._ovf = 0
        self._ticks = hw.ticks_us  # bound once: the handler does no attribute lookups
        self.lost_edges = 0
        self._lost = LostCheck(hw, hw.counter(kind, ch))

    def _arm(self):
        """Install the IRQ handler; call once the subclass's state is complete."""
        self._irq = self._on_edge  # bound method allocated here, not per edge
        self._hw.set_irq(self.kind, self.ch, self._irq)

    @property
    def ring_overflow(self):
        return self._ovf

    @property
    def irq_calls(self):
        return self._calls

    def close(self):
        self._hw.set_irq(self.kind, self.ch, None)

    def _counted(self):
        """The pulse counter now; read it AFTER _w so that counted >= stored."""
        c = self._lost.counter
        return c.value() if c is not None else 0

    def _report_lost(self, now, w, counted):
        """End of poll: w and counted as snapshotted at its start. Emits `lost` and returns
        the number of edges confirmed lost now (usually 0)."""
        n = self._lost.check(w, counted)
        if n:
            self.lost_edges += n
            self._emit(now, K_LOST, self.code, n)
        return n
