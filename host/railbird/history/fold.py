"""The history fold: the journal's `state` and `shot` records of every table, in journal
order, folded into matches and pocket drops. Pure: no I/O, no clock (the records carry the
wall-clock time of the input that produced them); `railbird.history.store` feeds it from the
journal and keeps what it gives.

    fold = Fold()
    changed = fold.state({"id": 7, "venue": "club", "table": "t1", "wall": 1764270000.0,
                          "state": {...}, "announcements": [...], "cause": "lag"})
    drops = fold.shot({"venue": "club", "table": "t1", "n": 3, "wall": ..., "shot": {...}})

A match (protocol/REFEREE.md §2 and §9) begins with a `match` input's state, or, for the
match a table's config names, with the first state of the table; the next `match` closes it.
Per match: players, game, race or target, start (the wall-clock time of its first applied
input, usually the lag) and end (of the input that decided it), the result (`won`,
`conceded`, `abandoned`, or `in progress`), the winner, the scores, racks (the state's `rack`:
racks set up), innings (the state's `inning`), and per player:

- fouls: the rulings "Foul by <player>: ..." and "Foul on the break by <player>: ...", one
  per foul (several fouls on one shot are one foul, general 29);
- high run: in 14.1 the longest run of points in one inning (the largest `run` of the state
  sequence); in the rack games the most racks won in a row;
- balls: object balls the pocket sensors saw drop while the player was at the table (the cue
  ball is counted apart, as `cue`).

Undo (REFEREE.md §9) withdraws the last input: every applied input pushes the match's counts
and undo pops them, so a withdrawn foul or rack is no longer counted; a correction of the
last shot (a `confirm` with facts, §3a) rules that shot and the inputs after it again, so
their counts are replaced. An undo of a `match` brings the replaced match back. Balls that
dropped stay counted through an undo: they did drop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

CORRECTION = "The referee corrects the last shot"  # railbird.rules.referee, ruling 1.10
FOUL_PREFIXES = ("Foul by ", "Foul on the break by ")
EARLIER_KEPT = 4  # replaced matches kept for an undo of `match` (railbird.core.game)
_GOAL = re.compile(r"(?:^| )goal=(\d+)(?: |$)")


def goal_of(fen) -> int | None:
    """The race (rack games) or target (14.1) from the state's FEN (`goal=N`)."""
    m = _GOAL.search(fen) if isinstance(fen, str) else None
    return int(m.group(1)) if m else None


def fouls_by(announcements, players) -> tuple[int, int]:
    """How many fouls the rulings of one input give each player."""
    n = [0, 0]
    for a in announcements or ():
        text = str(a.get("text", "")) if isinstance(a, dict) else ""
        for i, p in enumerate(players):
            if any(text.startswith(f"{pre}{p}:") for pre in FOUL_PREFIXES):
                n[i] += 1
    return n[0], n[1]


def _pair(d, players, default=0) -> tuple:
    d = d if isinstance(d, dict) else {}
    return tuple(d.get(p, default) for p in players)


@dataclass
class Entry:
    """The match's counts after one applied input (the base entry: before any)."""

    state: dict | None
    cause: str | None
    wall: float | None
    fouls: tuple = (0, 0)
    high_runs: tuple = (0, 0)
    streak: tuple = (None, 0)  # rack games: (player index, racks won in a row)
    end: float | None = None

    def next(self, state: dict, announcements, cause, wall, players, game) -> Entry:
        f = fouls_by(announcements, players)
        fouls = (self.fouls[0] + f[0], self.fouls[1] + f[1])
        high, streak = list(self.high_runs), self.streak
        if game == "14.1":
            run = _pair(state.get("run"), players)
            high = [max(high[i], int(run[i] or 0)) for i in (0, 1)]
        elif state.get("rack_winner") in players:
            w = players.index(state["rack_winner"])
            streak = (w, streak[1] + 1 if streak[0] == w else 1)
            high[w] = max(high[w], streak[1])
        over = state.get("match_winner") is not None or state.get("ended") is not None
        end = (self.end if self.end is not None else wall) if over else None
        return Entry(_trim(state), cause, wall, fouls, tuple(high), streak, end)


_KEPT = ("players", "at_table", "scores", "inning", "rack", "rack_winner", "match_winner")
_KEPT += ("ended", "run", "game")


def _trim(state: dict) -> dict:
    return {k: state[k] for k in _KEPT if k in state}


@dataclass
class Match:
    id: int  # the id of the match's first state record (unique in the journal)
    venue: str
    table: str
    game: str | None
    players: tuple
    goal: int | None
    entries: list = field(default_factory=list)  # [base, one per applied input]
    balls: list = field(default_factory=lambda: [0, 0])
    cue: list = field(default_factory=lambda: [0, 0])
    start_hint: float | None = None  # start kept by the store when the inputs are gone

    @property
    def begun(self) -> bool:
        return len(self.entries) > 1

    @property
    def top(self) -> Entry:
        return self.entries[-1]

    @property
    def start(self) -> float | None:
        return self.entries[1].wall if self.begun else None

    def push(self, state, announcements, cause, wall) -> None:
        self.entries.append(
            self.top.next(state, announcements, cause, wall, self.players, self.game)
        )

    def undo(self) -> None:
        if self.begun:
            self.entries.pop()

    def correct(self, state, announcements, wall) -> None:
        """The last shot ruled again with the referee's facts, and every later input applied
        again (railbird.rules.Referee._correct): their entries are replaced."""
        later = 0
        for i in range(len(self.entries) - 1, 0, -1):
            if self.entries[i].cause == "shot":
                later = len(self.entries) - 1 - i
                del self.entries[i:]
                break
        else:
            later = -1  # no shot to correct: the engine refuses that; count it as an input
        new = self.top.next(state, announcements, "shot", wall, self.players, self.game)
        self.entries.append(new)
        for _ in range(max(0, later)):
            self.entries.append(Entry(new.state, "again", new.wall, new.fouls, new.high_runs,
                                      new.streak, new.end))  # fmt: skip

    def result(self) -> tuple[str, str | None]:
        st = self.top.state or {}
        winner = st.get("match_winner")
        if st.get("ended") == "abandoned":
            return "abandoned", None
        if st.get("ended") == "conceded":
            return "conceded", winner
        if winner is not None:
            return "won", winner
        return "in progress", None

    def as_dict(self) -> dict:
        """The match as the history keeps and exports it (per-player values in the order of
        `players`)."""
        st = self.top.state or {}
        result, winner = self.result()
        scores = _pair(st.get("scores"), self.players)
        start = self.start if self.start is not None else self.start_hint
        return {
            "id": self.id,
            "venue": self.venue,
            "table": self.table,
            "game": self.game,
            "players": list(self.players),
            "goal": self.goal,
            "start": start,
            "end": self.top.end if result != "in progress" else None,
            "result": result,
            "winner": winner,
            "scores": [int(s or 0) for s in scores],
            "racks": int(st.get("rack") or (1 if self.begun else 0)),
            "innings": int(st.get("inning") or 0),
            "high_runs": list(self.top.high_runs),
            "fouls": list(self.top.fouls),
            "balls": list(self.balls),
            "cue": list(self.cue),
            "begun": self.begun,
        }


@dataclass
class Drop:
    """One ball the pocket sensors saw drop."""

    venue: str
    table: str
    shot: int  # the shot's number on the table
    i: int  # its place among the shot's drops
    wall: float | None
    pocket: str | None
    ball: int | None  # 0: the cue ball; None: an object ball not identified
    player: str | None  # at the table when the shot was played
    match: int | None

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class _Table:
    def __init__(self):
        self.match: Match | None = None
        self.earlier: list[Match] = []  # replaced matches, newest last


class Fold:
    def __init__(self):
        self.tables: dict[tuple[str, str], _Table] = {}

    def _table(self, venue, table) -> _Table:
        return self.tables.setdefault((venue, table), _Table())

    def current(self, venue, table) -> Match | None:
        t = self.tables.get((venue, table))
        return None if t is None else t.match

    def state(self, rec: dict) -> list[Match]:
        """A `state` record -> the matches it changed (usually one)."""
        st = rec.get("state")
        if not isinstance(st, dict) or not isinstance(st.get("players"), list):
            return []
        t = self._table(rec["venue"], rec["table"])
        cause, wall, anns = rec.get("cause"), rec.get("wall"), rec.get("announcements")
        if cause == "shot_clock":  # the shot clock moved, not the game (core/shotclock.py)
            return []
        m = t.match
        if m is not None and cause not in ("match", "undo", "confirm"):
            over = m.result()[0] != "in progress"
            if over or list(m.players) != st["players"][:2]:
                m = None  # play on a finished match, or other players: the table's game was
                # set up afresh (a restart with another config), as a configured match
        if cause == "match" or m is None:
            m = t.match
            if m is not None:
                t.earlier.append(m)
                del t.earlier[:-EARLIER_KEPT]
            m = t.match = self._new(rec, st)
            if cause != "match":  # a configured match: this is its first input
                m.push(st, anns, cause, wall)
            return [m]
        if cause == "undo" and not m.begun:
            # an undo of `match`: the match it replaced is back as it was
            back = t.earlier.pop() if t.earlier else None
            if back is not None and list(back.players) == st["players"]:
                t.match = back
                return [m, back]
            t.match = self._new(rec, st)
            return [m, t.match]
        if cause == "undo":
            m.undo()
        elif cause == "confirm" and any(
            str(a.get("text", "")).startswith(CORRECTION) for a in anns or () if isinstance(a, dict)
        ):
            m.correct(st, anns, wall)
        else:
            m.push(st, anns, cause, wall)
        return [m]

    def _new(self, rec, st) -> Match:
        players = tuple(st["players"][:2])
        return Match(
            id=rec["id"],
            venue=rec["venue"],
            table=rec["table"],
            game=rec.get("game") or st.get("game"),
            players=players,
            goal=goal_of(rec.get("fen") or st.get("fen")),
            entries=[Entry(_trim(st) if rec.get("cause") == "match" else None, "match", None)],
        )

    def shot(self, rec: dict) -> tuple[list[Drop], Match | None]:
        """A `shot` record -> its drops, and the match it counted for (or None)."""
        shot = rec.get("shot") or {}
        m = self.current(rec["venue"], rec["table"])
        player = None
        if m is not None and m.result()[0] == "in progress":
            at = (m.top.state or {}).get("at_table")
            player = at if at in m.players else None
        else:
            m = None
        drops = []
        for i, p in enumerate(shot.get("pocketed") or ()):
            if not isinstance(p, dict):
                continue
            ball = p.get("ball")
            drops.append(
                Drop(
                    rec["venue"],
                    rec["table"],
                    int(shot.get("n", rec.get("n", 0))),
                    i,
                    rec.get("wall"),
                    p.get("pocket"),
                    ball if isinstance(ball, int) else None,
                    player,
                    None if m is None else m.id,
                )
            )
            if player is not None:
                k = m.players.index(player)
                if ball == 0:
                    m.cue[k] += 1
                else:
                    m.balls[k] += 1
        return drops, (m if drops and m is not None else None)
