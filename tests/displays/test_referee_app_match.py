"""Two whole matches refereed from the phone app only: headless Chromium at 390x844, the
real daemon (`railbird run`), a private mosquitto and the simulated node firmware feeding
pocket and rail events. Nobody else enters anything: no simulator referee, no CLI.

10-ball, race to 2 (Ann v Bob): lag, break (the sensed ball corrected with "which ball"),
a push-out and the shoot-or-pass option, a ball in the wrong pocket and its option, a
scratch (ball in hand, its inferred cue ball confirmed with one tap), the called 10, a
declared foul by name, the two-foul warning, the match-over screen. Then a new match with
new players, 14.1 to 25 (Cy v Di): lag, the opening break, calls, the re-rack questions, a
scratch, a foul undone after its preview, the two-foul warning, a safety, the match-over
screen, and a third match with new players.

After each step the test checks the score, who is at the table, ball in hand and the
ruling with its rule number, in the host's state and on the phone, and that no element is
wider than the screen. It saves each screen; RB_SCREENSHOTS=docs/images saves them where
docs/displays.md shows them."""

from __future__ import annotations

import json
import os
import random
import urllib.request
from pathlib import Path

import pytest

from harness import browser as B
from harness.hostproc import RailbirdRun
from railbird.sim import physics
from railbird.sim.physics import ShotPlan
from rbnode.simnode import SimNode
from tests.displays.refapp import assert_phone_layout, phone_browser, tap, text, wait_for

pytestmark = [pytest.mark.broker, pytest.mark.browser, pytest.mark.slow]

NODE, NODE_PW, PIN = "t1-node", "node-pw", "246813"
CONFIG = """
venue = "club"
subscribe = ["t1"]
reorder_window_ms = 150
stats_period_s = 0
referee_token = "{pin}"
[broker]
host = "127.0.0.1"
port = {port}
user = "railbird-host"
password = "host-secret"
[shots]
quiet_ms = 700
[tables.t1]
game = "10-ball"
players = ["Ann", "Bob"]
race_to = 2
nodes = ["{node}"]
[outputs.feeds]
enabled = false
[outputs.web]
host = "127.0.0.1"
port = 0
"""
MAX_GAP_US = 450_000  # edges of one shot closer than the host's quiet period (700 ms)


class Table:
    """The simulated table: each shot plan becomes sensor edges on the node firmware, and
    the host has ruled it once its shot count moves and nothing is pending."""

    def __init__(self, sn: SimNode, host: RailbirdRun):
        self.sn, self.host = sn, host
        self.rng = random.Random(12)
        self.shots = 0

    def shot(self, kind, pots=(), scratch=None):
        plan = ShotPlan(kind, pots=list(pots), scratch=scratch, power=0.8)
        base = self.sn.now_us + 300_000
        for e in physics.edges(plan, self.rng, max_gap_us=MAX_GAP_US):
            at = base + e.t_us
            if e.kind == "rail":
                self.sn.rail(e.where, e.value, at_us=at)
            elif e.kind == "drop":
                self.sn.drop(e.where, dur_us=e.value, at_us=at)
            else:
                self.sn.cue(dur_us=e.value, at_us=at)
        self.shots += 1
        n = self.shots
        self.host.wait(lambda s: s["shots"] >= n and s["pending"] == 0, f"shot {n} ruled", 30)


class Phone:
    """The referee app on the phone, and the host's view of the table to check it by."""

    def __init__(self, drv, url: str, out: Path):
        self.drv, self.url, self.out = drv, url, out
        self.screens = 0

    def api(self) -> dict:
        with urllib.request.urlopen(self.url + "/api/v/club/t1", timeout=5) as r:
            return json.loads(r.read())

    def state(self) -> dict:
        return self.api()["state"]

    def tap(self, css):
        tap(self.drv, css)

    def shows(self, css, want, timeout=60):
        seen = [""]

        def has(d):
            seen[0] = text(d, css)
            return want in seen[0]

        try:
            wait_for(self.drv, has, f"{css} to show {want!r}", timeout)
        except AssertionError as e:
            raise AssertionError(f"{e}; it showed {seen[0]!r}") from None

    def check(self, *, scores, at_table, bih=None, ruling=None, fouls=None, timeout=60):
        """The host's state and the phone agree on the score, who is at the table, ball in
        hand and the latest ruling (text and rule number); nothing is wider than the screen.
        `timeout` is a deadline for a starved machine, not an expected time: each wait ends
        as soon as its condition holds."""
        names = self.state()["players"]
        seen = {}

        def host_agrees(_):
            st = seen["state"] = self.state()
            want = {names[0]: scores[0], names[1]: scores[1]}
            ok = st["scores"] == want and st["at_table"] == at_table
            ok = ok and st["ball_in_hand"] == bih
            if fouls is not None:
                ok = ok and st["consecutive_fouls"] == dict(zip(names, fouls, strict=True))
            return ok

        try:
            wait_for(self.drv, host_agrees, f"host state {scores} {at_table} {bih}", timeout)
        except AssertionError as e:
            last = seen.get("state") or {}
            got = {k: last.get(k) for k in ("scores", "at_table", "ball_in_hand", "rulings")}
            raise AssertionError(f"{e}; the host's last state: {got}") from None
        d = self.drv
        for i in (0, 1):
            self.shows(f"#score-{i}", str(scores[i]), timeout)
            up = "1" if names[i] == at_table else "0"
            wait_for(
                d,
                lambda d, i=i, up=up: d.find_element("id", f"p{i}").get_attribute("data-up") == up,
                f"player {i} at the table: {up}",
                timeout,
            )
        if bih is None:
            wait_for(d, lambda d: not d.find_elements("id", "bih"), "no ball in hand", timeout)
        else:
            where = "anywhere" if bih == "anywhere" else "behind the head string"
            self.shows("#bih", "ball in hand " + where, timeout)
        if ruling is not None:
            self.shows("#rulings", ruling, timeout)
        bad = B.overflow(d)
        assert not bad, f"wider than the phone's screen: {bad[:8]}"
        if fouls is not None:
            for i, f in enumerate(fouls):
                if f >= 2:
                    self.shows(f"#meta-{i}", f"{f} fouls: warning", timeout)
                elif f == 1:
                    self.shows(f"#meta-{i}", "1 foul", timeout)

    def screen(self, name: str, focus: str | None = None):
        assert_phone_layout(self.drv, name)
        self.drv.execute_script(
            "const el = arguments[0] && document.querySelector(arguments[0]);"
            "if (el) el.scrollIntoView({block: 'center'}); else window.scrollTo(0, 0);",
            focus,
        )
        B.screenshot(self.drv, self.out / f"referee-{name}.png")
        self.screens += 1

    def call(self, ball, pocket, who):
        self.tap(f'#calls button.ball[data-ball="{ball}"]')
        self.tap(f'button.pocket[data-pocket="{pocket}"]')
        self.shows("#rulings", f"{who} calls the {ball} in {pocket}")
        assert self.state()["call"] == {"ball": ball, "pocket": pocket}

    def foul_now(self, code, rule, screen=None):
        self.tap("#btn-foul")
        self.shows("#foul-list", rule)
        if screen:
            self.screen(screen)
        self.tap(f'#foul-list button[data-code="{code}"]')


@pytest.fixture
def phone(tmp_path):
    drv = phone_browser(tmp_path / "chrome")
    yield drv
    drv.quit()


def test_two_matches_refereed_from_the_phone_app_only(broker, phone, tmp_path):
    broker.add_user(NODE, NODE_PW)
    host = RailbirdRun(tmp_path / "host", CONFIG.format(port=broker.port, pin=PIN, node=NODE))
    url = host.start_with_web()
    sn = SimNode("127.0.0.1", broker.port, "club", "t1", NODE, NODE_PW, tmp_path / "node", seed=5)
    sn.start()
    try:
        sn.wait_connected()
        host.wait(lambda s: s.get("sync_samples", 0) >= 3, "clock sync with the node")
        out = Path(os.environ.get("RB_SCREENSHOTS") or tmp_path / "shots")
        _play(Table(sn, host), Phone(phone, url, out), url)
    finally:
        sn.stop()
        host.stop()


def _play(table: Table, app: Phone, url: str):
    drv = app.drv
    drv.get(url + "/v/club/t/t1/referee")
    app.shows("#signin", "Sign in")
    app.screen("signin")
    for digit in PIN:
        app.tap(f'button[data-key="{digit}"]')
    app.tap("#pin-ok")

    # ---- 10-ball, race to 2 ----------------------------------------------------------------
    app.shows("#lag h2", "Lag for the break: who won?")
    assert app.state()["awaiting"] == "lag"
    app.screen("lag")
    app.tap('button[data-act="lag-winner"][data-player="Ann"]')
    app.tap('button[data-act="lag"][data-breaker="Ann"]')
    app.check(
        scores=(0, 0),
        at_table="Ann",
        bih="kitchen",
        ruling="Ann wins the lag and chooses Ann to break (9.1)",
    )
    app.shows("#calls", "No call on the break")

    # the break: a ball drops in SR; the sensors cannot tell which, the rules presume the 1
    table.shot("break", pots=[(4, "SR")])
    app.check(scores=(0, 0), at_table="Ann", ruling="Legal break, 1 pocketed: Ann continues (9)")
    # the ball is presumed, and shown so, with one tap to confirm it (REFEREE.md §3c)
    app.shows("#last-shot", "the 1 in SR (side right) presumed")
    app.shows("#btn-confirm", "Confirm: the 1 in SR, the 1 hit first")
    # a ball down makes the break legal whatever reached a rail: the count decides nothing,
    # so nothing is left to confirm (protocol/REFEREE.md §3b)
    assert not drv.find_elements("id", "uncertain") and not app.state()["unconfirmed"]
    app.screen("last-shot", "#last-shot")
    # the referee saw the 4 go in: one tap on the ball, one on the number
    app.tap('#last-shot button[data-act="fix-ball"]')
    app.shows("#sheet h2", "Which ball went in SR")
    app.screen("which-ball")
    app.tap('#ball-pick button[data-ball="4"]')
    app.check(scores=(0, 0), at_table="Ann", ruling="Legal break, 4 pocketed: Ann continues (9)")
    app.shows("#rulings", "The referee corrects the last shot (pocketed); it is ruled again (1.10)")
    st = app.state()
    assert 4 not in st["balls_on_table"] and 1 in st["balls_on_table"]

    # a push-out (9.4), allowed only now, then Bob's option
    app.tap("#btn-push")
    app.check(scores=(0, 0), at_table="Ann", ruling="Ann plays a push-out (9.4)")
    table.shot("push_out")
    app.check(scores=(0, 0), at_table="Bob", ruling="Bob may shoot or pass the shot back (9.4)")
    app.shows("#option h2", "Bob: shoot, or pass the shot back?")
    assert not drv.find_elements("id", "calls")  # only the decision is offered
    app.screen("option")
    app.tap('button[data-act="option"][data-choice="pass"]')
    app.check(scores=(0, 0), at_table="Ann", ruling="Bob passes the shot back (9.4)")

    # Ann calls the 1 in FR; a ball drops in SL: wrong pocket, Bob's option (9.7)
    app.tap('#calls button.ball[data-ball="1"]')
    app.shows("#calls h2", "Ann calls the 1: which pocket?")
    app.screen("call", "#calls")
    app.tap('button.pocket[data-pocket="FR"]')
    app.check(scores=(0, 0), at_table="Ann", ruling="Ann calls the 1 in FR (9.5)")
    table.shot("pot", pots=[(1, "SL")])
    app.check(
        scores=(0, 0),
        at_table="Bob",
        ruling="Wrongly pocketed ball(s), called ball missed; no foul: Bob to shoot (9.7)",
    )
    app.tap('button[data-act="option"][data-choice="shoot"]')
    app.check(scores=(0, 0), at_table="Bob", ruling="Bob chooses to shoot (9.7)")

    # Bob scratches: foul 9.10.1, Ann has ball in hand anywhere; the cue ball was inferred
    # from the ball-return detector, so the app asks for one tap to confirm it
    app.call(2, "HL", "Bob")
    table.shot("miss", scratch="HL")
    app.check(
        scores=(0, 0),
        at_table="Ann",
        bih="anywhere",
        fouls=(0, 1),
        ruling="Foul by Bob: cue ball scratch or off the table (6.1) (9.10.1)",
    )
    app.shows("#last-shot", "the cue ball in HL")
    app.shows("#uncertain", "which balls dropped")
    app.shows("#btn-confirm", "Confirm: the cue ball in HL")
    app.tap("#btn-confirm")
    app.check(
        scores=(0, 0),
        at_table="Ann",
        bih="anywhere",
        ruling="The referee confirms the last shot (pocketed) as ruled (1.10)",
    )
    assert app.state()["unconfirmed"] == []

    # Ann calls the 10 and makes it: rack 1
    app.call(10, "FL", "Ann")
    table.shot("pot", pots=[(10, "FL")])
    app.check(
        scores=(1, 0),
        at_table="Bob",
        bih="kitchen",
        ruling="Ann wins rack 1: called 10 pocketed in FL (9.8)",
    )
    app.shows("#rulings", "Bob breaks rack 2 (alternate break) (general 35)")

    # rack 2: Bob breaks, then gathers two fouls and is warned (6.14)
    table.shot("break")
    app.check(scores=(1, 0), at_table="Ann", ruling="Legal break, nothing pocketed: Ann to shoot")
    table.shot("miss")
    app.check(scores=(1, 0), at_table="Bob", ruling="No ball pocketed: Bob to shoot (9.8)")
    app.foul_now("6.6", "9.10.6", screen="fouls")
    app.check(
        scores=(1, 0),
        at_table="Ann",
        bih="anywhere",
        fouls=(0, 1),
        ruling="Foul by Bob: touched ball (6.6) (9.10.6)",
    )
    table.shot("miss")
    app.check(scores=(1, 0), at_table="Bob", fouls=(0, 1))
    table.shot("miss", scratch="SR")
    app.check(
        scores=(1, 0),
        at_table="Ann",
        bih="anywhere",
        fouls=(0, 2),
        ruling="Foul by Bob: cue ball scratch or off the table (6.1) (9.10.1)",
    )
    table.shot("miss")
    app.check(
        scores=(1, 0),
        at_table="Bob",
        fouls=(0, 2),
        ruling="Warning: Bob is on two fouls; a third consecutive foul loses the rack (6.14)",
    )
    app.screen("warning")
    table.shot("miss")  # a legal shot: the count starts again
    app.check(scores=(1, 0), at_table="Ann", fouls=(0, 0))
    app.call(10, "SL", "Ann")
    table.shot("pot", pots=[(10, "SL")])
    app.check(scores=(2, 0), at_table=None, ruling="Ann wins the match 2-0 (match)")
    app.shows("#winner", "Ann wins")
    app.shows("#result", "Ann 2 · Bob 0")
    assert app.state()["match_winner"] == "Ann"
    app.screen("match-over")

    # ---- a new match with new players: 14.1 to 25 -------------------------------------------
    app.tap("#btn-new")
    app.shows("#sheet h2", "New match")
    app.tap('button[data-act="m-game"][data-game="14.1"]')
    app.shows("#m-known", "Ann")  # the venue's known players have loaded
    stepper_top = "return document.getElementById('m-goal').getBoundingClientRect().top"
    top = drv.execute_script(stepper_top)
    for name, el in (("Cy", "m-p1"), ("Di", "m-p2")):
        field = drv.find_element("id", el)
        field.clear()
        field.send_keys(name)
    # the name search answers 120 ms after the last key, above the stepper; its place is kept
    # while empty, so the answer moves nothing under the referee's thumb
    app.shows("#m-found", "Di")
    assert drv.execute_script(stepper_top) == top, "the name search's answer moved the stepper"
    for goal in ("75", "50", "25"):  # from 100
        app.tap('button[data-act="m-step"][data-d="-1"]')
        app.shows("#m-goal", goal)
    app.screen("new-match")
    app.tap("#btn-start")
    app.shows("#lag h2", "Lag for the break: who won?")
    st = app.state()
    assert (st["game"], st["players"], st["scores"]) == ("14.1", ["Cy", "Di"], {"Cy": 0, "Di": 0})
    assert "goal=25" in app.api()["fen"]
    app.tap('button[data-act="lag-winner"][data-player="Cy"]')
    app.tap('button[data-act="lag"][data-breaker="Di"]')
    app.check(
        scores=(0, 0),
        at_table="Di",
        bih="kitchen",
        ruling="Cy wins the lag and chooses Di to break (4.1)",
    )

    # the opening break: two balls and the cue ball to a rail, nothing called. A referee is
    # at the table (the match was started from this app) and no sensor tells whether the cue
    # ball reached a rail (4.3.2): the break waits for his one tap (REFEREE.md §3b)
    table.shot("safe_break")
    app.shows("#check", "the sensors cannot decide")
    app.screen("check", "#check")
    (legal,) = [b for b in drv.find_elements("css selector", "#check button") if "Legal" in b.text]
    legal.click()
    app.check(
        scores=(0, 0),
        at_table="Cy",
        ruling="Inning over (no call and no obvious shot): Cy to shoot (4.4)",
    )

    # Cy runs 14 balls: each shot a called ball and more (general 33)
    score = 0
    for n in (4, 4, 4, 2):
        low = min(app.state()["balls_on_table"])
        app.call(low, "FL", "Cy")
        pockets = ["FL", "SL", "HR", "FR"][:n]
        table.shot("pot", pots=[(low + i, p) for i, p in enumerate(pockets)])
        score += n
        app.check(
            scores=(score, 0),
            at_table="Cy",
            ruling=f"The {low} in FL as called: Cy scores {n} ({score}, run {score}) (4.7)",
        )
    # 14 down: the re-rack questions, and nothing else, until they are answered (4.8)
    app.shows("#rerack h2", "Re-rack")
    assert not drv.find_elements("id", "calls")
    app.shows("#rulings", "14 balls of the rack are down")
    app.tap('#rerack button[data-key="ball_in_rack_area"][data-val="1"]')
    app.screen("rerack", "#rerack")
    app.tap("#btn-rerack")
    app.check(
        scores=(14, 0),
        at_table="Cy",
        ruling="The 15 lies in the rack area: placed on the head spot",
    )
    app.shows("#rulings", "(4.8.3)")
    assert app.state()["rack"] == 2 and len(app.state()["balls_on_table"]) == 15

    app.call(1, "FL", "Cy")
    table.shot("miss")
    app.check(
        scores=(14, 0),
        at_table="Di",
        ruling="Inning over (no called ball pocketed): Di to shoot (4.4)",
    )
    table.shot("miss", scratch="FR")  # Di scratches: -1, Cy in hand behind the head string
    app.check(
        scores=(14, -1),
        at_table="Cy",
        bih="kitchen",
        fouls=(0, 1),
        ruling="Di loses 1 point (standard foul); score -1 (4.9)",
    )
    app.tap("#btn-confirm")
    app.check(
        scores=(14, -1),
        at_table="Cy",
        bih="kitchen",
        ruling="The referee confirms the last shot (pocketed) as ruled (1.10)",
    )

    # a foul declared on Cy by mistake: undo shows it, asks once, and withdraws it
    app.foul_now("6.6", "4.9.5")
    app.check(
        scores=(13, -1),
        at_table="Di",
        fouls=(1, 1),
        ruling="Foul by Cy: touched ball (6.6) (4.9.5)",
    )
    app.tap("#btn-undo")
    app.shows("#undo-what", "Foul by Cy: touched ball (6.6) (4.9.5)")
    app.shows("#undo-what", "Cy loses 1 point (standard foul); score 13 (4.9)")
    assert app.state()["scores"] == {"Cy": 13, "Di": -1}  # asking undid nothing
    app.screen("undo")
    app.tap("#btn-undo-yes")
    app.check(
        scores=(14, -1),
        at_table="Cy",
        bih="kitchen",
        fouls=(0, 1),
        ruling="Undo: the last input is withdrawn and the position and scores restored (1.8)",
    )

    app.call(1, "FL", "Cy")
    table.shot("miss")
    app.check(scores=(14, -1), at_table="Di", fouls=(0, 1))
    app.foul_now("6.6", "4.9.5")  # Di's second foul in a row
    app.check(
        scores=(14, -2),
        at_table="Cy",
        fouls=(0, 2),
        ruling="Foul by Di: touched ball (6.6) (4.9.5)",
    )
    app.call(1, "FL", "Cy")
    table.shot("miss")
    app.check(scores=(14, -2), at_table="Di", fouls=(0, 2), ruling="Warning: Di is on two fouls")
    app.shows("#rulings", "(6.14)")
    app.tap("#btn-safety")
    app.check(scores=(14, -2), at_table="Di", fouls=(0, 2), ruling="Di calls safety (4.5)")
    table.shot("safety")
    app.check(
        scores=(14, -2), at_table="Cy", fouls=(0, 0), ruling="Safety played: Cy to shoot (4.5)"
    )

    score, run = 14, 0
    for n in (4, 4, 3):
        low = min(app.state()["balls_on_table"])
        app.call(low, "FL", "Cy")
        pockets = ["FL", "SL", "HR", "FR"][:n]
        table.shot("pot", pots=[(low + i, p) for i, p in enumerate(pockets)])
        score, run = score + n, run + n
        at = None if score >= 25 else "Cy"
        app.check(
            scores=(score, -2),
            at_table=at,
            ruling=f"The {low} in FL as called: Cy scores {n} ({score}, run {run}) (4.7)",
        )
    app.shows("#rulings", "Cy reaches 25 and wins the match (4.4)")
    app.shows("#winner", "Cy wins")
    app.shows("#result", "Cy 25 · Di \u22122")  # a minus sign, never "25 - -2"
    app.shows("#over", "high run: Cy 14 · Di 0")
    assert app.state()["match_winner"] == "Cy"
    app.screen("match-over-14-1")

    # ---- and the next match, with new players again -----------------------------------------
    app.tap("#btn-new")
    app.tap('button[data-act="m-game"][data-game="10-ball"]')
    # the players of this venue's history are one tap away, the latest first
    app.shows("#m-known", "Cy")
    app.shows("#m-known", "Ann")
    app.tap('#m-known button[data-name="Cy"]')
    assert drv.find_element("id", "m-p1").get_attribute("value") == "Cy"
    for name, el in (("Eve", "m-p1"), ("Flo", "m-p2")):
        field = drv.find_element("id", el)
        field.clear()
        field.send_keys(name)
    # the rules edition is chosen on the form, with what it changes (REFEREE.md §5)
    edition = '#m-options input[data-opt="wpa2016_ten_last_ball"]'
    app.shows("#m-options", "Later WPA edition: WPA 2016+ 9.8")
    app.screen("new-match-options", "#m-options")
    app.tap(edition)
    app.tap("#btn-start")
    app.shows("#lag h2", "Lag for the break: who won?")
    st = app.state()
    assert (st["game"], st["players"], st["match_winner"]) == ("10-ball", ["Eve", "Flo"], None)
    assert " opt=RL " in " " + app.api()["fen"] + " "  # the referee flag and the edition
    # Flo concedes (asked once), and the rematch keeps the rules as they were
    app.tap('button[data-act="lag-winner"][data-player="Eve"]')
    app.tap('button[data-act="lag"][data-breaker="Eve"]')
    app.tap("#btn-more")
    app.tap('button[data-act="ask-concede"][data-player="Flo"]')
    app.shows("#sheet h2", "Flo concedes?")
    assert app.state()["match_winner"] is None
    app.tap("#btn-ask-yes")
    app.shows("#winner", "Flo conceded: Eve wins")
    app.tap("#btn-rematch")
    app.shows("#sheet h2", "Rematch: Eve v Flo?")
    app.tap("#btn-ask-yes")
    app.shows("#lag h2", "Lag for the break: who won?")
    assert " opt=RL " in " " + app.api()["fen"] + " "
    app.shows("#p0 .name", "Eve")
    assert app.screens >= 12
