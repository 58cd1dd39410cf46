"""The daemon process's garbage collection: long pauses kept out of scoring.

CPython's full collection walks every object the process tracks, with every thread
stopped. The venue's state (each match's undo history with its inputs, the timelines, the
clock models) is most of them and lives for hours: at 1,000 tables a full collection came
every 10-20 s and stopped the daemon for 0.1-0.4 s, growing with the heap, and the shots
that were to close then closed that much later (make bench-scale, docs/performance.md).

`GcPolicy.start()`, once the daemon is up (its tables rebuilt, its outputs started):
what the start built is collected once and frozen at once, not `FREEZE_EVERY_S` later, so
the first minute after a restart, when every referee signs in again, has no full collection
of it either (issue 23: in the first 30 s of `make bench-history` full collections of 95
and 162 ms stopped the web server's loop while sign-ins waited on it).

`GcPolicy.step()`, called often from `railbird run`'s main loop: every `FREEZE_EVERY_S`
the objects alive are frozen (`gc.freeze`: no collection walks them again), so a full
collection walks only what is newer. The state is plain acyclic data, freed by reference
counting when it is replaced; what a freeze can keep is cyclic garbage of objects alive at
that moment (a finished request's frames, say), so every `THAW_EVERY_S` everything is
thawed and collected once (one full pause an hour) and frozen again.

`paused()`: no automatic collection inside, for bounded work that allocates mostly what it
keeps (a restart's rebuild from a snapshot, a snapshot's dump). A collection in the middle of
it walks every object made so far, again and again: a restart on a 1,000,000-event journal
took 6.5 s with collections and 2.3-2.9 s without (docs/performance.md).
"""

from __future__ import annotations

import contextlib
import gc
import logging
import time
from collections.abc import Callable, Iterator

log = logging.getLogger("railbird.daemon")

FREEZE_EVERY_S = 60.0
THAW_EVERY_S = 3600.0


class GcPolicy:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.frozen_at = self.thawed_at = clock()
        self.freezes = 0
        self.thaws = 0

    def start(self) -> None:
        t0 = time.perf_counter()
        found = gc.collect()
        gc.freeze()
        self.frozen_at = self.clock()
        log.info(
            "garbage collection at the start: %d unreachable object(s) in %.3f s; %d frozen",
            found,
            time.perf_counter() - t0,
            gc.get_freeze_count(),
        )

    def step(self) -> None:
        now = self.clock()
        if now - self.thawed_at >= THAW_EVERY_S:
            t0 = time.perf_counter()
            gc.unfreeze()
            found = gc.collect()
            gc.freeze()
            self.thawed_at = self.frozen_at = now
            self.thaws += 1
            log.info(
                "garbage collection: %d unreachable object(s) in %.3f s; %d frozen",
                found,
                time.perf_counter() - t0,
                gc.get_freeze_count(),
            )
        elif now - self.frozen_at >= FREEZE_EVERY_S:
            gc.freeze()
            self.frozen_at = now
            self.freezes += 1


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Automatic collection off inside; on again after, if it was on before."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
