"""rbnode.mqtt.ssl_context in the MicroPython/CPython common subset.

The end-to-end TLS test (tests/test_tls.py) runs the client under CPython against
mosquitto. MicroPython's WebAssembly port has no socket, `ssl` or `tls`, so here the
context builder runs in real MicroPython 1.27 against stand-ins with the device's API:
- `ssl` as in MicroPython >= 1.23 (micropython-lib's wrapper over `tls`): SSLContext
  defaults to CERT_NONE, has no `check_hostname`, load_verify_locations(cafile=, cadata=);
- a bare `tls` (the C module): load_verify_locations(cadata) takes one positional argument.
The client hands the context to asyncio.open_connection(host, port, ssl=, server_hostname=),
which in MicroPython >= 1.23 calls ctx.wrap_socket(sock, server_hostname=...,
do_handshake_on_connect=False), the same call CPython's asyncio makes.
"""

import ssl
from pathlib import Path

import pytest

from rbnode import mqtt

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

TLS_STUB = """
CERT_NONE = 0
CERT_OPTIONAL = 1
CERT_REQUIRED = 2
PROTOCOL_TLS_CLIENT = 0
PROTOCOL_TLS_SERVER = 1
MBEDTLS_VERSION = "stand-in"


class SSLContext:
    def __init__(self, protocol):
        self.protocol = protocol
        self.verify_mode = CERT_REQUIRED if protocol == PROTOCOL_TLS_CLIENT else CERT_NONE
        self.cadata = None

    def load_verify_locations(self, *args):  # the C method: one positional argument
        if len(args) != 1:
            raise TypeError("function takes 2 positional arguments")
        self.cadata = args[0]

    def wrap_socket(self, sock, server_side=False, do_handshake_on_connect=True,
                    server_hostname=None):
        return ("wrapped", sock, server_hostname, do_handshake_on_connect, self.verify_mode)
"""

SSL_STUB = """
import tls
from tls import CERT_NONE, CERT_OPTIONAL, CERT_REQUIRED, PROTOCOL_TLS_CLIENT


class SSLContext:
    def __init__(self, *args):
        self._context = tls.SSLContext(*args)
        self._context.verify_mode = CERT_NONE     # as micropython-lib's ssl does

    @property
    def verify_mode(self):
        return self._context.verify_mode

    @verify_mode.setter
    def verify_mode(self, val):
        self._context.verify_mode = val

    def load_verify_locations(self, cafile=None, cadata=None):
        if cafile:
            with open(cafile, "rb") as f:
                cadata = f.read()
        self._context.load_verify_locations(cadata)

    def wrap_socket(self, sock, server_side=False, do_handshake_on_connect=True,
                    server_hostname=None):
        return self._context.wrap_socket(sock, server_side=server_side,
                                         do_handshake_on_connect=do_handshake_on_connect,
                                         server_hostname=server_hostname)
"""

MAIN = """
import sys
try:
    import os
except ImportError:
    import uos as os

PEM = b"-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----\\n"
try:
    os.mkdir("/stubs")
except OSError:
    pass
with open("/stubs/tls.py", "w") as f:
    f.write(TLS_STUB)
with open("/stubs/ssl.py", "w") as f:
    f.write(SSL_STUB)
with open("/ca.pem", "wb") as f:
    f.write(PEM)
sys.path.insert(0, "/stubs")

from rbnode.mqtt import ssl_context


def check(where, inner):
    ctx = ssl_context("/ca.pem")
    c = inner(ctx)
    assert c.verify_mode == 2, (where, c.verify_mode)
    assert c.cadata == PEM, (where, c.cadata)
    assert "check_hostname" not in c.__dict__, where
    w = ctx.wrap_socket("sock", server_hostname="broker.lan", do_handshake_on_connect=False)
    assert w == ("wrapped", "sock", "broker.lan", False, 2), (where, w)
    ctx = ssl_context(None)
    assert inner(ctx).verify_mode == 0 and inner(ctx).cadata is None, where
    print(where, "ok")


# MicroPython >= 1.23 with the ssl wrapper (the ESP32 firmware's bundle)
check("ssl", lambda ctx: ctx._context)
# a build with only the C module
os.remove("/stubs/ssl.py")
for m in ("ssl", "tls"):
    sys.modules.pop(m, None)
try:
    import ssl
    raise AssertionError("ssl still importable")
except ImportError:
    pass
check("tls", lambda ctx: ctx)
print(sys.implementation.name, "TLS-CTX-OK")
"""


def test_ssl_context_cpython(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("not a certificate")
    with pytest.raises(ssl.SSLError):
        mqtt.ssl_context(str(ca))  # garbage is refused at once, not at connect time
    with pytest.raises(FileNotFoundError):
        mqtt.ssl_context(str(tmp_path / "missing.pem"))
    ctx = mqtt.ssl_context(None)
    assert ctx.verify_mode == ssl.CERT_NONE and not ctx.check_hostname


@pytest.mark.micropython
def test_ssl_context_micropython(micropython, tmp_path):
    main = tmp_path / "run_tls_ctx.py"
    main.write_text(f"TLS_STUB = {TLS_STUB!r}\nSSL_STUB = {SSL_STUB!r}\n" + MAIN)
    r = micropython(main, paths=[REPO / "firmware"], timeout=60)
    assert r.ok, r.stderr + r.stdout
    assert "ssl ok" in r.stdout and "tls ok" in r.stdout
    assert "micropython TLS-CTX-OK" in r.stdout
