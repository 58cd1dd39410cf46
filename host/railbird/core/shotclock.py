"""The shot clock of one table: a pure state machine over table time (integer µs).

It reads no clock: every transition is given its time (an event's, a tick's release point,
a referee input's receive time), so a journal replay makes the same clock (docs/displays.md
"Shot clock"). The settings are the match's `shot_clock` (`railbird.rules.shotclock`).

The sensors hear the tip (the strike sensor) and every ball's activity, but know the table
is at rest only `quiet_ms` after the last activity, and cannot see a ball spinning in
place. So a shot's count starts when the shot before it closed, *backdated* to that shot's
last sensed activity (`backdated` says so), and stops at the next sensed activity: the
strike when a strike sensor heard it, else the first drop, cue or rail event, which is late
by the cue ball's travel to it (`stop` says which). With cue ball in hand, or while a 14.1
rack is being racked, the count waits for the referee's `placed` (the cue ball is placed, the
rack is done). The referee or timekeeper can hold, resume, restart and adjust it and give
an extension. Running out is never ruled here: the clock shows `expired` with the foul the
event names as a proposal, which the referee accepts (a `shot` with that foul) or dismisses.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from railbird.rules.shotclock import ShotClockSettings

SECOND_US = 1_000_000


class ClockStatus(StrEnum):
    IDLE = "idle"  # no shot is being timed: a decision, the lag, the end of the match
    WAITING = "waiting"  # a shot is due, timing starts at the referee's `placed`
    RUNNING = "running"
    HELD = "held"  # the referee holds it; `remaining_us` is what is left
    STOPPED = "stopped"  # the shot was played (`stop`: how the host knew)
    EXPIRED = "expired"  # time ran out: the foul is proposed until accepted or dismissed


class WaitFor(StrEnum):
    CUE_BALL = "cue_ball"  # cue ball in hand: the referee says when it is placed
    RACK = "rack"  # a 14.1 re-rack: the referee says when the rack is done


class StopBy(StrEnum):
    STRIKE = "strike"  # the strike sensor heard the tip
    ACTIVITY = "activity"  # the shot's first sensed drop, cue or rail event: late


class ClockAction(StrEnum):
    """The referee's `clock` input (protocol/REFEREE.md §9b)."""

    HOLD = "hold"
    RESUME = "resume"
    RESTART = "restart"
    ADJUST = "adjust"  # set what is left to `seconds`
    EXTENSION = "extension"
    PLACED = "placed"  # the cue ball is placed / the rack is done
    DISMISS = "dismiss"  # the time foul is not given


class ClockError(ValueError):
    """A clock input that does not fit the clock now (refused with this reason)."""


@dataclass(frozen=True, slots=True)
class Turn:
    """What the last game state said about the clock (kept with the clock)."""

    key: tuple[Any, ...] = ()
    breaking: bool = False  # the next shot is a break
    shots_in_rack: int = 0  # shots since the rack was set up
    rack_broken: bool = True  # the rack began with a break (not a 14.1 re-rack of 14)


@dataclass(frozen=True, slots=True)
class ShotClock:
    settings: ShotClockSettings
    status: ClockStatus = ClockStatus.IDLE
    player: int | None = None  # the player being timed (index)
    rack: int | None = None  # the rack the extensions counted are of
    extensions_used: tuple[int, int] = (0, 0)
    long: bool = False  # this shot has the long time (after a legal break)
    limit_us: int = 0  # this shot's time, extensions not counted
    started: int | None = None  # table µs the count began (or last restarted)
    backdated: bool = False  # `started` is the last sensed activity, not a known rest
    deadline: int | None = None  # table µs the time runs out (while running)
    remaining_us: int | None = None  # what is left, while held, stopped or waiting
    extended: bool = False  # an extension was given on this shot
    wait: WaitFor | None = None
    stop: StopBy | None = None
    proposal: bool = False  # expired with the foul proposed, not yet accepted or dismissed
    seen: Turn = Turn()  # what the last game state said

    # -- what displays show ---------------------------------------------------------
    def left(self, now: int) -> int | None:
        """µs left at table time `now` (never below 0), None when nothing is timed."""
        if self.status == ClockStatus.RUNNING and self.deadline is not None:
            return max(0, self.deadline - now)
        if self.status == ClockStatus.EXPIRED:
            return 0
        return self.remaining_us

    def can_extend(self) -> bool:
        s = self.settings
        return (
            self.status in (ClockStatus.RUNNING, ClockStatus.HELD)
            and self.player is not None
            and s.extension_s > 0
            and self.extensions_used[self.player] < s.extensions
            and (not self.long or s.first_shot_extension)
        )

    def view(self, at: int) -> dict[str, Any]:
        """The clock as the state feed carries it (docs/displays.md "Shot clock"): a display
        counts down from `remaining_us`, as of table time `at`, on its own clock, and calls
        the warning at `warning_us`; `deadline` is the same instant in table time."""
        s = self.settings
        left = [max(0, s.extensions - u) for u in self.extensions_used]
        return {
            "status": str(self.status),
            "player": self.player,
            "at": at,
            "deadline": self.deadline if self.status == ClockStatus.RUNNING else None,
            "remaining_us": self.left(at),
            "limit_us": self.limit_us,
            "warning_us": s.warning_s * SECOND_US,
            "started": self.started,
            "backdated": self.backdated,
            "long": self.long,
            "extended": self.extended,
            "extensions_left": left,
            "can_extend": self.can_extend(),
            "wait": None if self.wait is None else str(self.wait),
            "stop": None if self.stop is None else str(self.stop),
            "proposal": {"fouls": [s.foul]} if self.proposal else None,
        }

    # -- the game: a shot is due, or none -------------------------------------------
    def turn(
        self,
        player: int,
        rack: int,
        at: int,
        *,
        long: bool = False,
        backdated: bool = False,
        wait: WaitFor | None = None,
    ) -> ShotClock:
        """A shot by `player` is due from table time `at` (waiting for the referee with
        `wait`). Extensions count per rack: a new rack gives them back."""
        s = self.settings
        used = self.extensions_used if rack == self.rack else (0, 0)
        limit = (s.first_shot_s if long else s.shot_s) * SECOND_US
        base = replace(
            self,
            player=player,
            rack=rack,
            extensions_used=used,
            long=long,
            limit_us=limit,
            extended=False,
            stop=None,
            proposal=False,
            wait=wait,
        )
        if wait is not None:
            return replace(
                base,
                status=ClockStatus.WAITING,
                started=None,
                backdated=False,
                deadline=None,
                remaining_us=limit,
            )
        return replace(
            base,
            status=ClockStatus.RUNNING,
            started=at,
            backdated=backdated,
            deadline=at + limit,
            remaining_us=None,
        )

    def idle(self, rack: int | None = None) -> ShotClock:
        """No shot is timed (a decision is awaited, the match is over)."""
        return replace(
            self,
            status=ClockStatus.IDLE,
            player=None,
            rack=self.rack if rack is None else rack,
            deadline=None,
            remaining_us=None,
            started=None,
            backdated=False,
            wait=None,
            stop=None,
            proposal=False,
            extended=False,
        )

    # -- the sensors --------------------------------------------------------------------
    def activity(self, t: int, strike: bool) -> ShotClock:
        """Sensed activity at table time `t`: the shot is being played, the count stops.
        Activity older than the count's start belongs to the shot before."""
        if self.status not in (ClockStatus.RUNNING, ClockStatus.HELD, ClockStatus.WAITING):
            return self
        if self.started is not None and t < self.started:
            return self
        left = self.left(t)
        return replace(
            self,
            status=ClockStatus.STOPPED,
            deadline=None,
            remaining_us=left,
            wait=None,
            stop=StopBy.STRIKE if strike else StopBy.ACTIVITY,
        )

    def expire(self, upto: int) -> ShotClock:
        """Every event up to table time `upto` is in: if the deadline is not later and no
        activity stopped the count, the time ran out and the foul is proposed."""
        if self.status != ClockStatus.RUNNING or self.deadline is None or upto < self.deadline:
            return self
        return replace(
            self, status=ClockStatus.EXPIRED, remaining_us=0, deadline=None, proposal=True
        )

    # -- the referee ------------------------------------------------------------------
    def act(self, action: ClockAction, at: int, seconds: int | None = None) -> ShotClock:
        """The referee's clock input at table time `at`; ClockError when it does not fit."""
        st = self.status
        if self.player is None or st == ClockStatus.IDLE:
            raise ClockError("no shot is being timed")
        if action == ClockAction.HOLD:
            if st != ClockStatus.RUNNING:
                raise ClockError(f"the clock is {st}, not running")
            return replace(self, status=ClockStatus.HELD, remaining_us=self.left(at), deadline=None)
        if action == ClockAction.RESUME:
            if st != ClockStatus.HELD:
                raise ClockError(f"the clock is {st}, not held")
            return self._run(at, self.remaining_us or 0)
        if action == ClockAction.RESTART:
            return replace(self._run(at, self.limit_us), started=at, backdated=False, stop=None)
        if action == ClockAction.ADJUST:
            if seconds is None:
                raise ClockError("adjust needs seconds")
            left = seconds * SECOND_US
            if st in (ClockStatus.HELD, ClockStatus.WAITING, ClockStatus.STOPPED):
                return replace(self, remaining_us=left)
            return self._run(at, left)
        if action == ClockAction.EXTENSION:
            if not self.can_extend():
                raise ClockError(self._no_extension())
            used = list(self.extensions_used)
            used[self.player] += 1
            more = self.settings.extension_s * SECOND_US
            out = replace(self, extensions_used=(used[0], used[1]), extended=True)
            if st == ClockStatus.HELD:
                return replace(out, remaining_us=(self.remaining_us or 0) + more)
            assert self.deadline is not None  # running
            return replace(out, deadline=self.deadline + more)
        if action == ClockAction.PLACED:
            if st != ClockStatus.WAITING:
                raise ClockError(f"the clock is {st}, not waiting for the cue ball or rack")
            return replace(self._run(at, self.limit_us), started=at, wait=None)
        if action == ClockAction.DISMISS:
            if not self.proposal:
                raise ClockError("no time foul is proposed")
            return replace(self, proposal=False)
        raise ClockError(f"unknown clock action {action!r}")  # every member is handled above

    def _run(self, at: int, left: int) -> ShotClock:
        return replace(
            self,
            status=ClockStatus.RUNNING,
            deadline=at + left,
            remaining_us=None,
            wait=None,
            proposal=False,
        )

    def _no_extension(self) -> str:
        s = self.settings
        if self.status not in (ClockStatus.RUNNING, ClockStatus.HELD):
            return f"the clock is {self.status}: nothing to extend"
        if s.extension_s == 0 or s.extensions == 0:
            return "this event has no extensions"
        if self.long and not s.first_shot_extension:
            return "no extension on the first shot after the break"
        return "the player's extensions for this rack are used"


# -- the game's state -> the clock -------------------------------------------------------
def clock_for(match: dict[str, Any] | None) -> ShotClock | None:
    """The clock of a match (None: the match has no shot clock, the default)."""
    from railbird.rules.shotclock import parse_shot_clock

    try:
        settings = parse_shot_clock((match or {}).get("shot_clock"))
    except ValueError:  # a RulesError: the match itself was refused for it
        return None
    return None if settings is None else ShotClock(settings)


def _turn_key(state: dict[str, Any]) -> tuple[Any, ...]:
    return (
        state.get("at_table"),
        state.get("ball_in_hand"),
        state.get("awaiting"),
        state.get("rack"),
        state.get("match_winner"),
        state.get("ended"),
    )


def next_turn(
    clock: ShotClock,
    state: dict[str, Any],
    *,
    shot: bool,
    at: int,
    announcements: list[dict[str, Any]],
) -> ShotClock:
    """The clock after the game's new `state` (the rules' output dict) at table time `at`:
    `shot` when a shot (sensed or the referee's) produced it, whose last activity `at` is
    then (the count is backdated to it). A new count starts after every shot and whenever the
    player to shoot, the cue ball in hand, the decision awaited or the rack changed; a call,
    a confirmation or a correction leaves the count running."""
    turn = clock.seen
    key = _turn_key(state)
    rack = state.get("rack") or 1
    new_rack = rack != (turn.key[3] if turn.key else None)
    shots = 0 if new_rack else turn.shots_in_rack + (1 if shot else 0)
    broken = bool(state.get("breaking")) if new_rack else turn.rack_broken
    after = Turn(key, bool(state.get("breaking")), shots, broken)
    clock = replace(clock, seen=after)
    if not shot and key == turn.key and clock.status != ClockStatus.IDLE:
        return clock
    players = state.get("players") or []
    who = state.get("at_table")
    over = state.get("match_winner") is not None or state.get("ended") is not None
    awaiting = state.get("awaiting")
    if over or who not in players or awaiting not in (None, "rerack"):
        return clock.idle(rack)
    player = players.index(who)
    if awaiting == "rerack":
        return clock.turn(player, rack, at, wait=WaitFor.RACK)
    foul = any(a.get("level") == "foul" for a in announcements)
    long = shot and not foul and turn.breaking and not after.breaking
    if state.get("game") == "14.1" and not broken and shots == 1 and rack > 1:
        long = True  # the second shot of a new 14.1 rack (after a re-rack of 14)
    if state.get("ball_in_hand"):
        return clock.turn(player, rack, at, long=long, wait=WaitFor.CUE_BALL)
    return clock.turn(player, rack, at, long=long, backdated=shot)


# -- snapshots (core/snapshot.py): the clock as JSON data and back -------------------------
def clock_data(clock: ShotClock | None) -> dict[str, Any] | None:
    if clock is None:
        return None
    d = {f: getattr(clock, f) for f in ShotClock.__dataclass_fields__}
    d["settings"] = clock.settings.as_dict()
    d["extensions_used"] = list(clock.extensions_used)
    seen = clock.seen
    d["seen"] = [list(seen.key), seen.breaking, seen.shots_in_rack, seen.rack_broken]
    return d


def load_clock(d: dict[str, Any] | None) -> ShotClock | None:
    if d is None:
        return None
    from railbird.rules.shotclock import ShotClockSettings

    key, breaking, shots, broken = d["seen"]
    used = d["extensions_used"]
    return ShotClock(
        **dict(
            d,
            settings=ShotClockSettings(**d["settings"]),
            status=ClockStatus(d["status"]),
            extensions_used=(used[0], used[1]),
            wait=None if d["wait"] is None else WaitFor(d["wait"]),
            stop=None if d["stop"] is None else StopBy(d["stop"]),
            seen=Turn(tuple(key), breaking, shots, broken),
        )
    )
