"""Server-sent-event subscribers per venue, on the web server's event loop.

The daemon's worker never touches a subscriber: WebOutput hands each event to the loop
(`call_soon_threadsafe`) and `publish` runs there. Each stream has a bounded queue; a client
that falls `SSE_QUEUE` events behind is dropped, its stream closed, and its browser's
EventSource reconnects and starts again from a snapshot: a slow phone costs a reconnect,
never memory or the other clients' events. Venues without subscribers leave no entry, so
the hub holds one entry per live stream, not one per venue name ever asked for.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque

SSE_QUEUE = 256


def sse(event: str, data) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class Sub:
    __slots__ = ("closed", "msgs", "venue", "wake")

    def __init__(self, venue: str):
        self.venue = venue
        self.msgs: deque[bytes] = deque()
        self.wake = asyncio.Event()
        self.closed = False

    def take(self) -> bytes:
        out = b"".join(self.msgs)
        self.msgs.clear()
        return out

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

    def publish(self, venue: str | None, msg: bytes) -> None:
        """`msg` to every stream of `venue` (None: of every venue)."""
        if venue is None:
            targets = [s for subs in self.subs.values() for s in subs]
        else:
            targets = list(self.subs.get(venue, ()))
        for sub in targets:
            if len(sub.msgs) >= SSE_QUEUE:
                self.dropped += 1
                self.remove(sub)
                sub.close()
                continue
            sub.msgs.append(msg)
            sub.wake.set()

    def count(self) -> int:
        return sum(len(s) for s in self.subs.values())

    def close_all(self) -> None:
        for subs in list(self.subs.values()):
            for sub in list(subs):
                sub.close()
        self.subs.clear()
