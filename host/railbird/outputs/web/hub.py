"""Server-sent-event subscribers per venue, on the web server's event loop.

The daemon's worker never touches a subscriber: WebOutput hands each event to the loop
(`call_soon_threadsafe`) and `publish` runs there. Each stream has a bounded queue. Every
`table` event is the table's whole snapshot, so once a stream has COALESCE_AT events waiting
(a burst, such as the backlog after a reconnect, or a client falling behind) a new one
replaces the waiting one of the same table instead of queueing behind it: a client behind
skips to the latest state, as a reconnect would make it. A client still SSE_QUEUE events
behind is dropped, its stream closed, and its browser's EventSource reconnects and starts
again from a snapshot; one that does not take its events at all is closed by the writer's
timeout (server.py). A slow phone costs a reconnect, never memory or the other clients'
events. Venues without subscribers leave no entry, so the hub holds one entry per live
stream, not one per venue name ever asked for.
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
    __slots__ = ("closed", "msgs", "venue", "wake")

    def __init__(self, venue: str):
        self.venue = venue
        self.msgs: deque[tuple[str | None, bytes]] = deque()  # (what it is of, the event)
        self.wake = asyncio.Event()
        self.closed = False

    def take(self) -> bytes:
        out = b"".join(m for _, m in self.msgs)
        self.msgs.clear()
        return out

    def push(self, key: str | None, msg: bytes) -> bool:
        """Queue `msg`; False when the queue is full (the stream is to be dropped)."""
        if key is not None and len(self.msgs) >= COALESCE_AT:
            kept = [m for m in self.msgs if m[0] != key]
            if len(kept) < len(self.msgs):
                self.msgs = deque(kept)
        if len(self.msgs) >= SSE_QUEUE:
            return False
        self.msgs.append((key, msg))
        self.wake.set()
        return True

    def close(self) -> None:
        self.closed = True
        self.wake.set()


class Hub:
    """Runs on the event loop only."""

    def __init__(self):
        self.subs: dict[str, set[Sub]] = {}
        self.dropped = 0

    def add(self, venue: str) -> Sub:
        sub = Sub(venue)
        self.subs.setdefault(venue, set()).add(sub)
        return sub

    def remove(self, sub: Sub) -> None:
        subs = self.subs.get(sub.venue)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self.subs[sub.venue]

    def publish(self, venue: str | None, msg: bytes, key: str | None = None) -> None:
        """`msg` to every stream of `venue` (None: of every venue). `key`: what the event is
        the whole of (a table's snapshot), so a newer one may replace it while it waits."""
        if venue is None:
            targets = [s for subs in self.subs.values() for s in subs]
        else:
            targets = list(self.subs.get(venue, ()))
        for sub in targets:
            if not sub.push(key, msg):
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
