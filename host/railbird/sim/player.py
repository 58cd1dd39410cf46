"""The game player: from a game state (the rules engine's output dict, protocol/REFEREE.md)
to the next thing that happens at the table.

A `Turn` is what the referee enters (`inputs`: lag, call, push-out, option, rerack, a new
match) and, when a ball is struck, the `plan` of the shot (railbird.sim.physics.ShotPlan).
Decisions depend only on the state and the player's own `random.Random(seed)`, so a game is
deterministic per seed.

The simulated world *is* the rules engine's state: the player never keeps ball positions of
its own. Sensors see pockets, not balls; like a real referee, the simulated referee enters
what they cannot see while the shot is in play (`physics.referee_facts`: the identity of the
balls that dropped, a wrong ball hit first, no rail after contact), so the player pots any
ball, not only the one the engine would presume.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from rbproto.codec import POCKETS

from .physics import ShotPlan

# Tendencies (probabilities); `Style.demo()` makes things happen sooner for a short demo.


@dataclass
class Style:
    skill: tuple = (0.72, 0.66)  # chance to pot a called ball, per player
    scratch: float = 0.05  # cue ball follows into a pocket
    extra_ball: float = 0.06  # another ball drops on a made shot (general 33)
    wrong_pocket: float = 0.04  # 10-ball: the called ball drops in another pocket
    safety: float = 0.08  # call safety instead of a ball
    push_out: float = 0.25  # 10-ball: push-out when allowed
    combo_ten: float = 0.08  # 10-ball: call the 10 on a combination / carom
    combo_ten_make: float = 0.45
    break_pots: tuple = (0.35, 0.40, 0.20, 0.05)  # 10-ball break: P(0, 1, 2, 3 balls down)
    break_scratch: float = 0.06
    weak_break: float = 0.06  # too few balls to a rail (10-ball 9.3.2 / 14.1 4.3.2)
    pass_option: float = 0.4  # pass the shot back when offered
    rebreak: float = 0.5  # 14.1 4.3: have the breaker break again
    rerack_cue_in: float = 0.08  # 14.1 4.8: cue ball in the rack area
    rerack_ball_in: float = 0.08  # 14.1 4.8: 15th ball in the rack area
    wrong_first: float = 0.03  # 10-ball: another ball hit before the lowest (9.10.2)
    no_rail: float = 0.03  # 14.1: no ball to a rail after contact (4.9.2)

    @classmethod
    def demo(cls) -> Style:
        return cls(
            skill=(0.82, 0.78),
            combo_ten=0.3,
            combo_ten_make=0.6,
            break_pots=(0.15, 0.45, 0.30, 0.10),
            weak_break=0.03,
            safety=0.05,
            wrong_first=0.06,
            no_rail=0.05,
        )


@dataclass
class Turn:
    inputs: list = field(default_factory=list)  # referee inputs, in order
    plan: ShotPlan | None = None  # the shot, if a ball is struck
    think_s: float = 0.8  # time before the shot (walk, aim, place)
    text: str = ""


class Player:
    """Plays both sides of one match (and the referee's part)."""

    def __init__(self, match: dict, seed: int = 1, style: Style | None = None):
        self.match = dict(match)
        self.game = match["game"]
        self.rng = random.Random(seed)
        self.style = style or Style()

    # -- the next turn -------------------------------------------------------------------
    def next_turn(self, st: dict) -> Turn:
        rng = self.rng
        names = st.get("players") or self.match.get("players")
        if st.get("match_winner"):
            m = dict(self.match)
            return Turn([m], None, 4.0, f"{st['match_winner']} won; new match")
        aw = st.get("awaiting")
        if aw == "lag":
            w = rng.choice(names)
            return Turn(
                [{"type": "lag", "winner": w, "breaker": w}], None, 1.5, f"{w} wins the lag"
            )
        if aw == "shoot_or_pass":
            c = "pass" if rng.random() < self.style.pass_option else "shoot"
            return Turn([{"type": "option", "choice": c}], None, 1.0, f"{st['at_table']}: {c}")
        if aw == "accept_or_rebreak":
            c = "rebreak" if rng.random() < self.style.rebreak else "accept"
            return Turn([{"type": "option", "choice": c}], None, 1.0, f"{st['at_table']}: {c}")
        if aw == "rerack":
            cue_in = rng.random() < self.style.rerack_cue_in
            ball_in = rng.random() < self.style.rerack_ball_in
            inp = {
                "type": "rerack",
                "cue_ball_in_rack_area": cue_in,
                "ball_in_rack_area": ball_in,
                "ball_behind_head_string": cue_in and rng.random() < 0.5,
            }
            return Turn([inp], None, 3.0, "re-rack of 14")
        if aw == "referee_check":
            # REFEREE.md §3b: a shot held for the referee's check; he saw it as sensed
            return Turn([{"type": "confirm"}], None, 1.0, "the referee checks the held shot")
        if aw:
            # An option this player does not know (8-ball...): the first choice offered.
            return Turn([{"type": "option", "choice": "accept"}], None, 1.0, aw)
        if self.game == "14.1":
            return self._straight(st)
        return self._rotation(st)

    # -- helpers -------------------------------------------------------------------------
    def _skill(self, st: dict) -> float:
        names = st.get("players") or []
        i = names.index(st["at_table"]) if st.get("at_table") in names else 0
        return self.style.skill[i % len(self.style.skill)]

    def _think(self, st: dict, base: float = 0.8) -> float:
        t = base + self.rng.uniform(0.0, 0.8)
        if st.get("ball_in_hand"):
            t += 0.6  # placing the cue ball
        if st.get("to_spot"):
            t += 0.5  # the referee spots balls
        return round(t, 2)

    def _pocket(self, avoid=()) -> str:
        choices = [p for p in POCKETS if p not in avoid]
        return self.rng.choice(choices)

    def _scratch(self, p: float) -> str | None:
        if self.rng.random() >= p:
            return None
        return self._pocket()

    def _called_shot(self, st: dict, call: dict, kind: str, pots: list, txt: str) -> Turn:
        """A called shot made ("pot") or missed ("miss"); the cue ball may follow."""
        scratch = self._scratch(self.style.scratch)
        if scratch:
            txt += ", scratch"
        rng = self.rng
        return Turn(
            [call],
            ShotPlan(kind, pots, scratch, rng.randint(1, 3), rng.uniform(0.3, 0.8), txt),
            self._think(st),
            txt,
        )

    # -- 10-ball (and 9-ball): rotation --------------------------------------------------------
    def _rotation(self, st: dict) -> Turn:
        rng, sty = self.rng, self.style
        table = sorted(set(st.get("balls_on_table", [])) | set(st.get("to_spot", [])))
        money = 10 if self.game == "10-ball" else 9
        who = st["at_table"]
        if st.get("breaking"):
            r = rng.random()
            k, acc = 0, 0.0
            for i, pr in enumerate(sty.break_pots):
                acc += pr
                if r < acc:
                    k = i
                    break
            else:
                k = len(sty.break_pots) - 1
            k = min(k, len(table))
            if k == 0 and rng.random() < sty.weak_break * 4:
                return Turn(
                    [],
                    ShotPlan(
                        "weak_break",
                        [],
                        None,
                        1,
                        0.4,
                        f"{who} breaks softly: too few balls reach a rail",
                    ),
                    self._think(st, 1.2),
                    "weak break",
                )
            pots = [(b, self._pocket()) for b in rng.sample(table, k)]  # the referee names them
            scratch = self._scratch(sty.break_scratch)
            txt = (
                f"{who} breaks"
                + (f", {len(pots)} down" if pots else "")
                + (", scratch" if scratch else "")
            )
            return Turn(
                [], ShotPlan("break", pots, scratch, 6, 1.0, txt), self._think(st, 1.2), txt
            )
        if st.get("push_out_allowed") and rng.random() < sty.push_out:
            return Turn(
                [{"type": "push_out"}],
                ShotPlan("push_out", [], None, rng.randint(1, 2), 0.3, f"{who} pushes out"),
                self._think(st),
                "push-out",
            )
        lowest = table[0]
        if (
            self.game == "10-ball"
            and money in table
            and lowest != money
            and rng.random() < sty.combo_ten
        ):
            pocket = self._pocket()
            call = {"type": "call", "ball": money, "pocket": pocket}
            if rng.random() < sty.combo_ten_make:
                scratch = self._scratch(sty.scratch / 2)
                return Turn(
                    [call],
                    ShotPlan(
                        "pot",
                        [(money, pocket)],
                        scratch,
                        rng.randint(1, 2),
                        0.6,
                        f"{who} plays the {lowest} into the 10, 10 in {pocket}",
                    ),
                    self._think(st),
                    "combo on the 10",
                )
            return Turn(
                [call],
                ShotPlan(
                    "miss",
                    [],
                    None,
                    rng.randint(2, 3),
                    0.6,
                    f"{who} tries the combo on the 10 and misses",
                ),
                self._think(st),
                "combo missed",
            )
        if rng.random() < sty.safety:
            return Turn(
                [{"type": "call", "safety": True}],
                ShotPlan("safety", [], None, rng.randint(1, 2), 0.25, f"{who} plays safe"),
                self._think(st),
                "safety",
            )
        pocket = self._pocket()
        call = {"type": "call", "ball": lowest, "pocket": pocket}
        others = [b for b in table if b != lowest]
        if others and rng.random() < sty.wrong_first:
            hit = rng.choice(others)
            plan = ShotPlan(
                "miss",
                [],
                None,
                rng.randint(1, 3),
                rng.uniform(0.3, 0.8),
                f"{who} hits the {hit} before the {lowest}",
                first_contact=hit,
            )
            return Turn([call], plan, self._think(st), "wrong ball first")
        made = rng.random() < self._skill(st)
        if made:
            if rng.random() < sty.wrong_pocket:
                other = self._pocket(avoid=(pocket,))
                return Turn(
                    [call],
                    ShotPlan(
                        "pot",
                        [(lowest, other)],
                        None,
                        rng.randint(1, 3),
                        0.5,
                        f"{who}: the {lowest} drops in {other}, not {pocket}",
                    ),
                    self._think(st),
                    "wrong pocket",
                )
            pots = [(lowest, pocket)]
            if others and rng.random() < sty.extra_ball:
                pots.append((rng.choice(others), self._pocket()))
            return self._called_shot(st, call, "pot", pots, f"{who}: {lowest} in {pocket}")
        return self._called_shot(st, call, "miss", [], f"{who} misses the {lowest}")

    # -- 14.1 continuous -----------------------------------------------------------------------
    def _straight(self, st: dict) -> Turn:
        rng, sty = self.rng, self.style
        table = sorted(set(st.get("balls_on_table", [])) | set(st.get("to_spot", [])))
        who = st["at_table"]
        if st.get("breaking"):
            if rng.random() < sty.weak_break:
                return Turn(
                    [],
                    ShotPlan(
                        "weak_break",
                        [],
                        None,
                        1,
                        0.3,
                        f"{who} breaks: only one ball reaches a rail",
                    ),
                    self._think(st, 1.2),
                    "breaking foul",
                )
            scratch = self._scratch(sty.break_scratch / 2)
            txt = f"{who} plays the opening safe break" + (", scratch" if scratch else "")
            return Turn(
                [], ShotPlan("safe_break", [], scratch, 3, 0.5, txt), self._think(st, 1.2), txt
            )
        if rng.random() < sty.safety:
            return Turn(
                [{"type": "call", "safety": True}],
                ShotPlan("safety", [], None, rng.randint(1, 2), 0.25, f"{who} plays safe"),
                self._think(st),
                "safety",
            )
        ball = rng.choice(table)
        pocket = self._pocket()
        call = {"type": "call", "ball": ball, "pocket": pocket}
        if rng.random() < sty.no_rail:
            plan = ShotPlan(
                "miss",
                [],
                None,
                1,
                0.2,
                f"{who} plays the {ball}: no ball reaches a rail after contact",
                rail_after_contact=False,
            )
            return Turn([call], plan, self._think(st), "no rail after contact")
        if rng.random() < self._skill(st):
            pots = [(ball, pocket)]
            rest = [b for b in table if b != ball]
            if len(rest) > 1 and rng.random() < sty.extra_ball:
                pots.append((rng.choice(rest), self._pocket(avoid=(pocket,))))
            return self._called_shot(st, call, "pot", pots, f"{who}: {ball} in {pocket}")
        return self._called_shot(st, call, "miss", [], f"{who} misses the {ball}")
