"""Shot assembly: a table's ordered timeline -> shots (docs/shots.md).

A shot opens at the first activity (strike, drop, cue or rail event) while the table is at
rest and closes when the table has been quiet (no activity) for `quiet_us`, or at once when
a strike comes after `strike_gap_us` without activity (the next stroke); its `end` is the
time of its last activity. `jam` and `lost` events are not activity: they become warnings of
the open shot, or of the next shot when the table is at rest. The assembler is a pure
function of the event sequence plus explicit `advance(now)` calls, so replays are exact.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from railbird.core.railballs import TABLE_MM, object_balls_to_rail
from rbproto.codec import POCKETS

ACTIVITY = frozenset(("strike", "drop", "cue", "rail"))
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


def add_warning(warnings: list, text: str) -> None:
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
CUE_RETURN_MS = {
    "7ft": {"HL": 2200, "HR": 2200, "SL": 1550, "SR": 1550, "FL": 800, "FR": 800},
    "8ft": {"HL": 2500, "HR": 2500, "SL": 1750, "SR": 1750, "FL": 900, "FR": 900},
    "9ft": {"HL": 2850, "HR": 2850, "SL": 2000, "SR": 2000, "FL": 1000, "FR": 1000},
}
DEFAULT_TABLE_SIZE = "9ft"
# The pairing window: the slowest expected return x 13/10 + this (docs/shots.md).
CUE_MARGIN_US = 250_000


def cue_return_us(table_size: str = DEFAULT_TABLE_SIZE, measured: dict | None = None) -> tuple:
    """((pocket, expected return delay µs), ...) in POCKETS order: `measured` (ms per pocket)
    where given, the table size's defaults for the rest."""
    ms = dict(CUE_RETURN_MS[table_size])
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
    # per table (railbird.config.TableConfig.shot_params), not a [shots] key
    cue_return_us: tuple = cue_return_us()
    table_mm: tuple = TABLE_MM[DEFAULT_TABLE_SIZE]  # playing surface (length, width), per table
    # object balls to a rail (core/railballs.py, docs/shots.md): no ball moves faster than
    # this after the stroke (above the fastest breaks measured; an object ball never outruns
    # the cue ball that set it moving)
    ball_speed_max_mm_s: int = 20_000

    def cue_window_us(self) -> int:
        """How long before a cue event its drop may be: `cue_before_us` when set, else the
        slowest pocket's expected return with 30 % and CUE_MARGIN_US to spare."""
        if self.cue_before_us:
            return self.cue_before_us
        return max(us for _, us in self.cue_return_us) * 13 // 10 + CUE_MARGIN_US

    @classmethod
    def from_dict(cls, d: dict | None) -> ShotParams:
        d = dict(d or {})
        known = set(asdict(cls())) - {"cue_return_us", "table_mm"}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown shot parameter(s): {', '.join(sorted(unknown))}")
        return cls(**{k: int(v) for k, v in d.items()})


class _Open:
    __slots__ = ("cues", "drops", "events", "last", "rest_before", "start", "warnings")

    def __init__(self, ev, rest_before, warnings):
        self.events = []
        # the shot's drop and cue events so far (derived from `events`; snapshots rebuild
        # them): the in-play record pairs these, not the whole shot, on every drop
        self.drops = []
        self.cues = []
        self.start = ev.t
        self.last = ev.t
        self.rest_before = rest_before
        self.warnings = warnings
        self.add(ev)

    def add(self, ev) -> None:
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
    def feed(self, ev) -> list[dict]:
        out = []
        cur = self.cur
        t, kind = ev.t, ev.kind
        if cur is not None:
            gap = self.p.strike_gap_us
            if t >= cur.last + self.quiet_us(cur) or (kind == "strike" and t - cur.last >= gap):
                out.append(self._close())
                cur = None
        if kind in ACTIVITY:
            if cur is None:
                rest = None if self.last_activity is None else t - self.last_activity
                self.cur = _Open(ev, rest, self.pending_warnings)
                self.pending_warnings = []
            else:
                cur.add(ev)
            self.last_activity = t
        else:
            w = _warning_for(ev)
            add_warning(cur.warnings if cur is not None else self.pending_warnings, w)
        return out

    def inplay(self, ev) -> dict | None:
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
            pocketed = []
        elif ev.kind not in ("drop", "cue") or len(cur.drops) > INPLAY_DROPS_MAX:
            return None
        else:
            pocketed = provisional_pocketed(cur.drops, cur.cues, self.p)
            if ev.kind == "cue" and pocketed == provisional_pocketed(
                cur.drops, cur.cues[:-1], self.p
            ):
                return None
        return {"shot": self.n, "start": cur.start, "pocketed": pocketed, "provisional": True}

    def quiet_us(self, cur) -> int:
        """The rest that closes the open shot `cur`: longer when it opened at a strike."""
        return self.p.strike_quiet_us if cur.events[0].kind == "strike" else self.p.quiet_us

    def warn(self, text: str) -> None:
        """A warning from outside the sensors (late event, unsynced node)."""
        add_warning(self.cur.warnings if self.cur is not None else self.pending_warnings, text)

    def advance(self, now: int) -> list[dict]:
        """Table time has reached `now` with no further events before it."""
        if self.cur is not None and now >= self.cur.last + self.quiet_us(self.cur):
            return [self._close()]
        return []

    def flush(self) -> list[dict]:
        return [self._close()] if self.cur is not None else []

    @property
    def open(self) -> bool:
        return self.cur is not None

    # -- assembly ----------------------------------------------------------------------
    def _close(self) -> dict:
        cur, self.cur = self.cur, None
        shot = assemble(self.table, self.n, cur.events, cur.rest_before, cur.warnings, self.p)
        self.n += 1
        return shot


def _warning_for(ev) -> str:
    if ev.kind == "jam":
        return f"jam: pocket {ev.pocket} blocked {(ev.dur or 0) / 1e6:.1f} s (pocket full?)"
    where = f"pocket {ev.pocket}" if ev.pocket else f"rail {ev.rail}"
    return f"lost: {where} missed {ev.n} edge(s); a ball may be missing from the facts"


def pair_cues(drops: list, cues: list, p: ShotParams) -> tuple:
    """(pocketed, unpaired): each drop as a pocketed fact, the cue ball's labelled `ball: 0`
    (inferred), sorted by time; and the times of cue-detector events with no drop to pair
    (a scratch in an unknown pocket)."""
    pocketed = [{"ball": None, "pocket": e.pocket, "t": e.t, "source": "sensed"} for e in drops]
    unpaired = []
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
        best = best_err = None
        for i, e in enumerate(drops):
            if pocketed[i]["ball"] is not None:
                continue
            dt = c.t - e.t
            if not -p.cue_after_us <= dt <= window:
                continue
            err = abs(dt - expected.get(e.pocket, slowest))
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


def provisional_pocketed(drops: list, cues: list, p: ShotParams) -> list:
    """The pocketed list of a shot still in play, as the `inplay` record shows it:
    `{"pocket", "t"}`, with `"ball": 0` on the drop paired with the cue detector so far."""
    pocketed, _ = pair_cues(drops, cues, p)
    out = []
    for x in pocketed:
        item = {"pocket": x["pocket"], "t": x["t"]}
        if x["ball"] == 0:
            item["ball"] = 0
        out.append(item)
    return out


def assemble(table: str, n: int, events: list, rest_before, warnings: list, p: ShotParams) -> dict:
    """The facts of one shot from its activity events (in timeline order)."""
    drops, cues, rails = [], [], []
    strikes = 0
    for e in events:
        kind = e.kind
        if kind == "rail":
            rails.append(e)
        elif kind == "drop":
            drops.append(e)
        elif kind == "cue":
            cues.append(e)
        elif kind == "strike":
            strikes += 1
    warnings = list(warnings)

    pocketed, unpaired = pair_cues(drops, cues, p)
    for _ in unpaired:
        warnings.append(
            "cue: cue ball seen in the return without a pocket drop; "
            "scratch assumed, pocket unknown"
        )

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
    strike = None
    if opening is not None:
        strike = {"t": opening.t, "amp": opening.amp, "source": "sensed"}
    clicks = strikes - (opening is not None)

    rail_facts = [{"rail": e.rail, "t": e.t, "amp": e.amp, "source": "sensed"} for e in rails]
    distinct = len({e.rail for e in rails})

    # Object balls to a rail: an estimate and the range the rail hits support (railballs).
    object_drops = len(pocketed) - (len(cues) - len(unpaired))  # each paired cue is a drop
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
