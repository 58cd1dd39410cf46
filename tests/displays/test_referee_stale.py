"""No stale action lands (issue 22, build items 2 and 3), played on the phone: headless
Chromium at 390x844, the real daemon (`railbird run`), a private mosquitto and the simulated
node firmware. The phone reaches the host through a TCP relay the test can cut, a real
outage between them (the host and the node go on).

- A declared foul leaves the last shot's card greyed with its buttons disabled: it was
  made for the state before the foul.
- Offline, the phone says so (a banner, greyed scores); an action entered then waits in
  its queue. The table moves on meanwhile (another console's input); when the link is back
  the host refuses the waiting action as stale, nothing of it is applied, and the phone
  asks the referee again.
- A host restart leaves the phone signed in."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from pathlib import Path

import pytest

from harness.hostproc import RailbirdRun
from rbnode.simnode import SimNode
from tests.displays.refapp import Http, phone_browser, text, wait_for
from tests.displays.test_referee_app_match import CONFIG, NODE, NODE_PW, PIN, Phone, Table

pytestmark = [pytest.mark.broker, pytest.mark.browser, pytest.mark.slow]


class Relay:
    """127.0.0.1:<port> -> the host's web port, byte for byte; `cut` closes every
    connection and refuses new ones until `restore`."""

    def __init__(self, target_port: int):
        self.target = target_port
        self.up = True
        self.srv = socket.create_server(("127.0.0.1", 0))
        self.port = self.srv.getsockname()[1]
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            if not self.up:
                c.close()
                continue
            try:
                u = socket.create_connection(("127.0.0.1", self.target), timeout=5)
            except OSError:
                c.close()
                continue
            with self.lock:
                self.conns += [c, u]
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a, b):
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def cut(self):
        self.up = False
        with self.lock:
            for s in self.conns:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()
            self.conns = []

    def restore(self, target_port: int | None = None):
        if target_port is not None:
            self.target = target_port
        self.up = True

    def close(self):
        self.cut()
        self.srv.close()


@pytest.fixture
def phone(tmp_path):
    drv = phone_browser(tmp_path / "chrome")
    yield drv
    drv.quit()


def test_a_stale_card_is_disabled_and_a_queued_action_the_table_overtook_is_asked_again(
    broker, phone, tmp_path
):
    broker.add_user(NODE, NODE_PW)
    host = RailbirdRun(tmp_path / "host", CONFIG.format(port=broker.port, pin=PIN, node=NODE))
    direct = host.start_with_web()
    sn = SimNode("127.0.0.1", broker.port, "club", "t1", NODE, NODE_PW, tmp_path / "node", seed=5)
    sn.start()
    relay = Relay(int(direct.rsplit(":", 1)[1]))
    try:
        sn.wait_connected()
        host.wait(lambda s: s.get("sync_samples", 0) >= 3, "clock sync with the node")
        url = f"http://127.0.0.1:{relay.port}"
        app = Phone(phone, url, Path(os.environ.get("RB_SCREENSHOTS") or tmp_path / "shots"))
        drv = app.drv
        drv.get(url + "/v/club/t/t1/referee")
        app.shows("#signin", "Sign in")
        for digit in PIN:
            app.tap(f'button[data-key="{digit}"]')
        app.tap("#pin-ok")
        app.tap('button[data-act="lag-winner"][data-player="Ann"]')
        app.tap('button[data-act="lag"][data-breaker="Ann"]')
        app.check(scores=(0, 0), at_table="Ann", bih="kitchen", ruling="Ann wins the lag")

        Table(sn, host).shot("break", pots=[(4, "SR")])
        app.shows("#last-shot", "a ball in SR")
        fix = '#last-shot button[data-act="fix-ball"]'
        assert drv.find_element("css selector", fix).is_enabled()

        # a declared foul: the card was made for the state before it
        app.foul_now("6.6", "9.10.6")
        app.check(scores=(0, 0), at_table="Bob", bih="anywhere", ruling="Foul by Ann")
        wait_for(
            drv,
            lambda d: d.find_element("id", "last-shot").get_attribute("data-stale") == "1",
            "the old card greyed",
        )
        assert not drv.find_element("css selector", fix).is_enabled()
        app.shows("#stale-note", "can no longer be corrected here")
        app.screen("stale-card", "#last-shot")

        # the link to the host goes: the phone says so, and what is entered waits
        relay.cut()
        app.shows("#conn", "offline", timeout=30)
        app.shows("#offline", "Offline: no connection to the host")
        app.tap("#btn-safety")
        app.shows("#queue", "Not applied yet")
        app.screen("offline-queued", "#offline")

        # meanwhile the table moves on: another console declares a foul by Bob
        console = Http(direct)
        assert console.call("POST", "/api/session/club", {"pin": PIN})[0] == 200
        foul = {"type": "shot", "pocketed": [], "fouls": ["6.6"]}
        code, res, _ = console.call("POST", "/api/v/club/t1/referee", {"id": "c1", "input": foul})
        assert code == 200, (code, res, host.log())
        moved = console.call("GET", "/api/v/club/t1")[1]["state"]  # the relay is cut
        assert moved["at_table"] == "Ann" and moved["call"] is None

        # the link is back: the waiting safety was made for a state the table has left
        relay.restore()
        app.shows("#asked", "Not applied: the table changed first", timeout=40)
        app.shows("#asked-why", "stale: the table has changed")
        assert "Safety" in text(drv, "#asked-what") or "safety" in text(drv, "#asked-what")
        after = app.state()
        assert after["call"] is None and after["at_table"] == "Ann", after  # nothing applied
        wait_for(drv, lambda d: not d.find_element("id", "queue").is_displayed(), "queue empty")
        app.screen("asked-again", "#asked")
        app.tap("#btn-asked-drop")
        wait_for(drv, lambda d: not d.find_elements("id", "asked"), "the question gone")
        assert app.state()["call"] is None

        # a host restart: the phone stays signed in
        relay.cut()
        host.stop()
        direct = host.start_with_web()
        relay.restore(int(direct.rsplit(":", 1)[1]))
        drv.refresh()
        app.shows("#score-0", "0", timeout=30)
        assert not drv.find_elements("id", "signin")
        app.check(scores=(0, 0), at_table="Ann", bih="anywhere")
    finally:
        relay.close()
        sn.stop()
        host.stop()
