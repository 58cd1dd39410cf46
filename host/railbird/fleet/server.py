"""The HTTP server nodes download a firmware set from (rbnode.http: HTTP/1.0 GET).

`FirmwareServer(fw, bind, port).start()` serves exactly manifest.json and the files it
lists, under /fw/<version>/ (so a node asked for one version can never be handed another
set's file), read from disk at each request; anything else is 404. Integrity does not
depend on this server: the node checks the manifest against the SHA-256 in the
authenticated MQTT command and every file against the manifest. `.served` counts the
answered requests per path, `.url(host)` is the base URL for the command.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

from railbird.fleet.firmware import FirmwareSet

log = logging.getLogger("railbird.fleet.server")
CHUNK = 16384


class FirmwareServer:
    def __init__(self, fw: FirmwareSet, bind: str = "0.0.0.0", port: int = 8270):
        self.fw = fw
        self.prefix = f"/fw/{fw.version}/"
        self.served: Counter[str] = Counter()
        self.refused = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"
            server_version = "railbird-fw"

            def do_GET(self):
                path = unquote(self.path.split("?", 1)[0])
                f = None
                if path.startswith(server.prefix):
                    f = server.fw.path_of(path[len(server.prefix) :])
                try:
                    data = f.read_bytes() if f is not None else None
                except OSError:
                    data = None
                if data is None:
                    server.refused += 1
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                for i in range(0, len(data), CHUNK):
                    self.wfile.write(data[i : i + CHUNK])
                server.served[path[len(server.prefix) :]] += 1

            def log_message(self, fmt, *args):
                log.debug("%s %s", self.address_string(), fmt % args)

        self.httpd = ThreadingHTTPServer((bind, port), Handler)
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def url(self, host: str) -> str:
        return f"http://{host}:{self.port}{self.prefix}"

    def start(self) -> FirmwareServer:
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, name="railbird-fw-http", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
