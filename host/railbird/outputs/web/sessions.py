"""Referee sign-in sessions of the web server: the venue PIN is typed once per device and
exchanged for a random token kept in an HttpOnly, SameSite=Strict cookie, so the PIN is not
sent (or stored by the page) with every input.

A session lasts 12 hours, also across a restart of the host: `railbird run` keeps them in a
file beside the journal (`<journal>.sessions`, mode 0600, railbird/private.py), rewritten
atomically (a temporary file, fsync, rename) at each sign-in and sign-out. A sign-out is on
the disk before it is answered (a lost one would sign a phone back in after a crash). With
`write_behind` (the web server's) a sign-in is answered first and written by a thread of its
own a moment later, several sign-ins in one write: its two fsyncs took 18 ms at the median
and up to 118 ms on a busy shared disk, most of a sign-in's time (issue 23: sign-in p99 100
ms). A crash in that moment loses only that sign-in: the phone asks for the PIN once more.
The file holds for each session the SHA-256 of its token, never the token, so a copy of the
file (a backup) signs nobody in; the venue; and the wall-clock expiry (time.time(): a
monotonic clock starts again with the process). It also holds, per venue, an HMAC-SHA256 of
the referee PIN under a random key kept in the same file: a venue whose PIN changed in the
config between two runs loses its sessions when the file is read, which is how a PIN change
signs every phone out. Anyone who can read that file can try every PIN against the HMAC, so
the file is exactly as private as host.toml, which holds the PIN itself and is read by the
same service user: it is not a new secret. A file that cannot be read or is damaged is
logged once and the host starts with no sessions (one PIN entry per phone), never with an
error; what it holds is trusted only as far as its shape (types checked, at most
MAX_SESSIONS entries, no expiry beyond 12 hours from now). A file that cannot be written is
logged and the sessions go on in memory.

Without a path (tests, tools without a state directory) sessions live in memory only. Their
number is capped; at the cap the session closest to expiry makes room, so a flood of
sign-ins (which needs the PIN anyway) cannot grow memory or the file.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import os
import secrets
import threading
import time

from railbird.private import write_whole

log = logging.getLogger("railbird.outputs.web")

COOKIE = "railbird_session"
MAX_AGE_S = 12 * 3600  # one evening's play; then the PIN once more
MAX_SESSIONS = 256
FILE_VERSION = 1
# A full file is MAX_SESSIONS rows of about 130 bytes; anything much larger is not ours and
# is not read into memory.
MAX_FILE_BYTES = 256 * 1024
_HEX64 = frozenset("0123456789abcdef")


def sessions_path(journal_path: str) -> str:
    """Where `railbird run` keeps the sessions: beside the journal, like its `.exports`."""
    return f"{journal_path}.sessions"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _is_hex64(x) -> bool:
    return isinstance(x, str) and len(x) == 64 and _HEX64.issuperset(x)


def _is_time(x) -> bool:
    # bool is an int to Python, and NaN or inf would never expire
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


class Sessions:
    """Token -> venue for MAX_AGE_S. With `path`, kept in that file across restarts (the
    module docstring); `pins` (venue -> PIN) are the PINs the sessions were signed in with,
    whose change drops them."""

    def __init__(
        self,
        max_age_s: float = MAX_AGE_S,
        cap: int = MAX_SESSIONS,
        clock=time.time,
        path: str | os.PathLike | None = None,
        pins: dict | None = None,
        write_behind: bool = False,
    ):
        self.max_age_s = max_age_s
        self.cap = cap
        self.clock = clock  # wall clock: an expiry in the file must mean the same next run
        self.path = None if path is None else os.fspath(path)
        self._lock = threading.Lock()
        self._save_lock = threading.Lock()  # one writer of the file at a time
        self._by_hash: dict[str, tuple[str, float]] = {}  # sha256(token) -> (venue, expires)
        self._key = secrets.token_bytes(32)  # replaced by the file's: its fingerprints use it
        self._pins = {str(v): str(p) for v, p in (pins or {}).items() if p}
        self._save_failed = False
        self.write_behind = write_behind
        self._dirty = threading.Event()  # a sign-in not yet written (write_behind)
        self._wake = threading.Event()  # the writer's: something to write, or close()
        self._writer: threading.Thread | None = None
        self._closed = False
        if self.path is not None:
            self._load()
            self._save()  # what was dropped (PIN changed, expired) is gone from the disk too

    def create(self, venue: str) -> str:
        token = secrets.token_urlsafe(32)
        now = self.clock()
        with self._lock:
            self._expire(now)
            while len(self._by_hash) >= self.cap:
                oldest = min(self._by_hash, key=lambda h: self._by_hash[h][1])
                del self._by_hash[oldest]
            self._by_hash[token_hash(token)] = (venue, now + self.max_age_s)
        if self.write_behind:
            self._save_soon()
        else:
            self._save()
        return token

    def venue_of(self, token: str | None) -> str | None:
        """The venue a live session is for, or None (unknown, expired or no token)."""
        if not token:
            return None
        now = self.clock()
        key = token_hash(token)
        with self._lock:
            # A dict lookup, not compare_digest: a token is 256 random bits, so timing
            # cannot be used to guess one (nor its hash).
            hit = self._by_hash.get(key)
            if hit is None:
                return None
            venue, expires = hit
            if expires <= now:
                # not saved: an expired row in the file is skipped when it is read
                del self._by_hash[key]
                return None
            return venue

    def expires_in(self, token: str | None) -> float | None:
        if not token:
            return None
        with self._lock:
            hit = self._by_hash.get(token_hash(token))
        return None if hit is None else max(0.0, hit[1] - self.clock())

    def drop(self, token: str | None) -> None:
        if not token:
            return
        with self._lock:
            gone = self._by_hash.pop(token_hash(token), None)
        if gone is not None:
            self._save()  # a sign-out must hold across a restart too

    def __len__(self) -> int:
        with self._lock:
            self._expire(self.clock())
            return len(self._by_hash)

    def _expire(self, now: float) -> None:
        for h in [h for h, (_, exp) in self._by_hash.items() if exp <= now]:
            del self._by_hash[h]

    def flush(self) -> None:
        """What write_behind has not written yet, written now."""
        if self._dirty.is_set():
            self._dirty.clear()
            self._save()

    def close(self) -> None:
        """The writer stopped, what it had not written written (the web server's stop)."""
        self._closed = True
        self._wake.set()
        if self._writer is not None:
            self._writer.join(5)
        self.flush()

    # -- the file ------------------------------------------------------------------------
    def _save_soon(self) -> None:
        if self.path is None:
            return
        self._dirty.set()
        with self._lock:
            if self._writer is None and not self._closed:
                self._writer = threading.Thread(
                    target=self._write_behind, name="railbird-web-sessions", daemon=True
                )
                self._writer.start()
        self._wake.set()

    def _write_behind(self) -> None:
        while not self._closed:
            self._wake.wait()
            self._wake.clear()
            self.flush()  # every sign-in since the last write, in one

    def _fingerprint(self, venue: str) -> str | None:
        pin = self._pins.get(venue)
        if pin is None:
            return None
        return hmac.new(self._key, pin.encode(), hashlib.sha256).hexdigest()

    def _load(self) -> None:
        doc = self._read()
        if doc is None:
            return
        key, fingerprints, rows = doc
        self._key = key
        now = self.clock()
        live = {}
        for h, venue, expires in rows:
            fp = self._fingerprint(venue)
            if fp is None or not hmac.compare_digest(fp, fingerprints.get(venue, "")):
                continue  # the venue's PIN changed (or is gone): its sessions end
            if expires <= now:
                continue
            # a clock set back, or an edited file, cannot stretch a session past 12 hours
            live[h] = (venue, min(expires, now + self.max_age_s))
        # a longer list than the cap was not written by us: the latest to expire are kept
        kept = sorted(live.items(), key=lambda kv: kv[1][1], reverse=True)[: self.cap]
        self._by_hash = dict(kept)
        if kept or rows:
            log.info(
                "referee sessions: %d of %d in %s still valid", len(kept), len(rows), self.path
            )

    def _read(self):
        """(key, {venue: fingerprint}, [(hash, venue, expires)]) from the file; None when it
        is missing (a first start), unreadable or damaged (logged once: this start)."""
        try:
            with open(self.path, "rb") as f:
                raw = f.read(MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            return None
        except OSError as e:
            log.warning("referee sessions: cannot read %s (%s); none kept", self.path, e)
            return None
        doc = None
        if len(raw) <= MAX_FILE_BYTES:
            try:
                doc = _parse(json.loads(raw))
            except (ValueError, RecursionError):  # not JSON, not UTF-8, nested too deep
                doc = None
        if doc is None:
            log.warning(
                "referee sessions: %s is damaged or not a sessions file; none kept "
                "(each phone signs in once more)",
                self.path,
            )
        return doc

    def _save(self) -> None:
        if self.path is None:
            return
        with self._save_lock:
            # the snapshot is taken inside the writer's lock: the last write is always of
            # the newest state, and no reader waits for the disk
            with self._lock:
                rows = [
                    {"sha256": h, "venue": v, "expires": round(exp, 3)}
                    for h, (v, exp) in self._by_hash.items()
                ]
            doc = {
                "version": FILE_VERSION,
                "key": self._key.hex(),
                "pins": {v: self._fingerprint(v) for v in sorted(self._pins)},
                "sessions": rows,
            }
            try:
                write_whole(self.path, json.dumps(doc, sort_keys=True))
            except OSError as e:
                # a sign-in must not fail on a full disk: the session works until a restart
                if not self._save_failed:
                    log.error(
                        "referee sessions: cannot write %s (%s); kept in memory", self.path, e
                    )
                self._save_failed = True
                return
            if self._save_failed:
                log.info("referee sessions: %s written again", self.path)
            self._save_failed = False


def _parse(doc):
    """The file's contents if its shape is ours, else None; rows of the wrong shape are
    left out one by one (nothing in them is used)."""
    if not isinstance(doc, dict) or doc.get("version") != FILE_VERSION:
        return None
    key, pins, rows = doc.get("key"), doc.get("pins"), doc.get("sessions")
    if not _is_hex64(key) or not isinstance(pins, dict) or not isinstance(rows, list):
        return None
    fingerprints = {v: fp for v, fp in pins.items() if isinstance(v, str) and _is_hex64(fp)}
    good = []
    for row in rows[: 4 * MAX_SESSIONS]:  # bounded work whatever the list's length
        if not isinstance(row, dict):
            continue
        h, venue, expires = row.get("sha256"), row.get("venue"), row.get("expires")
        if _is_hex64(h) and isinstance(venue, str) and venue and _is_time(expires):
            good.append((h, venue, float(expires)))
    return bytes.fromhex(key), fingerprints, good


def cookie_token(header: str | None, cookie: str = COOKIE) -> str | None:
    """The session token from a Cookie header, or None."""
    for part in (header or "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == cookie and value:
            return value
    return None


def set_cookie(
    token: str, max_age_s: float = MAX_AGE_S, secure: bool = False, cookie: str = COOKIE
) -> str:
    # `Secure` only behind a TLS proxy: the venue server itself is plain HTTP on the LAN, and
    # a Secure cookie would never be sent back to it. SameSite=Strict keeps the cookie off
    # every cross-site request (CSRF).
    flags = f"Max-Age={int(max_age_s)}; Path=/; HttpOnly; SameSite=Strict"
    return f"{cookie}={token}; {flags}" + ("; Secure" if secure else "")


def clear_cookie(cookie: str = COOKIE) -> str:
    return f"{cookie}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict"
