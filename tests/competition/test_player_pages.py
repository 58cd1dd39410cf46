"""The New match form's player picker and the player page (docs/events.md), against the
real daemon (in process) with its web server and journal, in a real headless Chromium at
phone size: a few letters find a registered player and one tap picks them (no retyping),
a new name typed there is registered on the way and a name the rules refuse is said on
the form, not sent; the player page shows the rating, the totals and the matches, pages
its matches, and nothing on either is wider than the screen. Plus the search and the
registration over HTTP."""

from __future__ import annotations

import json
import sqlite3
import urllib.request

import pytest

from railbird.config import from_dict
from railbird.daemon.worker import Daemon
from railbird.history import export
from railbird.outputs.web import playerpage
from railbird.outputs.web.history import View
from railbird.outputs.web.server import WebOutput
from railbird.outputs.web.wire import Req
from railbird.registry import ratings
from railbird.registry.players import PlayerRegistry
from tests.displays.refapp import Http, assert_phone_layout, phone_browser, tap, text, wait_for
from tests.history.nights import Night, at, tenball_race

PIN = "4711"
DEADLINE_S = 30.0  # for a starved machine: every wait ends when its condition holds


@pytest.fixture
def host(tmp_path):
    t1 = {"game": "10-ball", "players": ["Ann Lee", "Bob"], "race_to": 1, "nodes": ["n1"]}
    cfg = from_dict({"venue": "club", "tables": {"t1": t1}})
    journal = tmp_path / "journal.sqlite"
    web = WebOutput(host="127.0.0.1", port=0, pins={"club": PIN})
    d = Daemon(cfg, outputs=[web], journal_path=str(journal), connect=False)
    web.referee = d.referee_input
    web.history_journal = str(journal)
    d.start()
    reg = PlayerRegistry(d.journal.db)
    reg.add("José Martínez", nickname="Pepe", rating=620, external=[("fargo", "4242")])
    reg.add("Ann Lee", rating=480)
    yield d, web, reg
    d.stop()


def _get(web, path) -> tuple[int, dict | str]:
    try:
        with urllib.request.urlopen(web.url + path, timeout=10) as r:
            body = r.read().decode()
            ctype = r.headers.get("Content-Type", "")
            return r.status, json.loads(body) if "json" in ctype else body
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def _play(d, a, b, winner) -> None:
    loser = b if winner == a else a
    for inp in (
        {"type": "match", "game": "10-ball", "players": [a, b], "race_to": 1},
        {"type": "lag", "winner": loser},
        {"type": "shot", "pocketed": []},
        {"type": "call", "ball": 10, "pocket": "FL"},
        {"type": "shot", "pocketed": [{"ball": 10, "pocket": "FL"}]},
    ):
        assert d.referee_input("club", "t1", inp)["ok"], inp


def test_search_finds_registered_players_from_a_few_letters(host):
    _, web, _ = host
    code, res = _get(web, "/api/v/club/players?q=jose")
    assert code == 200
    (p,) = res["registered"]
    assert (p["name"], p["nickname"], p["external"]) == ("José Martínez", "Pepe", {"fargo": "4242"})
    assert [x["name"] for x in _get(web, "/api/v/club/players?q=pe")[1]["registered"]] == [
        "José Martínez"
    ]
    assert [x["name"] for x in _get(web, "/api/v/club/players?q=LEE")[1]["registered"]] == [
        "Ann Lee"
    ]
    assert _get(web, "/api/v/club/players?q=zz")[1]["registered"] == []
    assert _get(web, "/api/v/nowhere/players?q=a")[0] == 404


def test_registering_from_the_form_validates_and_needs_a_referee(host):
    _, web, reg = host
    c = Http(web.url)
    code, res, _ = c.call("POST", "/api/v/club/players", {"name": "Cy"})
    assert code == 403 and res["signin"]  # a referee's, like any referee input
    assert c.call("POST", "/api/session/club", {"pin": PIN})[0] == 200
    code, res, _ = c.call("POST", "/api/v/club/players", {"name": "  Cy \t"})
    assert code == 200 and res["player"]["name"] == "Cy" and not res["existing"]
    code, res, _ = c.call("POST", "/api/v/club/players", {"name": "cy"})
    assert code == 200 and res["existing"] and res["player"]["name"] == "Cy"  # not a second
    code, res, _ = c.call("POST", "/api/v/club/players", {"name": "Ann\x1b[31m"})
    assert code == 422 and "control characters" in res["error"]
    code, res, _ = c.call("POST", "/api/v/club/players", {"name": 7})
    assert code == 422 and "must be text" in res["error"]
    assert [p.name for p in reg.listed()] == ["Ann Lee", "Cy", "José Martínez"]


def test_the_player_page_json_has_rating_totals_and_pages_of_matches(tmp_path, monkeypatch):
    """A night at the club (tests/history/nights.py: sensed shots and referee input through
    the host's own match layer), Ann v Bob three times; pages of two matches."""
    path = tmp_path / "journal.sqlite"
    night = Night(path, live=True)
    for n in range(3):
        tenball_race(night, "t1", at(f"2026-11-27 2{n}:00"))
    reg = PlayerRegistry(night.journal.db)
    ann = reg.add("Ann", rating=480, external=[("league", "A-7")]).id
    reg.add("Bob")
    ratings.refresh(night.journal.db)
    night.close()
    monkeypatch.setattr(playerpage, "MAX_LISTED", 2)
    view = View(("club",), 6, "Railbird", str(path))

    def get(pid, **query):
        req = Req("GET", ["api", "v", "club", "player", str(pid)], {}, "", query=query)
        reply = playerpage.route(view, req)
        return reply.status, json.loads(reply.body)

    code, doc = get(ann)
    assert code == 200
    assert doc["player"] | {} == doc["player"] | {"name": "Ann", "starter": 480,
                                                  "external": {"league": "A-7"}}  # fmt: skip
    # Bob won each 2-1; Ann's balls: FR on her break and the called 10 in HL, per match
    assert doc["totals"] == {"matches": 3, "won": 0, "racks_won": 3, "racks_played": 9,
                             "high_run": 1, "fouls": 0, "balls": 6}  # fmt: skip
    assert doc["balls_per_pocket"] | {} == dict.fromkeys(export.POCKETS, 0) | {"FR": 3, "HL": 3}
    db = sqlite3.connect(path)
    kept = ratings.kept(db)
    db.close()
    assert doc["player"]["rating"] == kept.ratings[ann].rating < 480
    assert [p["rating"] for p in doc["rating_over_time"]] == [m.rating_a for m in kept.matches]
    assert len(doc["matches"]) == 2 and doc["next"]
    assert [m["start"][11:16] for m in doc["matches"]] == ["22:00", "21:00"]  # newest first
    code, rest = get(ann, cursor=doc["next"])
    assert [m["start"][11:16] for m in rest["matches"]] == ["20:00"]
    assert rest["next"] is None and "totals" not in rest
    assert get(999)[0] == 404
    assert get(ann, cursor="nonsense")[0] == 400
    # the HTML page, capped the same way: its "Earlier matches" link leads to the rest
    html = playerpage.route(view, Req("GET", ["v", "club", "player", str(ann)], {}, "")).body
    assert html.count(b'class="match"') == 2 and b'id="earlier"' in html


@pytest.fixture(scope="module")
def phone(tmp_path_factory):
    """One Chromium for the module's pages (a start is some seconds)."""
    drv = phone_browser(tmp_path_factory.mktemp("chrome"))
    yield drv
    drv.quit()


def _new_match_form(drv) -> None:
    """More, New match (the table's configured match is on): its fields emptied."""
    wait_for(drv, lambda x: "who won?" in text(x, "#lag h2"), "the lag", DEADLINE_S)
    tap(drv, "#btn-more")
    tap(drv, 'button[data-act="new-match"]')
    for el in ("m-p1", "m-p2"):
        drv.find_element("id", el).clear()


@pytest.mark.browser
def test_new_match_picks_players_by_a_few_letters_and_registers_a_new_name(phone, host):
    _, web, reg = host
    drv = phone
    drv.get(web.url + "/v/club/t/t1/referee")
    wait_for(drv, lambda x: text(x, "#signin"), "the sign-in screen", DEADLINE_S)
    for digit in PIN:
        tap(drv, f'button[data-key="{digit}"]')
    tap(drv, "#pin-ok")
    _new_match_form(drv)
    field = drv.find_element("id", "m-p1")
    field.send_keys("jo")  # a few letters, accents not needed
    wait_for(drv, lambda x: "José Martínez" in text(x, "#m-found"), "José offered", DEADLINE_S)
    # the nickname, and the rating: the starter, provisional (no racks yet)
    assert "\u201cPepe\u201d 620?" in text(drv, "#m-found")
    assert_phone_layout(drv, "new match: players found")
    tap(drv, '#m-found button[data-name="José Martínez"]')
    assert field.get_attribute("value") == "José Martínez"
    # the picked field is whole; the second is next
    assert drv.execute_script("return document.activeElement.id") == "m-p2"
    second = drv.find_element("id", "m-p2")
    second.send_keys("Dee\x1b")  # Escape does not land in a field; a control char would
    second.clear()
    second.send_keys("Dee")
    wait_for(drv, lambda x: "is registered when the match starts" in text(x, "#m-found"),
             "no one found", DEADLINE_S)  # fmt: skip
    tap(drv, "#btn-start")
    wait_for(drv, lambda x: "José Martínez" in text(x, "#lag"), "the new match's lag", DEADLINE_S)
    assert web.venues.snapshot("club", "t1")["state"]["players"] == ["José Martínez", "Dee"]
    assert [p.name for p in reg.named("Dee")] == ["Dee"]  # registered on the way, once
    # a name the rules refuse is said on the form, and nothing is sent
    tap(drv, "#btn-more")
    tap(drv, 'button[data-act="new-match"]')
    wait_for(drv, lambda x: x.find_element("id", "m-p1").get_attribute("value"), "form", 5)
    # a bidirectional override reverses the text on a board: the registry refuses it
    drv.execute_script("document.getElementById('m-p2').value = 'Bo\\u202eb'")
    tap(drv, "#btn-start")
    wait_for(drv, lambda x: "control characters" in text(x, "#m-error"), "the reason", DEADLINE_S)
    assert web.venues.snapshot("club", "t1")["state"]["players"] == ["José Martínez", "Dee"]
    assert len(reg.listed()) == 3


@pytest.mark.browser
def test_the_player_page_on_a_phone(phone, tmp_path):
    path = tmp_path / "journal.sqlite"
    night = Night(path, live=True)
    for n in range(3):
        tenball_race(night, "t1", at(f"2026-11-27 2{n}:00"))
    reg = PlayerRegistry(night.journal.db)
    ann = reg.add("Ann", nickname="Annie", rating=480, external=[("fargo", "4242")]).id
    reg.add("Bob")
    night.close()
    t1 = {"game": "10-ball", "players": ["Ann", "Bob"], "race_to": 2, "nodes": ["n1"]}
    cfg = from_dict({"venue": "club", "tables": {"t1": t1}})
    web = WebOutput(host="127.0.0.1", port=0)
    d = Daemon(cfg, outputs=[web], journal_path=str(path), connect=False)
    web.history_journal = str(path)
    d.start()
    try:
        # the daemon refits the ratings once it is idle after its start
        wait_for(None, lambda _: len(ratings.kept(d.journal.db).matches) == 3, "3 rated", 30)
        kept = ratings.kept(d.journal.db).ratings[ann]
        drv = phone
        drv.get(web.url + f"/v/club/player/{ann}")
        wait_for(drv, lambda x: "Ann" in text(x, "#heading"), "the page", DEADLINE_S)
        assert text(drv, "#heading") == "Ann \u201cAnnie\u201d"
        assert text(drv, "#rating") == f"{kept.rating:.0f}"
        assert text(drv, "#rating-state") == "provisional"
        assert text(drv, "#t-matches") == "3" and text(drv, "#t-won") == "0"
        assert text(drv, "#t-racks-won") == "3 of 9"
        assert text(drv, 'dd.ext[data-system="fargo"]') == "4242"
        points = drv.find_elements("css selector", "#chart-rating circle.pt")
        assert [float(p.get_attribute("data-value")) for p in points][-1] == kept.rating
        assert len(points) == 3
        bars = drv.find_elements("css selector", "#chart-pocket rect.bar")
        counts = {b.get_attribute("data-key"): b.get_attribute("data-count") for b in bars}
        assert counts["FR"] == counts["HL"] == "3" and counts["FL"] == "0"
        assert len(drv.find_elements("css selector", "#matches li.match")) == 3
        assert_phone_layout(drv, "player page")
        drv.get(web.url + "/v/club/player/999")
        wait_for(drv, lambda x: "no player" in text(x, "#notfound").lower(), "a 404", DEADLINE_S)
    finally:
        d.stop()
