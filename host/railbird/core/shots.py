"""Shot assembly: a table's ordered timeline -> shots (docs/shots.md).

A shot opens at the first activity (strike, drop, cue or rail event) while the table is at
rest and closes when the table has been quiet (no activity) for `quiet_us`, or at once when
a strike comes after `strike_gap_us` without activity (the next stroke), or when the rail
and drop events after a silence show a new stroke whose strike was missed ("Missed
strike"); its `end` is the time of its last activity. `jam` and `lost` events are not
activity: they become warnings of the open shot, or of the next shot when the table is at
rest. The assembler is a pure
function of the event sequence plus explicit `advance(now)` calls, so replays are exact.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Literal, NotRequired, TypedDict, cast

from railbird.core.railballs import RAIL_ECHO_US, TABLE_MM, TableMM, object_balls_to_rail
from railbird.core.timeline import Event
from rbproto.codec import POCKETS

ACTIVITY = frozenset(("strike", "drop", "cue", "rail", "ball"))
# Warnings kept per shot (and while the table is at rest); past that one line counts the
# rest: a jammed beam or a flood of late events cannot grow a shot, or the table at rest,
# without bound.
WARNINGS_MAX = 32
MORE = "more warnings not listed: "
# In-play records of a shot stop past this many drops (16 balls is a full table): a beam
# gone wild must not cost a pairing of every drop on each of its events.
INPLAY_DROPS_MAX = 32
# the kinds whose event can change the in-play view (`ShotAssembler.inplay`): for any other
# it is None, and the pipeline does not ask
INPLAY_KINDS = frozenset(("strike", "drop", "cue"))
# the kinds whose pattern after a silence shows a new stroke (docs/shots.md "Missed strike"):
# not `cue`, the return of a ball already pocketed
STROKE_EVIDENCE = frozenset(("strike", "drop", "rail"))
# the kinds sensed in the ball return, not on the slate: a ball already pocketed rolling to
# the cue detector or the colour station. They keep a shot open, but say nothing of the
# balls on the table, so the silence before a next stroke is measured without them: the
# players do not wait for the object balls in the return (a read 1 s before the next
# stroke made its strike a click of the shot before, "Strike")
RETURN_KINDS = frozenset(("cue", "ball"))


# -- what a shot is made of (docs/shots.md; protocol/SPEC.md `shot`) ----------------------
Source = Literal["sensed", "inferred"]


class Pocketed(TypedDict):
    """A ball pocketed on the shot: `ball` 0 for the drop paired with the cue detector (the
    cue ball, inferred); the number the colour station read (`sensed`, with its `conf`)
    for a drop paired with a confident read; None when nothing told which ball it was (the
    rules presume it)."""

    ball: int | None
    pocket: str
    t: int
    source: Source
    lip: NotRequired[bool]  # the lone drop after rest of general rule 30
    conf: NotRequired[int]  # the colour station's confidence in `ball`, %


class RailHit(TypedDict):
    rail: str
    t: int
    amp: int
    source: Source


class Strike(TypedDict):
    t: int
    amp: int | None  # the strike sensor's amplitude, when the node sends one
    source: Source


class Shot(TypedDict):
    """The facts of one shot, as `assemble` builds them (and the journal keeps them)."""

    table: str
    n: int
    start: int
    end: int
    pocketed: list[Pocketed]
    rails: list[RailHit]
    distinct_rails: int
    object_balls_to_rail: int
    object_balls_to_rail_range: list[int]  # [lo, hi]
    warnings: list[str]
    cue_unpaired: list[int]  # times of cue-detector events no drop paired with
    strike: Strike | None
    clicks: int
    sources: dict[str, Source]  # field -> how it is known
    rest_before: int | None  # µs the table was at rest before the shot (None: unknown)


class InPlayBall(TypedDict):
    """A ball pocketed so far on the shot in play (`provisional_pocketed`)."""

    pocket: str
    t: int
    ball: NotRequired[int]  # 0: paired with the cue detector so far


class InPlay(TypedDict):
    """The shot in play (`ShotAssembler.inplay`): the pipeline's `inplay` record body."""

    shot: int
    start: int
    pocketed: list[InPlayBall]
    provisional: bool


def _pocket_of(drop: Event) -> str:
    """A drop's pocket: a drop always names one (the codec requires it)."""
    if drop.pocket is None:
        raise ValueError(f"a drop without a pocket: {drop!r}")
    return drop.pocket


def _rail_hit(e: Event) -> RailHit:
    """A rail event as a fact: it always names its rail and amplitude (the codec requires
    both)."""
    if e.rail is None or e.amp is None:
        raise ValueError(f"a rail event without its rail or amp: {e!r}")
    return {"rail": e.rail, "t": e.t, "amp": e.amp, "source": "sensed"}


def add_warning(warnings: list[str], text: str) -> None:
    if len(warnings) < WARNINGS_MAX:
        warnings.append(text)
    elif len(warnings) == WARNINGS_MAX:
        warnings.append(MORE + "1")
    else:
        warnings[-1] = MORE + str(int(warnings[-1][len(MORE) :]) + 1)


# Expected cue-ball return delay (pocket drop -> cue detector), ms, by table size. The return
# runs to the foot end, so a head pocket's ball travels the whole table: measured on a 9 ft
# table about 1 s from a foot pocket, 2 s from a side, 2.6-3.1 s from a head pocket; the
# smaller tables are scaled by length. `railbird calibrate` measures a table's own.
CUE_RETURN_MS: dict[str, dict[str, int]] = {
    "7ft": {"HL": 2200, "HR": 2200, "SL": 1550, "SR": 1550, "FL": 800, "FR": 800},
    "8ft": {"HL": 2500, "HR": 2500, "SL": 1750, "SR": 1750, "FL": 900, "FR": 900},
    "9ft": {"HL": 2850, "HR": 2850, "SL": 2000, "SR": 2000, "FL": 1000, "FR": 1000},
}
DEFAULT_TABLE_SIZE = "9ft"
# The pairing window: the slowest expected return x 13/10 + this (docs/shots.md).
CUE_MARGIN_US = 250_000
CueReturns = tuple[tuple[str, int], ...]  # ((pocket, expected return delay µs), ...)


def cue_return_us(
    table_size: str = DEFAULT_TABLE_SIZE, measured: Mapping[str, float] | None = None
) -> CueReturns:
    """((pocket, expected return delay µs), ...) in POCKETS order: `measured` (ms per pocket)
    where given, the table size's defaults for the rest."""
    ms: dict[str, float] = dict(CUE_RETURN_MS[table_size])
    ms.update(measured or {})
    return tuple((p, int(ms[p]) * 1000) for p in POCKETS)


@dataclass(frozen=True)
class ShotParams:
    quiet_us: int = 5_000_000  # rest that ends a shot (= rule 30's 5 s by default)
    lip_rest_us: int = 5_000_000  # rest before a lone drop that flags it (general rule 30)
    cue_before_us: int = 0  # a cue event pairs with a drop at most this much earlier (0: auto)
    cue_after_us: int = 100_000  # ... or this much later (clock skew between nodes)
    break_window_us: int = 2_000_000  # rail clusters counted for object_balls_to_rail
    rail_merge_us: int = 100_000  # hits on one rail closer than this count as one ball
    max_object_balls: int = 15
    # a strike this long after the open shot's last activity is the next stroke: it closes
    # the shot at once (docs/shots.md "Strike"); shorter gaps are clicks of the same shot
    strike_gap_us: int = 2_500_000
    # rest that ends a shot that opened at a strike (docs/shots.md "Strike"): the next
    # stroke's strike closes such a shot at once, so the longer wait delays no ruling in
    # play, and a ball that rolls on silently past quiet_us still drops into its own shot
    # (the sensing corpus had one rolling 5.2 s after its last sensed event)
    strike_quiet_us: int = 8_000_000
    # a new stroke whose strike was missed (docs/shots.md "Missed strike"): inside a shot
    # that opened at a strike, a rail, drop or click after this much silence followed by
    # another one within stroke_confirm_us opens a new shot at it (and a rail alone after
    # quiet_us of silence does); a ball of the same stroke rolling on silently that long
    # and then making two events within a second is rarer than a missed strike
    stroke_silence_us: int = 3_500_000
    stroke_confirm_us: int = 1_000_000
    # per table (railbird.config.TableConfig.shot_params), not a [shots] key
    cue_return_us: tuple[tuple[str, int], ...] = cue_return_us()  # CueReturns (ruff: a tuple)
    table_mm: TableMM = TABLE_MM[DEFAULT_TABLE_SIZE]  # playing surface (length, width), per table
    # object balls to a rail (core/railballs.py, docs/shots.md): no ball moves faster than
    # this after the stroke (above the fastest breaks measured; an object ball never outruns
    # the cue ball that set it moving)
    ball_speed_max_mm_s: int = 20_000
    # a colour-station read below this confidence (%) is not ruled on: the ball stays
    # presumed (docs/shots.md "Ball identity")
    ball_conf_min: int = 60
    # per table: the table has a colour station (a drop without a read is then worth a
    # warning: the station may be unplugged)
    colour_station: bool = False

    def cue_window_us(self) -> int:
        """How long before a cue event its drop may be: `cue_before_us` when set, else the
        slowest pocket's expected return with 30 % and CUE_MARGIN_US to spare."""
        if self.cue_before_us:
            return self.cue_before_us
        return max(us for _, us in self.cue_return_us) * 13 // 10 + CUE_MARGIN_US

    @classmethod
    def from_dict(cls, d: Mapping[str, float] | None) -> ShotParams:
        d = dict(d or {})
        known = set(asdict(cls())) - {"cue_return_us", "table_mm", "colour_station"}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown shot parameter(s): {', '.join(sorted(unknown))}")
        # cast: every key is now one of the int fields, which mypy cannot follow from the
        # check above (tests/host/test_shots.py holds _IntParams to those fields)
        return cls(**cast(_IntParams, {k: int(v) for k, v in d.items()}))


class _IntParams(TypedDict, total=False):
    """The fields of ShotParams that `from_dict` sets: all of them but the per-table ones
    (`cue_return_us`, `table_mm`), every one an int."""

    quiet_us: int
    lip_rest_us: int
    cue_before_us: int
    cue_after_us: int
    break_window_us: int
    rail_merge_us: int
    max_object_balls: int
    strike_gap_us: int
    strike_quiet_us: int
    stroke_silence_us: int
    stroke_confirm_us: int
    ball_speed_max_mm_s: int
    ball_conf_min: int


class _Open:
    __slots__ = ("cues", "drops", "events", "last", "rest_before", "start", "warnings")

    def __init__(self, ev: Event, rest_before: int | None, warnings: list[str]) -> None:
        self.events: list[Event] = []
        # the shot's drop and cue events so far (derived from `events`; snapshots rebuild
        # them): the in-play record pairs these, not the whole shot, on every drop
        self.drops: list[Event] = []
        self.cues: list[Event] = []
        self.start = ev.t
        self.last = ev.t
        self.rest_before = rest_before
        self.warnings = warnings
        self.add(ev)

    def add(self, ev: Event) -> None:
        self.events.append(ev)
        self.last = ev.t
        if ev.kind == "drop":
            self.drops.append(ev)
        elif ev.kind == "cue":
            self.cues.append(ev)


class ShotAssembler:
    """Assembles the shots of one table."""

    def __init__(self, table: str, params: ShotParams | None = None, first_n: int = 1):
        self.table = table
        self.p = params or ShotParams()
        self.n = first_n
        self.cur: _Open | None = None
        self.last_activity: int | None = None
        self.pending_warnings: list[str] = []

    # -- input -------------------------------------------------------------------------
    def feed(self, ev: Event) -> list[Shot]:
        out = []
        cur = self.cur
        t, kind = ev.t, ev.kind
        if cur is not None:
            gap = self.p.strike_gap_us
            if t >= cur.last + self.quiet_us(cur) or (
                kind == "strike" and t - _last_on_table(cur.events) >= gap
            ):
                out.append(self._close(cur))
                cur = None
            elif kind in STROKE_EVIDENCE and cur.events[0].kind == "strike":
                k = self._new_stroke(cur, ev)
                if k is not None:
                    out.append(self._split(cur, k, ev))
                    cur = self.cur  # None: the new stroke opens at `ev` itself, below
        if kind in ACTIVITY:
            if cur is None:
                self._open(ev)
            else:
                cur.add(ev)
            self.last_activity = t
        else:
            w = _warning_for(ev)
            add_warning(cur.warnings if cur is not None else self.pending_warnings, w)
        return out

    def _open(self, ev: Event) -> None:
        rest = None if self.last_activity is None else ev.t - self.last_activity
        self.cur = _Open(ev, rest, self.pending_warnings)
        self.pending_warnings = []

    def _new_stroke(self, cur: _Open, ev: Event) -> int | None:
        """Where a new stroke whose strike was missed begins in the strike-opened shot `cur`
        now that `ev` (a rail, drop or click, not yet added) came: the index in
        `cur.events` of its first event, len(cur.events) when it is `ev` itself, or None
        (docs/shots.md "Missed strike"). Derived from the events alone, so a snapshot or a
        replay decides alike."""
        p, events, t = self.p, cur.events, ev.t
        if ev.kind == "rail" and t - _last_on_table(events) >= p.quiet_us:
            # a rail hit after quiet_us of silence: a ball rolling on its own that long
            # would have to cover the table's length without touching anything and still
            # hit the rail over the threshold (the longer strike_quiet_us of a strike-opened
            # shot waits for a silent roller's drop, not for this)
            return len(events)
        # a silence of stroke_silence_us, then an event the confirming `ev` follows within
        # stroke_confirm_us (and not as the echo of one hit through the frame)
        k = len(events)
        while k > 1 and events[k - 1].t >= t - p.stroke_confirm_us:
            k -= 1
        for i in range(k, len(events)):
            e = events[i]
            if t - e.t < RAIL_ECHO_US:
                break
            if e.kind in STROKE_EVIDENCE and e.t - _last_on_table(events, i) >= p.stroke_silence_us:
                return i
        return None

    def _split(self, cur: _Open, k: int, ev: Event) -> Shot:
        """Close `cur` with its events before index `k` and open the next shot with the
        rest; when k is past the end the caller opens it at `ev`. Either way it carries a
        `strike:` warning: it opened at no strike."""
        head, tail = cur.events[:k], cur.events[k:]
        self.cur = None
        shot = assemble(self.table, self.n, head, cur.rest_before, cur.warnings, self.p)
        self.n += 1
        first = tail[0] if tail else ev
        last = _last_on_table(head)  # the table's silence: reads in the return are not noise
        silence = (first.t - last) / 1e6
        warnings = [] if tail else self.pending_warnings
        add_warning(
            warnings,
            f"strike: a new stroke seen at a {first.kind} after {silence:.1f} s of silence; "
            "its strike was not sensed (a shot of its own, starting late)",
        )
        if tail:
            self.cur = _Open(tail[0], first.t - last, warnings)
            for e in tail[1:]:
                self.cur.add(e)
        return shot

    def inplay(self, ev: Event) -> InPlay | None:
        """The open shot in play after `ev` was fed, when `ev` changed its pocketed list (a
        drop; a cue event that paired a drop) or opened it at a strike: the body of the
        pipeline's provisional `inplay` record. None otherwise. A function of the open shot
        alone, so it needs no state of its own (snapshots, replays)."""
        cur = self.cur
        if cur is None or cur.events[-1] is not ev:
            return None
        if ev.kind == "strike":
            if len(cur.events) > 1:
                return None  # a click
            pocketed: list[InPlayBall] = []
        elif ev.kind not in ("drop", "cue") or len(cur.drops) > INPLAY_DROPS_MAX:
            return None
        else:
            pocketed = provisional_pocketed(cur.drops, cur.cues, self.p)
            if ev.kind == "cue" and pocketed == provisional_pocketed(
                cur.drops, cur.cues[:-1], self.p
            ):
                return None
        return {"shot": self.n, "start": cur.start, "pocketed": pocketed, "provisional": True}

    def quiet_us(self, cur: _Open) -> int:
        """The rest that closes the open shot `cur`: longer when it opened at a strike."""
        return self.p.strike_quiet_us if cur.events[0].kind == "strike" else self.p.quiet_us

    def warn(self, text: str) -> None:
        """A warning from outside the sensors (late event, unsynced node)."""
        add_warning(self.cur.warnings if self.cur is not None else self.pending_warnings, text)

    def advance(self, now: int) -> list[Shot]:
        """Table time has reached `now` with no further events before it."""
        cur = self.cur
        if cur is not None and now >= cur.last + self.quiet_us(cur):
            return [self._close(cur)]
        return []

    def flush(self) -> list[Shot]:
        return [self._close(self.cur)] if self.cur is not None else []

    @property
    def open(self) -> bool:
        return self.cur is not None

    # -- assembly ----------------------------------------------------------------------
    def _close(self, cur: _Open) -> Shot:
        """The open shot `cur` (= self.cur), closed."""
        self.cur = None
        shot = assemble(self.table, self.n, cur.events, cur.rest_before, cur.warnings, self.p)
        self.n += 1
        return shot


def _last_on_table(events: list[Event], end: int | None = None) -> int:
    """The time of the last event before index `end` (default: all) of a shot's `events`
    that was sensed on the table, not in the ball return (RETURN_KINDS); the first event's
    when there is none. Derived from the events alone (snapshots, replays); the scan back
    passes only the return's events, a few per shot."""
    i = len(events) if end is None else end
    while i > 1 and events[i - 1].kind in RETURN_KINDS:
        i -= 1
    return events[i - 1].t


def _warning_for(ev: Event) -> str:
    if ev.kind == "jam":
        return f"jam: pocket {ev.pocket} blocked {(ev.dur or 0) / 1e6:.1f} s (pocket full?)"
    where = f"pocket {ev.pocket}" if ev.pocket else f"rail {ev.rail}"
    return f"lost: {where} missed {ev.n} edge(s); a ball may be missing from the facts"


def pair_cues(
    drops: list[Event], cues: list[Event], p: ShotParams
) -> tuple[list[Pocketed], list[int]]:
    """(pocketed, unpaired): each drop as a pocketed fact, the cue ball's labelled `ball: 0`
    (inferred), sorted by time; and the times of cue-detector events with no drop to pair
    (a scratch in an unknown pocket)."""
    pocketed: list[Pocketed] = [
        {"ball": None, "pocket": _pocket_of(e), "t": e.t, "source": "sensed"} for e in drops
    ]
    unpaired: list[int] = []
    # Pair each cue-detector event with the unpaired drop in the window (before it, or just
    # after it for skew between nodes) whose delay to it is nearest to that pocket's expected
    # return delay: that drop was the cue ball. The return time depends on the pocket, so
    # an object ball that drops after the cue ball can be the nearer one. Ties go to the
    # earlier drop (drops are in timeline order), so replays pair alike.
    if cues:  # most shots have none: no need for the expected delays (per shot, per drop)
        expected = dict(p.cue_return_us)
        slowest = max(expected.values())
        window = p.cue_window_us()
    for c in cues:
        best: int | None = None  # the drop nearest its expected delay so far
        best_err = 0  # its distance to it (read only once `best` is set)
        for i, e in enumerate(drops):
            if pocketed[i]["ball"] is not None:
                continue
            dt = c.t - e.t
            if not -p.cue_after_us <= dt <= window:
                continue
            err = abs(dt - expected.get(pocketed[i]["pocket"], slowest))
            if best is None or err < best_err:
                best, best_err = i, err
        if best is None:
            unpaired.append(c.t)
        else:
            pocketed[best]["ball"] = 0
            pocketed[best]["source"] = "inferred"
    if len(pocketed) > 1:
        pocketed.sort(key=lambda x: (x["t"], x["pocket"]))
    return pocketed, unpaired


def identify(
    pocketed: list[Pocketed], reads: list[Event], p: ShotParams, warnings: list[str]
) -> None:
    """Name the pocketed balls from the colour station's reads (docs/shots.md "Ball
    identity"), in place. Each read pairs with the drop, not yet paired with a read, in the
    pairing window whose delay to it is nearest to its pocket's expected return delay (the
    station sits on the return beside the cue-ball detector: the cue ball's delays are
    every ball's); a read of the cue ball prefers the drop the cue detector paired. A
    paired read of at least `ball_conf_min` names the ball (`sensed`, with its `conf`); a
    weaker one, or no read where the table has a station, leaves it presumed, with a
    warning that says so."""
    expected = dict(p.cue_return_us)
    slowest = max(expected.values())
    window = p.cue_window_us()
    read: list[Event | None] = [None] * len(pocketed)
    for r in reads:
        best: int | None = None
        best_err = 0
        for i, x in enumerate(pocketed):
            if read[i] is not None:
                continue
            dt = r.t - x["t"]
            if not -p.cue_after_us <= dt <= window:
                continue
            err = abs(dt - expected.get(x["pocket"], slowest))
            if r.ball == 0 and x["ball"] == 0:
                err = -1  # the drop the cue detector paired: the same ball
            if best is None or err < best_err:
                best, best_err = i, err
        if best is None:
            warnings.append(f"ball: the {r.ball} read in the return without a pocket drop")
        else:
            read[best] = r
    for i, x in enumerate(pocketed):
        got = read[i]
        if got is None:
            if p.colour_station and x["ball"] is None:
                warnings.append(
                    f"ball: no colour read of the ball in {x['pocket']} "
                    "(colour station unplugged?); its number is presumed"
                )
            continue
        r = got
        conf = r.conf if r.conf is not None else 0
        if conf < p.ball_conf_min:
            warnings.append(
                f"ball: the ball in {x['pocket']} read as the {r.ball} at {conf} % "
                f"(below {p.ball_conf_min} %); its number is presumed"
            )
        elif x["ball"] == 0 and r.ball != 0:
            warnings.append(
                f"ball: the cue detector paired the drop in {x['pocket']} but the colour "
                f"station read the {r.ball}; the cue ball is kept"
            )
        elif r.ball is not None:
            x["ball"] = r.ball
            x["source"] = "sensed"
            x["conf"] = conf


def provisional_pocketed(drops: list[Event], cues: list[Event], p: ShotParams) -> list[InPlayBall]:
    """The pocketed list of a shot still in play, as the `inplay` record shows it:
    `{"pocket", "t"}`, with `"ball": 0` on the drop paired with the cue detector so far."""
    pocketed, _ = pair_cues(drops, cues, p)
    out: list[InPlayBall] = []
    for x in pocketed:
        item: InPlayBall = {"pocket": x["pocket"], "t": x["t"]}
        if x["ball"] == 0:
            item["ball"] = 0
        out.append(item)
    return out


def assemble(
    table: str,
    n: int,
    events: list[Event],
    rest_before: int | None,
    warnings: list[str],
    p: ShotParams,
) -> Shot:
    """The facts of one shot from its activity events (in timeline order)."""
    drops: list[Event] = []
    cues: list[Event] = []
    rails: list[Event] = []
    reads: list[Event] = []
    strikes = 0
    for e in events:
        kind = e.kind
        if kind == "rail":
            rails.append(e)
        elif kind == "drop":
            drops.append(e)
        elif kind == "cue":
            cues.append(e)
        elif kind == "ball":
            reads.append(e)
        elif kind == "strike":
            strikes += 1
    warnings = list(warnings)

    pocketed, unpaired = pair_cues(drops, cues, p)
    for _ in unpaired:
        warnings.append(
            "cue: cue ball seen in the return without a pocket drop; "
            "scratch assumed, pocket unknown"
        )
    if reads or p.colour_station:
        identify(pocketed, reads, p, warnings)

    # General rule 30: a ball that drops after the table was at rest for 5 s, with no other
    # activity, may have been hanging on the lip rather than shot in.
    first = events[0]
    lip = (
        first.kind == "drop" and not rails and (rest_before is None or rest_before >= p.lip_rest_us)
    )
    if lip:
        for x in pocketed:
            if x["ball"] != 0:
                x["lip"] = True
        rest = "an unknown time" if rest_before is None else f"{rest_before / 1e6:.1f} s"
        warnings.append(
            f"lip: ball dropped in {first.pocket} after the table was at rest "
            f"{rest} with no other activity; possibly not a shot (rule 30)"
        )

    # The strike that opened the shot (the cue tip on the ball); later strikes are clicks
    # (ball on ball, heard by the same sensor, or the strike of a shot that opened without it).
    opening = events[0] if events[0].kind == "strike" else None
    strike: Strike | None = None
    if opening is not None:
        strike = {"t": opening.t, "amp": opening.amp, "source": "sensed"}
    clicks = strikes - (opening is not None)
    if opening is not None and not rails and not pocketed and not unpaired:
        # issue 26: every such shot in the sensing corpus was a foul (no rail after contact,
        # or no contact at all); the rules hold it for the referee or rule it provisional,
        # the foul proposed (core/game.py, REFEREE.md §3b)
        warnings.append(
            "strike: nothing sensed after the strike (no rail, no pocket): a likely foul, "
            "no rail after contact; for the referee to check"
        )

    rail_facts = [_rail_hit(e) for e in rails]
    distinct = len({e.rail for e in rails})

    # Object balls to a rail: an estimate and the range the rail hits support (railballs).
    object_drops = sum(1 for x in pocketed if x["ball"] != 0)  # the cue ball's drop is not
    obr = object_balls_to_rail(
        rails, events[0].t, object_drops, p.max_object_balls - object_drops, p
    )

    return {
        "table": table,
        "n": n,
        "start": events[0].t,
        "end": events[-1].t,
        "pocketed": pocketed,
        "rails": rail_facts,
        "distinct_rails": distinct,
        "object_balls_to_rail": obr["estimate"],
        "object_balls_to_rail_range": obr["range"],
        "warnings": warnings,
        "cue_unpaired": unpaired,
        "strike": strike,
        "clicks": clicks,
        "sources": {
            "start": "sensed",
            "end": "sensed",
            "distinct_rails": "sensed",
            "object_balls_to_rail": "inferred",
            "object_balls_to_rail_range": "inferred",
        },
        "rest_before": rest_before,
    }
