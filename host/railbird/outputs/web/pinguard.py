"""Failed-PIN accounting for the referee app (issue 13, item 7): how many wrong PINs the web
server compares at all, so that no number of addresses can guess a venue's PIN.

Two budgets, both needed:

- per venue (its PIN), across all addresses: `VENUE_TRIES` wrong PINs within `WINDOW_S`
  lock the venue's PIN for `LOCK_S`, doubled with each lockout in a row up to `MAX_LOCK_S`.
  While it is locked no PIN is compared, the right one included, so guessing from many
  addresses gains nothing: at most `VENUE_TRIES` guesses per lockout, about 480 a day once
  the backoff is at its cap, against the 1,000,000 PINs of 6 digits (config.check refuses
  fewer). A right PIN ends the backoff.
- per address: `ADDR_TRIES` (fewer than the venue's) wrong PINs lock that address alone,
  with the same backoff. One address, a prankster's phone or a referee's typos, can thus
  never lock the venue for everybody; it takes several.

A referee already signed in is not asked for the PIN (the session cookie), so an attack
that locks the PIN does not stop the match. A request without any PIN is not a guess.

Memory is bounded: venues are the configured ones, addresses at most `MAX_ADDRESSES` (the
least recently failed make room; an address evicted starts afresh, the venue's budget
still holds).
"""

from __future__ import annotations

import hmac
import threading
import time
from collections import OrderedDict, deque

VENUE_TRIES = 5
ADDR_TRIES = 3
WINDOW_S = 60.0
LOCK_S = 60.0
MAX_LOCK_S = 900.0
QUIET_S = 3600.0  # a key without a failure for this long starts afresh
MAX_ADDRESSES = 4096


class _Key:
    __slots__ = ("fails", "last", "strikes", "until")

    def __init__(self):
        self.fails: deque = deque()
        self.strikes = 0
        self.until = 0.0
        self.last = 0.0


class Backoff:
    """`tries` failures within `window_s` lock a key for `lock_s * 2**n` (n: lockouts in a
    row, the lock at most `max_lock_s`). Not thread-safe: PinGuard holds the lock."""

    def __init__(self, tries: int, cap: int | None = None):
        self.tries = tries
        self.cap = cap
        self.keys: OrderedDict[str, _Key] = OrderedDict()

    def wait(self, key: str, now: float) -> float:
        """Seconds until `key` may try again (0: now)."""
        k = self.keys.get(key)
        return 0.0 if k is None else max(0.0, k.until - now)

    def fail(self, key: str, now: float) -> None:
        k = self.keys.get(key)
        if k is None or now - k.last >= QUIET_S:
            k = self.keys[key] = _Key()
        self.keys.move_to_end(key)
        k.last = now
        while k.fails and now - k.fails[0] >= WINDOW_S:
            k.fails.popleft()
        k.fails.append(now)
        if len(k.fails) >= self.tries:
            k.until = now + min(MAX_LOCK_S, LOCK_S * 2**k.strikes)
            k.strikes += 1
            k.fails.clear()
        while self.cap is not None and len(self.keys) > self.cap:
            self.keys.popitem(last=False)

    def forget(self, key: str) -> None:
        self.keys.pop(key, None)


class PinGuard:
    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self._lock = threading.Lock()
        self.venues = Backoff(VENUE_TRIES)
        self.addresses = Backoff(ADDR_TRIES, cap=MAX_ADDRESSES)
        self.compared = 0  # PINs compared (what a guesser gets an answer to)

    def check(self, venue: str, want: str | None, pin, addr: str) -> tuple[bool, float]:
        """(right, retry_after). While the venue or the address is locked, `pin` is not
        compared: (False, seconds to wait). Otherwise (True, 0) for the right PIN and
        (False, 0) for a wrong one, which is counted against both."""
        now = self.clock()
        with self._lock:
            wait = max(self.venues.wait(venue, now), self.addresses.wait(addr, now))
            if wait > 0:
                return False, wait
            self.compared += 1
            ok = (
                want is not None
                and isinstance(pin, str)
                and hmac.compare_digest(pin.encode(), want.encode())
            )
            if ok:
                self.venues.forget(venue)
                self.addresses.forget(addr)
            else:
                self.venues.fail(venue, now)
                self.addresses.fail(addr, now)
            return ok, 0.0

    def __len__(self) -> int:
        with self._lock:
            return len(self.addresses.keys)
