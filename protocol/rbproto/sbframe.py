"""Scoreboard serial frames (protocol/SCOREBOARD.md), MicroPython/CPython common subset.

One frame is one ASCII line:  $ SS K : PAYLOAD * CCCC \n
  SS    sequence number, 2 upper-case hex digits (00..FF)
  K     frame kind, one upper-case letter
  PAYLOAD  printable ASCII 0x20..0x7E except '$' '*' (at most MAX_PAYLOAD bytes)
  CCCC  CRC-16/CCITT-FALSE of the bytes between '$' and '*', 4 upper-case hex digits

The one implementation: the host imports it as `rbproto.sbframe`, and the firmware build
copies the `rbproto` package onto the scoreboard node as it does for the sensor node.
"""

PROTO = 1
MAX_PAYLOAD = 120
_MAX_BODY = MAX_PAYLOAD + 4  # SS K : payload

# host -> board
SCREEN = "S"
ANNOUNCE = "A"
BRIGHT = "B"
PING = "P"
QUERY = "Q"
CLEAR = "C"
# board -> host
ACK = "K"
NAK = "N"
HELLO = "H"

_HEX = "0123456789ABCDEF"


def crc16(data, crc=0xFFFF):
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no xorout).
    crc16(b"123456789") == 0x29B1."""
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def _hex(n, width):
    s = ""
    for _ in range(width):
        s = _HEX[n & 15] + s
        n >>= 4
    return s


def encode(seq, kind, payload=""):
    """One frame as bytes. Raises ValueError on a payload the framing cannot carry."""
    if len(kind) != 1 or not ("A" <= kind <= "Z"):
        raise ValueError("bad kind")
    if len(payload) > MAX_PAYLOAD:
        raise ValueError("payload too long")
    for ch in payload:
        o = ord(ch)
        if o < 0x20 or o > 0x7E or ch == "$" or ch == "*":
            raise ValueError("bad payload char")
    body = (_hex(seq & 0xFF, 2) + kind + ":" + payload).encode()
    return b"$" + body + b"*" + _hex(crc16(body), 4).encode() + b"\n"


def pack(fields):
    """dict -> 'k=v;k=v' (keys sorted, so equal dicts give equal frames)."""
    keys = sorted(fields)
    out = []
    for k in keys:
        v = fields[k]
        if v is None:
            continue
        v = str(v)
        if ";" in v or "=" in v:
            raise ValueError("bad field value")
        out.append(k + "=" + v)
    return ";".join(out)


def unpack(payload):
    """'k=v;k=v' -> dict of str. Raises ValueError on a malformed item."""
    out = {}
    if not payload:
        return out
    for item in payload.split(";"):
        i = item.find("=")
        if i <= 0:
            raise ValueError("bad field")
        out[item[:i]] = item[i + 1 :]
    return out


class Parser:
    """Byte stream -> frames. feed() returns a list of (seq, kind, payload) for good frames
    and (-1, None, reason) for a frame that started but was corrupt (reason: 'crc',
    'format', 'long'). Bytes outside any frame are counted in `garbage`, never raised."""

    def __init__(self):
        self.buf = bytearray()
        self.inframe = False
        self.garbage = 0
        self.frames = 0
        self.bad = 0

    def feed(self, data):
        out = []
        for b in data:
            if b == 0x24:  # '$'
                if self.inframe:
                    self.bad += 1
                    out.append((-1, None, "format"))
                self.buf = bytearray()
                self.inframe = True
            elif not self.inframe:
                if b != 0x0A and b != 0x0D:
                    self.garbage += 1
            elif b == 0x0A:
                self.inframe = False
                out.append(self._frame())
            elif b == 0x0D:
                pass
            elif len(self.buf) >= _MAX_BODY + 5:
                self.inframe = False
                self.bad += 1
                self.garbage += len(self.buf)
                out.append((-1, None, "long"))
            else:
                self.buf.append(b)
        return out

    def _frame(self):
        buf = self.buf
        self.buf = bytearray()
        n = len(buf)
        if n < 9 or buf[n - 5] != 0x2A or buf[3] != 0x3A:  # '*' and ':'
            self.bad += 1
            return (-1, None, "format")
        for b in buf:
            if b < 0x20 or b > 0x7E:
                self.bad += 1
                return (-1, None, "format")
        body = bytes(buf[: n - 5])
        try:
            crc = int(bytes(buf[n - 4 :]).decode(), 16)
            seq = int(bytes(buf[:2]).decode(), 16)
        except ValueError:
            self.bad += 1
            return (-1, None, "format")
        if crc16(body) != crc:
            self.bad += 1
            return (-1, None, "crc")
        kind = chr(buf[2])
        if not ("A" <= kind <= "Z"):
            self.bad += 1
            return (-1, None, "format")
        self.frames += 1
        return (seq, kind, body[4:].decode())
