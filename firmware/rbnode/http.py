"""A tiny HTTP/1.0 GET client on asyncio streams (MicroPython/CPython common subset) for the
over-the-air download: the body goes to a sink chunk by chunk, so a file is never held in
RAM (the node hashes and writes each chunk as it comes). No redirects, no chunked transfer
encoding (HTTP/1.0 has neither), no TLS: integrity comes from the SHA-256 the authenticated
MQTT command and the manifest carry, not from the transport.

    n = await get("http://host:port/path", sink, timeout_ms=30000)   # sink(bytes)
Raises HTTPError (not 200, a short body, a malformed answer), OSError (network) or
asyncio.TimeoutError (no byte for timeout_ms).
"""

try:
    import asyncio
except ImportError:  # older MicroPython names it uasyncio
    import uasyncio as asyncio

CHUNK = 1024


class HTTPError(Exception):
    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def split_url(url):
    """"http://host[:port]/path" -> (host, port, path)."""
    if not url.startswith("http://"):
        raise HTTPError("not an http:// url: %s" % url[:60])
    rest = url[7:]
    i = rest.find("/")
    if i < 0:
        hostport, path = rest, "/"
    else:
        hostport, path = rest[:i], rest[i:]
    j = hostport.rfind(":")
    if j >= 0 and hostport[j + 1:].isdigit():
        return hostport[:j], int(hostport[j + 1:]), path
    return hostport, 80, path


async def get(url, sink, timeout_ms=30000, chunk=CHUNK):
    host, port, path = split_url(url)
    t = timeout_ms / 1000
    r, w = await asyncio.wait_for(asyncio.open_connection(host, port), t)
    try:
        w.write(("GET %s HTTP/1.0\r\nHost: %s\r\n\r\n" % (path, host)).encode())
        await w.drain()
        line = await asyncio.wait_for(r.readline(), t)
        parts = line.split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
            raise HTTPError("%s: not an HTTP answer" % path)
        code = int(parts[1])
        length = None
        while True:
            h = await asyncio.wait_for(r.readline(), t)
            if not h or h == b"\r\n" or h == b"\n":
                break
            h = h.decode()
            if h[:15].lower() == "content-length:":
                length = int(h[15:].strip())
        if code != 200:
            raise HTTPError("%s: HTTP %d" % (path, code))
        n = 0
        while length is None or n < length:
            want = chunk if length is None or length - n > chunk else length - n
            b = await asyncio.wait_for(r.read(want), t)
            if not b:
                break
            n += len(b)
            sink(b)
        if length is not None and n != length:
            raise HTTPError("%s: %d of %d bytes" % (path, n, length))
        return n
    finally:
        try:
            w.close()
            await asyncio.wait_for(w.wait_closed(), 1)
        except (OSError, asyncio.TimeoutError):  # the answer is in (or the error raised):
            # closing is best effort
            pass
