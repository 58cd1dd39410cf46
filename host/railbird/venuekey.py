"""The venue key: the RSA-3072 key that signs firmware updates and node configurations
(rbproto.signing says what is signed; protocol/SPEC.md "Signed commands").

`railbird setup` makes it once (`make(path)`: the private key, PEM, mode 0600, readable by
root only; never copied to a board) beside the host config; `railbird node provision` gives
each board its public part (`public_hex`, the modulus: config.json `venue_key`), with which
the board refuses an `update` or `config` the key did not sign. The `openssl` binary does
the key work (as for setup's TLS CA), so the host needs no crypto package; the board's
check is rbproto.signing.verify.

Lose the private key and no board takes an update or a config again until each is
provisioned over USB with a new one; so back it up (docs/install.md "The venue key").
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from rbproto import signing

DEFAULT = Path("/etc/railbird/venue-key.pem")
ENV = "RAILBIRD_VENUE_KEY"


class VenueKeyError(Exception):
    """No usable venue key, or openssl failed; the message says which and what to do."""


def default_path() -> Path:
    """$RAILBIRD_VENUE_KEY, else /etc/railbird/venue-key.pem (where setup puts it)."""
    return Path(os.environ.get(ENV) or DEFAULT)


def _openssl(*args: str, data: bytes | None = None) -> bytes:
    exe = shutil.which("openssl")
    if exe is None:
        raise VenueKeyError("the venue key needs openssl: apt-get install -y openssl")
    r = subprocess.run([exe, *args], input=data, capture_output=True, timeout=60)
    if r.returncode:
        raise VenueKeyError(f"openssl {args[0]} failed: {r.stderr.decode().strip()}")
    return r.stdout


def make(path: Path) -> bool:
    """Make the key at `path` (0600) unless one is there -> whether it was made."""
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    old = os.umask(0o077)
    try:
        _openssl(
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            f"rsa_keygen_bits:{signing.KEY_BITS}",
            "-pkeyopt",
            f"rsa_keygen_pubexp:{signing.E}",
            "-out",
            str(tmp),
        )
    finally:
        os.umask(old)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return True


def _readable(path: Path) -> Path:
    if not path.exists():
        raise VenueKeyError(
            f"no venue key at {path}: `railbird setup` makes it (or name one with "
            f"--venue-key / ${ENV})"
        )
    if not os.access(path, os.R_OK):
        raise VenueKeyError(f"{path}: not readable by this user (the key is root's, mode 0600)")
    return path


def public_hex(path: Path) -> str:
    """The public part as a board keeps it: the modulus, 768 lowercase hex digits."""
    out = _openssl("rsa", "-in", str(_readable(path)), "-noout", "-modulus").decode()
    mod = out.strip().partition("=")[2].lower()
    if signing.public_key(mod) is None:
        raise VenueKeyError(f"{path}: not an RSA-{signing.KEY_BITS} key")
    return mod


class Signer:
    """Signs statements with the key at `path`: `sign(statement) -> 768 hex digits`."""

    def __init__(self, path: Path):
        self.path = _readable(path)
        self.public = public_hex(path)

    def sign(self, statement: bytes) -> str:
        sig = _openssl("dgst", "-sha256", "-sign", str(self.path), data=statement).hex()
        if not signing.verify(int(self.public, 16), statement, sig):
            raise VenueKeyError(f"{self.path}: openssl made a signature the nodes refuse")
        return sig

    def sign_update(self, cmd: dict, downgrade: tuple | None = None) -> dict:
        """The `update` command with its `sig` (and `downgrade` for a forced one:
        (venue, table, node, boot, from_version))."""
        out = dict(cmd)
        if downgrade is not None:
            out["downgrade"] = {"boot": downgrade[3], "from": downgrade[4]}
        out["sig"] = self.sign(
            signing.update_statement(cmd["version"], cmd["manifest_sha256"], downgrade)
        )
        return out

    def sign_config(self, venue: str, table: str, node: str, msg: dict) -> dict:
        out = {k: v for k, v in msg.items() if k != "sig"}
        out["sig"] = self.sign(signing.config_statement(venue, table, node, out))
        return out
