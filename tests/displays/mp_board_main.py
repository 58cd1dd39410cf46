# Runs in real MicroPython (WebAssembly): the scoreboard core renders frames onto the
# simulated MAX7219 chain; prints one line per check for tests/displays/test_scoreboard_mp.py.
from board import Board
from hw.sim import SimMax7219Chain
from max7219 import Max7219Chain
from rbproto import sbframe


class MemHW:
    def __init__(self):
        self.rx = b""
        self.tx = b""
        self.t = 0
        self.chips = SimMax7219Chain(4, 8)
        self.display = Max7219Chain(self.chips, self.chips.cs, 4, 8)

    def boot_id(self):
        return 42

    def ticks_ms(self):
        return self.t

    def ticks_diff(self, a, b):
        return a - b

    def ticks_add(self, a, n):
        return a + n

    def read(self):
        d = self.rx
        self.rx = b""
        return d or None

    def write(self, d):
        self.tx += d


hw = MemHW()
b = Board(hw)
b.poll()
print("BOOT", hw.chips.text()[0], b"H:" in hw.tx)
hw.tx = b""
hw.rx = sbframe.encode(
    1,
    "S",
    sbframe.pack(
        {
            "g": "141",
            "a": "87",
            "b": "-2",
            "t": "b",
            "run": "14",
            "fa": "0",
            "fb": "2",
            "ha": "31",
            "hb": "9",
        }
    ),
)
b.poll()
print("ROWS", "|".join(hw.chips.text()))
print("ACK", hw.tx == sbframe.encode(1, "K"))
hw.rx = sbframe.encode(2, "A", "t=SPOT 10;d=500")
b.poll()
print("ANN", hw.chips.text()[2])
hw.t = 600
b.poll()
print("AFTER", hw.chips.text()[2])
