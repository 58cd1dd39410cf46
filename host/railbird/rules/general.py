"""General rules every game shares: calls, push-out gate, option decisions, the shot
pipeline (spotting, physical checks, general 30/32, fouls and general 29), and the
standard-foul bookkeeping. Each game overrides `resolve` and a few small hooks."""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Collection, Iterable, Set

from . import doubt
from .errors import BadInput, ImpossibleInput, OutOfTurn
from .fouls import Foul, declared_foul, listed_foul
from .frozen import replace
from .inputs import (
    SHOT_FACTS,
    JsonObject,
    Shot,
    get_bool,
    get_int,
    get_pocket,
    parse_shot,
    shot_dict,
)
from .match import MatchLayer
from .state import Presumed, Ruling, State, move_balls, set_pair


def balls_text(balls: Iterable[int]) -> str:
    balls = list(balls)
    return ", ".join(str(b) for b in balls) if balls else "none"


class GeneralRules(MatchLayer):
    # Hooks and rule numbers every game sets.
    std_fouls: tuple[str, ...] = ()
    std_foul_prefix = ""
    rule_serious = "6.14"
    rule_call = "1.6"
    rule_safety = "1.6"
    rule_spot = "1.4"
    rule_push_out = "9.4"
    call_shot = True
    call_on_break = False
    push_out_game = False
    foul_ball_in_hand = "anywhere"

    # -- inputs before a shot ---------------------------------------------------------
    def ready_for_play(self, st: State, R: list[Ruling]) -> State:
        """Guard for call / push_out / shot: nothing else may be pending."""
        if st.awaiting == "lag":
            raise OutOfTurn("the lag comes first")
        if st.awaiting:
            raise OutOfTurn(f"awaiting {st.awaiting.replace('_', ' ')}")
        return st

    def on_call(self, st: State, inp: JsonObject, R: list[Ruling]) -> State:
        st = self.ready_for_play(st, R)
        if not self.call_shot:
            raise OutOfTurn(f"{self.name} is not a call-shot game")
        safety = get_bool(inp, "safety", default=False)
        if safety:
            if "ball" in inp or "pocket" in inp:
                raise BadInput("call either a ball and pocket or safety, not both")
            self.check_safety_allowed(st)
            R.append(Ruling(self.rule_safety, f"{st.players[st.shooter]} calls safety"))
            return replace(st, call=None, safety=True, push_out=False)
        if st.breaking and not self.call_on_break:
            raise OutOfTurn(f"no ball may be called on the break ({self.rule_no_call_on_break})")
        ball = get_int(inp, "ball", 1, 15)
        if ball is None:
            raise BadInput("call needs ball and pocket, or safety: true")
        pocket = get_pocket(inp)
        if ball not in st.on_table and ball not in st.to_spot:
            raise ImpossibleInput(f"ball {ball} is not on the table")
        self.check_call(st, ball)
        R.append(Ruling(self.rule_call, f"{st.players[st.shooter]} calls the {ball} in {pocket}"))
        return replace(st, call=(ball, pocket), safety=False, push_out=False)

    rule_no_call_on_break = "9"

    def check_safety_allowed(self, st: State) -> None:
        if st.breaking:
            raise OutOfTurn("no safety on the break")

    def check_call(self, st: State, ball: int) -> None:
        """Game hook: refuse a call that the game never allows (8-ball: the 8 early)."""

    def on_push_out(self, st: State, R: list[Ruling]) -> State:
        st = self.ready_for_play(st, R)
        if not self.push_out_game:
            raise OutOfTurn(f"{self.name} has no push-out")
        if not st.push_out_allowed:
            raise OutOfTurn(
                f"a push-out is allowed only on the shot after a foul-free break "
                f"({self.rule_push_out})"
            )
        R.append(Ruling(self.rule_push_out, f"{st.players[st.shooter]} plays a push-out"))
        return replace(st, push_out=True, call=None, safety=False)

    def on_rerack(self, st: State, inp: JsonObject, R: list[Ruling]) -> State:
        raise OutOfTurn("no re-rack is due")

    # -- option decisions ---------------------------------------------------------------
    def on_option(self, st: State, choice: str, R: list[Ruling]) -> State:
        if st.awaiting == "shoot_or_pass":
            chooser = st.shooter
            rule = st.option_rule or self.rule_option
            if choice == "shoot":
                R.append(Ruling(rule, f"{st.players[chooser]} chooses to shoot"))
                return replace(st, awaiting=None, option_rule=None)
            if choice == "pass":
                R.append(Ruling(rule, f"{st.players[chooser]} passes the shot back"))
                return self.begin_turn(self.hand_on(st), 1 - chooser, R)
            raise BadInput("choose shoot or pass")
        return self.other_option(st, choice, R)

    rule_option = "9.7"

    def other_option(self, st: State, choice: str, R: list[Ruling]) -> State:
        raise OutOfTurn("no option is due")

    # -- the shot pipeline ----------------------------------------------------------------
    def on_shot(self, st: State, shot: Shot, R: list[Ruling]) -> State:
        # General 30: a ball settling by itself is no stroke and changes no turn, so it is
        # taken whatever is awaited (a decision, the lag, the 14.1 re-rack answers, which
        # stay the referee's to give).
        if not (st.awaiting and self.only_settling(st, shot)):
            st = self.ready_for_play(st, R)
        shot, settled = self.check_physical(st, shot, R)
        if shot.replay:
            R.append(Ruling(shot.replay, "Position restored, the shot is replayed without penalty"))
            return st
        if settled:
            R.append(
                Ruling(
                    "general 30",
                    "Only a ball settling into a pocket by itself: not a "
                    "stroke; the game continues as before",
                )
            )
            return st
        return self.decide(st, shot, R)

    # -- uncertain facts that decide the ruling (REFEREE.md §3b) ------------------------
    def decide(self, st: State, shot: Shot, R: list[Ruling]) -> State:
        """Rule the shot for every value its doubtful facts may take (doubt.axes). The
        same state for all: ruled as a fact. Otherwise the ruling would be a guess: with a
        referee at the table (option `referee`) the shot is held until he checks it
        (awaiting "referee_check"); without one the fair default is ruled, provisional."""
        ax = doubt.axes(shot)
        if not ax:
            if shot.object_balls_to_rail_range is not None:  # a one-value range: certain
                shot = doubt.settled(shot, ())
            return self.rule_shot(st, shot, R)
        names = [f for f, _ in ax]
        said = doubt.sensed(shot, ax)
        groups: list[doubt.Group] = []  # (state, [facts, ...]): combinations ruled alike
        ruled = doubt.ruled(ax, said)  # the counts that can rule differently
        for combo in itertools.product(*(values for _, values in ruled)):
            facts: doubt.Facts = dict(zip(names, combo, strict=True))
            out = self.rule_shot(st, replace(shot, **facts), [])
            for g in groups:
                if g[0] == out:
                    g[1].append(facts)
                    break
            else:
                groups.append((out, [facts]))
        if len(groups) == 1:
            return self.rule_shot(st, doubt.settled(replace(shot, **said), names), R)
        fair: doubt.Facts = {f: values[-1] for f, values in ax}
        names = doubt.deciding(ruled, groups)  # the others change nothing: not asked about
        shot = doubt.settled_but(shot, [f for f, _ in ax if f not in names], said)
        ax = [a for a in ax if a[0] in names]
        choices: list[doubt.Choice] = []
        fair_i = 0
        for i, (_state, members) in enumerate(groups):
            rep = doubt.nearest(members, said)
            label, rule = self.outcome(st, replace(shot, **rep))
            choices.append({"label": label, "facts": {f: rep[f] for f in names}, "rule": rule})
            if fair in members:
                fair_i = i
        doubt.tell_apart(choices)
        fair_label = choices[fair_i]["label"]
        text = doubt.describe(shot, ax)
        fouled = [c["rule"] for c in choices if c["rule"] is not None]
        rule = fouled[0] if fouled else "1.10"
        likely = doubt.proposed(names, said, choices)
        # issue 26: the likely call, named in the ruling (the state's `proposed`, jsonview)
        hint = "" if likely is None else f"; likely {choices[likely]['label']}, proposed"
        if st.opt("referee"):
            R.append(
                Ruling(
                    rule,
                    f"The ruling depends on what the sensors cannot decide ({text}): "
                    f"held for the referee's check{hint}",
                )
            )
            if st.unconfirmed:
                R.append(self.stand_ruling(st))
            held = {"shot": shot_dict(shot), "facts": names, "choices": choices, "text": text}
            return replace(
                st,
                awaiting="referee_check",
                check=doubt.canon(held),
                unconfirmed=tuple(sorted(set(names))),
                provisional=None,
            )
        flagged = tuple(sorted(set(shot.uncertain) | set(names)))
        out = self.rule_shot(st, replace(shot, **fair, uncertain=flagged), R, defaulted=names)
        R.append(
            Ruling(
                rule,
                f"Provisional: {fair_label}. The sensors cannot decide it ({text}); no referee "
                "is at the table, so the fair default applies until the referee confirms "
                f"or corrects it{hint}",
            )
        )
        entry: dict[str, object] = {
            "fact": names[0],
            "facts": names,
            "ruling": fair_label,
            "rule": rule,
        }
        entry.update(text=text, choices=choices)
        return replace(out, provisional=doubt.canon([entry]))

    def outcome(self, st: State, shot: Shot) -> tuple[str, str | None]:
        """(label, rule) of how `shot` would be ruled: its most serious detected foul, or
        none (the referee's one-tap choices, REFEREE.md §3b)."""
        shot = self.apply_defaults(st, shot, [])
        foul = self.most_serious(self.detect_fouls(st, shot), [])
        if foul is None:
            return ("legal break" if st.breaking else "no foul"), None
        return f"foul: {foul.name}", foul.rule

    def stand_ruling(self, st: State) -> Ruling:
        return Ruling(
            "1.10",
            f"Unconfirmed facts of the last shot ({', '.join(st.unconfirmed)}) stand as sensed",
        )

    def rule_shot(
        self, st: State, shot: Shot, R: list[Ruling], defaulted: Iterable[str] = ()
    ) -> State:
        """The shot's fouls and outcome, its facts taken as given (`defaulted`: facts set
        to the fair default, not applied as sensed)."""
        if st.provisional:
            entry = doubt.load(st.provisional)[0]
            R.append(Ruling(entry["rule"], f"The provisional ruling ({entry['ruling']}) stands"))
        if st.unconfirmed:
            R.append(self.stand_ruling(st))
        shot = self.apply_defaults(st, shot, R)
        self.record_defaults(st, shot, R)
        fouls = self.detect_fouls(st, shot)
        thai = st.opt_flag("thai_foul_names")
        for text in shot.fouls:
            foul = declared_foul(self, text, thai)
            if foul is None:  # general 26: a miscue is not a foul in itself (WPA)
                if st.opt("bca_jump_miscue_foul"):
                    fouls.append(Foul("general 26", "miscue on a jump shot"))
                else:
                    R.append(
                        Ruling("general 26", "Miscue on a jump shot: not a foul in itself (WPA)")
                    )
                continue
            fouls.append(foul)
        foul = self.most_serious(fouls, R)
        after = replace(
            st,
            call=None,
            safety=False,
            push_out=False,
            push_out_allowed=False,
            ball_in_hand=None,
            breaking=False,
            fresh_rack=False,
            unconfirmed=shot.uncertain,
        )
        st = self.resolve(st, after, shot, foul, fouls, R)
        as_sensed = [f for f in shot.uncertain if f not in defaulted]
        if as_sensed:
            R.append(
                Ruling(
                    "1.10",
                    f"Uncertain, applied as sensed until the referee confirms "
                    f"or corrects: {', '.join(as_sensed)}",
                )
            )
        return replace(st, unconfirmed=shot.uncertain, provisional=None)

    def on_confirm(self, st: State, R: list[Ruling]) -> State:
        """The referee confirms the uncertain facts of the last shot as sensed (1.10: the
        referee's judgement). Corrections need the input history (`Referee`)."""
        if not st.unconfirmed:
            raise OutOfTurn("no uncertain fact to confirm")
        R.append(
            Ruling("1.10", f"The referee confirms the sensed facts: {', '.join(st.unconfirmed)}")
        )
        if st.provisional:
            entry = doubt.load(st.provisional)[0]
            R.append(
                Ruling(entry["rule"], f"The provisional ruling ({entry['ruling']}) is confirmed")
            )
        return replace(st, unconfirmed=(), provisional=None)

    def on_check(self, st: State, inp: JsonObject, R: list[Ruling]) -> State:
        """The referee's answer to a held shot (awaiting "referee_check", REFEREE.md §3b):
        `confirm` with the facts he saw (a choice's facts, or any), or without facts, the
        sensed values. Either way every fact of the shot is his now: it is ruled once."""
        held = doubt.load(st.check)
        facts = {k: copy.deepcopy(inp[k]) for k in SHOT_FACTS if k in inp}
        if isinstance(facts.get("pocketed"), list):
            facts["pocketed"] = [
                {k: v for k, v in p.items() if k != "source"} if isinstance(p, dict) else p
                for p in facts["pocketed"]
            ]
        shot_in = dict(held["shot"], **facts)
        shot_in.pop("object_balls_to_rail_range", None)
        shot_in.pop("uncertain", None)
        shot = parse_shot(shot_in)
        given = ", ".join(f"{k} {json.dumps(facts[k])}" for k in sorted(facts))
        R.append(
            Ruling(
                "1.10",
                f"The referee checks the held shot ({given or 'the sensed facts confirmed'})"
                ": it is ruled",
            )
        )
        st = replace(st, awaiting=None, check=None, unconfirmed=(), provisional=None)
        shot, _ = self.check_physical(st, shot, R)
        return self.rule_shot(st, shot, R)

    def spot_pending(self, st: State) -> State:
        """Balls listed in to_spot are spotted (31) before play goes on: the engine puts
        them on the table at the next input of any kind (REFEREE.md §2), so the state
        shows them where the referee has put them."""
        return move_balls(st, st.to_spot, to="on_table")

    def only_settling(self, st: State, shot: Shot) -> bool:
        """Whether the shot is only balls settling into pockets (general 30), judged as
        `check_physical` judges it; impossible facts are not settling."""
        try:
            return self.check_physical(st, shot, [])[1]
        except ImpossibleInput:
            return False

    def check_physical(self, st: State, shot: Shot, R: list[Ruling]) -> tuple[Shot, bool]:
        """Refuse impossible facts; resolve unsensed identities; general 30 and 32.
        Returns the shot and whether it was only balls settling into pockets (general 30:
        every pocketed ball fell by itself and nothing shows a stroke)."""
        table = set(st.on_table)
        seen: set[int] = set()
        for b in [p.ball for p in shot.pocketed if p.ball is not None] + list(shot.off_table):
            if b in seen:
                raise ImpossibleInput(
                    f"ball {b} is reported twice (pocketed twice, or both "
                    "pocketed and off the table)"
                )
            if b != 0 and b not in table:
                raise ImpossibleInput(f"ball {b} is not on the table")
            seen.add(b)
        if (
            shot.contact_reported
            and shot.first_contact is not None
            and shot.first_contact not in table
        ):
            raise ImpossibleInput(f"first contact {shot.first_contact} is not on the table")
        shot = self.check_rail_estimate(table, shot, R)
        potted = []
        restored = 0
        for i, p in enumerate(shot.pocketed):
            if p.ball is None:  # identity not sensed: the called ball if it fits, else lowest
                free = sorted(table - seen)
                if not free:
                    raise ImpossibleInput("more balls pocketed than are on the table")
                guess = (
                    st.call[0]
                    if st.call and st.call[0] in free and st.call[1] == p.pocket
                    else free[0]
                )
                seen.add(guess)
                R.append(
                    Ruling(
                        "8.3",
                        f"Ball in {p.pocket} not identified: presumed to be the {guess} (default)",
                        (Presumed("pocketed", guess, i),),
                    )
                )
                p = replace(p, ball=guess)
            limit = st.opt_int("hanging_ball_us")
            if p.rested_us is not None and p.rested_us > limit:  # general 30: any ball
                name = "cue ball" if p.ball == 0 else str(p.ball)
                R.append(
                    Ruling(
                        "general 30",
                        f"The {name} hung on the lip for more than "
                        f"{limit / 1e6:g} s before it fell: restored to "
                        "the lip, not pocketed",
                    )
                )
                restored += 1
                continue
            if p.jammed:
                R.append(
                    Ruling("general 32", f"Jammed ball {p.ball} would drop: it counts as pocketed")
                )
            potted.append(p)
        stroke = (
            potted
            or shot.off_table
            or shot.fouls
            or shot.contact_reported
            or shot.rail_after_contact
            or shot.object_balls_to_rail
            or shot.cue_ball_to_rail
            or shot.replay
        )
        return replace(shot, pocketed=tuple(potted)), bool(restored and not stroke)

    def check_rail_estimate(self, table: set[int], shot: Shot, R: list[Ruling]) -> Shot:
        """`object_balls_to_rail` counts the object balls driven to a rail that stay on the
        table; those pocketed or driven off on the shot are counted on top (8.4), so it can
        be at most the object balls on the table less those (REFEREE.md §1). Above that a
        certain fact is impossible input. Flagged uncertain (the host's estimate from
        rail-sensor clusters, §3a) it is an estimate: bounded by the same number, with a
        ruling, never a refusal."""
        obr = shot.object_balls_to_rail
        span = shot.object_balls_to_rail_range
        if obr is None and span is None:
            return shot
        # An unidentified pocketed ball (ball None) is an object ball or the cue ball;
        # counted as an object ball, as the host bounds its estimate.
        gone = sum(1 for p in shot.pocketed if p.ball != 0) + sum(1 for b in shot.off_table if b)
        room = max(0, len(table) - gone)
        if span is not None and span[1] > room:
            # a range is the sensors' doubt, never a certain fact: what cannot be is cut off
            shot = replace(shot, object_balls_to_rail_range=(min(span[0], room), room))
        if obr is None or obr <= room:
            return shot
        if "object_balls_to_rail" not in shot.uncertain and span is None:
            raise ImpossibleInput(
                f"more object balls to a rail ({obr}) than can have reached one: {room} on "
                "the table, not counting those pocketed or driven off on the shot"
            )
        R.append(
            Ruling(
                "1.10",
                f"Object balls to a rail estimated at {obr} by the rail "
                f"sensors; at most {room} can have reached a rail: taken as "
                f"{room}",
            )
        )
        return replace(shot, object_balls_to_rail=room)

    def legal_first_balls(self, st: State) -> Set[int] | None:
        """6.2: the balls the cue ball may contact first (None: any ball)."""
        return None

    def apply_defaults(self, st: State, shot: Shot, R: list[Ruling]) -> Shot:
        """Facts nobody sensed or entered: the shot is presumed fair (REFEREE.md)."""
        return shot

    def detect_fouls(self, st: State, shot: Shot) -> list[Foul]:
        thai = st.opt_flag("thai_foul_names")
        fouls = []
        if shot.scratch:
            fouls.append(listed_foul(self, "6.1", thai))
        if any(b != 0 for b in shot.off_table):
            fouls.append(listed_foul(self, "6.5", thai))
        suspended = st.push_out  # 9.4 / 2.4: 6.2 and 6.3 do not apply on a push-out
        legal = self.legal_first_balls(st)
        no_rail = False
        if not suspended and shot.contact_reported:
            if shot.first_contact is None:
                no_rail = True  # 6.3: no ball contacted at all
            elif legal is not None and shot.first_contact not in legal:
                fouls.append(listed_foul(self, "6.2", thai))
        if (
            not suspended
            and not st.breaking
            and not shot.objects_pocketed
            and shot.rail_after_contact is False
        ):
            no_rail = True
        if no_rail:
            fouls.append(listed_foul(self, "6.3", thai))
        if st.breaking:
            foul = self.break_foul(st, shot)
            if foul:
                fouls.append(foul)
        return fouls

    def break_foul(self, st: State, shot: Shot) -> Foul | None:
        return None

    # -- facts nobody reported: the fair default, recorded in the rulings ---------------------
    def foul_rule(self, wpa: str) -> str:
        """The game's own list number of a 6.x foul (e.g. 9.10.2), else the WPA number."""
        if wpa in self.std_fouls:
            return f"{self.std_foul_prefix}.{self.std_fouls.index(wpa) + 1}"
        return wpa

    def record_defaults(self, st: State, shot: Shot, R: list[Ruling]) -> None:
        """REFEREE.md §3: every default that decides something is named in a ruling."""
        if st.push_out:
            return  # 9.4 / 2.4: 6.2 and 6.3 are suspended; nothing is presumed
        if shot.scratch or any(b for b in shot.off_table) or shot.fouls:
            return  # a foul is decided by reported facts; no default decides anything
        legal = self.legal_first_balls(st)
        if not shot.contact_reported and legal is not None:
            only = min(legal) if len(legal) == 1 else None  # else "a legal ball": say which
            R.append(
                Ruling(
                    self.foul_rule("6.2"),
                    "First ball contacted not reported: presumed "
                    f"{self.presumed_first_text(st, shot)}, a "
                    "legal hit (default)",
                    (Presumed("first_contact", only),),
                )
            )
        if (
            not st.breaking
            and not shot.objects_pocketed
            and shot.rail_after_contact is None
            and not (shot.contact_reported and shot.first_contact is None)
        ):
            R.append(
                Ruling(
                    self.foul_rule("6.3"),
                    "Rail after contact not reported: presumed a ball reached a rail (default)",
                    (Presumed("rail_after_contact", True),),
                )
            )
        if st.breaking:
            text = self.break_default_text(st, shot)
            if text:
                R.append(Ruling(self.rule_break_req, text, self.break_presumed(st, shot)))

    rule_break_req = "3.3"

    def presumed_first_text(self, st: State, shot: Shot) -> str:
        return "a legal ball"

    def break_presumed(self, st: State, shot: Shot) -> tuple[Presumed, ...]:
        """The facts `break_default_text` presumes, at the least value that meets the
        break requirement (what a `confirm` of the presumption gives)."""
        return (Presumed("object_balls_to_rail", 4),)

    def break_default_text(self, st: State, shot: Shot) -> str | None:
        """Rotation and 8-ball: nothing pocketed and no rail count reported."""
        if shot.objects_pocketed or shot.object_balls_to_rail is not None:
            return None
        return (
            "Object balls to a rail on the break not reported: presumed at least four, "
            "requirement met (default)"
        )

    def most_serious(self, fouls: list[Foul], R: list[Ruling]) -> Foul | None:
        """General 29: several fouls on one shot are one foul; the most serious penalty."""
        if not fouls:
            return None
        # General 28 (a warning, then loss of the match) outranks a plain standard foul;
        # then a foul that moves the cue ball to the kitchen (14.1: 6.1, 6.11.2).
        ranked = sorted(fouls, key=lambda f: (-f.grade, not f.intentional, not f.kitchen))
        worst = ranked[0]
        if len(fouls) > 1:
            R.append(
                Ruling(
                    "general 29",
                    f"{len(fouls)} fouls on one shot count as one; penalised: {worst.name}",
                )
            )
        return worst

    # -- outcome (per game) --------------------------------------------------------------
    def resolve(
        self,
        pre: State,
        st: State,
        shot: Shot,
        foul: Foul | None,
        fouls: list[Foul],
        R: list[Ruling],
    ) -> State:
        raise NotImplementedError

    # -- helpers for resolve ---------------------------------------------------------------
    def remove_shot_balls(self, st: State, shot: Shot) -> State:
        return move_balls(
            st, shot.objects_pocketed | {b for b in shot.off_table if b}, to="pocketed"
        )

    def spot(self, st: State, balls: Iterable[int], R: list[Ruling], rule: str, why: str) -> State:
        balls = sorted(set(balls))
        if not balls:
            return st
        st = move_balls(st, balls, to="to_spot")
        R.append(
            Ruling(rule, f"Spot {balls_text(balls)} ({why}); {self.spot_place_text(st, balls)}")
        )
        return st

    def spot_place_text(self, st: State, balls: Collection[int]) -> str:
        if len(balls) == 1:
            return "on the foot spot, or toward the foot rail if it is taken (general 31)"
        return (
            "on the long string from the foot spot toward the foot rail, lowest number "
            "nearest the foot spot, never touching the cue ball (general 31)"
        )

    def pass_turn(
        self, st: State, R: list[Ruling], rule: str = "general 36", why: str = ""
    ) -> State:
        nxt = 1 - st.shooter
        if why:
            R.append(Ruling(rule, f"{why}: {st.players[nxt]} to shoot"))
        return self.begin_turn(st, nxt, R)

    def legal_shot(self, st: State, shooter: int) -> State:
        """A shot without a foul ends a run of consecutive fouls (6.14)."""
        return replace(st, fouls=set_pair(st.fouls, shooter, 0))

    def standard_foul(
        self, st: State, shooter: int, foul: Foul, R: list[Ruling]
    ) -> tuple[State, bool]:
        """Count the foul (6.14). Returns (state, serious): serious when it was the third
        consecutive foul or unsportsmanlike conduct (6.16: a serious-foul penalty)."""
        if foul.intentional:
            if st.intent_warned[shooter]:
                R.append(
                    Ruling(
                        "general 28",
                        f"Second intentional foul by {st.players[shooter]}: loss of the match",
                    )
                )
                return replace(st, match_winner=1 - shooter, awaiting=None, at_table=None), True
            st = replace(st, intent_warned=set_pair(st.intent_warned, shooter, True))
            R.append(
                Ruling(
                    "general 28",
                    f"Warning to {st.players[shooter]}: a second "
                    "intentional foul in this match loses the match",
                )
            )
        if foul.unsportsmanlike:
            R.append(
                Ruling(
                    foul.rule,
                    f"Unsportsmanlike conduct ({foul.name}): the serious-foul "
                    "penalty applies; the referee may choose another (6.16)",
                )
            )
            return st, True
        if not self.three_fouls:
            return st, False
        count = st.fouls[shooter] + 1
        st = replace(st, fouls=set_pair(st.fouls, shooter, count))
        return st, count >= 3
