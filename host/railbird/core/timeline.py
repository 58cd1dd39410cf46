"""Per-table timeline: dedup by (node, boot, seq) and merge in table-time order.

Events of all the table's nodes go into a heap. An event is released (in order of the key
(t, node, boot, seq)) once the table's event-time watermark — the largest table time seen so
far minus the reorder window — has passed it, or when the daemon advances time explicitly
(`release(upto)`: the daemon's idle ticks, and the pipeline's per-node watermarks, which cap
the release point while a node is cut off) or at the end of input (`flush()`).

- duplicate: (node, boot, seq) seen before with the same content -> dropped and counted.
- conflict: (node, boot, seq) seen before with other content (a node whose boot counter did
  not rise across a reboot numbers new events like old ones): never taken for a duplicate,
  never entered into the timeline (its time is on another boot's clock); returned to the
  caller to keep and alarm. Contents are compared for the first FIRST_KEPT seqs of a boot
  (where a reused counter starts again) and the last PRINTS_KEPT seen; an older repeat is
  taken for a duplicate, as before.
- reordered: arrived with a time below the largest seen so far, but inside the window.
- late: arrived with a time below the last released event; it cannot be put in order any
  more. It is returned to the caller (journalled, flagged) and never enters the timeline.
- quarantined: offered with `quarantine=True` (its table time is implausible, see
  railbird.core.clockmodel `latest`): seen, so a re-sent copy is a duplicate, counted, never
  entered into the timeline, where it would drag the watermark along.

Given the same set of events, any arrival order in which every event arrives before the
watermark passes it yields the same released sequence (property-tested).
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from typing import Any

DEFAULT_WINDOW_US = 500_000
SEEN_SET_MAX = 4096
FIRST_KEPT = 64  # contents of seqs below this are kept for the whole boot
PRINTS_KEPT = 1024  # and those of the most recent seqs: at most about 0.5 MB per (node, boot)


# What a node said about an event (`Event.content`): t_node, kind, pocket, rail, amp, dur, n
Content = tuple[
    int, str, str | None, str | None, int | None, int | None, int | None, int | None, int | None
]
# An event's order in the timeline: (t, node, boot, seq)
Key = tuple[int, str, int, int]


class Event:
    """One sensor event on the table's time axis."""

    __slots__ = (
        "amp",
        "ball",
        "boot",
        "conf",
        "dur",
        "kind",
        "n",
        "node",
        "pocket",
        "rail",
        "seq",
        "synced",
        "t",
        "t_node",
    )

    def __init__(
        self,
        *,
        t: int,
        node: str,
        boot: int,
        seq: int,
        kind: str,
        pocket: str | None = None,
        rail: str | None = None,
        amp: int | None = None,
        dur: int | None = None,
        n: int | None = None,
        t_node: int | None = None,
        synced: bool = True,
        ball: int | None = None,
        conf: int | None = None,
    ) -> None:
        self.t = t
        self.node = node
        self.boot = boot
        self.seq = seq
        self.kind = kind
        self.pocket = pocket
        self.rail = rail
        self.amp = amp
        self.dur = dur
        self.n = n
        self.ball = ball  # `ball` events: the number the colour station read
        self.conf = conf  # ... and its confidence, %
        self.t_node = t if t_node is None else t_node
        self.synced = synced

    @property
    def key(self) -> Key:
        return (self.t, self.node, self.boot, self.seq)

    def __lt__(self, other: Event) -> bool:
        return self.key < other.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Event) and self.to_dict() == other.to_dict()

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "t": self.t,
            "node": self.node,
            "boot": self.boot,
            "seq": self.seq,
            "kind": self.kind,
        }
        for k in ("pocket", "rail", "amp", "dur", "n", "ball", "conf"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        return d

    def node_dict(self) -> dict[str, Any]:
        """The event as its node sent it (node time, not table time)."""
        return dict(self.to_dict(), t=self.t_node)

    def content(self) -> Content:
        """What the node said about the event: equal for a re-sent copy, whatever the
        clock model made of its time meanwhile. The values themselves, not their `hash()`:
        string hashes differ from process to process, and a journal snapshot keeps these."""
        return (
            self.t_node,
            self.kind,
            self.pocket,
            self.rail,
            self.amp,
            self.dur,
            self.n,
            self.ball,
            self.conf,
        )

    def __repr__(self) -> str:
        return f"Event({self.to_dict()})"


class SeqSet:
    """Seen sequence numbers of one (node, boot): a floor below which all are seen plus the
    sparse set above it. Bounded: past SEEN_SET_MAX entries the floor jumps to the smallest
    seen seq (a seq below it arriving later is then treated as already seen)."""

    __slots__ = ("above", "clashes", "first", "floor", "recent")

    def __init__(self) -> None:
        self.floor = 0
        self.above: set[int] = set()
        self.first: dict[int, Content] = {}  # seq < FIRST_KEPT -> content
        # the last PRINTS_KEPT other seqs -> content, oldest first; ordered to drop the
        # oldest in constant time (a dict's first key is found past the ones deleted before)
        self.recent: OrderedDict[int, Content] = OrderedDict()
        self.clashes: set[tuple[int, Content]] = (
            set()
        )  # (seq, content) of conflicts seen: a re-sent one is a dup

    def content(self, seq: int) -> Content | None:
        return self.first.get(seq) if seq < FIRST_KEPT else self.recent.get(seq)

    def keep(self, seq: int, content: Content) -> None:
        if seq < FIRST_KEPT:
            self.first[seq] = content
            return
        recent = self.recent
        recent[seq] = content
        if len(recent) > PRINTS_KEPT:
            recent.popitem(last=False)

    def add(self, seq: int) -> bool:
        """True if new."""
        if seq < self.floor or seq in self.above:
            return False
        if seq == self.floor:
            self.floor += 1
            above = self.above
            while self.floor in above:
                above.discard(self.floor)
                self.floor += 1
        else:
            self.above.add(seq)
            if len(self.above) > SEEN_SET_MAX:
                self.floor = min(self.above)
                while self.floor in self.above:
                    self.above.discard(self.floor)
                    self.floor += 1
        return True


class Timeline:
    """The merged, ordered event stream of one table."""

    def __init__(self, window_us: int = DEFAULT_WINDOW_US):
        self.window_us = int(window_us)
        self._heap: list[tuple[int, str, int, int, Event]] = []
        self._seen: dict[tuple[str, int], SeqSet] = {}
        self.max_seen: int | None = None  # largest table time received
        self.released_t: Key | None = None  # key of the last released event
        self.counts = {
            "events": 0,
            "duplicate": 0,
            "reordered": 0,
            "late": 0,
            "released": 0,
            "conflict": 0,
            "quarantined": 0,
        }

    def push(self, ev: Event, quarantine: bool = False) -> str:
        """Offer one event: returns 'ok', 'reordered', 'duplicate', 'conflict', 'late' or
        (with `quarantine`, for a new event) 'quarantined'."""
        # every event of the table passes here: the usual case (the next seq of its boot,
        # later than every event before) is written out with few lookups (issue 16, item 5)
        seq = ev.seq
        seen = self._seen.get((ev.node, ev.boot))
        if seen is None:
            seen = self._seen[ev.node, ev.boot] = SeqSet()
        content = (
            ev.t_node,
            ev.kind,
            ev.pocket,
            ev.rail,
            ev.amp,
            ev.dur,
            ev.n,
            ev.ball,
            ev.conf,
        )  # ev.content()
        if seq == seen.floor and not seen.above:
            seen.floor = seq + 1  # SeqSet.add of the next seq in order
        elif not seen.add(seq):
            known = seen.content(seq)
            if known is None or known == content or (seq, content) in seen.clashes:
                self.counts["duplicate"] += 1
                return "duplicate"
            if len(seen.clashes) < PRINTS_KEPT:
                seen.clashes.add((seq, content))
            self.counts["conflict"] += 1
            return "conflict"
        if seq < FIRST_KEPT:  # SeqSet.keep, written out
            seen.first[seq] = content
        else:
            recent = seen.recent
            recent[seq] = content
            if len(recent) > PRINTS_KEPT:
                recent.popitem(last=False)
        counts = self.counts
        if quarantine:
            counts["quarantined"] += 1
            return "quarantined"
        counts["events"] += 1
        t = ev.t
        rel = self.released_t
        if rel is not None and t <= rel[0] and (t, ev.node, ev.boot, seq) < rel:
            counts["late"] += 1
            return "late"
        status = "ok"
        if self.max_seen is not None and t < self.max_seen:
            counts["reordered"] += 1
            status = "reordered"
        else:
            self.max_seen = t
        # keys are unique after dedup, so the Event itself is never compared
        heapq.heappush(self._heap, (t, ev.node, ev.boot, seq, ev))
        return status

    def forget(self, node: str, boot: int) -> None:
        """Drop the dedup state of (node, boot) (the pipeline keeps a node's recent boots)."""
        self._seen.pop((node, boot), None)

    def release(self, upto: int | None = None) -> list[Event]:
        """Pop the events whose time is <= `upto` (default: the watermark)."""
        if upto is None:
            if self.max_seen is None:
                return []
            upto = self.max_seen - self.window_us
        out = []
        heap = self._heap
        while heap and heap[0][0] <= upto:
            out.append(heapq.heappop(heap)[4])
        if out:
            self.released_t = out[-1].key
            self.counts["released"] += len(out)
        return out

    def flush(self) -> list[Event]:
        """Release everything held (end of input)."""
        out = [h[4] for h in sorted(self._heap)]
        self._heap = []
        if out:
            self.released_t = out[-1].key
            self.counts["released"] += len(out)
        return out

    @property
    def pending(self) -> int:
        return len(self._heap)
