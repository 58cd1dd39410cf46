"""Health of the daemon's write path: the journal fault in force, the backoff before the next
try, and the counts that the stats file and the web heartbeat report.

A fault is `transient` when the environment caused it (SQLite's OperationalError: a full
disk, an I/O error, a locked file; any OSError): the same batch is tried again later, after
0.1 s, 0.2 s, ... up to BACKOFF_MAX_S. Anything else is the code failing on an input: the
daemon then isolates that input (railbird.daemon.worker, "A failed batch"). Imports only
the standard library.
"""

from __future__ import annotations

import logging
import sqlite3
import time

log = logging.getLogger("railbird.daemon")

BACKOFF_MIN_S = 0.1
BACKOFF_MAX_S = 5.0


def transient(e: BaseException) -> bool:
    return isinstance(e, (sqlite3.OperationalError, OSError))


def describe(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


class Faults:
    def __init__(self) -> None:
        self.error: str | None = None  # the fault in force (None: writes go through)
        self.since: float | None = None  # monotonic time it began
        self.failures = 0  # batches (or ticks) rolled back, since start
        self.set_aside = 0  # inputs the code could not handle, journalled as `failed`
        self.waiting = 0  # inputs waiting for the next try
        self.delay = 0.0
        self.retry_at = 0.0  # monotonic: no write before this

    def failed(self, e: BaseException, waiting: int) -> None:
        """A write failed and was rolled back; `waiting` inputs wait for the next try."""
        self.failures += 1
        self.waiting = waiting
        why = describe(e)
        if self.error is None:
            self.since = time.monotonic()
            log.error(
                "journal write failed: %s; the batch is rolled back, nothing acknowledged; "
                "retrying with backoff",
                why,
            )
        elif why != self.error:
            log.error("journal write still failing: %s", why)
        self.error = why
        self.delay = min(BACKOFF_MAX_S, max(BACKOFF_MIN_S, self.delay * 2))
        self.retry_at = time.monotonic() + self.delay

    def ok(self) -> None:
        if self.error is not None:
            log.warning(
                "journal writable again after %.1f s (%d failed tries); ingest resumed",
                time.monotonic() - self.since,
                self.failures,
            )
        self.error = self.since = None
        self.delay = 0.0
        self.waiting = 0
        self.retry_at = 0.0

    def stats(self) -> dict:
        return {
            "journal_error": self.error,
            "journal_failures": self.failures,
            "journal_waiting": self.waiting,
            "inputs_set_aside": self.set_aside,
        }
