"""One table's game: a rules `Referee` fed with sensed shots and referee input.

The rules engine (`railbird.rules`) is imported lazily; without it (or without a configured
game) a table still assembles and journals shots, it just has no game state.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from railbird.core import breakmodel
from railbird.core.lifecycle import IN_PROGRESS, NO_GAME, complete_match
from railbird.core.revision import state_rev
from railbird.rules.inputs import SHOT_FACTS, referee_drop  # REFEREE.md §3a, §3c
from railbird.rules.shotfacts import add_entered

if TYPE_CHECKING:
    from railbird.rules import Referee, RulesError, State

    # the engine's Referee, RulesError and to_fen (None: the engine has no FEN writer)
    _Rules = tuple[type[Referee], type[RulesError], Callable[[State], str] | None]

EARLIER_KEPT = 4  # matches a new `match` replaced, kept so that `undo` can bring one back


def _rules() -> _Rules | None:
    try:
        from railbird.rules import Referee, RulesError
    except Exception:  # noqa: BLE001 - engine missing or broken: shots still flow
        return None
    try:
        from railbird.rules import to_fen as fen_writer
    except Exception:  # noqa: BLE001 - no FEN is a lesser loss than no game
        return Referee, RulesError, None
    return Referee, RulesError, fen_writer


# Shot warnings (docs/shots.md §8) after which the pocketed facts may be incomplete.
_POCKETED_DOUBT = ("lost:", "jam:")


def object_balls_bound(shot: Mapping[str, Any], state: dict[str, Any] | None) -> int | None:
    """How many object balls can have reached a rail on this shot: the object balls on the
    table (with those the referee is to spot) less the object-ball drops sensed on the shot
    (a drop not paired with the cue detector). None without a game state."""
    if not isinstance(state, dict) or state.get("balls_on_table") is None:
        return None
    on_table = set(state.get("balls_on_table") or ()) | set(state.get("to_spot") or ())
    drops = sum(1 for p in shot["pocketed"] if p.get("ball") != 0)
    return max(0, len(on_table) - drops)


def shot_input(
    shot: Mapping[str, Any], lip_policy: str = "warn", state: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Convert an assembled shot into the rules' `shot` input (protocol/REFEREE.md).

    `shot` is a `railbird.core.shots.Shot`, as assembled or as read back from JSON (a
    Mapping: only read). `state` is the table's game state (the rules' output dict) the
    shot is played in.

    Sensors cannot see the first ball contacted, balls off the table or double hits: those
    are left out, so the rules apply the fair default (protocol/REFEREE.md §3).
    `rail_after_contact` is inferred from any rail contact in the shot.

    `object_balls_to_rail` (docs/shots.md: rail-hit clusters in the first 2 s) is sent only
    on a break (`state["breaking"]`), the only shot where the rules use it, bounded by the
    object balls that can have reached a rail (`object_balls_bound`) and flagged uncertain:
    it is an estimate, which the rules bound rather than refuse and the referee may correct.
    With it goes `object_balls_to_rail_range` (the range the rail hits support), bounded
    alike: a ruling that depends on where in it the truth lies waits for the referee or is
    provisional (REFEREE.md §3b). Without a state (no game) both are sent on every shot.

    Each pocketed entry keeps its `source` and time `t`: a drop paired with the cue
    detector is the cue ball by inference (`"inferred"`), which the rules treat as an
    uncertain fact (REFEREE.md §3a) that the referee may `confirm` or correct. The shot
    also names in `uncertain`: `off_table` when the cue detector saw the cue ball without a
    drop (a scratch is assumed), and `pocketed` when a beam lost edges or jammed (a ball
    may be missing), and `rail_after_contact` on a shot that opened at a strike and then
    sensed no rail and no pocket (a soft safety: a no-rail foul candidate). Play goes on as
    sensed, except where such a fact decides the ruling: then the rules wait for the referee
    or rule the fair default, provisional (REFEREE.md §3b)."""
    pocketed = []
    for p in shot["pocketed"]:
        item = {"pocket": p["pocket"]}
        if p.get("ball") is not None:
            item["ball"] = p["ball"]
        if p.get("source") is not None:
            item["source"] = p["source"]
        if isinstance(p.get("t"), int):
            item["t"] = p["t"]
        if lip_policy == "rule" and p.get("lip") and shot.get("rest_before") is not None:
            item["rested_us"] = shot["rest_before"]
        pocketed.append(item)
    inp = {"type": "shot", "pocketed": pocketed, "rail_after_contact": bool(shot["rails"])}
    uncertain = set()
    breaking = None if state is None else bool(state.get("breaking"))
    estimate = shot.get("object_balls_to_rail")
    if estimate is not None and breaking is not False:
        bound = object_balls_bound(shot, state)
        estimate = estimate if bound is None else min(estimate, bound)
        span = shot.get("object_balls_to_rail_range")
        cue_ball: bool | None = None  # the break model's word on the cue ball's rail
        if span is not None:
            # what the rail sensors support (core/railballs.py): the rules rule it only if
            # every value in it rules alike (REFEREE.md §3b)
            hi = span[1] if bound is None else min(span[1], bound)
            lo = min(span[0], hi)
            if breaking and state is not None:
                # The break model (core/breakmodel.py) narrows the range, and says the cue
                # ball's rail, where it is confident enough: a break is ruled, not held
                d = breakmodel.decide_shot(shot, lo, hi, state.get("game"))
                lo, hi, cue_ball = d.lo, d.hi, d.cue_ball_to_rail
                inp["comment"] = f"break model: {d.confidence.text()}"
            inp["object_balls_to_rail_range"] = [lo, hi]
            estimate = min(max(estimate, lo), hi)
        inp["object_balls_to_rail"] = estimate
        uncertain.add("object_balls_to_rail")
        if breaking and cue_ball is not None:
            inp["cue_ball_to_rail"] = cue_ball
        elif breaking:
            # The rail sensors cannot tell the cue ball's hits from an object ball's (14.1
            # 4.3.2 needs the cue ball to a rail): not sensed, flagged, so a ruling that
            # depends on it is never a guess (REFEREE.md §3b)
            uncertain.add("cue_ball_to_rail")
    inp["t_us"] = shot["start"]
    inp["source"] = "sensed"
    if shot.get("cue_unpaired"):
        # The cue detector saw the cue ball in the return but no beam saw it drop (a lost
        # edge): a scratch with an unknown pocket. The rules treat a cue ball off the table
        # exactly like one pocketed (both are `scratch`), so it is passed that way, as an
        # inferred fact the referee can confirm or correct.
        inp["off_table"] = [0]
        uncertain.add("off_table")
    if any(str(w).startswith(_POCKETED_DOUBT) for w in shot.get("warnings") or ()):
        uncertain.add("pocketed")
    if shot.get("strike") and not shot["rails"] and not pocketed and not shot.get("cue_unpaired"):
        # A stroke (the strike sensor heard it) that reached no rail and pocketed nothing: a
        # no-rail foul (6.3) as sensed, unless a touch too soft for the rail sensors did
        # reach one. The foul depends on it, so the rules hold the shot for the referee or
        # rule the fair default (no foul), provisional (REFEREE.md §3b).
        uncertain.add("rail_after_contact")
    if uncertain:
        inp["uncertain"] = sorted(uncertain)
    return inp


def referee_facts(inp: dict[str, Any]) -> dict[str, Any]:
    """The shot facts of a `confirm` input (empty: a plain confirmation)."""
    if not isinstance(inp, dict) or inp.get("type") != "confirm":
        return {}
    return {k: inp[k] for k in SHOT_FACTS if k in inp}


def with_referee_facts(inp: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any]:
    """The sensed shot input `inp` with the referee's `facts` (a `confirm`'s shot facts):
    each given fact replaces the sensed one, as a `confirm` correction does (REFEREE.md
    §3a), and is certain (no longer `uncertain`; pocketed entries lose `source`)."""
    out = dict(inp)
    for k in SHOT_FACTS:
        if k in facts:
            out[k] = copy.deepcopy(facts[k])
    if "object_balls_to_rail" in facts:  # the referee's count replaces the sensors' range
        out.pop("object_balls_to_rail_range", None)
    if isinstance(out.get("pocketed"), list) and "pocketed" in facts:
        out["pocketed"] = [referee_drop(p) for p in out["pocketed"]]
    given = [k for k in SHOT_FACTS if k in facts]
    if given:  # the shot's facts view marks them as the referee's (REFEREE.md §3c)
        add_entered(out, given)
    unc = [u for u in out.get("uncertain") or () if u not in facts]
    if unc:
        out["uncertain"] = unc
    else:
        out.pop("uncertain", None)
    return out


class Game:
    """Wraps a Referee; every call returns (ok, result) and never raises.

    It is also the match layer of the host (core/lifecycle.py): a `match` input starts a
    new match when none is in progress, filling what it leaves out from the last match or
    the table's config (`defaults`); `undo` right after it brings the replaced match back.
    Every state it returns carries `valid_inputs` (railbird.rules.valid)."""

    def __init__(
        self, match: dict[str, Any] | None, defaults: dict[str, Any] | None = None
    ) -> None:
        self.match = match
        self.defaults = match if defaults is None else defaults
        self.referee: Referee | None = None
        self.error: str | None = None
        # (referee, match) replaced by a new match, newest last
        self._earlier: list[tuple[Referee, dict[str, Any] | None]] = []
        self._mod = _rules()
        if match is not None:
            self._new(match)

    @property
    def available(self) -> bool:
        return self.referee is not None

    @property
    def game(self) -> str | None:
        game: str | None = (self.match or {}).get("game")
        return game

    def _new(self, match: dict[str, Any]) -> None:
        if self._mod is None:
            self.error = "rules engine not available"
            return
        Referee = self._mod[0]
        try:
            self.referee = Referee(copy.deepcopy(match))
            self.match = match
        except Exception as e:  # noqa: BLE001 - RulesError or a bug: no game, and why
            self.referee = None
            self.error = f"match refused: {e}"

    def check_facts(self, facts: dict[str, Any]) -> str | None:
        """The form of a `confirm`'s shot facts (types, ranges): None, or why it is bad.
        Whether they fit the table is known only when the shot is ruled."""
        try:
            from railbird.rules.inputs import parse_shot
        except Exception:  # noqa: BLE001 - no engine: the game refuses everything anyway
            return None
        try:
            parse_shot(copy.deepcopy(facts))
        except Exception as e:  # noqa: BLE001 - RulesError or a bug: the facts are refused
            return str(e) or type(e).__name__
        return None

    def state(self) -> dict[str, Any] | None:
        if self.referee is None:
            return None
        st = _as_json(self.referee)
        return st if not isinstance(st, dict) else dict(st, valid_inputs=self.valid_inputs())

    def snapshot(self) -> dict[str, Any] | None:
        """{"state", "fen"} of the current game (no announcements), or None."""
        if self.referee is None:
            return None
        r = self._result(_as_json(self.referee), self.referee)
        return {"state": r["state"], "fen": r["fen"]}

    def revision(self) -> str | None:
        """The current state's revision (core/revision.py), or None: no match, no line."""
        to_fen = self._mod[2] if self._mod else None
        if self.referee is None or to_fen is None:
            return None
        try:
            fen = to_fen(self.referee.state)
        except Exception:  # noqa: BLE001 - a state without a line has no revision (_result)
            return None
        return state_rev(fen)

    def in_progress(self) -> bool:
        """A match that has begun (an input was applied) and is not over."""
        ref = self.referee
        return ref is not None and not ref.state.over and ref.applied > 0

    def feed(self, inp: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        """-> (True, {"state", "fen", "announcements"}) or (False, {"error"})."""
        if inp.get("type") == "match":
            return self._new_match(inp)
        if inp.get("type") == "undo" and self._earlier:
            # (a replaced match implies a current one)
            assert self.referee is not None
            if self.referee.applied == 0:
                return self._undo_match()
        if self.referee is None:
            return False, {"error": self.error or "no game configured for this table"}
        try:
            st = self.referee.feed(copy.deepcopy(inp))
        except Exception as e:  # noqa: BLE001 - RulesError or a bug: state unchanged
            return False, {"error": str(e) or type(e).__name__}
        return True, self._result(st, self.referee)

    def _new_match(self, inp: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        if self._mod is None:
            return False, {"error": "rules engine not available"}
        if self.in_progress():
            return False, {"error": IN_PROGRESS}
        match = complete_match(inp, self.match, self.defaults)
        if "game" not in match:
            return False, {"error": NO_GAME}
        try:
            ref = self._mod[0](copy.deepcopy(match))
        except Exception as e:  # noqa: BLE001 - a RulesError names what is wrong
            return False, {"error": f"match refused: {e}"}
        if self.referee is not None:
            self._earlier.append((self.referee, self.match))
            del self._earlier[:-EARLIER_KEPT]
        self.referee, self.match = ref, match
        return True, self._result(_as_json(ref), ref)

    def _undo_match(self) -> tuple[bool, dict[str, Any]]:
        """`undo` of a `match`: the match it replaced comes back as it was."""
        ref, match = self._earlier.pop()
        assert self.referee is not None  # a replaced match implies a current one
        dropped = self.referee.state.players
        text = f"Undo: the new match ({dropped[0]} v {dropped[1]}) is withdrawn"
        ref.announcements = [{"text": text + "; the previous match is back", "rule": "1.8"}]
        self.referee, self.match = ref, match
        return True, self._result(_as_json(ref), ref)

    def valid_inputs(self, ref: Referee | None = None) -> list[dict[str, Any]]:
        """The inputs acceptable now (railbird.rules.valid), or only `match` without a
        match on the table."""
        ref = ref or self.referee
        if ref is None:
            return [{"type": "match"}] if self._mod is not None else []
        from railbird.rules.valid import valid_inputs

        return valid_inputs(
            ref.state,
            undo=ref.applied > 0 or bool(self._earlier),
            correct=ref.correctable(),
            fresh=ref.applied == 0,
            facts=ref.shot_facts(),
        )

    def _result(self, st: dict[str, Any] | None, ref: Referee) -> dict[str, Any]:
        fen = None
        to_fen = self._mod[2] if self._mod else None
        if to_fen is not None:
            try:
                fen = to_fen(ref.state)
            except Exception:  # noqa: BLE001 - a state without a FEN still counts
                fen = None
        from railbird.rules.state import ruling_level

        anns = []
        for a in getattr(ref, "announcements", None) or []:
            a = dict(a)
            a.setdefault("rule", None)
            # the engine's level, never a guess from the words ("no foul" is no foul)
            a.setdefault("level", ruling_level(a))
            anns.append(a)
        if isinstance(st, dict):
            st = dict(st, valid_inputs=self.valid_inputs(ref))
        return {"state": st, "fen": fen, "announcements": anns}


def _as_json(ref: Referee) -> dict[str, Any] | None:
    f = getattr(ref, "state_json", None)
    if callable(f):
        st_json: dict[str, Any] | None = f()
        return st_json
    st = getattr(ref, "state", None)
    return st if isinstance(st, dict) else None
