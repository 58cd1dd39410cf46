"""Rail (cushion) channels and the strike sensor: comparator edge time from the IRQ,
amplitude from ADC1 in task code, per-channel threshold and refractory time
(live-configurable).

Interface (stable):
    Rail(hw, clock, emit, ch, threshold=200, refractory_us=50000, adc_delay_us=1000,
         code=None, kind="rail")
        emit  emit(t, kind_code, ch_code, val) e.g. EventRing.push; code = ring.RAIL | ch
        kind  the HAL input kind: "rail", or "strike" for a dedicated strike input
    Strike(hw, clock, emit, kind, ch, threshold=0, refractory_us=30000)
        the strike sensor (hardware/strike.md) on a rail input (kind "rail") or a dedicated
        one ("strike"): emits K_STRIKE with code CH_STRIKE, val = amp, or NO_AMP when the
        input has no ADC (hw.has_adc); then every comparator edge outside the refractory
        time is a strike and `threshold` does not apply
    .poll(now=None)     drain comparator edges; emits K_RAIL (val = amp) and K_LOST
    .pending_since()    time of the oldest edge not yet turned into an event (or skipped),
                        None when there is none (the node's watermark, node.py)
    .configure(threshold=None, refractory_us=None, adc_delay_us=None)   live
    .alive()            False when the input has an ADC and, with no edge waiting, it
                        reads DEAD_ADC or more: a peak hold that never discharges or an
                        input floating high (every hit would be full scale); an input
                        without an ADC cannot tell (True). The health a set on trial
                        must show (rbnode.updater)
    .close()
    counters: .events .below .suppressed .lost_edges .ring_overflow .irq_calls
    EDGES_PER_CHANNEL = 8

Front end (docs/firmware-sensing.md): piezo -> peak-hold envelope -> (a) ADC1 pin,
(b) comparator with hysteresis -> GPIO. The comparator watches the envelope, not the raw
ringing piezo, so one hit gives one rising edge (the IRQ queue of 8 is shared with the
beams: DESIGN §4). The handler notes ticks_us only. Task code waits adc_delay_us after
the edge (the peak-hold reaches the peak a few hundred µs after the comparator trips),
reads the amplitude, discharges the hold (hw.adc_reset), and emits `rail` if
amp >= threshold and the edge is at least refractory_us after the last emitted hit of
this channel (cushion ringing and the ball's double contact are not new hits). An edge
inside the refractory time is skipped without an ADC read. Counting `below` and
`suppressed` lets the installer tune both values.
"""

from rbnode.edges import EdgeChannel
from rbnode.ring import CH_STRIKE, K_RAIL, K_STRIKE, NO_AMP, RAIL

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):
        return x

_N = const(8)
_M = const(7)
_WRAP = const(0x3FFFFFFF)

EDGES_PER_CHANNEL = _N
DEAD_ADC = 4000  # of 4095: an idle peak hold this high is not discharging


class Rail(EdgeChannel):
    def __init__(self, hw, clock, emit, ch, threshold=200, refractory_us=50000,
                 adc_delay_us=1000, code=None, kind="rail"):
        EdgeChannel.__init__(self, hw, clock, emit, kind, ch,
                             (RAIL | ch) if code is None else code, _N)
        self._kcode = K_RAIL
        self._adc = hw.has_adc(kind, ch)
        self.threshold = threshold
        self.refractory_us = refractory_us
        self.adc_delay_us = adc_delay_us
        self._have_last = False
        self._last = 0
        self.events = 0
        self.below = 0
        self.suppressed = 0
        self._arm()

    def _on_edge(self, pin):
        # IRQ context: no allocation (see beam.py). Time only: the amplitude is read later.
        t = self._ticks()
        self._calls = (self._calls + 1) & _WRAP
        w = self._w
        if ((w - self._r) & _WRAP) >= _N:
            self._ovf = (self._ovf + 1) & _WRAP
            return
        self._et[w & _M] = t
        self._w = (w + 1) & _WRAP

    def configure(self, threshold=None, refractory_us=None, adc_delay_us=None):
        if threshold is not None:
            self.threshold = threshold
        if refractory_us is not None:
            self.refractory_us = refractory_us
        if adc_delay_us is not None:
            self.adc_delay_us = adc_delay_us

    def alive(self):
        # a read, no discharge: an edge whose handler has not run yet keeps its amplitude
        # (a hit under way reads high once: the next check sees the channel alive again)
        if not self._adc or self._r != self._w:
            return True
        return self._hw.adc_read(self.ch, self.kind) < DEAD_ADC

    def pending_since(self):
        """Task context. Edges the handler stored but poll has not consumed (an edge waits
        adc_delay_us for its amplitude): the oldest one's time, else None. The caller reads
        its clock BEFORE this: a handler that runs later stamps a later time."""
        r = self._r
        if r == self._w:
            return None
        return self._clock.extend(self._et[r & _M])

    def poll(self, now=None):
        clk = self._clock
        if now is None:
            now = clk.now()
        w = self._w
        cv = self._counted()
        r = self._r
        hw = self._hw
        kind = self.kind
        adc = self._adc
        while r != w:
            t = clk.extend(self._et[r & _M])
            if self._have_last and t - self._last < self.refractory_us:
                self.suppressed += 1
                if adc:
                    hw.adc_reset(self.ch, kind)  # drop the ringing's amplitude too
            elif adc and now - t < self.adc_delay_us:
                break  # peak hold not settled yet: keep the edge for the next poll
            else:
                if adc:
                    amp = hw.adc_read(self.ch, kind)
                    hw.adc_reset(self.ch, kind)
                else:
                    amp = NO_AMP  # comparator only: its trimmer is the threshold
                if not adc or amp >= self.threshold:
                    self._have_last = True
                    self._last = t
                    self.events += 1
                    self._emit(t, self._kcode, self.code, amp)
                else:
                    self.below += 1
            r = (r + 1) & _WRAP
            self._r = r
        self._report_lost(now, w, cv)


class Strike(Rail):
    def __init__(self, hw, clock, emit, kind, ch, threshold=0, refractory_us=30000,
                 adc_delay_us=1000):
        Rail.__init__(self, hw, clock, emit, ch, threshold, refractory_us, adc_delay_us,
                      CH_STRIKE, kind)
        self._kcode = K_STRIKE
