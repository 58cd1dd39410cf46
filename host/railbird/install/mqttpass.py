"""mosquitto's password file: `user:$7$<iterations>$<salt>$<hash>` per line, the PBKDF2-
SHA512 format of mosquitto 2 (what `mosquitto_passwd` writes: a 12-byte salt, base64).

Written here rather than with `mosquitto_passwd` so that setup needs no broker package and
keeps the line of a user whose password did not change byte for byte (mosquitto_passwd
salts anew on every call). tests/install checks a real mosquitto accepts these hashes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os

# mosquitto_passwd's default. The passwords setup makes are 192 random bits, so the work
# factor adds nothing against a stolen file, while every login pays it on the broker.
ITERATIONS = 101
SALT_BYTES = 12


def hash_password(password: str, salt: bytes | None = None, iterations: int = ITERATIONS) -> str:
    salt = os.urandom(SALT_BYTES) if salt is None else salt
    digest = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, iterations)
    b64 = base64.b64encode
    return f"$7${iterations}${b64(salt).decode()}${b64(digest).decode()}"


def verify(password: str, encoded: str) -> bool:
    """Does `encoded` (a `$7$` hash of a password file) hash `password`?"""
    parts = encoded.split("$")
    if len(parts) != 5 or parts[:2] != ["", "7"]:
        return False  # another format (mosquitto 1.x's `$6$`): hashed anew
    try:
        salt = base64.b64decode(parts[3], validate=True)
        got = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, int(parts[2]))
    except ValueError:  # a mangled line: not this password
        return False
    return hmac.compare_digest(base64.b64encode(got).decode(), parts[4])


def parse(text: str) -> dict[str, str]:
    """user -> hash, in the file's order (blank lines and `#` comments skipped)."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and ":" in line:
            user, encoded = line.split(":", 1)
            out[user] = encoded
    return out


def render(entries: dict[str, str]) -> str:
    return "".join(f"{user}:{encoded}\n" for user, encoded in entries.items())


def merged(existing: dict[str, str], passwords: dict[str, str]) -> tuple[dict[str, str], list]:
    """The password file for `passwords` (user -> password): an existing line is kept when it
    still hashes the password, other users' lines are kept as they are (added by hand, not
    setup's to remove). -> (entries, the users whose line is new or changed)."""
    out, changed = dict(existing), []
    for user, password in passwords.items():
        if user in out and verify(password, out[user]):
            continue
        out[user] = hash_password(password)
        changed.append(user)
    return out, changed
