"""`Referee`: one match with its input history (for undo/correction), the API the host
daemon and the web scoreboard use."""

from __future__ import annotations

from .engine import apply, new_match
from .errors import OutOfTurn
from .inputs import input_type
from .jsonview import state_to_json
from .state import Ruling


class Referee:
    """Feed input dicts one at a time; `feed` returns the output state dict. A bad input
    raises RulesError and changes nothing."""

    def __init__(self, match: dict):
        self.state = new_match(match)
        self._history: list = []  # (state, announcements) before each applied input
        self.announcements: list[dict] = [Ruling("match", f"{self.state.game} match: "
                                                 f"{self.state.players[0]} v "
                                                 f"{self.state.players[1]}; lag for the break "
                                                 f"(1.2)").as_dict()]

    def feed(self, inp: dict) -> dict:
        if input_type(inp) == "undo":
            if not self._history:
                raise OutOfTurn("nothing to undo")
            self.state, previous = self._history.pop()
            self.announcements = [Ruling("1.8", "Undo: the last input is withdrawn and the "
                                                "position and scores restored").as_dict()]
            return self.state_json()
        state, announcements = apply(self.state, inp)
        self._history.append((self.state, self.announcements))
        self.state, self.announcements = state, announcements
        return self.state_json()

    def state_json(self) -> dict:
        return state_to_json(self.state, self.announcements)
