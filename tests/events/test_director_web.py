"""The director's page and the tables' screens over HTTP, on the real daemon in-process
(no broker): the director's PIN and session are the director's alone, a called match is
in each table's snapshot, the referee app's one tap (the call's own `match` input)
starts it there, and the daemon's ruling of the match's end goes into the bracket."""

from __future__ import annotations

import pytest

from harness.waiting import wait_for
from railbird.config import from_dict
from railbird.daemon.worker import Daemon
from railbird.outputs.factory import connect
from railbird.outputs.web.server import WebOutput
from tests.displays.refapp import Http

PIN, DPIN = "246813", "975318"
TABLES = {t: {"game": "9-ball", "race_to": 1, "nodes": [f"{t}-n"]} for t in ("t1", "t2")}


def _host(tmp_path):
    cfg = from_dict(
        {"venue": "club", "tables": TABLES, "referee_token": PIN, "director_pin": DPIN,
         "event_export_dir": str(tmp_path / "export")}
    )  # fmt: skip
    web = WebOutput(host="127.0.0.1", port=0, pins={"club": PIN},
                    director_pins={"club": DPIN}, history_processes=False)  # fmt: skip
    d = Daemon(cfg, outputs=[web], journal_path=str(tmp_path / "j.sqlite"), connect=False)
    connect([web], d)
    d.start()
    return d, web


@pytest.fixture
def host(tmp_path):
    d, web = _host(tmp_path)
    yield d, web
    d.stop()


FORM = {"name": "Friday", "format": "single_elimination", "game": "9-ball", "goal": 1,
        "players": ["Ann", "Bob", "Cy", "Di"], "seeding": "seeded"}  # fmt: skip


def test_only_the_director_runs_the_event_and_only_the_referee_scores(host, tmp_path):
    _, web = host
    director, referee = Http(web.url), Http(web.url)
    assert director.call("POST", "/api/director/club/event", FORM)[0] == 403  # signed out
    # the referee's PIN is not the director's, and the other way round
    assert director.call("POST", "/api/director/club/session", {"pin": PIN})[0] == 403
    assert referee.call("POST", "/api/session/club", {"pin": DPIN})[0] == 403
    assert director.call("POST", "/api/director/club/session", {"pin": DPIN})[0] == 200
    assert referee.call("POST", "/api/session/club", {"pin": PIN})[0] == 200
    assert referee.call("POST", "/api/director/club/event", FORM)[0] == 403
    code, res, _ = director.call("POST", "/api/director/club/event", FORM)
    assert code == 200, res
    ev = res["event"]
    assert sorted(ev["calls"]) == ["t1", "t2"]
    # the director's session gives no referee input
    inp = director.call("GET", "/api/v/club/t1")[1]["call"]["input"]
    code, res, _ = director.call("POST", "/api/v/club/t1/referee", {"id": "d1", "input": inp})
    assert code == 403 and res["signin"]
    # a request the event refuses is a reason, not a crash
    code, res, _ = director.call("POST", "/api/director/club/assign",
                                 {"match": "W2-1", "table": "t1"})  # fmt: skip
    assert code == 422 and "has a match called already" in res["error"]
    code, res, _ = director.call("POST", "/api/director/club/assign", {"match": 3})
    assert code == 422 and res["error"] == "match: text"


def test_a_called_match_starts_with_one_tap_and_its_end_goes_into_the_bracket(host):
    _, web = host
    director, referee = Http(web.url), Http(web.url)
    director.call("POST", "/api/director/club/session", {"pin": DPIN})
    referee.call("POST", "/api/session/club", {"pin": PIN})
    director.call("POST", "/api/director/club/event", FORM)
    call = referee.call("GET", "/api/v/club/t1")[1]["call"]
    assert call["players"] == ["Ann", "Di"] and call["goal"] == 1 and not call["began"]
    code, res, _ = referee.call("POST", "/api/v/club/t1/referee",
                                {"id": "tap-1", "input": call["input"]})  # fmt: skip
    assert code == 200, res
    # the outputs see the new state on the daemon's thread: wait for it, do not race it
    snap = wait_for(lambda: _began(referee), "the called match begun at t1")
    assert snap["state"]["players"] == ["Ann", "Di"] and snap["state"]["goal"] == 1
    # Di concedes: Ann wins, a conceded match with no finished race is a forfeit
    concede = {"id": "tap-2", "input": {"type": "concede", "player": "Di"}}
    code, res, _ = referee.call("POST", "/api/v/club/t1/referee", concede)
    assert code == 200, res
    ev = wait_for(lambda: _done(referee, "W1-1"), "W1-1 in the bracket")
    w11 = next(m for m in ev["event"]["matches"] if m["id"] == "W1-1")
    assert w11["state"] == "done" and w11["winner"] == 0 and w11["score"] is None
    assert "W1-1" in ev["html"] and "Ann" in ev["html"]
    # t1 is free and nothing else is playable yet (W2-1 waits for W1-2 at t2)
    assert referee.call("GET", "/api/v/club/t1")[1]["call"] is None
    assert referee.call("GET", "/api/v/club/t2")[1]["call"]["match"] == "W1-2"


def _began(http: Http):
    snap = http.call("GET", "/api/v/club/t1")[1]
    return snap if snap["call"] and snap["call"]["began"] else None


def _done(http: Http, match: str):
    ev = http.call("GET", "/api/event/club")[1]
    m = next(m for m in ev["event"]["matches"] if m["id"] == match)
    return ev if m["state"] == "done" else None


@pytest.mark.parametrize(
    ("pin", "why"),
    [
        ("111111", "director_pin: too weak"),
        (PIN, "director_pin: the same as referee_token"),
        ("12ab", "director_pin: 6 to 12 digits"),
    ],
)
def test_a_weak_or_shared_director_pin_is_a_config_error(pin, why):
    from railbird.config.check import problems

    found = problems({"venue": "club", "referee_token": PIN, "director_pin": pin})
    assert any(p.startswith(why) for p in found), found
    assert not problems({"venue": "club", "referee_token": PIN, "director_pin": DPIN})


def test_the_events_shot_clock_reaches_every_called_match(host):
    """The director's form sets the event's shot clock; each table is handed it in the
    called match's input, and the clock runs there once the match starts."""
    _, web = host
    director, referee = Http(web.url), Http(web.url)
    director.call("POST", "/api/director/club/session", {"pin": DPIN})
    referee.call("POST", "/api/session/club", {"pin": PIN})
    bad = dict(FORM, shot_clock={"preset": "wpa", "shot_s": 0})
    code, res, _ = director.call("POST", "/api/director/club/event", bad)
    assert code == 422 and "shot_s" in res["error"]
    form = dict(FORM, shot_clock={"preset": "wpa", "shot_s": 30})
    assert director.call("POST", "/api/director/club/event", form)[0] == 200
    for t in ("t1", "t2"):
        clock = referee.call("GET", f"/api/v/club/{t}")[1]["call"]["input"]["shot_clock"]
        assert clock["shot_s"] == 30 and clock["extension_s"] == 25, clock
    call = referee.call("GET", "/api/v/club/t1")[1]["call"]
    referee.call("POST", "/api/v/club/t1/referee", {"id": "tap-1", "input": call["input"]})
    snap = wait_for(lambda: _began(referee), "the called match begun at t1")
    # the table keeps the event's clock: idle until the break's balls stop, one extension
    # each for the rack
    clock = snap["state"]["shot_clock"]
    assert clock is not None and clock["status"] == "idle", clock
    assert clock["warning_us"] == 10_000_000 and clock["extensions_left"] == [1, 1], clock
