"""Log lines that senders control, at a bounded rate.

The daemon logs every message it refuses, so an installer sees why (a node with old
firmware, a console with a wrong token). A broken or hostile client can send thousands a
second; a line each would fill the disk and bury everything else in the log. `RateLog`
lets `burst` lines of one kind through per `period_s`, counts the rest, and logs one summary
for them when the period is over ("suppressed 9,990 more 'rejected' line(s) in the last
10 s"): at the first line of that kind after it, at `flush` (the worker calls it as it
loops), or at `close`. So a kind gives at most burst + 1 lines per period, and nothing is
dropped silently: the stats and the journal still count every message.

State: one small record per kind; kinds are fixed strings in the code, never input.
"""

from __future__ import annotations

import logging
import threading
import time

BURST = 10
PERIOD_S = 10.0


class RateLog:
    def __init__(self, logger: logging.Logger, burst=BURST, period_s=PERIOD_S, clock=None):
        self.logger = logger
        self.burst = burst
        self.period_s = period_s
        self.clock = clock or time.monotonic
        self._lock = threading.Lock()
        self._kinds: dict[str, list] = {}  # kind -> [period start, lines, suppressed, level]

    def log(self, kind: str, level: int, msg: str, *args) -> bool:
        """Log `msg % args` unless `kind` has had its `burst` this period; True if logged."""
        now = self.clock()
        with self._lock:
            st = self._kinds.get(kind)
            if st is None or now - st[0] >= self.period_s:
                if st is not None:
                    self._summary(kind, st, now)
                st = self._kinds[kind] = [now, 0, 0, level]
            if st[1] >= self.burst:
                st[2] += 1
                st[3] = max(st[3], level)
                return False
            st[1] += 1
        self.logger.log(level, msg, *args)
        return True

    def flush(self) -> None:
        """The summaries of the periods that are over."""
        now = self.clock()
        with self._lock:
            for kind, st in self._kinds.items():
                if st[2] and now - st[0] >= self.period_s:
                    self._summary(kind, st, now)
                    st[0], st[1], st[2] = now, 0, 0

    def close(self) -> None:
        """Every summary still owed (the daemon stops)."""
        now = self.clock()
        with self._lock:
            for kind, st in self._kinds.items():
                if st[2]:
                    self._summary(kind, st, now)
                    st[2] = 0

    def _summary(self, kind: str, st: list, now: float) -> None:
        if st[2]:
            self.logger.log(
                st[3],
                "suppressed %d more %r line(s) in the last %.0f s (at most %d per %.0f s; "
                "the stats count them all)",
                st[2],
                kind,
                now - st[0],
                self.burst,
                self.period_s,
            )
