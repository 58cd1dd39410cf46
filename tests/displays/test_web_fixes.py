"""Three web fixes (issue 11), each as a user meets it: the configured `[outputs.web] title`
is what the pages show; a host without a referee PIN says referee input is off instead of
"PIN wrong or missing"; a mistyped venue or table URL is a "not found" page, not an empty
board."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from harness import browser as B
from railbird.config import from_dict
from railbird.daemon.worker import Daemon
from railbird.outputs.factory import from_config
from railbird.outputs.web.server import WebOutput

TABLES = {"t1": {"game": "10-ball", "players": ["Ann", "Bob"], "race_to": 2, "nodes": ["n1"]}}


def _host(tmp_path, **web_kw):
    cfg = from_dict({"venue": "club", "tables": TABLES})
    web = WebOutput(host="127.0.0.1", port=0, **web_kw)
    d = Daemon(cfg, outputs=[web], journal_path=str(tmp_path / "j.sqlite"), connect=False)
    web.referee, web.health = d.referee_input, d.health
    d.start()
    return d, web


@pytest.fixture
def host(tmp_path):
    d, web = _host(tmp_path, pins={"club": "4711"}, title="Club <Night>")
    yield d, web
    d.stop()


@pytest.fixture
def open_host(tmp_path):
    """No referee PIN configured: read-only boards."""
    d, web = _host(tmp_path)
    yield d, web
    d.stop()


@pytest.fixture
def drv(tmp_path):
    drv = B.chrome(tmp_path / "chrome")
    yield drv
    drv.quit()


def _get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _post(url, body):
    req = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def test_config_title_reaches_the_web_output():
    cfg = from_dict(
        {
            "venue": "club",
            "tables": TABLES,
            "outputs": {"feeds": {"enabled": False}, "web": {"port": 0, "title": "Club Night"}},
        }
    )
    (web,) = from_config(cfg)
    assert web.title == "Club Night"


@pytest.mark.browser
def test_pages_show_the_configured_title(host, drv):
    _d, web = host
    for path, page_title in (
        ("/v/club/", "Club <Night> · club"),
        ("/v/club/t/t1/", "Club <Night> · t1 · club"),
        ("/v/club/t1/", "Club <Night> · t1 · club"),
    ):
        code, html = _get(web.url + path)
        assert code == 200 and "Club &lt;Night&gt;" in html and "{{title}}" not in html
        drv.get(web.url + path)
        B.wait_until(lambda t=page_title: drv.title == t, 10, f"title {page_title!r}")
        assert B.text(drv, "header .brand") == "Club <Night>"
    assert json.loads(_get(web.url + "/api/v/club")[1])["title"] == "Club <Night>"


@pytest.mark.browser
def test_no_pin_configured_says_referee_input_is_off(open_host, drv):
    _d, web = open_host
    code, res = _post(
        web.url + "/api/v/club/t1/referee", {"pin": "1234", "input": {"type": "undo"}}
    )
    assert code == 403 and res["disabled"] is True
    assert "no referee PIN" in res["error"] and "wrong" not in res["error"]
    drv.get(web.url + "/v/club/t/t1/")
    B.wait_contains(drv, "#ref-link", "referee input is off on this host")
    assert "PIN wrong" not in B.text(drv, "body")


@pytest.mark.browser
def test_with_a_pin_the_table_page_links_the_referee_app(host, drv):
    _d, web = host
    drv.get(web.url + "/v/club/t1/")
    B.wait_text(drv, "#ref-link", "referee")
    href = drv.execute_script("return document.querySelector('#ref-link a').pathname")
    assert href == "/v/club/t/t1/referee"


@pytest.mark.browser
def test_mistyped_urls_are_not_found(host, drv):
    _d, web = host
    for path, says, link in (
        ("/v/clubb/", "There is no venue 'clubb' on this host.", "/v/club/"),
        ("/v/club/t9/", "There is no table 't9' at club.", "/v/club/t/t1/"),
        ("/v/club/t/t9/", "There is no table 't9' at club.", "/v/club/t/t1/"),
        ("/v/club/t/t9/overlay", "There is no table 't9' at club.", "/v/club/t/t1/"),
        ("/v/club/t/t1/nonsense", "no such page", None),
    ):
        assert _get(web.url + path)[0] == 404, path
        drv.get(web.url + path)
        B.wait_text(drv, "#notfound", says)
        assert B.text(drv, "h1") == "Not found"
        if link:
            links = drv.execute_script(
                "return [...document.querySelectorAll('li a')].map((a) => a.pathname)"
            )
            assert link in links, (path, links)
    assert _get(web.url + "/api/v/clubb")[0] == 404
    assert _get(web.url + "/api/v/club/t9")[0] == 404
    # the right ones still work
    for path in ("/v/club/", "/v/club/t1/", "/v/club/t/t1/", "/v/club/t/t1/overlay"):
        assert _get(web.url + path)[0] == 200, path
