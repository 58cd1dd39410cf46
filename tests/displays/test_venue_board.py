"""The venue board on a 1920x1080 TV nobody can scroll (issue 22): a 10-table and a 60-table
venue in a real headless Chromium. Every table is on some page and no card is below the
fold or off the side (the cards' bounding boxes against the viewport), a card's content is
not cut off (long names wrap or the card scales), pages turn by themselves with "page k of
n" in the header, tables come in natural order (t2 before t10), and a stale host still greys
the cards.

RB_SCREENSHOTS=docs/images saves venue-10-tables-tv.png and venue-60-tables-tv.png there
(docs/displays.md shows them)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from harness import browser as B
from railbird.config import from_dict
from railbird.daemon.worker import Daemon
from railbird.outputs.web.server import WebOutput
from railbird.tableorder import natural_sorted

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PLAYERS = ["Ann", "Bob", "Cleo", "Dev", "Evangeline Montgomery-Smith", "Finn", "Gus", "Hana",
           "Bartholomew Oyelaran-Fitzgerald", "Ines", "Jo", "Kai"]  # fmt: skip

# Every shown card with its box, and whether its content fits it; the page as a whole.
_BOARD_JS = """
const cards = [...document.querySelectorAll('#tables .card')];
return {
  all: cards.map((c) => c.id.replace(/^table-/, '')),
  shown: cards.filter((c) => !c.hidden).map((c) => {
    const r = c.getBoundingClientRect();
    return {t: c.id.replace(/^table-/, ''), left: r.left, top: r.top, right: r.right,
            bottom: r.bottom, cut: c.scrollHeight > c.clientHeight + 1 ||
                               c.scrollWidth > c.clientWidth + 1,
            score: parseFloat(getComputedStyle(c.querySelector('.s')).fontSize)};
  }),
  page: (document.getElementById('page') || {}).innerText || '',
  W: window.innerWidth, H: window.innerHeight,
  scrollH: document.documentElement.scrollHeight, scrollW: document.documentElement.scrollWidth,
};
"""


def venue_config(n: int) -> dict:
    # configured in plain string order (t1, t10, t11, ..., t2): the board must not keep it
    names = sorted(f"t{i}" for i in range(1, n + 1))
    tables = {}
    for k, t in enumerate(names):
        a, b = PLAYERS[k % len(PLAYERS)], PLAYERS[(k + 5) % len(PLAYERS)]
        tables[t] = {"game": "10-ball", "players": [a, b], "race_to": 7, "nodes": [f"{t}-pockets"]}
    return {"venue": "club", "tables": tables}


@pytest.fixture
def venue(request, tmp_path):
    n = request.param
    cfg = from_dict(venue_config(n))
    web = WebOutput(host="127.0.0.1", port=0, pins={"club": "4711"}, title="Club Night")
    for t, tc in cfg.table.items():
        web.venues.expect_nodes("club", t, tc.nodes)
    d = Daemon(cfg, outputs=[web], journal_path=str(tmp_path / "j.sqlite"), connect=False)
    web.referee, web.health = d.referee_input, d.health
    d.start()
    for t, tc in cfg.table.items():
        web.on_node("club", t, tc.nodes[0], {"v": 1, "node": tc.nodes[0], "boot": 1, "fw": "1"})
    # a few tables in play: the lag, a call, a foul (chips on the cards)
    for t in ("t2", "t7", "t10"):
        first = cfg.table[t].players[0]
        for inp in (
            {"type": "lag", "winner": first},
            {"type": "shot", "pocketed": [{"ball": 3, "pocket": "FL"}]},
            {"type": "call", "ball": 1, "pocket": "SR"},
            {"type": "shot", "pocketed": [], "fouls": ["6.3"]},
        ):
            assert d.referee_input("club", t, inp)["ok"], (t, inp)
    yield n, d, web
    d.stop()


@pytest.fixture
def drv(tmp_path):
    drv = B.chrome(tmp_path / "chrome", size=B.TV)
    B.viewport(drv, B.TV, mobile=False)
    yield drv
    drv.quit()


def board(drv) -> dict:
    return drv.execute_script(_BOARD_JS)


def check_page(b: dict) -> None:
    """Nothing below the fold or off the side, nothing to scroll, nothing cut off."""
    W, H = b["W"], b["H"]
    assert (W, H) == B.TV
    assert b["scrollH"] <= H and b["scrollW"] <= W, ("the page scrolls", b["scrollH"], b["scrollW"])
    assert b["shown"], "no card shown"
    for c in b["shown"]:
        inside = c["left"] >= -0.5 and c["top"] >= -0.5 and c["right"] <= W + 0.5
        assert inside and c["bottom"] <= H + 0.5, f"{c['t']} is off the screen: {c}"
        assert not c["cut"], f"{c['t']}'s content is cut off"
        assert c["score"] >= 24, f"{c['t']}'s score is too small to read across a room: {c}"


def fitted(drv, page: str | None = None, timeout: float = 10.0) -> dict:
    """The board once it has laid itself out: check_page holds and two reads 50 ms apart
    agree (the layout runs in the frame after a change, and a frame can take long on a
    busy machine); check_page's last failure is raised at the deadline. With `page`, the
    board must still show that page (they turn every few seconds, never within a fit)."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        b = board(drv)
        try:
            if page is not None:
                assert b["page"] == page, f"the page turned while it fitted: {page} -> {b['page']}"
            check_page(b)
            if b == last:
                return b
        except AssertionError:
            if time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline + timeout:
            raise AssertionError(f"the board never settled: {b}")
        last = b
        time.sleep(0.05)


def pages_seen(drv, n: int, timeout: float) -> dict[int, tuple[dict, list[str]]]:
    """Watch the board turn its pages: {page number: (board, shown tables)} once every
    table has been seen, each page checked the moment it shows."""
    seen: dict[int, tuple[dict, list[str]]] = {}
    order: list[int] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        b = board(drv)
        m = re.match(r"page (\d+) of (\d+)", b["page"])
        k = int(m.group(1)) if m else 1
        shown = [c["t"] for c in b["shown"]]
        if k not in seen and len(b["all"]) == n and shown:
            b = fitted(drv, b["page"])
            shown = [c["t"] for c in b["shown"]]
            seen[k] = (b, shown)
            order.append(k)
        if sum(len(s) for _, s in seen.values()) >= n:
            break
        time.sleep(0.1)
    assert order == sorted(order) or order[0] != 1, f"pages turned out of order: {order}"
    return seen


def shot_path(name: str) -> Path | None:
    out = os.environ.get("RB_SCREENSHOTS")
    return Path(out) / name if out else None


@pytest.mark.parametrize("venue", [10], indirect=True)
def test_ten_tables_fit_one_tv_screen_in_natural_order(venue, drv):
    n, _d, web = venue
    drv.get(web.url + "/v/club/?rotate=1")
    B.wait_until(lambda: len(board(drv)["all"]) == n, 15, "every table's card")
    B.wait_contains(drv, "#table-t10 .chips", "Ball in hand", timeout=10)
    seen = pages_seen(drv, n, timeout=15)
    want = natural_sorted(f"t{i}" for i in range(1, n + 1))
    assert list(seen) == [1], "ten tables need no second page"
    b, shown = seen[1]
    assert shown == want == b["all"]  # every table at once, t2 before t10
    assert not B.visible(drv, "#page")
    assert B.clipped(drv, ".card .n, .card .t, .card .s") == []
    assert B.spill(drv, ".card") == []
    names = " ".join(B.text(drv, "#tables").split())
    assert "Evangeline Montgomery-Smith" in names  # long names wrapped, whole
    assert "Bartholomew Oyelaran-Fitzgerald" in names
    if path := shot_path("venue-10-tables-tv.png"):
        B.screenshot(drv, path)

    # the host stops scoring: the bar says so, every card greys, and still all fit
    health = {"worker_age_s": 0.1, "broker": False}
    web.health = lambda: dict(health)
    B.wait_contains(drv, "#stale", "the host has lost the broker", timeout=5)
    b = fitted(drv)  # the grid shrinks for the bar
    assert [c["t"] for c in b["shown"]] == want
    assert drv.execute_script(
        "return [...document.querySelectorAll('.card')].every((c) =>"
        " getComputedStyle(c).filter.includes('grayscale'))"
    ), "a card of a stale host looks live"


@pytest.mark.parametrize("venue", [60], indirect=True)
def test_sixty_tables_turn_pages_with_every_table_on_one(venue, drv):
    n, _d, web = venue
    drv.get(web.url + "/v/club/?rotate=2")
    B.wait_until(lambda: len(board(drv)["all"]) == n, 20, "every table's card")
    fitted(drv)  # the first page fits, before anything turns
    B.wait_until(lambda: board(drv)["page"].startswith("page 1 of"), 10, "page 1 showing")
    if path := shot_path("venue-60-tables-tv.png"):
        time.sleep(0.3)
        B.screenshot(drv, path)
    seen = pages_seen(drv, n, timeout=30)
    want = natural_sorted(f"t{i}" for i in range(1, n + 1))
    total = int(re.match(r"page \d+ of (\d+)", seen[1][0]["page"]).group(1))
    assert total >= 2 and sorted(seen) == list(range(1, total + 1)), (total, list(seen))
    assert seen[1][0]["all"] == want  # the cards in natural order, t2 before t10
    tables = [t for k in sorted(seen) for t in seen[k][1]]
    assert tables == want, "every table once, on its page, in natural order"
    for k, (b, shown) in seen.items():
        assert b["page"] == f"page {k} of {total} \u00b7 {shown[0]}\u2013{shown[-1]}"
    assert B.visible(drv, "#page")
    assert B.clipped(drv, ".card .n, .card .t, .card .s") == []


@pytest.fixture
def bare_web():
    web = WebOutput(host="127.0.0.1", port=0, title="Club Night")
    web.start()
    yield web
    web.stop()


def test_the_board_relays_itself_out_as_tables_come(bare_web, drv):
    """From 1 table to 60, each one appearing on the open board (a sensor node's birth): at
    every count the first page fits the screen, pages appear past 24 tables, and the cards
    are as large as the count allows (one table fills the screen)."""
    web = bare_web
    added = 0

    def grow(to: int) -> None:
        nonlocal added
        for i in range(added + 1, to + 1):
            node = f"t{i}-pockets"
            web.on_node("club", f"t{i}", node, {"v": 1, "node": node, "boot": 1, "fw": "1"})
        added = to

    grow(1)
    drv.get(web.url + "/v/club/?rotate=600")  # no turn while the test looks
    sizes = {}
    for n in (1, 2, 5, 12, 24, 25, 47, 60):
        grow(n)
        B.wait_until(lambda n=n: len(board(drv)["all"]) == n, 10, f"{n} cards")
        b = fitted(drv)
        pages = -(-n // 24)
        want_page = "" if pages == 1 else f"page 1 of {pages}"
        assert b["page"].startswith(want_page), (n, b["page"])
        per = -(-n // pages)
        assert [c["t"] for c in b["shown"]] == natural_sorted(b["all"])[:per], n
        sizes[n] = b["shown"][0]["score"]
        if n == 1:
            c = b["shown"][0]
            assert c["right"] - c["left"] > 0.9 * b["W"], "one table: the whole width"
    assert sizes[1] > sizes[5] > sizes[24], sizes  # fewer tables, larger cards
