"""Eight-ball (WPA section 3, brief per wpa-reference.md §6): groups (solids 1-7,
stripes 9-15), called shots (3.6), break options (3.3), loss of rack (3.8), standard
fouls with ball in hand anywhere (3.9), no three-foul rule, only the 8 is spotted (3.7)."""

from __future__ import annotations

from collections.abc import Set

from .errors import BadInput, OutOfTurn
from .fouls import BREAKING, Foul
from .frozen import replace
from .general import GeneralRules, balls_text
from .inputs import Shot
from .state import OPTION_CHOICES, Ruling, State, foul_ruling, set_pair

SOLIDS = frozenset(range(1, 8))
# The decisions of 3.3 (their choices: state.OPTION_CHOICES, the one list).
EIGHT_OPTIONS = ("spot_or_rebreak", "spot_or_break", "accept_or_break", "accept_or_kitchen")
STRIPES = frozenset(range(9, 16))


class EightBall(GeneralRules):
    name = "8-ball"
    code = "8"
    rack_size = 15
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
        "6.11",
        "6.12",
        "6.13",
        "6.15",
    )
    std_foul_prefix = "3.9"
    rule_serious = "3.10"
    rule_stalemate = "3.11"
    rule_call = "3.6"
    rule_safety = "3.6"
    rule_option = "3.3"
    three_fouls = False  # 6.14 is not in the eight-ball list (3.9)
    call_on_break = False
    rule_no_call_on_break = "3.3"

    @staticmethod
    def group_balls(group: str | None) -> frozenset[int]:
        return SOLIDS if group == "solids" else STRIPES if group == "stripes" else frozenset()

    def cleared(self, st: State, player: int) -> bool:
        group = st.groups[player]
        return group is not None and not (self.group_balls(group) & set(st.on_table))

    def legal_first_balls(self, st: State) -> Set[int] | None:
        if st.breaking:
            return None
        p = st.shooter
        if st.groups[p] is None:
            return set(st.on_table) - {8}  # 3.4: open table, anything but the 8
        if self.cleared(st, p):
            return {8}
        return self.group_balls(st.groups[p]) & set(st.on_table)

    def check_call(self, st: State, ball: int) -> None:
        if ball == 8 and not self.cleared(st, st.shooter):
            raise OutOfTurn("the 8 may be called only after the shooter's group is cleared (3.6)")

    def break_foul(self, st: State, shot: Shot) -> Foul | None:
        """3.3: no ball pocketed and fewer than four object balls to a rail. A break that
        touches no ball is one whatever the count says (nothing can have moved). Graded
        BREAKING: when the break has other fouls too (a scratch, 6.3, a ball jumped off),
        general 29 penalises this one, by the rule and not by the order they were found,
        because its remedy keeps every choice the others give the incoming player (the
        table, or a re-rack) and `resolve_break` adds the ball in hand they give."""
        if shot.objects_pocketed:
            return None
        if not (shot.contact_reported and shot.first_contact is None):
            if shot.object_balls_to_rail is None:
                return None
            if shot.object_balls_to_rail + sum(1 for b in shot.off_table if b) >= 4:
                return None
        return Foul(
            "3.3",
            "illegal break: no ball pocketed and fewer than four object balls to a rail",
            BREAKING,
        )

    def break_default_text(self, st: State, shot: Shot) -> str | None:
        if shot.contact_reported and shot.first_contact is None:
            return None  # no ball touched: the count decides nothing (break_foul)
        return super().break_default_text(st, shot)

    # -- outcome ---------------------------------------------------------------------------
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
        eight = 8 in shot.objects_pocketed or 8 in shot.off_table
        if pre.breaking:
            return self.resolve_break(pre, st, shot, foul, fouls, eight, R)
        if foul:
            R.append(foul_ruling(foul.rule, st.players[shooter], foul.name))
            st, serious = self.standard_foul(st, shooter, foul, R)
            if st.over:
                return st
            if eight or serious:
                why = "the 8 pocketed or off the table on a foul" if eight else foul.name
                return self.end_rack(
                    st,
                    1 - shooter,
                    R,
                    "3.8" if eight else "3.10",
                    f"{st.players[shooter]} loses the rack ({why})",
                )
            st = self.pass_turn(st, R)
            R.append(Ruling("3.9", f"{st.players[st.shooter]} has cue ball in hand anywhere"))
            return replace(st, ball_in_hand="anywhere")
        st = self.legal_shot(st, shooter)
        call = pre.call if not pre.safety else None
        if call is None and not pre.safety:
            call = self.obvious_call(pre, shot, R)
        # the call, when its ball went where it was called (else None)
        made = call if call is not None and shot.pocket_of(call[0]) == call[1] else None
        if eight:
            if made and made[0] == 8 and self.cleared(pre, shooter):
                return self.end_rack(st, shooter, R, "3.6", "the 8 pocketed as called")
            return self.end_rack(
                st,
                1 - shooter,
                R,
                "3.8",
                f"{st.players[shooter]} pocketed the 8 before the group was "
                "cleared, on a safety or in an uncalled pocket",
            )
        if pre.safety:
            return self.pass_turn(st, R, "3.6", "Safety played; pocketed balls stay down")
        if made:
            if st.groups[shooter] is None:  # 3.4: the called ball decides the groups
                mine = "solids" if made[0] in SOLIDS else "stripes"
                theirs = "stripes" if mine == "solids" else "solids"
                st = replace(
                    st, groups=set_pair(set_pair(st.groups, shooter, mine), 1 - shooter, theirs)
                )
                R.append(Ruling("3.4", f"{st.players[shooter]} has the {mine}"))
            R.append(
                Ruling(
                    "3.6", f"The {made[0]} in {made[1]} as called: {st.players[shooter]} continues"
                )
            )
            return st
        return self.pass_turn(st, R, "3.6", "Called ball not pocketed")

    def obvious_call(self, pre: State, shot: Shot, R: list[Ruling]) -> tuple[int, str] | None:
        pk = shot.objects_pocketed
        target = next(iter(pk)) if len(pk) == 1 else shot.first_contact
        legal = self.legal_first_balls(pre) or set()
        if target is None or target not in pk or target not in legal:
            return None
        pocket = shot.pocket_of(target)
        assert pocket is not None, "target is one of the balls pocketed: it has a pocket"
        R.append(Ruling("1.6", f"No call: obvious shot presumed, the {target} in {pocket}"))
        return target, pocket

    def resolve_break(
        self,
        pre: State,
        st: State,
        shot: Shot,
        foul: Foul | None,
        fouls: list[Foul],
        eight: bool,
        R: list[Ruling],
    ) -> State:
        shooter = pre.shooter
        if foul:
            # Which fault decides, by 3.3 (not by the order they were detected): the 8
            # with a scratch (its own case), then an illegal break (graded BREAKING, so
            # general 29 has already chosen it), then a ball jumped off, then any other
            # foul. A second fault never takes a choice away from the incoming player.
            R.append(foul_ruling(foul.rule, st.players[shooter], foul.name, on_break=True))
            if eight and shot.scratch:
                st = self.pass_turn(st, R, "3.3", "8 pocketed with a scratch on the break")
                R.append(
                    Ruling(
                        "3.3",
                        f"{st.players[st.shooter]} spots the 8 and takes cue "
                        "ball in hand behind the head string, or re-racks and "
                        "breaks",
                    )
                )
                return replace(st, awaiting="spot_or_break")
            if eight:
                st = self.spot(st, [8], R, "3.7", "the 8 on a foul break")
            others = [f for f in fouls if f is not foul]
            if foul.grade == BREAKING:
                st = self.pass_turn(st, R, "3.3", "Illegal break")
                in_hand = bool(others)  # what the other foul gives, kept (ball in hand)
                R.append(
                    Ruling(
                        "3.3",
                        f"{st.players[st.shooter]} accepts the table"
                        f"{' with cue ball in hand behind the head string' if in_hand else ''}"
                        f", re-racks and breaks, or has {st.players[shooter]} break again",
                    )
                )
                return replace(
                    st, awaiting="accept_or_break", ball_in_hand="kitchen" if in_hand else None
                )
            jumped = any(b for b in shot.off_table)
            if jumped and not shot.scratch:  # a scratch leaves no cue ball in position
                st = self.pass_turn(st, R, "3.3", "Object ball off the table on the break")
                R.append(
                    Ruling(
                        "3.3",
                        f"{st.players[st.shooter]} accepts the table in position, or takes "
                        "cue ball in hand behind the head string",
                    )
                )
                return replace(st, awaiting="accept_or_kitchen")
            st = self.pass_turn(st, R)
            R.append(
                Ruling(
                    "3.3", f"{st.players[st.shooter]} has cue ball in hand behind the head string"
                )
            )
            return replace(st, ball_in_hand="kitchen")
        if eight:
            R.append(
                Ruling(
                    "3.3",
                    f"8 pocketed on a legal break: {st.players[shooter]} spots it "
                    "and continues, or re-racks and breaks again",
                )
            )
            return replace(st, awaiting="spot_or_rebreak")
        if shot.objects_pocketed:
            R.append(
                Ruling(
                    "3.3",
                    f"Legal break, {balls_text(sorted(shot.objects_pocketed))} "
                    f"pocketed: {st.players[shooter]} continues; the table is open",
                )
            )
            return st
        return self.pass_turn(st, R, "3.3", "Legal break, nothing pocketed; the table is open")

    def other_option(self, st: State, choice: str, R: list[Ruling]) -> State:
        allowed = OPTION_CHOICES.get(st.awaiting or "")  # None: nothing awaited, no option
        if allowed is None or st.awaiting not in EIGHT_OPTIONS:
            raise OutOfTurn("no option is due")
        if choice not in allowed:
            raise BadInput(f"choose {' or '.join(allowed)}")
        p = st.shooter  # these options follow a break: somebody is at the table
        st = replace(st, awaiting=None)
        if choice == "spot":
            st = self.spot(st, [8], R, "3.7", "pocketed on the break")
            if st.breaker != p:  # the incoming player after a scratch: ball in hand
                return replace(st, ball_in_hand="kitchen")
            return st
        if choice == "accept":
            # after an illegal break that also scratched (or fouled otherwise) the state
            # already holds his cue ball in hand behind the head string: accepting keeps it
            with_hand = " with cue ball in hand behind the head string" if st.ball_in_hand else ""
            R.append(Ruling("3.3", f"{st.players[p]} accepts the table{with_hand}"))
            return st
        if choice == "kitchen":
            R.append(
                Ruling("3.3", f"{st.players[p]} takes cue ball in hand behind the head string")
            )
            return replace(st, ball_in_hand="kitchen")
        breaker = p if choice == "break" else st.rack_breaker
        R.append(Ruling("3.3", f"Re-rack: {st.players[breaker]} breaks"))
        return self.set_up_rack(self.hand_on(st), breaker, R, new_rack=False)
