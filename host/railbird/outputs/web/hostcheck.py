"""Which `Host` a request may name (DNS rebinding, issue 23 item 10).

A web page on the internet, opened by a phone on the venue Wi-Fi, can have its own domain
name resolve to this server's LAN address and then read our pages as same-origin (and spend
PIN guesses). What the browser sends in `Host` is then that domain. So a request is served
only when its `Host` is an IP address (a rebinding attack needs a name: an address is what
a phone types, or what a QR code holds), `localhost`, this machine's own names (its host
name, with `.local` for mDNS), or a name the owner listed in `outputs.web.allowed_hosts`.
Anything else gets 400, counted (`bad_host`).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable


def own_names() -> set[str]:
    """This machine's names as a browser on the LAN may reach it: its host name and the
    mDNS `<name>.local`. No DNS lookup (`getfqdn` asks the resolver, which can hang for
    seconds at start-up on a venue network): a name DNS gives it goes in `allowed_hosts`."""
    out = {"localhost"}
    name = socket.gethostname().strip().rstrip(".").lower()
    if name:
        out.add(name)
        out.add(name.split(".")[0] + ".local")
    return out


def host_name(header: str | None) -> str | None:
    """The name or address in a `Host` header, without its port; None when it has none."""
    if not header:
        return None
    h = header.strip().lower()
    if h.startswith("["):  # an IPv6 literal: [::1]:8080
        end = h.find("]")
        return h[1:end] if end > 1 else None
    if h.count(":") == 1:
        h = h.split(":", 1)[0]
    return h.rstrip(".") or None


class HostAllowList:
    def __init__(self, allowed: Iterable[str] = (), own: Iterable[str] | None = None):
        names = set(own_names() if own is None else own)
        self.names = frozenset({n.strip().rstrip(".").lower() for n in (*names, *allowed)})

    def allows(self, header: str | None) -> bool:
        name = host_name(header)
        if name is None:
            return False
        try:
            ipaddress.ip_address(name)
        except ValueError:
            return name in self.names
        return True
