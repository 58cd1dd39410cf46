"""Issue 22, build item 3: referee sessions survive a restart of the host (12 hours, as
promised). They were kept in memory only, so every `railbird run` restart signed every phone
out in the middle of a match. Now they are kept in a 0600 file beside the journal
(railbird/outputs/web/sessions.py): only a SHA-256 of each token, the venue and a wall-clock
expiry, with a keyed fingerprint of the venue's PIN whose change ends them.

Unit tests against `Sessions` with a file, then `railbird run` as a subprocess (a private
mosquitto, the web output on a free port): sign in over HTTP, kill the host, start it again
on the same journal, and the same cookie still signs the phone in."""

from __future__ import annotations

import json
import logging
import os
import stat
import threading
from pathlib import Path

import pytest

from harness.hostproc import RailbirdRun
from harness.waiting import wait_for
from railbird.outputs.web.sessions import (
    COOKIE,
    MAX_AGE_S,
    MAX_SESSIONS,
    Sessions,
    sessions_path,
    token_hash,
)
from tests.displays.refapp import Http

PIN = "471108"
PINS = {"club": PIN}


class Clock:
    """A wall clock the test moves."""

    def __init__(self, t: float = 1_800_000_000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def _sessions(path, pins=PINS, clock=None, **kw) -> Sessions:
    return Sessions(path=path, pins=pins, clock=clock or Clock(), **kw)


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


# -- the file ---------------------------------------------------------------------------------
def test_a_session_is_still_valid_after_a_reload(tmp_path):
    path = tmp_path / "journal.sqlite.sessions"
    token = _sessions(path).create("club")
    again = _sessions(path)
    assert again.venue_of(token) == "club"
    assert len(again) == 1
    assert again.venue_of("not-" + token) is None


def test_the_expiry_is_wall_clock_and_holds_across_a_reload(tmp_path):
    path, clock = tmp_path / "s", Clock()
    token = _sessions(path, clock=clock).create("club")
    clock.t += MAX_AGE_S - 60  # the host restarted 11 h 59 min later
    s = _sessions(path, clock=clock)
    assert s.venue_of(token) == "club"
    assert s.expires_in(token) == pytest.approx(60)
    clock.t += 61
    assert _sessions(path, clock=clock).venue_of(token) is None
    assert json.loads(path.read_text())["sessions"] == []  # rewritten without it


def test_an_expiry_is_never_more_than_12_hours_from_now(tmp_path):
    """A clock set back, or an edited file, cannot make a session outlive its 12 hours."""
    path, clock = tmp_path / "s", Clock()
    token = _sessions(path, clock=clock).create("club")
    doc = json.loads(path.read_text())
    doc["sessions"][0]["expires"] = clock.t + 100 * MAX_AGE_S
    path.write_text(json.dumps(doc))
    assert _sessions(path, clock=clock).expires_in(token) == pytest.approx(MAX_AGE_S)


def test_the_file_holds_no_token_and_is_0600(tmp_path):
    path = tmp_path / "s"
    path.write_text("{}")
    path.chmod(0o644)  # an old, wider file is replaced by a private one
    s = _sessions(path)
    tokens = [s.create("club") for _ in range(5)]
    raw = path.read_bytes()
    for t in tokens:
        assert t.encode() not in raw
        assert token_hash(t).encode() in raw
    assert PIN.encode() not in raw
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["s"]  # no temporary file left


def test_a_copy_of_the_file_signs_nobody_in(tmp_path):
    """What the file holds is not a token: sending any of it as the cookie is refused."""
    path = tmp_path / "s"
    _sessions(path).create("club")
    doc = json.loads(path.read_text())
    s = _sessions(path)
    for guess in [doc["sessions"][0]["sha256"], doc["key"], doc["pins"]["club"]]:
        assert s.venue_of(guess) is None


def test_sign_out_holds_across_a_reload(tmp_path):
    path = tmp_path / "s"
    s = _sessions(path)
    out, kept = s.create("club"), s.create("club")
    s.drop(out)
    again = _sessions(path)
    assert again.venue_of(out) is None
    assert again.venue_of(kept) == "club"


def test_a_changed_pin_ends_the_sessions(tmp_path):
    path = tmp_path / "s"
    token = _sessions(path).create("club")
    assert _sessions(path, pins={"club": "902317"}).venue_of(token) is None
    # dropped on disk too: the old PIN back does not bring the old sessions back
    assert _sessions(path).venue_of(token) is None


def test_a_pin_change_ends_only_that_venues_sessions(tmp_path):
    path = tmp_path / "s"
    pins = {"club": PIN, "bar": "350971"}
    s = _sessions(path, pins=pins)
    club, bar = s.create("club"), s.create("bar")
    again = _sessions(path, pins={"club": PIN, "bar": "350972"})
    assert again.venue_of(club) == "club"
    assert again.venue_of(bar) is None
    # a venue whose PIN is gone from the config (referee input off) keeps none either
    assert _sessions(path, pins={"bar": "350972"}).venue_of(club) is None


def _valid_doc(tmp_path) -> dict:
    """A file as the host writes it, for the tests that spoil it."""
    p = tmp_path / "valid"
    _sessions(p).create("club")
    return json.loads(p.read_text())


GARBAGE = [
    b"",
    b"\x00\xff" * 300,
    os.urandom(4096),
    b"[]",
    b'"sessions"',
    b"null",
    b"{}",
    b'{"version": 2}',
    b"[" * 100_000,  # nested too deep for the parser
    b'{"version": 1, "key": "zz", "pins": {}, "sessions": []}',
    b'{"version": 1, "key": "' + b"a" * 64 + b'", "pins": [], "sessions": {}}',
    json.dumps({"version": 1, "key": "a" * 64, "pins": {}, "sessions": [0] * 300_000}).encode(),
]


@pytest.mark.parametrize("content", GARBAGE, ids=range(len(GARBAGE)))
def test_a_damaged_file_loads_as_empty_without_raising(tmp_path, caplog, content):
    path = tmp_path / "s"
    path.write_bytes(content)
    with caplog.at_level(logging.INFO, logger="railbird.outputs.web"):
        s = _sessions(path)
    assert len(s) == 0
    assert len(_warnings(caplog)) == 1  # logged once (an empty file is damaged too)
    token = s.create("club")  # and it works from there, the file replaced by a good one
    assert _sessions(path).venue_of(token) == "club"


def test_rows_of_the_wrong_shape_are_left_out(tmp_path):
    doc = _valid_doc(tmp_path)
    good = doc["sessions"][0]
    doc["sessions"] = [
        good,
        "row",
        None,
        [1, 2],
        dict(good, sha256="x" * 64),
        dict(good, sha256=good["sha256"].upper()),
        dict(good, venue=7),
        dict(good, venue=""),
        dict(good, expires="soon"),
        dict(good, expires=True),
        dict(good, expires=None),
        {k: v for k, v in good.items() if k != "expires"},
    ]
    path = tmp_path / "s"
    path.write_text(json.dumps(doc))
    s = _sessions(path)
    assert len(s) == 1


def test_an_infinite_or_nan_expiry_is_not_forever(tmp_path):
    doc = _valid_doc(tmp_path)
    path = tmp_path / "s"
    for bad in ("Infinity", "NaN"):
        text = json.dumps(doc).replace(str(doc["sessions"][0]["expires"]), bad)
        path.write_text(text)
        assert len(_sessions(path)) == 0


def test_a_long_list_is_capped(tmp_path):
    doc = _valid_doc(tmp_path)
    row = doc["sessions"][0]
    doc["sessions"] = [
        dict(row, sha256=f"{n:064x}", expires=row["expires"] - n) for n in range(3 * MAX_SESSIONS)
    ]
    path = tmp_path / "s"
    path.write_text(json.dumps(doc))
    s = _sessions(path)
    assert len(s) == MAX_SESSIONS
    assert len(json.loads(path.read_text())["sessions"]) == MAX_SESSIONS
    # the cap still makes room for a new sign-in, which is kept
    token = s.create("club")
    assert len(s) == MAX_SESSIONS and _sessions(path).venue_of(token) == "club"


def test_an_unreadable_or_unwritable_file_is_logged_and_sessions_go_on(tmp_path, caplog):
    path = tmp_path / "s"
    path.mkdir()  # neither readable nor replaceable as a file
    with caplog.at_level(logging.INFO, logger="railbird.outputs.web"):
        s = _sessions(path)
        tokens = [s.create("club") for _ in range(3)]
    assert all(s.venue_of(t) == "club" for t in tokens)  # in memory until the restart
    warnings = _warnings(caplog)
    assert len(warnings) == 2, warnings  # one for the reading, one for the writing
    assert "cannot read" in warnings[0] and "cannot write" in warnings[1]


def test_sign_ins_from_many_threads_are_all_kept(tmp_path):
    path = tmp_path / "s"
    s = _sessions(path)
    tokens: list[str] = []
    lock = threading.Lock()

    def sign_in():
        for _ in range(10):
            t = s.create("club")
            with lock:
                tokens.append(t)

    threads = [threading.Thread(target=sign_in) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    again = _sessions(path)
    assert len(again) == 80 and all(again.venue_of(t) == "club" for t in tokens)


def test_written_behind_a_sign_in_is_on_the_disk_soon_and_a_sign_out_at_once(tmp_path):
    """The web server's sessions (write_behind): a sign-in is answered before its fsyncs
    (issue 23: they were most of a sign-in's time on a busy disk) and written a moment
    later; a sign-out is on the disk when it returns (a lost one would sign a phone back
    in after a crash); close() writes what is pending."""
    path = tmp_path / "s"
    s = _sessions(path, write_behind=True)
    token = s.create("club")

    def on_disk() -> set[str]:  # read, not loaded: a Sessions on the path rewrites it
        return {r["sha256"] for r in json.loads(path.read_text())["sessions"]}

    wait_for(lambda: token_hash(token) in on_disk(), "the sign-in written")
    s.drop(token)
    assert token_hash(token) not in on_disk()  # no wait: on the disk already
    tokens = [s.create("club") for _ in range(20)]
    s.close()
    again = _sessions(path)
    assert len(again) == 20 and all(again.venue_of(t) == "club" for t in tokens)


def test_without_a_path_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = Sessions(pins=PINS)
    token = s.create("club")
    assert s.venue_of(token) == "club" and len(s) == 1
    s.drop(token)
    assert s.venue_of(token) is None
    assert list(tmp_path.iterdir()) == []


# -- `railbird run`, restarted ----------------------------------------------------------------
NODE, PW = "t1-node", "node-pw"
CONFIG = """
venue = "club"
subscribe = ["t1"]
referee_token = "{pin}"
stats_period_s = 0
[broker]
host = "127.0.0.1"
port = {port}
password = "host-secret"
client_id = "railbird-host-sessions"
[tables.t1]
game = "10-ball"
players = ["Ann", "Bob"]
race_to = 3
nodes = ["{node}"]
[outputs.web]
host = "127.0.0.1"
port = 0
"""


def _signed_in(url: str, cookie: str) -> bool:
    code, res, _ = Http(url).call(
        "GET", "/api/session/club", headers={"Cookie": f"{COOKIE}={cookie}"}
    )
    assert code == 200, res
    return res["signed_in"]


def _lag(url: str, cookie: str) -> int:
    body = {"id": "phone-1", "input": {"type": "lag", "winner": "Ann"}}
    return Http(url).call(
        "POST", "/api/v/club/t1/referee", body, headers={"Cookie": f"{COOKIE}={cookie}"}
    )[0]


@pytest.mark.broker
@pytest.mark.slow
def test_a_restarted_host_keeps_the_phone_signed_in(broker, tmp_path):
    broker.add_user(NODE, PW)
    host = RailbirdRun(tmp_path / "host", CONFIG.format(pin=PIN, port=broker.port, node=NODE))
    try:
        url = host.start_with_web()
        c = Http(url)
        code, res, _ = c.call("POST", "/api/session/club", {"pin": PIN})
        assert code == 200, res
        cookie = next(k.value for k in c.jar if k.name == COOKIE)
        assert _signed_in(url, cookie)

        # killed, not stopped, once the session is on the disk (written behind the answer)
        path = sessions_path(str(host.journal))
        wait_for(
            lambda: len(json.loads(Path(path).read_text())["sessions"]) == 1, "the session written"
        )
        host.kill()
        url = host.start_with_web()
        assert _signed_in(url, cookie), host.log()
        assert _lag(url, cookie) == 200  # referee input with the cookie alone, no PIN
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert cookie.encode() not in Path(path).read_bytes()
        host.stop()

        # a new PIN in the config: the old sessions end with the restart
        host.conf.write_text(CONFIG.format(pin="902317", port=broker.port, node=NODE))
        url = host.start_with_web()
        assert not _signed_in(url, cookie)
        assert _lag(url, cookie) == 403
    finally:
        host.stop()
