"""Every board shows what the referee and the players need, on a 390x844 phone and on a
1920x1080 TV, without anything wider than the screen: ball in hand (anywhere / behind the
head string), each player's consecutive fouls with the two-foul warning, the balls on the
table (rack view), balls to spot, the current call, and the match-over screen. The web table
page, the venue board, the streaming overlay and the terminal board follow a 10-ball race to
2 driven by referee input through the daemon (tests/displays/scenes.py).

RB_SCREENSHOTS=docs/images saves every screen there (docs/displays.md shows them)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness import browser as B
from railbird.config import from_dict
from railbird.daemon.worker import Daemon
from railbird.outputs.web.server import WebOutput
from railbird.termboard import TermBoard
from tests.displays.scenes import MATCH, OVER_INPUTS, SCENES

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SIZES = {"phone": B.PHONE, "tv": B.TV}
PAGES = {"table": "/v/club/t/t1/", "venue": "/v/club/", "overlay": "/v/club/t/t1/overlay"}
# the boxes nothing may stick out of (a score running into the next card)
BOXES = {"table": ".player, .chip, .over", "venue": ".card", "overlay": ".bar .side, .under"}
# what must never be cut off
WHOLE = {"table": ".score", "venue": ".card .s", "overlay": ".bar .score"}


@pytest.fixture
def venue(tmp_path):
    cfg = from_dict(
        {
            "venue": "club",
            "tables": {
                "t1": dict(MATCH, nodes=["t1-pockets", "t1-rails"]),
                "t2": {"game": "14.1", "players": ["Cleo", "Dev"], "target": 100,
                       "nodes": ["t2-pockets"]},
                "t3": {"game": "9-ball", "players": ["Evangeline Montgomery-Smith", "Finn"],
                       "race_to": 7, "nodes": ["t3-pockets"]},
            },
        }
    )  # fmt: skip
    web = WebOutput(host="127.0.0.1", port=0, pins={"club": "4711"}, title="Club Night")
    for t, tc in cfg.table.items():
        web.venues.expect_nodes("club", t, tc.nodes)
    d = Daemon(cfg, outputs=[web], journal_path=str(tmp_path / "j.sqlite"), connect=False)
    web.referee, web.health = d.referee_input, d.health
    d.start()
    # the nodes' births, as the daemon passes them on; t1's rail node never came up
    for t, n in (("t1", "t1-pockets"), ("t2", "t2-pockets"), ("t3", "t3-pockets")):
        web.on_node("club", t, n, {"v": 1, "node": n, "boot": 1, "fw": "1"})
    # t2 (14.1 to 100): Dev pots the 4, then Cleo fouls three times in a row: -18, a long
    # score for the boards
    miss, foul = (
        {"type": "shot", "pocketed": []},
        {"type": "shot", "pocketed": [], "fouls": ["6.5"]},
    )
    for inp in [
        {"type": "lag", "winner": "Cleo"},
        miss,
        {"type": "call", "ball": 4, "pocket": "SR"},
        {"type": "shot", "pocketed": [{"ball": 4, "pocket": "SR"}]},
        *[{"type": "call", "ball": 5, "pocket": "SR"}, miss, foul] * 3,
    ]:
        assert d.referee_input("club", "t2", inp)["ok"], inp
    assert web.venues.snapshot("club", "t2")["scores"] == [-18, 1]
    yield d, web
    d.stop()


@pytest.fixture
def drv(tmp_path):
    drv = B.chrome(tmp_path / "chrome")
    yield drv
    drv.quit()


def play(d, inputs) -> dict:
    res = None
    for inp in inputs:
        res = d.referee_input("club", "t1", inp)
        assert res["ok"], (inp, res)
    return res["state"]


def balls(drv, css) -> list[int]:
    return drv.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map((b) => +b.dataset.ball)", css
    )


def check_table(drv, scene, st):
    B.wait_text(drv, "#name-a", "Ann")
    B.wait_until(lambda: B.text(drv, "#game").startswith("10-ball · race to 2"), 10, "game")
    if scene == "over":
        B.wait_text(drv, "#over-winner", "Bob wins the match")
        assert B.text(drv, "#over-detail").startswith("2 \u2013 0 against Ann · race to 2")
        assert "winner" in drv.find_element("id", "pb").get_attribute("class")
        assert not B.visible(drv, "#inhand") and not B.visible(drv, "#rack")
        return
    assert not B.visible(drv, "#over")
    up = "pa" if st["at_table"] == "Ann" else "pb"
    B.wait_until(lambda: "up" in drv.find_element("id", up).get_attribute("class"), 10, up)
    want_hand = {
        "kitchen": "Ball in hand — behind the head string",
        "anywhere": "Ball in hand — anywhere",
        None: "",
    }[st["ball_in_hand"]]
    B.wait_until(lambda: B.text(drv, "#inhand") == want_hand, 10, f"in hand {want_hand!r}")
    assert B.visible(drv, "#inhand") == bool(want_hand)
    ann_fouls = st["consecutive_fouls"]["Ann"]
    meta = B.text(drv, "#meta-a")
    if ann_fouls == 2:
        assert "2 FOULS — warning: a third loses the rack" in meta
        assert B.visible(drv, "#meta-a .warn")
    elif ann_fouls == 1:
        assert "1 foul" in meta and "warning" not in meta
    else:
        assert "foul" not in meta
    assert balls(drv, "#balls .ball.on") == st["balls_on_table"]
    assert B.text(drv, "#left") == str(len(st["balls_on_table"]))
    assert balls(drv, "#spot .ball") == st["to_spot"]
    assert B.visible(drv, "#spot-row") == bool(st["to_spot"])
    call = st["call"]
    if isinstance(call, dict):
        pocket = {"SR": "side right", "HL": "head left"}[call["pocket"]]
        want = f"Call {call['ball']} in {call['pocket']} ({pocket})"
        assert " ".join(B.text(drv, "#call").split()) == want
        assert balls(drv, "#call .ball") == [call["ball"]]
    else:
        assert not B.visible(drv, "#call")
    if st["awaiting"] == "shoot_or_pass":
        assert B.text(drv, "#awaiting") == f"{st['at_table']}: shoot or pass?"


def check_venue(drv, scene, st):
    card = "#table-t1"
    B.wait_until(lambda: B.text(drv, f"{card} .pa .n").endswith("Ann"), 10, "card")
    assert B.text(drv, "#table-t2 .pb .s") == "1"  # Dev's point on the other table
    chips = B.text(drv, f"{card} .chips")
    if scene == "over":
        assert chips == "Match over — Bob wins"
        assert B.text(drv, f"{card} .pb .s") == "2"
        return
    if st["ball_in_hand"] == "kitchen":
        assert "Ball in hand — behind the head string" in chips
    if st["consecutive_fouls"]["Ann"] == 2:
        assert "2 FOULS — warning" in B.text(drv, f"{card} .pa .f")
    if st["to_spot"]:
        assert "To spot" in chips and balls(drv, f"{card} .chips .ball") == st["to_spot"]
    assert balls(drv, f"{card} .mini .ball") == st["balls_on_table"]
    assert B.text(drv, f"{card} .sensors") == "sensors offline: t1-rails"


def check_overlay(drv, scene, st):
    B.wait_text(drv, "#name-a", "Ann")
    bg = drv.execute_script(
        "return [getComputedStyle(document.documentElement).backgroundColor,"
        " getComputedStyle(document.body).backgroundColor]"
    )
    assert bg == ["rgba(0, 0, 0, 0)"] * 2  # a browser source shows the video through it
    assert B.text(drv, "#race") == "RACE TO 2"
    if scene == "over":
        B.wait_text(drv, "#over", "Bob wins the match")
        assert B.text(drv, "#score-b") == "2"
        return
    if st["ball_in_hand"]:
        assert B.text(drv, "#inhand").startswith("BALL IN HAND")
    assert balls(drv, "#balls .ball") == st["balls_on_table"]
    if st["consecutive_fouls"]["Ann"] == 2:
        assert "warn" in drv.find_element("id", "fouls-a").get_attribute("class")


def check_term(st, scene):
    board = TermBoard({"t1": "10-ball"})
    board.on_state("t1", st, st.get("fen"), st.get("rulings"))
    text = board.render(100, color=False)
    if scene == "over":
        assert "MATCH OVER: Bob wins the match" in text
        return
    where = {"kitchen": "behind the head string", "anywhere": "anywhere"}.get(st["ball_in_hand"])
    if where:
        assert f"ball in hand: {where}" in text
    if st["consecutive_fouls"]["Ann"] == 2:
        assert "2 fouls WARNING" in text
    if st["to_spot"]:
        assert "spot " + " ".join(map(str, st["to_spot"])) in text
    if isinstance(st["call"], dict):
        assert f"call {st['call']['ball']} in {st['call']['pocket']}" in text


CHECKS = {"table": check_table, "venue": check_venue, "overlay": check_overlay}


def test_every_screen_at_phone_and_tv(venue, drv, tmp_path):
    d, web = venue
    out = Path(os.environ.get("RB_SCREENSHOTS") or tmp_path / "shots")
    scenes = [(name, inputs, want) for name, inputs, want in SCENES]
    scenes.append(("over", OVER_INPUTS, {"match_winner": "Bob"}))
    for scene, inputs, want in scenes:
        st = play(d, inputs)
        assert {k: st[k] for k in want} == want, scene  # the rules say what the boards show
        check_term(st, scene)
        for page, path in PAGES.items():
            for size_name, size in SIZES.items():
                B.viewport(drv, size)
                drv.get(web.url + path)
                CHECKS[page](drv, scene, st)
                assert B.overflow(drv) == [], (scene, page, size_name, B.overflow(drv))
                assert B.spill(drv, BOXES[page]) == [], (scene, page, size_name)
                assert B.clipped(drv, WHOLE[page]) == [], (scene, page, size_name)
                if page == "overlay":  # a stand-in for the video behind the browser source
                    drv.execute_cdp_cmd(
                        "Emulation.setDefaultBackgroundColorOverride",
                        {"color": {"r": 24, "g": 92, "b": 52, "a": 1}},
                    )
                scale = 0.5 if size_name == "tv" else 1.0  # 960x540 images of the TV
                B.screenshot(drv, out / f"{page}-{scene}-{size_name}.png", scale)
                if page == "overlay":
                    drv.execute_cdp_cmd("Emulation.setDefaultBackgroundColorOverride", {})


def test_page_is_stale_when_the_heartbeat_says_the_host_is_not_scoring(venue, drv):
    """The socket is fine but the daemon's worker hangs, or the host lost the broker (no
    sensor data reaches it): the server's `host` heartbeat says so and the pages believe it."""
    _d, web = venue
    health = {"worker_age_s": 0.1, "broker": True}
    web.health = lambda: dict(health)
    B.viewport(drv, B.PHONE)
    drv.get(web.url + "/v/club/t/t1/")
    B.wait_text(drv, "#name-a", "Ann")
    assert not B.visible(drv, "#stale")
    health["broker"] = False
    B.wait_contains(drv, "#stale", "the host has lost the broker", timeout=5)
    health["broker"] = True
    B.wait_until(lambda: not B.visible(drv, "#stale"), 5, "stale bar gone")
    health["worker_age_s"] = 4.0
    B.wait_contains(drv, "#stale", "the host is not responding", timeout=5)


READY = {"table": ("#name-a", "Ann"), "venue": ("#table-t1 .pa .n", "▶ Ann"),
         "overlay": ("#name-a", "Ann")}  # fmt: skip


def test_narrowest_and_widest_phones_fit(venue, drv):
    """360 and 430 px wide phones, with the busiest state (a call, a two-foul warning, a long
    name on the venue board): nothing wider than the screen, nothing out of its box."""
    d, web = venue
    for _name, inputs, _want in SCENES[:3]:
        play(d, inputs)
    pages = dict(PAGES, long_score="/v/club/t/t2/")  # 14.1 at -18
    for size in ((360, 740), (430, 932)):
        B.viewport(drv, size)
        for page, path in pages.items():
            drv.get(web.url + path)
            if page == "long_score":
                B.wait_text(drv, "#score-a", "-18")
                page = "table"
            else:
                B.wait_text(drv, *READY[page])
            assert B.overflow(drv) == [], (size, page, B.overflow(drv))
            assert B.spill(drv, BOXES[page]) == [], (size, page, B.spill(drv, BOXES[page]))
            assert B.clipped(drv, WHOLE[page]) == [], (size, page, B.clipped(drv, WHOLE[page]))


def test_a_long_name_is_shown_whole_on_the_table_page_and_the_overlay(venue, drv):
    """Issue 22, 10: names wrap, never cut. The longest name the rules take (64 characters)
    on the table page and the streaming overlay, at a TV and a phone: its whole text is laid
    out (nothing scrolled out of its box, no ellipsis), and the page stays within the screen."""
    d, web = venue
    long = "Evangeline Montgomery-Smith of the Riverside Eight-Ball League X"
    assert len(long) == 64
    match = {"type": "match", "game": "9-ball", "players": [long, "Finn"], "race_to": 7}
    assert d.referee_input("club", "t3", {"type": "concede", "player": "Finn"})["ok"]
    assert d.referee_input("club", "t3", match)["ok"]
    for size in ((1920, 1080), (390, 844)):
        B.viewport(drv, size)
        for path, box in (("/v/club/t/t3/", ".player"), ("/v/club/t/t3/overlay", ".bar .side")):
            drv.get(web.url + path)
            B.wait_text(drv, "#name-a", long)
            assert B.clipped(drv, "#name-a, #name-b") == [], (size, path)
            whole = drv.execute_script(
                "const e = document.getElementById('name-a');"
                "return e.scrollHeight <= e.clientHeight + 1"
                " && getComputedStyle(e).textOverflow !== 'ellipsis';"
            )
            assert whole, (size, path)
            assert B.overflow(drv) == [], (size, path, B.overflow(drv))
            assert B.spill(drv, box) == [], (size, path, B.spill(drv, box))


def test_the_overlay_shows_the_ball_in_play_until_the_shot_is_ruled(venue, drv):
    """Issue 22: the streaming overlay showed a pocketed ball only when the shot was ruled,
    a second after the TV. It shows the provisional in-play view as the table page does, at
    stream size, and the ruling takes it away."""
    _d, web = venue
    B.viewport(drv, (1920, 1080))
    drv.get(web.url + "/v/club/t/t1/overlay")
    B.wait_text(drv, "#name-a", "Ann")
    assert not B.text(drv, "#inplay")
    inplay = {"shot": 1, "start": 10, "pocketed": [{"pocket": "SR"}, {"pocket": "HL"}]}
    web.on_inplay("club", "t1", inplay)
    said = "return document.getElementById('inplay').textContent"  # innerText is upper-cased
    B.wait_until(lambda: "2 balls pocketed" in drv.execute_script(said), what="2 balls in play")
    assert "provisional" in drv.execute_script(said)
    assert len(drv.find_elements("css selector", "#inplay .ip-ball")) == 2
    assert B.overflow(drv) == [] and B.spill(drv, ".bar .side, .under") == []
    web.on_shot("club", "t1", {"n": 1, "start": 10, "pocketed": [], "rails": []})
    B.wait_until(lambda: not B.text(drv, "#inplay"), what="the in-play tag gone")
