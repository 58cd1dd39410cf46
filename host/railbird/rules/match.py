"""The match layer: match set-up, the lag (1.2), racks, break order (general 35),
race to N racks / target points, and the match winner. Mixed into every game."""

from __future__ import annotations

from typing import cast

from .errors import BadInput, OutOfTurn
from .fouls import FoulList, declared_foul
from .frozen import replace
from .inputs import JsonObject, check_name, get_bool, get_int, get_str
from .options import parse_options
from .shotclock import parse_shot_clock
from .state import Ruling, State, add_pair

BREAK_ORDERS = ("alternate", "winner", "loser", "trailing")


class MatchLayer:
    """Match-level behaviour shared by all games (overridden where a game differs)."""

    # Set by each game.
    name = ""  # the game's name everywhere: inputs, state, protocol (rbproto GAMES)
    code = ""  # its short code on the LED scoreboard (SCOREBOARD.md "Screens")
    rack_size = 0
    rack_scored = True  # False for 14.1 (points)
    three_fouls = True
    rule_lag = "1.2"
    rule_break_order = "general 35"
    rule_stalemate = "1.12"

    def full_rack(self) -> tuple[int, ...]:
        return tuple(range(1, self.rack_size + 1))

    # -- set-up -----------------------------------------------------------------------
    def new_match(self, inp: JsonObject) -> State:
        players = inp.get("players")
        if (
            not isinstance(players, list)
            or len(players) != 2
            or not all(isinstance(p, str) and p.strip() for p in players)
        ):
            raise BadInput("players must be a list of two names")
        for p in players:
            check_name(p)
        if players[0] == players[1]:
            raise BadInput("the two players need different names")
        key = "race_to" if self.rack_scored else "target"
        wrong = "target" if self.rack_scored else "race_to"
        if wrong in inp:
            raise BadInput(f"{self.name} is played to {key}, not {wrong}")
        goal = get_int(inp, key, 1, 100_000)
        races = self.parse_races(inp, goal)
        if races is not None:
            goal = max(races)
            races = None if races[0] == races[1] else races
        if goal is None:
            raise BadInput(f"{self.name} needs {key}")
        order = get_str(inp, "break_order", default="alternate")
        if order not in BREAK_ORDERS:
            raise BadInput(f"break_order must be one of {', '.join(BREAK_ORDERS)}")
        options = parse_options(inp.get("options"), self.name)
        clock = parse_shot_clock(inp.get("shot_clock"))  # run by the host (core/shotclock)
        # every game mixes this layer into a class with the game's foul list (FoulList)
        if clock is not None and declared_foul(cast(FoulList, self), clock.foul, False) is None:
            raise BadInput(f"shot_clock foul {clock.foul} is no foul in {self.name}")
        referee = get_bool(inp, "referee")
        if referee is not None:  # REFEREE.md §3b: the match field wins over the option
            options = tuple(sorted([o for o in options if o[0] != "referee"] + [("referee", True)]))
            if not referee:
                options = tuple(o for o in options if o[0] != "referee")
        return State(
            game=self.name,
            players=(players[0], players[1]),
            goal=goal,
            break_order=order,
            options=options,
            awaiting="lag",
            on_table=self.full_rack(),
            races=races,
        )

    def parse_races(self, inp: JsonObject, race_to: int | None) -> tuple[int, int] | None:
        """`races`: a race per player in players' order (a handicapped match); `race_to`
        is the race of both, so the two may be given together only when they agree."""
        given = inp.get("races")
        if given is None:
            return None
        if not self.rack_scored:
            raise BadInput(f"{self.name} is played to points (target): races are for rack games")
        if (
            not isinstance(given, list)
            or len(given) != 2
            or not all(type(n) is int and 1 <= n <= 100_000 for n in given)
        ):
            raise BadInput("races must be a list of two integers from 1 to 100000")
        if race_to is not None and given != [race_to, race_to]:
            raise BadInput(
                f"race_to {race_to} contradicts races {given[0]}-{given[1]}: give one of them"
            )
        return (given[0], given[1])

    def player_index(self, st: State, inp: JsonObject, key: str, default: int | None = None) -> int:
        if key not in inp:
            if default is None:
                raise BadInput(f"{key} is required")
            return default
        who = inp[key]
        if type(who) is int and who in (0, 1):
            return who
        if isinstance(who, str) and who in st.players:
            return st.players.index(who)
        raise BadInput(f"{key} must be one of the players: {st.players[0]}, {st.players[1]}")

    # -- lag (1.2; 9.1, 4.1, 4.12) ------------------------------------------------------
    def on_lag(self, st: State, inp: JsonObject, R: list[Ruling]) -> State:
        if st.awaiting != "lag":
            raise OutOfTurn("no lag is due")
        winner = self.player_index(st, inp, "winner")
        breaker = self.player_index(st, inp, "breaker", default=winner)
        R.append(
            Ruling(
                self.rule_lag,
                f"{st.players[winner]} wins the lag and chooses {st.players[breaker]} to break",
            )
        )
        return self.set_up_rack(replace(st, awaiting=None), breaker, R, new_rack=False)

    # -- racks ---------------------------------------------------------------------------
    def set_up_rack(
        self, st: State, breaker: int, R: list[Ruling], *, new_rack: bool = True
    ) -> State:
        """Rack all balls for a break by `breaker` (cue ball in hand behind the head
        string: 9.3.1, 4.3.1)."""
        fouls = (0, 0) if self.rack_scored else st.fouls  # 6.14: one rack in rack games
        st = replace(
            st,
            rack=st.rack + 1 if new_rack else st.rack,
            breaker=breaker,
            breaking=True,
            ball_in_hand="kitchen",
            on_table=self.full_rack(),
            pocketed=(),
            to_spot=(),
            call=None,
            safety=False,
            push_out=False,
            push_out_allowed=False,
            fresh_rack=False,
            groups=(None, None),
            fouls=fouls,
            awaiting=None,
            option_rule=None,
            check=None,
            # a shot held for the referee's check is dropped with the rack it was played on
            unconfirmed=() if st.check else st.unconfirmed,
        )
        return self.begin_turn(st, breaker, R)

    def begin_turn(self, st: State, player: int, R: list[Ruling]) -> State:
        """A player comes to the table: a new inning (general 36), his run starts at 0,
        and he is warned when on two fouls (6.14) so a third always counts."""
        run = (0, st.run[1]) if player == 0 else (st.run[0], 0)
        st = replace(st, at_table=player, inning=st.inning + 1, run=run)
        if self.three_fouls and st.fouls[player] == 2:
            R.append(
                Ruling(
                    "6.14",
                    f"Warning: {st.players[player]} is on two fouls; "
                    f"a third consecutive foul {self.third_foul_text}",
                )
            )
        return st

    third_foul_text = "loses the rack"

    def hand_on(self, st: State) -> State:
        """A decision (`option`) that sends a player to the table: the decision and the
        turn it leads to are one inning (general 36: a turn at play), whoever plays it, so
        the inning counted when the decider came to the table is withdrawn before
        `begin_turn` counts the turn. A player who only decides adds no inning."""
        return replace(st, inning=st.inning - 1, awaiting=None, option_rule=None)

    def next_breaker(self, st: State, winner: int) -> int:
        """General 35 (and 9.1/2.1: alternate breaks are the WPA standard)."""
        order = st.break_order
        if order == "winner":
            return winner
        if order == "loser":
            return 1 - winner
        if order == "trailing" and st.scores[0] != st.scores[1]:
            return 0 if st.scores[0] < st.scores[1] else 1
        return 1 - st.rack_breaker  # alternate (also a tie under "trailing")

    def end_rack(self, st: State, winner: int, R: list[Ruling], rule: str, why: str) -> State:
        st = replace(st, scores=add_pair(st.scores, winner, 1), rack_winner=winner)
        R.append(Ruling(rule, f"{st.players[winner]} wins rack {st.rack}: {why}"))
        if st.scores[winner] >= st.race_of(winner):
            R.append(
                Ruling(
                    "match",
                    f"{st.players[winner]} wins the match "
                    f"{st.scores[winner]}-{st.scores[1 - winner]}",
                )
            )
            return replace(
                st,
                match_winner=winner,
                awaiting=None,
                at_table=None,
                ball_in_hand=None,
                breaking=False,
                push_out_allowed=False,
            )
        breaker = self.next_breaker(st, winner)
        R.append(
            Ruling(
                self.rule_break_order,
                f"{st.players[breaker]} breaks rack {st.rack + 1} ({st.break_order} break)",
            )
        )
        return self.set_up_rack(st, breaker, R)

    # -- the match ends other than by play ------------------------------------------------
    def end_match(self, st: State, winner: int | None, ended: str) -> State:
        return replace(
            st,
            match_winner=winner,
            ended=ended,
            awaiting=None,
            at_table=None,
            ball_in_hand=None,
            breaking=False,
            call=None,
            safety=False,
            push_out=False,
            push_out_allowed=False,
            option_rule=None,
            check=None,
            unconfirmed=() if st.check else st.unconfirmed,
        )

    def on_concede(self, st: State, inp: JsonObject, R: list[Ruling]) -> State:
        """1.11: a player who concedes loses the match; the score stands as it was."""
        loser = self.player_index(st, inp, "player")
        winner = 1 - loser
        R.append(
            Ruling(
                "1.11",
                f"{st.players[loser]} concedes: {st.players[winner]} wins the match "
                f"{st.scores[winner]}-{st.scores[loser]} (a concession loses the match)",
            )
        )
        return self.end_match(st, winner, "conceded")

    def on_abandon(self, st: State, R: list[Ruling]) -> State:
        """Not a rule: the referee ends the match without a result (wrong set-up, players
        gone). The score is kept for the record; nobody wins."""
        R.append(Ruling("match", "Match abandoned by the referee: no result"))
        return self.end_match(st, None, "abandoned")

    # -- stalemate and unrestorable interference ----------------------------------------
    def on_stalemate(self, st: State, R: list[Ruling]) -> State:
        """1.12 / 9.12 / 2.9 / 3.11: the original breaker of the rack breaks again."""
        R.append(
            Ruling(
                self.rule_stalemate,
                f"Stalemate: rack replayed, {st.players[st.rack_breaker]} breaks again",
            )
        )
        return self.set_up_rack(st, st.rack_breaker, R, new_rack=False)

    def on_interference(self, st: State, R: list[Ruling]) -> State:
        """General 34: the position cannot be restored; the game is replayed with the
        same player breaking."""
        R.append(
            Ruling(
                "general 34",
                "Outside interference, position cannot be restored: "
                f"rack replayed, {st.players[st.rack_breaker]} breaks",
            )
        )
        return self.set_up_rack(st, st.rack_breaker, R, new_rack=False)
