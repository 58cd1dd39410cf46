"""Per-table tick deadlines (issue 16, item 2: time advances under load).

Time alone changes a table only while something waits on it: events in the reorder window,
an open shot, a node holding the table (docs/host.md "Per-node watermarks"), a running
shot clock (core/shotclock.py). `deadline` is
the earliest host time at which `Pipeline.tick` can release, close or expire something on
one table; `Timers` keeps one deadline per table in a heap. The worker ticks exactly the
tables that are due, when they are due, however full its inbox is, and a quiet table costs
nothing: the work is per due table, never per table of the venue.
"""

from __future__ import annotations

import heapq

from railbird.core.pipeline import Pipeline

# A table's key in the pipeline and here: (venue, table id).
TableKey = tuple[str, str]

# A table with anything in play is ticked at least this often, whatever `deadline` says:
# a bound on the harm should the pipeline gain a timed rule this module does not know.
RECHECK_US = 1_000_000
# Never due again sooner than this after a tick (no spinning on a deadline in the past).
MIN_GAP_US = 1_000


def deadline(pipeline: Pipeline, key: TableKey, now: int) -> int | None:
    """Host µs at which a tick can next change table `key` (None: only input can). Mirrors
    `Pipeline.tick`: the release point is now - window (`Pipeline.release_window`), capped at
    known - window of every held node; a hold expires `max_hold_ms` after it began."""
    t = pipeline.tables.get(key)
    if t is None:
        return None
    cfg = pipeline.cfg
    window = pipeline.release_window(t)  # shorter on a table whose nodes send watermarks
    due: list[int] = []
    cap: int | None = None
    blocked = False  # a held node with no known time holds everything but its expiry
    for m in t.marks.values():
        if not m.holding:
            continue
        due.append(m.since + cfg.max_hold_us)
        if m.known is None:
            blocked = True
        elif cap is None or m.known - cfg.window_us < cap:
            cap = m.known - cfg.window_us
    if not blocked:
        heap = t.timeline._heap  # (t, node, boot, seq, event), earliest first
        if heap and (cap is None or cap >= heap[0][0]):
            due.append(heap[0][0] + window)
        cur = t.assembler.cur
        if cur is not None:
            close = cur.last + t.assembler.quiet_us(cur)
            if cap is None or cap >= close:
                due.append(close + window)
        clock = t.clock
        # a running shot clock runs out when the release point passes its deadline
        if (
            clock is not None
            and clock.status == "running"
            and clock.deadline is not None
            and (cap is None or cap >= clock.deadline)
        ):
            due.append(clock.deadline + window)
    in_play = due or t.timeline.pending or t.assembler.open
    if not in_play:
        return None
    return max(min([*due, now + RECHECK_US]), now + MIN_GAP_US)


class Timers:
    """One deadline per table; `due(now)` pops the tables whose time has come."""

    def __init__(self) -> None:
        self._at: dict[TableKey, int] = {}  # key -> deadline
        # (deadline, key); entries superseded in _at are skipped
        self._heap: list[tuple[int, TableKey]] = []

    def __len__(self) -> int:
        return len(self._at)

    def set(self, key: TableKey, at: int | None) -> None:
        if at is None:
            self._at.pop(key, None)
            return
        if self._at.get(key) == at:
            return
        self._at[key] = at
        heapq.heappush(self._heap, (at, key))
        if len(self._heap) > 4 * len(self._at) + 1024:  # superseded entries: rebuild
            self._heap = [(a, k) for k, a in self._at.items()]
            heapq.heapify(self._heap)

    def due(self, now: int) -> list[TableKey]:
        out: list[TableKey] = []
        heap = self._heap
        while heap and heap[0][0] <= now:
            at, key = heapq.heappop(heap)
            if self._at.get(key) == at:
                del self._at[key]
                out.append(key)
        return sorted(out)

    def next_at(self) -> int | None:
        heap = self._heap
        while heap and self._at.get(heap[0][1]) != heap[0][0]:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def clear(self) -> None:
        self._at.clear()
        self._heap.clear()
