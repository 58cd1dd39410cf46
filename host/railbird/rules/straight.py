"""14.1 continuous, seed section 4: points per legally pocketed called ball plus every
other ball on that shot (4.7), spotting (4.6), breaking fouls -2 with the opponent's
accept/re-break option (4.3, 4.10), fouls -1 with the cue ball where it lies (4.9),
the third consecutive foul -15 more and a re-break (4.11), re-racks (4.4, 4.8)."""

from __future__ import annotations

from collections.abc import Collection

from .errors import BadInput, ImpossibleInput, OutOfTurn
from .fouls import BREAKING, Foul
from .frozen import replace
from .general import GeneralRules, balls_text
from .inputs import JsonObject, Shot, get_bool
from .state import Presumed, Ruling, State, add_pair, foul_ruling, set_pair


class StraightPool(GeneralRules):
    name = "14.1"
    code = "141"
    rack_size = 15
    rack_scored = False
    std_fouls = (
        "6.1",
        "6.3",
        "6.4",
        "6.5",
        "6.6",
        "6.7",
        "6.8",
        "6.9",
        "6.10",
        "6.11",
        "6.12",
        "6.13",
        "6.15",
    )
    std_foul_prefix = "4.9"
    rule_lag = "4.1"
    rule_call = "4.5"
    rule_safety = "4.5"
    rule_break_req = "4.3.2"
    rule_serious = "4.11"
    rule_stalemate = "4.12"
    call_on_break = True  # 4.3 (TN): the breaker may call a ball
    third_foul_text = "costs 15 more points and a re-break (4.11)"

    # -- score bookkeeping: score = credited - penalties (4.7) -------------------------
    def credit(self, st: State, p: int, n: int) -> State:
        credited = add_pair(st.credited, p, n)
        run = add_pair(st.run, p, n)
        return replace(
            st,
            credited=credited,
            run=run,
            scores=set_pair(st.scores, p, credited[p] - st.penalties[p]),
            high_run=set_pair(st.high_run, p, max(st.high_run[p], run[p])),
        )

    def penalize(self, st: State, p: int, n: int, R: list[Ruling], rule: str, why: str) -> State:
        penalties = add_pair(st.penalties, p, n)
        st = replace(
            st, penalties=penalties, scores=set_pair(st.scores, p, st.credited[p] - penalties[p])
        )
        R.append(
            Ruling(
                rule,
                f"{st.players[p]} loses {n} point{'s' if n != 1 else ''} ({why}); "
                f"score {st.scores[p]}",
            )
        )
        return st

    # -- break (4.3, 4.10) -------------------------------------------------------------
    @staticmethod
    def break_ball_pocketed(st: State, shot: Shot) -> bool:
        """4.3: the called ball went into the called pocket (Thai option: any ball did)."""
        if st.opt("thai_4_3_any_ball"):
            return bool(shot.objects_pocketed)
        return st.call is not None and shot.pocket_of(st.call[0]) == st.call[1]

    def break_foul(self, st: State, shot: Shot) -> Foul | None:
        if self.break_ball_pocketed(st, shot):
            return None
        if shot.object_balls_to_rail is None and shot.cue_ball_to_rail is None:
            return None  # nobody reported: presumed fair
        # 8.4: pocketed and off-table balls count as driven to a rail.
        n = (
            (shot.object_balls_to_rail or 0)
            + len(shot.objects_pocketed)
            + sum(1 for b in shot.off_table if b)
        )
        cue = shot.cue_ball_to_rail is not False or shot.scratch
        if shot.object_balls_to_rail is None:
            n = max(n, 2)
        if cue and n >= 2:
            return None
        return Foul(
            "4.3.2",
            "breaking foul: no called ball pocketed and not the cue ball and "
            "two object balls to a rail",
            BREAKING,
        )

    def break_presumed(self, st: State, shot: Shot) -> tuple[Presumed, ...]:
        out = []
        if shot.object_balls_to_rail is None:
            out.append(Presumed("object_balls_to_rail", 2))
        if shot.cue_ball_to_rail is None and not shot.scratch:
            out.append(Presumed("cue_ball_to_rail", True))
        return tuple(out)

    def break_default_text(self, st: State, shot: Shot) -> str | None:
        if self.break_ball_pocketed(st, shot):
            return None
        obr, cue = shot.object_balls_to_rail, shot.cue_ball_to_rail
        if obr is None and cue is None:
            return (
                "Balls to a rail on the break not reported: presumed the cue ball and two "
                "object balls, requirement met (default)"
            )
        if obr is None:
            return "Object balls driven to a rail on the break not reported: presumed two (default)"
        if cue is None and not shot.scratch:
            return (
                "Whether the cue ball reached a rail on the break was not reported: presumed "
                "it did (default)"
            )
        return None

    # -- inputs ------------------------------------------------------------------------
    def ready_for_play(self, st: State, R: list[Ruling]) -> State:
        if st.awaiting == "rerack":  # 4.8: no answers means neither ball interferes
            R.append(
                Ruling(
                    "4.8",
                    "Re-rack answers not reported: presumed neither the cue ball nor the "
                    "15th ball interferes with the rack (default)",
                )
            )
            st = self.rerack(st, False, False, False, R)
        return super().ready_for_play(st, R)

    def on_rerack(self, st: State, inp: JsonObject, R: list[Ruling]) -> State:
        if st.awaiting != "rerack":
            raise OutOfTurn("no re-rack is due")
        cue_in = get_bool(inp, "cue_ball_in_rack_area", default=False)
        ball_in = get_bool(inp, "ball_in_rack_area", default=False)
        behind = get_bool(inp, "ball_behind_head_string", default=False)
        if not st.on_table and (ball_in or behind):
            raise ImpossibleInput(
                "the 15th ball was pocketed with the 14th (4.8.1): it lies "
                "neither in the rack area nor behind the head string"
            )
        if ball_in and behind:
            raise ImpossibleInput(
                "the 15th ball cannot lie both in the rack area and behind the head string"
            )
        return self.rerack(st, cue_in, ball_in, behind, R)

    def rerack(
        self, st: State, cue_in: bool, ball_in: bool, behind: bool, R: list[Ruling]
    ) -> State:
        """4.8: where the 15th (break) ball and the cue ball go when the 14 are re-racked."""
        ball = st.on_table[0] if st.on_table else None
        bih = None
        fresh = True
        if ball is None:
            R.append(
                Ruling(
                    "4.8.1", "The 15th ball was pocketed with the 14th: all 15 balls are re-racked"
                )
            )
            fresh = False
            if cue_in:
                bih = "kitchen"
                R.append(
                    Ruling(
                        "4.8.2",
                        "The cue ball lies in the rack area: cue ball in hand "
                        "behind the head string",
                    )
                )
        elif cue_in and ball_in:
            fresh, bih = False, "kitchen"
            R.append(
                Ruling(
                    "4.8.2",
                    "Cue ball and 15th ball both in the rack area: all 15 balls "
                    "re-racked, cue ball in hand behind the head string",
                )
            )
        elif ball_in:
            if st.opt("thai_4_8_c_apex"):
                fresh = False
                R.append(
                    Ruling(
                        "4.8.3",
                        f"The {ball} lies in the rack area: placed at the apex "
                        "of the rack (Thai reading)",
                    )
                )
            else:
                R.append(
                    Ruling(
                        "4.8.3",
                        f"The {ball} lies in the rack area: placed on the head "
                        "spot (on the centre spot if the cue ball blocks it)",
                    )
                )
        elif cue_in:
            if behind:
                R.append(
                    Ruling(
                        "4.8.4",
                        f"Cue ball in the rack area, the {ball} behind the head "
                        "string: cue ball placed on the head spot (centre spot "
                        "if the head spot is taken)",
                    )
                )
            else:
                bih = "kitchen"
                R.append(
                    Ruling(
                        "4.8.4",
                        f"Cue ball in the rack area, the {ball} on or below the "
                        "head string: cue ball in hand behind the head string",
                    )
                )
        else:
            R.append(Ruling("4.2", "14 balls re-racked with the apex empty"))
        R.append(Ruling("4.8", f"{st.players[st.shooter]} continues; any ball may be played"))
        return replace(
            st,
            on_table=self.full_rack(),
            pocketed=(),
            to_spot=(),
            rack=st.rack + 1,
            awaiting=None,
            ball_in_hand=bih,
            fresh_rack=fresh,
        )

    def other_option(self, st: State, choice: str, R: list[Ruling]) -> State:
        if st.awaiting != "accept_or_rebreak":
            raise OutOfTurn("no option is due")
        if choice == "accept":
            R.append(Ruling("4.3", f"{st.players[st.shooter]} accepts the table"))
            return replace(st, awaiting=None)
        if choice == "rebreak":
            who, breaker = st.players[st.shooter], st.players[st.rack_breaker]
            R.append(Ruling("4.3", f"{who} has {breaker} break again"))
            # 4.3: a full re-rack of 15 balls, i.e. a new rack set up.
            return self.set_up_rack(self.hand_on(st), st.rack_breaker, R)
        raise BadInput("choose accept or rebreak")

    def on_stalemate(self, st: State, R: list[Ruling]) -> State:
        """4.12: the players lag again for an opening break; the scores stand."""
        R.append(
            Ruling(
                "4.12",
                "Stalemate: all 15 balls re-racked, the players lag again for "
                "the opening break; scores stand",
            )
        )
        return replace(
            st,
            awaiting="lag",
            on_table=self.full_rack(),
            pocketed=(),
            to_spot=(),
            rack=st.rack + 1,
            at_table=None,
            breaking=False,
            ball_in_hand=None,
            call=None,
            safety=False,
            fresh_rack=False,
        )

    def on_interference(self, st: State, R: list[Ruling]) -> State:
        """General 34, read through WPA 1.9: a position that cannot be restored is handled
        as a stalemate, i.e. in 14.1 a new lag (4.12), scores standing. The seed's literal
        reading (the same player breaks again) is the option bca_34_same_breaker."""
        if st.opt("bca_34_same_breaker"):
            R.append(
                Ruling(
                    "general 34",
                    "Outside interference, position cannot be restored: "
                    f"all 15 balls re-racked, {st.players[st.rack_breaker]} "
                    "breaks again (seed reading); scores stand",
                )
            )
            return self.set_up_rack(st, st.rack_breaker, R)
        R.append(
            Ruling(
                "general 34",
                "Outside interference, position cannot be restored: "
                "handled as a stalemate (WPA 1.9)",
            )
        )
        return self.on_stalemate(st, R)

    def spot_place_text(self, st: State, balls: Collection[int]) -> str:
        text = super().spot_place_text(st, balls)
        if st.fresh_rack:
            text += (
                "; if the 14 racked balls are untouched, the 15th ball goes on the empty apex (4.6)"
            )
        return text

    # -- outcome -------------------------------------------------------------------------
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
        st = replace(st, fresh_rack=pre.fresh_rack)  # for the 4.6 apex note while spotting
        st = self.remove_shot_balls(st, shot)
        down = sorted(shot.objects_pocketed | {b for b in shot.off_table if b})
        scratch = shot.scratch or any(f.kitchen for f in fouls)
        if foul and foul.grade == BREAKING:
            R.append(foul_ruling(foul.rule, st.players[shooter], foul.name))
            st = self.penalize(st, shooter, 2, R, "4.10", "breaking foul")
            if len(fouls) > 1:
                R.append(
                    Ruling(
                        "4.10",
                        "A standard foul on the same shot counts as the breaking "
                        "foul only; the foul count is unchanged",
                    )
                )
            st = self.spot(st, down, R, "4.6", "pocketed on a foul")
            st = self.pass_turn(st, R, "4.3", "Breaking foul")
            R.append(
                Ruling(
                    "4.3",
                    f"{st.players[st.shooter]} accepts the table or has "
                    f"{st.players[shooter]} break again",
                )
            )
            return replace(
                st,
                awaiting="accept_or_rebreak",
                fresh_rack=False,
                ball_in_hand="kitchen" if shot.scratch else None,
            )
        if foul:
            R.append(foul_ruling(foul.rule, st.players[shooter], foul.name))
            st = self.spot(st, down, R, "4.6", "pocketed on a foul or off the table")
            st, serious = self.standard_foul(st, shooter, foul, R)
            if st.over:
                return st
            if serious:
                return self.serious_foul(st, shooter, R)
            st = self.penalize(st, shooter, 1, R, "4.9", "standard foul")
            st = self.pass_turn(st, R)
            if scratch:
                R.append(
                    Ruling(
                        "4.9",
                        f"{st.players[st.shooter]} has cue ball in hand behind the head string",
                    )
                )
                return replace(st, ball_in_hand="kitchen", fresh_rack=False)
            R.append(Ruling("4.9", "The cue ball is played from where it lies"))
            return replace(st, fresh_rack=False)
        st = self.legal_shot(st, shooter)
        if pre.safety:
            st = self.spot(st, down, R, "4.5", "pocketed on a safety")
            return replace(self.pass_turn(st, R, "4.5", "Safety played"), fresh_rack=False)
        call = pre.call
        if call is None and not pre.breaking:
            call = self.obvious_call(shot, R)
        if call and shot.pocket_of(call[0]) == call[1]:
            return self.scored(pre, st, shot, call, R)
        why = "no called ball pocketed" if pre.call else "no call and no obvious shot"
        st = self.spot(st, down, R, "4.6", why)
        return replace(self.pass_turn(st, R, "4.4", f"Inning over ({why})"), fresh_rack=False)

    def obvious_call(self, shot: Shot, R: list[Ruling]) -> tuple[int, str] | None:
        """1.6: a call is needed unless the shot is obvious. Without a call, a single ball
        pocketed, or the first ball hit when it is pocketed, is taken as the obvious shot."""
        pk = shot.objects_pocketed
        target = next(iter(pk)) if len(pk) == 1 else shot.first_contact
        if target is None or target not in pk:
            return None
        pocket = shot.pocket_of(target)
        assert pocket is not None, "target is one of the balls pocketed: it has a pocket"
        R.append(Ruling("1.6", f"No call: obvious shot presumed, the {target} in {pocket}"))
        return target, pocket

    def scored(
        self,
        pre: State,
        st: State,
        shot: Shot,
        call: tuple[int, str],
        R: list[Ruling],
    ) -> State:
        shooter = pre.shooter
        points = len(shot.objects_pocketed)
        st = replace(self.credit(st, shooter, points), fresh_rack=False)
        R.append(
            Ruling(
                "4.7",
                f"The {call[0]} in {call[1]} as called: {st.players[shooter]} "
                f"scores {points} ({st.scores[shooter]}, run {st.run[shooter]})",
            )
        )
        if points > 1:
            R.append(
                Ruling(
                    "general 33",
                    "Every other ball pocketed on the legal shot counts "
                    f"a point: {balls_text(sorted(shot.objects_pocketed - {call[0]}))}",
                )
            )
        if st.scores[shooter] >= st.goal:
            R.append(Ruling("4.4", f"{st.players[shooter]} reaches {st.goal} and wins the match"))
            return replace(st, match_winner=shooter, at_table=None, awaiting=None)
        if len(st.on_table) <= 1 and not st.to_spot:
            R.append(
                Ruling(
                    "4.4",
                    "14 balls of the rack are down: the referee re-racks them "
                    "(answer 4.8 with a rerack input)",
                )
            )
            return replace(st, awaiting="rerack")
        return st

    def serious_foul(self, st: State, shooter: int, R: list[Ruling]) -> State:
        """4.11: 1 point for the foul and 15 more, count reset, full re-rack, the offender
        breaks under 4.3 (the incoming player has no choice)."""
        if st.opt("thai_4_11_fifteen"):
            st = self.penalize(st, shooter, 15, R, "4.11", "third consecutive foul (Thai reading)")
        else:
            st = self.penalize(st, shooter, 1, R, "4.9", "standard foul")
            st = self.penalize(st, shooter, 15, R, "4.11", "third consecutive foul")
        count = 1 if st.opt("thai_4_11_count_from_one") else 0
        st = replace(st, fouls=set_pair(st.fouls, shooter, count))
        R.append(Ruling("4.11", f"All 15 balls re-racked; {st.players[shooter]} must break"))
        return self.set_up_rack(st, shooter, R)
