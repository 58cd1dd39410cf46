"""An 8-player double-elimination event end to end on 3 simulated tables running the real
node firmware (under CPython, simulated hardware): the director signs in on the director's
page in Chromium and makes the event (the draw); the host calls matches to the free tables
and pushes each to that table's screens; the referee app on each table shows the called
match and starts it with one tap; a simulated referee (the MQTT referee console) lags and a
simulated table breaks and pockets the 9, which wins the rack and, in a race to 1, the
match; the result goes into the bracket by itself and the next match is called. At the
end: every result in the bracket is the one played at the table, and the final standings
are on the venue board and in the static export, opened from disk.

Nobody waits on a clock: every wait is on a condition, with a generous deadline."""

from __future__ import annotations

import json
import os
import random
import threading
import urllib.request
from pathlib import Path

import pytest

from harness import browser as B
from harness.hostproc import RailbirdRun
from railbird.sim.physics import ShotPlan
from railbird.sim.player import Turn
from railbird.sim.table import LiveTable, Source
from tests.displays.refapp import assert_phone_layout, phone_browser, tap, text, wait_for

pytestmark = [pytest.mark.broker, pytest.mark.browser, pytest.mark.slow]

PIN, DIRECTOR_PIN, NODE_PW = "246813", "975318", "node-pw"
TABLES = ("t1", "t2", "t3")
PLAYERS = ["Ann", "Bob", "Cy", "Di", "Eve", "Flo", "Gus", "Hal"]
CONFIG = """
venue = "club"
subscribe = ["t1", "t2", "t3"]
reorder_window_ms = 150
stats_period_s = 0
referee_token = "{pin}"
director_pin = "{dpin}"
event_export_dir = "{export}"
[broker]
host = "127.0.0.1"
port = {port}
user = "railbird-host"
password = "host-secret"
[shots]
quiet_ms = 700
[outputs.web]
host = "127.0.0.1"
port = 0
"""
TABLE = """
[tables.{t}]
game = "9-ball"
race_to = 1
nodes = ["{t}-node"]
"""
DEADLINE = 60  # seconds for a condition on a starved machine, not an expected time


class OneRack(Source):
    """The simulated players of a called match: the lag (the winner chosen by the test),
    then the lag winner's break, which pockets the 9: a rack won, the race to 1 over."""

    def __init__(self, winner: str):
        super().__init__()
        self.winner = winner

    def next_turn(self, st: dict):
        if st.get("match_winner"):
            return None
        if st.get("awaiting") == "lag":
            w = self.winner
            return Turn([{"type": "lag", "winner": w, "breaker": w}], None, 0.0, f"{w} lags")
        return Turn([], ShotPlan("break", pots=[(9, "SR")], power=0.9), 0.0, "the 9 on the break")


class Host:
    def __init__(self, url: str):
        self.url = url

    def get(self, path: str) -> dict:
        with urllib.request.urlopen(self.url + path, timeout=10) as r:
            return json.loads(r.read())

    def event(self) -> dict:
        return self.get("/api/event/club")["event"]

    def table(self, t: str) -> dict:
        return self.get(f"/api/v/club/{t}")


def _play(lt: LiveTable, host: Host, match: str, winner: str, played: dict, errors: list):
    """The called match, once the referee app started it: the table's own thread. What the
    table ended with (the winner, the racks per player) goes into `played`."""
    try:
        snap = wait_until(lambda: _started(host.table(lt.table), match), f"{match} started")
        lt.expect.adopt(snap["fen"])
        lt.source = OneRack(winner)
        while lt.step():
            pass
        st = wait_until(lambda: _over(host.table(lt.table)), f"{match} over at {lt.table}")
        played[match] = (st["match_winner"], [st["scores"][p] for p in st["players"]])
    except Exception as e:  # noqa: BLE001 - any failure, reported by the main thread
        errors.append(f"{lt.table} {match}: {e!r}")


def _over(snap: dict):
    st = snap.get("state") or {}
    return st if st.get("match_winner") else None


def _started(snap: dict, match: str):
    c, st = snap.get("call"), snap.get("state") or {}
    ok = c and c["match"] == match and c["began"] and st.get("awaiting") == "lag"
    return snap if ok else None


def wait_until(fn, what: str, timeout: float = DEADLINE):
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def phone(tmp_path):
    drv = phone_browser(tmp_path / "chrome")
    yield drv
    drv.quit()


def test_an_eight_player_double_elimination_event_on_three_tables(broker, phone, tmp_path):
    export = tmp_path / "export"
    conf = CONFIG.format(port=broker.port, pin=PIN, dpin=DIRECTOR_PIN, export=export)
    conf += "".join(TABLE.format(t=t) for t in TABLES)
    for t in TABLES:
        broker.add_user(f"{t}-node", NODE_PW)
    host = RailbirdRun(tmp_path / "host", conf)
    url = host.start_with_web()
    api = Host(url)
    tables: dict[str, LiveTable] = {}
    shots = Path(os.environ.get("RB_SCREENSHOTS") or tmp_path / "shots")
    try:
        for i, t in enumerate(TABLES):
            tables[t] = LiveTable(
                host="127.0.0.1", port=broker.port, venue="club", table=t, node=f"{t}-node",
                node_password=NODE_PW, match={"type": "match", "game": "9-ball",
                "players": ["A", "B"], "race_to": 1}, source=Source(), seed=11 + i,
                state_dir=tmp_path / f"node-{t}", referee_token=PIN, quiet_us=700_000,
                window_us=150_000, pace=0.0, max_gap_us=400_000,
            ).start()  # fmt: skip
        host.wait(lambda s: s.get("sync_samples", 0) >= 9, "clock sync with the 3 nodes", 60)
        _run_event(phone, url, api, tables, host, export, shots)
    finally:
        for lt in tables.values():
            lt.stop()
        host.stop()


def _run_event(drv, url, api: Host, tables, host, export: Path, shots: Path) -> None:
    # -- the director makes the event on the director's page: the draw --------------------
    drv.get(url + "/v/club/director")
    wait_for(drv, lambda d: d.find_elements("id", "pin"), "the director's sign-in")
    drv.find_element("id", "pin").send_keys(DIRECTOR_PIN)
    tap(drv, "#btn-signin")
    wait_for(drv, lambda d: d.find_elements("id", "ev-players"), "the new event's form")
    drv.find_element("id", "ev-name").send_keys("Thursday 9-ball")
    drv.execute_script(  # the form's choices: 9-ball, seeded, a race to 1
        "document.getElementById('ev-game').value = '9-ball';"
        "document.getElementById('ev-seeding').value = 'seeded';"
        "document.getElementById('ev-goal').value = '1';"
    )
    drv.find_element("id", "ev-players").send_keys("\n".join(PLAYERS))
    B.screenshot(drv, shots / "director-new-event.png")
    tap(drv, "#btn-create")
    try:
        wait_for(drv, lambda d: "Thursday 9-ball" in text(d, "#running h2"), "the event running")
    except AssertionError as e:
        raise AssertionError(f"{e}; the page: {text(drv, '#app')!r}") from None
    ev = api.event()
    assert ev["format"] == "double_elimination" and ev["game"] == "9-ball"
    assert [s["name"] for s in ev["standings"]] == PLAYERS  # seeded: in the order typed
    # the three tables have a first-round match each, pushed to their screens
    assert sorted(ev["calls"]) == list(TABLES)
    B.screenshot(drv, shots / "director-running.png")
    # the table's TV page and its overlay show the called match too
    first = ev["calls"]["t1"]
    drv.get(url + "/v/club/t/t1/")
    wait_for(drv, lambda d: " v ".join(first["players"]) in text(d, "#called-match"),
             "t1's table page to show its called match", DEADLINE)  # fmt: skip
    assert "race to 1" in text(drv, "#called") and "Winners' round 1" in text(drv, "#called")
    drv.get(url + "/v/club/t/t1/overlay")
    wait_for(drv, lambda d: "Thursday 9-ball \u00b7 Winners' round 1" in text(d, "#event"),
             "the overlay to show the event and the round", DEADLINE)  # fmt: skip

    # -- the referee app on each table starts the called match; the tables play them --------
    drv.get(url + "/v/club/t/t1/referee")
    wait_for(drv, lambda d: d.find_elements("id", "signin"), "the referee sign-in")
    for digit in PIN:
        tap(drv, f'button[data-key="{digit}"]')
    tap(drv, "#pin-ok")
    rng = random.Random(25)
    called: set[str] = set()  # the matches the referee app started
    played: dict[str, tuple] = {}  # match -> (winner, racks per seat) as the table ended it
    threads: dict[str, threading.Thread] = {}
    errors: list[str] = []
    screens = 0
    while not api.event()["complete"]:
        assert not errors, errors
        waiting = _waiting(api.event(), called)
        if not waiting:
            wait_until(lambda: _waiting(api.event(), called) or api.event()["complete"],
                       "the next match called", DEADLINE)  # fmt: skip
            continue
        for t, c in waiting:
            if t in threads:
                threads[t].join(DEADLINE)  # the table's last match is played out
            drv.get(url + f"/v/club/t/{t}/referee")
            want = " v ".join(c["players"])
            wait_for(drv, lambda d, w=want: w in text(d, "#called-match"),
                     f"{t}'s referee app to show the called {c['match']}", DEADLINE)  # fmt: skip
            shown = text(drv, "#called")
            assert "race to 1" in shown and c["round_name"] in shown, shown
            if screens == 0:
                assert_phone_layout(drv, "the called match")
                B.screenshot(drv, shots / "referee-called-match.png")
                screens += 1
            winner = rng.choice(c["players"])  # wins the lag and breaks
            called.add(c["match"])
            th = threads[t] = threading.Thread(
                target=_play,
                args=(tables[t], api, c["match"], winner, played, errors),
                daemon=True,
            )
            th.start()
            tap(drv, "#btn-start-call")  # one tap: the match input is the call's
            try:
                wait_until(lambda t=t, m=c["match"]: _began(api, t, m), f"{c['match']} begun")
            except AssertionError as e:
                raise AssertionError(f"{e}; {text(drv, '#app')!r} {api.table(t)}") from None
    for th in threads.values():
        th.join(DEADLINE)
    assert not errors, errors

    # -- the bracket holds what the tables played --------------------------------------------
    ev = api.event()
    done = {m["id"]: m for m in ev["matches"] if m["state"] == "done"}
    assert set(done) == set(played), (sorted(done), sorted(played))
    for mid, m in done.items():  # the winner and the racks the table ended the match with
        names = [s["name"] for s in m["seats"]]
        assert (names[m["winner"]], m["score"]) == played[mid], (mid, m, played[mid])
    assert 14 <= len(done) <= 15  # 15 with the grand-final reset
    champion = next(s["name"] for s in ev["standings"] if s["place"] == 1)
    final = done.get("GF2") or done["GF1"]
    assert champion == played[final["id"]][0]
    places = [s["place"] for s in ev["standings"]]
    assert places[:4] == [1, 2, 3, 4] and None not in places, ev["standings"]

    # -- the venue board shows the final standings ------------------------------------------
    drv.get(url + "/v/club/")
    wait_for(drv, lambda d: champion in text(d, "#champion"), "the champion on the venue board")
    board = text(drv, "#standings")
    for s in ev["standings"]:
        assert s["name"] in board
    B.screenshot(drv, shots / "venue-event-final.png")

    # -- and so does the static export, opened from disk -------------------------------------
    wait_until(lambda: _exported_complete(export), "the export of the complete event")
    data = json.loads((export / "event.json").read_text())
    assert data["standings"] == ev["standings"]
    drv.get((export / "index.html").as_uri())
    wait_for(drv, lambda d: champion in text(d, "#champion"), "the champion in the export")
    rows = drv.find_elements("css selector", "#standings tbody tr")
    assert [r.text.split()[1] for r in rows] == [s["name"] for s in ev["standings"]]
    assert host.alive


def _waiting(ev: dict, called: set) -> list:
    """The matches called and not started yet, by table."""
    return [
        (t, c) for t, c in sorted(ev["calls"].items())
        if not c["began"] and c["match"] not in called
    ]  # fmt: skip


def _began(api: Host, table: str, match: str) -> bool:
    c = api.table(table).get("call")
    return c is None or c["match"] != match or c["began"]


def _exported_complete(export: Path) -> bool:
    try:
        return json.loads((export / "event.json").read_text())["complete"]
    except (OSError, ValueError, KeyError):
        return False
