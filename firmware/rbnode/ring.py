"""Bounded, preallocated RAM event ring (MicroPython's asyncio has no Queue: docs/architecture.md,
"Target facts").

Interface (stable; the node app codes against it):
    EventRing(capacity=512, seq0=0)
    .push(t, kind, ch, val) -> seq (int) or -1 when full (newest dropped, .dropped += 1)
    .peek(i=0) / .get(i)   -> (seq, t, kind, ch, val) of the i-th oldest entry (IndexError)
    .pop(n=1)              -> number removed from the oldest end
    len(ring), .capacity, .dropped, .next_seq (settable: seq of the next push),
    .first_seq()           -> seq of the oldest entry (== next_seq when empty)
    .clear()
Kind codes K_DROP K_CUE K_RAIL K_JAM K_LOST K_STRIKE and KIND_NAMES map to SPEC.md `kind`.
Channel codes: a beam channel c is `c`, the cue detector is CH_CUE, a rail channel c is
`RAIL | c`, the strike sensor CH_STRIKE (only `lost` needs the distinction; see
docs/firmware-sensing.md). A strike without an amplitude (a comparator-only input) has
val NO_AMP.

Storage: t as two array('I') halves (hi, lo), kind/ch as array('B'), val as array('I');
14 bytes per event, so 512 events = 7168 bytes of payload arrays (+~5 small headers).
seq is not stored: push assigns seq only on success, so entries in the ring always carry
consecutive seqs and seq(i) = next_seq - len + i.

Overflow policy: the ring itself drops the NEWEST event and counts `dropped` (it never
overwrites data that was not yet delivered). The node app, when a flash spill is
available, should move the oldest entries to the spill before pushing (so RAM holds the
newest and the spill keeps order); `dropped` then only counts what neither could keep.
push/pop are task code (they may allocate a long int for t on MicroPython; never call
them from an IRQ handler).
"""

from array import array

K_DROP = 1
K_CUE = 2
K_RAIL = 3
K_JAM = 4
K_LOST = 5
K_STRIKE = 6
K_BALL = 7  # a colour-station read: ch = the ball's number, val = BALL_* below
# a `ball` event's val: the confidence in bits 0-6, the pass's packed median reflectances
# (rbnode.colour.rgb_of) in bits 7-27 when bit 28 is set
BALL_CONF = 0x7F
BALL_RGB_SHIFT = 7
BALL_HAS_RGB = 1 << 28
KIND_NAMES = (None, "drop", "cue", "rail", "jam", "lost", "strike", "ball")

RAIL = 0x40  # channel-code flag: rail channel (ch = RAIL | rail_index)
CH_CUE = 0x20  # channel code of the cue-ball detector (a beam without a pocket)
CH_STRIKE = 0x80  # channel code of the strike sensor (test it before the RAIL flag)
NO_AMP = 0xFFFF  # val of an event whose input has no ADC (never a 12-bit amplitude)

_M32 = 0xFFFFFFFF


class EventRing:
    def __init__(self, capacity=512, seq0=0):
        if capacity < 1:
            raise ValueError("capacity")
        self.capacity = capacity
        # array("I", range(n)), not array("I", bytes(4 * n)): MicroPython 1.27 measured
        # twice the memory for the buffer-initialised form (4160 vs 2096 B for n = 512).
        self._thi = array("I", range(capacity))
        self._tlo = array("I", range(capacity))
        self._kind = bytearray(capacity)
        self._ch = bytearray(capacity)
        self._val = array("I", range(capacity))
        self._head = 0  # index of the oldest entry
        self._n = 0
        self.dropped = 0
        self.next_seq = seq0

    def __len__(self):
        return self._n

    def first_seq(self):
        return self.next_seq - self._n

    def push(self, t, kind, ch, val):
        n = self._n
        if n >= self.capacity:
            self.dropped += 1
            return -1
        j = self._head + n
        if j >= self.capacity:
            j -= self.capacity
        self._thi[j] = (t >> 32) & _M32
        self._tlo[j] = t & _M32
        self._kind[j] = kind
        self._ch[j] = ch
        self._val[j] = val & _M32
        self._n = n + 1
        seq = self.next_seq
        self.next_seq = seq + 1
        return seq

    def get(self, i):
        if i < 0 or i >= self._n:
            raise IndexError("ring index")
        j = self._head + i
        if j >= self.capacity:
            j -= self.capacity
        return (self.next_seq - self._n + i, (self._thi[j] << 32) | self._tlo[j],
                self._kind[j], self._ch[j], self._val[j])

    def peek(self, i=0):
        return self.get(i)

    def pop(self, n=1):
        if n > self._n:
            n = self._n
        if n <= 0:
            return 0
        h = self._head + n
        if h >= self.capacity:
            h -= self.capacity
        self._head = h
        self._n -= n
        return n

    def clear(self):
        self._head = 0
        self._n = 0
