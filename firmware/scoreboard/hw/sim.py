"""Simulated hardware for the scoreboard node under CPython (tests and demo).

SimMax7219Chain models the chips: it decodes the SPI words the real driver shifts out, so
the driver itself is exercised, and keeps each chip's registers; `segments()` and `text()`
read the digits back as they would be lit. SimHW talks to a file descriptor (the board end
of a pseudo-terminal) without blocking, as the UART would.
"""

import errno
import os
import time

import segfont
from max7219 import Max7219Chain


class SimPin:
    def __init__(self, chain):
        self.chain = chain
        self.v = 1

    def value(self, v=None):
        if v is None:
            return self.v
        if self.v == 0 and v:
            self.chain._latch()  # rising CS edge latches the shift registers
        self.v = v


class SimMax7219Chain:
    """The chips behind the SPI bus: registers per device."""

    def __init__(self, count=4, digits=8):
        self.count = count
        self.digits = digits
        self.regs = [[0] * 16 for _ in range(count)]
        self._shift = bytearray()
        self.cs = SimPin(self)
        self.words = 0

    def write(self, data):  # SPI
        if self.cs.v != 0:
            return  # chips ignore clocks while CS is high
        self._shift.extend(data)

    def _latch(self):
        b = bytes(self._shift)
        self._shift = bytearray()
        words = [(b[i], b[i + 1]) for i in range(0, len(b) - 1, 2)]
        self.words += len(words)
        last = words[-self.count:]
        # the word shifted first travelled furthest: with exactly `count` words,
        # words[0] is in device count-1 and words[-1] in device 0
        for j, (reg, val) in enumerate(last):
            dev = len(last) - 1 - j
            if reg <= 0x0F:
                self.regs[dev][reg] = val

    def segments(self):
        """Lit segments, one list per device (row), left to right."""
        out = []
        for r in self.regs:
            if r[0x0C] == 0:  # shutdown
                out.append([0] * self.digits)
            elif r[0x0F]:  # display test: all on
                out.append([0xFF] * self.digits)
            else:
                n = min(self.digits, r[0x0B] + 1)
                out.append([r[1 + self.digits - 1 - c] if self.digits - 1 - c < n else 0
                            for c in range(self.digits)])
        return out

    def text(self):
        return [segfont.to_text(s) for s in self.segments()]


class SimHW:
    def __init__(self, fd=None, count=4, digits=8, boot=None):
        self.fd = fd
        self.chips = SimMax7219Chain(count, digits)
        self.display = Max7219Chain(self.chips, self.chips.cs, count, digits)
        self._boot = boot if boot is not None else int.from_bytes(os.urandom(2), "big")
        self._t0 = time.monotonic()
        self.tx_lost = 0
        if fd is not None:
            os.set_blocking(fd, False)

    def boot_id(self):
        return self._boot

    def ticks_ms(self):
        return int((time.monotonic() - self._t0) * 1000)

    def ticks_diff(self, a, b):
        return a - b

    def ticks_add(self, a, n):
        return a + n

    def read(self):
        try:
            return os.read(self.fd, 512) or None
        except BlockingIOError:
            return None
        except OSError as e:  # EIO: nobody has the other end open (cable unplugged)
            if e.errno == errno.EIO:
                return None
            raise

    def write(self, data):
        try:
            os.write(self.fd, data)
        except OSError:
            self.tx_lost += len(data)  # like a UART with nobody listening
