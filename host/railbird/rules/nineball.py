"""Nine-ball (WPA section 2, brief): like ten-ball without calls; any legally pocketed
ball continues the inning and a legally pocketed 9 wins, on the break too (2.5)."""

from __future__ import annotations

from .inputs import Shot
from .rotation import RotationGame
from .state import Ruling, State


class NineBall(RotationGame):
    name = "9-ball"
    code = "9"
    rack_size = 9
    money_ball = 9
    std_foul_prefix = "2.7"
    call_shot = False
    rule_lag = "2.1"
    rule_intro = "2.5"
    rule_break_req = "2.3"
    rule_push_out = "2.4"
    rule_continue = "2.5"
    rule_money_spot = "2.6"
    rule_std_penalty = "2.7"
    rule_serious = "2.8"
    rule_stalemate = "2.9"
    rule_option = "2.4"

    def resolve_break(self, pre: State, st: State, shot: Shot, R: list[Ruling]) -> State:
        if self.money_ball in shot.objects_pocketed:
            return self.end_rack(st, pre.shooter, R, "2.5", "9 pocketed on a legal break")
        return super().resolve_break(pre, st, shot, R)

    def resolve_play(self, pre: State, st: State, shot: Shot, R: list[Ruling]) -> State:
        shooter = pre.shooter
        pk = shot.objects_pocketed
        if self.money_ball in pk:
            return self.end_rack(st, shooter, R, "2.5", "9 legally pocketed")
        if pk:
            R.append(
                Ruling(
                    "2.5",
                    f"{', '.join(map(str, sorted(pk)))} pocketed: {st.players[shooter]} continues",
                )
            )
            return st
        return self.pass_turn(st, R, "2.5", "No ball pocketed")
