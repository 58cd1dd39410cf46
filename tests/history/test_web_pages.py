"""The history served in pages of at most 1 MiB (issue 23, 4: one 365-day request of a busy
year returned 8 MB and took seconds, all of it built in memory at once). A period's matches
come in pages with a cursor to the next (docs/history.md "History pages"): walking them
gives every match of the period once, in the order of `railbird history`, and no page is
over `PAGE_BYTES`, even of a journal from before names were capped, whose every match is
some 40 KB. The history is written by railbird.bench.year (a busy venue's rows, as the
store keeps them)."""

from __future__ import annotations

import json
import re
import sqlite3
import urllib.error
import urllib.request
from html import unescape
from urllib.parse import urlencode

import pytest

from railbird.bench import year
from railbird.history import export, paging, period, store
from railbird.outputs.web import history
from railbird.outputs.web.server import WebOutput


def serve(tmp_path, y: year.Year) -> WebOutput:
    path = tmp_path / "journal.sqlite"
    year.write(path, y)
    web = WebOutput(host="127.0.0.1", port=0)
    for t in range(1, y.tables + 1):
        web.venues.table(year.VENUE, f"t{t}")
    web.history_journal = str(path)
    web.start()
    return web


def get(web, path) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(web.url + path, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def expected(web, y: year.Year) -> list[dict]:
    """Every match of the period, oldest first, as `railbird history` reads them."""
    since, until = period.bounds(y.first_day, y.last_day, web.venues.day_start_hour)
    with sqlite3.connect(web.history_journal) as db:
        return store.matches(db, venue=year.VENUE, since=since, until=until)


def period_query(y: year.Year, **more) -> str:
    return urlencode({"from": y.first_day.isoformat(), "to": y.last_day.isoformat(), **more})


def walk_json(web, y: year.Year) -> list[dict]:
    docs, cursor = [], None
    while True:
        q = period_query(y, **({"cursor": cursor} if cursor else {}))
        code, body = get(web, f"/api/v/{year.VENUE}/history?{q}")
        assert code == 200, body[:300]
        assert len(body) <= paging.PAGE_BYTES, len(body)
        docs.append(json.loads(body))
        cursor = docs[-1]["next"]
        if cursor is None:
            return docs
        assert len(docs) < 100, "the pages never end"


@pytest.mark.parametrize(
    ("y", "pages"),
    [
        (year.Year(tables=2, days=60), 2),  # 720 matches: 500 a page
        (year.Year(tables=1, days=20, name_len=3000), None),  # 120 of some 40 KB each
    ],
    ids=["busy", "long-names"],
)
def test_the_json_walks_every_match_once_in_pages_under_the_cap(tmp_path, y, pages):
    web = serve(tmp_path, y)
    try:
        docs = walk_json(web, y)
        want = [export.match_json(m) for m in expected(web, y)]
    finally:
        web.stop()
    assert len(want) == y.matches
    if pages is not None:
        assert len(docs) == pages
        assert len(docs[0]["matches"]) == history.PAGE_MATCHES
    else:  # the cap, not the count, cuts these pages
        assert len(docs) >= 4 and all(len(d["matches"]) < history.PAGE_MATCHES for d in docs)
    assert [m for d in docs for m in d["matches"]] == want
    # the counts come with the first page, for the whole period; the others carry matches
    first = docs[0]
    assert first["matches_total"] == y.matches
    assert sum(first["balls_per_day"].values()) == y.matches * y.drops
    assert len(first["balls_per_day"]) == y.days
    assert all("balls_per_day" not in d for d in docs[1:])


def test_the_page_lists_the_newest_first_and_links_the_earlier(tmp_path):
    y = year.Year(tables=1, days=15, name_len=3000)  # 90 matches, some 13 KB of HTML each
    web = serve(tmp_path, y)
    try:
        want = expected(web, y)
        path, pages, listed = f"/v/{year.VENUE}/history?{period_query(y)}", [], []
        while path:
            code, body = get(web, path)
            assert code == 200 and len(body) <= paging.PAGE_BYTES, (code, len(body))
            page = body.decode()
            pages.append(page)
            listed += re.findall(r'<div class="when">([^<]*) · table', page)
            more = re.search(r'<a id="earlier" href="([^"]+)"', page)
            path = unescape(more.group(1)) if more else None
            assert len(pages) < 100, "the pages never end"
    finally:
        web.stop()
    assert len(pages) >= 2
    assert '<b id="n-matches">90</b>' in pages[0] and 'id="chart-day"' in pages[0]
    assert all('id="chart-day"' not in p and 'id="newest"' in p for p in pages[1:])
    assert len(want) == y.matches
    assert listed == [period.clock(m["start"]) for m in reversed(want)]


BAD_CURSORS = ("%%%", "bm90IGpzb24", "WzEsMl0", "WyJ4IiwidDEiLDFd", "A" * 600)
# not base64, base64 of "not json", of [1, 2], of ["x", "t1", 1] (no start), too long


def test_a_cursor_the_server_never_gave_is_a_400(tmp_path):
    y = year.Year(tables=1, days=2)
    web = serve(tmp_path, y)
    try:
        for cursor in BAD_CURSORS:
            q = period_query(y, cursor=cursor)
            code, body = get(web, f"/api/v/{year.VENUE}/history?{q}")
            assert code == 400 and b"cursor" in body, (cursor, code, body)
            assert get(web, f"/v/{year.VENUE}/history?{q}")[0] == 400, cursor
    finally:
        web.stop()
