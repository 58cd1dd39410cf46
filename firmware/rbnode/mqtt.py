"""MQTT 3.1.1 for the sensor node: packet encode/decode and an asyncio client.

Written in the MicroPython/CPython common subset (no typing, dataclasses, enum, match), so
the identical code runs on the ESP32 and under CPython with the simulated hardware.

Packets (OASIS MQTT 3.1.1, section numbers below): CONNECT with credentials, last will and
clean-session flag (3.1), CONNACK (3.2), PUBLISH QoS 0/1 with DUP/RETAIN (3.3), PUBACK
(3.4), SUBSCRIBE/SUBACK (3.8/3.9), UNSUBSCRIBE/UNSUBACK (3.10/3.11), PINGREQ/PINGRESP
(3.12/3.13), DISCONNECT (3.14). QoS 2 is not used by Railbird and not implemented: an
inbound QoS 2 PUBLISH is a protocol error (we never subscribe with QoS 2, so the broker
never sends one, 3.8.4).

Client (`MQTTClient`):
- asyncio streams over a non-blocking socket (MicroPython's asyncio polls the socket);
  nothing in here blocks the sensing tasks, except name resolution at connect time.
- QoS 1 publishes are kept in an in-flight window of `max_inflight` entries until their
  PUBACK; `publish()` waits for a free slot. Unacknowledged entries are re-sent with DUP=1
  (4.4) after every reconnect, in their original order, and when no PUBACK came within
  `retry_ms` on a live connection. Buffer policy: the window is the only copy; it is never
  discarded (the caller bounds it by not publishing more).
- QoS 0 publishes while offline are dropped and counted (`counters['drop_qos0']`).
- Keep-alive (3.1.2.10): a PINGREQ after `keepalive/2` s of silence on our side; the
  connection is declared dead after `1.5*keepalive` s without any packet from the broker.
- Reconnect with capped exponential backoff and full jitter:
  delay = random(0 .. min(backoff_max_ms, backoff_min_ms * 2**attempt)).
- TLS: pass `ssl=` a client SSLContext, e.g. `ssl_context(cafile)` below (CPython
  `ssl.SSLContext`; MicroPython >= 1.23 `ssl.SSLContext` or `tls.SSLContext`). The context's
  `wrap_socket(sock, server_hostname=..., do_handshake_on_connect=False)` is called by
  `asyncio.open_connection(..., ssl=, server_hostname=)` in both; the handshake then runs
  inside the first write/read, so a certificate failure is a failed connection attempt
  (counted, retried with backoff, reason in `last_error`), never a crash.
- A callback that raises (a bug in the application's message handler, say) is not a lost
  connection: the exception is caught where the client calls it, counted
  (`counters['callback_errors']`), its reason kept in `callback_error`, and the link stays
  up (a QoS 1 message is still acknowledged, so a retained message that makes its handler
  raise is not redelivered in a loop). Only network and protocol errors drop the link.
"""

try:
    import asyncio
except ImportError:  # older MicroPython names it uasyncio
    import uasyncio as asyncio

import time

try:
    from time import ticks_ms, ticks_diff
except ImportError:  # CPython
    def ticks_ms():
        return int(time.monotonic() * 1000)

    def ticks_diff(a, b):
        return a - b

try:
    from random import getrandbits
except ImportError:  # a port built without random.getrandbits
    def getrandbits(n):
        return (ticks_ms() * 1103515245 + 12345) & ((1 << n) - 1)

# Control packet types (2.2.1).
CONNECT = 1
CONNACK = 2
PUBLISH = 3
PUBACK = 4
PUBREC = 5
PUBREL = 6
PUBCOMP = 7
SUBSCRIBE = 8
SUBACK = 9
UNSUBSCRIBE = 10
UNSUBACK = 11
PINGREQ = 12
PINGRESP = 13
DISCONNECT = 14

MAX_REMAINING = 268435455  # 2.2.3: four bytes of remaining length

# CONNACK return codes (3.2.2.3).
CONNACK_REASONS = {
    0: "accepted",
    1: "unacceptable protocol version",
    2: "identifier rejected",
    3: "server unavailable",
    4: "bad user name or password",
    5: "not authorized",
}


class MQTTError(Exception):
    """A malformed packet, a refused connection or a lost connection."""


# What a connection's I/O raises: OSError (socket, TLS: ssl.SSLError is one; EOFError from
# MicroPython's readexactly is not, so it is named), MQTTError (protocol), asyncio's
# TimeoutError (connect_timeout_ms; CPython's asyncio.TimeoutError is the builtin since
# 3.11, MicroPython's its own class), ValueError (a non-UTF-8 topic, a bad address) and
# MemoryError (a packet the device heap cannot hold: the connection goes, the node stays).
LINK_ERRORS = (OSError, EOFError, MQTTError, asyncio.TimeoutError, ValueError, MemoryError)
# A connection attempt also fails on a port that cannot open one: AttributeError where
# asyncio has no open_connection (the WebAssembly port the tests run), TypeError where its
# open_connection takes no ssl= (MicroPython before 1.23). Counted, retried with backoff,
# reason in last_error, like any failed attempt.
CONNECT_ERRORS = LINK_ERRORS + (AttributeError, TypeError)

# The longest callback_error kept (SPEC.md `status.callback_error`: at most 200 characters).
REASON_MAX = 200


# -- encoding --------------------------------------------------------------------------

def encode_length(n):
    """Remaining length (2.2.3): 7 bits per byte, least significant first, bit 7 = more."""
    if n < 0 or n > MAX_REMAINING:
        raise MQTTError("remaining length out of range: %d" % n)
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _bin(s):
    """UTF-8 string or binary data with a two-byte big-endian length prefix (1.5.3)."""
    if isinstance(s, str):
        s = s.encode()
    if len(s) > 65535:
        raise MQTTError("string too long")
    return bytes((len(s) >> 8, len(s) & 0xFF)) + s


def _packet(first, body):
    return bytes((first,)) + encode_length(len(body)) + body


def connect(client_id, keepalive=60, user=None, password=None, will=None, clean=True):
    """CONNECT (3.1). `will` is (topic, message, qos, retain) or None."""
    flags = 0x02 if clean else 0
    payload = _bin(client_id)
    if will is not None:
        wtopic, wmsg, wqos, wretain = will
        flags |= 0x04 | (wqos << 3) | (0x20 if wretain else 0)
        payload += _bin(wtopic) + _bin(wmsg)
    if user is not None:
        flags |= 0x80
        payload += _bin(user)
        if password is not None:
            flags |= 0x40
            payload += _bin(password)
    elif password is not None:
        raise MQTTError("password without user name (3.1.2.9)")
    if keepalive < 0 or keepalive > 65535:
        raise MQTTError("keepalive out of range")
    var = b"\x00\x04MQTT\x04" + bytes((flags, keepalive >> 8, keepalive & 0xFF))
    return _packet(0x10, var + payload)


def publish(topic, payload, qos=0, retain=False, pid=0, dup=False):
    """PUBLISH (3.3); `pid` is used (and required) for QoS 1."""
    if qos not in (0, 1):
        raise MQTTError("qos %r not supported" % (qos,))
    if isinstance(payload, str):
        payload = payload.encode()
    first = 0x30 | (qos << 1) | (0x08 if dup else 0) | (0x01 if retain else 0)
    body = _bin(topic)
    if qos:
        if not 0 < pid < 65536:
            raise MQTTError("packet id out of range")
        body += bytes((pid >> 8, pid & 0xFF))
    return _packet(first, body + payload)


def publish_header(topic, payload_len, qos=0, retain=False, pid=0, dup=False):
    """The bytes of a PUBLISH up to (excluding) the payload, to send a payload unchanged."""
    first = 0x30 | (qos << 1) | (0x08 if dup else 0) | (0x01 if retain else 0)
    body = _bin(topic)
    if qos:
        body += bytes((pid >> 8, pid & 0xFF))
    return bytes((first,)) + encode_length(len(body) + payload_len) + body


def puback(pid):
    """PUBACK (3.4)."""
    return bytes((0x40, 2, pid >> 8, pid & 0xFF))


def subscribe(pid, topics):
    """SUBSCRIBE (3.8): fixed header flags are 0b0010 (3.8.1); `topics` is [(filter, qos)]."""
    body = bytes((pid >> 8, pid & 0xFF))
    for t, q in topics:
        body += _bin(t) + bytes((q,))
    return _packet(0x82, body)


def unsubscribe(pid, topics):
    """UNSUBSCRIBE (3.10), fixed header flags 0b0010."""
    body = bytes((pid >> 8, pid & 0xFF))
    for t in topics:
        body += _bin(t)
    return _packet(0xA2, body)


def pingreq():
    return b"\xc0\x00"


def disconnect():
    return b"\xe0\x00"


# -- decoding --------------------------------------------------------------------------

def decode_length(buf, pos=1):
    """(remaining length, index after it) from `buf` at `pos`, or None when incomplete."""
    n = 0
    shift = 0
    for i in range(4):
        if pos + i >= len(buf):
            return None
        b = buf[pos + i]
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            return n, pos + i + 1
        shift += 7
    raise MQTTError("malformed remaining length")


def split(buf):
    """One packet from the start of `buf`: (type, flags, body, consumed) or None."""
    if not buf:
        return None
    r = decode_length(buf, 1)
    if r is None:
        return None
    n, start = r
    if len(buf) < start + n:
        return None
    return buf[0] >> 4, buf[0] & 0x0F, bytes(buf[start:start + n]), start + n


def decode_connack(body):
    """(session_present, return_code) of a CONNACK body (3.2)."""
    if len(body) != 2:
        raise MQTTError("bad CONNACK length")
    return bool(body[0] & 1), body[1]


def decode_publish(flags, body):
    """(topic, payload, qos, retain, dup, pid) of a PUBLISH (3.3); pid 0 for QoS 0."""
    qos = (flags >> 1) & 3
    if qos > 1:
        raise MQTTError("QoS %d not supported" % qos)
    if len(body) < 2:
        raise MQTTError("bad PUBLISH")
    tl = (body[0] << 8) | body[1]
    pos = 2 + tl
    if len(body) < pos:
        raise MQTTError("bad PUBLISH topic length")
    topic = body[2:pos].decode()
    pid = 0
    if qos:
        if len(body) < pos + 2:
            raise MQTTError("bad PUBLISH packet id")
        pid = (body[pos] << 8) | body[pos + 1]
        pos += 2
    return topic, body[pos:], qos, bool(flags & 1), bool(flags & 8), pid


def decode_pid(body):
    """Packet identifier of a PUBACK/UNSUBACK (and SUBACK's first two bytes)."""
    if len(body) < 2:
        raise MQTTError("bad packet id")
    return (body[0] << 8) | body[1]


def decode_suback(body):
    """(pid, [return codes]) of a SUBACK (3.9); code 0x80 is failure."""
    return decode_pid(body), list(body[2:])


def topic_matches(filt, topic):
    """True when `topic` matches the subscription filter `filt` (4.7: '+' and '#')."""
    f = filt.split("/")
    t = topic.split("/")
    for i in range(len(f)):
        if f[i] == "#":
            return True
        if i >= len(t):
            return False
        if f[i] != "+" and f[i] != t[i]:
            return False
    return len(f) == len(t)


# -- TLS -------------------------------------------------------------------------------

def ssl_context(cafile=None):
    """A TLS client context for the broker.

    With `cafile` (a PEM file of the CA that signed the broker's certificate) the broker is
    authenticated: the chain must lead to that CA and the certificate must name the host
    the client connects to (`server_hostname`, default the broker host). Without it the
    connection is encrypted but NOT authenticated: anyone on the network can pose as the
    broker and collect the node's password.

    Works with CPython's `ssl`, MicroPython's `ssl` (micropython-lib wrapper over `tls`,
    1.23+; its SSLContext defaults to CERT_NONE, so the mode is always set here) and a bare
    MicroPython `tls` module (load_verify_locations takes the PEM bytes positionally).
    """
    try:
        import ssl as _ssl
    except ImportError:  # a MicroPython build without the ssl wrapper
        import tls as _ssl
    ctx = _ssl.SSLContext(_ssl.PROTOCOL_TLS_CLIENT)
    if not cafile:
        if hasattr(ctx, "check_hostname"):  # CPython: must go off before CERT_NONE
            ctx.check_hostname = False
        ctx.verify_mode = _ssl.CERT_NONE
        return ctx
    try:
        ctx.load_verify_locations(cafile=cafile)
    except TypeError:  # MicroPython tls.SSLContext: load_verify_locations(cadata)
        with open(cafile, "rb") as f:
            ctx.load_verify_locations(f.read())
    ctx.verify_mode = _ssl.CERT_REQUIRED
    return ctx


# -- client ----------------------------------------------------------------------------

# Connection states (named, as in paho).
DISCONNECTED = 0
CONNECTING = 1
CONNECTED = 2
STOPPED = 3


class MQTTClient:
    """An asyncio MQTT 3.1.1 client; see the module docstring for its policies.

    Callbacks (plain functions, called from the client's tasks, must not block):
    `on_message(topic, payload, retain)`, `on_connect()` after each CONNACK and
    resubscription, `on_disconnect()`, `on_puback(pid)`, `on_resend(pid)` per re-sent
    QoS 1 message.
    An exception a callback raises is caught, counted and kept (`callback_error`), never
    taken for a lost connection; `on_callback_error(reason)`, if given, is told at once.
    """

    def __init__(self, client_id, server, port=1883, user=None, password=None,
                 keepalive=60, ssl=None, will=None, clean=True, max_inflight=4,
                 retry_ms=10000, backoff_min_ms=250, backoff_max_ms=30000,
                 connect_timeout_ms=5000, subs=(), on_message=None, on_connect=None,
                 on_disconnect=None, on_puback=None, on_resend=None, server_hostname=None,
                 on_callback_error=None, resolve=None):
        self.client_id = client_id
        # resolve(server) -> the address to dial (rbnode.netcfg: a name, its last good
        # address as fallback); None: the socket layer resolves `server` itself
        self.resolve = resolve
        self.server = server
        self.port = port
        self.user = user
        self.password = password
        self.keepalive = keepalive
        self.ssl = ssl
        self.server_hostname = server_hostname
        self.will = will
        self.clean = clean
        self.max_inflight = max_inflight
        self.retry_ms = retry_ms
        self.backoff_min_ms = backoff_min_ms
        self.backoff_max_ms = backoff_max_ms
        self.connect_timeout_ms = connect_timeout_ms
        self.subs = list(subs)
        self.on_message = on_message
        self.on_connect = on_connect
        self.on_disconnect = on_disconnect
        self.on_puback = on_puback
        self.on_resend = on_resend
        self.on_callback_error = on_callback_error
        self._last_try = ticks_ms()
        self._stopped = False
        self._redial = False
        self.state = DISCONNECTED
        # In-flight window: list of [pid, topic, payload, retain, sent_ms], oldest first.
        self.inflight = []
        self._pid = 0
        self._reader = None
        self._writer = None
        self._lock = asyncio.Lock()
        self._slot = asyncio.Event()   # set when an in-flight slot may have freed
        self._up = asyncio.Event()     # set while connected
        self._down = asyncio.Event()   # set when the connection is lost
        self._last_rx = 0
        self._last_tx = 0
        self._suback = {}
        self.attempt = 0
        self.last_error = None
        self.callback_error = None  # the reason of the last callback that raised
        self.counters = {"connects": 0, "reconnects": 0, "conn_fail": 0, "tx": 0, "rx": 0,
                         "retransmits": 0, "pings": 0, "drop_qos0": 0, "callback_errors": 0}

    # -- state ---------------------------------------------------------------------
    def isconnected(self):
        return self.state == CONNECTED

    def alive_ms(self):
        """ms since the broker last sent a packet (connected) or since the last connection
        attempt began (not connected): a supervisor's measure of the network task."""
        if self.state == CONNECTED:
            return ticks_diff(ticks_ms(), self._last_rx)
        return ticks_diff(ticks_ms(), self._last_try)

    def inflight_count(self):
        return len(self.inflight)

    def _next_pid(self):
        while True:
            self._pid = self._pid % 65535 + 1
            used = False
            for e in self.inflight:
                if e[0] == self._pid:
                    used = True
                    break
            if not used and self._pid not in self._suback:
                return self._pid

    # -- I/O -------------------------------------------------------------------------
    async def _send(self, data):
        w = self._writer
        if w is None:
            raise MQTTError("not connected")
        async with self._lock:
            w.write(data)
            await w.drain()
        self._last_tx = ticks_ms()
        self.counters["tx"] += 1

    async def _read_packet(self):
        r = self._reader
        b = await r.readexactly(1)
        first = b[0]
        n = 0
        shift = 0
        for _ in range(4):
            b = await r.readexactly(1)
            n |= (b[0] & 0x7F) << shift
            if not b[0] & 0x80:
                break
            shift += 7
        else:
            raise MQTTError("malformed remaining length")
        body = await r.readexactly(n) if n else b""
        self._last_rx = ticks_ms()
        self.counters["rx"] += 1
        return first >> 4, first & 0x0F, body

    async def _open(self):
        addr = self.server if self.resolve is None else self.resolve(self.server)
        if self.ssl is not None:
            return await asyncio.open_connection(addr, self.port, ssl=self.ssl,
                                                 server_hostname=self.server_hostname
                                                 or self.server)
        return await asyncio.open_connection(addr, self.port)

    async def connect(self):
        """One connection attempt: TCP (+TLS), CONNECT, CONNACK, SUBSCRIBE, re-send."""
        self.state = CONNECTING
        self._last_try = ticks_ms()
        t = self.connect_timeout_ms / 1000
        try:
            self._reader, self._writer = await asyncio.wait_for(self._open(), t)
            await self._send(connect(self.client_id, self.keepalive, self.user,
                                     self.password, self.will, self.clean))
            ptype, flags, body = await asyncio.wait_for(self._read_packet(), t)
            if ptype != CONNACK:
                raise MQTTError("expected CONNACK, got type %d" % ptype)
            sp, rc = decode_connack(body)
            if rc:
                raise MQTTError("connection refused: %s" % CONNACK_REASONS.get(rc, rc))
        except CONNECT_ERRORS:
            await self._close()
            self.state = DISCONNECTED
            raise
        if self._stopped:
            await self._close()
            self.state = STOPPED
            raise MQTTError("stopped")
        self._down = asyncio.Event()
        self.state = CONNECTED
        return sp

    async def _close(self):
        w = self._writer
        self._writer = None
        self._reader = None
        if w is not None:
            try:
                w.close()
                await asyncio.wait_for(w.wait_closed(), 1)
            except LINK_ERRORS:  # closing is best effort: the connection is gone either way
                pass

    async def _after_connect(self):
        if self.subs:
            pid = self._next_pid()
            self._suback[pid] = None
            await self._send(subscribe(pid, self.subs))
        # 4.4: re-send unacknowledged QoS 1 messages in their original order, DUP set.
        for e in list(self.inflight):
            await self._send(publish_header(e[1], len(e[2]), 1, e[3], e[0], True) + e[2])
            e[4] = ticks_ms()
            self.counters["retransmits"] += 1
            if self.on_resend:
                self._call("on_resend", self.on_resend, e[0])

    # -- callbacks -------------------------------------------------------------------------
    def _call(self, where, fn, *args):
        """fn(*args), an application callback: what it raises is its bug, not the link's;
        it is counted and kept with `where` (the callback's name, or a message's topic),
        and the caller carries on."""
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 - a handler's bug must not drop the link
            self._callback_failed(where, e)

    def _callback_failed(self, where, e):
        self.counters["callback_errors"] += 1
        self.callback_error = ("%s: %r" % (where, e))[:REASON_MAX]
        if self.on_callback_error:
            try:
                self.on_callback_error(self.callback_error)
            except Exception:  # noqa: BLE001 - counted already; the reporter is best effort
                pass

    def _lost(self, why):
        if self.state == CONNECTED:
            self.last_error = why
            self.state = DISCONNECTED
            self._up.clear()
            self._down.set()
            if self.on_disconnect:
                self._call("on_disconnect", self.on_disconnect)

    async def _rx_loop(self):
        try:
            while self.state == CONNECTED:
                ptype, flags, body = await self._read_packet()
                self._dispatch(ptype, flags, body)
                if ptype == PUBLISH and (flags >> 1) & 3 == 1:
                    await self._send(puback(decode_publish(flags, body)[5]))
        except LINK_ERRORS as e:
            self._lost("rx: %r" % (e,))

    def _dispatch(self, ptype, flags, body):
        if ptype == PUBACK:
            pid = decode_pid(body)
            for i in range(len(self.inflight)):
                if self.inflight[i][0] == pid:
                    self.inflight.pop(i)
                    self._slot.set()
                    if self.on_puback:
                        self._call("on_puback", self.on_puback, pid)
                    break
        elif ptype == PUBLISH:
            topic, payload, qos, retain, dup, pid = decode_publish(flags, body)
            if self.on_message:
                self._call(topic, self.on_message, topic, payload, retain)
        elif ptype == SUBACK:
            pid, codes = decode_suback(body)
            self._suback.pop(pid, None)
        elif ptype == PINGRESP or ptype == UNSUBACK:
            pass
        else:
            raise MQTTError("unexpected packet type %d" % ptype)

    async def _keepalive_loop(self):
        ka = self.keepalive * 1000
        period = 1000 if ka == 0 else min(1000, ka // 4)
        try:
            while self.state == CONNECTED:
                await asyncio.sleep(period / 1000)
                if self.state != CONNECTED:
                    break
                now = ticks_ms()
                if ka and ticks_diff(now, self._last_rx) > ka * 3 // 2:
                    self._lost("keepalive timeout")
                    break
                if ka and ticks_diff(now, self._last_tx) >= ka // 2:
                    await self._send(pingreq())
                    self.counters["pings"] += 1
                for e in self.inflight:
                    if ticks_diff(now, e[4]) >= self.retry_ms:
                        await self._send(publish_header(e[1], len(e[2]), 1, e[3], e[0], True)
                                         + e[2])
                        e[4] = ticks_ms()
                        self.counters["retransmits"] += 1
                        if self.on_resend:
                            self._call("on_resend", self.on_resend, e[0])
        except LINK_ERRORS as e:
            self._lost("keepalive: %r" % (e,))

    # -- public API --------------------------------------------------------------------
    async def run(self):
        """Connect, serve, and reconnect with capped exponential backoff until stop()."""
        while not self._stopped:
            try:
                await self.connect()
            except CONNECT_ERRORS as e:
                self.last_error = "connect: %r" % (e,)
                self.counters["conn_fail"] += 1
                delay = self.backoff_ms(self.attempt)
                self.attempt += 1
                # in slices: drop() (new settings) redials without waiting out the backoff
                self._redial = False
                while delay > 0 and not self._redial and not self._stopped:
                    await asyncio.sleep(min(delay, 100) / 1000)
                    delay -= 100
                continue
            if self.counters["connects"]:
                self.counters["reconnects"] += 1
            self.counters["connects"] += 1
            self.attempt = 0
            self._last_rx = self._last_tx = ticks_ms()
            rx = asyncio.create_task(self._rx_loop())
            ka = asyncio.create_task(self._keepalive_loop())
            try:
                try:
                    await self._after_connect()
                    self._up.set()
                    if self.on_connect:
                        self._call("on_connect", self.on_connect)
                except LINK_ERRORS as e:
                    self._lost("after connect: %r" % (e,))
                await self._down.wait()
            finally:
                rx.cancel()
                ka.cancel()
                self._up.clear()
                if self.state == CONNECTED:
                    self.state = DISCONNECTED
            await self._close()
            self._slot.set()

    def backoff_ms(self, attempt):
        """Delay before reconnect attempt `attempt` + 1: capped exponential with full
        jitter, uniform in [10, min(backoff_max_ms, backoff_min_ms * 2**attempt)] ms."""
        cap = min(self.backoff_max_ms, self.backoff_min_ms << min(attempt, 16))
        d = getrandbits(16) * cap // 65536
        return d if d > 10 else 10

    async def wait_connected(self):
        await self._up.wait()

    async def publish(self, topic, payload, qos=1, retain=False):
        """Publish; QoS 1 waits for an in-flight slot and returns the packet id (the
        message is re-sent until acknowledged, across reconnects); QoS 0 returns 0 and is
        dropped (counted) when not connected."""
        if isinstance(payload, str):
            payload = payload.encode()
        if qos == 0:
            if self.state != CONNECTED:
                self.counters["drop_qos0"] += 1
                return 0
            try:
                await self._send(publish(topic, payload, 0, retain))
            except LINK_ERRORS as e:
                self._lost("tx: %r" % (e,))
            return 0
        while len(self.inflight) >= self.max_inflight:
            self._slot.clear()
            await self._slot.wait()
        pid = self._next_pid()
        entry = [pid, topic, payload, retain, ticks_ms()]
        self.inflight.append(entry)
        if self.state == CONNECTED:
            try:
                await self._send(publish(topic, payload, 1, retain, pid))
            except LINK_ERRORS as e:
                self._lost("tx: %r" % (e,))
        return pid

    async def disconnect(self):
        """Send DISCONNECT (the broker then discards the will, 3.14.4) and stop."""
        was = self.state == CONNECTED
        self._stopped = True
        self.state = STOPPED
        if was:
            try:
                await self._send(disconnect())
            except LINK_ERRORS:  # going away: the broker then publishes the will instead
                pass
        self._down.set()
        await self._close()

    def drop(self, why):
        """Give up the connection now (no DISCONNECT) and reconnect at once: new broker
        settings, or the Wi-Fi link gone under it."""
        self._lost(why)
        self.attempt = 0
        self._redial = True

    def stop(self):
        """Stop without DISCONNECT (the broker publishes the will)."""
        self._stopped = True
        self.state = STOPPED
        self._down.set()
