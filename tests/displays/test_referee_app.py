"""The referee app's pieces against the real daemon (in process) and a real headless
Chromium at phone size: sign-in and its session cookie, refusal without a session, the
same action sent twice is applied once, the undo preview, the foul catalogue, and the
phone layout (nothing wider than 390 px, touch targets of 48 px or more)."""

from __future__ import annotations

import json

import pytest

from railbird.config import from_dict
from railbird.daemon.worker import Daemon
from railbird.outputs.web.pinguard import ADDR_TRIES
from railbird.outputs.web.server import WebOutput
from railbird.outputs.web.sessions import MAX_AGE_S
from railbird.rules.engine import GAMES
from railbird.rules.fouls import declarable
from tests.displays.refapp import (
    Http,
    assert_phone_layout,
    phone_browser,
    tap,
    text,
    wait_for,
    wait_text,
)

PIN = "4711"
REF = "/api/v/club/t1/referee"


def _host(journal, pins=None):
    cfg = from_dict(
        {
            "venue": "club",
            "tables": {
                "t1": {"game": "10-ball", "players": ["Ann", "Bob"], "race_to": 2, "nodes": ["n1"]}
            },
        }
    )
    web = WebOutput(host="127.0.0.1", port=0, pins={"club": PIN} if pins is None else pins)
    d = Daemon(cfg, outputs=[web], journal_path=str(journal), connect=False)
    web.referee = d.referee_input
    d.start()
    return d, web


@pytest.fixture
def host(tmp_path):
    d, web = _host(tmp_path / "journal.sqlite")
    yield d, web
    d.stop()


def _state(web):
    return web.venues.snapshot("club", "t1")["state"]


def _cookie_header(headers) -> str:
    return headers.get("Set-Cookie") or ""


# -- sessions (HTTP) --------------------------------------------------------------------------
def test_sign_in_gives_an_httponly_strict_expiring_session(host):
    _, web = host
    c = Http(web.url)
    code, res, _ = c.call("GET", "/api/session/club")
    assert code == 200 and res["referee"] and not res["signed_in"]

    code, res, h = c.call("POST", "/api/session/club", {"pin": "0000"})
    assert code == 403 and "Set-Cookie" not in h
    code, res, h = c.call("POST", "/api/session/club", {"pin": PIN})
    assert code == 200 and res["signed_in"]
    flags = [f.strip() for f in _cookie_header(h).split(";")]
    assert flags[0].startswith("railbird_session=") and len(flags[0]) > 40  # a random token
    assert PIN not in flags[0]
    assert {"HttpOnly", "SameSite=Strict", "Path=/", f"Max-Age={MAX_AGE_S}"} <= set(flags)
    assert c.call("GET", "/api/session/club")[1]["signed_in"]

    # the session is enough: no PIN in the request
    code, res, _ = c.call("POST", REF, {"id": "a1", "input": {"type": "lag", "winner": "Ann"}})
    assert code == 200 and res["ok"], res
    assert res["rulings"] == [
        {"text": "Ann wins the lag and chooses Ann to break", "rule": "9.1", "level": "info"}
    ]
    assert _state(web)["at_table"] == "Ann"

    # signing out ends it on the server, not only in this cookie jar
    token = flags[0].split("=", 1)[1]
    code, _, h = c.call("DELETE", "/api/session/club")
    assert code == 200 and "Max-Age=0" in _cookie_header(h)
    other = Http(web.url)
    code, res, _ = other.call(
        "POST",
        REF,
        {"input": {"type": "call", "safety": True}},
        headers={"Cookie": f"railbird_session={token}"},
    )
    assert code == 403 and res.get("signin"), res


def test_behind_a_tls_proxy_the_cookie_is_secure(host):
    _, web = host
    c = Http(web.url)
    code, _, h = c.call("POST", "/api/session/club", {"pin": PIN})
    assert code == 200 and "Secure" not in _cookie_header(h)  # plain HTTP on the LAN
    code, _, h = Http(web.url).call(
        "POST", "/api/session/club", {"pin": PIN}, headers={"X-Forwarded-Proto": "https"}
    )
    assert code == 200 and "Secure" in [f.strip() for f in _cookie_header(h).split(";")]


def test_without_a_session_nothing_is_applied(host):
    _, web = host
    c = Http(web.url)
    before = _state(web)
    lag = {"input": {"type": "lag", "winner": "Ann"}}
    code, res, _ = c.call("POST", REF, lag)
    assert code == 403 and res["signin"]
    code, _, _ = c.call("POST", REF, lag, headers={"Cookie": "railbird_session=forged"})
    assert code == 403
    assert _state(web) == before and web.stats["applied"] == 0
    # scripts may still send the PIN itself
    code, res, _ = c.call("POST", REF, dict(lag, pin=PIN))
    assert code == 200 and _state(web)["at_table"] == "Ann"


def test_cross_site_requests_cannot_use_the_session(host):
    _, web = host
    c = Http(web.url)
    assert c.call("POST", "/api/session/club", {"pin": PIN})[0] == 200
    before = _state(web)
    lag = json.dumps({"input": {"type": "lag", "winner": "Ann"}}).encode()
    # a cross-site form can only send form or text bodies
    code, res, _ = c.call("POST", REF, lag, ctype="text/plain")
    assert code == 415, res
    code, res, _ = c.call("POST", REF, lag, ctype="application/x-www-form-urlencoded")
    assert code == 415, res
    # a page elsewhere that gets a JSON request through (e.g. with the cookie in a lax
    # browser) names its origin: refused
    code, res, _ = c.call("POST", REF, lag, headers={"Origin": "http://evil.example"})
    assert code == 403 and "cross-site" in res["error"]
    assert _state(web) == before
    host_origin = web.url  # the app's own origin is fine
    code, _, _ = c.call("POST", REF, lag, headers={"Origin": host_origin})
    assert code == 200


def test_pin_lockout_applies_to_sign_in(host):
    _, web = host
    c = Http(web.url)
    # a phone whose session ended, retrying without a PIN, is not guessing: never locked out
    for _ in range(8):
        assert c.call("POST", REF, {"input": {"type": "undo"}})[0] == 403
    for _ in range(ADDR_TRIES):  # an address's own budget (pinguard.py)
        assert c.call("POST", "/api/session/club", {"pin": "1234"})[0] == 403
    code, res, h = c.call("POST", "/api/session/club", {"pin": PIN})
    assert code == 429 and "Set-Cookie" not in h, res
    assert res["retry_after"] > 0 and h.get("Retry-After") == str(res["retry_after"])
    # the PIN path of scripts is locked out from the same address too
    assert c.call("POST", REF, {"pin": PIN, "input": {"type": "undo"}})[0] == 429


def test_the_same_action_sent_twice_is_applied_once(host, tmp_path):
    d, web = host
    c = Http(web.url)
    c.call("POST", "/api/session/club", {"pin": PIN})
    lag = {"id": "phone-1", "input": {"type": "lag", "winner": "Ann", "breaker": "Bob"}}
    first = c.call("POST", REF, lag)
    assert first[0] == 200 and not first[1].get("repeat")
    # the answer was lost on the way: the phone sends the same id again
    again = c.call("POST", REF, lag)
    assert again[0] == 200 and again[1]["repeat"] and again[1]["rulings"] == first[1]["rulings"]
    # a second lag would be refused ("the lag comes first" is over): it was not applied
    assert _state(web)["at_table"] == "Bob" and d.pipeline.counters["referee_duplicate"] == 0
    # a refusal is remembered as well: the same id is refused the same way, not re-run
    bad = {"id": "phone-2", "input": {"type": "option", "choice": "pass"}}
    r1, r2 = c.call("POST", REF, bad), c.call("POST", REF, bad)
    assert r1[0] == r2[0] == 422 and r1[1]["error"] == r2[1]["error"] and r2[1]["repeat"]


def test_after_a_host_restart_a_resent_id_is_still_applied_once(tmp_path):
    journal = tmp_path / "journal.sqlite"
    d, web = _host(journal)
    try:
        c = Http(web.url)
        body = {"pin": PIN, "id": "phone-7", "input": {"type": "lag", "winner": "Ann"}}
        assert c.call("POST", REF, body)[0] == 200
    finally:
        d.stop()
        web.stop()
    d, web = _host(journal)  # a fresh server: its answers are gone, the journal is not
    try:
        c = Http(web.url)
        code, res, _ = c.call("POST", REF, body)
        assert code == 200 and res["repeat"], res
        assert d.pipeline.counters["referee_duplicate"] == 1
        assert _state(web)["inning"] == 1 and _state(web)["at_table"] == "Ann"
    finally:
        d.stop()
        web.stop()


def test_undo_preview_names_the_input_and_guards_against_a_change(host):
    _, web = host
    c = Http(web.url)
    c.call("POST", "/api/session/club", {"pin": PIN})
    assert c.call("GET", "/api/v/club/t1/undo")[1]["undo"] is None  # only the match so far
    c.call("POST", REF, {"input": {"type": "lag", "winner": "Ann"}})
    c.call("POST", REF, {"input": {"type": "shot", "pocketed": []}})  # the break
    c.call("POST", REF, {"input": {"type": "call", "ball": 1, "pocket": "FR"}})
    undo = c.call("GET", "/api/v/club/t1/undo")[1]["undo"]
    assert undo["rulings"] == [{"text": "Bob calls the 1 in FR", "rule": "9.5", "level": "info"}]
    # something else was applied after the preview: the undo is not sent blind
    c.call("POST", REF, {"input": {"type": "call", "ball": 2, "pocket": "HL"}})
    code, res, _ = c.call("POST", REF, {"input": {"type": "undo"}, "undo_key": undo["key"]})
    assert code == 409 and res["undo"]["rulings"][0]["text"] == "Bob calls the 2 in HL"
    code, res, _ = c.call("POST", REF, {"input": {"type": "undo"}, "undo_key": res["undo"]["key"]})
    assert code == 200 and res["rulings"][0]["rule"] == "1.8"
    assert _state(web)["call"] == {"ball": 1, "pocket": "FR"}
    top = c.call("GET", "/api/v/club/t1/undo")[1]["undo"]
    assert top["rulings"][0]["text"] == "Bob calls the 1 in FR"


def test_fouls_come_from_the_rules_engine(host):
    _, web = host
    c = Http(web.url)
    for game in GAMES:
        code, res, _ = c.call("GET", f"/api/fouls/{game}")
        assert code == 200 and res["fouls"] == declarable(GAMES[game])
    assert c.call("GET", "/api/fouls/snooker")[0] == 404


def test_match_options_come_from_the_rules_engine_with_their_state_line_letter(host):
    from railbird.rules.fen import OPTION_CODES
    from railbird.rules.options import form_options

    _, web = host
    c = Http(web.url)
    for game in GAMES:
        code, res, _ = c.call("GET", f"/api/options/{game}")
        assert code == 200 and [o["name"] for o in res["options"]] == [
            o["name"] for o in form_options(game)
        ]
        assert all(o["code"] == OPTION_CODES[o["name"]] for o in res["options"])
    assert c.call("GET", "/api/options/snooker")[0] == 404


# -- the app in a phone-sized Chromium -----------------------------------------------------
@pytest.fixture
def phone(tmp_path):
    drv = phone_browser(tmp_path / "chrome")
    yield drv
    drv.quit()


def _sign_in(drv, pin=PIN):
    wait_for(drv, lambda d: text(d, "#signin"), "the sign-in screen")
    for digit in pin:
        tap(drv, f'button[data-key="{digit}"]')
    tap(drv, "#pin-ok")


@pytest.mark.browser
def test_app_signs_in_once_and_plays_lag_and_call_on_a_phone(phone, host):
    _, web = host
    drv = phone
    drv.get(web.url + "/v/club/t/t1/referee")
    assert_phone_layout(drv, "sign-in")
    _sign_in(drv, "9999")
    wait_text(drv, "#pin-error", "wrong PIN")
    _sign_in(drv)
    wait_text(drv, "#lag h2", "who won?")
    # the session cookie is not readable by the page (HttpOnly); the PIN is stored nowhere
    assert "railbird_session" not in drv.execute_script("return document.cookie")
    assert PIN not in json.dumps(drv.execute_script("return {...localStorage, ...sessionStorage}"))
    assert_phone_layout(drv, "lag")
    tap(drv, 'button[data-act="lag-winner"][data-player="Ann"]')
    wait_text(drv, "#lag h2", "Ann won the lag: who breaks?")
    tap(drv, 'button[data-act="lag"][data-breaker="Bob"]')
    wait_text(drv, "#rulings", "Ann wins the lag and chooses Bob to break (9.1)")
    wait_text(drv, "#p1 .name", "Bob")
    assert drv.find_element("css selector", "#p1").get_attribute("data-up") == "1"
    assert "ball in hand behind the head string" in text(drv, "#line")
    # no calls on a 10-ball break
    wait_text(drv, "#calls", "No call on the break")

    # a reload keeps the session: sign-in is once per device
    drv.refresh()
    wait_text(drv, "#calls", "No call on the break")
    assert not text(drv, "#signin")

    # the break, entered as the host rules a sensed shot
    assert web.referee("club", "t1", {"type": "shot", "pocketed": []})["ok"]
    wait_text(drv, "#calls h2", "Ann calls")  # Bob's break missed: Ann to shoot
    # only the balls on the table are offered, as numbered balls
    balls = drv.execute_script(
        "return [...document.querySelectorAll('#calls button.ball')].map(b => +b.dataset.ball)"
    )
    assert balls == list(range(1, 11))
    tap(drv, '#calls button.ball[data-ball="3"]')
    wait_for(drv, lambda d: text(d, "#diagram"), "the table diagram")
    assert_phone_layout(drv, "call with the table diagram")
    tap(drv, 'button.pocket[data-pocket="SR"]')
    wait_text(drv, "#rulings", "Ann calls the 3 in SR (9.5)")
    assert _state(web)["call"] == {"ball": 3, "pocket": "SR"}
    wait_text(drv, "#call", "call: 3 in SR")


@pytest.mark.browser
def test_app_fouls_by_name_and_undo_with_a_preview(phone, host):
    d, web = host
    drv = phone
    for inp in ({"type": "lag", "winner": "Ann"}, {"type": "shot", "pocketed": []}):
        assert d.referee_input("club", "t1", inp)["ok"]
    drv.get(web.url + "/v/club/t/t1/referee")
    _sign_in(drv)
    wait_text(drv, "#calls h2", "Bob calls")
    tap(drv, "#btn-foul")
    wait_text(drv, "#sheet h2", "Foul by Bob")
    # names with the rule number shown, from the rules engine (10-ball: 9.10.x)
    wait_text(drv, "#foul-list", "touched ball")
    rows = drv.execute_script(
        "return [...document.querySelectorAll('#foul-list button')].map(b => b.innerText)"
    )
    assert any(r.startswith("9.10.6") and "touched ball" in r for r in rows), rows
    assert_phone_layout(drv, "foul list")
    tap(drv, '#foul-list button[data-code="6.6"]')
    wait_text(drv, "#rulings", "touched ball")
    wait_text(drv, "#rulings", "(9.10.6)")
    wait_text(drv, "#meta-1", "1 foul")
    assert _state(web)["ball_in_hand"] == "anywhere" and _state(web)["at_table"] == "Ann"

    tap(drv, "#btn-undo")
    wait_text(drv, "#undo-what", "touched ball")  # what it will undo, before it is sent
    assert _state(web)["at_table"] == "Ann"  # asking changed nothing
    assert_phone_layout(drv, "undo confirmation")
    tap(drv, "#btn-undo-yes")
    wait_text(drv, "#rulings", "Undo: the last input is withdrawn")
    wait_text(drv, "#rulings", "(1.8)")
    assert _state(web)["at_table"] == "Bob" and _state(web)["consecutive_fouls"]["Bob"] == 0


@pytest.mark.browser
def test_app_queues_an_action_while_offline_and_sends_it_once(phone, host):
    d, web = host
    drv = phone
    drv.get(web.url + "/v/club/t/t1/referee")
    _sign_in(drv)
    wait_text(drv, "#lag h2", "who won?")
    wait_text(drv, "#conn", "live")
    drv.execute_cdp_cmd("Network.enable", {})
    drv.execute_cdp_cmd(
        "Network.emulateNetworkConditions",
        {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    web.close_streams()  # the dropped Wi-Fi takes the open stream with it
    try:
        tap(drv, 'button[data-act="lag-winner"][data-player="Bob"]')
        tap(drv, 'button[data-act="lag"][data-breaker="Bob"]')
        wait_text(drv, "#queue", "Not applied yet: Lag: Bob won, Bob breaks")
        wait_text(drv, "#queue", "retry")
        wait_text(drv, "#conn", "reconnecting")
        assert_phone_layout(drv, "offline with a queued action")
        queued = drv.execute_script(
            "return JSON.parse(localStorage.getItem(arguments[0]))", "rb-referee-queue:club:t1"
        )
        assert len(queued) == 1
        assert _state(web)["awaiting"] == "lag"  # nothing reached the host
    finally:
        drv.execute_cdp_cmd(
            "Network.emulateNetworkConditions",
            {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
        )
    # back online: the app reconnects and sends the queued action by itself, once
    wait_for(drv, lambda dr: not dr.find_element("id", "queue").is_displayed(), "queue empty", 20)
    wait_text(drv, "#conn", "live", 20)
    wait_text(drv, "#rulings", "Bob wins the lag")
    assert _state(web)["at_table"] == "Bob"
    key = ("club", "t1", queued[0]["id"])
    assert key in web.desk._results and d.pipeline.counters["referee"] == 1


@pytest.mark.browser
def test_app_concede_ends_the_match_and_a_rematch_starts_the_next(phone, host):
    d, web = host
    drv = phone
    for inp in ({"type": "lag", "winner": "Ann"}, {"type": "shot", "pocketed": []}):
        assert d.referee_input("club", "t1", inp)["ok"]
    drv.get(web.url + "/v/club/t/t1/referee")
    _sign_in(drv)
    wait_text(drv, "#calls h2", "Bob calls")
    tap(drv, "#btn-more")
    wait_text(drv, "#sheet", "Abandon the match")
    assert_phone_layout(drv, "more")
    tap(drv, 'button[data-act="ask-concede"][data-player="Bob"]')
    # asked once: a stray tap does not end the match
    wait_text(drv, "#sheet h2", "Bob concedes?")
    assert _state(web)["match_winner"] is None
    tap(drv, "#btn-ask-yes")
    wait_text(drv, "#winner", "Bob conceded: Ann wins")
    assert "fouls" not in text(drv, "#p0") + text(drv, "#p1")
    assert _state(web)["match_winner"] == "Ann" and _state(web)["ended"] == "conceded"
    wait_text(drv, "#rulings", "(1.11)")
    tap(drv, "#btn-rematch")
    wait_text(drv, "#sheet h2", "Rematch: Ann v Bob?")
    tap(drv, "#btn-ask-yes")
    wait_text(drv, "#lag h2", "who won?")
    st = _state(web)
    assert st["players"] == ["Ann", "Bob"] and st["match_winner"] is None
    assert "goal=2" in web.venues.snapshot("club", "t1")["fen"]


@pytest.mark.browser
def test_app_shows_the_shot_in_play_as_the_drops_come(phone, host):
    """Issue 22, 6: the phone was the slowest screen, because it never showed the in-play
    ball. The host's provisional in-play view is pushed to it on every drop, as to the TV."""
    d, web = host
    drv = phone
    assert d.referee_input("club", "t1", {"type": "lag", "winner": "Ann"})["ok"]
    drv.get(web.url + "/v/club/t/t1/referee")
    _sign_in(drv)
    wait_text(drv, "#calls h2", "Ann")
    assert not drv.find_elements("id", "inplay")
    inplay = {"shot": 1, "start": 10, "pocketed": [{"pocket": "SR"}], "provisional": True}
    web.on_inplay("club", "t1", inplay)
    wait_text(drv, "#inplay", "a ball in SR (side right)")
    assert "provisional" in text(drv, "#inplay h2")
    web.on_inplay(
        "club", "t1", dict(inplay, pocketed=[{"pocket": "SR"}, {"pocket": "HL", "ball": 0}])
    )
    wait_text(drv, "#inplay", "the cue ball in HL (head left)")
    assert_phone_layout(drv, "in play")
    # the shot closes: its ruling replaces the provisional view
    web.on_shot("club", "t1", {"n": 1, "start": 10, "pocketed": [{"pocket": "SR"}], "rails": []})
    wait_for(drv, lambda d: not d.find_elements("id", "inplay"), "the in-play card gone")


@pytest.mark.browser
def test_app_says_so_when_no_pin_is_configured(phone, tmp_path):
    d, web = _host(tmp_path / "journal.sqlite", pins={})
    try:
        c = Http(web.url)
        assert c.call("GET", "/api/session/club")[1]["referee"] is False
        code, res, h = c.call("POST", "/api/session/club", {"pin": "1234"})
        assert code == 403 and res["disabled"] and "Set-Cookie" not in h
        phone.get(web.url + "/v/club/t/t1/referee")
        wait_text(phone, "#off", "Referee input is off")
        assert not text(phone, "#signin")
        assert_phone_layout(phone, "referee input off")
    finally:
        d.stop()
        web.stop()
