"""The referee's truth on the phone (issue 22, build items 1-3): headless Chromium at
390x844, the real daemon (`railbird run`), a private mosquitto and the simulated node
firmware. The phone reaches the host through a TCP relay the test can cut, a real outage
between them (the host and the node go on).

- A break with the 3 and the 10 down: the host presumes the 1 and the 2, shown as presumed;
  the referee identifies both, one "Which?" each, and the end is the truth: the 1 on the
  table (and in the call grid), the 10 to spot (REFEREE.md §3c).
- A scratch whose cue pocket the host got wrong: the cue ball's row has its own "Which?",
  and the pocket is corrected.
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

        table = Table(sn, host)
        # the break: the 3 in SR and the 10 in FL; the beams cannot tell which balls
        table.shot("break", pots=[(3, "SR"), (10, "FL")])
        app.check(scores=(0, 0), at_table="Ann", ruling="Legal break, 1, 2 pocketed")
        app.shows("#last-shot", "the 1 in SR (side right) presumed")
        app.shows("#last-shot", "the 2 in FL (foot left) presumed")
        app.shows("#btn-confirm", "Confirm: the 1 in SR, the 2 in FL, the 1 hit first")
        # the presumed lines are folded (the card shows each presumption), so the card and
        # Undo fit one 390x844 screen together, under the app's top bar
        app.shows("#minor-rulings summary", "3 presumed or noted")
        span = drv.execute_script(
            "const r = (id) => document.getElementById(id).getBoundingClientRect();"
            "return [r('tools').bottom - r('last-shot').top, window.innerHeight,"
            " document.querySelector('header') ? document.querySelector('header')"
            ".getBoundingClientRect().height : 0];"
        )
        assert span[0] <= span[1] - span[2], span
        app.screen("presumed", "#last-shot")
        app.tap("#which-0")
        app.shows("#sheet h2", "Which ball went in SR")
        app.tap('#ball-pick button[data-ball="3"]')
        app.shows("#last-shot", "the 3 in SR (side right) corrected")
        # the FL drop is presumed again from what is left: the 1
        app.shows("#last-shot", "the 1 in FL (foot left) presumed")
        app.tap("#which-1")
        app.shows("#sheet h2", "Which ball went in FL")
        app.tap('#ball-pick button[data-ball="10"]')
        app.shows("#last-shot", "the 10 in FL (foot left) corrected")
        app.shows("#last-shot", "the 3 in SR (side right) corrected")
        st = app.state()
        assert st["to_spot"] == [10] and 1 in st["balls_on_table"], st
        assert 3 not in st["balls_on_table"] and st["at_table"] == "Ann"
        # the call grid offers the 1, which is still on the table
        wait_for(
            drv,
            lambda d: d.find_elements("css selector", '#calls button.ball[data-ball="1"]'),
            "the 1 in the call grid",
        )
        app.screen("identified", "#last-shot")

        # Ann scratches; the host pairs the cue ball with the HL beam, the referee saw FR
        app.call(1, "HL", "Ann")
        table.shot("miss", scratch="HL")
        app.check(scores=(0, 0), at_table="Bob", bih="anywhere", ruling="Foul by Ann")
        app.shows("#last-shot", "the cue ball in HL")
        app.tap("#which-0")
        app.shows("#sheet", "Which pocket did the cue ball go in?")
        app.tap('#pocket-pick button[data-pocket="FR"]')
        app.shows("#last-shot", "the cue ball in FR (foot right) corrected")
        app.check(scores=(0, 0), at_table="Bob", bih="anywhere", ruling="corrects the last shot")
        fix = '#last-shot button[data-act="fix-ball"]'
        wait_for(
            drv,
            lambda d: [b for b in d.find_elements("css selector", fix) if b.is_enabled()],
            "the corrected card still live",
        )

        # a declared foul: the card was made for the state before it
        app.foul_now("6.6", "9.10.6")
        app.check(scores=(0, 0), at_table="Ann", bih="anywhere", ruling="Foul by Bob")
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

        # meanwhile the table moves on: another console declares a foul by Ann
        console = Http(direct)
        assert console.call("POST", "/api/session/club", {"pin": PIN})[0] == 200
        foul = {"type": "shot", "pocketed": [], "fouls": ["6.6"]}
        code, res, _ = console.call("POST", "/api/v/club/t1/referee", {"id": "c1", "input": foul})
        assert code == 200, (code, res, host.log())
        moved = console.call("GET", "/api/v/club/t1")[1]["state"]  # the relay is cut
        assert moved["at_table"] == "Bob" and moved["call"] is None

        # the link is back: the waiting safety was made for a state the table has left
        relay.restore()
        app.shows("#asked", "Not applied: the table changed first", timeout=40)
        app.shows("#asked-why", "stale: the table has changed")
        assert "Safety" in text(drv, "#asked-what") or "safety" in text(drv, "#asked-what")
        after = app.state()
        assert after["call"] is None and after["at_table"] == "Bob", after  # nothing applied
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
        app.check(scores=(0, 0), at_table="Bob", bih="anywhere")
    finally:
        relay.close()
        sn.stop()
        host.stop()
