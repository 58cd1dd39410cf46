"""DNS rebinding (issue 23, 10): a page on the internet whose name resolves to the venue
server must not read it as same-origin. A request is served only when its `Host` names this
server: an IP address, `localhost`, the machine's own names, or `outputs.web.allowed_hosts`;
any other gets 400 and is counted (`bad_host`), before any route (history, sign-in) runs."""

from __future__ import annotations

import http.client

import pytest

from railbird.outputs.web.hostcheck import HostAllowList, host_name
from railbird.outputs.web.server import WebOutput


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("127.0.0.1:8080", "127.0.0.1"),
        ("[::1]:8080", "::1"),
        ("Scores.Example.:80", "scores.example"),
        ("", None),
        (None, None),
        ("[", None),
    ],
)
def test_the_name_of_a_host_header(header, name):
    assert host_name(header) == name


def test_addresses_own_names_and_listed_names_only():
    hosts = HostAllowList(["scores.club.example"], own=["localhost", "pi", "pi.local"])
    for ok in (
        "10.0.0.5:8080",
        "[fe80::1]:80",
        "localhost:8080",
        "PI.local",
        "pi",
        "scores.club.example",
    ):
        assert hosts.allows(ok), ok
    for bad in ("evil.example", "evil.example:8080", "10.0.0.5.evil.example", "", None, "a b"):
        assert not hosts.allows(bad), bad


@pytest.fixture
def web():
    w = WebOutput(host="127.0.0.1", port=0, allowed_hosts=("scores.club.example",))
    w.venues.table("club", "t1")
    w.start()
    yield w
    w.stop()


def get(web, host: str) -> int:
    c = http.client.HTTPConnection("127.0.0.1", web.port, timeout=10)
    try:
        c.putrequest("GET", "/api/v/club/history", skip_host=True)
        c.putheader("Host", host)
        c.endheaders()
        return c.getresponse().status
    finally:
        c.close()


def test_a_rebinding_name_gets_400_and_is_counted(web):
    assert get(web, "evil.example") == 400
    assert get(web, f"evil.example:{web.port}") == 400
    assert web.stats["bad_host"] == 2
    # the server's address and a listed name are served (no history: 404, not 400)
    assert get(web, f"127.0.0.1:{web.port}") != 400
    assert get(web, "scores.club.example") != 400
    assert web.stats["bad_host"] == 2
