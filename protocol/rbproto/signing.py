"""What the venue key signs, how a node checks it, and the order of firmware versions
(protocol/SPEC.md "Signed commands"). Shared by the host (railbird.venuekey signs) and the
node (rbnode.updater, rbnode.node check), in the MicroPython/CPython common subset.

The scheme is RSA-3072 with PKCS#1 v1.5 padding over SHA-256 (RFC 8017 8.2), exponent
65537: the node's check is 17 native big-int products and a byte comparison with the
padding it builds itself (never parsed out of the signature), a few milliseconds and 4 KB
of heap in MicroPython; pure-Python Ed25519 needed 3 to 6 times the time on the same ports
and churned 1.3 to 2 MB of heap per check (docs/firmware-sensing.md "Signed updates and
configurations": the figures and the choice; `make bench-sign` measures them).

Statements (the bytes signed; lines joined by "\\n", all ASCII):
- update: "railbird-update/1", version, manifest_sha256, and for a forced downgrade
  "<venue>/<table>/<node> boot=<boot> from=<version>" (else an empty line): a downgrade is
  bound to one node's one boot and the version it leaves, so it cannot be replayed later.
- config: "railbird-config/1", "<venue>/<table>/<node>", then canonical(the message
  without `sig`): a config is bound to its node.
"""

import hashlib
import json

KEY_BITS = 3072
KEY_BYTES = KEY_BITS // 8
SIG_HEX = 2 * KEY_BYTES  # a signature on the wire: 768 lowercase hex digits
E = 65537  # = 2^16 + 1: verify() computes it as 16 squarings and a product
_HEX = "0123456789abcdef"
# DER of DigestInfo(sha256) before the 32 digest bytes (RFC 8017 9.2, note 1)
_DIGEST_INFO = b"\x30\x31\x30\x0d\x06\x09\x60\x86\x48\x01\x65\x03\x04\x02\x01\x05\x00\x04\x20"


def canonical(obj):
    """Compact JSON with sorted keys (MicroPython's json has no sort_keys): the same bytes
    on the device and on the host (the config hash, a config's signed statement)."""
    if isinstance(obj, dict):
        keys = sorted(obj.keys())
        return "{" + ",".join(json.dumps(k) + ":" + canonical(obj[k]) for k in keys) + "}"
    if isinstance(obj, (list, tuple)):
        return "[" + ",".join(canonical(x) for x in obj) + "]"
    return json.dumps(obj)


def is_hex(s, n):
    if type(s) is not str or len(s) != n:
        return False
    for c in s:
        if c not in _HEX:
            return False
    return True


def update_statement(version, manifest_sha256, downgrade=None):
    """downgrade: None, or (venue, table, node, boot, from_version) for a forced one."""
    d = ""
    if downgrade is not None:
        venue, table, node, boot, old = downgrade
        d = "%s/%s/%s boot=%d from=%s" % (venue, table, node, boot, old)
    return ("railbird-update/1\n%s\n%s\n%s" % (version, manifest_sha256, d)).encode()


def config_statement(venue, table, node, msg):
    body = {}
    for k in msg:
        if k != "sig":
            body[k] = msg[k]
    return ("railbird-config/1\n%s/%s/%s\n" % (venue, table, node) + canonical(body)).encode()


def public_key(text):
    """The venue's public key as a board keeps it (config.json `venue_key`: the modulus, 768
    hex digits) -> the modulus as an int, or None when `text` is not such a key."""
    if not is_hex(text, SIG_HEX) or text[0] in "01234567":
        return None  # the top bit of a 3072-bit modulus is set
    return int(text, 16)


def _encoded(statement):
    """EMSA-PKCS1-v1_5 (RFC 8017 9.2) of SHA-256(statement), KEY_BYTES long."""
    h = hashlib.sha256()
    h.update(statement)
    t = _DIGEST_INFO + h.digest()
    return b"\x00\x01" + b"\xff" * (KEY_BYTES - 3 - len(t)) + b"\x00" + t


def verify(n, statement, sig):
    """True when `sig` (768 hex digits) is the venue key's (modulus n) over `statement`."""
    if n is None or not is_hex(sig, SIG_HEX):
        return False
    s = int(sig, 16)
    if s >= n:
        return False
    # s^65537 = s^(2^16) * s, one modular product per step rather than one pow(s, E, n):
    # the same work (17 products), but the VM runs scheduled pin interrupts between the
    # steps (one product of 3072 bits, a few ms on the ESP32), not only after all of them
    x = s
    for _ in range(16):
        x = x * x % n
    x = x * s % n
    return x.to_bytes(KEY_BYTES, "big") == _encoded(statement)


# --- the order of firmware versions ----------------------------------------------------
def version_key(v):
    """The place of a firmware version in the order: the numbers in it, left to right,
    before any "+" (build metadata, as in semantic versioning: rbnode's default version
    is FW_VERSION + "+" + a hash of the files). "rbnode-0.2.0" > "rbnode-0.1.10" >
    "rbnode-0.1.9"; "rbnode-0.1.0+1a2b3c4d" and "rbnode-0.1.0+5e6f7a8b" are one place."""
    i = v.find("+")
    if i >= 0:
        v = v[:i]
    out = []
    n = -1
    for c in v:
        if "0" <= c <= "9":
            n = (0 if n < 0 else n * 10) + ord(c) - 48
        elif n >= 0:
            out.append(n)
            n = -1
    if n >= 0:
        out.append(n)
    return out


def older(a, b):
    """True when version a comes before version b (moving from b to a is a downgrade)."""
    return version_key(a) < version_key(b)
