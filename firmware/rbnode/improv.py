"""Improv Wi-Fi over serial, the provisioning subset (https://www.improv-wifi.com/serial/):
re-onboarding of a board that lost its Wi-Fi for good, without a reflash.

Packet: b"IMPROV", version 1, type, length, data, checksum (the sum of every byte before it,
modulo 256). Types: 1 current state, 2 error state, 3 RPC command, 4 RPC result. RPC commands
handled: 1 send Wi-Fi settings (ssid and password, each a length byte and its bytes), 2
request current state, 3 request device information. Another command is answered with
error 2 (unknown RPC command), a bad packet with error 1.

`Session(info, on_wifi)`: `feed(data)` -> the bytes to write back; `on_wifi(ssid, password)`
is called for new settings (the node tries them: rbnode.netcfg), and `result(ok)` later gives
the answer: state provisioned and the RPC result, or error 3 (unable to connect) and state
ready again.
"""

HEADER = b"IMPROV"
VERSION = 1
T_STATE, T_ERROR, T_RPC, T_RESULT = 1, 2, 3, 4
READY, PROVISIONING, PROVISIONED = 2, 3, 4
E_NONE, E_PACKET, E_UNKNOWN, E_CONNECT = 0, 1, 2, 3
RPC_WIFI, RPC_STATE, RPC_INFO = 1, 2, 3
_MAX = 300  # bytes kept while waiting for a whole packet


def packet(ptype, data):
    b = bytearray(HEADER)
    b.append(VERSION)
    b.append(ptype)
    b.append(len(data))
    b.extend(data)
    b.append(sum(b) & 0xFF)
    return bytes(b)


def strings(*items):
    out = bytearray()
    for s in items:
        e = s.encode() if isinstance(s, str) else s
        out.append(len(e))
        out.extend(e)
    return bytes(out)


def rpc_result(cmd, items):
    d = strings(*items)
    return packet(T_RESULT, bytes((cmd, len(d))) + d)


def split(buf):
    """-> (packets [(type, data)], the rest of buf, bad packets): bytes before a header
    (console output, noise) are skipped."""
    out = []
    bad = 0
    while True:
        i = buf.find(HEADER)
        if i < 0:
            return out, buf[-(len(HEADER) - 1):], bad
        buf = buf[i:]
        if len(buf) < 9:
            return out, buf, bad
        n = buf[8]
        if len(buf) < 10 + n:
            return out, buf, bad
        p = buf[:10 + n]
        buf = buf[10 + n:]
        if p[6] != VERSION or (sum(p[:-1]) & 0xFF) != p[-1]:
            bad += 1
            continue
        out.append((p[7], bytes(p[9:9 + n])))


def _wifi(data):
    """RPC data of command 1 -> (ssid, password); ValueError when malformed."""
    n = data[0]
    ssid = data[1:1 + n]
    if len(ssid) != n or n == 0 or 1 + n >= len(data):
        raise ValueError("ssid")
    m = data[1 + n]
    pw = data[2 + n:2 + n + m]
    if len(pw) != m:
        raise ValueError("password")
    return ssid.decode(), pw.decode()


class Session:
    def __init__(self, info, on_wifi):
        self.info = info  # (firmware name, version, chip family, device name)
        self.on_wifi = on_wifi
        self.state = READY
        self.buf = b""
        self.bad = 0

    def feed(self, data):
        self.buf += data
        pkts, self.buf, bad = split(self.buf)
        if len(self.buf) > _MAX:
            self.buf = self.buf[-_MAX:]
        out = b""
        for _ in range(bad):
            out += packet(T_ERROR, bytes((E_PACKET,)))
        self.bad += bad
        for ptype, data in pkts:
            if ptype == T_RPC:
                out += self._rpc(data)
        return out

    def _rpc(self, data):
        if len(data) < 2 or data[1] != len(data) - 2:
            return packet(T_ERROR, bytes((E_PACKET,)))
        cmd, body = data[0], data[2:]
        if cmd == RPC_STATE:
            return packet(T_STATE, bytes((self.state,)))
        if cmd == RPC_INFO:
            return rpc_result(RPC_INFO, self.info)
        if cmd == RPC_WIFI:
            try:
                ssid, pw = _wifi(body)
            except (ValueError, IndexError, UnicodeError):
                return packet(T_ERROR, bytes((E_PACKET,)))
            self.state = PROVISIONING
            self.on_wifi(ssid, pw)
            return packet(T_ERROR, bytes((E_NONE,))) + packet(T_STATE, bytes((PROVISIONING,)))
        return packet(T_ERROR, bytes((E_UNKNOWN,)))

    def result(self, ok):
        """The settings tried for the last RPC 1 worked (the broker reached) or not."""
        if ok:
            self.state = PROVISIONED
            return packet(T_STATE, bytes((PROVISIONED,))) + rpc_result(RPC_WIFI, ())
        self.state = READY
        return packet(T_ERROR, bytes((E_CONNECT,))) + packet(T_STATE, bytes((READY,)))
