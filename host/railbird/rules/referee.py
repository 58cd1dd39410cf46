"""`Referee`: one match with its input history (for undo/correction), the API the host
daemon and the web scoreboard use."""

from __future__ import annotations

import copy
from collections.abc import Sequence

from .engine import apply, apply_traced, new_match
from .errors import OutOfTurn, RulesError
from .inputs import SHOT_FACTS, JsonObject, input_type, referee_drop
from .jsonview import state_to_json
from .shotfacts import ShotFacts, add_entered, shot_facts
from .state import Ruling, State


class Referee:
    """Feed input dicts one at a time; `feed` returns the output state dict. A bad input
    raises RulesError and changes nothing."""

    def __init__(self, match: JsonObject):
        self.state = new_match(match)
        # (state, announcements, input) before each applied input, oldest first.
        self._history: list[tuple[State, list[dict[str, str]], JsonObject]] = []
        self._produced = self.state  # to notice a state set from outside (e.g. from_fen)
        # (the shot input and state it was built for, the view): shot_facts is asked for
        # with every state the host publishes, and a view changes only with them
        self._facts_cache: tuple[JsonObject, State, JsonObject | None] | None = None
        self.announcements: list[dict[str, str]] = [
            Ruling(
                "match",
                f"{self.state.game} match: "
                f"{self.state.players[0]} v "
                f"{self.state.players[1]}; lag for the break "
                f"(1.2)",
            ).as_dict()
        ]

    def feed(self, inp: JsonObject) -> JsonObject:
        kind = input_type(inp)
        if kind == "undo":
            if not self._history:
                raise OutOfTurn("nothing to undo")
            self.state = self._history.pop()[0]
            self._produced = self.state
            self.announcements = [
                Ruling(
                    "1.8", "Undo: the last input is withdrawn and the position and scores restored"
                ).as_dict()
            ]
            return self.state_json()
        if (
            kind == "confirm"
            and any(k in inp for k in SHOT_FACTS)
            and self.state.awaiting != "referee_check"  # the answer to a held shot (§3b)
        ):
            return self._correct(inp)
        state, announcements = apply(self.state, inp)
        self._history.append((self.state, self.announcements, copy.deepcopy(inp)))
        self.state, self.announcements = state, announcements
        self._produced = state
        return self.state_json()

    def _correct(self, inp: JsonObject) -> JsonObject:
        """`confirm` with facts: the referee's facts replace those of the last shot. The
        shot is applied again to the state before it, then every later input (calls,
        options, ...) is applied again in order. If one no longer applies, the correction
        is refused and nothing changes. The corrected shot replaces the original in the
        history, so `undo` afterwards withdraws the latest input as usual."""
        if self.state is not self._produced:
            raise OutOfTurn("no shot history for this state: undo and re-send the shot")
        idx = next(
            (
                i
                for i in range(len(self._history) - 1, -1, -1)
                if self._history[i][2].get("type") == "shot"
            ),
            None,
        )
        if idx is None:
            raise OutOfTurn("there is no shot to correct")
        pre, pre_anns, original = self._history[idx]
        later = self._history[idx + 1 :]
        changed = sorted(k for k in SHOT_FACTS if k in inp)
        corrected, answered = _in_force(original, later)
        in_force = copy.deepcopy(corrected)
        if answered:
            later = later[1:]
        flagged = list(corrected.pop("uncertain", None) or ())
        for key in changed:
            corrected[key] = inp[key]
        if "object_balls_to_rail" in changed:  # the referee's count replaces the range
            corrected.pop("object_balls_to_rail_range", None)
        # The referee's facts are certain; the facts he leaves stand as they were, flags
        # included, so a sensor estimate stays an estimate (bounded, not refused: §3a).
        flagged = [f for f in flagged if f not in changed]
        if flagged:
            corrected["uncertain"] = flagged
        if "pocketed" in changed and isinstance(corrected["pocketed"], list):
            corrected["pocketed"] = [referee_drop(p) for p in corrected["pocketed"]]
        # what the shot's facts view marks as the referee's (§3c)
        add_entered(corrected, changed)
        state, traced = apply_traced(pre, corrected)
        rulings = [r.as_dict() for r in traced]
        after = shot_facts(pre, corrected, state, traced)
        head = (
            # §3c: the facts in force made his (a one-tap confirm): no fact changed, only
            # who vouches for it, and he is told so, not that the shot was corrected
            f"The referee confirms the last shot ({', '.join(changed)}) as ruled"
            if _same_facts(shot_facts(pre, in_force, self.state), after)
            else f"The referee corrects the last shot ({', '.join(changed)}); it is ruled again"
        )
        rulings = [Ruling("1.10", head).as_dict(), *rulings]
        history = [*self._history[:idx], (pre, pre_anns, corrected)]
        for _, _, again in later:
            try:
                new, anns = apply(state, again)
            except RulesError as exc:
                raise OutOfTurn(
                    f"the correction conflicts with a later input "
                    f"({again.get('type')}: {exc}); undo that input first"
                ) from None
            history.append((state, rulings, again))
            state = new
            rulings = rulings + anns
        self._history = history
        self.state, self.announcements = state, rulings
        self._produced = state
        return self.state_json()

    def state_json(self) -> JsonObject:
        return state_to_json(self.state, self.announcements)

    # -- what the history allows (railbird.rules.valid) ---------------------------------
    @property
    def applied(self) -> int:
        """How many inputs the history holds: what `undo` can withdraw."""
        return len(self._history)

    def last_shot(self) -> JsonObject | None:
        """The newest `shot` input of the history: the one a correction rules again."""
        for _, _, inp in reversed(self._history):
            if inp.get("type") == "shot":
                shot: JsonObject = copy.deepcopy(inp)
                return shot
        return None

    def shot_facts(self) -> JsonObject | None:
        """The facts in force of the shot a correction would rule again, each marked
        sensed, presumed or the referee's, and the `confirm` that confirms them as ruled
        (REFEREE.md §3c); None when there is no such shot (`correctable`)."""
        if not self.correctable():
            return None
        idx = next(
            i
            for i in range(len(self._history) - 1, -1, -1)
            if self._history[i][2].get("type") == "shot"
        )
        pre, _, original = self._history[idx]
        cached = self._facts_cache
        if cached is not None and cached[0] is original and cached[1] is self.state:
            return copy.deepcopy(cached[2])
        shot, _ = _in_force(original, self._history[idx + 1 :])
        view = shot_facts(pre, shot, self.state)
        out = None if view is None else view.as_dict()
        self._facts_cache = (original, self.state, out)
        return copy.deepcopy(out)

    def correctable(self) -> bool:
        """Whether a `confirm` with facts finds a shot to rule again whose later inputs
        still apply when its facts are restated: a shot in the history, not a void
        (`replay`) shot, and no plain `confirm` after it (that confirm would find nothing
        left to confirm once the shot is ruled with certain facts)."""
        if self.state is not self._produced:
            return False
        for pre, _, inp in reversed(self._history):
            kind = inp.get("type")
            if kind == "shot":
                return not inp.get("replay")
            if kind == "confirm" and not _answers_check((pre, None, inp)):
                return False
        return False


def _same_facts(a: ShotFacts | None, b: ShotFacts | None) -> bool:
    """The same facts in force, whoever gave them (§3c)."""
    if a is None or b is None:
        return False
    return [(d.ball, d.pocket, d.restored) for d in a.drops] == [
        (d.ball, d.pocket, d.restored) for d in b.drops
    ] and {f.name: f.value for f in a.facts} == {f.name: f.value for f in b.facts}


def _in_force(
    shot: JsonObject, later: Sequence[tuple[State, object, JsonObject]]
) -> tuple[JsonObject, bool]:
    """-> (the shot input in force, whether the first of `later` is the referee's answer
    to it). A shot held for his check (§3b) and answered has his answer folded in: every
    fact was certain, and his, from then on."""
    out = {k: v for k, v in shot.items() if k != "replay"}
    if later and _answers_check(later[0]):
        answer = later[0][2]
        given = [k for k in SHOT_FACTS if k in answer]
        out.update({k: answer[k] for k in given})
        out.pop("object_balls_to_rail_range", None)
        out.pop("uncertain", None)
        add_entered(out, given)
        return out, True
    return out, False


def _answers_check(entry: tuple[State, object, JsonObject]) -> bool:
    """A history entry that is the referee's answer to a shot held for his check."""
    pre, _, inp = entry
    return bool(inp.get("type") == "confirm" and pre.awaiting == "referee_check")
