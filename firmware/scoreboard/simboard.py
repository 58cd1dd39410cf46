"""Run the scoreboard node under CPython on a file descriptor or a tty path.

    python firmware/scoreboard/simboard.py /dev/pts/7      # prints the rows when they change

`SimBoard(fd)` runs Board + SimHW in a thread (tests use it on the board end of a pty).
"""

import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from board import Board
from hw.sim import SimHW


class SimBoard:
    def __init__(self, fd, period=0.002, **kw):
        self.hw = SimHW(fd)
        self.board = Board(self.hw, **kw)
        self.period = period
        self.lock = threading.Lock()
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True, name="simboard")
        self.error = None

    def _run(self):
        try:
            while not self._stop.is_set():
                with self.lock:
                    self.board.poll()
                time.sleep(self.period)
        except Exception as e:  # kept for the tests to see, and re-raised
            self.error = e
            raise

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self._stop.set()
        self.thread.join(2)

    def text(self):
        """The rows as lit on the simulated chips."""
        with self.lock:
            return self.hw.chips.text()

    def segments(self):
        with self.lock:
            return self.hw.chips.segments()


def main(argv):
    import termios
    import tty
    fd = os.open(argv[1], os.O_RDWR | os.O_NOCTTY)
    try:
        tty.setraw(fd)
    except (OSError, termios.error):  # not a tty (a pipe, a file): raw mode does not apply
        pass
    sb = SimBoard(fd).start()
    last = None
    try:
        while True:
            t = sb.text()
            if t != last:
                print("\n".join("|%-8s|" % r for r in t) + "\n")
                last = t
            time.sleep(0.1)
    except KeyboardInterrupt:
        sb.stop()


if __name__ == "__main__":
    main(sys.argv)
