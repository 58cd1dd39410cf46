"""Improv Wi-Fi over serial, the host's side (https://www.improv-wifi.com/serial/): new Wi-Fi
settings for a board that lost its Wi-Fi, over its USB serial port, without a reflash
(`railbird node wifi`; the board's side is firmware/rbnode/improv.py).

The board answers once its Wi-Fi has been down `improv_after_s` (30 s): state ready; the
settings then go to it (RPC 1) and it reports provisioned only once it reached the broker
with them, else error 3 (unable to connect) and it keeps the old ones.
"""

from __future__ import annotations

import contextlib
import os
import termios
import time
import tty
from dataclasses import dataclass

HEADER = b"IMPROV"
STATES = {2: "ready", 3: "provisioning", 4: "provisioned"}
ERRORS = {
    1: "invalid RPC packet",
    2: "unknown RPC command",
    3: "unable to connect",
    255: "unknown error",
}


class ImprovError(Exception):
    pass


@dataclass(frozen=True)
class Packet:
    ptype: int
    data: bytes


def packet(ptype: int, data: bytes) -> bytes:
    b = HEADER + bytes((1, ptype, len(data))) + data
    return b + bytes((sum(b) & 0xFF,))


def rpc(cmd: int, data: bytes = b"") -> bytes:
    return packet(3, bytes((cmd, len(data))) + data)


def wifi_rpc(ssid: str, password: str) -> bytes:
    s, p = ssid.encode(), password.encode()
    if not 1 <= len(s) <= 32 or len(p) > 64:
        raise ImprovError("the SSID must be 1..32 bytes and the password at most 64")
    return rpc(1, bytes((len(s),)) + s + bytes((len(p),)) + p)


def parse(buf: bytes) -> tuple[list[Packet], bytes]:
    """Whole packets in `buf` (anything else, console output, skipped) and the rest."""
    out: list[Packet] = []
    while True:
        i = buf.find(HEADER)
        if i < 0:
            return out, buf[-5:]
        buf = buf[i:]
        if len(buf) < 10 or len(buf) < 10 + buf[8]:
            return out, buf
        n = buf[8]
        p, buf = buf[: 10 + n], buf[10 + n :]
        if sum(p[:-1]) & 0xFF == p[-1]:
            out.append(Packet(p[7], bytes(p[9 : 9 + n])))


class Port:
    """A serial port (a USB serial device, or a pty in the tests) in raw mode, 115200 baud."""

    def __init__(self, path: str):
        self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(self.fd)
        attrs = termios.tcgetattr(self.fd)
        attrs[4] = attrs[5] = termios.B115200
        termios.tcsetattr(self.fd, termios.TCSANOW, attrs)
        self.buf = b""

    def send(self, b: bytes) -> None:
        os.write(self.fd, b)

    def packets(self, timeout: float) -> list[Packet]:
        end = time.monotonic() + timeout
        while True:
            # nothing waiting (BlockingIOError) or the board end not open yet (EIO on a pty)
            with contextlib.suppress(OSError):
                self.buf += os.read(self.fd, 512)
            got, self.buf = parse(self.buf)
            if got or time.monotonic() >= end:
                return got
            time.sleep(0.02)

    def close(self) -> None:
        os.close(self.fd)


def provision(port: Port, ssid: str, password: str, *, wait: float, say) -> None:
    """Send `ssid`/`password` to the board on `port`; returns once it reports provisioned,
    ImprovError otherwise (no answer within `wait` s, unable to connect, a refused packet)."""
    end = time.monotonic() + wait
    state = None
    while state is None:
        if time.monotonic() >= end:
            raise ImprovError(
                "no Improv answer: the board offers Improv only after its Wi-Fi has been "
                "down 30 s; a board still on the network takes a `net` command instead"
            )
        port.send(rpc(2))
        for p in port.packets(1.0):
            if p.ptype == 1 and p.data:
                state = STATES.get(p.data[0], str(p.data[0]))
    say(f"board is {state}; sending the settings for {ssid}")
    port.send(wifi_rpc(ssid, password))
    while time.monotonic() < end:
        for p in port.packets(1.0):
            if p.ptype == 2 and p.data and p.data[0]:
                raise ImprovError(f"the board says: {ERRORS.get(p.data[0], p.data[0])}")
            if p.ptype == 1 and p.data and p.data[0] == 4:
                return
    raise ImprovError(f"the board did not reach the broker with {ssid} within {wait:.0f} s")
