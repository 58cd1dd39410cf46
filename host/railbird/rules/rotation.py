"""Rotation games (ten-ball, nine-ball): the cue ball must first hit the lowest-numbered
ball (6.2); a push-out after a foul-free break; standard fouls give ball in hand
anywhere; three consecutive fouls lose the rack; only the money ball is ever spotted."""

from __future__ import annotations

from .fouls import STANDARD, Foul
from .frozen import replace
from .general import GeneralRules, balls_text
from .inputs import Shot
from .state import Ruling, State, foul_ruling


class RotationGame(GeneralRules):
    push_out_game = True
    money_ball = 10
    # The standard fouls (in the order the game's section lists them) and the rule
    # numbers: ten-ball's by default, nine-ball overrides the numbers.
    std_fouls = (
        "6.1",
        "6.2",
        "6.3",
        "6.4",
        "6.5",
        "6.6",
        "6.7",
        "6.8",
        "6.9",
        "6.10",
        "6.12",
        "6.13",
        "6.15",
    )
    rule_intro = "9"
    rule_break_req = "9.3.2"
    rule_push_out = "9.4"
    rule_continue = "9.8"
    rule_money_spot = "9.9"
    rule_std_penalty = "9.10"
    rule_serious = "9.11"
    rule_stalemate = "9.12"
    rule_option = "9.7"

    def legal_first_balls(self, st: State) -> set[int]:
        return {min(st.on_table)}  # 6.2: the lowest-numbered ball on the table

    def apply_defaults(self, st: State, shot: Shot, R: list[Ruling]) -> Shot:
        # Nobody reported the first ball hit: presumed fair, i.e. the lowest ball.
        if not shot.contact_reported and not st.push_out:
            shot = replace(shot, first_contact=min(st.on_table))
        return shot

    def presumed_first_text(self, st: State, shot: Shot) -> str:
        return f"the {min(st.on_table)}"

    def break_foul(self, st: State, shot: Shot) -> Foul | None:
        """9.3.2 / 2.3: nothing pocketed -> at least four object balls to a rail. Balls
        driven off the table count as driven to a rail (8.4). Unreported: presumed met."""
        if shot.objects_pocketed or shot.object_balls_to_rail is None:
            return None
        n = shot.object_balls_to_rail + sum(1 for b in shot.off_table if b)
        if self.cue_counts_on_break(st) and shot.cue_ball_to_rail:
            n += 1
        if n >= 4:
            return None
        return Foul(
            self.rule_break_req, f"illegal break: {n} ball(s) to a rail, four needed", STANDARD
        )

    def cue_counts_on_break(self, st: State) -> bool:
        return False

    def money_down(self, shot: Shot) -> bool:
        return self.money_ball in shot.objects_pocketed or self.money_ball in shot.off_table

    def spot_money(self, st: State, R: list[Ruling], why: str, rule: str | None = None) -> State:
        return self.spot(st, [self.money_ball], R, rule or self.rule_money_spot, why)

    def resolve(
        self,
        pre: State,
        st: State,
        shot: Shot,
        foul: Foul | None,
        fouls: list[Foul],
        R: list[Ruling],
    ) -> State:
        shooter = pre.shooter
        st = self.remove_shot_balls(st, shot)
        if foul:
            R.append(foul_ruling(foul.rule, st.players[shooter], foul.name))
            if self.money_down(shot):
                st = self.spot_money(st, R, "pocketed on a foul or off the table")
            st, serious = self.standard_foul(st, shooter, foul, R)
            if st.over:
                return st
            if serious:
                why = (
                    "unsportsmanlike conduct"
                    if foul.unsportsmanlike
                    else "three consecutive fouls (6.14)"
                )
                return self.end_rack(
                    st,
                    1 - shooter,
                    R,
                    self.rule_serious,
                    f"{st.players[shooter]} loses the rack for {why}",
                )
            st = self.pass_turn(st, R)
            R.append(
                Ruling(
                    self.rule_std_penalty,
                    f"{st.players[st.shooter]} has cue ball in hand anywhere on the table",
                )
            )
            return replace(st, ball_in_hand="anywhere")
        st = self.legal_shot(st, shooter)
        if pre.breaking:
            return self.resolve_break(pre, st, shot, R)
        if pre.push_out:
            if self.money_down(shot):
                st = self.spot_money(
                    st, R, "pocketed on a push-out, no penalty", self.rule_push_out
                )
            st = self.pass_turn(st, R, self.rule_push_out, "Push-out played")
            R.append(
                Ruling(
                    self.rule_push_out, f"{st.players[st.shooter]} may shoot or pass the shot back"
                )
            )
            return replace(st, awaiting="shoot_or_pass", option_rule=self.rule_push_out)
        return self.resolve_play(pre, st, shot, R)

    def resolve_break(self, pre: State, st: State, shot: Shot, R: list[Ruling]) -> State:
        shooter = pre.shooter
        if self.money_down(shot):
            st = self.spot_money(st, R, "pocketed on the break", self.rule_intro)
        if shot.objects_pocketed:
            R.append(
                Ruling(
                    self.rule_intro,
                    f"Legal break, {balls_text(sorted(shot.objects_pocketed))}"
                    f" pocketed: {st.players[shooter]} continues",
                )
            )
        else:
            st = self.pass_turn(st, R, "general 36", "Legal break, nothing pocketed")
        R.append(Ruling(self.rule_push_out, f"{st.players[st.shooter]} may play a push-out"))
        return replace(st, push_out_allowed=True)

    def resolve_play(self, pre: State, st: State, shot: Shot, R: list[Ruling]) -> State:
        raise NotImplementedError

    def offer_option(self, st: State, R: list[Ruling], rule: str, why: str) -> State:
        st = self.pass_turn(st, R, rule, why)
        R.append(Ruling(rule, f"{st.players[st.shooter]} may shoot or pass the shot back"))
        return replace(st, awaiting="shoot_or_pass", option_rule=rule)
