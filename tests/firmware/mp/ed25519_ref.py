"""Ed25519 verification (RFC 8032 5.1.7) in pure Python with big ints, MicroPython/CPython
common subset, for the signature-scheme benchmark only (tools/bench_signing.py, `make
bench-sign`): the node checks RSA-3072 (rbproto.signing); docs/firmware-sensing.md says why."""

P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493
D = (-121665 * pow(121666, P - 2, P)) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)
M64 = 0xFFFFFFFFFFFFFFFF

_K = None


def _k512():
    # the SHA-512 round constants: first 64 bits of the fractional parts of the cube roots
    # of the first 80 primes (FIPS 180-4 4.2.3), computed rather than listed
    global _K
    if _K is None:
        ps = []
        n = 2
        while len(ps) < 80:
            if all(n % q for q in ps if q * q <= n):
                ps.append(n)
            n += 1
        ks = []
        for p in ps:
            # integer cube root of p * 2^192, exact by Newton on big ints
            x = p << 192
            r = 1 << 68  # p < 410: p * 2^192 < 2^201
            while True:
                y = (2 * r + x // (r * r)) // 3
                if y >= r:
                    break
                r = y
            while r * r * r > x:
                r -= 1
            ks.append(r & M64)
        _K = ks
    return _K


def _iv():
    # first 64 bits of the fractional parts of the square roots of the first 8 primes
    out = []
    for p in (2, 3, 5, 7, 11, 13, 17, 19):
        x = p << 128
        r = 1 << 67  # p < 20: p * 2^128 < 2^133
        while True:
            y = (r + x // r) // 2
            if y >= r:
                break
            r = y
        out.append(r & M64)
    return out


def _rotr(x, n):
    return ((x >> n) | (x << (64 - n))) & M64


def sha512(data):
    K = _k512()
    h = _iv()
    n = len(data)
    data = bytes(data) + b"\x80" + b"\x00" * ((111 - n) % 128) + (n * 8).to_bytes(16, "big")
    for off in range(0, len(data), 128):
        w = [int.from_bytes(data[off + 8 * i : off + 8 * i + 8], "big") for i in range(16)]
        for i in range(16, 80):
            a, b = w[i - 15], w[i - 2]
            s0 = _rotr(a, 1) ^ _rotr(a, 8) ^ (a >> 7)
            s1 = _rotr(b, 19) ^ _rotr(b, 61) ^ (b >> 6)
            w.append((w[i - 16] + s0 + w[i - 7] + s1) & M64)
        a, b, c, d, e, f, g, hh = h
        for i in range(80):
            t1 = (
                hh
                + (_rotr(e, 14) ^ _rotr(e, 18) ^ _rotr(e, 41))
                + ((e & f) ^ (~e & g))
                + K[i]
                + w[i]
            ) & M64
            t2 = (
                (_rotr(a, 28) ^ _rotr(a, 34) ^ _rotr(a, 39)) + ((a & b) ^ (a & c) ^ (b & c))
            ) & M64
            hh, g, f, e, d, c, b, a = g, f, e, (d + t1) & M64, c, b, a, (t1 + t2) & M64
        r = (a, b, c, d, e, f, g, hh)  # MicroPython's zip has no strict=
        h = [(h[j] + r[j]) & M64 for j in range(8)]
    return b"".join(x.to_bytes(8, "big") for x in h)


def _add(p, q):
    # extended coordinates, a = -1 (RFC 8032 5.1.4)
    x1, y1, z1, t1 = p
    x2, y2, z2, t2 = q
    a = (y1 - x1) * (y2 - x2) % P
    b = (y1 + x1) * (y2 + x2) % P
    c = 2 * t1 * t2 * D % P
    dd = 2 * z1 * z2 % P
    e, f, g, h = b - a, dd - c, dd + c, b + a
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def _dbl(p):
    x1, y1, z1, _ = p
    a = x1 * x1 % P
    b = y1 * y1 % P
    c = 2 * z1 * z1 % P
    h = a + b
    e = h - (x1 + y1) * (x1 + y1) % P
    g = a - b
    f = c + g
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def _decode(s):
    y = int.from_bytes(s, "little")
    sign = y >> 255
    y &= (1 << 255) - 1
    if y >= P:
        return None
    u = (y * y - 1) % P
    v = (D * y * y + 1) % P
    x = u * pow(v, 3, P) * pow(u * pow(v, 7, P), (P - 5) // 8, P) % P
    vx2 = v * x * x % P
    if vx2 == (-u) % P:
        x = x * SQRT_M1 % P
    elif vx2 != u:
        return None
    if x == 0 and sign:
        return None
    if x & 1 != sign:
        x = P - x
    return (x, y, 1, x * y % P)


def _encode(p):
    x, y, z, _ = p
    zi = pow(z, P - 2, P)
    x, y = x * zi % P, y * zi % P
    return (y | ((x & 1) << 255)).to_bytes(32, "little")


_B = None


def _base():
    global _B
    if _B is None:
        y = 4 * pow(5, P - 2, P) % P
        _B = _decode(y.to_bytes(32, "little"))
    return _B


def verify(pub, msg, sig):
    """RFC 8032 5.1.7 (cofactorless): True when sig (64 bytes) is pub's (32) over msg."""
    if len(pub) != 32 or len(sig) != 64:
        return False
    a = _decode(pub)
    r = sig[:32]
    s = int.from_bytes(sig[32:], "little")
    if a is None or s >= L:
        return False
    k = int.from_bytes(sha512(r + pub + msg), "little") % L
    # [s]B - [k]A in one pass (Straus): -A = (-x, y)
    na = ((P - a[0]) % P, a[1], 1, (P - a[3]) % P)
    b = _base()
    bna = _add(b, na)
    q = (0, 1, 1, 0)
    for i in range(252, -1, -1):  # s, k < L < 2^253
        q = _dbl(q)
        sb, kb = (s >> i) & 1, (k >> i) & 1
        if sb and kb:
            q = _add(q, bna)
        elif sb:
            q = _add(q, b)
        elif kb:
            q = _add(q, na)
    return _encode(q) == bytes(r)
