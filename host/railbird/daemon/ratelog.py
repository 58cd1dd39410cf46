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
from collections.abc import Callable
from dataclasses import dataclass

BURST = 10
PERIOD_S = 10.0


@dataclass(slots=True)
class _Period:
    """One kind's current period."""

    start: float  # clock time it began
    lines: int  # lines logged in it
    suppressed: int  # lines counted, not logged
    level: int  # the summary's: the highest of the first line's and those suppressed


class RateLog:
    def __init__(
        self,
        logger: logging.Logger,
        burst: int = BURST,
        period_s: float = PERIOD_S,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.logger = logger
        self.burst = burst
        self.period_s = period_s
        self.clock = clock or time.monotonic
        self._lock = threading.Lock()
        self._kinds: dict[str, _Period] = {}

    def log(self, kind: str, level: int, msg: str, *args: object) -> bool:
        """Log `msg % args` unless `kind` has had its `burst` this period; True if logged."""
        now = self.clock()
        with self._lock:
            st = self._kinds.get(kind)
            if st is None or now - st.start >= self.period_s:
                if st is not None:
                    self._summary(kind, st, now)
                st = self._kinds[kind] = _Period(now, 0, 0, level)
            if st.lines >= self.burst:
                st.suppressed += 1
                st.level = max(st.level, level)
                return False
            st.lines += 1
        self.logger.log(level, msg, *args)
        return True

    def flush(self) -> None:
        """The summaries of the periods that are over."""
        now = self.clock()
        with self._lock:
            for kind, st in self._kinds.items():
                if st.suppressed and now - st.start >= self.period_s:
                    self._summary(kind, st, now)
                    st.start, st.lines, st.suppressed = now, 0, 0

    def close(self) -> None:
        """Every summary still owed (the daemon stops)."""
        now = self.clock()
        with self._lock:
            for kind, st in self._kinds.items():
                if st.suppressed:
                    self._summary(kind, st, now)
                    st.suppressed = 0

    def _summary(self, kind: str, st: _Period, now: float) -> None:
        if st.suppressed:
            self.logger.log(
                st.level,
                "suppressed %d more %r line(s) in the last %.0f s (at most %d per %.0f s; "
                "the stats count them all)",
                st.suppressed,
                kind,
                now - st.start,
                self.burst,
                self.period_s,
            )
