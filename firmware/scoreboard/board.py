"""Scoreboard node core: frames in, digits out (common subset, no machine imports).

`hw` is the hardware layer (hw.esp32 on the ESP32, hw.sim under CPython):
  hw.read() -> bytes or None (never blocks)    hw.write(bytes)
  hw.ticks_ms() -> int    hw.ticks_diff(a, b) -> a - b    hw.ticks_add(a, n)    hw.boot_id() -> int
  hw.display: show(rows of segment bytes), brightness(0..15)
"""

from rbproto import sbframe
import segfont
import layout

FW = "1.0.0"


class Board:
    def __init__(self, hw, rows=4, cols=8, hello_ms=1000, link_timeout_ms=10000):
        self.hw = hw
        self.nrows = rows
        self.cols = cols
        self.hello_ms = hello_ms
        self.link_timeout_ms = link_timeout_ms
        self.parser = sbframe.Parser()
        self.boot = hw.boot_id()
        self.screen = {}
        self.have_screen = False
        self.ann = None  # (row2 text, row3 text, until ms)
        self.last = None  # (seq, kind, payload) of the last applied frame
        self.last_rx = None
        self.link_lost = True
        self.counters = {"frames": 0, "dups": 0, "naks": 0, "hellos": 0, "ignored": 0}
        self.next_hello = hw.ticks_ms()
        self.shown = None

    # -- frames ------------------------------------------------------------------
    def _send(self, seq, kind, payload=""):
        self.hw.write(sbframe.encode(seq, kind, payload))

    def hello(self, seq=0):
        self.counters["hellos"] += 1
        self._send(seq, sbframe.HELLO, sbframe.pack({
            "proto": sbframe.PROTO, "fw": FW, "rows": self.nrows, "cols": self.cols,
            "boot": self.boot}))

    def _handle(self, seq, kind, payload, now):
        if kind is None:
            self.counters["naks"] += 1
            self._send(0, sbframe.NAK, "e=" + payload)
            return
        if kind in (sbframe.ACK, sbframe.NAK, sbframe.HELLO):
            self.counters["ignored"] += 1  # our own kinds (an echoing line): never answer
            return
        self.last_rx = now
        self.counters["frames"] += 1
        if self.last == (seq, kind, payload):
            self.counters["dups"] += 1  # a retransmission after a lost ACK
            self._send(seq, sbframe.ACK)
            return
        try:
            f = sbframe.unpack(payload)
            if kind == sbframe.SCREEN:
                self.screen = f
                self.have_screen = True
            elif kind == sbframe.ANNOUNCE:
                d = int(f.get("d", "4000"))
                if d <= 0:
                    self.ann = None
                else:
                    self.ann = (f.get("t", ""), f.get("u", ""), self.hw.ticks_add(now, d))
            elif kind == sbframe.BRIGHT:
                self.hw.display.brightness(int(f.get("l", "8")))
            elif kind == sbframe.CLEAR:
                self.screen = {}
                self.ann = None
            elif kind == sbframe.QUERY:
                self.last = (seq, kind, payload)
                self.hello(seq)
                return
            elif kind != sbframe.PING:
                self.counters["naks"] += 1
                self._send(seq, sbframe.NAK, "e=kind")
                return
        except ValueError:
            self.counters["naks"] += 1
            self._send(seq, sbframe.NAK, "e=field")
            return
        self.last = (seq, kind, payload)
        self._send(seq, sbframe.ACK)

    # -- main loop step ------------------------------------------------------------
    def poll(self):
        hw = self.hw
        now = hw.ticks_ms()
        data = hw.read()
        if data:
            for seq, kind, payload in self.parser.feed(data):
                self._handle(seq, kind, payload, now)
        if not self.have_screen and hw.ticks_diff(now, self.next_hello) >= 0:
            self.hello()
            self.next_hello = hw.ticks_add(now, self.hello_ms)
        if self.ann is not None and hw.ticks_diff(now, self.ann[2]) >= 0:
            self.ann = None
        self.link_lost = (self.last_rx is None
                          or hw.ticks_diff(now, self.last_rx) > self.link_timeout_ms)
        self.draw()

    def texts(self):
        ann = None if self.ann is None else (self.ann[0], self.ann[1])
        return layout.rows(self.screen, ann, self.link_lost, self.have_screen, self.cols)

    def draw(self):
        segs = [segfont.render(t, self.cols) for t in self.texts()]
        if segs != self.shown:
            self.hw.display.show(segs)
            self.shown = segs
