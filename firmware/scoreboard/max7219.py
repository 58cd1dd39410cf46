"""Driver for a daisy chain of MAX7219 8-digit 7-segment modules (common subset).

`spi` needs write(bytes); `cs` needs value(v). Device 0 is the first in the chain (its DIN
is wired to the MCU) and shows row 0 (the top row). Within a module, digit register 1 is the
rightmost digit (as on the common 8-digit modules), so text column c goes to register 8 - c.
A register write to all devices shifts one 16-bit word per device while CS is low; the word
shifted first ends up in the last device.
"""

REG_DIGIT0 = 0x01
REG_DECODE = 0x09
REG_INTENSITY = 0x0A
REG_SCANLIMIT = 0x0B
REG_SHUTDOWN = 0x0C
REG_TEST = 0x0F


class Max7219Chain:
    def __init__(self, spi, cs, count=4, digits=8):
        self.spi = spi
        self.cs = cs
        self.count = count
        self.digits = digits
        self._buf = bytearray(2 * count)
        self.cs.value(1)
        self.init()

    def _write(self, reg, values):
        # values[i] is the data for device i; device count-1 is shifted first
        b = self._buf
        n = self.count
        for i in range(n):
            j = 2 * (n - 1 - i)
            b[j] = reg
            b[j + 1] = values[i] & 0xFF
        self.cs.value(0)
        self.spi.write(b)
        self.cs.value(1)

    def _all(self, reg, value):
        self._write(reg, [value] * self.count)

    def init(self, intensity=8):
        self._all(REG_TEST, 0)
        self._all(REG_SCANLIMIT, self.digits - 1)
        self._all(REG_DECODE, 0)
        self._all(REG_INTENSITY, intensity)
        for d in range(self.digits):
            self._all(REG_DIGIT0 + d, 0)
        self._all(REG_SHUTDOWN, 1)

    def brightness(self, level):
        self._all(REG_INTENSITY, max(0, min(15, level)))

    def show(self, rows):
        """rows: one list of `digits` segment bytes per device, left to right."""
        for d in range(self.digits):
            col = self.digits - 1 - d
            self._write(REG_DIGIT0 + d, [rows[i][col] if i < len(rows) else 0
                                         for i in range(self.count)])
