"""Ten-ball, seed section 9 (WPA ten-ball effective 1 Jan 2009): a call-shot rotation
game. Overrides of the rotation rules: calls, safety (9.6), wrongly pocketed balls
(9.7), the called 10 wins (9.8), the 10 spotted in every other case (9.9)."""

from __future__ import annotations

from .errors import OutOfTurn
from .inputs import Shot
from .rotation import RotationGame
from .state import Ruling, State


class TenBall(RotationGame):
    name = "10-ball"
    code = "10"
    rack_size = 10
    money_ball = 10
    std_foul_prefix = "9.10"
    rule_lag = "9.1"
    rule_call = "9.5"
    rule_safety = "9.6"
    rule_no_call_on_break = "9"
    call_shot = True
    call_on_break = False  # 9 (TN): on the break no ball may be called

    def cue_counts_on_break(self, st: State) -> bool:
        return st.opt_flag("thai_9_3_count_cue_ball")

    def check_safety_allowed(self, st: State) -> None:
        super().check_safety_allowed(st)
        if st.opt("wpa2025_no_safety_call"):
            raise OutOfTurn("no safety call in ten-ball (WPA 2025 option)")

    def obvious_call(self, pre: State, shot: Shot, R: list[Ruling]) -> tuple[int, str] | None:
        """9.5 / 1.6: no call is needed when the shot is obvious. Without a call the shot
        is taken to be at the ball the cue ball hit first, into the pocket it went in."""
        target = shot.first_contact
        pocket = shot.pocket_of(target) if target else None
        if target is None or pocket is None:  # pocket_of only runs for a target
            return None
        R.append(Ruling("9.5", f"No call: obvious shot presumed, the {target} in {pocket} (1.6)"))
        return target, pocket

    def resolve_play(self, pre: State, st: State, shot: Shot, R: list[Ruling]) -> State:
        shooter = pre.shooter
        pk = shot.objects_pocketed
        if pre.safety:
            if self.money_down(shot):
                st = self.spot_money(st, R, "pocketed on a safety, not called")
            if pk:
                return self.offer_option(st, R, "9.6", "Safety with a ball pocketed")
            return self.pass_turn(st, R, "9.6", "Safety played")
        call = pre.call or self.obvious_call(pre, shot, R)
        if call and shot.pocket_of(call[0]) == call[1]:
            ball, pocket = call
            if ball == self.money_ball:
                if st.opt("wpa2016_ten_last_ball") and len(pre.on_table) > 1:
                    st = self.spot_money(
                        st,
                        R,
                        "called 10 pocketed before it was the last ball (WPA 2016 9.8)",
                        "9.8",
                    )
                    R.append(Ruling("9.8", f"{st.players[shooter]} continues"))
                    return st
                return self.end_rack(st, shooter, R, "9.8", f"called 10 pocketed in {pocket}")
            if self.money_down(shot):
                st = self.spot_money(st, R, "pocketed without being called")
            extra = sorted(pk - {ball, self.money_ball})
            if extra:
                R.append(
                    Ruling(
                        "general 33",
                        f"Also pocketed on the legal shot: "
                        f"{', '.join(map(str, extra))} (stay down, 9.8)",
                    )
                )
            R.append(
                Ruling("9.8", f"The {ball} in {pocket} as called: {st.players[shooter]} continues")
            )
            return st
        if pk:
            if self.money_down(shot):
                st = self.spot_money(st, R, "pocketed in the wrong pocket or not called")
            what = "called ball missed" if pre.call else "no obvious shot and no call"
            return self.offer_option(st, R, "9.7", f"Wrongly pocketed ball(s), {what}; no foul")
        return self.pass_turn(st, R, "9.8", "No ball pocketed")
