"""Referee sign-in sessions of the web server: the venue PIN is typed once per device and
exchanged for a random token kept in an HttpOnly, SameSite=Strict cookie, so the PIN is not
sent (or stored by the page) with every input.

Sessions live in memory only: a host restart signs every phone out, which costs one PIN
entry and keeps no secret on disk. Their number is capped; at the cap the session closest to
expiry makes room, so a flood of sign-ins (which needs the PIN anyway) cannot grow memory.
"""

from __future__ import annotations

import secrets
import threading
import time

COOKIE = "railbird_session"
MAX_AGE_S = 12 * 3600  # one evening's play; then the PIN once more
MAX_SESSIONS = 256


class Sessions:
    def __init__(self, max_age_s: float = MAX_AGE_S, cap: int = MAX_SESSIONS, clock=time.monotonic):
        self.max_age_s = max_age_s
        self.cap = cap
        self.clock = clock
        self._lock = threading.Lock()
        self._by_token: dict[str, tuple[str, float]] = {}  # token -> (venue, expires)

    def create(self, venue: str) -> str:
        token = secrets.token_urlsafe(32)
        now = self.clock()
        with self._lock:
            self._expire(now)
            while len(self._by_token) >= self.cap:
                oldest = min(self._by_token, key=lambda t: self._by_token[t][1])
                del self._by_token[oldest]
            self._by_token[token] = (venue, now + self.max_age_s)
        return token

    def venue_of(self, token: str | None) -> str | None:
        """The venue a live session is for, or None (unknown, expired or no token)."""
        if not token:
            return None
        now = self.clock()
        with self._lock:
            # A dict lookup, not compare_digest: a token is 256 random bits, so timing
            # cannot be used to guess one.
            hit = self._by_token.get(token)
            if hit is None:
                return None
            venue, expires = hit
            if expires <= now:
                del self._by_token[token]
                return None
            return venue

    def expires_in(self, token: str | None) -> float | None:
        with self._lock:
            hit = self._by_token.get(token or "")
        return None if hit is None else max(0.0, hit[1] - self.clock())

    def drop(self, token: str | None) -> None:
        with self._lock:
            self._by_token.pop(token or "", None)

    def __len__(self) -> int:
        with self._lock:
            self._expire(self.clock())
            return len(self._by_token)

    def _expire(self, now: float) -> None:
        for t in [t for t, (_, exp) in self._by_token.items() if exp <= now]:
            del self._by_token[t]


def cookie_token(header: str | None) -> str | None:
    """The session token from a Cookie header, or None."""
    for part in (header or "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE and value:
            return value
    return None


def set_cookie(token: str, max_age_s: float = MAX_AGE_S, secure: bool = False) -> str:
    # `Secure` only behind a TLS proxy: the venue server itself is plain HTTP on the LAN, and
    # a Secure cookie would never be sent back to it. SameSite=Strict keeps the cookie off
    # every cross-site request (CSRF).
    flags = f"Max-Age={int(max_age_s)}; Path=/; HttpOnly; SameSite=Strict"
    return f"{COOKIE}={token}; {flags}" + ("; Secure" if secure else "")


def clear_cookie() -> str:
    return f"{COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict"
