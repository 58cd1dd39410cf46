"""The history pages and their JSON as the web server serves them (docs/history.md "History
pages"): the night of tests/history/test_cli.py through a real `WebOutput` over HTTP, the
charts' bars as the server draws them, and the refusals (an unknown venue or player, a bad
or too long period, a server without a journal) as 4xx, never 5xx."""

from __future__ import annotations

import json
import re
import sqlite3
import urllib.error
import urllib.request

import pytest

from railbird.history import store
from railbird.outputs.web.server import WebOutput

PERIOD = "from=2026-11-27&to=2026-11-28"


@pytest.fixture
def web(journal):
    with sqlite3.connect(journal, isolation_level=None) as db:
        store.update(db)  # as the daemon does at start
    w = WebOutput(host="127.0.0.1", port=0, title="Club Night")
    for t in ("t1", "t2"):
        w.venues.table("club", t)
    w.history_journal = str(journal)
    w.start()
    yield w
    w.stop()


def get(web, path) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(web.url + path, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def bars(page: str, chart: str) -> dict:
    svg = re.search(rf'<svg class="chart" id="{chart}".*?</svg>', page).group(0)
    return {k: int(n) for k, n in re.findall(r'data-key="([^"]+)" data-count="(\d+)"', svg)}


def test_the_venue_page_draws_the_counts_of_the_period(web):
    code, page = get(web, f"/v/club/history?{PERIOD}")
    assert code == 200
    assert bars(page, "chart-day") == {"2026-11-27": 8, "2026-11-28": 2}
    hours = bars(page, "chart-hour")
    assert list(hours)[:2] == ["06", "07"] and list(hours)[-1] == "05"  # the business day
    assert {h: n for h, n in hours.items() if n} == {"01": 1, "07": 2, "20": 5, "23": 2}
    assert bars(page, "chart-pocket") == {"HL": 3, "HR": 1, "SL": 1, "SR": 1, "FL": 2, "FR": 2}
    assert '<b id="n-matches">1</b>' in page and '<b id="n-balls">10</b>' in page
    assert page.count('<li class="match"') == 1 and 'href="/v/club/history/Ann"' in page
    # one table; one day
    code, page = get(web, "/v/club/history?from=2026-11-28&to=2026-11-28&table=t2")
    assert code == 200 and bars(page, "chart-day") == {"2026-11-28": 2}
    assert "No match in this period." in page


def test_a_player_page_and_the_json(web):
    code, page = get(web, f"/v/club/history/Ann?{PERIOD}")
    assert code == 200 and '<h1 id="heading">Ann at club</h1>' in page
    assert bars(page, "chart-day") == {"2026-11-27": 2, "2026-11-28": 0}
    assert '<b id="n-won">0</b>' in page and '<b id="best-run">1</b>' in page
    code, body = get(web, f"/api/v/club/history?{PERIOD}&player=Bob")
    doc = json.loads(body)
    assert code == 200 and doc["player"] == "Bob" and len(doc["matches"]) == 1
    assert doc["matches"][0]["fouls"] == {"Ann": 0, "Bob": 1}
    assert doc["balls_per_day"] == {"2026-11-27": 3, "2026-11-28": 0}  # FL, the cue, HR
    assert doc["balls_per_pocket"] == {"HL": 0, "HR": 1, "SL": 1, "SR": 0, "FL": 1, "FR": 0}


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("/v/nowhere/history", 404),
        ("/v/club/history/Nobody", 404),
        ("/api/v/club/history?player=%00", 404),
        ("/v/club/history/Ann/more", 404),
        ("/v/club/history?from=2026-02-30", 400),
        ("/v/club/history?from=2026-11-30&to=2026-11-01", 400),
        ("/v/club/history?from=2020-01-01&to=2026-01-01", 400),  # more than 366 days
        ("/v/club/history?to=9999-12-31", 400),
        ("/api/v/club/history?from=0001-01-01&to=0001-01-02", 400),
        ("/v/club/history?table=%00", 200),
        ("/v/club/history/%F0%9F%8E%B1", 404),
    ],
)
def test_refusals_are_4xx(web, path, code):
    assert get(web, path)[0] == code


def test_a_server_without_a_journal_has_no_history(web):
    web.history_journal = None
    code, page = get(web, "/v/club/history")
    assert code == 404 and "keeps no history" in page


def test_the_venues_known_players_for_a_match_form(web):
    """Issue 22, 6: players are picked, not typed: the names of the venue's matches, the
    most recently seen first; an unknown venue is a 404, a server without history none."""
    code, body = get(web, "/api/v/club/players")
    doc = json.loads(body)
    assert code == 200 and set(doc["players"]) == {"Ann", "Bob"}
    with sqlite3.connect(web.history_journal) as db:
        newest = db.execute(
            "SELECT player_a, player_b FROM history_matches ORDER BY start DESC LIMIT 1"
        ).fetchone()
    assert doc["players"][0] in newest
    assert get(web, "/api/v/nowhere/players")[0] == 404
    web.history_journal = None
    code, body = get(web, "/api/v/club/players")
    assert code == 200 and json.loads(body)["players"] == []
