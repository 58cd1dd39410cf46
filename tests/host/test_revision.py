"""No referee action lands on a state it was not made for (issue 22, build item 2): every
state carries its revision, input may name the revision it was made against, and the host
refuses one made against another (status `stale`) with where the table is now, applies
nothing and keeps nothing of it (core/revision.py, protocol/REFEREE.md "Revisions").

Against the pipeline, the daemon with its journal (a restart rules the same), the web desk
over real HTTP, and the protocol's `referee_result`."""

from __future__ import annotations

import json

import pytest

from railbird.config import from_dict
from railbird.core.pipeline import Pipeline
from railbird.core.records import RefereeRecord, StateRecord, Status
from railbird.core.revision import REV_LEN, stale_reason, state_rev
from railbird.daemon.answer import referee_answer
from railbird.daemon.worker import Daemon
from railbird.outputs.web.server import WebOutput
from rbproto import codec
from tests.displays.refapp import Http

TEN = {"game": "10-ball", "players": ["Ann", "Bob"], "race_to": 3, "nodes": ["t1-node"]}
CFG = {"venue": "club", "tables": {"t1": TEN}}
LAG = {"type": "lag", "winner": "Ann"}
SAFETY = {"type": "call", "safety": True}
FOUL = {"type": "shot", "pocketed": [], "fouls": ["6.6"]}  # touched ball


def _rev(pipe: Pipeline) -> str | None:
    return pipe.table("club", "t1").game.revision()


def _state(records):
    return next(r for r in records if isinstance(r, StateRecord))


def test_the_revision_is_the_state_lines_digest():
    assert state_rev(None) is None and state_rev("") is None
    rev = state_rev("10b p=Ann/Bob")
    assert rev is not None and len(rev) == REV_LEN and int(rev, 16) >= 0
    assert rev == state_rev("10b p=Ann/Bob") != state_rev("10b p=Ann/Bo")


def test_input_made_against_an_older_state_is_refused_and_kept_nowhere():
    pipe = Pipeline(from_dict(CFG))
    before = _rev(pipe)
    status, _, recs = pipe.on_referee("club", "t1", {"id": "a1", "input": LAG, "rev": before})
    assert status == Status.OK
    after = _rev(pipe)
    assert after != before and after == state_rev(_state(recs).fen)

    # the card the referee still had on screen was made for the state before the lag
    status, reason, recs = pipe.on_referee("club", "t1", {"id": "a2", "input": FOUL, "rev": before})
    assert status == Status.STALE
    assert reason == stale_reason(pipe.table("club", "t1").game.snapshot()["state"])
    assert reason.startswith("stale: the table has changed") and "Ann at the table" in reason
    (rec,) = recs  # no state: nothing was applied
    assert isinstance(rec, RefereeRecord) and not rec.ok and rec.error == reason
    assert rec.rev == after  # the revision to act on now
    assert _rev(pipe) == after and pipe.counters["referee_stale"] == 1

    # the id was not taken: made again against the state now, it applies
    status, _, recs = pipe.on_referee("club", "t1", {"id": "a2", "input": FOUL, "rev": after})
    assert status == Status.OK and "ouched" in json.dumps(_state(recs).announcements)


def test_input_without_a_revision_is_not_checked():
    # consoles that do not send one (railbird ref, older apps) work as before
    pipe = Pipeline(from_dict(CFG))
    assert pipe.on_referee("club", "t1", {"input": LAG})[0] == Status.OK
    assert pipe.on_referee("club", "t1", {"input": FOUL})[0] == Status.OK


def test_a_state_an_undo_brings_back_has_its_revision_again():
    pipe = Pipeline(from_dict(CFG))
    pipe.on_referee("club", "t1", {"input": LAG})
    at_lag = _rev(pipe)
    assert pipe.on_referee("club", "t1", {"input": FOUL})[0] == Status.OK
    assert _rev(pipe) != at_lag
    assert pipe.on_referee("club", "t1", {"input": {"type": "undo"}})[0] == Status.OK
    assert _rev(pipe) == at_lag  # the same state, so input made for it means the same
    assert pipe.on_referee("club", "t1", {"input": FOUL, "rev": at_lag})[0] == Status.OK


def test_the_answer_on_the_protocol_says_stale_and_the_revision_now():
    pipe = Pipeline(from_dict(CFG))
    old = _rev(pipe)
    pipe.on_referee("club", "t1", {"input": LAG})
    status, reason, recs = pipe.on_referee("club", "t1", {"id": "x", "input": FOUL, "rev": old})
    _topic, payload = referee_answer(
        "railbird/v1/club/t1/referee", b'{"id": "x"}', status, reason, recs
    )
    msg = codec.decode("referee_result", payload)
    assert msg["status"] == "stale" and msg["rev"] == _rev(pipe)
    assert msg["error"].startswith("stale:")
    # and an applied one names the revision it made
    now = _rev(pipe)
    status, reason, recs = pipe.on_referee("club", "t1", {"id": "y", "input": FOUL, "rev": now})
    msg = codec.decode(
        "referee_result",
        referee_answer("railbird/v1/club/t1/referee", b'{"id": "y"}', status, reason, recs)[1],
    )
    assert msg["status"] == "ok" and msg["rev"] == _rev(pipe) != now


def test_the_referee_message_takes_a_revision_and_refuses_a_bad_one():
    ok = {"v": 1, "input": SAFETY, "rev": "0123456789abcdef"}
    assert codec.decode("referee", json.dumps(ok).encode())["rev"] == ok["rev"]
    for bad in ("", 7, "x" * 33):
        with pytest.raises(codec.ProtocolError):
            codec.decode("referee", json.dumps(dict(ok, rev=bad)).encode())


@pytest.fixture
def web_host(tmp_path):
    web = WebOutput(host="127.0.0.1", port=0, pins={"club": "4711"})
    journal = str(tmp_path / "j.sqlite")
    d = Daemon(from_dict(CFG), outputs=[web], journal_path=journal, connect=False)
    web.referee = d.referee_input
    d.start()
    c = Http(web.url)
    assert c.call("POST", "/api/session/club", {"pin": "4711"})[0] == 200
    running = [d]
    yield running, web, c, tmp_path
    for daemon in running:
        daemon.stop()


REF = "/api/v/club/t1/referee"


def _web_rev(web):
    return web.venues.snapshot("club", "t1")["rev"]


def test_the_web_desk_refuses_a_stale_card_with_409_and_applies_nothing(web_host):
    running, web, c, tmp_path = web_host
    first = _web_rev(web)
    code, res, _ = c.call("POST", REF, {"id": "w1", "input": LAG, "rev": first})
    assert code == 200 and res["ok"]
    now = res["rev"]
    assert now != first and _web_rev(web) == now  # the screen's revision is the host's

    code, res, _ = c.call("POST", REF, {"id": "w2", "input": FOUL, "rev": first})
    assert code == 409 and res["stale"] and not res["ok"], res
    assert res["rev"] == now and res["error"].startswith("stale: the table has changed")
    assert _web_rev(web) == now and web.stats["stale"] == 1
    # sent again (a retry), it is stale again: the id was not taken
    assert c.call("POST", REF, {"id": "w2", "input": FOUL, "rev": first})[0] == 409

    for bad in ("", 5, "y" * 40):
        code, res, _ = c.call("POST", REF, {"id": "w3", "input": SAFETY, "rev": bad})
        assert code == 400 and "rev" in res["error"]

    # a restart replays the journal: the stale input is in it, and rules the same
    running.pop().stop()
    d2 = Daemon(from_dict(CFG), journal_path=str(tmp_path / "j.sqlite"), connect=False)
    d2.start()
    try:
        assert d2.pipeline.table("club", "t1").game.revision() == now
        assert d2.pipeline.counters["referee_stale"] == 2
    finally:
        d2.stop()
