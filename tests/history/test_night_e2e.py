"""Issue 14, item 6, Done when: after a simulated night of three matches on two tables and a
host restart, `railbird history --format csv` equals the expected results, and the browser
sees the history page and its chart.

Real parts: a private mosquitto, `railbird run` as a subprocess (tests/harness/hostproc.py)
with its web server, two `railbird sim` tables (the node firmware on simulated hardware for
the pockets, the referee console over MQTT) playing tests/history/scenarios/, a restart of
the host, `railbird history`, and headless Chromium on a phone and a TV.

The expected rows are worked out by hand from the scenarios; the start and end of each match
are the wall-clock times the journal gave the inputs that began and decided it (the lag,
the deciding shot, the concession), read straight from its `referee`, `states` and `inputs`
tables."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from harness import browser as B
from harness.hostproc import RailbirdRun

pytestmark = [pytest.mark.broker, pytest.mark.browser, pytest.mark.slow]

HERE = Path(__file__).parent
PW = "node-pw"
CONFIG = """
venue = "club"
reorder_window_ms = 150
stats_period_s = 0
[broker]
host = "127.0.0.1"
port = {port}
user = "railbird-host"
password = "host-secret"
[shots]
quiet_ms = 1000
[tables.t1]
nodes = ["t1-node"]
[tables.t2]
nodes = ["t2-node"]
[outputs.web]
host = "127.0.0.1"
port = 0
title = "Club Night"
"""
HEAD = (
    "venue,table,game,goal,player_a,player_b,start,end,result,winner,score_a,score_b,racks,"
    "innings,high_run_a,high_run_b,fouls_a,fouls_b,balls_a,balls_b"
)
# Worked out from the scenarios (per player: the first named, then the second):
ROWS = {
    # Ann breaks 1 and 2 in, pots the 3, scratches (her foul); Bob's 10 wins rack 1, he
    # breaks the 5 in and his 10 wins 2-0: racks won in a row 2; innings Ann, Bob, Bob.
    "m1": "club,t1,10-ball,2,Ann,Bob,{start},{end},won,Bob,0,2,2,3,0,2,1,0,3,3",
    # Dev's safe break; Cleo runs 3 (5 and the 1, then the 2), misses; Dev scratches (-1);
    # Cleo runs 2 and wins 5 to -1. Innings Dev, Cleo, Dev, Cleo.
    "m2": "club,t2,14.1,5,Cleo,Dev,{start},{end},won,Cleo,5,-1,1,4,3,0,0,1,5,0",
    # Cy breaks the 4 in, misses; Ann concedes.
    "m3": "club,t1,10-ball,1,Ann,Cy,{start},{end},conceded,Cy,0,0,1,2,0,0,0,0,0,1",
}


def _sim(port: int, table: str, work: Path) -> subprocess.Popen:
    argv = [sys.executable, "-m", "railbird", "sim", "--port", str(port), "--venue", "club"]
    argv += ["--table", table, "--node", f"{table}-node", "--seed", "3"]
    argv += ["--scenario", str(HERE / "scenarios" / f"night_{table}.json")]
    argv += ["--quiet-ms", "1000", "--window-ms", "150", "--pace", "0.3"]
    argv += ["--state-dir", str(work / f"{table}-flash")]
    log = open(work / f"sim-{table}.log", "wb")  # noqa: SIM115 - the child keeps it open
    env = dict(os.environ, RAILBIRD_NODE_PASSWORD=PW, RAILBIRD_REFEREE_PASSWORD="referee-secret")
    return subprocess.Popen(argv, stdout=log, stderr=log, env=env, start_new_session=True)


def _finish(sim: subprocess.Popen, table: str, work: Path, timeout: float) -> None:
    try:
        rc = sim.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(sim.pid, signal.SIGKILL)
        sim.wait()
        rc = "timeout"
    log = (work / f"sim-{table}.log").read_text()
    assert rc == 0, f"railbird sim {table}: {rc}\n{log[-3000:]}"
    stats = json.loads(log.strip().splitlines()[-1])
    assert stats["checks_failed"] == 0 and stats["disagreed"] == 0, log[-3000:]


def _iso(wall: float) -> str:
    return datetime.fromtimestamp(wall).astimezone().isoformat(timespec="seconds")


def _times(journal: Path) -> dict:
    """When each match began (its lag) and was decided, as the journal recorded it."""
    db = sqlite3.connect(journal)
    try:
        lags = db.execute(
            "SELECT r.tbl, i.wall FROM referee r JOIN inputs i ON i.id = r.input_id"
            " WHERE r.ok AND json_extract(r.input, '$.type') = 'lag' ORDER BY r.id"
        ).fetchall()
        won = dict(
            db.execute(
                "SELECT s.tbl, MIN(i.wall) FROM states s JOIN inputs i ON i.id = s.input_id"
                " WHERE json_extract(s.state, '$.match_winner') IS NOT NULL"
                " AND json_extract(s.state, '$.ended') IS NULL GROUP BY s.tbl"
            ).fetchall()
        )
        (conceded,) = db.execute(
            "SELECT i.wall FROM referee r JOIN inputs i ON i.id = r.input_id"
            " WHERE r.ok AND json_extract(r.input, '$.type') = 'concede'"
        ).fetchone()
        drops = [
            (wall, len(json.loads(shot)["pocketed"]))
            for shot, wall in db.execute(
                "SELECT sh.shot, i.wall FROM shots sh JOIN inputs i ON i.id = sh.input_id"
            )
        ]
    finally:
        db.close()
    t1 = [w for t, w in lags if t == "t1"]
    t2 = [w for t, w in lags if t == "t2"]
    assert len(t1) == 2 and len(t2) == 1, lags
    return {
        "m1": (t1[0], won["t1"]),
        "m2": (t2[0], won["t2"]),
        "m3": (t1[1], conceded),
        "drops": drops,
    }


def _history(journal: Path, *args) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "railbird", "history", "--journal", str(journal), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def _bars(drv, chart: str) -> dict:
    return drv.execute_script(
        "return Object.fromEntries([...document.querySelectorAll(arguments[0] + ' rect.bar')]"
        ".map((r) => [r.dataset.key, +r.dataset.count]))",
        f"svg#{chart}",
    )


def test_a_night_at_the_club_survives_a_restart_and_shows_in_the_browser(broker, tmp_path):
    port = broker.port
    for table in ("t1", "t2"):
        broker.add_user(f"{table}-node", PW)
    host = RailbirdRun(tmp_path / "host", CONFIG.format(port=port))
    host.start()
    began = time.time()
    sims = {}
    try:
        sims["t1"] = _sim(port, "t1", tmp_path)
        # t2 starts once t1's first match is under way: the matches begin in a known order
        host.wait(lambda s: s["referee"] >= 2, "t1's match and lag", timeout=60)
        sims["t2"] = _sim(port, "t2", tmp_path)
        for table, sim in sims.items():
            _finish(sim, table, tmp_path, timeout=240)
        host.wait(lambda s: s["pending"] == 0, "every shot ruled")
    finally:
        for sim in sims.values():
            if sim.poll() is None:
                os.killpg(sim.pid, signal.SIGKILL)
                sim.wait()
        host.stop()
    ended = time.time()

    # the restart: the history is what the journal holds
    host.start()
    drv = None
    try:
        t = _times(host.journal)
        rows = []
        for key in ("m1", "m2", "m3"):
            start, end = t[key]
            assert began <= start < end <= ended, (key, began, start, end, ended)
            rows.append((start, ROWS[key].format(start=_iso(start), end=_iso(end))))
        expected = "\n".join([HEAD] + [r for _, r in sorted(rows)]) + "\n"
        assert _history(host.journal, "--format", "csv") == expected

        # the same history over the web: JSON, and the pages in a browser
        url = host.wait(lambda s: s["outputs"]["web"]["url"], "the web server")["outputs"]["web"]
        url = url["url"]
        with urllib.request.urlopen(f"{url}/api/v/club/history", timeout=10) as r:
            api = json.load(r)
        cli = json.loads(_history(host.journal, "--format", "json"))
        assert api["matches"] == cli["matches"] and len(api["matches"]) == 3

        per_day, per_hour = {}, {}
        for wall, n in t["drops"]:
            day = (datetime.fromtimestamp(wall) - timedelta(hours=6)).date().isoformat()
            hour = f"{datetime.fromtimestamp(wall).hour:02d}"
            per_day[day] = per_day.get(day, 0) + n
            per_hour[hour] = per_hour.get(hour, 0) + n
        # every ball the sensors saw: Ann 3, Bob 3, Cy 1, Cleo 5, and two scratches
        assert sum(per_day.values()) == 14

        drv = B.chrome(tmp_path / "chrome")
        drv.get(f"{url}/v/club/")  # the venue board links its history
        drv.find_element("id", "history-link").click()
        B.wait_text(drv, "#heading", "club: history")
        for size in (B.PHONE, B.TV):
            B.viewport(drv, size)
            drv.get(f"{url}/v/club/history")
            B.wait_text(drv, "#heading", "club: history")
            assert B.visible(drv, "svg#chart-day") and B.visible(drv, "svg#chart-hour")
            days = _bars(drv, "chart-day")
            assert len(days) == 30  # the last 30 business days, today's last
            assert {k: v for k, v in days.items() if v} == per_day
            hours = _bars(drv, "chart-hour")
            assert len(hours) == 24 and {k: v for k, v in hours.items() if v} == per_hour
            assert B.text(drv, "#n-matches") == "3" and B.text(drv, "#n-balls") == "14"
            results = drv.execute_script(
                "return [...document.querySelectorAll('li.match')].map((m) => m.dataset.result)"
            )
            assert results == ["conceded", "won", "won"]  # newest first
            assert B.overflow(drv) == [], (size, B.overflow(drv))

            drv.get(f"{url}/v/club/history/Cleo")
            B.wait_text(drv, "#heading", "Cleo at club")
            cleo_day = (datetime.fromtimestamp(t["m2"][1]) - timedelta(hours=6)).date()
            assert {k: v for k, v in _bars(drv, "chart-day").items() if v} == {
                cleo_day.isoformat(): 5  # her five balls; Dev's scratch is his
            }
            assert B.text(drv, "#n-won") == "1" and B.text(drv, "#best-run") == "3"
            assert B.overflow(drv) == [], (size, B.overflow(drv))
    finally:
        if drv is not None:
            drv.quit()
        host.stop()
