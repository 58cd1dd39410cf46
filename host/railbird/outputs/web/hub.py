"""Server-sent-event subscribers per venue (or one table of it), on the web server's loop.

The daemon's worker never touches a subscriber: WebOutput hands each event to the loop
(`call_soon_threadsafe`) and `publish` runs there. A stream is of a whole venue
(/events/v/<venue>: the venue board) or of one table (/events/v/<venue>/t/<table>: the table
page, which needs no other table's snapshots). Each stream has a bounded queue. Every
`table` event is the table's whole snapshot, so once a stream has `coalesce_at` events
waiting (a burst, such as the backlog after a reconnect, or a client falling behind) a new
one replaces the waiting one of the same table instead of queueing behind it: a client
behind skips to the latest state, as a reconnect would make it. A client still `queue`
events behind is dropped: `close` marks it and its writer (server.py) ends the response
within a bound, so its browser's EventSource reconnects and starts again from a snapshot.
A slow phone costs a reconnect, never memory or the other clients' events. Venues without
subscribers leave no entry, so the hub holds one entry per live stream, not one per venue
name ever asked for.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque

SSE_QUEUE = 256
COALESCE_AT = 32


def sse(event: str, data) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class Sub:
    __slots__ = ("closed", "coalesce_at", "gone", "msgs", "queue", "table", "venue", "wake")

    def __init__(self, venue: str, table: str | None = None, queue: int = SSE_QUEUE):
        self.venue = venue
        self.table = table  # None: every table of the venue
        self.queue = queue
        # a queue smaller than the default coalesces earlier, so that it still takes a burst
        self.coalesce_at = min(COALESCE_AT, max(1, queue // 2))
        self.msgs: deque[tuple[str | None, bytes]] = deque()  # (what it is of, the event)
        self.wake = asyncio.Event()  # events wait, or the stream is to end
        self.gone = asyncio.Event()  # the stream is to end: a blocked write stops waiting
        self.closed = False

    def take(self) -> bytes:
        out = b"".join(m for _, m in self.msgs)
        self.msgs.clear()
        return out

    def push(self, key: str | None, msg: bytes) -> bool:
        """Queue `msg`; False when the queue is full (the stream is to be dropped)."""
        if key is not None and len(self.msgs) >= self.coalesce_at:
            kept = [m for m in self.msgs if m[0] != key]
            if len(kept) < len(self.msgs):
                self.msgs = deque(kept)
        if len(self.msgs) >= self.queue:
            return False
        self.msgs.append((key, msg))
        self.wake.set()
        return True

    def close(self) -> None:
        self.closed = True
        self.msgs.clear()  # a stream that ends needs none of them: its reconnect gets a snapshot
        self.wake.set()
        self.gone.set()


class Hub:
    """Runs on the event loop only."""

    def __init__(self, queue: int = SSE_QUEUE):
        self.queue = queue
        self.subs: dict[str, set[Sub]] = {}
        self.dropped = 0

    def add(self, venue: str, table: str | None = None) -> Sub:
        sub = Sub(venue, table, self.queue)
        self.subs.setdefault(venue, set()).add(sub)
        return sub

    def remove(self, sub: Sub) -> None:
        subs = self.subs.get(sub.venue)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self.subs[sub.venue]

    def publish(
        self, venue: str | None, msg: bytes, key: str | None = None, table: str | None = None
    ) -> None:
        """`msg` to every stream of `venue` (None: of every venue); with `table`, of that
        table only to the venue's streams and that table's. `key`: what the event is the
        whole of (a table's snapshot), so a newer one may replace it while it waits."""
        if venue is None:
            targets = [s for subs in self.subs.values() for s in subs]
        else:
            targets = [
                s
                for s in self.subs.get(venue, ())
                if table is None or s.table is None or s.table == table
            ]
        for sub in targets:
            if not sub.push(key, msg):
                self.drop(sub)

    def drop(self, sub: Sub) -> None:
        """End a stream that cannot keep up (counted in `dropped_streams`)."""
        self.dropped += 1
        self.remove(sub)
        sub.close()

    def count(self) -> int:
        return sum(len(s) for s in self.subs.values())

    def close_all(self) -> None:
        for subs in list(self.subs.values()):
            for sub in list(subs):
                sub.close()
        self.subs.clear()
